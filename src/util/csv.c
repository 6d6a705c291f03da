/* SPDX-License-Identifier: MIT */
#include "util/csv.h"

#include <errno.h>
#include <string.h>

static bool needs_quotes(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
                        return true;
        return false;
}

/* prefix (a mark that needs no quoting) and s as one field */
static int append_field(struct dbuf *b, const char *prefix, const char *s, size_t len)
{
        const char *p = s, *end = s + len, *q;
        bool quoted = needs_quotes(s, len);
        int r = dbuf_printf(b, "%s%s", quoted ? "\"" : "", prefix);

        while (r >= 0 && quoted && (q = memchr(p, '"', (size_t)(end - p)))) {
                /* copy through the quote, then double it */
                r = dbuf_append(b, p, (size_t)(q - p) + 1);
                if (r >= 0)
                        r = dbuf_append(b, "\"", 1);
                p = q + 1;
        }
        if (r >= 0)
                r = dbuf_append(b, p, (size_t)(end - p));
        if (r >= 0 && quoted)
                r = dbuf_append(b, "\"", 1);
        return r;
}

int csv_append_field(struct dbuf *b, const char *s, size_t len)
{
        return append_field(b, "", s, len);
}

void csv_record_release(struct csv_record *r)
{
        if (!r)
                return;
        dbuf_release(&r->data);
        r->nfields = 0;
}

/* Close field number rec->nfields that started at data offset start. */
static int end_field(struct csv_record *rec, size_t start)
{
        if (rec->nfields >= CSV_MAX_FIELDS)
                return -EINVAL;
        rec->off[rec->nfields] = start;
        rec->len[rec->nfields] = rec->data.len - start;
        rec->nfields++;
        /* a NUL after each field so csv_field() is a C string */
        return dbuf_append(&rec->data, "", 1);
}

int csv_parse_record(const char *buf, size_t len, struct csv_record *rec, size_t *ret_consumed)
{
        const char *nl;
        size_t i = 0;
        int r;

        dbuf_reset(&rec->data);
        rec->nfields = 0;
        if (len == 0) {
                *ret_consumed = 0;
                return 0;
        }

        for (;;) {
                size_t start = rec->data.len;

                if (i < len && buf[i] == '"') {
                        /* quoted: runs to a quote not followed by a quote */
                        i++;
                        for (;;) {
                                const char *q = memchr(buf + i, '"', len - i);
                                size_t n = q ? (size_t)(q - (buf + i)) : 0;
                                bool doubled;

                                /* no quote yet, or the last byte: it may yet be doubled */
                                if (!q || i + n + 1 >= len)
                                        goto torn;
                                doubled = q[1] == '"';
                                /* through the quote when doubled: one of the two kept */
                                r = dbuf_append(&rec->data, buf + i, n + doubled);
                                if (r < 0)
                                        return r;
                                i += n + 1 + doubled;
                                if (!doubled)
                                        break;
                        }
                } else {
                        size_t s = i;

                        while (i < len && buf[i] != ',' && buf[i] != '\r' && buf[i] != '\n') {
                                if (buf[i] == '"')
                                        goto bad; /* a quote inside an unquoted field */
                                i++;
                        }
                        r = dbuf_append(&rec->data, buf + s, i - s);
                        if (r < 0)
                                return r;
                }

                /* after a field: a separator or the record's end, nothing else */
                if (i >= len)
                        goto torn;
                r = end_field(rec, start);
                if (r == -EINVAL)
                        goto bad;
                if (r < 0)
                        return r;
                if (buf[i] == ',') {
                        i++;
                        continue;
                }
                if (buf[i] == '\n') {
                        i++;
                        break;
                }
                if (buf[i] == '\r') {
                        if (i + 1 >= len)
                                goto torn;
                        if (buf[i + 1] != '\n')
                                goto bad; /* a bare CR */
                        i += 2;
                        break;
                }
                goto bad; /* junk after a closing quote */
        }
        *ret_consumed = i;
        return (int)rec->nfields;

torn:
        *ret_consumed = 0;
        return 0;
bad:
        /* the caller resumes just past the bad line's LF (none: the end) */
        nl = memchr(buf + i, '\n', len - i);
        *ret_consumed = nl ? (size_t)(nl - buf) + 1 : len;
        return -EINVAL;
}

int csv_append_field_safe(struct dbuf *b, const char *s, size_t len)
{
        return append_field(b, len && strchr("=+-@\t\r", s[0]) ? "'" : "", s, len);
}
