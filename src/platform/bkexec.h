/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/execs.h"

/* The exec cgroups of BuildKit's RUN steps: BuildKit starts each RUN
 * through runc in a cgroup of its own, not under the docker client buildtel
 * runs, and removes it when the step ends.
 *
 * Found from the processes, never a fixed path: a child of runc (or crun)
 * started by dockerd, buildkitd or containerd is an exec's first process.
 * Names prove nothing (any user can run a "dockerd"): the runc and its
 * daemon must run as root (or buildtel's uid) an executable no one else can
 * write, and a bundle file is read only when it is a regular file of
 * root's, opened without blocking. The first process's /proc/PID/cgroup
 * names the exec cgroup; the directory above it is listed on every tick
 * for new execs. Which execs are ours is the caller's decision (cfg.match);
 * one that started before buildtel never is. Ours are read on every tick,
 * their OOM count and peak on every bkexec_poll(), before the cgroup goes. */

#define BKEXEC_WALK_S 0.5    /* between walks for a first exec, while none is known */
#define BKEXEC_ALIVE_MAX 64  /* exec cgroups tracked at once, ours or not */
#define BKEXEC_OURS_MAX 1024 /* ours kept over the run; more are left out */
#define BKEXEC_PARENTS_MAX 8 /* directories that hold exec cgroups */
#define BKEXEC_PROCS_MAX 256 /* processes read per exec per tick */

/* The caller's verdict on an exec from its first process's raw cmdline
 * (NUL-separated): true, ours. Asked again on later ticks while it says no
 * (its vertex line may come later). */
typedef bool (*bkexec_match_fn)(void *userdata, const char *cmdline, size_t len, double first_s,
                                char *ret_cmd, size_t cap);

struct bkexec_config {
        const char *root; /* "/" in production */
        bkexec_match_fn match;
        void *userdata;
};

/* Counters over every exec of ours (gone ones at their last read), levels
 * over those alive. NAN when none gave it. */
struct bkexec_totals {
        size_t ours, alive;
        double cpu_user_s, cpu_sys_s, io_read_bytes, io_write_bytes, oom_kills;
        double mem_bytes, anon_bytes, file_bytes, pids;
        struct psi psi;
        double max_peak_bytes; /* the largest kernel peak of one exec */
        /* the kernel's newest OOM report on an exec of ours: the victim's
         * comm and pid (0: none) */
        char oom_victim[64];
        long oom_victim_pid;
};

struct bkexec;
struct pidstat;
struct procfs;

int bkexec_new(const struct bkexec_config *cfg, struct bkexec **ret);
void bkexec_free(struct bkexec *b); /* NULL is a no-op */

/* One tick at now (buildtel's clock). discover: also look for exec cgroups
 * (the build printed a RUN step): every process is walked while no exec
 * directory is known, and every tenth discovering tick after. Reads every
 * counter of ours and lists their processes. Returns how many of ours are
 * alive, or -errno. */
int bkexec_tick(struct bkexec *b, struct procfs *p, double now, bool discover);
/* The processes of ours alive as of the last tick, sorted; owned by b. */
void bkexec_pids(const struct bkexec *b, const long **ret_pids, size_t *ret_n);
/* A process of the last tick's list, as the per-process walk read it. */
void bkexec_consider(struct bkexec *b, const struct pidstat *ps);
/* After the walk: label each exec's largest processes, find OOM victims. */
void bkexec_end(struct bkexec *b, struct procfs *p);
/* Between ticks: the OOM count and memory peak of ours alive. Returns how
 * many kills were new. */
int bkexec_poll(struct bkexec *b, struct procfs *p, double now);
/* A RUN step has no exec found yet: walk the processes twice a second
 * until told otherwise, so an exec under a new directory (another
 * --cgroup-parent, a second daemon) is found while it runs. */
void bkexec_hunt(struct bkexec *b, bool on);
/* Which exec a process runs in, from /proc/PID/cgroup (pid > 0: its
 * exec cgroup's name into id) or by that name (pid 0: id as given): 1 an
 * exec of ours, 0 not decided yet (not listed or matched yet, or no exec
 * directory known), -1 none of ours (pid > 0 only: gone, or outside every
 * directory of execs: while none is known or a new one is hunted for, one
 * in buildtel's own pid namespace). */
int bkexec_exec_of(struct bkexec *b, long pid, char id[EXEC_ID_MAX + 1]);
/* The run is over: read the OOM records logged after the last poll. */
void bkexec_finish(struct bkexec *b, double now);

void bkexec_totals(const struct bkexec *b, struct bkexec_totals *ret);
/* Every exec of ours so far, in the order found; owned by b. */
const struct exec_fact *bkexec_facts(const struct bkexec *b, size_t *ret_n);

/* /proc/PID/net/dev: received and sent bytes summed over the interfaces,
 * lo left out. 0, or -EINVAL when buf is not that file. */
int bkexec_netdev_parse(const char *buf, size_t len, uint64_t *ret_rx, uint64_t *ret_tx);
/* An OCI bundle's config.json: process.args as a NUL-separated argv into
 * out (cut at cap); with expand, $NAME and ${NAME} replaced from
 * process.env as the step's shell would: a RUN step's build arguments as
 * the log prints them. The length, -EINVAL when there is no such array or
 * cap is 0. */
int bkexec_bundle_args_parse(const char *buf, size_t len, bool expand, char *out, size_t cap);

/* /proc/PID/status: the four uids of its Uid line. 0, or -EINVAL. */
int bkexec_status_uids_parse(const char *buf, size_t len, uint64_t ret[4]);
