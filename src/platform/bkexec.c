/* SPDX-License-Identifier: MIT */
#include "platform/bkexec.h"
#include "platform/bkexec-int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/macro.h"

void bkexec_ex_close(struct ex *e)
{
        for (size_t i = 0; i < e->nkept; i++)
                closep(&e->kept[i].fd);
        e->nkept = 0;
        for (int h = 0; h < _CG_H_MAX; h++)
                closep(&e->dfd[h]);
}

int bkexec_new(const struct bkexec_config *cfg, struct bkexec **ret)
{
        _cleanup_close_ int root_fd =
            open(cfg->root ? cfg->root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct procfs_identity id;
        struct bkexec *b;

        if (root_fd < 0)
                return -errno;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->cfg = *cfg;
        b->last_walk = -1e9;
        b->root_fd = TAKE_FD(root_fd);
        /* from now on only: root reads it; without it, the cgroups' own counts */
        b->kmsg_fd = openat(b->root_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (b->kmsg_fd >= 0)
                (void)lseek(b->kmsg_fd, 0, SEEK_END);
        if (procfs_self_identity(b->root_fd, &id) >= 0)
                b->self_start = id.starttime;
        b->uid = geteuid();
        b->page_bytes = (double)sysconf(_SC_PAGESIZE);
        b->hz = (double)sysconf(_SC_CLK_TCK);
        *ret = b;
        return 0;
}

void bkexec_free(struct bkexec *b)
{
        if (!b)
                return;
        for (size_t i = 0; i < b->nex; i++)
                bkexec_ex_close(&b->ex[i]);
        closep(&b->root_fd);
        closep(&b->kmsg_fd);
        free(b);
}

/* name in e's cgroup of hierarchy h (h < 0: net/dev of its first
 * process), on an fd kept open from the first read (a cgroup file is
 * regenerated on each pread at 0; an fd opened once costs a fifth). */
ssize_t bkexec_kread(struct bkexec *b, struct ex *e, int h, const char *name)
{
        struct kept *k = NULL;
        ssize_t n;

        for (size_t i = 0; i < e->nkept; i++)
                if (e->kept[i].name == name && e->kept[i].h == h) {
                        k = &e->kept[i];
                        break;
                }
        if (!k) {
                if (e->nkept >= KEPT_MAX)
                        return -ENOSPC;
                k = &e->kept[e->nkept++];
                k->name = name;
                k->h = h;
                if (h >= 0) {
                        k->fd = e->dfd[h] >= 0 ? openat(e->dfd[h], name, O_RDONLY | O_CLOEXEC) : -1;
                } else {
                        char path[64];
                        int m = snprintf(path, sizeof(path), "proc/%ld/net/dev", e->first_pid);
                        k->fd = m > 0 && (size_t)m < sizeof(path) && e->first_pid > 0
                                    ? openat(b->root_fd, path, O_RDONLY | O_CLOEXEC)
                                    : -1;
                }
        }
        if (k->fd < 0)
                return -ENOENT;
        n = pread(k->fd, b->buf, sizeof(b->buf) - 1, 0);
        if (n < 0)
                return -errno;
        b->buf[n] = '\0';
        return n;
}

/* name's single number ("max": NAN), or key's in it. */
static double kread_u64(struct bkexec *b, struct ex *e, int h, const char *name, const char *key)
{
        ssize_t n = bkexec_kread(b, e, h, name);
        uint64_t v;

        if (n <= 0 || (key ? cgroup_keyed_parse(b->buf, (size_t)n, key, &v)
                           : cgroup_u64_parse(b->buf, (size_t)n, &v)) < 0)
                return NAN;
        return key || v != UINT64_MAX ? (double)v : NAN;
}

/* e's fact: the one its id had before, else a new one (no room: EX_OTHER). */
static void ex_fact_new(struct bkexec *b, struct ex *e, double now, const char *cmd)
{
        struct exec_fact *f;

        for (size_t k = 0; k < b->nfacts; k++)
                if (strcmp(b->facts[k].id, e->id) == 0) { /* seen before: the same exec */
                        e->fact = k;
                        e->state = EX_OURS;
                        b->facts[k].alive = true;
                        return;
                }
        if (b->nfacts >= BKEXEC_OURS_MAX) {
                e->state = EX_OTHER;
                return;
        }
        e->fact = b->nfacts++;
        f = &b->facts[e->fact];
        memset(f, 0, sizeof(*f));
        snprintf(f->id, sizeof(f->id), "%s", e->id);
        snprintf(f->cmd, sizeof(f->cmd), "%s", cmd);
        f->first_s = f->last_s = now;
        f->alive = true;
        step_exec_clear(&f->u);
        f->u.set = true;
        f->u.execs = 1;
        f->u.oom_kills = 0;
        f->cpu_user_s = f->cpu_sys_s = f->mem_bytes = f->anon_bytes = f->file_bytes = NAN;
        f->pids = NAN;
        psi_clear(&f->psi);
        e->state = EX_OURS;
}

/* Ours or not: an exec older than buildtel never is; else the caller
 * decides from its command, again on each tick while it says no. */
static void ex_decide(struct bkexec *b, struct ex *e, struct procfs *p, double now)
{
        char cmd[EXEC_CMD_MAX + 1];

        if (!e->rawlen)
                bkexec_ex_identify(b, e, p);
        if (!e->rawlen)
                return;
        if (b->self_start && e->start_ticks && e->start_ticks < b->self_start) {
                e->state = EX_OTHER;
                return;
        }
        cmd[0] = '\0';
        if (b->cfg.match &&
            (b->cfg.match(b->cfg.userdata, e->raw, e->rawlen, now, cmd, sizeof(cmd)) ||
             (e->xrawlen &&
              b->cfg.match(b->cfg.userdata, e->xraw, e->xrawlen, now, cmd, sizeof(cmd)))))
                ex_fact_new(b, e, now, cmd);
        else if (e->rawlen >= 5 && memcmp(e->raw, "runc", 4) == 0)
                e->rawlen = 0; /* "runc init", before it became the step: read again */
}

/* Memory, OOM count: the part bkexec_poll reads too. */
static void ex_read_mem(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        bool v1 = e->dfd[CG_H_MEMORY] >= 0;
        int h = v1 ? CG_H_MEMORY : CG_H_V2;
        double oom, peak;

        f->mem_bytes = kread_u64(b, e, h, v1 ? "memory.usage_in_bytes" : "memory.current", NULL);
        peak = kread_u64(b, e, h, v1 ? "memory.max_usage_in_bytes" : "memory.peak", NULL);
        oom = kread_u64(b, e, h, v1 ? "memory.oom_control" : "memory.events", "oom_kill");
        /* a cgroup removed under an open fd reads as nothing: keep the last */
        if (isnan(peak))
                peak = f->mem_bytes; /* no kernel peak (v2 before 5.19): sampled */
        f->u.mem_peak_bytes = execs_max(f->u.mem_peak_bytes, peak);
        if (!isnan(oom) && oom > (double)e->oom) {
                if (isnan(f->u.oom_at_s))
                        f->u.oom_at_s = f->last_s;
                e->victim_tries = VICTIM_TRIES;
                e->oom = (uint64_t)oom;
                f->u.oom_kills = oom;
        }
}

/* CPU: v2 cpu.stat (a hybrid host has it too), else v1 cpuacct.stat. Read
 * by bkexec_poll too: a step's cgroup goes with its last process, and its
 * CPU at the last tick ran short (issue 40). */
static void ex_read_cpu(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        ssize_t n = bkexec_kread(b, e, CG_H_V2, "cpu.stat");

        if (n <= 0 || cgroup_cpu_parse(b->buf, (size_t)n, 0, &f->cpu_user_s, &f->cpu_sys_s) < 0) {
                n = bkexec_kread(b, e, CG_H_CPUACCT, "cpuacct.stat");
                if (n > 0)
                        (void)cgroup_cpu_parse(b->buf, (size_t)n, b->hz, &f->cpu_user_s,
                                               &f->cpu_sys_s);
        }
        f->u.cpu_s = execs_sum(f->cpu_user_s, f->cpu_sys_s);
}

static void ex_read_pressure(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        static const char *const names[3] = {"cpu.pressure", "memory.pressure", "io.pressure"};

        for (int i = 0; i < 3; i++) {
                struct cgroup_pressure pr;
                ssize_t n = bkexec_kread(b, e, CG_H_V2, names[i]);

                if (n <= 0 || cgroup_pressure_parse(b->buf, (size_t)n, &pr) < 0)
                        continue;
                f->psi.some_s[i] = (double)pr.some_us / 1e6;
                f->psi.full_s[i] = pr.full_us == UINT64_MAX ? NAN : (double)pr.full_us / 1e6;
        }
}

/* Every counter of one exec of ours. */
static void ex_read(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        bool v1 = e->dfd[CG_H_MEMORY] >= 0, blk = e->dfd[CG_H_BLKIO] >= 0;
        uint64_t r, w;
        ssize_t n;

        ex_read_mem(b, e, f);
        f->anon_bytes = f->file_bytes = NAN;
        n = bkexec_kread(b, e, v1 ? CG_H_MEMORY : CG_H_V2, "memory.stat");
        if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, v1 ? "total_rss" : "anon", &r) >= 0)
                f->anon_bytes = (double)r;
        if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, v1 ? "total_cache" : "file", &w) >= 0)
                f->file_bytes = (double)w;
        f->u.anon_peak_bytes = execs_max(f->u.anon_peak_bytes, f->anon_bytes);
        ex_read_cpu(b, e, f);
        n = blk ? bkexec_kread(b, e, CG_H_BLKIO, "blkio.throttle.io_service_bytes_recursive")
                : bkexec_kread(b, e, CG_H_V2, "io.stat");
        /* an empty io.stat is a cgroup that did no IO */
        if ((n > 0 || (n == 0 && !blk)) &&
            (blk ? cgroup_blkio_parse : cgroup_iostat_parse)(b->buf, (size_t)n, &r, &w) >= 0) {
                f->u.io_read_bytes = (double)r;
                f->u.io_write_bytes = (double)w;
        }
        f->pids =
            kread_u64(b, e, e->dfd[CG_H_PIDS] >= 0 ? CG_H_PIDS : CG_H_V2, "pids.current", NULL);
        ex_read_pressure(b, e, f);
        n = bkexec_kread(b, e, -1, "net/dev");
        if (n > 0 && bkexec_netdev_parse(b->buf, (size_t)n, &r, &w) >= 0) {
                f->u.net_rx_bytes = execs_max(f->u.net_rx_bytes, (double)r);
                f->u.net_tx_bytes = execs_max(f->u.net_tx_bytes, (double)w);
        }
}

