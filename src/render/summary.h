/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"
#include "model/summary.h"
#include "util/dbuf.h"

/* Rendering of a summary. The text and JSON forms carry the same numbers. */

/* Pretty JSON (2-space indent, stable key order, trailing newline). */
int render_summary_json(const struct summary *s, const struct run_info *ri, struct dbuf *out);
/* The full text form (summary.txt). */
int render_summary_text(const struct summary *s, const struct run_info *ri, struct dbuf *out);
/* A few lines for stderr at exit. */
int render_summary_short(const struct summary *s, const struct run_info *ri, struct dbuf *out);
