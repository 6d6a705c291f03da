/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/execs.h"
#include "util/macro.h"

/* The build's own accounting: a cgroup made for it (cgroup2, cgroup v1, or
 * both on a hybrid host), or, without cgroups, its process tree walked from
 * /proc. Parsers take buffers; struct cgroup does the reading. */

enum cgroup_mode {
        CGROUP_MODE_AUTO,
        CGROUP_MODE_V2,     /* cgroup2 only */
        CGROUP_MODE_HYBRID, /* cgroup2 cpu.stat + pressure; v1 memory, blkio, pids */
        CGROUP_MODE_V1,     /* v1 cpuacct, memory, blkio, pids */
        CGROUP_MODE_NONE,   /* the process tree from /proc: estimates */
};

/* "auto", "v2", ... Returns 0 or -EINVAL. */
int cgroup_mode_parse(const char *s, enum cgroup_mode *ret);
const char *cgroup_mode_name(enum cgroup_mode m);

enum cgroup_hier {
        CG_H_V2,
        CG_H_MEMORY,
        CG_H_CPUACCT,
        CG_H_BLKIO,
        CG_H_PIDS,
        _CG_H_MAX,
};

#define CG_PATH_MAX 1024

/* Where each hierarchy is mounted ("" when it is not), and the path inside
 * the hierarchy that the mount shows as its root (a container's bind mount
 * of a subtree shows "/its/path"). */
struct cgroup_mounts {
        char mnt[_CG_H_MAX][CG_PATH_MAX];
        char root[_CG_H_MAX][CG_PATH_MAX];
};

/* A process's own cgroup in each hierarchy, from /proc/PID/cgroup ("" when
 * it is in none of that hierarchy). */
struct cgroup_self {
        char path[_CG_H_MAX][CG_PATH_MAX];
};

/* Pressure stall totals of one resource, microseconds. full is UINT64_MAX
 * when the file has no "full" line (cpu.pressure before 5.13). */
struct cgroup_pressure {
        uint64_t some_us, full_us;
};

/* Parsers: 0, -EINVAL, or -ERANGE as procfs.h's; unknown lines and keys
 * are ignored. */

/* /proc/PID/mountinfo: the cgroup2 mount and the v1 mounts of memory,
 * cpuacct, blkio and pids (co-mounted ones too: "cpu,cpuacct"). The first
 * mount of each wins; mount points longer than CG_PATH_MAX are skipped. */
int cgroup_mounts_parse(const char *buf, size_t len, struct cgroup_mounts *ret);
/* /proc/PID/cgroup: "0::/path" and "4:memory:/path" lines. */
int cgroup_self_parse(const char *buf, size_t len, struct cgroup_self *ret);
/* root_fd's proc/PID/cgroup (pid 0: proc/self/cgroup) read and parsed:
 * 0 or -errno (-ENOENT: no such process). */
int cgroup_self_read(int root_fd, long pid, struct cgroup_self *ret);
/* A single number (memory.current, pids.peak, ...); "max" is UINT64_MAX. */
int cgroup_u64_parse(const char *buf, size_t len, uint64_t *ret);
/* "key value" lines (memory.events, cpu.stat): key's value, or -ENOENT. */
int cgroup_keyed_parse(const char *buf, size_t len, const char *key, uint64_t *ret);
/* The CPU's user and system seconds of v2 cpu.stat (hz 0: user_usec,
 * system_usec) or v1 cpuacct.stat (user, system, in ticks of hz). */
int cgroup_cpu_parse(const char *buf, size_t len, double hz, double *ret_user, double *ret_sys);
/* v2 io.stat: rbytes= and wbytes= summed over every device. */
int cgroup_iostat_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write);
/* v1 blkio.throttle.io_service_bytes(_recursive): the "MAJ:MIN Read N" and
 * "MAJ:MIN Write N" lines summed over every device. */
int cgroup_blkio_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write);
/* <x>.pressure, /proc/pressure/<x>: total= of the "some" and "full" lines. */
int cgroup_pressure_parse(const char *buf, size_t len, struct cgroup_pressure *ret);
/* cgroup.procs: one pid a line. At most cap pids are stored in pids;
 * *ret_n gets how many the file holds (may exceed cap). */
int cgroup_procs_parse(const char *buf, size_t len, long *pids, size_t cap, size_t *ret_n);

/* One read; NAN when unknown. Counters count from the cgroup's creation. */
struct cgroup_stats {
        double cpu_user_s, cpu_sys_s;
        double mem_bytes, mem_peak_bytes; /* peak: the kernel's own, except in none mode */
        double oom_kills;
        double io_read_bytes, io_write_bytes;
        struct psi psi;
        double pids, pids_peak;
        /* Anonymous and file-backed memory (memory.stat, or RssAnon/RssFile). */
        double mem_anon_bytes, mem_file_bytes;
        /* The OOM killer's last victim in the build's cgroup (/dev/kmsg):
         * pid -1 and "" when unknown. */
        long oom_victim_pid;
        char oom_victim_comm[65];
};