/* Drop the execs whose cgroup is gone: ours keep their fact, marked. */
static void ex_prune(struct bkexec *b)
{
        size_t k = 0;

        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];

                if (e->seen_now) {
                        b->ex[k++] = *e;
                        continue;
                }
                if (e->state == EX_OURS)
                        b->facts[e->fact].alive = false;
                bkexec_ex_close(e);
        }
        b->nex = k;
}

/* The execs listed anew, the gone ones dropped, the new ones decided;
 * false while no directory of execs is known. */
static bool ex_refresh(struct bkexec *b, struct procfs *p, double now)
{
        if (b->nparents == 0)
                return false;
        bkexec_list_parents(b);
        ex_prune(b);
        for (size_t i = 0; i < b->nex; i++)
                if (b->ex[i].state == EX_PENDING)
                        ex_decide(b, &b->ex[i], p, now);
        return true;
}

/* Ours: read, and their processes into pids[] (sorted, owner beside). */
static void read_ours(struct bkexec *b, double now)
{
        long tmp[BKEXEC_PROCS_MAX];
        struct {
                long pid;
                unsigned char owner;
        } all[ARRAY_SIZE(b->pids)];
        size_t n = 0;

        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                int np;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                f->last_s = now;
                ex_read(b, e, f);
                np = bkexec_ex_procs(b, e, tmp, ARRAY_SIZE(tmp));
                e->last_top = e->top;
                proctop_reset(&e->top);
                for (int k = 0; k < np && n < ARRAY_SIZE(all); k++) {
                        all[n].pid = tmp[k];
                        all[n++].owner = (unsigned char)i;
                }
        }
        qsort(all, n, sizeof(all[0]), procfs_cmp_pid);
        for (size_t i = 0; i < n; i++) {
                b->pids[i] = all[i].pid;
                b->owner[i] = all[i].owner;
        }
        b->npids = n;
}

