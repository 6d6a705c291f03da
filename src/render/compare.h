/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/compare.h"
#include "util/dbuf.h"

/* `buildtel compare` formatted: the two runs and their differences
 * (model/compare.h), as text for a terminal or as JSON. Pure. */

/* Which runs A and B are (strings borrowed). */
struct compare_labels {
        const char *a_id, *b_id; /* run ids */
        double a_start, b_start; /* epoch seconds; NAN unknown */
};

/* Text: a header naming A and B, then each section that changed, in the
 * result's order: one aligned row per changed figure (A, B, the change
 * and its %), at most max_rows a section (0: all) with a line saying how
 * many more; texts (command, revision, host) as an A line and a B line.
 * "no differences" when nothing changed. Texts the build controls are
 * cleaned for a terminal. Appends to out; 0 or -ENOMEM. */
int render_compare_text(const struct compare_result *res, const struct compare_labels *l,
                        size_t max_rows, struct dbuf *out);

/* JSON (2-space indent, a trailing newline): {"a": {"run_id",
 * "start_epoch"}, "b": {...}, "sections": [{"section", "score", "rows":
 * [{"subject", "figure", "a", "b", "change", "change_pct", "status"}]}]},
 * every row, sections and rows in the result's order; unknown numbers are
 * null, a text figure has texts in a and b. 0 or -ENOMEM. */
int render_compare_json(const struct compare_result *res, const struct compare_labels *l,
                        struct dbuf *out);
