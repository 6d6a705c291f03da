/* SPDX-License-Identifier: MIT */
/* The reads of each tick: the kept-open counter files (pread), or in none
 * mode the process tree from /proc; the OOM victim from /dev/kmsg. */
#include "platform/cgroup.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "model/ranges.h"
#include "platform/cgroup-int.h"
#include "platform/procfs.h"
#include "util/util.h"

#define BUF_MAX (16u * 1024 * 1024)
/* pids we track in none mode and list from cgroup.procs; a build with more
 * live processes than this is summed only as far as this. */
#define PIDS_MAX 65536

ssize_t cg_read_fd(struct cgroup *cg, int fd)
{
        if (fd < 0)
                return -EBADF;
        return pread_whole(fd, &cg->buf, &cg->cap, BUF_MAX);
}

void cg_pids_reserve(struct cgroup *cg, size_t n)
{
        long *np;

        if (n <= cg->pids_cap || n > PIDS_MAX)
                return;
        np = realloc(cg->pids, n * sizeof(*np));
        if (np) {
                cg->pids = np;
                cg->pids_cap = n;
        }
}

int cg_pids_from_buf(struct cgroup *cg, ssize_t n)
{
        size_t total;
        int r =
            n < 0 ? (int)n : cgroup_procs_parse(cg->buf, (size_t)n, cg->pids, cg->pids_cap, &total);

        if (r < 0)
                return r;
        if (total > cg->pids_cap) {
                cg_pids_reserve(cg, MIN(MAX(total, 2 * cg->pids_cap), (size_t)PIDS_MAX));
                r = cgroup_procs_parse(cg->buf, (size_t)n, cg->pids, cg->pids_cap, &total);
                if (r < 0)
                        return r;
        }
        cg->npids = MIN(total, cg->pids_cap);
        return 0;
}

/* The kernel log's records since the last call (a read() each): the last
 * OOM victim in the build's memory cgroup. */
static void read_kmsg(struct cgroup *cg)
{
        const char *memcg = cg->h[cg->h[CG_H_MEMORY].used ? CG_H_MEMORY : CG_H_V2].want;
        char rec[8192];

        for (int i = 0; cg->kmsg_fd >= 0 && i < 4096; i++) {
                ssize_t n = read(cg->kmsg_fd, rec, sizeof(rec));

                if (n < 0 && errno == EPIPE)
                        continue; /* overwritten records: go on from the next */
                if (n <= 0)
                        break;
                (void)cgroup_kmsg_victim_parse(rec, (size_t)n, memcg, &cg->oom_pid, cg->oom_comm,
                                               sizeof(cg->oom_comm));
        }
}

int cg_read_pressure(struct cgroup *cg, int fd, struct cgroup_pressure *ret)
{
        ssize_t n = cg_read_fd(cg, fd);

        return n < 0 ? (int)n : cgroup_pressure_parse(cg->buf, (size_t)n, ret);
}

/* A figure of a cgroup file checked against its range (model/ranges.h):
 * out of range is absent. */
static double in_range(enum range_kind k, double v)
{
        return range_ok(k, v) ? v : NAN;
}

/* Read one hot file: its single number, or key's. */
static int hot_u64(struct cgroup *cg, enum hot which, const char *key, uint64_t *ret)
{
        ssize_t n = cg_read_fd(cg, cg->hot[which]);

        return n < 0 ? (int)n
               : key ? cgroup_keyed_parse(cg->buf, (size_t)n, key, ret)
                     : cgroup_u64_parse(cg->buf, (size_t)n, ret);
}

static void read_psi(struct cgroup *cg, struct cgroup_stats *st)
{
        for (int i = 0; i < 3; i++) { /* HOT_PSI_CPU + PSI_CPU .. PSI_IO */
                struct cgroup_pressure p;

                if (cg_read_pressure(cg, cg->hot[HOT_PSI_CPU + i], &p) < 0)
                        continue;
                if (cg->psi_host) {
                        /* Host-wide totals count from boot: from our start. */
                        if (!cg->psi_base_ok[i])
                                continue;
                        p.some_us -= MIN(p.some_us, cg->psi_base[i].some_us);
                        if (p.full_us != UINT64_MAX && cg->psi_base[i].full_us != UINT64_MAX)
                                p.full_us -= MIN(p.full_us, cg->psi_base[i].full_us);
                        else
                                p.full_us = UINT64_MAX;
                }
                st->psi.some_s[i] = in_range(RANGE_CPU_SECONDS, (double)p.some_us / 1e6);
                if (p.full_us != UINT64_MAX)
                        st->psi.full_s[i] = in_range(RANGE_CPU_SECONDS, (double)p.full_us / 1e6);
        }
}