/* One OOM record of the kernel's, read at `at`, on the exec of ours it
 * names. False when none (yet). */
static bool oom_apply(struct bkexec *b, const struct kmsg_oom *o, double at)
{
        const char *leaf = strrchr(o->memcg, '/');

        leaf = leaf ? leaf + 1 : o->memcg;
        for (size_t k = 0; k < b->nfacts; k++) {
                struct exec_fact *f = &b->facts[k];

                if (strcmp(f->id, leaf) != 0)
                        continue;
                b->kmsg_kills[k]++;
                f->u.oom_kills = execs_max(f->u.oom_kills, (double)b->kmsg_kills[k]);
                if (isnan(f->u.oom_at_s) || at < f->u.oom_at_s)
                        f->u.oom_at_s = at;
                /* the kernel's own word on the victim wins */
                snprintf(f->u.oom_victim, sizeof(f->u.oom_victim), "%s (pid %ld)", o->task, o->pid);
                b->last_oom = *o;
                return true;
        }
        return false;
}

/* The kernel's OOM records since the last read: a kill counts even when
 * its cgroup went before its count was read. One of no exec of ours is
 * kept a while: its exec may be undecided yet, and ours a tick later. */
static void read_kmsg(struct bkexec *b, double now)
{
        char rec[2048];
        size_t kept = 0;

        for (size_t i = 0; i < b->noom_kept; i++) {
                struct oom_kept *k = &b->oom_kept[i];

                if (now - k->at > OOM_KEPT_S || oom_apply(b, &k->o, k->at))
                        continue;
                b->oom_kept[kept++] = *k;
        }
        b->noom_kept = kept;
        for (int i = 0; b->kmsg_fd >= 0 && i < 4096; i++) {
                struct kmsg_oom o;
                ssize_t n = read(b->kmsg_fd, rec, sizeof(rec) - 1);

                if (n < 0 && errno == EPIPE)
                        continue; /* overwritten meanwhile: go on from the next */
                if (n <= 0)
                        break;
                if (kmsg_oom_parse(rec, (size_t)n, &o) != KMSG_OOM_KILL || oom_apply(b, &o, now))
                        continue;
                if (b->noom_kept == OOM_KEPT_MAX) /* the oldest goes */
                        memmove(b->oom_kept, b->oom_kept + 1,
                                (OOM_KEPT_MAX - 1) * sizeof(b->oom_kept[0]));
                else
                        b->noom_kept++;
                b->oom_kept[b->noom_kept - 1] = (struct oom_kept){.o = o, .at = now};
        }
}

