/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/sample.h"
#include "util/csv.h"
#include "util/dbuf.h"

/* resources-<id>.csv: a header record, then one record per sample, in the
 * columns of model/sample.c's table (their names, units and decimals). */

/* Append the header record (column names, CRLF) to b. */
int samplecsv_header(struct dbuf *b);

/* Append s as one CSV record (CRLF-terminated) to b. iso is derived from
 * epoch. Numbers are written in their column's unit (MiB, GiB) with fixed
 * precision per column; NAN, infinities and magnitudes >= 1e15 (which
 * would not read back as plain decimals) are written as empty fields.
 * stage and context are cut at SAMPLE_STAGE_MAX / SAMPLE_CONTEXT_MAX bytes.
 * Returns 0, or -ENOMEM with b's length as it was. */
int samplecsv_format(const struct sample *s, struct dbuf *b);
/* The same with --csv-safe: text a spreadsheet would take for a formula
 * (stage, context from the build) gets a leading '. */
int samplecsv_format_safe(const struct sample *s, struct dbuf *b);

/* Called with each good row of a recorded CSV, in order (its strings are
 * borrowed for the call), and with NULL for each torn or junk row. */
typedef void (*samplecsv_fn)(void *userdata, const struct sample *s);

/* A recorded CSV read back: every row to fn. Returns the number of good
 * rows, or -EINVAL when buf does not start with a buildtel header, or
 * -ENOMEM. */
int64_t samplecsv_read(const char *buf, size_t len, samplecsv_fn fn, void *userdata);
