/* SPDX-License-Identifier: MIT */
#pragma once

/* Inside the cgroup module only (platform/cgroup-*.c). */

#include <string.h>
#include <sys/resource.h>

#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "util/util.h"

/* The next blank-separated word of [*p, end). */
static inline bool next_word(const char **p, const char *end, const char **ret_w, size_t *ret_n)
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

static inline bool word_is(const char *w, size_t n, const char *s)
{
        return n == strlen(s) && memcmp(w, s, n) == 0;
}

struct hier {
        bool used;
        char parent[2 * CG_PATH_MAX]; /* <root><mount><own>/buildtel */
        char name[128];               /* run-<id>-<pid> */
        int parent_fd, dir_fd;        /* -1 until made */
        int procs_w_fd;               /* for the child */
        char own[2 * CG_PATH_MAX];    /* <mount><own>: where leftovers go */
        char want[2 * CG_PATH_MAX];   /* the build's path as /proc/PID/cgroup shows it */
};

struct v2_state {              /* what we did to our own v2 cgroup, to undo it */
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

/* cgroup-read.c. cg_read_fd preads fd whole into cg->buf (owned by cg,
 * grown as needed): the length or -errno. cg_pids_from_buf parses the first
 * n bytes of cg->buf into cg->pids, cg->npids; n is a read's result, so a
 * negative n is returned as it is. The others: 0 or -errno. */
ssize_t cg_read_fd(struct cgroup *cg, int fd);
void cg_pids_reserve(struct cgroup *cg, size_t n); /* a failed realloc keeps the old */
int cg_pids_from_buf(struct cgroup *cg, ssize_t n);
int cg_read_pressure(struct cgroup *cg, int fd, struct cgroup_pressure *ret);
/* cgroup-setup.c. cg_read_at reads dirfd's name as cg_read_fd does; the
 * others return 0 or -errno. */
ssize_t cg_read_at(struct cgroup *cg, int dirfd, const char *name);
int cg_write_at(int dirfd, const char *name, const char *s);
int cg_write_pid(int dirfd, long pid);
void cg_disable_ctl(int dirfd, unsigned added); /* added: bits of v2_ctl */
/* cgroup-cleanup.c: best effort, errors ignored. */
void cg_clean_stale(struct cgroup *cg, int parent_fd, bool say);
void cg_remove_dirs(struct cgroup *cg);
