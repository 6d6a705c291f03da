/* SPDX-License-Identifier: MIT */
/* resources-<id>.csv: samples written as CSV records and read back. */
#include "runfiles/samplecsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ranges.h"
#include "util/util.h"

/* The seed's columns, the table's first, which every buildtel CSV has; the
 * rest may be missing in a file written before they were added. */
#define SEED_COLUMNS 14

/* Put b back to old's length after a failed append. */
static int cut_back(struct dbuf *b, size_t old, int r)
{
        if (r < 0) {
                b->len = old;
                if (b->p)
                        b->p[old] = '\0';
        }
        return r;
}

int samplecsv_header(struct dbuf *b)
{
        struct dwriter w = DWRITER_INIT(b);
        size_t old = b->len;

        for (size_t i = 0; i < sample_column_count(); i++) {
                if (i > 0)
                        dw_append(&w, ",", 1);
                dw_puts(&w, sample_column_name(i, NULL));
        }
        dw_append(&w, "\r\n", 2);
        return cut_back(b, old, w.err);
}

/* Fixed decimals; empty for what would not read back as a plain decimal.
 * A value that rounds to zero is written without its minus sign so that
 * "-0.0" never appears. */
static int format_num(struct dbuf *b, double v, int precision)
{
        char tmp[64];
        const char *p = tmp;
        double q;
        bool neg;
        int n;

        if (!isfinite(v) || fabs(v) >= 1e15)
                return 0;
        if (sample_round_scaled(v, precision, &q, &neg)) {
                /* The digits of q with the point put back: what printf
                 * writes, at a fraction of its cost (once per column per
                 * tick). */
                uint64_t u = (uint64_t)q;
                char *e = tmp + sizeof(tmp), *c = e;

                for (int k = 0; k <= precision || u > 0; k++) {
                        if (k == precision && precision > 0)
                                *--c = '.';
                        *--c = (char)('0' + u % 10);
                        u /= 10;
                }
                if (neg && q != 0)
                        *--c = '-';
                return dbuf_append(b, c, (size_t)(e - c));
        }
        n = snprintf(tmp, sizeof(tmp), "%.*f", precision, v);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return 0;
        if (tmp[0] == '-' && strspn(tmp + 1, "0.") == (size_t)(n - 1))
                p++;
        return dbuf_puts(b, p);
}

static int format(const struct sample *s, bool formula_safe, struct dbuf *b)
{
        size_t old = b->len, len;
        char iso[64];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < sample_column_count(); i++) {
                enum sample_column_type type;
                const char *str;

                (void)sample_column_name(i, &type);
                if (i > 0)
                        r = dbuf_append(b, ",", 1);
                if (r < 0)
                        break;
                switch (type) {
                case SAMPLE_COLUMN_NUMBER:
                        r = format_num(b, sample_column_number(s, i), sample_column_precision(i));
                        break;
                case SAMPLE_COLUMN_ISO:
                        if (format_iso8601(s->epoch, iso) >= 0)
                                r = dbuf_puts(b, iso);
                        break;
                case SAMPLE_COLUMN_TEXT:
                        str = sample_column_text(s, i, &len);
                        r = (formula_safe ? csv_append_field_safe : csv_append_field)(b, str, len);
                        break;
                }
        }
        if (r >= 0)
                r = dbuf_append(b, "\r\n", 2);
        return cut_back(b, old, r);
}

int samplecsv_format(const struct sample *s, struct dbuf *b)
{
        return format(s, false, b);
}

int samplecsv_format_safe(const struct sample *s, struct dbuf *b)
{
        return format(s, true, b);
}

/* Column positions found in a header record. Columns may appear in any
 * order and unknown ones are ignored; the seed's columns must be there,
 * the ones added later may be missing (a CSV of an older buildtel): they
 * read as NAN and "". */
struct colmap {
        int idx[SAMPLE_COLUMNS_MAX];             /* per known column: field index or -1 */
        size_t nfields;                          /* fields in the header */
        unsigned char range[SAMPLE_COLUMNS_MAX]; /* per known column: enum range_kind */
};

/* 0, or -EINVAL when rec is not a buildtel header. */
static int colmap_init(struct colmap *m, const struct csv_record *rec)
{
        struct colmap t;
        size_t n = sample_column_count();

        for (size_t i = 0; i < ARRAY_SIZE(t.idx); i++)
                t.idx[i] = -1;
        for (size_t i = 0; i < n; i++)
                t.range[i] = (unsigned char)range_of_column(sample_column_name(i, NULL));
        t.nfields = rec->nfields;
        for (size_t f = 0; f < rec->nfields; f++) {
                for (size_t i = 0; i < n; i++) {
                        const char *name = sample_column_name(i, NULL);

                        if (rec->len[f] != strlen(name) ||
                            memcmp(csv_field(rec, f), name, rec->len[f]) != 0)
                                continue;
                        if (t.idx[i] >= 0)
                                return -EINVAL; /* twice: which one is meant? */
                        t.idx[i] = (int)f;
                }
        }
        for (size_t i = 0; i < SEED_COLUMNS; i++)
                if (t.idx[i] < 0)
                        return -EINVAL;
        *m = t;
        return 0;
}

/* s from a data record (a *_mb field becomes bytes; strings point into
 * rec). -EINVAL, s untouched, for a junk row: the wrong field count, or a
 * number that does not parse or is out of its column's range. */
static int from_record(const struct colmap *m, const struct csv_record *rec, struct sample *s)
{
        struct sample t;

        if (rec->nfields != m->nfields)
                return -EINVAL;
        sample_clear(&t);
        for (size_t i = 0; i < sample_column_count(); i++) {
                enum sample_column_type type;
                int f = m->idx[i];
                const char *p, *end;
                double v;

                (void)sample_column_name(i, &type);
                if (f < 0 || (size_t)f >= rec->nfields)
                        continue;
                p = csv_field(rec, (size_t)f);
                end = p + rec->len[f];
                if (type == SAMPLE_COLUMN_TEXT)
                        (void)sample_column_set_text(&t, i, p);
                if (type != SAMPLE_COLUMN_NUMBER || p == end)
                        continue; /* ISO: epoch is the truth; empty: unknown, NAN */
                if (parse_double(&p, end, &v) < 0 || p != end || !range_ok(m->range[i], v))
                        return -EINVAL;
                (void)sample_column_set_number(&t, i, v);
        }
        *s = t;
        return 0;
}

int64_t samplecsv_read(const char *buf, size_t len, samplecsv_fn fn, void *userdata)
{
        struct csv_record rec = CSV_RECORD_INIT;
        struct colmap map;
        struct sample smp;
        size_t pos, used;
        int64_t good = 0;
        int r;

        r = csv_parse_record(buf, len, &rec, &used);
        if (r > 0)
                r = colmap_init(&map, &rec);
        else if (r == 0)
                r = -EINVAL; /* not even a whole header */
        if (r < 0)
                goto out;

        for (pos = used; pos < len; pos += used) {
                r = csv_parse_record(buf + pos, len - pos, &rec, &used);
                if (r == -ENOMEM)
                        goto out;
                if (r == 0) {
                        /* the torn last row of a writer that was killed */
                        fn(userdata, NULL);
                        break;
                }
                if (r < 0 || from_record(&map, &rec, &smp) < 0) {
                        fn(userdata, NULL);
                        continue;
                }
                fn(userdata, &smp);
                good++;
        }
        r = 0;
out:
        csv_record_release(&rec);
        return r < 0 ? r : good;
}