static int collect_proc(const struct pidstat *ps, void *userdata)
{
        struct cgroup *cg = userdata;
        struct tree_proc *tp;

        if (cg->nprocs >= PIDS_MAX ||
            array_grow(&cg->procs, &cg->procs_cap, cg->nprocs, sizeof(*cg->procs), 512) < 0)
                return 0;
        tp = &cg->procs[cg->nprocs++];
        tp->pid = ps->pid;
        tp->ppid = ps->ppid;
        tp->utime = ps->utime + ps->cutime;
        tp->stime = ps->stime + ps->cstime;
        tp->rss_pages = ps->rss_pages;
        tp->in = false;
        return 0;
}

static double tv_s(const struct timeval *tv)
{
        return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* none mode: the live tree below tree_root from /proc, plus what its
 * reaped processes left in our RUSAGE_CHILDREN. */
static int read_tree(struct cgroup *cg, struct cgroup_stats *st)
{
        double anon = 0, file = 0;
        bool split = true;
        struct rusage ru;
        bool changed = true;
        size_t n = 0;
        int r;

        cg->nprocs = 0;
        r = procfs_foreach_pid(cg->procfs, collect_proc, cg);
        if (r < 0)
                return r;
        st->cpu_user_s = st->cpu_sys_s = st->mem_bytes = st->io_read_bytes = st->io_write_bytes = 0;
        /* Mark descendants: a pass per level of the tree. */
        for (int pass = 0; changed && pass < 1024; pass++) {
                changed = false;
                for (size_t i = 0; i < cg->nprocs; i++) {
                        struct tree_proc *tp = &cg->procs[i];

                        if (tp->in)
                                continue;
                        for (size_t j = 0; j < cg->nprocs && !tp->in; j++)
                                tp->in = tp->ppid == cg->tree_root ||
                                         (cg->procs[j].in && cg->procs[j].pid == tp->ppid);
                        changed |= tp->in;
                }
        }
        for (size_t i = 0; i < cg->nprocs; i++) {
                struct tree_proc *tp = &cg->procs[i];
                struct pidmem pm;
                struct pidio io;

                if (!tp->in)
                        continue;
                st->cpu_user_s += (double)tp->utime / cg->ticks_per_s;
                st->cpu_sys_s += (double)tp->stime / cg->ticks_per_s;
                st->mem_bytes += (double)tp->rss_pages * cg->page_size;
                if (procfs_pidio(cg->procfs, tp->pid, &io) >= 0) {
                        st->io_read_bytes += (double)io.read_bytes;
                        st->io_write_bytes += (double)io.write_bytes;
                }
                /* RssAnon/RssFile (statm); a process gone meanwhile adds none */
                r = split ? procfs_pidmem(cg->procfs, tp->pid, &pm) : -EINVAL;
                if (r >= 0) {
                        anon += (double)pm.anon_pages * cg->page_size;
                        file += (double)pm.file_pages * cg->page_size;
                }
                split = r >= 0 || r == -ENOENT || r == -ESRCH;
                if (n < cg->pids_cap)
                        cg->pids[n++] = tp->pid;
        }
        cg->npids = n;
        if (getrusage(RUSAGE_CHILDREN, &ru) >= 0) {
                st->cpu_user_s += tv_s(&ru.ru_utime) - tv_s(&cg->ru_base.ru_utime);
                st->cpu_sys_s += tv_s(&ru.ru_stime) - tv_s(&cg->ru_base.ru_stime);
                st->io_read_bytes += (double)(ru.ru_inblock - cg->ru_base.ru_inblock) * 512.0;
                st->io_write_bytes += (double)(ru.ru_oublock - cg->ru_base.ru_oublock) * 512.0;
        }
        if (split) {
                st->mem_anon_bytes = anon;
                st->mem_file_bytes = file;
        }
        cg->mem_peak = fmax(cg->mem_peak, st->mem_bytes); /* fmax(NAN, x) is x */
        st->mem_peak_bytes = cg->mem_peak;
        st->pids = (double)n;
        cg->pids_peak = fmax(cg->pids_peak, (double)n);
        st->pids_peak = cg->pids_peak;
        return 0;
}

/* The anon/file split from memory.stat: one read, two keys. */
static void read_memstat(struct cgroup *cg, struct cgroup_stats *st)
{
        bool v2 = cg->mode == CGROUP_MODE_V2;
        ssize_t n = cg_read_fd(cg, cg->hot[HOT_MEM_STAT]);
        uint64_t a, f;

        if (n < 0)
                return;
        if (cgroup_keyed_parse(cg->buf, (size_t)n, v2 ? "anon" : "total_rss", &a) >= 0)
                st->mem_anon_bytes = in_range(RANGE_BYTES, (double)a);
        if (cgroup_keyed_parse(cg->buf, (size_t)n, v2 ? "file" : "total_cache", &f) >= 0)
                st->mem_file_bytes = in_range(RANGE_BYTES, (double)f);
}

int cgroup_mem_used(struct cgroup *cg, double *ret_bytes)
{
        struct cgroup_stats st;
        uint64_t a;
        int r;

        if (!cg || cg->mode == CGROUP_MODE_NONE || cg->hot[HOT_MEM] < 0 ||
            cg->hot[HOT_MEM_STAT] < 0)
                return -ENODATA;
        if ((r = hot_u64(cg, HOT_MEM, NULL, &a)) < 0)
                return r;
        cgroup_stats_clear(&st);
        read_memstat(cg, &st);
        *ret_bytes = (double)a - (isnan(st.mem_file_bytes) ? 0 : st.mem_file_bytes);
        return 0;
}

int cgroup_read(struct cgroup *cg, struct cgroup_stats *ret)
{
        struct cgroup_stats st;
        uint64_t a, b;
        int ok = 0, first = 0, r;

        cgroup_stats_clear(&st);
        if (cg->mode == CGROUP_MODE_NONE) {
                r = read_tree(cg, &st);
                read_psi(cg, &st);
                *ret = st;
                return r;
        }
#define TRY(expr) ((r = (expr)) >= 0 ? (ok++, true) : (first == 0 ? (first = r, false) : false))

        if (cg->hot[HOT_CPU_USER] >= 0) {
                if (TRY(hot_u64(cg, HOT_CPU_USER, NULL, &a)))
                        st.cpu_user_s = in_range(RANGE_CPU_SECONDS, (double)a / 1e9);
                if (TRY(hot_u64(cg, HOT_CPU_SYS, NULL, &a)))
                        st.cpu_sys_s = in_range(RANGE_CPU_SECONDS, (double)a / 1e9);
        } else {
                ssize_t n = cg_read_fd(cg, cg->hot[HOT_CPU]);
                double hz = cg->mode == CGROUP_MODE_V1 ? cg->ticks_per_s : 0, u, s;

                if (TRY(n < 0 ? (int)n : cgroup_cpu_parse(cg->buf, (size_t)n, hz, &u, &s))) {
                        st.cpu_user_s = in_range(RANGE_CPU_SECONDS, u);
                        st.cpu_sys_s = in_range(RANGE_CPU_SECONDS, s);
                }
        }
        if (cg->hot[HOT_MEM] >= 0 && TRY(hot_u64(cg, HOT_MEM, NULL, &a)))
                st.mem_bytes = in_range(RANGE_BYTES, (double)a);
        if (cg->hot[HOT_MEM_PEAK] >= 0 && TRY(hot_u64(cg, HOT_MEM_PEAK, NULL, &a)))
                st.mem_peak_bytes = in_range(RANGE_BYTES, (double)a);
        if (cg->hot[HOT_MEM_EV] >= 0 && TRY(hot_u64(cg, HOT_MEM_EV, "oom_kill", &a))) {
                st.oom_kills = in_range(RANGE_EVENTS, (double)a);
                if (a > 0)
                        read_kmsg(cg);
        }
        st.oom_victim_pid = cg->oom_pid;
        memcpy(st.oom_victim_comm, cg->oom_comm, sizeof(st.oom_victim_comm));
        if (cg->hot[HOT_IO] >= 0) {
                ssize_t n = cg_read_fd(cg, cg->hot[HOT_IO]);

                r = n < 0                        ? (int)n
                    : cg->mode == CGROUP_MODE_V2 ? cgroup_iostat_parse(cg->buf, (size_t)n, &a, &b)
                                                 : cgroup_blkio_parse(cg->buf, (size_t)n, &a, &b);
                if (TRY(r)) {
                        st.io_read_bytes = in_range(RANGE_BYTES, (double)a);
                        st.io_write_bytes = in_range(RANGE_BYTES, (double)b);
                }
        }
        if (cg->hot[HOT_PIDS] >= 0 && TRY(hot_u64(cg, HOT_PIDS, NULL, &a)))
                st.pids = in_range(RANGE_TASKS, (double)a);
        if (cg->hot[HOT_MEM_STAT] >= 0)
                read_memstat(cg, &st);
        if (cg->hot[HOT_PIDS_PEAK] >= 0 && TRY(hot_u64(cg, HOT_PIDS_PEAK, NULL, &a)))
                st.pids_peak = in_range(RANGE_TASKS, (double)a);
#undef TRY
        read_psi(cg, &st);
        *ret = st;
        return ok > 0 ? 0 : first;
}

int cgroup_pids(struct cgroup *cg, const long **ret_pids, size_t *ret_n)
{
        if (cg->mode != CGROUP_MODE_NONE) {
                int r = cg_pids_from_buf(cg, cg_read_fd(cg, cg->hot[HOT_PROCS]));

                if (r < 0)
                        return r;
        }
        *ret_pids = cg->pids;
        *ret_n = cg->npids;
        return 0;
}