void cgroup_stats_clear(struct cgroup_stats *s);

struct cgroup_config {
        enum cgroup_mode mode;
        const char *root;                 /* "/" in production */
        const char *run_id;               /* names the cgroup: buildtel/run-<run_id>-<our pid> */
        uint64_t memory_max, memory_high; /* bytes; 0 = no limit */
        long tree_root; /* none mode: the process whose descendants are the build */
        note_fn note;   /* one-line notes (a controller missing, host-wide pressure) */
        void *userdata;
        /* Kill the build's detached daemons at the end too; by default
         * they move out to our cgroup and keep running. */
        bool kill_leftovers;
        /* v2: ask systemd for a delegated scope when ours cannot be used. */
        bool use_systemd;
        /* When set: why no cgroup could be had, with the remedy. */
        char *why;
        size_t why_cap;
        /* Tests only: cgroup.procs fds read-only, so the join fails. */
        bool test_unjoinable;
};

struct cgroup;

/* Make the build's cgroup in every hierarchy its mode uses, under <mount><our
 * own cgroup>/buildtel/, after removing those of buildtels that are gone.
 * auto never picks none (the caller decides to fall back); none ignores
 * the limits (the caller refuses them). 0, -EPERM/-EACCES/-EROFS without
 * permission, -ENOENT when the mode's hierarchies are not mounted, -errno. */
int cgroup_new(const struct cgroup_config *cfg, struct cgroup **ret);
/* Move out the build's detached daemons (unless kill_leftovers), kill the
 * rest, remove the cgroup, restore our own. NULL is a no-op. */
void cgroup_free(struct cgroup *cg);

/* Is pid (the build, just spawned) in the build's cgroup? join_error: the
 * child's report of its join (0 or -errno). 0, or -errno naming the cause
 * (-EXDEV: elsewhere). A process already gone counts as joined. */
int cgroup_verify(struct cgroup *cg, pid_t pid, int join_error);
/* Give up the cgroup for mode none: the tree below tree_root from /proc.
 * 0 or -errno. */
int cgroup_fallback_none(struct cgroup *cg, long tree_root);

/* The build's cgroup path setup tried or made ("" none), for messages. */
const char *cgroup_path(const struct cgroup *cg);

/* How to get a cgroup with the memory controller below our own v2 one. */
enum cgroup_v2_plan {
        CG_PLAN_PLAIN,  /* no memory controller offered: cpu.stat only, as is */
        CG_PLAN_DIRECT, /* the root cgroup: enable there, make ours below */
        CG_PLAN_LEAF,   /* alone in a cgroup we may write: move into a leaf first */
        CG_PLAN_SCOPE,  /* ask systemd for a delegated scope, then LEAF there */
        CG_PLAN_FAIL,   /* none of these */
};
enum cgroup_v2_plan cgroup_v2_plan(bool is_root, bool memory_offered, size_t nprocs, bool only_us,
                                   bool writable, bool use_systemd);

/* The last OOM victim in memcg (NULL: any) of /dev/kmsg records (kmsg.h)
 * into *ret_pid and comm (cut to cap): 1 found, 0 none, -EINVAL on NULL. */
int cgroup_kmsg_victim_parse(const char *buf, size_t len, const char *memcg, long *ret_pid,
                             char *comm, size_t cap);

enum cgroup_mode cgroup_mode(const struct cgroup *cg);
/* True when the pressure figures are host-wide (/proc/pressure): the
 * BuildKit execs are in them already (pipeline/recorder.c). */
bool cgroup_pressure_is_host(const struct cgroup *cg);

/* cg's write-only cgroup.procs fds, one per hierarchy, for the child:
 * how many (at most cap), 0 in none mode. */
size_t cgroup_procs_fds(const struct cgroup *cg, int *fds, size_t cap);

/* Read every counter (none mode: walk /proc for the tree). 0, or -errno
 * when nothing could be read; *ret is filled either way. */
int cgroup_read(struct cgroup *cg, struct cgroup_stats *ret);
/* The build's memory in use less its page cache (what reclaim cannot
 * free), for the memory guard. -ENODATA without the memory controller. */
int cgroup_mem_used(struct cgroup *cg, double *ret_bytes);
/* The build's pids (none mode: of the last cgroup_read), cg's until the
 * next call. 0 or -errno. */
int cgroup_pids(struct cgroup *cg, const long **ret_pids, size_t *ret_n);
