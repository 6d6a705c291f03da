/* SPDX-License-Identifier: MIT */
#include "platform/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ranges.h"
#include "util/macro.h"
#include "util/util.h"

/* /proc/stat grows with the CPU count and the interrupt count; a machine
 * with thousands of both stays far below this. */
#define HOT_BUF_INITIAL 4096
#define HOT_BUF_MAX (16u * 1024 * 1024)

/* /proc/PID/stat is 52 numbers and a comm of at most 64 bytes; we need only
 * the first 24 fields, so a cut-off tail does no harm. */
#define PIDSTAT_BUF 1024

/* The files read every tick, kept open for pread(). */
enum { HOT_STAT, HOT_MEMINFO, HOT_LOADAVG, HOT_ZONEINFO, _HOT_MAX };
static const char *const hot_names[_HOT_MAX] = {"stat", "meminfo", "loadavg", "zoneinfo"};

struct procfs {
        int proc_fd;
        int hot[_HOT_MAX]; /* -1 until opened */
        DIR *dir;          /* proc/, rewound for every walk */
        char *buf;         /* for the hot files; grows, never shrinks */
        size_t cap;
};

/* ---- parsers ---- */

int cpustat_parse(const char *buf, size_t len, struct cpustat *ret)
{
        const char *p = buf, *end = buf + len;

        for (const char *eol; p < end; p = next_line(eol, end)) {
                struct cpustat c = {0};
                uint64_t *const col[] = {&c.user, &c.nice,    &c.system, &c.idle,  &c.iowait,
                                         &c.irq,  &c.softirq, &c.steal,  &c.guest, &c.guest_nice};
                size_t n = 0;

                eol = line_end(p, end);
                /* The aggregate line is "cpu" then blanks; "cpu0" is not it. */
                if (eol - p < 4 || memcmp(p, "cpu", 3) != 0 || (p[3] != ' ' && p[3] != '\t'))
                        continue;
                p += 3;
                for (;;) {
                        uint64_t x;
                        int r;

                        skip_spaces(&p, eol);
                        if (p >= eol)
                                break;
                        r = parse_u64(&p, eol, &x);
                        if (r < 0)
                                return r;
                        if (!at_field_end(p, eol))
                                return -EINVAL;
                        /* Columns a future kernel appends are ignored. */
                        if (n < ARRAY_SIZE(col))
                                *col[n] = x;
                        n++;
                }
                /* Kernels before 2.6 stop after idle; later columns are 0. */
                if (n < 4)
                        return -EINVAL;
                *ret = c;
                return 0;
        }
        return -EINVAL;
}

uint64_t cpustat_total(const struct cpustat *c)
{
        const uint64_t f[] = {c->nice, c->system, c->idle, c->iowait, c->irq, c->softirq, c->steal};
        uint64_t t = c->user;

        for (size_t i = 0; i < ARRAY_SIZE(f); i++)
                t = add_sat(t, f[i]);
        return t;
}

uint64_t cpustat_busy(const struct cpustat *c)
{
        uint64_t t = cpustat_total(c), idle = add_sat(c->idle, c->iowait);

        return t > idle ? t - idle : 0;
}

enum {
        MI_TOTAL,
        MI_FREE,
        MI_AVAIL,
        MI_BUFFERS,
        MI_CACHED,
        MI_SWAP_TOTAL,
        MI_SWAP_FREE,
        _MI_MAX,
};

/* "Key: N" lines (meminfo, PID/io): each of keys[0..n)'s N into v[k] and
 * bit k into *ret_seen, in kB when kib; other lines are ignored. Read
 * every tick: it stops once every key is seen (meminfo's SwapFree comes a
 * third of the way down). 0, -EINVAL, or -ERANGE. */
static int keyed_lines(const char *buf, size_t len, const char *const *keys, size_t n, bool kib,
                       uint64_t *v, unsigned *ret_seen)
{
        const char *p = buf, *end = buf + len;
        unsigned seen = 0;

        for (const char *eol; p < end && seen != (1u << n) - 1; p = next_line(eol, end)) {
                eol = line_end(p, end);
                for (size_t k = 0; k < n; k++) {
                        int r;

                        if (!skip_prefix(&p, eol, keys[k]))
                                continue;
                        skip_spaces(&p, eol);
                        r = parse_u64(&p, eol, &v[k]);
                        if (r < 0)
                                return r;
                        if (!at_field_end(p, eol))
                                return -EINVAL;
                        if (kib && !range_ok_u64(RANGE_KIB, v[k]))
                                return -ERANGE;
                        seen |= 1u << k;
                        break;
                }
        }
        *ret_seen = seen;
        return 0;
}

