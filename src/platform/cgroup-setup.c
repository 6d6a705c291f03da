/* SPDX-License-Identifier: MIT */
/* Making the build's cgroup: the mode from what is mounted, on v2 a cgroup
 * we may enable memory in (a leaf, or a systemd scope), the run's cgroup in
 * each hierarchy, its counters opened, its limits set; the join checked. */
#include "platform/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/cgroup-int.h"
#include "platform/procfs.h"
#include "platform/sdscope.h"
#include "util/util.h"

#define BUF_INITIAL 4096

/* A blkio throttle rule this high never throttles, but it switches on the
 * kernel's per-cgroup IO accounting, which since 6.10 only runs on queues
 * that have a throttle rule (1 PiB/s). */
#define BLKIO_UNLIMITED "1125899906842624"

/* v2 controllers, memory first: nothing else is enabled where memory is
 * refused, so no cgroup turns "domain threaded" (cpu, pids are threaded
 * controllers) and a kill between two writes leaves memory on, never the
 * threaded ones alone. */
static const char *const v2_ctl[] = {"memory", "pids", "io", "cpu"};

ssize_t cg_read_at(struct cgroup *cg, int dirfd, const char *name)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return cg_read_fd(cg, fd);
}

int cgroup_self_read(int root_fd, long pid, struct cgroup_self *ret)
{
        _cleanup_free_ char *buf = NULL;
        char path[64] = "proc/self/cgroup";
        size_t len;
        int r = pid ? snprintf(path, sizeof(path), "proc/%ld/cgroup", pid) : 0;

        if (r < 0 || r >= (int)sizeof(path))
                return -EINVAL;
        r = read_file_at(root_fd, path, 1 << 16, &buf, &len);
        return r < 0 ? r : cgroup_self_parse(buf, len, ret);
}

int cg_write_at(int dirfd, const char *name, const char *s)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return write_all(fd, s, strlen(s));
}

