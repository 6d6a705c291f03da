/* SPDX-License-Identifier: MIT */
#include "platform/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/ranges.h"
#include "platform/procfs.h"
#include "util/util.h"

#define BUF_INITIAL 4096
#define BUF_MAX (16u * 1024 * 1024)
/* pids we track in none mode and list from cgroup.procs; a build with more
 * live processes than this is summed only as far as this. */
#define PIDS_MAX 65536
/* A blkio throttle rule this high never throttles, but it switches on the
 * kernel's per-cgroup IO accounting, which since 6.10 only runs on queues
 * that have a throttle rule (1 PiB/s). */
#define BLKIO_UNLIMITED "1125899906842624"

/* ---- parsers ---- */

static const char *line_end(const char *p, const char *end)
{
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl : end;
}

static const char *next_line(const char *eol, const char *end)
{
        return eol < end ? eol + 1 : end;
}

static bool at_field_end(const char *p, const char *end)
{
        return p >= end || *p == ' ' || *p == '\t' || *p == '\n';
}

/* The next blank-separated word of [*p, end). */
static bool next_word(const char **p, const char *end, const char **ret_w, size_t *ret_n)
{
        const char *w;

        skip_spaces(p, end);
        if (*p >= end)
                return false;
        w = *p;
        while (*p < end && **p != ' ' && **p != '\t')
                (*p)++;
        *ret_w = w;
        *ret_n = (size_t)(*p - w);
        return true;
}

static bool word_is(const char *w, size_t n, const char *s)
{
        return n == strlen(s) && memcmp(w, s, n) == 0;
}

static int hier_of_controller(const char *w, size_t n)
{
        if (word_is(w, n, "memory"))
                return CG_H_MEMORY;
        if (word_is(w, n, "cpuacct"))
                return CG_H_CPUACCT;
        if (word_is(w, n, "blkio"))
                return CG_H_BLKIO;
        if (word_is(w, n, "pids"))
                return CG_H_PIDS;
        return -1;
}

/* Copy a mountinfo path, undoing its \ooo escapes. */
static int unescape_path(const char *w, size_t n, char out[static CG_PATH_MAX])
{
        size_t o = 0;

        for (size_t i = 0; i < n; i++) {
                char c = w[i];

                if (c == '\\' && n - i >= 4 && w[i + 1] >= '0' && w[i + 1] <= '3' &&
                    w[i + 2] >= '0' && w[i + 2] <= '7' && w[i + 3] >= '0' && w[i + 3] <= '7') {
                        c = (char)((w[i + 1] - '0') * 64 + (w[i + 2] - '0') * 8 + (w[i + 3] - '0'));
                        i += 3;
                }
                if (c == '\0' || o + 1 >= CG_PATH_MAX)
                        return -ENAMETOOLONG;
                out[o++] = c;
        }
        out[o] = '\0';
        return 0;
}

int cgroup_mounts_parse(const char *buf, size_t len, struct cgroup_mounts *ret)
{
        struct cgroup_mounts *m;
        const char *p = buf, *end = buf + len;

        if (!buf || !ret)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        while (p < end) {
                const char *eol = line_end(p, end), *w, *root_w = NULL, *mnt_w = NULL, *type_w;
                const char *opts_w;
                size_t n, root_n = 0, mnt_n = 0, type_n, opts_n;
                bool sep = false;
                int field = 0;

                /* id parent maj:min root mountpoint opts [optional...] - type source superopts */
                while (next_word(&p, eol, &w, &n)) {
                        field++;
                        if (field == 4) {
                                root_w = w;
                                root_n = n;
                        } else if (field == 5) {
                                mnt_w = w;
                                mnt_n = n;
                        } else if (field > 6 && word_is(w, n, "-")) {
                                sep = true;
                                break;
                        }
                }
                if (!sep || !next_word(&p, eol, &type_w, &type_n) || !next_word(&p, eol, &w, &n) ||
                    !next_word(&p, eol, &opts_w, &opts_n)) {
                        p = next_line(eol, end);
                        continue;
                }
                if (word_is(type_w, type_n, "cgroup2")) {
                        if (!m->mnt[CG_H_V2][0] &&
                            unescape_path(mnt_w, mnt_n, m->mnt[CG_H_V2]) >= 0 &&
                            unescape_path(root_w, root_n, m->root[CG_H_V2]) < 0)
                                m->mnt[CG_H_V2][0] = '\0';
                } else if (word_is(type_w, type_n, "cgroup")) {
                        const char *o = opts_w, *oend = opts_w + opts_n;

                        while (o < oend) {
                                const char *comma = memchr(o, ',', (size_t)(oend - o));
                                const char *ce = comma ? comma : oend;
                                int h = hier_of_controller(o, (size_t)(ce - o));

                                if (h >= 0 && !m->mnt[h][0] &&
                                    unescape_path(mnt_w, mnt_n, m->mnt[h]) >= 0 &&
                                    unescape_path(root_w, root_n, m->root[h]) < 0)
                                        m->mnt[h][0] = '\0';
                                o = comma ? comma + 1 : oend;
                        }
                }
                p = next_line(eol, end);
        }
        *ret = *m;
        free(m);
        return 0;
}

