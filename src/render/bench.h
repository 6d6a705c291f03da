/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/bench.h"
#include "util/dbuf.h"

/* buildtel bench's outputs, from the model's series, their results and
 * the comparison (cmp: nc entries, ref the reference; nc 0 for one
 * command). Each appends to out; returns 0 or -ENOMEM. */
struct bench_view {
        const struct bench_series *s;
        const struct bench_result *r;
        size_t n;
        const struct bench_cmp *cmp;
        size_t nc, ref;
};

/* One command's block as hyperfine prints it, i its 0-based index:
 * "Benchmark 1: CMD", "Time (mean ± σ)", "Range (min … max)", then the
 * classes, memory peaks, caches and run ids. */
int render_bench_series(const struct bench_view *v, size_t i, struct dbuf *out);
/* "Summary": each other command against the reference, with the ratio of
 * means (± its error), of medians and the Mann-Whitney U test. */
int render_bench_summary(const struct bench_view *v, struct dbuf *out);
/* hyperfine's --export-json: {"results": [...]} with its field names, and
 * buildtel's (run_ids, classes, mem_peak_mb ...); and "comparison". */
int render_bench_json(const struct bench_view *v, struct dbuf *out);
/* hyperfine's --export-markdown table, with a column of classes. */
int render_bench_markdown(const struct bench_view *v, struct dbuf *out);
