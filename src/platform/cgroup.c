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
#include "platform/sdscope.h"
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
            NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
            NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, .oom_victim_pid = -1,
        };
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

/* The last occurrence of needle (n bytes) in [p, end). */
static const char *mem_last(const char *p, const char *end, const char *needle)
{
        size_t n = strlen(needle);
        const char *found = NULL;

        while (p && (size_t)(end - p) >= n) {
                const char *q = memmem(p, (size_t)(end - p), needle, n);

                if (!q)
                        break;
                found = q;
                p = q + 1;
        }
        return found;
}

static bool take_pid(const char *p, const char *end, long *ret)
{
        uint64_t v;

        if (parse_u64(&p, end, &v) < 0 || p != end || v == 0 || v > INT_MAX)
                return false;
        *ret = (long)v;
        return true;
}

static void take_comm(const char *w, const char *we, char *comm, size_t cap)
{
        size_t n = (size_t)(we - w);

        if (cap == 0)
                return;
        if (n >= cap)
                n = cap - 1;
        for (size_t i = 0; i < n; i++)
                comm[i] = (unsigned char)w[i] < 0x20 || w[i] == 0x7f ? '?' : w[i];
        comm[n] = '\0';
}

/* "oom-kill:...,task_memcg=PATH,task=COMM,pid=N,uid=U" */
static bool oomkill_line(const char *p, const char *end, const char *memcg, long *pid, char *comm,
                         size_t cap)
{
        const char *mc = memmem(p, (size_t)(end - p), "task_memcg=", 11);
        const char *pidp = mem_last(p, end, ",pid="), *task;
        const char *pe;

        if (!mc || !pidp || pidp < mc)
                return false;
        task = mem_last(mc, pidp, ",task=");
        if (!task)
                return false;
        mc += 11;
        if (memcg) {
                size_t n = strlen(memcg);

                if ((size_t)(task - mc) < n || memcmp(mc, memcg, n) != 0 ||
                    ((size_t)(task - mc) > n && mc[n] != '/'))
                        return false;
        }
        pe = memchr(pidp + 5, ',', (size_t)(end - pidp - 5));
        if (!take_pid(pidp + 5, pe ? pe : end, pid))
                return false;
        take_comm(task + 6, pidp, comm, cap);
        return true;
}

/* "Killed process N (COMM) total-vm:..." */
static bool killed_line(const char *p, const char *end, long *pid, char *comm, size_t cap)
{
        const char *k = memmem(p, (size_t)(end - p), "Killed process ", 15), *sp, *open, *close;

        if (!k)
                return false;
        k += 15;
        sp = memchr(k, ' ', (size_t)(end - k));
        if (!sp || sp + 1 >= end || sp[1] != '(' || !take_pid(k, sp, pid))
                return false;
        open = sp + 2;
        close = memmem(open, (size_t)(end - open), ") total-vm:", 11);
        if (!close)
                close = mem_last(open, end, ")");
        if (!close)
                return false;
        take_comm(open, close, comm, cap);
        return true;
}

int cgroup_kmsg_victim_parse(const char *buf, size_t len, const char *memcg, long *ret_pid,
                             char *comm, size_t cap)
{
        const char *p = buf, *end;
        long matched = -1; /* the pid of the last oom-kill line in memcg */
        int found = 0;

        if (!buf || !ret_pid || (!comm && cap))
                return -EINVAL;
        end = buf + len;
        while (p < end) {
                const char *eol = line_end(p, end), *msg = memchr(p, ';', (size_t)(eol - p));
                char c[65];
                long pid;

                msg = msg ? msg + 1 : p;
                if (oomkill_line(msg, eol, memcg, &pid, c, sizeof(c))) {
                        matched = pid;
                } else if (killed_line(msg, eol, &pid, c, sizeof(c))) {
                        if (memcg && pid != matched) {
                                p = next_line(eol, end);
                                continue;
                        }
                } else {
                        p = next_line(eol, end);
                        continue;
                }
                *ret_pid = pid;
                take_comm(c, c + strlen(c), comm, cap);
                found = 1;
                p = next_line(eol, end);
        }
        return found;
}

/* ---- the cgroup ---- */

