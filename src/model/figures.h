#pragma once
/* The one rule of each derived figure that more than one layer shows: the
 * sinks, the renderers, the store and the commands call these and never
 * divide or subtract by hand. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_info;

/* Cached BuildKit steps over all steps: NAN when steps is unknown (< 0) or
 * 0, or cached is unknown (< 0). */
double figure_cached_ratio(int64_t steps, int64_t cached);

/* The median of v[0..n) (sorted in place; no NAN among them), NAN when n is 0. */
double figure_median(double *v, size_t n);

/* Compiler-cache hits over hits plus misses: NAN when there were none. */
double figure_hit_ratio(uint64_t hits, uint64_t misses);

/* The run's outcome in a word, as every surface names it: "ok", "exit 2",
 * "SIGPIPE" (the build killed by a signal, by its name), "OOM-killed" (the
 * build failed after the kernel's OOM killer killed in its cgroup: the
 * failure's cause, whichever status followed), "unknown" (exit_code < 0).
 * oom_kills NAN: unknown, taken as none. Returns buf. */
#define FIGURE_OUTCOME_LEN 24
const char *figure_outcome(int exit_code, int term_signal, double oom_kills,
                           char buf[static FIGURE_OUTCOME_LEN]);

/* The run's duration in seconds: end - start when both are known, else
 * last_epoch - start with *ret_to_last set (may be NULL); NAN when the
 * start or both ends are unknown. The history's SQL calls this very
 * function (store.c registers it as run_duration()). */
double figure_run_duration(double start_epoch, double end_epoch, double last_epoch,
                           bool *ret_to_last);

/* How long after the run's end a .ninja_log may have been written and still
 * be this run's (ninja writes its last line as its last edge ends). */
#define FIGURE_NINJA_SLACK_S 5.0

/* Where ninja started on the run's clock, in seconds from the run's start:
 * ninja's times count from its own start, which no record gives; it appends
 * a line as each edge ends, so the log's mtime is the end of its last edge,
 * and ninja started max_end_ms before it (never before the run: 0 then).
 * Returns 0 and *ret_off, or -ESRCH when the log was written more than a
 * second before the run started (*ret_before true) or more than
 * FIGURE_NINJA_SLACK_S after it ended: its last ninja run is another
 * build's. *ret_before may be NULL. */
int figure_ninja_offset(const struct run_info *ri, double mtime, int64_t max_end_ms,
                        double *ret_off, bool *ret_before);

/* A compiler cache's hits and misses during a run, from its counters at
 * the log's first and last stats blocks (cumulative: per cache directory,
 * per sccache server). A counter that went down was reset in between
 * (`ccache -z`, a new sccache server): the run's counts are then the last
 * block's, those since the reset, a lower bound, never a negative or a
 * wrapped difference. Returns true when a reset was seen. */
bool figure_cc_delta(uint64_t first_hits, uint64_t first_misses, uint64_t last_hits,
                     uint64_t last_misses, uint64_t *ret_hits, uint64_t *ret_misses);

/* One run's figures as `compare`, the baseline and `bench` take them,
 * filled from a finished run's model (run_figures_of()) or the history
 * (store_run_figures()), so both sides of a comparison are the same
 * numbers. NAN (or _set false, -1) is unknown. */
struct run_figures {
        double duration_s;          /* the run's (bench: the wall time) */
        double user_s, sys_s;       /* the build's CPU (the history keeps only their sum) */
        double cpu_s;               /* user_s + sys_s */
        double mem_peak_mb;         /* the build's memory peak counter */
        double mem_sampled_peak_mb; /* the largest sampled build memory */
        double mem_anon_peak_mb;    /* the build's anon peak */
        double oom_kills;           /* the build's */
        double host_mem_used_peak_mb, cpu_avg_pct; /* the host's */
        bool steps_set;                            /* BuildKit layer steps known */
        uint32_t steps, cached;                    /* layer steps, and those from the cache */
        bool cc_set;                               /* a target knew its compiler-cache counts */
        uint64_t cc_hits, cc_misses;               /* over the targets that know them */
        size_t compile_units;                      /* compile units seen in the process scans */
        int exit_code;                             /* -1 unknown */
};

/* Every figure unknown. */
void run_figures_init(struct run_figures *f);
/* A finished run's figures from its model (summary, facts, units; any may
 * be NULL): the build's figures only when its cgroup was known. */
struct run_model;
void run_figures_of(const struct run_model *m, struct run_figures *ret);
/* Add a target's compiler-cache counts (a negative one: unknown, skipped). */
void run_figures_cc_add(struct run_figures *f, int64_t hits, int64_t misses);
/* The compiler-cache hit ratio over the targets (figure_hit_ratio); NAN
 * when none knew. */
double run_figures_cc_ratio(const struct run_figures *f);
/* The build's memory peak as shown: the peak counter, else the largest
 * sampled (a kernel without memory.peak). */
double run_figures_mem_peak(const struct run_figures *f);