int cgroup_self_parse(const char *buf, size_t len, struct cgroup_self *ret)
{
        struct cgroup_self *s;
        const char *p = buf, *end = buf + len;
        bool any = false;

        if (!buf || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        while (p < end) {
                const char *eol = line_end(p, end);
                const char *c1 = memchr(p, ':', (size_t)(eol - p)), *c2, *path;
                size_t plen;

                if (!c1 || !(c2 = memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)))) {
                        p = next_line(eol, end);
                        continue;
                }
                path = c2 + 1;
                plen = (size_t)(eol - path);
                if (plen == 0 || path[0] != '/' || plen >= CG_PATH_MAX ||
                    memchr(path, '\0', plen)) {
                        p = next_line(eol, end);
                        continue;
                }
                if (c2 == c1 + 1 && c1 - p == 1 && p[0] == '0') {
                        if (!s->path[CG_H_V2][0]) {
                                memcpy(s->path[CG_H_V2], path, plen);
                                s->path[CG_H_V2][plen] = '\0';
                                any = true;
                        }
                } else {
                        const char *o = c1 + 1;

                        while (o < c2) {
                                const char *comma = memchr(o, ',', (size_t)(c2 - o));
                                const char *ce = comma ? comma : c2;
                                int h = hier_of_controller(o, (size_t)(ce - o));

                                if (h >= 0 && !s->path[h][0]) {
                                        memcpy(s->path[h], path, plen);
                                        s->path[h][plen] = '\0';
                                        any = true;
                                }
                                o = comma ? comma + 1 : c2;
                        }
                }
                p = next_line(eol, end);
        }
        if (!any) {
                free(s);
                return -EINVAL;
        }
        *ret = *s;
        free(s);
        return 0;
}

int cgroup_u64_parse(const char *buf, size_t len, uint64_t *ret)
{
        const char *p = buf, *end = buf + len;
        uint64_t v;
        int r;

        if (!buf)
                return -EINVAL;
        skip_spaces(&p, end);
        if (skip_prefix(&p, end, "max")) {
                v = UINT64_MAX;
        } else {
                r = parse_u64(&p, end, &v);
                if (r < 0)
                        return r;
        }
        skip_spaces(&p, end);
        if (p < end && *p == '\n')
                p++;
        if (p != end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cgroup_keyed_parse(const char *buf, size_t len, const char *key, uint64_t *ret)
{
        const char *p = buf, *end = buf + len;

        if (!buf || !key)
                return -EINVAL;
        while (p < end) {
                const char *eol = line_end(p, end), *w;
                size_t n;
                uint64_t v;
                int r;

                if (next_word(&p, eol, &w, &n) && word_is(w, n, key)) {
                        skip_spaces(&p, eol);
                        r = parse_u64(&p, eol, &v);
                        if (r < 0)
                                return r;
                        if (!at_field_end(p, eol))
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
                p = next_line(eol, end);
        }
        return -ENOENT;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int cgroup_iostat_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write)
{
        const char *p = buf, *end = buf + len;
        uint64_t rd = 0, wr = 0;

        if (!buf)
                return -EINVAL;
        /* "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" */
        while (p < end) {
                const char *eol = line_end(p, end), *w;
                size_t n;
                bool first = true;

                while (next_word(&p, eol, &w, &n)) {
                        const char *q = w, *wend = w + n;
                        uint64_t v;
                        bool is_r;

                        if (first) {
                                first = false;
                                continue; /* MAJ:MIN */
                        }
                        is_r = skip_prefix(&q, wend, "rbytes=");
                        if (!is_r && !skip_prefix(&q, wend, "wbytes="))
                                continue;
                        if (parse_u64(&q, wend, &v) < 0 || q != wend)
                                return -EINVAL;
                        if (is_r)
                                rd = add_sat(rd, v);
                        else
                                wr = add_sat(wr, v);
                }
                p = next_line(eol, end);
        }
        *ret_read = rd;
        *ret_write = wr;
        return 0;
}

int cgroup_blkio_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write)
{
        const char *p = buf, *end = buf + len;
        uint64_t rd = 0, wr = 0;

        if (!buf)
                return -EINVAL;
        /* "254:0 Read 123" ... "254:0 Total 456", then "Total 456". */
        while (p < end) {
                const char *eol = line_end(p, end), *dev, *op;
                size_t dn, on;
                uint64_t v;
                int r;

                if (!next_word(&p, eol, &dev, &dn) || !memchr(dev, ':', dn) ||
                    !next_word(&p, eol, &op, &on) ||
                    (!word_is(op, on, "Read") && !word_is(op, on, "Write"))) {
                        p = next_line(eol, end);
                        continue;
                }
                skip_spaces(&p, eol);
                r = parse_u64(&p, eol, &v);
                if (r < 0)
                        return r;
                if (!at_field_end(p, eol))
                        return -EINVAL;
                if (op[0] == 'R')
                        rd = add_sat(rd, v);
                else
                        wr = add_sat(wr, v);
                p = next_line(eol, end);
        }
        *ret_read = rd;
        *ret_write = wr;
        return 0;
}

int cgroup_pressure_parse(const char *buf, size_t len, struct cgroup_pressure *ret)
{
        const char *p = buf, *end = buf + len;
        uint64_t some = 0, full = UINT64_MAX;
        bool have_some = false;

        if (!buf)
                return -EINVAL;
        /* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123" */
        while (p < end) {
                const char *eol = line_end(p, end), *w;
                size_t n;
                bool is_some;

                if (!next_word(&p, eol, &w, &n) ||
                    (!(is_some = word_is(w, n, "some")) && !word_is(w, n, "full"))) {
                        p = next_line(eol, end);
                        continue;
                }
                while (next_word(&p, eol, &w, &n)) {
                        const char *q = w, *wend = w + n;
                        uint64_t v;

                        if (!skip_prefix(&q, wend, "total="))
                                continue;
                        if (parse_u64(&q, wend, &v) < 0 || q != wend)
                                return -EINVAL;
                        if (is_some) {
                                some = v;
                                have_some = true;
                        } else {
                                full = v;
                        }
                }
                p = next_line(eol, end);
        }
        if (!have_some)
                return -EINVAL;
        *ret = (struct cgroup_pressure){.some_us = some, .full_us = full};
        return 0;
}

int cgroup_procs_parse(const char *buf, size_t len, long *pids, size_t cap, size_t *ret_n)
{
        const char *p = buf, *end = buf + len;
        size_t n = 0;

        if (!buf || (!pids && cap > 0))
                return -EINVAL;
        while (p < end) {
                const char *eol = line_end(p, end);
                uint64_t v;
                int r;

                if (eol == p) {
                        p = next_line(eol, end);
                        continue;
                }
                r = parse_u64(&p, eol, &v);
                if (r < 0)
                        return r;
                if (p != eol)
                        return -EINVAL;
                if (v == 0 || v > INT_MAX)
                        return -ERANGE;
                if (n < cap)
                        pids[n] = (long)v;
                n++;
                p = next_line(eol, end);
        }
        *ret_n = n;
        return 0;
}

int cgroup_mode_parse(const char *s, enum cgroup_mode *ret)
{
        static const char *const names[] = {"auto", "v2", "hybrid", "v1", "none"};

        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = (enum cgroup_mode)i;
                        return 0;
                }
        return -EINVAL;
}

const char *cgroup_mode_name(enum cgroup_mode m)
{
        switch (m) {
        case CGROUP_MODE_AUTO:
                return "auto";
        case CGROUP_MODE_V2:
                return "v2";
        case CGROUP_MODE_HYBRID:
                return "hybrid";
        case CGROUP_MODE_V1:
                return "v1";
        case CGROUP_MODE_NONE:
                return "none";
        }
        return "?";
}

void cgroup_stats_clear(struct cgroup_stats *s)
{
        *s = (struct cgroup_stats){
            NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
        };
}

/* ---- the cgroup ---- */

struct hier {
        bool used;
        char parent[2 * CG_PATH_MAX]; /* <root><mount><own>/buildtel */
        char name[128];               /* run-<id>-<pid> */
        int parent_fd, dir_fd;        /* -1 until made */
        int procs_w_fd;               /* for the child */
};

enum hot {
        HOT_CPU,      /* v2 cpu.stat or v1 cpuacct.stat */
        HOT_CPU_USER, /* v1 cpuacct.usage_user (ns) */
        HOT_CPU_SYS,  /* v1 cpuacct.usage_sys */
        HOT_MEM,      /* memory.current / memory.usage_in_bytes */
        HOT_MEM_PEAK, /* memory.peak / memory.max_usage_in_bytes */
        HOT_MEM_EV,   /* memory.events / memory.oom_control */
        HOT_IO,       /* io.stat / blkio.throttle.io_service_bytes_recursive */
        HOT_PSI_CPU,
        HOT_PSI_MEM,
        HOT_PSI_IO,
        HOT_PIDS,
        HOT_PIDS_PEAK,
        HOT_PROCS,    /* cgroup.procs, read-only */
        HOT_MEM_STAT, /* memory.stat: anon/file (v2), total_rss/total_cache (v1) */
        _HOT_MAX,
};

struct tree_proc {
        long pid, ppid;
        uint64_t ticks; /* utime+stime+cutime+cstime */
        uint64_t utime, stime;
        uint64_t rss_pages;
        bool in;
};

struct cgroup {
        enum cgroup_mode mode;
        int root_fd;
        struct hier h[_CG_H_MAX];
        int hot[_HOT_MAX];
        bool psi_host;
        struct cgroup_pressure psi_base[3];
        bool psi_base_ok[3];
        char *buf;
        size_t cap;
        long *pids;
        size_t npids, pids_cap;
        double ticks_per_s, page_size;
        /* none mode */
        long tree_root;
        struct procfs *procfs;
        struct tree_proc *procs;
        size_t nprocs, procs_cap;
        struct rusage ru_base;
        double mem_peak, pids_peak;
};

static void note(const struct cgroup_config *cfg, const char *fmt, ...) _printf_(2, 3);
static void note(const struct cgroup_config *cfg, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        if (!cfg->note)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        cfg->note(cfg->userdata, "%s", buf);
}

/* pread a whole kept-open file into cg->buf (grown as needed). */
static ssize_t read_fd(struct cgroup *cg, int fd)
{
        if (fd < 0)
                return -EBADF;
        return pread_whole(fd, &cg->buf, &cg->cap, BUF_MAX);
}

/* Read a small file relative to dirfd into cg->buf. */
static ssize_t read_at(struct cgroup *cg, int dirfd, const char *name)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return read_fd(cg, fd);
}

