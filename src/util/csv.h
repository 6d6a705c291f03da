/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/dbuf.h"

/* RFC 4180 codec. Writing: records end in CRLF; a field is quoted when it
 * holds a comma, a double quote, CR or LF, and quotes inside are doubled.
 * Reading accepts CRLF or LF record ends. */

#define CSV_MAX_FIELDS 256

/* Append one field (no separator) to b. Returns 0 or -ENOMEM. */
int csv_append_field(struct dbuf *b, const char *s, size_t len);
/* The same, but a value a spreadsheet would take for a formula (starting
 * with =, +, -, @, a tab or a CR) gets a leading ' (--csv-safe). */
int csv_append_field_safe(struct dbuf *b, const char *s, size_t len);

/* One parsed record. Field i is data.p + off[i], len[i] bytes, unescaped,
 * and NUL-terminated in data. Init with CSV_RECORD_INIT, free with
 * csv_record_release(). */
struct csv_record {
        struct dbuf data;
        size_t nfields;
        size_t off[CSV_MAX_FIELDS];
        size_t len[CSV_MAX_FIELDS];
};
#define CSV_RECORD_INIT                                                                            \
        {                                                                                          \
                .data = DBUF_INIT, .nfields = 0                                                    \
        }
void csv_record_release(struct csv_record *r);

static inline const char *csv_field(const struct csv_record *r, size_t i)
{
        return r->data.p + r->off[i];
}

/* Parse the next record from buf[0..len).
 *  > 0: a complete, well-formed record (the value is its field count);
 *       *ret_consumed bytes were used.
 *    0: buf holds no complete record (empty, or the record lacks its
 *       line end, as the torn last row of a killed writer); *ret_consumed
 *       is 0 and rec is unspecified.
 *  -EINVAL: a malformed record (stray quote, junk after a closing quote,
 *       more than CSV_MAX_FIELDS fields); *ret_consumed is set past the
 *       end of the bad line so the caller can skip it and go on.
 *  -ENOMEM. */
int csv_parse_record(const char *buf, size_t len, struct csv_record *rec, size_t *ret_consumed);
