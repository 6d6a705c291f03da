/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/run.h"
#include "model/summary.h"
#include "model/targets.h"
#include "store/store.h"

/* The run history read back as plain structs: what status, inspect,
 * layers, cache, summarize RUN and export RUN read from the database
 * (store.h). No SQL, handle or row keyed by column names leaves the store:
 * a field the row does not hold is NAN (reals), -1 (counts) or NULL
 * (strings). Listings go through a callback, with the row borrowed for the
 * call; a negative return from the callback stops the walk and is
 * returned. Listings stop at STORE_ROWS_MAX rows whatever limit says.
 * Every read returns -errno on failure: -STORE_ENOTDB for a corrupt file,
 * -EBUSY when another process holds the lock past the busy timeout. */

#define STORE_ROWS_MAX 100000

/* A run's state: finished; running while its recorder is alive (same host
 * and boot, and the recorder's pid has the start time it recorded; a
 * running row of another host cannot be checked and reads as running);
 * incomplete when the row was never completed and its recorder is gone
 * (buildtel was SIGKILLed, the machine rebooted). */
enum store_run_state {
        STORE_RUN_FINISHED,
        STORE_RUN_RUNNING,
        STORE_RUN_INCOMPLETE,
        STORE_RUN_UNKNOWN,    /* a state no buildtel writes */
        STORE_RUN_UNRECORDED, /* the database failed mid-run: the row is all there is */
        STORE_RUN_DISK_FULL,  /* ...because its file system filled */
};

/* "finished", "running", "incomplete", "unknown", "failed-to-record",
 * "not recorded: disk full". */
const char *store_run_state_name(enum store_run_state s);

/* One run row. */
struct store_run {
        int64_t id;           /* row id */
        struct run_info info; /* the run's facts, as its files hold them; the
                                 signal is known once finished */
        enum store_run_state state;
        char *builder, *cgroup_mode, *vcs_rev, *vcs_ref;
        char *build_log;   /* the path of its build log; NULL unknown */
        char *nodes;       /* the distinct BuildKit nodes of its targets, "a,b" */
        double duration_s; /* end - start; while running, the last sample's elapsed */
        /* the summary figures stored with the row (while running: as far as
         * it got) */
        int64_t samples, samples_dropped;
        double mem_total_mb, mem_used_peak_mb, mem_used_peak_elapsed_s;
        char *mem_used_peak_stage, *mem_used_peak_context;
        double mem_avail_min_mb, swap_used_peak_mb, disk_avail_min_gb;
        double load1_peak, cpu_pct_peak, cpu_pct_avg, compilers_peak;
        int64_t near_oom_samples, low_disk_samples;
        /* steps and cached steps summed over its targets that know them */
        int64_t steps, cached_steps;
        /* the thresholds its stored summary was made with */
        double near_oom_mb, low_disk_gb, mem_cap_mb; /* mem_cap_mb: --memory-max, NAN none */
        /* the build's own, from its stored summary (NAN/NULL while running
         * or unknown): the kernel's peak of its cgroup (page cache in), the
         * largest anon sample, the unit with the largest peak RSS (its name
         * as given and as the summary showed it, relative to the project;
         * shown NULL before issue 26), and the -j reading's text */
        double build_mem_peak_mb, build_anon_peak_mb, unit_peak_mb;
        /* the build's CPU seconds (user + system) and its OOM kills, from
         * the stored summary (NAN unknown) */
        double build_cpu_s, build_oom_kills;
        char *unit_peak_name, *unit_peak_shown, *unit_peak_tool, *jobs_reading;
        /* what failed (summary.json's run.failure): NULL none named */
        char *fail_target, *fail_tool, *fail_first, *fail_last;
        /* the kernel's account of its processes, summary.json's "processes"
         * object as JSON text (runfiles/runjson.h reads it); NULL none */
        char *procs_json;
        char *guard_json; /* likewise its "memory_guard"; NULL: off */
};

/* Free the strings of r and zero it; NULL is a no-op. */
void store_run_release(struct store_run *r);

/* The row id of spec: NULL or "" the latest run; else an exact run id, or
 * a prefix of exactly one. -ENOENT none, -EEXIST ambiguous prefix. */
int store_run_find(struct store *st, const char *spec, int64_t *ret_id);

/* Run row id into *ret (caller-owned: store_run_release()). Returns 0,
 * -ENOENT, or -errno; *ret is untouched on failure. */
int store_run_get(struct store *st, int64_t id, struct store_run *ret);

/* The run row's figures as compare and the baseline take them
 * (model/figures.h: the same vector a live run's model gives): what the
 * row holds; the compiler cache is its targets' (run_figures_cc_add()). */
struct run_figures;
void store_run_figures(const struct store_run *r, struct run_figures *ret);

/* Recent runs, newest first: start at or after since (NAN: any), at most
 * limit (<= 0: no limit), each to fn (NULL: just count). Returns the
 * number of runs, or -errno, or what fn returned. */
typedef int (*store_run_fn)(void *userdata, const struct store_run *r);
int store_runs_each(struct store *st, double since, int64_t limit, store_run_fn fn, void *userdata);

