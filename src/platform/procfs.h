/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every /proc read goes through here, relative to a root directory fd, so
 * tests point it at tests/fixtures/<case>/. Parsers take buffers. */

/* The aggregate "cpu" line of /proc/stat, in USER_HZ ticks. */
struct cpustat {
        uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
        uint64_t guest, guest_nice; /* already included in user/nice */
};

/* From /proc/meminfo, in kB. */
struct meminfo {
        uint64_t total_kb;
        uint64_t free_kb;
        uint64_t available_kb; /* estimated from free+cached when the kernel lacks it */
        uint64_t swap_total_kb;
        uint64_t swap_free_kb;
};

struct loadavg {
        double load1, load5, load15;
        uint64_t running, total; /* "2/312" */
};

/* Fields of /proc/PID/stat. comm is what lies between the first '(' and the
 * LAST ')', cut to 64 bytes. */
struct pidstat {
        long pid;
        char comm[65];
        char state;
        long ppid;
        long pgrp;
        long session;            /* its session id: a daemon that detached has its own */
        uint64_t utime, stime;   /* ticks */
        uint64_t cutime, cstime; /* ticks of waited-for children (negative reads as 0) */
        uint64_t starttime;      /* ticks after boot */
        uint64_t vsize;          /* bytes */
        uint64_t rss_pages;
        uint64_t num_threads;
};

/* Parsers: 0, -EINVAL when buf (not NUL-terminated) is not what they
 * expect, or -ERANGE when a number overflows; *ret untouched on failure.
 * Unknown lines and trailing fields are ignored; the fields above are
 * required, but cpustat's after the fourth and meminfo's MemAvailable
 * (else MemFree + Buffers + Cached). */
int cpustat_parse(const char *buf, size_t len, struct cpustat *ret);
int meminfo_parse(const char *buf, size_t len, struct meminfo *ret);
/* Sum of /proc/zoneinfo's "count:" lines: free pages on the per-CPU lists,
 * which MemAvailable leaves out (hundreds of MiB since 6.7). -EINVAL when
 * there is none. */
int zoneinfo_pcp_parse(const char *buf, size_t len, uint64_t *ret_pages);
int loadavg_parse(const char *buf, size_t len, struct loadavg *ret);
int pidstat_parse(const char *buf, size_t len, struct pidstat *ret);

/* /proc/PID/io: read_bytes and write_bytes, both required. */
struct pidio {
        uint64_t read_bytes, write_bytes;
};
int pidio_parse(const char *buf, size_t len, struct pidio *ret);

uint64_t cpustat_total(const struct cpustat *c); /* guest excluded (counted in user) */
uint64_t cpustat_busy(const struct cpustat *c);  /* total - idle - iowait */

struct procfs;

/* qsort() and bsearch() by pid: of longs, or of structs that begin with
 * their long pid. */
static inline int procfs_cmp_pid(const void *a, const void *b)
{
        const long *x = a, *y = b;

        return (*x > *y) - (*x < *y);
}

/* root is "/" in production. Keeps the hot files (stat, meminfo, ...) open
 * for pread(), so a fixture must be rewritten in place, not renamed over;
 * one missing now is retried on each read. 0, or -errno when root/proc
 * cannot be opened. */
int procfs_new(const char *root, struct procfs **ret);
void procfs_free(struct procfs *p); /* NULL is a no-op */

/* Read and parse one hot file into p's buffer. 0 or -errno; *ret
 * untouched on failure. */
int procfs_cpustat(struct procfs *p, struct cpustat *ret);
int procfs_meminfo(struct procfs *p, struct meminfo *ret);
/* zoneinfo_pcp_parse's pages in kB. */
int procfs_pcp_free_kb(struct procfs *p, uint64_t *ret_kb);
int procfs_loadavg(struct procfs *p, struct loadavg *ret);
/* -ENOENT/-ESRCH when the process is gone, -EINVAL for a pid <= 0. */
int procfs_pidstat(struct procfs *p, long pid, struct pidstat *ret);

/* -ENOENT/-ESRCH when the process is gone, -EACCES when it is not ours. */
int procfs_pidio(struct procfs *p, long pid, struct pidio *ret);

/* cb (NULL: just count) for every process whose stat could be read and
 * parsed (gone or hidden ones are skipped); a negative return from cb
 * stops the walk and is returned. The number seen, or -errno. */
int procfs_foreach_pid(struct procfs *p, int (*cb)(const struct pidstat *ps, void *userdata),
                       void *userdata);

/* Read proc/PID/cmdline into buf (NULs kept; at most cap bytes).
 * Returns the length, or -errno. */
ssize_t procfs_cmdline(struct procfs *p, long pid, char *buf, size_t cap);

/* proc/PID/cwd's target into buf (NUL-terminated). Its length;
 * -ENOENT/-ESRCH when gone, -EACCES when not ours, -ENAMETOOLONG when it
 * does not fit or is no usable path (a deleted directory). */
ssize_t procfs_cwd(struct procfs *p, long pid, char *buf, size_t cap);

/* /proc/PID/statm, in pages: its "shared" is RssFile + RssShmem, so anon
 * is resident - shared; status has the same for ten times the cost. */
struct pidmem {
        uint64_t anon_pages, file_pages;
};
int pidmem_parse(const char *buf, size_t len, struct pidmem *ret);
/* -ENOENT/-ESRCH when the process is gone. */
int procfs_pidmem(struct procfs *p, long pid, struct pidmem *ret);

/* The kernel's largest pid + 1 (/proc/sys/kernel/pid_max), or the 64-bit
 * limit when it cannot be read. */
long procfs_pid_max(void);

/* Set this process's /proc/self/oom_score_adj (-1000..1000; lowering it
 * needs CAP_SYS_RESOURCE). Returns 0, -ERANGE, or -errno (-EACCES
 * without the privilege). */
int procfs_set_self_oom_score_adj(int adj);

/* Who a process is across pid reuse (the history database tells a live
 * recorder from a gone one with these). */
struct procfs_identity {
        long pid;
        uint64_t starttime; /* clock ticks after boot */
        char boot_id[40];   /* "" when unreadable */
};

/* This process as root_fd's proc/ shows it. 0 or -errno; *ret untouched
 * on failure. */
int procfs_self_identity(int root_fd, struct procfs_identity *ret);

/* root_fd's proc/PID/stat (pid 0: proc/self/stat), read whole: 0 or
 * -errno (-ENOENT: no such process). */
int procfs_pidstat_at(int root_fd, long pid, struct pidstat *ret);
/* Whether pid runs under root_fd's proc/ with this start time: 1 yes, 0
 * no (gone, or another process's now), -EINVAL for a pid <= 0. */
int procfs_pid_alive(int root_fd, long pid, uint64_t starttime);
