/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/figures.h"

/* The usual of a job, and the findings of a run against it (issue 23):
 * each figure of the run against the same figure of the job's recent
 * finished runs (the window, read by store_baseline_window()). Derived
 * once here; the summary JSON, the stderr summary, the report, the job
 * summary and the Prometheus file format these findings. Pure: no I/O. */

#define BASELINE_WINDOW 20   /* earlier runs read */
#define BASELINE_MIN_RUNS 3  /* fewer earlier values: unknown */
#define BASELINE_K 3.0       /* times the scaled MAD */
#define BASELINE_MIN_REL 0.1 /* and at least 10 % */
#define BASELINE_MAD_SCALE 1.4826
/* the least change of a time and of a memory figure that counts (compare's noise too) */
#define BASELINE_FLOOR_S 5.0
#define BASELINE_FLOOR_MB 32.0

enum baseline_verdict {
        BASELINE_UNKNOWN,
        BASELINE_NOISE,
        BASELINE_REGRESSION,
        BASELINE_IMPROVEMENT,
};

/* How one figure is judged: which way is worse, and the smallest change
 * that counts (min_rel of the usual and floor_abs in the figure's unit);
 * spread_floor: the least spread assumed (a window of equal values). */
struct baseline_rule {
        bool lower_worse; /* cache ratios; else higher is worse */
        double min_rel, floor_abs, spread_floor;
};

struct baseline_stat {
        size_t n;      /* finite earlier values */
        double usual;  /* their median; NAN when n == 0 */
        double spread; /* BASELINE_MAD_SCALE * MAD; NAN when n == 0 */
        double change; /* (value - usual) / |usual|; NAN when unknown or usual 0 */
        int verdict;   /* enum baseline_verdict */
};

/* The median of the finite values among v[0..n) (NaN skipped) into
 * *ret_median and their scaled MAD into *ret_spread. Returns how many were
 * finite; both NAN when none. scratch holds n doubles. */
size_t baseline_median_mad(const double *v, size_t n, double *scratch, double *ret_median,
                           double *ret_spread);

/* Judge value against window[0..n) by rule: unknown when value is not
 * finite or fewer than BASELINE_MIN_RUNS earlier values are; a regression
 * or an improvement only when |value - usual| passes floor_abs, min_rel of
 * |usual|, and BASELINE_K times max(spread, spread_floor); else within
 * noise. n is at most BASELINE_WINDOW. */
void baseline_judge(double value, const double *window, size_t n, const struct baseline_rule *rule,
                    struct baseline_stat *ret);

const char *baseline_verdict_name(int verdict);

/* One run's figures as the baseline compares them (NAN, -1: unknown). */
#define BASELINE_NAME_MAX 127
#define BASELINE_TARGETS_MAX 16
#define BASELINE_UNITS_MAX 8
#define BASELINE_STEPS_MAX 16
struct baseline_named {
        char name[BASELINE_NAME_MAX + 1];
        /* units: the compiler's path or name; targets: this run's first
         * step not from the layer cache ("" none, or not known: a stored run) */
        char tool[BASELINE_NAME_MAX + 1];
        double a, b; /* targets: duration_s, cache ratio; units: peak_mb, -;
                      * steps: duration_s, mem peak MiB */
};
struct baseline_run {
        struct run_figures fig;
        long ncpu;           /* -1 unknown */
        double mem_total_mb; /* the host's */
        long jobs;           /* -j of the command line; -1 unknown */
        size_t ntargets, nunits, nsteps;
        struct baseline_named targets[BASELINE_TARGETS_MAX];
        struct baseline_named units[BASELINE_UNITS_MAX]; /* the top by peak */
        struct baseline_named steps[BASELINE_STEPS_MAX]; /* the slowest */
};
void baseline_run_init(struct baseline_run *r);
/* Add a target, a unit or a step to r when there is room (kept as given,
 * the name cut at BASELINE_NAME_MAX bytes). Step names keep the slowest
 * BASELINE_STEPS_MAX. tool may be NULL. */
void baseline_add_target(struct baseline_run *r, const char *name, double duration_s,
                         double cache_ratio);
void baseline_add_unit(struct baseline_run *r, const char *name, const char *tool, double peak_mb);
void baseline_add_step(struct baseline_run *r, const char *name, double duration_s, double mem_mb);

struct summary;
struct run_facts;
struct targets;
struct units;
/* This run's figures from the model at its end (each part may be NULL). */
void baseline_run_of(const struct summary *s, const struct run_info *ri, const struct run_facts *f,
                     const struct targets *ts, const struct units *u, struct baseline_run *ret);

/* The -j of a command line ("-j8", "-j 8", "--jobs=8", "--jobs 8", and
 * "-jN" in a word of make's flags): the last one, or -1. */
long baseline_argv_jobs(char *const *argv);

#define BASELINE_FINDINGS_MAX 64
#define BASELINE_FIGURE_MAX 23
#define BASELINE_CAUSE_MAX 191
struct baseline_finding {
        char figure[BASELINE_FIGURE_MAX + 1]; /* "duration_s", "target_cache_ratio" ... */
        char target[BASELINE_NAME_MAX + 1];   /* the target, unit or step; "" the run */
        double value;
        struct baseline_stat st;
        char cause[BASELINE_CAUSE_MAX + 1]; /* "" none known */
        /* the window's values of the figure, oldest first (NAN where a
         * run lacks it: another target, unit or step), then value: the
         * report's small multiples */
        size_t nhist;
        double hist[BASELINE_WINDOW + 1];
};

struct baseline {
        char job[BASELINE_NAME_MAX + 1];
        size_t runs; /* earlier runs in the window */
        size_t n;
        struct baseline_finding f[BASELINE_FINDINGS_MAX];
};

/* The findings of cur against win[0..nwin) (most recent first): the run's
 * figures, then each target, unit and step of cur. A figure unknown in cur
 * gives no finding. */
void baseline_derive(const char *job, const struct baseline_run *cur,
                     const struct baseline_run *win, size_t nwin, struct baseline *ret);

/* How many findings are regressions or improvements. */
size_t baseline_flagged(const struct baseline *b);

/* Whether a verdict is flagged: a regression or an improvement. */
bool baseline_is_flag(int verdict);