int meminfo_parse(const char *buf, size_t len, struct meminfo *ret)
{
        static const char *const keys[_MI_MAX] = {
            [MI_TOTAL] = "MemTotal:",     [MI_FREE] = "MemFree:",  [MI_AVAIL] = "MemAvailable:",
            [MI_BUFFERS] = "Buffers:",    [MI_CACHED] = "Cached:", [MI_SWAP_TOTAL] = "SwapTotal:",
            [MI_SWAP_FREE] = "SwapFree:",
        };
        uint64_t v[_MI_MAX] = {0}, avail;
        unsigned seen;
        int r = keyed_lines(buf, len, keys, _MI_MAX, true, v, &seen);

        if (r < 0)
                return r;
        if (~seen & (1u << MI_TOTAL | 1u << MI_FREE | 1u << MI_SWAP_TOTAL | 1u << MI_SWAP_FREE))
                return -EINVAL;
        /* Kernels before 3.14 lack MemAvailable; free + buffers + cache is
         * what free(1) used to show. */
        avail = seen & (1u << MI_AVAIL) ? v[MI_AVAIL]
                                        : add_sat(add_sat(v[MI_FREE], v[MI_BUFFERS]), v[MI_CACHED]);
        *ret = (struct meminfo){
            .total_kb = v[MI_TOTAL],
            .free_kb = v[MI_FREE],
            .available_kb = avail,
            .swap_total_kb = v[MI_SWAP_TOTAL],
            .swap_free_kb = v[MI_SWAP_FREE],
        };
        return 0;
}

static int parse_load(const char **p, const char *end, double *ret)
{
        double d;
        int r;

        skip_spaces(p, end);
        if (*p < end && **p == '-')
                return -EINVAL;
        r = parse_double(p, end, &d);
        if (r < 0)
                return r;
        if (!at_field_end(*p, end))
                return -EINVAL;
        if (!range_ok(RANGE_LOAD, d))
                return -ERANGE;
        *ret = d;
        return 0;
}

int zoneinfo_pcp_parse(const char *buf, size_t len, uint64_t *ret_pages)
{
        const char *p = buf, *end = buf + len;
        uint64_t total = 0;
        bool seen = false;

        /* Each "count:" line is one CPU's pageset of one zone. Read every
         * tick: memchr() jumps from colon to colon (one a line). */
        while (p < end) {
                const char *c = memchr(p, ':', (size_t)(end - p)), *ls, *eol, *q;
                uint64_t v;

                if (!c)
                        break;
                p = c + 1;
                if (c - buf < 5 || memcmp(c - 5, "count", 5) != 0)
                        continue;
                for (ls = c - 5; ls > buf && (ls[-1] == ' ' || ls[-1] == '\t'); ls--)
                        ;
                if (ls > buf && ls[-1] != '\n')
                        continue; /* not at the start of its line */
                eol = line_end(p, end);
                q = p;
                skip_spaces(&q, eol);
                if (parse_u64(&q, eol, &v) < 0)
                        return -EINVAL;
                /* pages, at least 1 KiB each */
                if (!range_ok_u64(RANGE_KIB, v) || total > UINT64_MAX - v)
                        return -ERANGE;
                total += v;
                seen = true;
        }
        if (!seen)
                return -EINVAL;
        *ret_pages = total;
        return 0;
}

int loadavg_parse(const char *buf, size_t len, struct loadavg *ret)
{
        const char *p = buf, *end;
        double l[3];
        uint64_t running, total;
        int r;

        end = line_end(buf, buf + len);
        for (int k = 0; k < 3; k++) {
                r = parse_load(&p, end, &l[k]);
                if (r < 0)
                        return r;
        }
        skip_spaces(&p, end);
        r = parse_u64(&p, end, &running);
        if (r < 0)
                return r;
        if (!skip_prefix(&p, end, "/"))
                return -EINVAL;
        r = parse_u64(&p, end, &total);
        if (r < 0)
                return r;
        /* The last pid that follows is of no use to us. */
        if (!at_field_end(p, end))
                return -EINVAL;
        if (!range_ok_u64(RANGE_TASKS, running) || !range_ok_u64(RANGE_TASKS, total))
                return -ERANGE;
        *ret = (struct loadavg){
            .load1 = l[0],
            .load5 = l[1],
            .load15 = l[2],
            .running = running,
            .total = total,
        };
        return 0;
}