static int write_at(int dirfd, const char *name, const char *s)
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

static void pids_reserve(struct cgroup *cg, size_t n)
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

/* Parse cg->buf (len n) as cgroup.procs into cg->pids. */
static int pids_from_buf(struct cgroup *cg, size_t n)
{
        size_t total;
        int r = cgroup_procs_parse(cg->buf, n, cg->pids, cg->pids_cap, &total);

        if (r < 0)
                return r;
        if (total > cg->pids_cap) {
                pids_reserve(cg, MIN(MAX(total, 2 * cg->pids_cap), (size_t)PIDS_MAX));
                r = cgroup_procs_parse(cg->buf, n, cg->pids, cg->pids_cap, &total);
                if (r < 0)
                        return r;
        }
        cg->npids = MIN(total, cg->pids_cap);
        return 0;
}

/* Is the run that made the cgroup `name` (run-ID-PID) still alive? Not by
 * its comm (a copy or a wrapper is not named buildtel), but by pid and start
 * time: the owner started before it made the cgroup, a reused pid after.
 * When in doubt, alive: a leaked cgroup is better than a killed build. */
static bool run_owner_alive(struct cgroup *cg, int parent_fd, const char *name, long pid)
{
        char path[64];
        struct pidstat ps;
        struct stat st;
        struct timespec real, boot;
        long hz = sysconf(_SC_CLK_TCK);
        double start;
        ssize_t n;

        if (snprintf(path, sizeof(path), "proc/%ld/stat", pid) >= (int)sizeof(path))
                return true;
        n = read_at(cg, cg->root_fd, path);
        if (n == -ENOENT || n == -ESRCH)
                return false;
        if (n < 0 || pidstat_parse(cg->buf, (size_t)n, &ps) < 0 || hz <= 0 ||
            fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
                return true;
        if (ps.state == 'Z' || ps.state == 'X')
                return false;
        start = (double)(real.tv_sec - boot.tv_sec) + (double)(real.tv_nsec - boot.tv_nsec) / 1e9 +
                (double)ps.starttime / (double)hz;
        return start <= (double)st.st_mtim.tv_sec + 1.0;
}

/* Kill every process listed in dirfd's cgroup.procs (SIGKILL) until none is
 * left, for about 2 s at most. Returns 0 or -EBUSY. */
static int empty_dir(struct cgroup *cg, int dirfd, bool killed_already)
{
        struct timespec ts = {0, 10 * 1000 * 1000};

        for (int i = 0; i < 200; i++) {
                ssize_t n = read_at(cg, dirfd, "cgroup.procs");

                if (n < 0)
                        return n == -ENOENT ? 0 : (int)n;
                if (pids_from_buf(cg, (size_t)n) < 0 || cg->npids == 0)
                        return 0;
                if (!killed_already || i > 0)
                        for (size_t k = 0; k < cg->npids; k++)
                                if (cg->pids[k] != getpid())
                                        (void)kill((pid_t)cg->pids[k], SIGKILL);
                nanosleep(&ts, NULL);
        }
        return -EBUSY;
}

/* Remove run-*-PID cgroups of buildtels that are gone. */
static void clean_stale(struct cgroup *cg, int parent_fd)
{
        DIR *d = opendir_at(parent_fd, ".");
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                const char *dash = strrchr(de->d_name, '-');
                uint64_t pid;
                int sub;

                if (de->d_type != DT_DIR || strncmp(de->d_name, "run-", 4) != 0 || !dash ||
                    parse_u64_str(dash + 1, &pid) < 0 || pid == 0 || pid > INT_MAX)
                        continue;
                if ((long)pid != (long)getpid() &&
                    run_owner_alive(cg, parent_fd, de->d_name, (long)pid))
                        continue;
                sub = openat(parent_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub >= 0) {
                        (void)write_at(sub, "cgroup.kill", "1");
                        (void)empty_dir(cg, sub, false);
                        close(sub);
                }
                (void)unlinkat(parent_fd, de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}

static int open_hot(struct cgroup *cg, enum hot which, enum cgroup_hier h, const char *name)
{
        if (!cg->h[h].used || cg->h[h].dir_fd < 0)
                return -ENOENT;
        cg->hot[which] = openat(cg->h[h].dir_fd, name, O_RDONLY | O_CLOEXEC);
        return cg->hot[which] < 0 ? -errno : 0;
}

static bool controller_listed(struct cgroup *cg, int dirfd, const char *ctl)
{
        ssize_t n = read_at(cg, dirfd, "cgroup.controllers");
        const char *p = cg->buf, *end, *w;
        size_t wn;

        if (n < 0)
                return false;
        end = cg->buf + n;
        while (p < end) {
                const char *eol = line_end(p, end);

                while (next_word(&p, eol, &w, &wn))
                        if (word_is(w, wn, ctl))
                                return true;
                p = next_line(eol, end);
        }
        return false;
}

/* mkdir <base>/buildtel and the run's cgroup under it; the parent may be
 * removed by another buildtel's clean-up in between, so retry. */
static int make_dirs(struct cgroup *cg, struct hier *hh, const char *base)
{
        int r = join(hh->parent, sizeof(hh->parent), base, "/buildtel", "");

        if (r < 0)
                return r;
        for (int attempt = 0; attempt < 3; attempt++) {
                closep(&hh->parent_fd);
                hh->parent_fd = -1;
                if (mkdirat(cg->root_fd, hh->parent + 1, 0755) < 0 && errno != EEXIST)
                        return -errno;
                hh->parent_fd =
                    openat(cg->root_fd, hh->parent + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (hh->parent_fd < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                clean_stale(cg, hh->parent_fd);
                if (mkdirat(hh->parent_fd, hh->name, 0755) < 0) {
                        if (errno == ENOENT)
                                continue;
                        if (errno != EEXIST)
                                return -errno;
                }
                hh->dir_fd = openat(hh->parent_fd, hh->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (hh->dir_fd < 0)
                        return -errno;
                hh->procs_w_fd = openat(hh->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (hh->procs_w_fd < 0)
                        return -errno;
                return 0;
        }
        return -ENOENT;
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
                n = read_at(cg, dirfd(d), path);
                if (n <= 0 || n > 32)
                        continue;
                for (k = 0; k < (size_t)n && cg->buf[k] != '\n'; k++)
                        ;
                if (snprintf(rule, sizeof(rule), "%.*s %s", (int)k, cg->buf, BLKIO_UNLIMITED) >=
                    (int)sizeof(rule))
                        continue;
                (void)write_at(cgfd, "blkio.throttle.read_bps_device", rule);
                (void)write_at(cgfd, "blkio.throttle.write_bps_device", rule);
        }
        closedir(d);
}

static int read_pressure_at(struct cgroup *cg, int fd, struct cgroup_pressure *ret)
{
        ssize_t n = read_fd(cg, fd);

        return n < 0 ? (int)n : cgroup_pressure_parse(cg->buf, (size_t)n, ret);
}

static int setup_none(struct cgroup *cg, const struct cgroup_config *cfg)
{
        int r = procfs_new(cfg->root ? cfg->root : "/", &cg->procfs);

        if (r < 0)
                return r;
        cg->tree_root = cfg->tree_root > 0 ? cfg->tree_root : (long)getpid();
        (void)getrusage(RUSAGE_CHILDREN, &cg->ru_base);
        return 0;
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
                    read_pressure_at(cg, cg->hot[HOT_PSI_CPU + i], &cg->psi_base[i]) >= 0;
        }
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

                if (fd >= 0 && controller_listed(cg, fd, "memory"))
                        return CGROUP_MODE_V2;
        }
        if (v2 && v1mem)
                return CGROUP_MODE_HYBRID;
        if (v1mem)
                return CGROUP_MODE_V1;
        if (v2)
                return CGROUP_MODE_V2;
        return CGROUP_MODE_NONE;
}

static int setup_dirs(struct cgroup *cg, const struct cgroup_config *cfg)
{
        struct cgroup_mounts *m = NULL;
        struct cgroup_self *self = NULL;
        _cleanup_free_ char *mi = NULL, *sc = NULL;
        size_t milen, sclen;
        int r;

        m = calloc(1, sizeof(*m));
        self = calloc(1, sizeof(*self));
        r = m && self ? 0 : -ENOMEM;
        if (r >= 0)
                r = read_file_at(cg->root_fd, "proc/self/mountinfo", 1 << 20, &mi, &milen);
        if (r >= 0)
                r = cgroup_mounts_parse(mi, milen, m);
        if (r >= 0)
                r = read_file_at(cg->root_fd, "proc/self/cgroup", 1 << 16, &sc, &sclen);
        if (r >= 0)
                r = cgroup_self_parse(sc, sclen, self);
        if (r < 0)
                goto out;

        if (cg->mode == CGROUP_MODE_AUTO) {
                cg->mode = pick_mode(cg, m, self);
                if (cg->mode == CGROUP_MODE_NONE) {
                        r = -ENOENT;
                        goto out;
                }
        }
        switch (cg->mode) {
        case CGROUP_MODE_V2:
                cg->h[CG_H_V2].used = true;
                break;
        case CGROUP_MODE_HYBRID:
                cg->h[CG_H_V2].used = cg->h[CG_H_MEMORY].used = true;
                cg->h[CG_H_BLKIO].used = cg->h[CG_H_PIDS].used = true;
                break;
        default:
                cg->h[CG_H_CPUACCT].used = cg->h[CG_H_MEMORY].used = true;
                cg->h[CG_H_BLKIO].used = cg->h[CG_H_PIDS].used = true;
                break;
        }
        /* v2 and memory are required; cpuacct, blkio and pids only add
         * columns, so a host without them still gets the rest. */
        for (int i = 0; i < _CG_H_MAX; i++) {
                char base[2 * CG_PATH_MAX];
                struct hier *hh = &cg->h[i];

                if (!hh->used)
                        continue;
                if (!m->mnt[i][0] || !self->path[i][0]) {
                        hh->used = false;
                        if (i == CG_H_V2 || i == CG_H_MEMORY) {
                                r = -ENOENT;
                                goto out;
                        }
                        continue;
                }
                r = snprintf(hh->name, sizeof(hh->name), "run-%s-%ld", cfg->run_id,
                             (long)getpid()) >= (int)sizeof(hh->name)
                        ? -ENAMETOOLONG
                        : 0;
                if (r >= 0) {
                        const char *own = rel_to_mount(self->path[i], m->root[i]);
                        r = join(base, sizeof(base), m->mnt[i], strcmp(own, "/") == 0 ? "" : own,
                                 "");
                }
                if (r >= 0)
                        r = make_dirs(cg, hh, base);
                if (r < 0) {
                        if (i == CG_H_V2 || i == CG_H_MEMORY)
                                goto out;
                        hh->used = false;
                        r = 0;
                }
        }
        if (cg->mode == CGROUP_MODE_V2) {
                /* Delegate the controllers down to our cgroup; where our
                 * own cgroup holds processes the kernel refuses, and those
                 * columns stay empty. */
                char own[2 * CG_PATH_MAX];
                const char *rel = rel_to_mount(self->path[CG_H_V2], m->root[CG_H_V2]);

                if (join(own, sizeof(own), m->mnt[CG_H_V2], strcmp(rel, "/") == 0 ? "" : rel, "") >=
                    0) {
                        _cleanup_close_ int ofd =
                            openat(cg->root_fd, own + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        static const char *const ctl[] = {"+memory", "+io", "+pids", "+cpu"};

                        for (size_t k = 0; k < ARRAY_SIZE(ctl); k++) {
                                if (ofd >= 0)
                                        (void)write_at(ofd, "cgroup.subtree_control", ctl[k]);
                                (void)write_at(cg->h[CG_H_V2].parent_fd, "cgroup.subtree_control",
                                               ctl[k]);
                        }
                }
        }
out:
        free(m);
        free(self);
        return r;
}

static void open_counters(struct cgroup *cg, const struct cgroup_config *cfg)
{
        char lim[32];

        if (cg->mode == CGROUP_MODE_V2) {
                (void)open_hot(cg, HOT_CPU, CG_H_V2, "cpu.stat");
                (void)open_hot(cg, HOT_MEM, CG_H_V2, "memory.current");
                (void)open_hot(cg, HOT_MEM_PEAK, CG_H_V2, "memory.peak");
                (void)open_hot(cg, HOT_MEM_EV, CG_H_V2, "memory.events");
                (void)open_hot(cg, HOT_IO, CG_H_V2, "io.stat");
                (void)open_hot(cg, HOT_PIDS, CG_H_V2, "pids.current");
                (void)open_hot(cg, HOT_PIDS_PEAK, CG_H_V2, "pids.peak");
                (void)open_hot(cg, HOT_MEM_STAT, CG_H_V2, "memory.stat");
                if (cg->hot[HOT_MEM] < 0)
                        note(cfg, "cgroup2 has no memory controller for us here; memory, io and "
                                  "pids columns stay empty (--cgroup=hybrid reads them from v1)");
        } else {
                if (cg->mode == CGROUP_MODE_HYBRID) {
                        (void)open_hot(cg, HOT_CPU, CG_H_V2, "cpu.stat");
                } else if (open_hot(cg, HOT_CPU_USER, CG_H_CPUACCT, "cpuacct.usage_user") < 0 ||
                           open_hot(cg, HOT_CPU_SYS, CG_H_CPUACCT, "cpuacct.usage_sys") < 0) {
                        closep(&cg->hot[HOT_CPU_USER]);
                        cg->hot[HOT_CPU_USER] = -1;
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
                note(cfg, "cgroup v1 has no pressure files: the pressure columns are host-wide "
                          "(/proc/pressure)");
                (void)open_hot(cg, HOT_PROCS, CG_H_MEMORY, "cgroup.procs");
        }

        if (cfg->memory_max) {
                snprintf(lim, sizeof(lim), "%llu", (unsigned long long)cfg->memory_max);
                if (cg->mode == CGROUP_MODE_V2)
                        (void)write_at(cg->h[CG_H_V2].dir_fd, "memory.max", lim);
                else
                        (void)write_at(cg->h[CG_H_MEMORY].dir_fd, "memory.limit_in_bytes", lim);
        }
        if (cfg->memory_high) {
                snprintf(lim, sizeof(lim), "%llu", (unsigned long long)cfg->memory_high);
                if (cg->mode == CGROUP_MODE_V2) {
                        (void)write_at(cg->h[CG_H_V2].dir_fd, "memory.high", lim);
                } else {
                        (void)write_at(cg->h[CG_H_MEMORY].dir_fd, "memory.soft_limit_in_bytes",
                                       lim);
                        note(cfg, "cgroup v1 has no memory.high: --memory-high is set as "
                                  "memory.soft_limit_in_bytes (reclaim under pressure, no "
                                  "throttling)");
                }
        }
}

/* The limits must hold, or the user would think the build is capped. */
static int check_limits(struct cgroup *cg, const struct cgroup_config *cfg)
{
        int dirfd = cg->mode == CGROUP_MODE_V2 ? cg->h[CG_H_V2].dir_fd : cg->h[CG_H_MEMORY].dir_fd;
        const char *name = cg->mode == CGROUP_MODE_V2 ? "memory.max" : "memory.limit_in_bytes";
        uint64_t v;
        ssize_t n;

        if (!cfg->memory_max)
                return 0;
        n = read_at(cg, dirfd, name);
        if (n < 0)
                return n == -ENOENT ? -EOPNOTSUPP : (int)n;
        /* v1 rounds the limit down to whole pages. */
        if (cgroup_u64_parse(cg->buf, (size_t)n, &v) < 0 || v > cfg->memory_max ||
            v + (uint64_t)cg->page_size < cfg->memory_max)
                return -EOPNOTSUPP;
        return 0;
}

int cgroup_new(const struct cgroup_config *cfg, struct cgroup **ret)
{
        struct cgroup *cg;
        long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE);
        int r;

        if (!cfg || !ret || !cfg->run_id)
                return -EINVAL;
        if (cfg->mode == CGROUP_MODE_NONE && (cfg->memory_max || cfg->memory_high))
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
        cg->mem_peak = cg->pids_peak = NAN;
        cg->cap = BUF_INITIAL;
        cg->buf = malloc(cg->cap);
        cg->root_fd = open(cfg->root ? cfg->root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = !cg->buf ? -ENOMEM : cg->root_fd < 0 ? -errno : 0;
        if (r >= 0) {
                pids_reserve(cg, 256);
                if (!cg->pids)
                        r = -ENOMEM;
        }
        if (r >= 0 && cfg->mode == CGROUP_MODE_NONE) {
                r = setup_none(cg, cfg);
                if (r >= 0)
                        setup_host_psi(cg);
        } else if (r >= 0) {
                r = setup_dirs(cg, cfg);
                if (r >= 0) {
                        open_counters(cg, cfg);
                        r = check_limits(cg, cfg);
                }
        }
        if (r < 0) {
                cgroup_free(cg);
                return r;
        }
        *ret = cg;
        return 0;
}

static void remove_dirs(struct cgroup *cg)
{
        for (int i = 0; i < _CG_H_MAX; i++) {
                struct hier *hh = &cg->h[i];

                if (hh->dir_fd < 0)
                        continue;
                closep(&hh->dir_fd);
                hh->dir_fd = -1;
                (void)unlinkat(hh->parent_fd, hh->name, AT_REMOVEDIR);
        }
        for (int i = 0; i < _CG_H_MAX; i++) {
                struct hier *hh = &cg->h[i];

                if (hh->parent_fd < 0)
                        continue;
                closep(&hh->parent_fd);
                hh->parent_fd = -1;
                /* Busy while another buildtel runs: that one removes it. */
                (void)unlinkat(cg->root_fd, hh->parent + 1, AT_REMOVEDIR);
        }
}

int cgroup_kill_all(struct cgroup *cg)
{
        bool v2kill = false;
        int ret = 0;

        if (!cg || cg->mode == CGROUP_MODE_NONE)
                return 0;
        if (cg->h[CG_H_V2].used && cg->h[CG_H_V2].dir_fd >= 0)
                v2kill = write_at(cg->h[CG_H_V2].dir_fd, "cgroup.kill", "1") >= 0;
        for (int i = 0; i < _CG_H_MAX; i++) {
                int r;

                if (!cg->h[i].used || cg->h[i].dir_fd < 0)
                        continue;
                r = empty_dir(cg, cg->h[i].dir_fd, v2kill);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

void cgroup_free(struct cgroup *cg)
{
        if (!cg)
                return;
        if (cg->root_fd >= 0 && cg->buf) {
                (void)cgroup_kill_all(cg);
                remove_dirs(cg);
        }
        for (int i = 0; i < _CG_H_MAX; i++) {
                closep(&cg->h[i].procs_w_fd);
                closep(&cg->h[i].dir_fd);
                closep(&cg->h[i].parent_fd);
        }
        for (int i = 0; i < _HOT_MAX; i++)
                closep(&cg->hot[i]);
        closep(&cg->root_fd);
        procfs_free(cg->procfs);
        free(cg->procs);
        free(cg->pids);
        free(cg->buf);
        free(cg);
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

/* A figure of a cgroup file checked against its range (model/ranges.h):
 * out of range is absent. */
static double in_range(enum range_kind k, double v)
{
        return range_ok(k, v) ? v : NAN;
}

/* Read one hot file and parse a single number. */
static int hot_u64(struct cgroup *cg, enum hot which, uint64_t *ret)
{
        ssize_t n = read_fd(cg, cg->hot[which]);

        return n < 0 ? (int)n : cgroup_u64_parse(cg->buf, (size_t)n, ret);
}

static int hot_keyed(struct cgroup *cg, enum hot which, const char *key, uint64_t *ret)
{
        ssize_t n = read_fd(cg, cg->hot[which]);

        return n < 0 ? (int)n : cgroup_keyed_parse(cg->buf, (size_t)n, key, ret);
}

static void read_psi(struct cgroup *cg, struct cgroup_stats *st)
{
        double *out[3][2] = {
            {&st->psi_cpu_some_s, &st->psi_cpu_full_s},
            {&st->psi_mem_some_s, &st->psi_mem_full_s},
            {&st->psi_io_some_s, &st->psi_io_full_s},
        };

        for (int i = 0; i < 3; i++) {
                struct cgroup_pressure p;

                if (read_pressure_at(cg, cg->hot[HOT_PSI_CPU + i], &p) < 0)
                        continue;
                if (cg->psi_host) {
                        /* Host-wide totals count from boot: from our start. */
                        if (!cg->psi_base_ok[i])
                                continue;
                        p.some_us = p.some_us >= cg->psi_base[i].some_us
                                        ? p.some_us - cg->psi_base[i].some_us
                                        : 0;
                        if (p.full_us != UINT64_MAX && cg->psi_base[i].full_us != UINT64_MAX)
                                p.full_us = p.full_us >= cg->psi_base[i].full_us
                                                ? p.full_us - cg->psi_base[i].full_us
                                                : 0;
                        else
                                p.full_us = UINT64_MAX;
                }
                *out[i][0] = in_range(RANGE_CPU_SECONDS, (double)p.some_us / 1e6);
                if (p.full_us != UINT64_MAX)
                        *out[i][1] = in_range(RANGE_CPU_SECONDS, (double)p.full_us / 1e6);
        }
}

static int collect_proc(const struct pidstat *ps, void *userdata)
{
        struct cgroup *cg = userdata;
        struct tree_proc *tp;

        if (cg->nprocs == cg->procs_cap) {
                size_t ncap = cg->procs_cap ? 2 * cg->procs_cap : 512;
                struct tree_proc *np;

                if (ncap > PIDS_MAX)
                        return 0;
                np = realloc(cg->procs, ncap * sizeof(*np));
                if (!np)
                        return 0;
                cg->procs = np;
                cg->procs_cap = ncap;
        }
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

/* none mode: a process's RssAnon/RssFile (from statm); a process gone
 * meanwhile adds nothing. */
static bool tree_split(struct cgroup *cg, const struct tree_proc *tp, double *anon, double *file)
{
        struct pidmem pm;
        int r = procfs_pidmem(cg->procfs, tp->pid, &pm);

        if (r == -ENOENT || r == -ESRCH)
                return true;
        if (r < 0)
                return false;
        *anon += (double)pm.anon_pages * cg->page_size;
        *file += (double)pm.file_pages * cg->page_size;
        return true;
}

/* none mode: the live tree below tree_root from /proc, plus what its
 * reaped processes left in our RUSAGE_CHILDREN. */
static int read_tree(struct cgroup *cg, struct cgroup_stats *st)
{
        double utime = 0, stime = 0, rss = 0, rd = 0, wr = 0, anon = 0, file = 0;
        bool split = true;
        struct rusage ru;
        bool changed = true;
        size_t n = 0;
        int r;

        cg->nprocs = 0;
        r = procfs_foreach_pid(cg->procfs, collect_proc, cg);
        if (r < 0)
                return r;
        /* Mark descendants: a pass per level of the tree. */
        for (int pass = 0; changed && pass < 1024; pass++) {
                changed = false;
                for (size_t i = 0; i < cg->nprocs; i++) {
                        struct tree_proc *tp = &cg->procs[i];

                        if (tp->in)
                                continue;
                        if (tp->ppid == cg->tree_root) {
                                tp->in = changed = true;
                                continue;
                        }
                        for (size_t j = 0; j < cg->nprocs; j++)
                                if (cg->procs[j].in && cg->procs[j].pid == tp->ppid) {
                                        tp->in = changed = true;
                                        break;
                                }
                }
        }
        for (size_t i = 0; i < cg->nprocs; i++) {
                struct tree_proc *tp = &cg->procs[i];
                struct pidio io;

                if (!tp->in)
                        continue;
                utime += (double)tp->utime / cg->ticks_per_s;
                stime += (double)tp->stime / cg->ticks_per_s;
                rss += (double)tp->rss_pages * cg->page_size;
                if (procfs_pidio(cg->procfs, tp->pid, &io) >= 0) {
                        rd += (double)io.read_bytes;
                        wr += (double)io.write_bytes;
                }
                split = split && tree_split(cg, tp, &anon, &file);
                if (n < cg->pids_cap)
                        cg->pids[n++] = tp->pid;
        }
        cg->npids = n;
        if (getrusage(RUSAGE_CHILDREN, &ru) >= 0) {
                utime += tv_s(&ru.ru_utime) - tv_s(&cg->ru_base.ru_utime);
                stime += tv_s(&ru.ru_stime) - tv_s(&cg->ru_base.ru_stime);
                rd += (double)(ru.ru_inblock - cg->ru_base.ru_inblock) * 512.0;
                wr += (double)(ru.ru_oublock - cg->ru_base.ru_oublock) * 512.0;
        }
        st->cpu_user_s = utime;
        st->cpu_sys_s = stime;
        st->mem_bytes = rss;
        if (split) {
                st->mem_anon_bytes = anon;
                st->mem_file_bytes = file;
        }
        if (isnan(cg->mem_peak) || rss > cg->mem_peak)
                cg->mem_peak = rss;
        st->mem_peak_bytes = cg->mem_peak;
        st->io_read_bytes = rd;
        st->io_write_bytes = wr;
        st->pids = (double)n;
        if (isnan(cg->pids_peak) || (double)n > cg->pids_peak)
                cg->pids_peak = (double)n;
        st->pids_peak = cg->pids_peak;
        return 0;
}

/* The anon/file split from memory.stat: one read, two keys. */
static void read_memstat(struct cgroup *cg, struct cgroup_stats *st)
{
        bool v2 = cg->mode == CGROUP_MODE_V2;
        ssize_t n = read_fd(cg, cg->hot[HOT_MEM_STAT]);
        uint64_t a, f;

        if (n < 0)
                return;
        if (cgroup_keyed_parse(cg->buf, (size_t)n, v2 ? "anon" : "total_rss", &a) >= 0)
                st->mem_anon_bytes = in_range(RANGE_BYTES, (double)a);
        if (cgroup_keyed_parse(cg->buf, (size_t)n, v2 ? "file" : "total_cache", &f) >= 0)
                st->mem_file_bytes = in_range(RANGE_BYTES, (double)f);
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
                if (TRY(hot_u64(cg, HOT_CPU_USER, &a)))
                        st.cpu_user_s = in_range(RANGE_CPU_SECONDS, (double)a / 1e9);
                if (TRY(hot_u64(cg, HOT_CPU_SYS, &a)))
                        st.cpu_sys_s = in_range(RANGE_CPU_SECONDS, (double)a / 1e9);
        } else if (cg->mode == CGROUP_MODE_V1) {
                if (TRY(hot_keyed(cg, HOT_CPU, "user", &a)) &&
                    TRY(hot_keyed(cg, HOT_CPU, "system", &b))) {
                        st.cpu_user_s = in_range(RANGE_CPU_SECONDS, (double)a / cg->ticks_per_s);
                        st.cpu_sys_s = in_range(RANGE_CPU_SECONDS, (double)b / cg->ticks_per_s);
                }
        } else if (TRY(hot_keyed(cg, HOT_CPU, "user_usec", &a)) &&
                   TRY(hot_keyed(cg, HOT_CPU, "system_usec", &b))) {
                st.cpu_user_s = in_range(RANGE_CPU_SECONDS, (double)a / 1e6);
                st.cpu_sys_s = in_range(RANGE_CPU_SECONDS, (double)b / 1e6);
        }
        if (cg->hot[HOT_MEM] >= 0 && TRY(hot_u64(cg, HOT_MEM, &a)))
                st.mem_bytes = in_range(RANGE_BYTES, (double)a);
        if (cg->hot[HOT_MEM_PEAK] >= 0 && TRY(hot_u64(cg, HOT_MEM_PEAK, &a)))
                st.mem_peak_bytes = in_range(RANGE_BYTES, (double)a);
        if (cg->hot[HOT_MEM_EV] >= 0 && TRY(hot_keyed(cg, HOT_MEM_EV, "oom_kill", &a)))
                st.oom_kills = in_range(RANGE_EVENTS, (double)a);
        if (cg->hot[HOT_IO] >= 0) {
                ssize_t n = read_fd(cg, cg->hot[HOT_IO]);

                r = n < 0                        ? (int)n
                    : cg->mode == CGROUP_MODE_V2 ? cgroup_iostat_parse(cg->buf, (size_t)n, &a, &b)
                                                 : cgroup_blkio_parse(cg->buf, (size_t)n, &a, &b);
                if (TRY(r)) {
                        st.io_read_bytes = in_range(RANGE_BYTES, (double)a);
                        st.io_write_bytes = in_range(RANGE_BYTES, (double)b);
                }
        }
        if (cg->hot[HOT_PIDS] >= 0 && TRY(hot_u64(cg, HOT_PIDS, &a)))
                st.pids = in_range(RANGE_TASKS, (double)a);
        if (cg->hot[HOT_MEM_STAT] >= 0)
                read_memstat(cg, &st);
        if (cg->hot[HOT_PIDS_PEAK] >= 0 && TRY(hot_u64(cg, HOT_PIDS_PEAK, &a)))
                st.pids_peak = in_range(RANGE_TASKS, (double)a);
#undef TRY
        read_psi(cg, &st);
        *ret = st;
        return ok > 0 ? 0 : first;
}

int cgroup_pids(struct cgroup *cg, const long **ret_pids, size_t *ret_n)
{
        if (cg->mode != CGROUP_MODE_NONE) {
                ssize_t n = read_fd(cg, cg->hot[HOT_PROCS]);
                int r;

                if (n < 0)
                        return (int)n;
                r = pids_from_buf(cg, (size_t)n);
                if (r < 0)
                        return r;
        }
        *ret_pids = cg->pids;
        *ret_n = cg->npids;
        return 0;
}