int bkexec_tick(struct bkexec *b, struct procfs *p, double now, bool discover)
{
        int alive = 0;

        b->npids = 0;
        if (discover && bkexec_read_mounts(b) >= 0 &&
            (b->walk_soon ||
             ((b->nparents == 0 || b->hunt) ? now - b->last_walk >= WALK_POLL_S
                                            : ++b->ticks_since_walk >= SCAN_EVERY))) {
                b->ticks_since_walk = 0;
                b->last_walk = now;
                bkexec_walk(b, p);
        }
        if (!ex_refresh(b, p, now))
                return 0;
        read_ours(b, now);
        read_kmsg(b, now);
        for (size_t i = 0; i < b->nex; i++)
                alive += b->ex[i].state == EX_OURS;
        return alive;
}

void bkexec_pids(const struct bkexec *b, const long **ret_pids, size_t *ret_n)
{
        *ret_pids = b->pids;
        *ret_n = b->npids;
}

void bkexec_consider(struct bkexec *b, const struct pidstat *ps)
{
        const long *hit = bsearch(&ps->pid, b->pids, b->npids, sizeof(long), procfs_cmp_pid);

        if (hit)
                proctop_consider(&b->ex[b->owner[hit - b->pids]].top, ps);
}

/* The largest process of e's last complete list that is gone now. */
static const struct proctop_entry *gone_top(const struct ex *e, struct procfs *p)
{
        const struct proctop *t[2] = {&e->top, &e->last_top};

        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < t[k]->n; i++) {
                        struct pidstat ps;

                        if (procfs_pidstat(p, t[k]->e[i].pid, &ps) < 0 ||
                            strcmp(ps.comm, t[k]->e[i].comm) != 0 || ps.state == 'Z')
                                return &t[k]->e[i];
                }
        return NULL;
}

/* A guess at the victim, from the largest process gone since the count
 * rose: only where the kernel's records cannot be read (not root). Where
 * they can, its record names the victim: a guess there named the step's
 * shell, the first process seen, where the kernel killed dd (pure v2,
 * systemd driver, 4 runs of 5). */