/* A job's runs (runs.job, version 9; older rows have none), newest first
 * (start, then row id), at most limit (<= 0: no limit), each to fn (NULL:
 * just count), as store_runs_each(). The filter: job (required, exact);
 * host NULL any, else exact; finished_only: only rows in state 'finished'
 * (neither running nor incomplete nor failed-to-record); success -1 any,
 * 1 the finished runs that exited 0 without a signal, 0 all others;
 * before_id > 0 keeps rows with a smaller row id (to leave out the run
 * being compared: its own row and any later); since (epoch; NAN or 0:
 * any) keeps runs started at or after it. Returns the number of runs,
 * -EINVAL without a job, or -errno, or what fn returned. The baseline of
 * issue 23 reads a window with it: {job, host, true, success, id, NAN}. */
struct store_job_filter {
        const char *job;
        const char *host;
        bool finished_only;
        int success;
        int64_t before_id;
        double since;
};
int store_job_runs(struct store *st, const struct store_job_filter *f, int64_t limit,
                   store_run_fn fn, void *userdata);

/* The job's unit ledger (issue 37): the units of job's last LEDGER_RUNS
 * finished runs on host (NULL: any), whatever their outcome (an OOM-killed
 * run measured its units too), added to l newest first. Returns the runs
 * read, or -errno. */
struct ledger;
int store_job_ledger(struct store *st, const char *job, const char *host, struct ledger *l);

/* The baseline's window (issue 23): job's last finished runs on host
 * (NULL: any) with the same success, row ids under before_id (0: any),
 * at most cap (<= BASELINE_WINDOW), most recent first, into win[] as
 * model/baseline.h compares them: duration, the build's memory peaks, CPU
 * time and OOM kills (its stored summary), the host's CPUs and memory, -j
 * of its argv, its targets (duration, cache ratio, compiler cache), its
 * top units by peak and slowest BuildKit steps. Returns how many, or
 * -errno. */
struct baseline_run;
int store_baseline_window(struct store *st, const char *job, const char *host, bool success,
                          int64_t before_id, struct baseline_run *win, size_t cap);

/* The targets of run row id as stored, by name or in the order the run
 * inserted them (insertion_order: the model's), at most limit (<= 0: no
 * limit): the facts they were written from, an out-of-range figure
 * unknown, names and fields cut as targets.h cuts them. Returns the
 * number of targets, or -errno, or what fn returned. */
typedef int (*store_target_fn)(void *userdata, const struct target_fact *t);
int store_targets_each(struct store *st, int64_t id, bool insertion_order, int64_t limit,
                       store_target_fn fn, void *userdata);

/* The compiler-cache snapshots of run row id, oldest first (tool, origin
 * and version borrowed for the call, raw NULL). Returns their number, or
 * -errno, or what fn returned. */
typedef int (*store_cache_fn)(void *userdata, const struct store_cache_snapshot *c);
int store_cache_snapshots_each(struct store *st, int64_t id, store_cache_fn fn, void *userdata);

/* The latest `buildtel cache` snapshot of tool, into *ret with tool and
 * origin static or the caller's, version and raw NULL. Returns 1, 0 when
 * there is none (*ret untouched), or -errno. */
int store_cache_previous(struct store *st, const char *tool, struct store_cache_snapshot *ret);

/* What the runs started at or after since (epoch seconds) saw of tool in
 * their logs: the runs whose log printed its stats, and the sum of each
 * run's counts from its first block to its last (figure_cc_delta(): a
 * reset between them, the counts since it; -1 when no run has both). */
struct store_cache_runs {
        int64_t runs, hits, misses;
};
int store_cache_runs_since(struct store *st, const char *tool, double since,
                           struct store_cache_runs *ret);

/* Layer reuse per target (image): the most recent build of each target,
 * with the node of its previous build. */
struct store_layer {
        /* that build's figures: name, duration_s, steps, cached, success,
         * node (the others unknown) */
        struct target_fact target;
        const char *run; /* its run id */
        double start_epoch;
        const char *previous_node, *previous_run; /* the build before; NULL: none */
        bool node_changed;                        /* both nodes known, and not the same */
};
/* Latest builds started at or after since (NAN: any), newest first, at
 * most limit (<= 0: no limit). Returns their number, or -errno, or what
 * fn returned. */
typedef int (*store_layer_fn)(void *userdata, const struct store_layer *l);
int store_layers_each(struct store *st, double since, int64_t limit, store_layer_fn fn,
                      void *userdata);

/* "2026-11-29T15:40:20Z", "2026-11-29 15:40", "2026-11-29" (local time
 * unless it ends in Z), or a span back from now: "90s", "30m", "2h",
 * "3d", "1w". Returns 0 with epoch seconds, or -EINVAL. */
int history_parse_when(const char *s, double now, double *ret);

/* ---- buildtel top ---------------------------------------------------- */

/* One recent sample of a run, as `buildtel top` shows it (strings cut). */
struct store_tail_point {
        double elapsed_s, cpu_pct, mem_avail_mb;
        double cg_mem_mb, cg_psi_mem_some_s; /* the build's own; NAN unknown */
        char stage[64], context[96];
        char running[128]; /* the running units, "" none or unknown */
};

/* The last max (at most STORE_TAIL_MAX) samples of run row id, oldest
 * first, into out. Returns how many, or -errno. */
#define STORE_TAIL_MAX 240
int store_run_tail(struct store *st, int64_t id, struct store_tail_point *out, size_t max);