struct hier {
        bool used;
        char parent[2 * CG_PATH_MAX]; /* <root><mount><own>/buildtel */
        char name[128];               /* run-<id>-<pid> */
        int parent_fd, dir_fd;        /* -1 until made */
        int procs_w_fd;               /* for the child */
        char own[2 * CG_PATH_MAX];    /* <mount><own>: where leftovers go */
        char want[2 * CG_PATH_MAX];   /* the build's path as /proc/PID/cgroup shows it */
};

/* v2 controllers, memory first: nothing else is enabled where memory is
 * refused, so no cgroup turns "domain threaded" (cpu, pids are threaded
 * controllers) and a kill between two writes leaves memory on, never the
 * threaded ones alone. */
static const char *const v2_ctl[] = {"memory", "pids", "io", "cpu"};

/* What we did to our own v2 cgroup, to undo it. */
struct v2_state {
        int own_fd;            /* our own (the caller's) cgroup; -1: untouched */
        unsigned own_added;    /* bits of v2_ctl we enabled in its subtree_control */
        unsigned parent_added; /* ... in <own>/buildtel */
        bool leaf;             /* we moved into <own>/buildtel/self-<pid> */
        char leaf_name[64];
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
        struct v2_state v2;
        note_fn note;
        void *userdata;
        bool kill_leftovers;
        int kmsg_fd; /* /dev/kmsg from our start (root), -1 */
        long oom_pid;
        char oom_comm[65];
        bool setup_ok, test_unjoinable;
        char *root_path;
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

static int read_pidstat(struct cgroup *cg, long pid, struct pidstat *ret)
{
        char path[64];
        ssize_t n;

        if (snprintf(path, sizeof(path), "proc/%ld/stat", pid) >= (int)sizeof(path))
                return -EINVAL;
        n = read_at(cg, cg->root_fd, path);
        return n < 0 ? (int)n : pidstat_parse(cg->buf, (size_t)n, ret);
}

/* The kernel log from now on (root, or where dmesg is not restricted):
 * the OOM killer's report names its victim. */
static void open_kmsg(struct cgroup *cg)
{
        cg->kmsg_fd = openat(cg->root_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (cg->kmsg_fd >= 0 && lseek(cg->kmsg_fd, 0, SEEK_END) < 0)
                closep(&cg->kmsg_fd);
}

/* Read the kernel log records that came since the last call (each read()
 * is one record; EAGAIN: no more) and keep the last OOM victim in the
 * build's memory cgroup. */
static void read_kmsg(struct cgroup *cg)
{
        const char *memcg = cg->h[cg->h[CG_H_MEMORY].used ? CG_H_MEMORY : CG_H_V2].want;
        char rec[8192];

        if (cg->kmsg_fd < 0)
                return;
        for (int i = 0; i < 4096; i++) {
                ssize_t n = read(cg->kmsg_fd, rec, sizeof(rec));
                long pid;
                char comm[65];

                if (n < 0 && errno == EPIPE)
                        continue; /* overwritten records: go on from the next */
                if (n <= 0)
                        break;
                if (cgroup_kmsg_victim_parse(rec, (size_t)n, memcg, &pid, comm, sizeof(comm)) > 0) {
                        cg->oom_pid = pid;
                        memcpy(cg->oom_comm, comm, sizeof(comm));
                }
        }
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

#define TREE_DEPTH_MAX 16

/* SIGKILL every process in dirfd's cgroup and the cgroups below it. Returns
 * how many were found. */
static size_t kill_tree(struct cgroup *cg, int dirfd, int depth)
{
        ssize_t n = read_at(cg, dirfd, "cgroup.procs");
        size_t found = 0;
        DIR *d;
        struct dirent *de;

        if (n >= 0 && pids_from_buf(cg, (size_t)n) >= 0)
                for (size_t k = 0; k < cg->npids; k++)
                        if (cg->pids[k] != getpid()) {
                                (void)kill((pid_t)cg->pids[k], SIGKILL);
                                found++;
                        }
        if (depth >= TREE_DEPTH_MAX || !(d = opendir_at(dirfd, ".")))
                return found;
        while ((de = readdir(d))) {
                int sub;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0)
                        continue;
                found += kill_tree(cg, sub, depth + 1);
                close(sub);
        }
        closedir(d);
        return found;
}

/* Kill every process in dirfd's cgroup and below (SIGKILL) until none is
 * left, for about 2 s at most. Returns 0 or -EBUSY. */
static int empty_dir(struct cgroup *cg, int dirfd)
{
        struct timespec ts = {0, 10 * 1000 * 1000};

        for (int i = 0; i < 200; i++) {
                if (kill_tree(cg, dirfd, 0) == 0)
                        return 0;
                nanosleep(&ts, NULL);
        }
        return -EBUSY;
}

/* Remove the empty cgroups below dirfd, deepest first (a nested buildtel
 * killed, a systemd-run --scope inside the build). Returns 0, or -EBUSY
 * when some still hold processes. */
static int prune_below(int dirfd, int depth)
{
        DIR *d;
        struct dirent *de;
        int ret = 0;

        if (depth >= TREE_DEPTH_MAX)
                return -EBUSY;
        d = opendir_at(dirfd, ".");
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                int sub;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0)
                        continue;
                if (prune_below(sub, depth + 1) < 0)
                        ret = -EBUSY;
                close(sub);
                if (unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        ret = -EBUSY;
        }
        closedir(d);
        return ret;
}

/* The pid in a "run-ID-PID" or "self-PID" name, or 0. */
static long stale_pid(const char *name)
{
        const char *dash = strrchr(name, '-');
        uint64_t pid;

        if ((strncmp(name, "run-", 4) != 0 && strncmp(name, "self-", 5) != 0) || !dash ||
            parse_u64_str(dash + 1, &pid) < 0 || pid == 0 || pid > INT_MAX)
                return 0;
        return (long)pid;
}

/* Remove the cgroups of buildtels that are gone, and what is below them,
 * when they are empty. One that still holds processes is an orphaned build
 * running on (its buildtel was SIGKILLed): it is left alone, with a note. */
static void clean_stale(struct cgroup *cg, int parent_fd, bool say)
{
        DIR *d = opendir_at(parent_fd, ".");
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                long pid = de->d_type == DT_DIR ? stale_pid(de->d_name) : 0;
                int sub;

                if (pid == 0 || strcmp(de->d_name, cg->v2.leaf_name) == 0 ||
                    (pid != (long)getpid() && run_owner_alive(cg, parent_fd, de->d_name, pid)))
                        continue;
                sub = openat(parent_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub >= 0) {
                        (void)prune_below(sub, 0);
                        close(sub);
                }
                if (unlinkat(parent_fd, de->d_name, AT_REMOVEDIR) < 0 && errno == EBUSY && say &&
                    cg->note)
                        cg->note(cg->userdata,
                                 "the cgroup %s of a buildtel that is gone still holds processes "
                                 "(its build runs on): left as it is",
                                 de->d_name);
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
                clean_stale(cg, hh->parent_fd,
                            hh == &cg->h[cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY]);
                if (mkdirat(hh->parent_fd, hh->name, 0755) < 0) {
                        if (errno == ENOENT)
                                continue;
                        if (errno != EEXIST)
                                return -errno;
                }
                hh->dir_fd = openat(hh->parent_fd, hh->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (hh->dir_fd < 0)
                        return -errno;
                hh->procs_w_fd = openat(hh->dir_fd, "cgroup.procs",
                                        (cg->test_unjoinable ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
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

/* Bits of v2_ctl listed in dirfd's file (cgroup.controllers or
 * cgroup.subtree_control). */
static unsigned ctl_mask(struct cgroup *cg, int dirfd, const char *file)
{
        ssize_t n = read_at(cg, dirfd, file);
        const char *p = cg->buf, *end, *w;
        unsigned mask = 0;
        size_t wn;

        if (n < 0)
                return 0;
        end = cg->buf + n;
        while (p < end) {
                const char *eol = line_end(p, end);

                while (next_word(&p, eol, &w, &wn))
                        for (size_t k = 0; k < ARRAY_SIZE(v2_ctl); k++)
                                if (word_is(w, wn, v2_ctl[k]))
                                        mask |= 1u << k;
                p = next_line(eol, end);
        }
        return mask;
}

static void disable_ctl(int dirfd, unsigned added)
{
        for (size_t k = ARRAY_SIZE(v2_ctl); k-- > 0;) {
                char w[16];

                if (!(added & (1u << k)) ||
                    snprintf(w, sizeof(w), "-%s", v2_ctl[k]) >= (int)sizeof(w))
                        continue;
                (void)write_at(dirfd, "cgroup.subtree_control", w);
        }
}

/* Enable the offered controllers in dirfd's subtree_control, memory first:
 * when memory is refused nothing else is written. *ret_added gets what we
 * enabled (what was on already is not ours to undo). Returns 0 or the
 * memory write's -errno. */
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
                r = write_at(dirfd, "cgroup.subtree_control", w);
                if (r < 0 && k == 0)
                        return r;
                if (r >= 0)
                        added |= 1u << k;
        }
        *ret_added = added;
        return (have | added) & 1u ? 0 : -EOPNOTSUPP;
}

static int write_pid(int dirfd, long pid)
{
        char b[24];

        if (snprintf(b, sizeof(b), "%ld", pid) >= (int)sizeof(b))
                return -EINVAL;
        return write_at(dirfd, "cgroup.procs", b);
}

/* Are we in the v2 cgroup rel (as /proc/self/cgroup shows it)? */
static bool self_in(struct cgroup *cg, const char *rel)
{
        struct cgroup_self *self = calloc(1, sizeof(*self));
        ssize_t n = read_at(cg, cg->root_fd, "proc/self/cgroup");
        bool in = self && n >= 0 && cgroup_self_parse(cg->buf, (size_t)n, self) >= 0 &&
                  strcmp(self->path[CG_H_V2], rel) == 0;

        free(self);
        return in;
}

/* Alone in our own cgroup (ofd, rel): move into <own>/buildtel/self-<pid>,
 * then enable the controllers there. On failure everything is undone. */
static int move_to_leaf(struct cgroup *cg, const struct cgroup_config *cfg, int ofd,
                        const char *rel)
{
        struct v2_state *v = &cg->v2;
        char leafrel[2 * CG_PATH_MAX];
        _cleanup_close_ int pfd = -1, lfd = -1;
        int r;

        if (snprintf(v->leaf_name, sizeof(v->leaf_name), "self-%ld", (long)getpid()) >=
                (int)sizeof(v->leaf_name) ||
            join(leafrel, sizeof(leafrel), strcmp(rel, "/") == 0 ? "" : rel, "/buildtel/",
                 v->leaf_name) < 0)
                return -ENAMETOOLONG;
        if (mkdirat(ofd, "buildtel", 0755) < 0 && errno != EEXIST)
                return -errno;
        pfd = openat(ofd, "buildtel", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
                return -errno;
        if (mkdirat(pfd, v->leaf_name, 0755) < 0 && errno != EEXIST)
                return -errno;
        lfd = openat(pfd, v->leaf_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = lfd < 0 ? -errno : write_pid(lfd, (long)getpid());
        if (r >= 0 && !self_in(cg, leafrel))
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
                        (void)write_pid(ofd, (long)getpid());
                v->leaf = false;
                (void)unlinkat(pfd, v->leaf_name, AT_REMOVEDIR);
                (void)unlinkat(ofd, "buildtel", AT_REMOVEDIR);
        }
        return r;
}

/* Our own cgroup as it is now: its fd, the processes in it, whether only
 * we are and we may write it. */
struct v2_own {
        int fd;
        size_t nprocs;
        bool only_us, writable, offered;
};

static void v2_look(struct cgroup *cg, int fd, struct v2_own *o)
{
        ssize_t n = read_at(cg, fd, "cgroup.procs");

        o->fd = fd;
        o->nprocs = 0;
        o->only_us = false;
        if (n >= 0 && pids_from_buf(cg, (size_t)n) >= 0) {
                o->nprocs = cg->npids;
                o->only_us = cg->npids == 1 && cg->pids[0] == (long)getpid();
        }
        o->writable = faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
                      faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0 &&
                      faccessat(fd, ".", W_OK, AT_EACCESS) == 0;
        o->offered = ctl_mask(cg, fd, "cgroup.controllers") & 1u;
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

/* v2: get a cgroup we may enable memory in, per cgroup_v2_plan. self is
 * updated when we moved (into a systemd scope). */
static int v2_prepare(struct cgroup *cg, const struct cgroup_config *cfg,
                      const struct cgroup_mounts *m, struct cgroup_self *self)
{
        for (int attempt = 0; attempt < 2; attempt++) {
                const char *rel = rel_to_mount(self->path[CG_H_V2], m->root[CG_H_V2]);
                char own[2 * CG_PATH_MAX], unit[160], sdwhy[256];
                struct v2_own o;
                int fd, r;

                if (join(own, sizeof(own), m->mnt[CG_H_V2], strcmp(rel, "/") == 0 ? "" : rel, "") <
                    0)
                        return -ENAMETOOLONG;
                fd = openat(cg->root_fd, own + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                v2_look(cg, fd, &o);
                switch (cgroup_v2_plan(strcmp(rel, "/") == 0, o.offered, o.nprocs, o.only_us,
                                       o.writable, cfg->use_systemd && attempt == 0)) {
                case CG_PLAN_PLAIN:
                        close(fd);
                        note(cfg,
                             "cgroup2 offers no memory controller in %s: memory, io and pids "
                             "columns stay empty%s",
                             rel,
                             m->mnt[CG_H_MEMORY][0] ? " (--cgroup=hybrid reads them from v1)" : "");
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
                        if (r >= 0) {
                                ssize_t n = read_at(cg, cg->root_fd, "proc/self/cgroup");

                                r = n < 0 ? (int)n : cgroup_self_parse(cg->buf, (size_t)n, self);
                        }
                        if (r < 0) {
                                why_scope(cfg, rel, o.nprocs, r, sdwhy);
                                return -EBUSY;
                        }
                        continue;
                case CG_PLAN_FAIL:
                        close(fd);
                        why(cfg,
                            "%s holds %zu other process(es)%s; run buildtel alone in a "
                            "delegated cgroup: systemd-run --scope -p Delegate=yes buildtel "
                            "run ...",
                            rel, o.nprocs > 0 ? o.nprocs - 1 : 0,
                            o.writable ? "" : " and is not ours to write");
                        return -EBUSY;
                }
        }
        why(cfg, "the systemd scope did not leave buildtel alone in a cgroup it may write");
        return -EBUSY;
}

/* Undo what v2_prepare and the parent's enabling did, after the run's own
 * cgroup is gone: controllers off, back into our own cgroup, the leaf and
 * buildtel/ removed. */
static void v2_restore(struct cgroup *cg)
{
        struct v2_state *v = &cg->v2;
        struct hier *hh = &cg->h[CG_H_V2];
        _cleanup_close_ int lfd = -1;

        if (v->own_fd < 0)
                return;
        if (hh->parent_fd >= 0 && v->parent_added && !v->leaf)
                ; /* the root's buildtel/: shared with other runs, left on */
        else if (hh->parent_fd >= 0)
                disable_ctl(hh->parent_fd, v->parent_added);
        if (v->leaf) {
                ssize_t n;

                disable_ctl(v->own_fd, v->own_added);
                if (hh->parent_fd >= 0)
                        lfd =
                            openat(hh->parent_fd, v->leaf_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* Us and the daemons moved out of the build. */
                n = lfd >= 0 ? read_at(cg, lfd, "cgroup.procs") : -EBADF;
                if (n >= 0 && pids_from_buf(cg, (size_t)n) >= 0)
                        for (size_t k = 0; k < cg->npids; k++)
                                (void)write_pid(v->own_fd, cg->pids[k]);
                (void)write_pid(v->own_fd, (long)getpid());
                if (hh->parent_fd >= 0)
                        (void)unlinkat(hh->parent_fd, v->leaf_name, AT_REMOVEDIR);
                v->leaf = false;
        }
        v->own_added = v->parent_added = 0;
        closep(&v->own_fd);
        v->own_fd = -1;
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
                r = snprintf(hh->name, sizeof(hh->name), "run-%s-%ld", cfg->run_id,
                             (long)getpid()) >= (int)sizeof(hh->name)
                        ? -ENAMETOOLONG
                        : 0;
                if (r >= 0)
                        r = join(hh->own, sizeof(hh->own), m->mnt[i],
                                 strcmp(own, "/") == 0 ? "" : own, "");
                if (r >= 0)
                        r = join(hh->want, sizeof(hh->want),
                                 strcmp(self->path[i], "/") == 0 ? "" : self->path[i], "/buildtel/",
                                 hh->name);
                if (r >= 0)
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
                        why(cfg, "no cgroup hierarchy is mounted");
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
        if (cg->mode == CGROUP_MODE_V2 && m->mnt[CG_H_V2][0] && self->path[CG_H_V2][0]) {
                r = v2_prepare(cg, cfg, m, self);
                if (r < 0)
                        goto out;
        }
        r = make_all(cg, cfg, m, self);
        if (r >= 0 && cg->mode == CGROUP_MODE_V2 && cg->v2.own_fd >= 0) {
                /* The build's cgroup gets memory (first) and the rest. */
                r = enable_ctl(cg, cg->h[CG_H_V2].parent_fd, &cg->v2.parent_added);
                if (r < 0)
                        why(cfg, "enabling memory in %s: %s", cg->h[CG_H_V2].parent, strerror(-r));
        }
out:
        free(m);
        free(self);
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
}

/* --memory-max, --memory-high: every write checked. */
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
                r = write_at(hh->dir_fd, file[k], lim);
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
                note(cfg, "cgroup v1 has no memory.high: --memory-high is set as "
                          "memory.soft_limit_in_bytes (reclaim under pressure, no "
                          "throttling)");
        return 0;
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
        cg->v2.own_fd = cg->kmsg_fd = -1;
        cg->oom_pid = -1;
        cg->note = cfg->note;
        cg->userdata = cfg->userdata;
        cg->kill_leftovers = cfg->kill_leftovers;
        cg->test_unjoinable = cfg->test_unjoinable;
        cg->mem_peak = cg->pids_peak = NAN;
        cg->cap = BUF_INITIAL;
        cg->buf = malloc(cg->cap);
        cg->root_fd = open(cfg->root ? cfg->root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = !cg->buf ? -ENOMEM : cg->root_fd < 0 ? -errno : 0;
        if (r >= 0 && !(cg->root_path = strdup(cfg->root ? cfg->root : "/")))
                r = -ENOMEM;
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
                        r = set_limits(cg, cfg);
                }
                if (r >= 0)
                        r = check_limits(cg, cfg);
                if (r >= 0)
                        open_kmsg(cg);
                cg->setup_ok = r >= 0;
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
                (void)prune_below(hh->dir_fd, 0);
                closep(&hh->dir_fd);
                hh->dir_fd = -1;
                (void)unlinkat(hh->parent_fd, hh->name, AT_REMOVEDIR);
        }
        v2_restore(cg);
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
        int ret = 0;

        if (!cg || cg->mode == CGROUP_MODE_NONE)
                return 0;
        if (cg->h[CG_H_V2].used && cg->h[CG_H_V2].dir_fd >= 0)
                (void)write_at(cg->h[CG_H_V2].dir_fd, "cgroup.kill", "1");
        for (int i = 0; i < _CG_H_MAX; i++) {
                int r;

                if (!cg->h[i].used || cg->h[i].dir_fd < 0)
                        continue;
                r = empty_dir(cg, cg->h[i].dir_fd);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

/* Where a daemon moved out of the build goes in hierarchy i: our own
 * cgroup, or in a v2 leaf set-up our leaf (v2_restore moves it on). */
static int leftover_dest(struct cgroup *cg, int i)
{
        if (i == CG_H_V2 && cg->v2.leaf && cg->h[i].parent_fd >= 0)
                return openat(cg->h[i].parent_fd, cg->v2.leaf_name,
                              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return openat(cg->root_fd, cg->h[i].own + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void move_out(struct cgroup *cg, long pid)
{
        for (int i = 0; i < _CG_H_MAX; i++) {
                int fd;

                if (!cg->h[i].used || cg->h[i].dir_fd < 0)
                        continue;
                fd = leftover_dest(cg, i);
                if (fd >= 0) {
                        (void)write_pid(fd, pid);
                        close(fd);
                }
        }
}

/* Processes of the build in a session of their own (a daemon that
 * detached: an sccache server, a Gradle daemon) move out to our cgroup and
 * keep running, with one note naming them. */
static void keep_daemons(struct cgroup *cg)
{
        int lh = cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY;
        long sid = (long)getsid(0), found[16];
        char names[512];
        size_t nfound = 0, more = 0, o = 0;
        ssize_t n;

        if (cg->kill_leftovers || cg->h[lh].dir_fd < 0)
                return;
        n = read_at(cg, cg->h[lh].dir_fd, "cgroup.procs");
        if (n < 0 || pids_from_buf(cg, (size_t)n) < 0)
                return;
        for (size_t k = 0; k < cg->npids; k++) {
                if (nfound < ARRAY_SIZE(found))
                        found[nfound++] = cg->pids[k];
        }
        names[0] = '\0';
        for (size_t k = 0; k < nfound; k++) {
                struct pidstat ps;
                int w;

                if (read_pidstat(cg, found[k], &ps) < 0 || ps.session == sid || ps.state == 'Z' ||
                    ps.pid == (long)getpid())
                        continue;
                move_out(cg, found[k]);
                if (o >= sizeof(names) - 80) {
                        more++;
                        continue;
                }
                w = snprintf(names + o, sizeof(names) - o, "%s%s (pid %ld)", o ? ", " : "", ps.comm,
                             ps.pid);
                if (w > 0 && (size_t)w < sizeof(names) - o)
                        o += (size_t)w;
        }
        if (o && cg->note)
                cg->note(cg->userdata,
                         "left running: %s%s (detached from the build; --kill-leftovers ends them)",
                         names, more ? ", ..." : "");
}

void cgroup_free(struct cgroup *cg)
{
        if (!cg)
                return;
        if (cg->root_fd >= 0 && cg->buf) {
                if (cg->setup_ok)
                        keep_daemons(cg);
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
        closep(&cg->v2.own_fd);
        closep(&cg->kmsg_fd);
        closep(&cg->root_fd);
        procfs_free(cg->procfs);
        free(cg->root_path);
        free(cg->procs);
        free(cg->pids);
        free(cg->buf);
        free(cg);
}

const char *cgroup_path(const struct cgroup *cg)
{
        int h = cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY;

        return cg->h[h].want;
}

/* Is pid in the build's cgroup in every hierarchy: 1 yes, 0 no, -errno. */
static int in_build(struct cgroup *cg, pid_t pid)
{
        struct cgroup_self *s;
        char path[64];
        ssize_t n;
        int r = 1;

        if (snprintf(path, sizeof(path), "proc/%ld/cgroup", (long)pid) >= (int)sizeof(path))
                return -EINVAL;
        n = read_at(cg, cg->root_fd, path);
        if (n < 0)
                return (int)n;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (cgroup_self_parse(cg->buf, (size_t)n, s) < 0)
                r = -EINVAL;
        for (int i = 0; r == 1 && i < _CG_H_MAX; i++)
                if (cg->h[i].used && cg->h[i].dir_fd >= 0 && strcmp(s->path[i], cg->h[i].want) != 0)
                        r = 0;
        free(s);
        return r;
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
                k = read_pidstat(cg, (long)pid, &ps);
                if (k == -ENOENT || k == -ESRCH || (k >= 0 && (ps.state == 'Z' || ps.state == 'X')))
                        return 0;
                nanosleep(&ts, NULL);
        }
        return -EXDEV;
}

int cgroup_fallback_none(struct cgroup *cg, long tree_root)
{
        struct cgroup_config cfg = {.tree_root = tree_root};
        int r;

        if (cg->mode == CGROUP_MODE_NONE)
                return 0;
        cg->setup_ok = false; /* undo what setup enabled */
        remove_dirs(cg);
        for (int i = 0; i < _CG_H_MAX; i++) {
                closep(&cg->h[i].procs_w_fd);
                cg->h[i].procs_w_fd = -1;
                cg->h[i].used = false;
        }
        for (int i = 0; i < _HOT_MAX; i++) {
                closep(&cg->hot[i]);
                cg->hot[i] = -1;
        }
        cg->mode = CGROUP_MODE_NONE;
        cg->mem_peak = cg->pids_peak = NAN;
        cfg.root = cg->root_path;
        r = setup_none(cg, &cfg);
        if (r < 0)
                return r;
        setup_host_psi(cg);
        return 0;
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
        if (cg->hot[HOT_MEM_EV] >= 0 && TRY(hot_keyed(cg, HOT_MEM_EV, "oom_kill", &a))) {
                st.oom_kills = in_range(RANGE_EVENTS, (double)a);
                if (a > 0)
                        read_kmsg(cg);
        }
        st.oom_victim_pid = cg->oom_pid;
        memcpy(st.oom_victim_comm, cg->oom_comm, sizeof(st.oom_victim_comm));
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
