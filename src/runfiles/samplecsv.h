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

/* Column positions found in a header record. Columns may appear in any
 * order and unknown ones are ignored; the seed's columns must be there,
 * the ones added later may be missing (a CSV of an older buildtel): they
 * read as NAN and "". */
struct samplecsv_colmap {
        int idx[SAMPLE_COLUMNS_MAX];             /* per known column: field index or -1 */
        size_t nfields;                          /* fields in the header */
        unsigned char range[SAMPLE_COLUMNS_MAX]; /* per known column: enum range_kind */
};

/* Returns 0, or -EINVAL when rec is not a buildtel header. */
int samplecsv_colmap_init(struct samplecsv_colmap *m, const struct csv_record *rec);

/* Fill s from a data record (numbers in the model's units: a *_mb field
 * becomes bytes). Strings point into rec. Returns 0, or
 * -EINVAL when the record has the wrong field count or a number does not
 * parse or is out of its column's range (model/ranges.h): a junk row; s is
 * untouched then. */
int samplecsv_from_record(const struct samplecsv_colmap *m, const struct csv_record *rec,
                          struct sample *s);

/* Called with each good row of a recorded CSV, in order (its strings are
 * borrowed for the call), and with NULL for each torn or junk row. */
typedef void (*samplecsv_fn)(void *userdata, const struct sample *s);

/* A recorded CSV read back: every row to fn. Returns the number of good
 * rows, or -EINVAL when buf does not start with a buildtel header, or
 * -ENOMEM. */
int64_t samplecsv_read(const char *buf, size_t len, samplecsv_fn fn, void *userdata);