/* The next field of a stat line, past its blanks (at least one): into *u
 * when u is given, else signed into *i. */
static int next_num(const char **p, const char *end, uint64_t *u, int64_t *i)
{
        int r;

        if (*p >= end || (**p != ' ' && **p != '\t'))
                return -EINVAL;
        skip_spaces(p, end);
        r = u ? parse_u64(p, end, u) : parse_i64(p, end, i);
        return r < 0 ? r : at_field_end(*p, end) ? 0 : -EINVAL;
}

int pidstat_parse(const char *buf, size_t len, struct pidstat *ret)
{
        const char *p = buf, *end = buf + len, *open, *close;
        struct pidstat ps = {0};
        /* Fields 4..24 we keep, by number. */
        uint64_t *const u64_field[25] = {
            [14] = &ps.utime,     [15] = &ps.stime, [20] = &ps.num_threads,
            [22] = &ps.starttime, [23] = &ps.vsize, [24] = &ps.rss_pages};
        long *const id_field[7] = {[4] = &ps.ppid, [5] = &ps.pgrp, [6] = &ps.session};
        uint64_t u, pid;
        int64_t v = 0;
        size_t clen;
        int r;

        r = parse_u64(&p, end, &pid);
        if (r < 0)
                return r;
        if (pid == 0 || pid > INT_MAX)
                return -ERANGE;
        if (!skip_prefix(&p, end, " ("))
                return -EINVAL;
        open = p;
        /* comm may itself hold ") " (a process can name itself anything),
         * but the numeric fields never hold ')': the last one ends comm. */
        close = memrchr(open, ')', (size_t)(end - open));
        if (!close)
                return -EINVAL;
        clen = MIN((size_t)(close - open), sizeof(ps.comm) - 1);
        memcpy(ps.comm, open, clen);
        ps.comm[clen] = '\0';
        ps.pid = (long)pid;

        p = close + 1;
        if (!skip_prefix(&p, end, " ") || p >= end || *p == ' ' || *p == '\n')
                return -EINVAL;
        ps.state = *p++; /* 3 */
        if (!at_field_end(p, end))
                return -EINVAL;

        for (int field = 4; field <= 24; field++) {
                /* The ones we keep are named; flags and fault counts (9-13)
                 * may not be negative, tty_nr, tpgid, priority, nice... may. */
                r = next_num(&p, end, field >= 9 && field <= 13 ? &u : u64_field[field], &v);
                if (r < 0)
                        return r;
                if (field <= 6 && (v < 0 || v > INT_MAX))
                        return -ERANGE;
                if (field <= 6)
                        *id_field[field] = (long)v;
                else if (field == 16 || field == 17)
                        *(field == 16 ? &ps.cutime : &ps.cstime) = v > 0 ? (uint64_t)v : 0;
        }
        *ret = ps;
        return 0;
}

int pidio_parse(const char *buf, size_t len, struct pidio *ret)
{
        static const char *const keys[2] = {"read_bytes:", "write_bytes:"};
        uint64_t v[2];
        unsigned seen;
        int r = keyed_lines(buf, len, keys, 2, false, v, &seen);

        if (r < 0)
                return r;
        if (seen != 3)
                return -EINVAL;
        *ret = (struct pidio){.read_bytes = v[0], .write_bytes = v[1]};
        return 0;
}

/* ---- reading ---- */

int procfs_new(const char *root, struct procfs **ret)
{
        _cleanup_close_ int root_fd = -1, proc_fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct procfs *p;

        if (!root || !ret)
                return -EINVAL;
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return -errno;

        buf = malloc(HOT_BUF_INITIAL);
        p = buf ? calloc(1, sizeof(*p)) : NULL;
        if (!p)
                return -ENOMEM;
        p->buf = TAKE_PTR(buf);
        p->cap = HOT_BUF_INITIAL;
        p->proc_fd = TAKE_FD(proc_fd);
        for (int i = 0; i < _HOT_MAX; i++)
                p->hot[i] = openat(p->proc_fd, hot_names[i], O_RDONLY | O_CLOEXEC);
        *ret = p;
        return 0;
}

void procfs_free(struct procfs *p)
{
        if (!p)
                return;
        if (p->dir)
                closedir(p->dir);
        for (int i = 0; i < _HOT_MAX; i++)
                closep(&p->hot[i]);
        close(p->proc_fd);
        free(p->buf);
        free(p);
}

