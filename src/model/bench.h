/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/figures.h"

/* buildtel bench: the class of one timed run (struct run_figures), and the
 * statistics over a series (one command's runs) and between two series. */

enum bench_class {
        BENCH_COLD = 0, /* compiled from scratch (or nothing said otherwise) */
        BENCH_WARM = 1, /* compiler-cache hits, or part of the layers cached */
        BENCH_HOT = 2,  /* skipped the compile: all layers cached, no compiler at work */
        _BENCH_CLASS_MAX
};

/* The one rule: hot with no compile unit, no compiler-cache activity and
 * every layer step (if any) cached; warm with cache hits or some layers
 * cached; else cold. Never fails. */
enum bench_class bench_classify(const struct run_figures *f);
/* "cold", "warm", "hot". */
const char *bench_class_name(enum bench_class c);

struct bench_stats {
        size_t n;
        double mean, stddev, median, min, max; /* NAN when n == 0; stddev NAN when n < 2 */
};

/* The statistics of x[0..n) (not reordered; sample stddev, n - 1). */
void bench_stats_of(const double *x, size_t n, struct bench_stats *ret);

/* The two-sided Mann-Whitney U test of a against b: U of a (the count of
 * pairs a > b, ties one half) and the p value, exact when both samples
 * are at most BENCH_MWU_EXACT_MAX and have no ties, else the normal
 * approximation with tie and continuity correction (as SciPy's
 * mannwhitneyu with method "auto"). Returns 0, or -EINVAL when a sample
 * is empty or too large for the exact count. */
#define BENCH_MWU_EXACT_MAX 8
struct bench_mwu {
        double u; /* U of a */
        double p; /* two-sided */
        bool exact;
};
int bench_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
                       struct bench_mwu *ret);

/* b against a: the ratio of their means with its uncertainty (the
 * relative errors added in quadrature, as hyperfine) and of their
 * medians. NAN when a mean or median is 0 or unknown. */
struct bench_ratio {
        double mean, mean_err, median;
};
void bench_ratio_of(const struct bench_stats *a, const struct bench_stats *b,
                    struct bench_ratio *ret);

/* One command's timed runs, as bench recorded them (borrowed arrays of n). */
#define BENCH_RUNS_MAX 10000
#define BENCH_RUN_ID_MAX 80
struct bench_series {
        const char *command;
        size_t n;
        const struct run_figures *f;
        const char (*run_id)[BENCH_RUN_ID_MAX];
        /* --parameter-scan/--parameter-list: the parameter and its value
         * in this command; NULL: none */
        const char *param, *value;
};

/* Every figure of a series, derived once: overall and per class. */
struct bench_result {
        struct bench_stats wall, user, sys, mem_peak, mem_anon;
        struct bench_stats by_class[_BENCH_CLASS_MAX]; /* wall time of that class's runs */
};
/* Returns 0 or -ENOMEM. */
int bench_result_of(const struct bench_series *s, struct bench_result *ret);

/* Every series against the fastest by mean wall time (the reference, as
 * hyperfine's summary): one entry per other series. */
struct bench_cmp {
        size_t ref, other;        /* indexes into the series */
        struct bench_ratio ratio; /* other against ref: > 1 slower */
        bool mwu_ok;
        struct bench_mwu mwu; /* other's U against ref */
};
/* cmp holds n - 1 entries (n >= 2); *ret_ref the reference. Returns the
 * entries written, or -ENOMEM. */
int bench_compare(const struct bench_series *s, const struct bench_result *r, size_t n,
                  struct bench_cmp *cmp, size_t *ret_ref);
