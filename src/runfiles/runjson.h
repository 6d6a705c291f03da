/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "model/run.h"
#include "util/dbuf.h"

/* resources-<id>.run.json, written when a run starts and again at its end,
 * so that `summarize` rebuilds the same summary from files. */

/* Serialize as a JSON object (2-space indent, fixed key order, trailing
 * newline) appended to out. NULL strings and NAN times are null; doubles
 * are written with 17 significant digits so they parse back bit for bit.
 * Strings that are not valid UTF-8 (argv and cwd may hold any bytes) get
 * each offending byte replaced by U+FFFD: JSON cannot carry raw bytes, and
 * the summary only shows them. Returns 0 or -ENOMEM. */
int runjson_format(const struct run_info *ri, struct dbuf *out);

/* Parse what runjson_format() wrote. On success *ret owns copies of every
 * string. Returns 0, or -EINVAL for anything else (missing members keep
 * their "unknown" values: NAN times, exit_code -1). */
int runjson_parse(const char *buf, size_t len, struct run_info *ret);

/* Its "processes" object (the kernel's account of the build's processes),
 * also summary.json's and the history's: a new object, json null when
 * none were accounted (NULL: out of memory); and read back from such a
 * value (null: none): 0, or -EINVAL. */
json_t *runjson_procs(const struct run_procs *p);
int runjson_procs_parse(json_t *v, struct run_procs *ret);
/* run --memory-guard's account (run_info.guard), the run.json and
 * summary.json key "memory_guard"; null when off. Parse: null or absent
 * is off; -EINVAL for a bad one. */
json_t *runjson_guard(const struct run_guard *g);
int runjson_guard_parse(json_t *v, struct run_guard *ret);