/* pread a kept-open file whole into p->buf. */
static ssize_t read_hot(struct procfs *p, int which)
{
        int *fd = &p->hot[which];

        if (*fd < 0) {
                *fd = openat(p->proc_fd, hot_names[which], O_RDONLY | O_CLOEXEC);
                if (*fd < 0)
                        return -errno;
        }
        return pread_whole(*fd, &p->buf, &p->cap, HOT_BUF_MAX);
}

int procfs_cpustat(struct procfs *p, struct cpustat *ret)
{
        ssize_t n = read_hot(p, HOT_STAT);

        return n < 0 ? (int)n : cpustat_parse(p->buf, (size_t)n, ret);
}

int procfs_meminfo(struct procfs *p, struct meminfo *ret)
{
        ssize_t n = read_hot(p, HOT_MEMINFO);

        return n < 0 ? (int)n : meminfo_parse(p->buf, (size_t)n, ret);
}

int procfs_loadavg(struct procfs *p, struct loadavg *ret)
{
        ssize_t n = read_hot(p, HOT_LOADAVG);

        return n < 0 ? (int)n : loadavg_parse(p->buf, (size_t)n, ret);
}

int procfs_pcp_free_kb(struct procfs *p, uint64_t *ret_kb)
{
        ssize_t n = read_hot(p, HOT_ZONEINFO);
        long page = sysconf(_SC_PAGESIZE);
        uint64_t pages;
        int r = n < 0 ? (int)n : zoneinfo_pcp_parse(p->buf, (size_t)n, &pages);

        if (r < 0)
                return r;
        *ret_kb = pages * ((uint64_t)(page > 0 ? page : 4096) / 1024);
        return 0;
}

/* "PID/name" into buf[64]; pid is positive and fits an int. */
static int pid_path(char buf[static 64], long pid, const char *name)
{
        int n;

        if (pid <= 0 || pid > INT_MAX)
                return -EINVAL;
        n = snprintf(buf, 64, "%ld/%s", pid, name);
        if (n < 0 || n >= 64)
                return -ENAMETOOLONG;
        return 0;
}

/* Open and read proc/PID/name into buf, in one read: a /proc file gives
 * all it has (up to cap) at once, and a second read for its end cost a
 * syscall an exec in acct. live: an empty file is a process that died
 * between open and read, -ESRCH. */
