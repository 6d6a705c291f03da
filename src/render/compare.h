/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/compare.h"
#include "util/dbuf.h"

/* `buildtel compare` formatted: the two runs and their differences
 * (model/compare.h), as text for a terminal or as JSON. Pure. */

/* Which runs A and B are (strings borrowed). */
struct compare_labels {
        const char *a_id, *b_id;           /* run ids */
        double a_start, b_start;           /* epoch seconds; NAN unknown */
        const char *a_outcome, *b_outcome; /* "ok", "exit 2", "OOM-killed"; NULL unknown */
};

/* Text: a header naming A and B (id, start, outcome), then the sections in
 * the result's order: the run's every row, each other section that changed
 * its changed rows, one aligned row each (people's labels, A, B, the change
 * and its %, or "noise", "only in A", "only in B"), at most max_rows a
 * section with a line saying how many more and the noise folded into one
 * line at its end (max_rows 0: every changed row, noise too); texts
 * (command, revision, host) as an A line and a B line; "no differences
 * beyond noise" when so. Texts the build controls are cleaned for a
 * terminal. Appends to out; 0 or -ENOMEM. */
int render_compare_text(const struct compare_result *res, const struct compare_labels *l,
                        size_t max_rows, struct dbuf *out);

/* JSON (2-space indent, a trailing newline): {"a": {"run_id",
 * "start_epoch", "outcome"}, "b": {...}, "quantum_s", "sections":
 * [{"section", "score", "rows": [{"subject", "figure" (a stable key),
 * "label", "a", "b", "change", "change_pct", "status", "noise"}]}]},
 * every row, sections and rows in the result's order; unknown numbers are
 * null, a text figure has texts in a and b. 0 or -ENOMEM. */
int render_compare_json(const struct compare_result *res, const struct compare_labels *l,
                        struct dbuf *out);
