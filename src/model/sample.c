/* SPDX-License-Identifier: MIT */
#include "model/sample.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/ranges.h"
#include "util/macro.h"
#include "util/util.h"

enum column_kind {
        COL_NUM, /* double in struct sample, fixed decimals */
        COL_ISO, /* derived from epoch when writing, ignored when reading */
        COL_STR, /* const char * in struct sample */
};

struct column {
        const char *name;
        enum column_kind kind;
        int precision; /* decimals, COL_NUM only */
        size_t offset; /* in struct sample; unused for COL_ISO */
        size_t max;    /* COL_STR: bytes written at most */
};

/* The CSV layout, in order. A new column is one line here, appended at the
 * end so that older readers of the file keep their positions. */
static const struct column columns[] = {
    {"epoch", COL_NUM, 3, offsetof(struct sample, epoch), 0},
    {"iso", COL_ISO, 0, 0, 0},
    {"elapsed_s", COL_NUM, 3, offsetof(struct sample, elapsed_s), 0},
    {"load1", COL_NUM, 2, offsetof(struct sample, load1), 0},
    {"cpu_pct", COL_NUM, 1, offsetof(struct sample, cpu_pct), 0},
    {"mem_used_mb", COL_NUM, 0, offsetof(struct sample, mem_used_mb), 0},
    {"mem_avail_mb", COL_NUM, 0, offsetof(struct sample, mem_avail_mb), 0},
    {"mem_pct", COL_NUM, 1, offsetof(struct sample, mem_pct), 0},
    {"swap_used_mb", COL_NUM, 0, offsetof(struct sample, swap_used_mb), 0},
    {"disk_avail_gb", COL_NUM, 2, offsetof(struct sample, disk_avail_gb), 0},
    {"disk_pct", COL_NUM, 1, offsetof(struct sample, disk_pct), 0},
    {"compilers", COL_NUM, 0, offsetof(struct sample, compilers), 0},
    {"stage", COL_STR, 0, offsetof(struct sample, stage), SAMPLE_STAGE_MAX},
    {"context", COL_STR, 0, offsetof(struct sample, context), SAMPLE_CONTEXT_MAX},
    /* The build's own accounting (issue 3); optional when reading. */
    {"cg_mode", COL_STR, 0, offsetof(struct sample, cg_mode), SAMPLE_MODE_MAX},
    {"cg_cpu_user_s", COL_NUM, 3, offsetof(struct sample, cg_cpu_user_s), 0},
    {"cg_cpu_sys_s", COL_NUM, 3, offsetof(struct sample, cg_cpu_sys_s), 0},
    {"cg_mem_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_mb), 0},
    {"cg_mem_peak_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_peak_mb), 0},
    {"cg_oom_kills", COL_NUM, 0, offsetof(struct sample, cg_oom_kills), 0},
    {"cg_io_read_mb", COL_NUM, 1, offsetof(struct sample, cg_io_read_mb), 0},
    {"cg_io_write_mb", COL_NUM, 1, offsetof(struct sample, cg_io_write_mb), 0},
    {"cg_psi_cpu_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi_cpu_some_s), 0},
    {"cg_psi_cpu_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi_cpu_full_s), 0},
    {"cg_psi_mem_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi_mem_some_s), 0},
    {"cg_psi_mem_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi_mem_full_s), 0},
    {"cg_psi_io_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi_io_some_s), 0},
    {"cg_psi_io_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi_io_full_s), 0},
    {"cg_pids", COL_NUM, 0, offsetof(struct sample, cg_pids), 0},
    {"cg_pids_peak", COL_NUM, 0, offsetof(struct sample, cg_pids_peak), 0},
    {"top_proc", COL_STR, 0, offsetof(struct sample, top_proc), SAMPLE_PROC_MAX},
    {"top_proc_mb", COL_NUM, 1, offsetof(struct sample, top_proc_mb), 0},
    {"top_pid", COL_NUM, 0, offsetof(struct sample, top_pid), 0},
    {"top2_proc", COL_STR, 0, offsetof(struct sample, top2_proc), SAMPLE_PROC_MAX},
    {"top2_proc_mb", COL_NUM, 1, offsetof(struct sample, top2_proc_mb), 0},
    {"top2_pid", COL_NUM, 0, offsetof(struct sample, top2_pid), 0},
    {"top3_proc", COL_STR, 0, offsetof(struct sample, top3_proc), SAMPLE_PROC_MAX},
    {"top3_proc_mb", COL_NUM, 1, offsetof(struct sample, top3_proc_mb), 0},
    {"top3_pid", COL_NUM, 0, offsetof(struct sample, top3_pid), 0},
};

/* The seed's columns, which every buildtel CSV has; the rest may be missing
 * in a file written before they were added. */
#define SEED_COLUMNS 14

static_assert(ARRAY_SIZE(columns) <= SAMPLE_COLUMNS_MAX, "grow SAMPLE_COLUMNS_MAX");

static double *num_at(struct sample *s, const struct column *c)
{
        return (double *)(void *)((char *)s + c->offset);
}

static double num_get(const struct sample *s, const struct column *c)
{
        return *(const double *)(const void *)((const char *)s + c->offset);
}

static const char **str_at(struct sample *s, const struct column *c)
{
        return (const char **)(void *)((char *)s + c->offset);
}

static const char *str_get(const struct sample *s, const struct column *c)
{
        return *(const char *const *)(const void *)((const char *)s + c->offset);
}

void sample_clear(struct sample *s)
{
        for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
                if (columns[i].kind == COL_NUM)
                        *num_at(s, &columns[i]) = NAN;
                else if (columns[i].kind == COL_STR)
                        *str_at(s, &columns[i]) = "";
        }
}

int sample_csv_header(struct dbuf *b)
{
        size_t old = b->len;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(columns); i++) {
                if (i > 0)
                        r = dbuf_append(b, ",", 1);
                if (r >= 0)
                        r = dbuf_puts(b, columns[i].name);
        }
        if (r >= 0)
                r = dbuf_append(b, "\r\n", 2);
        if (r < 0) {
                b->len = old;
                if (b->p)
                        b->p[old] = '\0';
        }
        return r;
}

/* Fixed decimals; empty for what would not read back as a plain decimal.
 * A value that rounds to zero is written without its minus sign so that
 * "-0.0" never appears. */
static int format_num(struct dbuf *b, double v, int precision)
{
        char tmp[64];
        const char *p = tmp;
        int n;

        if (!isfinite(v) || fabs(v) >= 1e15)
                return 0;
        n = snprintf(tmp, sizeof(tmp), "%.*f", precision, v);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return 0;
        if (tmp[0] == '-' && strspn(tmp + 1, "0.") == (size_t)(n - 1))
                p++;
        return dbuf_puts(b, p);
}

int sample_csv_format(const struct sample *s, struct dbuf *b)
{
        size_t old = b->len;
        char iso[64];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(columns); i++) {
                const struct column *c = &columns[i];
                const char *str;

                if (i > 0)
                        r = dbuf_append(b, ",", 1);
                if (r < 0)
                        break;
                switch (c->kind) {
                case COL_NUM:
                        r = format_num(b, num_get(s, c), c->precision);
                        break;
                case COL_ISO:
                        if (format_iso8601(s->epoch, iso) >= 0)
                                r = dbuf_puts(b, iso);
                        break;
                case COL_STR:
                        str = str_get(s, c);
                        if (str)
                                r = csv_append_field(b, str, strnlen(str, c->max));
                        break;
                }
        }
        if (r >= 0)
                r = dbuf_append(b, "\r\n", 2);
        if (r < 0) {
                b->len = old;
                if (b->p)
                        b->p[old] = '\0';
        }
        return r;
}

int sample_colmap_init(struct sample_colmap *m, const struct csv_record *rec)
{
        struct sample_colmap t;

        for (size_t i = 0; i < ARRAY_SIZE(t.idx); i++)
                t.idx[i] = -1;
        for (size_t i = 0; i < ARRAY_SIZE(columns); i++)
                t.range[i] = (unsigned char)range_of_column(columns[i].name);
        t.nfields = rec->nfields;
        for (size_t f = 0; f < rec->nfields; f++) {
                for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
                        if (rec->len[f] != strlen(columns[i].name) ||
                            memcmp(csv_field(rec, f), columns[i].name, rec->len[f]) != 0)
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

int sample_from_record(const struct sample_colmap *m, const struct csv_record *rec,
                       struct sample *s)
{
        struct sample t;

        if (rec->nfields != m->nfields)
                return -EINVAL;
        sample_clear(&t);
        for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
                const struct column *c = &columns[i];
                int f = m->idx[i];
                const char *p, *end;

                if (f < 0 || (size_t)f >= rec->nfields)
                        continue;
                p = csv_field(rec, (size_t)f);
                end = p + rec->len[f];
                switch (c->kind) {
                case COL_NUM:
                        if (p == end)
                                break; /* unknown: stays NAN */
                        if (parse_double(&p, end, num_at(&t, c)) < 0 || p != end ||
                            !range_ok(m->range[i], *num_at(&t, c)))
                                return -EINVAL;
                        break;
                case COL_ISO:
                        break; /* epoch is the truth */
                case COL_STR:
                        *str_at(&t, c) = p;
                        break;
                }
        }
        *s = t;
        return 0;
}

size_t sample_column_count(void)
{
        return ARRAY_SIZE(columns);
}

const char *sample_column_name(size_t i, enum sample_column_type *ret_type)
{
        if (i >= ARRAY_SIZE(columns))
                return NULL;
        /* a switch without default: a new kind is a -Wswitch warning here */
        if (ret_type) {
                switch (columns[i].kind) {
                case COL_NUM:
                        *ret_type = SAMPLE_COLUMN_NUMBER;
                        break;
                case COL_STR:
                        *ret_type = SAMPLE_COLUMN_TEXT;
                        break;
                case COL_ISO:
                        *ret_type = SAMPLE_COLUMN_ISO;
                        break;
                }
        }
        return columns[i].name;
}

double sample_column_number(const struct sample *s, size_t i)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_NUM)
                return NAN;
        return num_get(s, &columns[i]);
}

const char *sample_column_text(const struct sample *s, size_t i, size_t *ret_len)
{
        const char *str;

        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_STR)
                return NULL;
        str = str_get(s, &columns[i]);
        if (!str)
                str = "";
        *ret_len = strnlen(str, columns[i].max);
        return str;
}

int sample_column_set_number(struct sample *s, size_t i, double v)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_NUM)
                return -EINVAL;
        *num_at(s, &columns[i]) = v;
        return 0;
}

int sample_column_set_text(struct sample *s, size_t i, const char *text)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_STR)
                return -EINVAL;
        *str_at(s, &columns[i]) = text;
        return 0;
}