static ssize_t read_pid_file(struct procfs *p, long pid, const char *name, char *buf, size_t cap,
                             bool live)
{
        _cleanup_close_ int fd = -1;
        char path[64];
        ssize_t n = pid_path(path, pid, name);

        if (n < 0)
                return n;
        fd = openat(p->proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        do
                n = read(fd, buf, cap);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return live && n == 0 ? -ESRCH : n;
}

int procfs_pidstat(struct procfs *p, long pid, struct pidstat *ret)
{
        char buf[PIDSTAT_BUF];
        ssize_t n = read_pid_file(p, pid, "stat", buf, sizeof(buf), true);

        return n < 0 ? (int)n : pidstat_parse(buf, (size_t)n, ret);
}

int procfs_pidio(struct procfs *p, long pid, struct pidio *ret)
{
        char buf[512];
        ssize_t n = read_pid_file(p, pid, "io", buf, sizeof(buf), true);

        return n < 0 ? (int)n : pidio_parse(buf, (size_t)n, ret);
}

int procfs_foreach_pid(struct procfs *p, int (*cb)(const struct pidstat *ps, void *userdata),
                       void *userdata)
{
        struct dirent *de;
        int count = 0;

        if (!p->dir) {
                p->dir = opendir_at(p->proc_fd, ".");
                if (!p->dir)
                        return -errno;
        } else {
                /* Seeking /proc back to 0 makes the next getdents list the
                 * pid table afresh, so new processes are seen. */
                rewinddir(p->dir);
        }

        /* errno 0 before each readdir: its NULL is the end or an error */
        for (errno = 0; (de = readdir(p->dir)); errno = 0) {
                struct pidstat ps;
                uint64_t pid;
                int r;

                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (!is_digit(de->d_name[0]) || parse_u64_str(de->d_name, &pid) < 0 || pid == 0 ||
                    pid > INT_MAX)
                        continue;
                r = procfs_pidstat(p, (long)pid, &ps);
                /* Gone (ENOENT, ESRCH), hidden (hidepid: EACCES) or a stat
                 * we cannot make sense of: none of these may stop a tick. */
                if (r < 0)
                        continue;
                count++;
                if (cb) {
                        r = cb(&ps, userdata);
                        if (r < 0)
                                return r;
                }
        }
        return errno != 0 ? -errno : count;
}

ssize_t procfs_cmdline(struct procfs *p, long pid, char *buf, size_t cap)
{
        return read_pid_file(p, pid, "cmdline", buf, cap, false);
}

ssize_t procfs_cwd(struct procfs *p, long pid, char *buf, size_t cap)
{
        char path[64];
        ssize_t n;
        int r;

        if (!buf || cap < 2)
                return -EINVAL;
        r = pid_path(path, pid, "cwd");
        if (r < 0)
                return r;
        n = readlinkat(p->proc_fd, path, buf, cap);
        if (n < 0)
                return -errno;
        /* Cut (it may be longer than cap), or not a directory's path: a
         * process in a deleted directory reads "/x (deleted)". */
        if ((size_t)n >= cap || n == 0 || buf[0] != '/' ||
            (n >= 10 && memcmp(buf + n - 10, " (deleted)", 10) == 0))
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return n;
}

int pidmem_parse(const char *buf, size_t len, struct pidmem *ret)
{
        const char *p = buf, *end = buf + len;
        uint64_t v[3];
        int r;

        /* "size resident shared text lib data dt" */
        for (size_t i = 0; i < 3; i++) {
                skip_spaces(&p, end);
                r = parse_u64(&p, end, &v[i]);
                if (r < 0)
                        return r;
        }
        if (v[2] > v[1])
                return -EINVAL;
        *ret = (struct pidmem){.anon_pages = v[1] - v[2], .file_pages = v[2]};
        return 0;
}

int procfs_pidmem(struct procfs *p, long pid, struct pidmem *ret)
{
        char buf[256];
        ssize_t n = read_pid_file(p, pid, "statm", buf, sizeof(buf), true);

        return n < 0 ? (int)n : pidmem_parse(buf, (size_t)n, ret);
}

long procfs_pid_max(void)
{
        long max = 4194304; /* PID_MAX_LIMIT on 64-bit */
        char *buf = NULL;
        size_t len = 0;
        const char *p;
        uint64_t v;

        if (read_regular_file("/proc/sys/kernel/pid_max", 0, 32, &buf, &len) >= 0 &&
            (p = buf, parse_u64(&p, buf + len, &v)) >= 0 && v > 0 && v <= (uint64_t)max)
                max = (long)v;
        free(buf);
        return max + 1;
}

int procfs_set_self_oom_score_adj(int adj)
{
        _cleanup_close_ int fd = -1;
        char buf[16];
        int n;

        if (adj < -1000 || adj > 1000)
                return -ERANGE;
        n = snprintf(buf, sizeof(buf), "%d", adj);
        if (n < 0 || (size_t)n >= sizeof(buf))
                return -ERANGE;
        fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write_all(fd, buf, (size_t)n);
}

/* ---- identity of a process across pid reuse ---- */

int procfs_pidstat_at(int root_fd, long pid, struct pidstat *ret)
{
        _cleanup_free_ char *buf = NULL;
        char path[5 + 64] = "proc/self/stat";
        size_t len;
        int r = pid ? pid_path(path + 5, pid, "stat") : 0;

        if (r >= 0)
                r = read_file_at(root_fd, path, 4096, &buf, &len);
        return r < 0 ? r : pidstat_parse(buf, len, ret);
}

int procfs_self_identity(int root_fd, struct procfs_identity *ret)
{
        _cleanup_free_ char *boot = NULL;
        struct procfs_identity t = {0};
        struct pidstat ps;
        size_t len;
        int r = procfs_pidstat_at(root_fd, 0, &ps);

        if (r < 0)
                return r;
        t.pid = ps.pid;
        t.starttime = ps.starttime;
        if (read_file_at(root_fd, "proc/sys/kernel/random/boot_id", 64, &boot, &len) >= 0) {
                while (len > 0 && (boot[len - 1] == '\n' || boot[len - 1] == ' '))
                        len--;
                if (len < sizeof(t.boot_id)) {
                        memcpy(t.boot_id, boot, len);
                        t.boot_id[len] = '\0';
                }
        }
        *ret = t;
        return 0;
}

int procfs_pid_alive(int root_fd, long pid, uint64_t starttime)
{
        struct pidstat ps;

        if (pid <= 0)
                return -EINVAL;
        return procfs_pidstat_at(root_fd, pid, &ps) >= 0 && ps.starttime == starttime;
}