static int join(char *out, size_t cap, const char *a, const char *b, const char *c)
{
        int n = snprintf(out, cap, "%s%s%s", a, b, c);

        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* own relative to what the mount shows as its root. */
static const char *rel_to_mount(const char *own, const char *mroot)
{
        size_t n = strlen(mroot);

        if (n <= 1)
                return own;
        if (strncmp(own, mroot, n) == 0 && (own[n] == '/' || own[n] == '\0'))
                return own + n;
        return own; /* outside the mount's view: best effort */
}

static int open_hot(struct cgroup *cg, enum hot which, enum cgroup_hier h, const char *name)
{
        if (!cg->h[h].used || cg->h[h].dir_fd < 0)
                return -ENOENT;
        cg->hot[which] = openat(cg->h[h].dir_fd, name, O_RDONLY | O_CLOEXEC);
        return cg->hot[which] < 0 ? -errno : 0;
}

/* Bits of v2_ctl listed in dirfd's file (cgroup.controllers or
 * cgroup.subtree_control). */
static unsigned ctl_mask(struct cgroup *cg, int dirfd, const char *file)
{
        ssize_t n = cg_read_at(cg, dirfd, file);
        const char *p = cg->buf, *end, *w;
        unsigned mask = 0;
        size_t wn;

        if (n < 0)
                return 0;
        end = cg->buf + n;
        for (const char *eol; p < end; p = next_line(eol, end)) {
                eol = line_end(p, end);
                while (next_word(&p, eol, &w, &wn))
                        for (size_t k = 0; k < ARRAY_SIZE(v2_ctl); k++)
                                if (word_is(w, wn, v2_ctl[k]))
                                        mask |= 1u << k;
        }
        return mask;
}

/* mkdir dirfd/name (it may be there already) and open it: the fd or -errno. */
static int mkdir_open(int dirfd, const char *name)
{
        int fd;

        if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* mkdir <base>/buildtel and the run's cgroup under it; the parent may be
 * removed by another buildtel's clean-up in between, so retry. */
static int make_dirs(struct cgroup *cg, struct hier *hh, const char *base)
{
        int r = join(hh->parent, sizeof(hh->parent), base, "/buildtel", "");

        if (r < 0)
                return r;
        r = -ENOENT;
        for (int attempt = 0; attempt < 3 && r == -ENOENT; attempt++) {
                closep(&hh->parent_fd);
                r = mkdir_open(cg->root_fd, hh->parent + 1);
                if (r < 0)
                        continue;
                hh->parent_fd = r;
                cg_clean_stale(cg, hh->parent_fd,
                               hh == &cg->h[cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY]);
                r = mkdir_open(hh->parent_fd, hh->name);
        }
        if (r < 0)
                return r;
        hh->dir_fd = r;
        hh->procs_w_fd = openat(hh->dir_fd, "cgroup.procs",
                                (cg->test_unjoinable ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        return hh->procs_w_fd < 0 ? -errno : 0;
}

/* Switch on blkio accounting for every block device (see BLKIO_UNLIMITED). */
static void blkio_account_all(struct cgroup *cg, int cgfd)
{
        DIR *d = opendir_at(cg->root_fd, "sys/block");
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char path[300], rule[128];
                ssize_t n;
                size_t k;

                if (de->d_name[0] == '.' || join(path, sizeof(path), de->d_name, "/dev", "") < 0)
                        continue;
                n = cg_read_at(cg, dirfd(d), path);
                if (n <= 0 || n > 32)
                        continue;
                k = (size_t)(line_end(cg->buf, cg->buf + n) - cg->buf);
                if (snprintf(rule, sizeof(rule), "%.*s %s", (int)k, cg->buf, BLKIO_UNLIMITED) >=
                    (int)sizeof(rule))
                        continue;
                (void)cg_write_at(cgfd, "blkio.throttle.read_bps_device", rule);
                (void)cg_write_at(cgfd, "blkio.throttle.write_bps_device", rule);
        }
        closedir(d);
}

static void setup_host_psi(struct cgroup *cg)
{
        static const char *const names[3] = {"proc/pressure/cpu", "proc/pressure/memory",
                                             "proc/pressure/io"};

        cg->psi_host = true;
        for (int i = 0; i < 3; i++) {
                closep(&cg->hot[HOT_PSI_CPU + i]);
                cg->hot[HOT_PSI_CPU + i] = openat(cg->root_fd, names[i], O_RDONLY | O_CLOEXEC);
                cg->psi_base_ok[i] =
                    cg_read_pressure(cg, cg->hot[HOT_PSI_CPU + i], &cg->psi_base[i]) >= 0;
        }
}

static int setup_none(struct cgroup *cg, const struct cgroup_config *cfg)
{
        int r = procfs_new(cfg->root ? cfg->root : "/", &cg->procfs);

        if (r < 0)
                return r;
        cg->tree_root = cfg->tree_root > 0 ? cfg->tree_root : (long)getpid();
        (void)getrusage(RUSAGE_CHILDREN, &cg->ru_base);
        setup_host_psi(cg);
        return 0;
}

static enum cgroup_mode pick_mode(struct cgroup *cg, const struct cgroup_mounts *m,
                                  const struct cgroup_self *self)
{
        char path[2 * CG_PATH_MAX];
        bool v2 = m->mnt[CG_H_V2][0] && self->path[CG_H_V2][0];
        bool v1mem = m->mnt[CG_H_MEMORY][0] && self->path[CG_H_MEMORY][0];

        if (v2 && join(path, sizeof(path), m->mnt[CG_H_V2],
                       rel_to_mount(self->path[CG_H_V2], m->root[CG_H_V2]), "") >= 0) {
                _cleanup_close_ int fd =
                    openat(cg->root_fd, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (fd >= 0 && (ctl_mask(cg, fd, "cgroup.controllers") & 1u)) /* memory */
                        return CGROUP_MODE_V2;
        }
        return v2 && v1mem ? CGROUP_MODE_HYBRID
               : v1mem     ? CGROUP_MODE_V1
               : v2        ? CGROUP_MODE_V2
                           : CGROUP_MODE_NONE;
}

static void why(const struct cgroup_config *cfg, const char *fmt, ...) _printf_(2, 3);
static void why(const struct cgroup_config *cfg, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (!cfg->why || cfg->why_cap == 0)
                return;
        va_start(ap, fmt);
        n = vsnprintf(cfg->why, cfg->why_cap, fmt, ap);
        va_end(ap);
        if (n < 0)
                cfg->why[0] = '\0';
}

void cg_disable_ctl(int dirfd, unsigned added)
{
        for (size_t k = ARRAY_SIZE(v2_ctl); k-- > 0;) {
                char w[16];

                if (!(added & (1u << k)) ||
                    snprintf(w, sizeof(w), "-%s", v2_ctl[k]) >= (int)sizeof(w))
                        continue;
                (void)cg_write_at(dirfd, "cgroup.subtree_control", w);
        }
}

/* Enable the offered controllers in dirfd's subtree_control (see v2_ctl);
 * *ret_added gets what we enabled, ours to undo. 0 or the memory write's
 * -errno. */
static int enable_ctl(struct cgroup *cg, int dirfd, unsigned *ret_added)
{
        unsigned offered = ctl_mask(cg, dirfd, "cgroup.controllers");
        unsigned have = ctl_mask(cg, dirfd, "cgroup.subtree_control"), added = 0;

        for (size_t k = 0; k < ARRAY_SIZE(v2_ctl); k++) {
                char w[16];
                int r;

                if ((have & (1u << k)) || !(offered & (1u << k)) ||
                    snprintf(w, sizeof(w), "+%s", v2_ctl[k]) >= (int)sizeof(w))
                        continue;
                r = cg_write_at(dirfd, "cgroup.subtree_control", w);
                if (r < 0 && k == 0)
                        return r;
                if (r >= 0)
                        added |= 1u << k;
        }
        *ret_added = added;
        return (have | added) & 1u ? 0 : -EOPNOTSUPP;
}

int cg_write_pid(int dirfd, long pid)
{
        char b[24];

        if (snprintf(b, sizeof(b), "%ld", pid) >= (int)sizeof(b))
                return -EINVAL;
        return cg_write_at(dirfd, "cgroup.procs", b);
}

/* Alone in our own cgroup (ofd, rel): move into <own>/buildtel/self-<pid>,
 * then enable the controllers there. On failure everything is undone. */
static int move_to_leaf(struct cgroup *cg, const struct cgroup_config *cfg, int ofd,
                        const char *rel)
{
        struct v2_state *v = &cg->v2;
        char leafrel[2 * CG_PATH_MAX];
        _cleanup_close_ int pfd = -1, lfd = -1;
        struct cgroup_self self;
        int r;

        if (snprintf(v->leaf_name, sizeof(v->leaf_name), "self-%ld", (long)getpid()) >=
                (int)sizeof(v->leaf_name) ||
            join(leafrel, sizeof(leafrel), strcmp(rel, "/") == 0 ? "" : rel, "/buildtel/",
                 v->leaf_name) < 0)
                return -ENAMETOOLONG;
        pfd = mkdir_open(ofd, "buildtel");
        if (pfd < 0)
                return pfd;
        lfd = mkdir_open(pfd, v->leaf_name);
        r = lfd < 0 ? lfd : cg_write_pid(lfd, (long)getpid());
        /* the move must show in /proc/self/cgroup */
        if (r >= 0 && (cgroup_self_read(cg->root_fd, 0, &self) < 0 ||
                       strcmp(self.path[CG_H_V2], leafrel) != 0))
                r = -EXDEV;
        if (r >= 0) {
                v->leaf = true;
                r = enable_ctl(cg, ofd, &v->own_added);
                if (r < 0)
                        why(cfg, "enabling memory in %s: %s", rel, strerror(-r));
        } else {
                why(cfg, "moving buildtel into %s: %s", leafrel, strerror(-r));
        }
        if (r < 0) {
                if (v->leaf)
                        (void)cg_write_pid(ofd, (long)getpid());
                v->leaf = false;
                (void)unlinkat(pfd, v->leaf_name, AT_REMOVEDIR);
                (void)unlinkat(ofd, "buildtel", AT_REMOVEDIR);
        }
        return r;
}

/* The remedy for a user or root, after a failed scope. */
static void why_scope(const struct cgroup_config *cfg, const char *rel, size_t nprocs, int r,
                      const char *sdwhy)
{
        bool user = geteuid() != 0;
        const char *fix = !user ? "run it alone in a delegated cgroup: systemd-run --scope -p "
                                  "Delegate=yes buildtel run ..."
                          : (r == -ENOENT || r == -ECONNREFUSED)
                              ? "start your systemd user manager (loginctl enable-linger "
                                "$USER), or use sudo"
                              : "systemd-run --user --scope -p Delegate=yes buildtel run ..., "
                                "or sudo";

        why(cfg, "%s holds %zu other process(es) and systemd gave no delegated scope (%s); %s", rel,
            nprocs > 0 ? nprocs - 1 : 0, sdwhy[0] ? sdwhy : strerror(-r), fix);
}

enum cgroup_v2_plan cgroup_v2_plan(bool is_root, bool memory_offered, size_t nprocs, bool only_us,
                                   bool writable, bool use_systemd)
{
        if (!memory_offered)
                return CG_PLAN_PLAIN;
        if (is_root)
                return CG_PLAN_DIRECT;
        if (nprocs == 1 && only_us && writable)
                return CG_PLAN_LEAF;
        return use_systemd ? CG_PLAN_SCOPE : CG_PLAN_FAIL;
}

/* v2: get a cgroup we may enable memory in, per cgroup_v2_plan. self is
 * updated when we moved (into a systemd scope). */
static int v2_prepare(struct cgroup *cg, const struct cgroup_config *cfg,
                      const struct cgroup_mounts *m, struct cgroup_self *self)
{
        static const char hybrid_hint[] = " (--cgroup=hybrid reads them from v1)";

        for (int attempt = 0; attempt < 2; attempt++) {
                const char *rel = rel_to_mount(self->path[CG_H_V2], m->root[CG_H_V2]);
                char own[2 * CG_PATH_MAX], unit[160], sdwhy[256];
                size_t nprocs = 0;
                bool only_us = false, writable;
                int fd, r;

                if (join(own, sizeof(own), m->mnt[CG_H_V2], strcmp(rel, "/") == 0 ? "" : rel, "") <
                    0)
                        return -ENAMETOOLONG;
                fd = openat(cg->root_fd, own + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                /* Our own cgroup as it is now: the processes in it, whether
                 * only we are and we may write it. */
                if (cg_pids_from_buf(cg, cg_read_at(cg, fd, "cgroup.procs")) >= 0) {
                        nprocs = cg->npids;
                        only_us = cg->npids == 1 && cg->pids[0] == (long)getpid();
                }
                writable = faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
                           faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0 &&
                           faccessat(fd, ".", W_OK, AT_EACCESS) == 0;
                switch (cgroup_v2_plan(strcmp(rel, "/") == 0,
                                       ctl_mask(cg, fd, "cgroup.controllers") & 1u, nprocs, only_us,
                                       writable, cfg->use_systemd && attempt == 0)) {
                case CG_PLAN_PLAIN:
                        close(fd);
                        note_to(cfg->note, cfg->userdata,
                                "cgroup2 offers no memory controller in %s: memory, io and "
                                "pids columns stay empty%s",
                                rel, m->mnt[CG_H_MEMORY][0] ? hybrid_hint : "");
                        return 0;
                case CG_PLAN_DIRECT:
                        cg->v2.own_fd = fd;
                        r = enable_ctl(cg, fd, &cg->v2.own_added);
                        if (r < 0)
                                why(cfg, "enabling memory in %s: %s", rel, strerror(-r));
                        return r;
                case CG_PLAN_LEAF:
                        cg->v2.own_fd = fd;
                        return move_to_leaf(cg, cfg, fd, rel);
                case CG_PLAN_SCOPE:
                        close(fd);
                        if (snprintf(unit, sizeof(unit), "buildtel-%ld-%ld.scope", (long)getpid(),
                                     (long)time(NULL)) >= (int)sizeof(unit))
                                return -ENAMETOOLONG;
                        r = sdscope_start(geteuid() != 0, unit, getpid(), sdwhy, sizeof(sdwhy));
                        if (r >= 0)
                                r = cgroup_self_read(cg->root_fd, 0, self);
                        if (r < 0) {
                                why_scope(cfg, rel, nprocs, r, sdwhy);
                                return -EBUSY;
                        }
                        continue;
                case CG_PLAN_FAIL:
                        close(fd);
                        why(cfg,
                            "%s holds %zu other process(es)%s; run buildtel alone in a "
                            "delegated cgroup: systemd-run --scope -p Delegate=yes buildtel "
                            "run ...",
                            rel, nprocs > 0 ? nprocs - 1 : 0,
                            writable ? "" : " and is not ours to write");
                        return -EBUSY;
                }
        }
        why(cfg, "the systemd scope did not leave buildtel alone in a cgroup it may write");
        return -EBUSY;
}

/* The run's cgroup in every hierarchy used. v2 and memory are required;
 * cpuacct, blkio and pids only add columns, so a host without them still
 * gets the rest. */
static int make_all(struct cgroup *cg, const struct cgroup_config *cfg,
                    const struct cgroup_mounts *m, const struct cgroup_self *self)
{
        for (int i = 0; i < _CG_H_MAX; i++) {
                struct hier *hh = &cg->h[i];
                const char *own;
                int r;

                if (!hh->used)
                        continue;
                if (!m->mnt[i][0] || !self->path[i][0]) {
                        hh->used = false;
                        if (i == CG_H_V2 || i == CG_H_MEMORY) {
                                why(cfg, "the %s hierarchy is not mounted",
                                    i == CG_H_V2 ? "cgroup2" : "memory");
                                return -ENOENT;
                        }
                        continue;
                }
                own = rel_to_mount(self->path[i], m->root[i]);
                if (snprintf(hh->name, sizeof(hh->name), "run-%s-%ld", cfg->run_id,
                             (long)getpid()) >= (int)sizeof(hh->name) ||
                    join(hh->own, sizeof(hh->own), m->mnt[i], strcmp(own, "/") == 0 ? "" : own,
                         "") < 0 ||
                    join(hh->want, sizeof(hh->want),
                         strcmp(self->path[i], "/") == 0 ? "" : self->path[i], "/buildtel/",
                         hh->name) < 0)
                        r = -ENAMETOOLONG;
                else
                        r = make_dirs(cg, hh, hh->own);
                if (r < 0) {
                        if (i == CG_H_V2 || i == CG_H_MEMORY) {
                                why(cfg, "making %s/buildtel/%s: %s", hh->own, hh->name,
                                    strerror(-r));
                                return r;
                        }
                        hh->used = false;
                }
        }
        return 0;
}

/* The hierarchies of each mode, as bits of enum cgroup_hier. */
static const unsigned mode_uses[] = {
    [CGROUP_MODE_V2] = 1u << CG_H_V2,
    [CGROUP_MODE_HYBRID] = (1u << _CG_H_MAX) - 1 - (1u << CG_H_CPUACCT),
    [CGROUP_MODE_V1] = (1u << _CG_H_MAX) - 1 - (1u << CG_H_V2),
};

static int setup_dirs(struct cgroup *cg, const struct cgroup_config *cfg)
{
        struct cgroup_mounts m;
        struct cgroup_self self;
        _cleanup_free_ char *mi = NULL;
        size_t milen;
        int r = read_file_at(cg->root_fd, "proc/self/mountinfo", 1 << 20, &mi, &milen);

        if (r >= 0)
                r = cgroup_mounts_parse(mi, milen, &m);
        if (r >= 0)
                r = cgroup_self_read(cg->root_fd, 0, &self);
        if (r < 0)
                return r;

        if (cg->mode == CGROUP_MODE_AUTO) {
                cg->mode = pick_mode(cg, &m, &self);
                if (cg->mode == CGROUP_MODE_NONE) {
                        why(cfg, "no cgroup hierarchy is mounted");
                        return -ENOENT;
                }
        }
        for (int i = 0; i < _CG_H_MAX; i++)
                cg->h[i].used = (mode_uses[cg->mode] >> i) & 1;
        if (cg->mode == CGROUP_MODE_V2 && m.mnt[CG_H_V2][0] && self.path[CG_H_V2][0]) {
                r = v2_prepare(cg, cfg, &m, &self);
                if (r < 0)
                        return r;
        }
        r = make_all(cg, cfg, &m, &self);
        if (r >= 0 && cg->mode == CGROUP_MODE_V2 && cg->v2.own_fd >= 0) {
                /* The build's cgroup gets memory (first) and the rest. */
                r = enable_ctl(cg, cg->h[CG_H_V2].parent_fd, &cg->v2.parent_added);
                if (r < 0)
                        why(cfg, "enabling memory in %s: %s", cg->h[CG_H_V2].parent, strerror(-r));
        }
        return r;
}

static void open_counters(struct cgroup *cg, const struct cgroup_config *cfg)
{
        if (cg->mode == CGROUP_MODE_V2) {
                (void)open_hot(cg, HOT_CPU, CG_H_V2, "cpu.stat");
                (void)open_hot(cg, HOT_MEM, CG_H_V2, "memory.current");
                (void)open_hot(cg, HOT_MEM_PEAK, CG_H_V2, "memory.peak");
                (void)open_hot(cg, HOT_MEM_EV, CG_H_V2, "memory.events");
                (void)open_hot(cg, HOT_IO, CG_H_V2, "io.stat");
                (void)open_hot(cg, HOT_PIDS, CG_H_V2, "pids.current");
                (void)open_hot(cg, HOT_PIDS_PEAK, CG_H_V2, "pids.peak");
                (void)open_hot(cg, HOT_MEM_STAT, CG_H_V2, "memory.stat");
        } else {
                if (cg->mode == CGROUP_MODE_HYBRID) {
                        (void)open_hot(cg, HOT_CPU, CG_H_V2, "cpu.stat");
                } else if (open_hot(cg, HOT_CPU_USER, CG_H_CPUACCT, "cpuacct.usage_user") < 0 ||
                           open_hot(cg, HOT_CPU_SYS, CG_H_CPUACCT, "cpuacct.usage_sys") < 0) {
                        closep(&cg->hot[HOT_CPU_USER]);
                        (void)open_hot(cg, HOT_CPU, CG_H_CPUACCT, "cpuacct.stat");
                }
                (void)open_hot(cg, HOT_MEM, CG_H_MEMORY, "memory.usage_in_bytes");
                (void)open_hot(cg, HOT_MEM_PEAK, CG_H_MEMORY, "memory.max_usage_in_bytes");
                (void)open_hot(cg, HOT_MEM_EV, CG_H_MEMORY, "memory.oom_control");
                (void)open_hot(cg, HOT_MEM_STAT, CG_H_MEMORY, "memory.stat");
                (void)open_hot(cg, HOT_IO, CG_H_BLKIO, "blkio.throttle.io_service_bytes_recursive");
                (void)open_hot(cg, HOT_PIDS, CG_H_PIDS, "pids.current");
                (void)open_hot(cg, HOT_PIDS_PEAK, CG_H_PIDS, "pids.peak");
                if (cg->h[CG_H_BLKIO].used)
                        blkio_account_all(cg, cg->h[CG_H_BLKIO].dir_fd);
        }
        if (cg->h[CG_H_V2].used) {
                (void)open_hot(cg, HOT_PSI_CPU, CG_H_V2, "cpu.pressure");
                (void)open_hot(cg, HOT_PSI_MEM, CG_H_V2, "memory.pressure");
                (void)open_hot(cg, HOT_PSI_IO, CG_H_V2, "io.pressure");
                (void)open_hot(cg, HOT_PROCS, CG_H_V2, "cgroup.procs");
        } else {
                setup_host_psi(cg);
                note_to(cfg->note, cfg->userdata,
                        "cgroup v1 has no pressure files: the pressure columns are host-wide "
                        "(/proc/pressure)");
                (void)open_hot(cg, HOT_PROCS, CG_H_MEMORY, "cgroup.procs");
        }
}

/* --memory-max, --memory-high: every write checked, the max read back. */
static int set_limits(struct cgroup *cg, const struct cgroup_config *cfg)
{
        bool v2 = cg->mode == CGROUP_MODE_V2;
        struct hier *hh = &cg->h[v2 ? CG_H_V2 : CG_H_MEMORY];
        const uint64_t val[2] = {cfg->memory_max, cfg->memory_high};
        const char *file[2] = {v2 ? "memory.max" : "memory.limit_in_bytes",
                               v2 ? "memory.high" : "memory.soft_limit_in_bytes"};

        for (int k = 0; k < 2; k++) {
                char lim[32];
                int r;

                if (!val[k])
                        continue;
                if (snprintf(lim, sizeof(lim), "%llu", (unsigned long long)val[k]) >=
                    (int)sizeof(lim))
                        return -EINVAL;
                r = cg_write_at(hh->dir_fd, file[k], lim);
                if (r < 0) {
                        why(cfg, "writing %s in %s/%s: %s%s", file[k], hh->parent, hh->name,
                            strerror(-r),
                            r == -ENOENT ? " (no memory controller there: run it alone in a "
                                           "delegated cgroup, systemd-run --scope -p "
                                           "Delegate=yes)"
                                         : "");
                        return r == -ENOENT ? -EOPNOTSUPP : r;
                }
        }
        if (cfg->memory_high && !v2)
                note_to(cfg->note, cfg->userdata,
                        "cgroup v1 has no memory.high: --memory-high is set as "
                        "memory.soft_limit_in_bytes (reclaim under pressure, no throttling)");
        /* The limit must hold, or the user would think the build is capped;
         * v1 rounds it down to whole pages. */
        if (cfg->memory_max) {
                ssize_t n = cg_read_at(cg, hh->dir_fd, file[0]);
                uint64_t v;

                if (n < 0)
                        return n == -ENOENT ? -EOPNOTSUPP : (int)n;
                if (cgroup_u64_parse(cg->buf, (size_t)n, &v) < 0 || v > cfg->memory_max ||
                    v + (uint64_t)cg->page_size < cfg->memory_max)
                        return -EOPNOTSUPP;
        }
        return 0;
}

int cgroup_new(const struct cgroup_config *cfg, struct cgroup **ret)
{
        struct cgroup *cg;
        long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE);
        int r;

        if (!cfg || !ret || !cfg->run_id)
                return -EINVAL;
        cg = calloc(1, sizeof(*cg));
        if (!cg)
                return -ENOMEM;
        cg->mode = cfg->mode;
        cg->ticks_per_s = hz > 0 ? (double)hz : 100.0;
        cg->page_size = ps > 0 ? (double)ps : 4096.0;
        for (int i = 0; i < _CG_H_MAX; i++)
                cg->h[i].parent_fd = cg->h[i].dir_fd = cg->h[i].procs_w_fd = -1;
        for (int i = 0; i < _HOT_MAX; i++)
                cg->hot[i] = -1;
        cg->v2.own_fd = cg->kmsg_fd = -1;
        cg->oom_pid = -1;
        cg->note = cfg->note;
        cg->userdata = cfg->userdata;
        cg->kill_leftovers = cfg->kill_leftovers;
        cg->test_unjoinable = cfg->test_unjoinable;
        cg->mem_peak = cg->pids_peak = NAN;
        cg->cap = BUF_INITIAL;
        cg->buf = malloc(cg->cap);
        cg_pids_reserve(cg, 256);
        cg->root_path = strdup(cfg->root ? cfg->root : "/");
        cg->root_fd = cg->root_path ? open(cg->root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        r = !cg->buf || !cg->pids || !cg->root_path ? -ENOMEM : cg->root_fd < 0 ? -errno : 0;
        if (r >= 0 && cfg->mode == CGROUP_MODE_NONE) {
                r = setup_none(cg, cfg);
        } else if (r >= 0) {
                r = setup_dirs(cg, cfg);
                if (r >= 0) {
                        open_counters(cg, cfg);
                        r = set_limits(cg, cfg);
                }
                /* The kernel log from now on (root, or where dmesg is not
                 * restricted): the OOM killer's report names its victim. */
                if (r >= 0)
                        cg->kmsg_fd =
                            openat(cg->root_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (cg->kmsg_fd >= 0 && lseek(cg->kmsg_fd, 0, SEEK_END) < 0)
                        closep(&cg->kmsg_fd);
                cg->setup_ok = r >= 0;
        }
        if (r < 0) {
                cgroup_free(cg);
                return r;
        }
        *ret = cg;
        return 0;
}

const char *cgroup_path(const struct cgroup *cg)
{
        return cg->h[cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY].want;
}

/* Is pid in the build's cgroup in every hierarchy: 1 yes, 0 no, -errno. */
static int in_build(struct cgroup *cg, pid_t pid)
{
        struct cgroup_self s;
        int r = cgroup_self_read(cg->root_fd, (long)pid, &s);

        if (r < 0)
                return r;
        for (int i = 0; i < _CG_H_MAX; i++)
                if (cg->h[i].used && cg->h[i].dir_fd >= 0 && strcmp(s.path[i], cg->h[i].want) != 0)
                        return 0;
        return 1;
}

int cgroup_verify(struct cgroup *cg, pid_t pid, int join_error)
{
        struct timespec ts = {0, 10 * 1000 * 1000};

        if (cg->mode == CGROUP_MODE_NONE)
                return 0;
        if (join_error < 0)
                return join_error;
        /* A process on its way out no longer shows its cgroup: only one
         * that lives on elsewhere has not joined. */
        for (int i = 0; i < 20; i++) {
                struct pidstat ps;
                int r = in_build(cg, pid), k;

                if (r == -ENOENT || r == -ESRCH || r == 1)
                        return 0;
                if (r < 0)
                        return r;
                k = procfs_pidstat_at(cg->root_fd, (long)pid, &ps);
                if (k == -ENOENT || k == -ESRCH || (k >= 0 && (ps.state == 'Z' || ps.state == 'X')))
                        return 0;
                nanosleep(&ts, NULL);
        }
        return -EXDEV;
}

int cgroup_fallback_none(struct cgroup *cg, long tree_root)
{
        struct cgroup_config cfg = {.root = cg->root_path, .tree_root = tree_root};

        if (cg->mode == CGROUP_MODE_NONE)
                return 0;
        cg->setup_ok = false; /* undo what setup enabled */
        cg_remove_dirs(cg);
        for (int i = 0; i < _CG_H_MAX; i++) {
                closep(&cg->h[i].procs_w_fd);
                cg->h[i].used = false;
        }
        for (int i = 0; i < _HOT_MAX; i++)
                closep(&cg->hot[i]);
        cg->mode = CGROUP_MODE_NONE;
        cg->mem_peak = cg->pids_peak = NAN;
        return setup_none(cg, &cfg);
}

bool cgroup_pressure_is_host(const struct cgroup *cg)
{
        return cg && cg->psi_host;
}

enum cgroup_mode cgroup_mode(const struct cgroup *cg)
{
        return cg->mode;
}

size_t cgroup_procs_fds(const struct cgroup *cg, int *fds, size_t cap)
{
        size_t n = 0;

        for (int i = 0; i < _CG_H_MAX && n < cap; i++)
                if (cg->h[i].used && cg->h[i].procs_w_fd >= 0)
                        fds[n++] = cg->h[i].procs_w_fd;
        return n;
}