static void find_victim(const struct bkexec *b, struct ex *e, struct exec_fact *f, struct procfs *p)
{
        const struct proctop_entry *v;

        if (b->kmsg_fd >= 0 || b->kmsg_kills[e->fact] > 0)
                e->victim_tries = 0;
        if (e->victim_tries <= 0)
                return;
        e->victim_tries--;
        v = gone_top(e, p);
        if (v) {
                snprintf(f->u.oom_victim, sizeof(f->u.oom_victim), "%s (pid %ld)", v->label,
                         v->pid);
                e->victim_tries = 0;
        }
}

void bkexec_end(struct bkexec *b, struct procfs *p)
{
        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                double bytes;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                proctop_label_all(&e->top, p);
                /* e[0] is the largest when there is one */
                bytes = (double)e->top.e[0].rss_pages * b->page_bytes;
                if (e->top.n && (isnan(f->u.peak_proc_bytes) || bytes > f->u.peak_proc_bytes)) {
                        f->u.peak_proc_bytes = bytes;
                        snprintf(f->u.peak_proc, sizeof(f->u.peak_proc), "%s", e->top.e[0].label);
                }
                find_victim(b, e, f, p);
        }
}

int bkexec_poll(struct bkexec *b, struct procfs *p, double now)
{
        int kills = 0;

        if (bkexec_read_mounts(b) >= 0 &&
            (((b->nparents == 0 || b->hunt) && now - b->last_walk >= WALK_POLL_S) ||
             (b->walk_soon && now - b->last_walk >= WALK_SOON_S))) {
                b->last_walk = now; /* a RUN step without its exec yet: look for its directory */
                bkexec_walk(b, p);
        }
        /* new execs too: a step shorter than a tick is then still seen */
        if (!ex_refresh(b, p, now))
                return 0;
        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                uint64_t before;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                before = e->oom;
                f->last_s = now;
                ex_read_mem(b, e, f);
                ex_read_cpu(b, e, f);
                kills += (int)(e->oom - before);
                find_victim(b, e, f, p);
        }
        read_kmsg(b, now);
        return kills;
}

void bkexec_finish(struct bkexec *b, double now)
{
        read_kmsg(b, now);
}

void bkexec_hunt(struct bkexec *b, bool on)
{
        b->hunt = on;
}

void bkexec_totals(const struct bkexec *b, struct bkexec_totals *ret)
{
        struct bkexec_totals t = {0};

        t.cpu_user_s = t.cpu_sys_s = t.io_read_bytes = t.io_write_bytes = t.oom_kills = NAN;
        t.mem_bytes = t.anon_bytes = t.file_bytes = t.pids = t.max_peak_bytes = NAN;
        psi_clear(&t.psi);
        snprintf(t.oom_victim, sizeof(t.oom_victim), "%s", b->last_oom.task);
        t.oom_victim_pid = b->last_oom.pid;
        for (size_t i = 0; i < b->nfacts; i++) {
                const struct exec_fact *f = &b->facts[i];

                t.ours++;
                t.cpu_user_s = execs_sum(t.cpu_user_s, f->cpu_user_s);
                t.cpu_sys_s = execs_sum(t.cpu_sys_s, f->cpu_sys_s);
                t.io_read_bytes = execs_sum(t.io_read_bytes, f->u.io_read_bytes);
                t.io_write_bytes = execs_sum(t.io_write_bytes, f->u.io_write_bytes);
                t.oom_kills = execs_sum(t.oom_kills, f->u.oom_kills);
                t.max_peak_bytes = execs_max(t.max_peak_bytes, f->u.mem_peak_bytes);
                psi_sum(&t.psi, &f->psi);
                if (!f->alive)
                        continue;
                t.alive++;
                t.mem_bytes = execs_sum(t.mem_bytes, f->mem_bytes);
                t.anon_bytes = execs_sum(t.anon_bytes, f->anon_bytes);
                t.file_bytes = execs_sum(t.file_bytes, f->file_bytes);
                t.pids = execs_sum(t.pids, f->pids);
        }
        *ret = t;
}

const struct exec_fact *bkexec_facts(const struct bkexec *b, size_t *ret_n)
{
        *ret_n = b->nfacts;
        return b->facts;
}
