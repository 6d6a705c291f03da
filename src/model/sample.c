/* SPDX-License-Identifier: MIT */
#include "model/sample.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

#define COL_NUM SAMPLE_COLUMN_NUMBER /* double in struct sample, fixed decimals */
#define COL_ISO SAMPLE_COLUMN_ISO    /* derived from epoch when writing, ignored when reading */
#define COL_STR SAMPLE_COLUMN_TEXT   /* const char * in struct sample */

struct column {
        const char *name;
        enum sample_column_type kind;
        int precision; /* decimals, COL_NUM only */
        size_t offset; /* in struct sample; unused for COL_ISO */
        size_t max;    /* COL_STR: bytes written at most */
        double scale;  /* COL_NUM: struct units per column unit (bytes per MiB) */
};

#define MiB SAMPLE_MIB
#define GiB SAMPLE_GIB

/* The CSV layout, in order. A new column is one line here, appended at the
 * end so that older readers of the file keep their positions. */
static const struct column columns[] = {
    {"epoch", COL_NUM, 3, offsetof(struct sample, epoch), 0, 1},
    {"iso", COL_ISO, 0, 0, 0, 1},
    {"elapsed_s", COL_NUM, 3, offsetof(struct sample, elapsed_s), 0, 1},
    {"load1", COL_NUM, 2, offsetof(struct sample, load1), 0, 1},
    {"cpu_pct", COL_NUM, 1, offsetof(struct sample, cpu_pct), 0, 1},
    {"mem_used_mb", COL_NUM, 0, offsetof(struct sample, mem_used_bytes), 0, MiB},
    {"mem_avail_mb", COL_NUM, 0, offsetof(struct sample, mem_avail_bytes), 0, MiB},
    {"mem_pct", COL_NUM, 1, offsetof(struct sample, mem_pct), 0, 1},
    {"swap_used_mb", COL_NUM, 0, offsetof(struct sample, swap_used_bytes), 0, MiB},
    {"disk_avail_gb", COL_NUM, 2, offsetof(struct sample, disk_avail_bytes), 0, GiB},
    {"disk_pct", COL_NUM, 1, offsetof(struct sample, disk_pct), 0, 1},
    {"compilers", COL_NUM, 0, offsetof(struct sample, compilers), 0, 1},
    {"stage", COL_STR, 0, offsetof(struct sample, stage), SAMPLE_STAGE_MAX, 1},
    {"context", COL_STR, 0, offsetof(struct sample, context), SAMPLE_CONTEXT_MAX, 1},
    /* The build's own accounting (issue 3); optional when reading. */
    {"cg_mode", COL_STR, 0, offsetof(struct sample, cg_mode), SAMPLE_MODE_MAX, 1},
    {"cg_cpu_user_s", COL_NUM, 3, offsetof(struct sample, cg_cpu_user_s), 0, 1},
    {"cg_cpu_sys_s", COL_NUM, 3, offsetof(struct sample, cg_cpu_sys_s), 0, 1},
    {"cg_mem_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_bytes), 0, MiB},
    {"cg_mem_peak_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_peak_bytes), 0, MiB},
    {"cg_oom_kills", COL_NUM, 0, offsetof(struct sample, cg_oom_kills), 0, 1},
    {"cg_io_read_mb", COL_NUM, 1, offsetof(struct sample, cg_io_read_bytes), 0, MiB},
    {"cg_io_write_mb", COL_NUM, 1, offsetof(struct sample, cg_io_write_bytes), 0, MiB},
    {"cg_psi_cpu_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi.some_s[PSI_CPU]), 0, 1},
    {"cg_psi_cpu_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi.full_s[PSI_CPU]), 0, 1},
    {"cg_psi_mem_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi.some_s[PSI_MEM]), 0, 1},
    {"cg_psi_mem_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi.full_s[PSI_MEM]), 0, 1},
    {"cg_psi_io_some_s", COL_NUM, 3, offsetof(struct sample, cg_psi.some_s[PSI_IO]), 0, 1},
    {"cg_psi_io_full_s", COL_NUM, 3, offsetof(struct sample, cg_psi.full_s[PSI_IO]), 0, 1},
    {"cg_pids", COL_NUM, 0, offsetof(struct sample, cg_pids), 0, 1},
    {"cg_pids_peak", COL_NUM, 0, offsetof(struct sample, cg_pids_peak), 0, 1},
    {"top_proc", COL_STR, 0, offsetof(struct sample, top_proc), SAMPLE_PROC_MAX, 1},
    {"top_proc_mb", COL_NUM, 1, offsetof(struct sample, top_proc_bytes), 0, MiB},
    {"top_pid", COL_NUM, 0, offsetof(struct sample, top_pid), 0, 1},
    {"top2_proc", COL_STR, 0, offsetof(struct sample, top2_proc), SAMPLE_PROC_MAX, 1},
    {"top2_proc_mb", COL_NUM, 1, offsetof(struct sample, top2_proc_bytes), 0, MiB},
    {"top2_pid", COL_NUM, 0, offsetof(struct sample, top2_pid), 0, 1},
    {"top3_proc", COL_STR, 0, offsetof(struct sample, top3_proc), SAMPLE_PROC_MAX, 1},
    {"top3_proc_mb", COL_NUM, 1, offsetof(struct sample, top3_proc_bytes), 0, MiB},
    {"top3_pid", COL_NUM, 0, offsetof(struct sample, top3_pid), 0, 1},
    /* What was really running (issue 10). */
    {"cg_mem_anon_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_anon_bytes), 0, MiB},
    {"cg_mem_file_mb", COL_NUM, 1, offsetof(struct sample, cg_mem_file_bytes), 0, MiB},
    {"running", COL_STR, 0, offsetof(struct sample, running), SAMPLE_RUNNING_MAX, 1},
    /* Memory that adds up (issue 21). */
    {"top_proc_anon_mb", COL_NUM, 1, offsetof(struct sample, top_proc_anon_bytes), 0, MiB},
    /* The OOM killer's own report of its victim (issue 19). */
    {"oom_victim", COL_STR, 0, offsetof(struct sample, oom_victim), SAMPLE_PROC_MAX, 1},
    {"oom_victim_pid", COL_NUM, 0, offsetof(struct sample, oom_victim_pid), 0, 1},
};

static_assert(ARRAY_SIZE(columns) <= SAMPLE_COLUMNS_MAX, "grow SAMPLE_COLUMNS_MAX");

static double *num_at(struct sample *s, const struct column *c)
{
        return (double *)(void *)((char *)s + c->offset);
}

/* The value in the column's unit. The scales are powers of two, so the
 * division and the multiplication back are exact. */
static double col_get(const struct sample *s, const struct column *c)
{
        return *(const double *)(const void *)((const char *)s + c->offset) / c->scale;
}

static void col_set(struct sample *s, const struct column *c, double v)
{
        *num_at(s, c) = v * c->scale;
}

static const char **str_at(struct sample *s, const struct column *c)
{
        return (const char **)(void *)((char *)s + c->offset);
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

static const double powers_of_ten[] = {1, 10, 100, 1000, 10000, 100000, 1000000};

/* The slow exact path of sample_round_decimals(): what the CSV does. */
static double round_by_text(double x, int prec)
{
        char tmp[64];
        double v;
        int n = snprintf(tmp, sizeof(tmp), "%.*f", prec, x);

        if (n < 0 || (size_t)n >= sizeof(tmp))
                return NAN;
        v = strtod(tmp, NULL);
        return v == 0 ? 0.0 : v;
}

bool sample_round_scaled(double x, int prec, double *ret_q, bool *ret_neg)
{
        double y, err, a, f, d;

        if (!isfinite(x) || fabs(x) >= 1e15 || prec < 0 ||
            (size_t)prec >= ARRAY_SIZE(powers_of_ten))
                return false;
        y = x * powers_of_ten[prec];
        if (fabs(y) >= 0x1p52)
                return false;
        /* y is x*10^prec rounded; err is what that rounding lost (exact, by
         * fma), so the exact product is y + err. Work on the magnitude:
         * floor(a) and a - floor(a) are exact there (Sterbenz), and a value
         * that is not a tie cannot cross one by err, which is under half an
         * ulp of y. */
        err = fma(x, powers_of_ten[prec], -y);
        a = fabs(y);
        if (y < 0)
                err = -err;
        f = floor(a);
        d = a - f;
        if (d > 0.5 || (d == 0.5 && (err > 0 || (err == 0 && fmod(f, 2.0) != 0))))
                f += 1;
        *ret_q = f;
        *ret_neg = y < 0;
        return true;
}

double sample_round_decimals(double x, int prec)
{
        double q;
        bool neg;

        if (!isfinite(x) || fabs(x) >= 1e15)
                return NAN; /* written as an empty field */
        if (!sample_round_scaled(x, prec, &q, &neg))
                return round_by_text(x, prec);
        if (q == 0)
                return 0.0; /* "-0.0" is written without its sign */
        /* Correctly rounded q / 10^prec is strtod()'s reading of the digits. */
        return (neg ? -q : q) / powers_of_ten[prec];
}

void sample_round(const struct sample *s, struct sample *ret)
{
        if (ret != s)
                *ret = *s;
        for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
                const struct column *c = &columns[i];

                if (c->kind == COL_NUM)
                        col_set(ret, c, sample_round_decimals(col_get(s, c), c->precision));
        }
}

size_t sample_column_count(void)
{
        return ARRAY_SIZE(columns);
}

const char *sample_column_name(size_t i, enum sample_column_type *ret_type)
{
        if (i >= ARRAY_SIZE(columns))
                return NULL;
        if (ret_type)
                *ret_type = columns[i].kind;
        return columns[i].name;
}

double sample_column_number(const struct sample *s, size_t i)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_NUM)
                return NAN;
        return col_get(s, &columns[i]);
}

const char *sample_column_text(const struct sample *s, size_t i, size_t *ret_len)
{
        const char *str;

        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_STR)
                return NULL;
        str = *(const char *const *)(const void *)((const char *)s + columns[i].offset);
        if (!str)
                str = "";
        *ret_len = strnlen(str, columns[i].max);
        return str;
}

int sample_column_precision(size_t i)
{
        return i < ARRAY_SIZE(columns) && columns[i].kind == COL_NUM ? columns[i].precision : -1;
}

int sample_column_set_number(struct sample *s, size_t i, double v)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_NUM)
                return -EINVAL;
        col_set(s, &columns[i], v);
        return 0;
}

int sample_column_set_text(struct sample *s, size_t i, const char *text)
{
        if (i >= ARRAY_SIZE(columns) || columns[i].kind != COL_STR)
                return -EINVAL;
        *str_at(s, &columns[i]) = text;
        return 0;
}
