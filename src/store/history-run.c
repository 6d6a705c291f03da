/* SPDX-License-Identifier: MIT */
#include "store/history-run.h"
#include "store/store-sql.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

/* A walk over the samples of a run: the column table index of each result
 * column from 1 on. */
struct sample_walk {
        size_t cols[SAMPLE_COLUMNS_MAX], n;
        unsigned char range[SAMPLE_COLUMNS_MAX]; /* enum range_kind of cols[] */
        store_sample_fn fn;
        void *userdata;
};

/* "SELECT seq, <the stored columns> FROM samples ...", the columns into w. */
static int samples_sql(struct store *st, struct sample_walk *w, struct dbuf *sql)
{
        bool has[SAMPLE_COLUMNS_MAX];
        int r;

        /* only the columns the file has: an older file's missing columns
         * stay unknown */
        r = store_sample_columns(st, has);
        if (r < 0)
                return r;
        r = dbuf_puts(sql, "SELECT seq");
        for (size_t i = 0; r >= 0 && i < sample_column_count() && i < SAMPLE_COLUMNS_MAX; i++) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);

                if (!has[i] || t == SAMPLE_COLUMN_ISO)
                        continue;
                /* names come from our column table, not from the file */
                r = dbuf_printf(sql, ", \"%s\"", name);
                w->range[w->n] = (unsigned char)range_of_column(name);
                w->cols[w->n++] = i;
        }
        return r < 0 ? r : dbuf_puts(sql, " FROM samples WHERE run = ? ORDER BY seq");
}

static int sample_row(void *ctx, sqlite3_stmt *s)
{
        struct sample_walk *w = ctx;
        struct sample smp;

        sample_clear(&smp);
        for (size_t k = 0; k < w->n; k++) {
                enum sample_column_type t;
                int c = (int)k + 1;

                (void)sample_column_name(w->cols[k], &t);
                if (t == SAMPLE_COLUMN_NUMBER) {
                        double v = sqlite3_column_double(s, c);

                        /* out of range (model/ranges.h): absent, as NULL */
                        if (sqlite3_column_type(s, c) != SQLITE_NULL && range_ok(w->range[k], v))
                                (void)sample_column_set_number(&smp, w->cols[k], v);
                } else {
                        const char *v = store_col_text(s, c);
                        (void)sample_column_set_text(&smp, w->cols[k], v ? v : "");
                }
        }
        return w->fn(w->userdata, &smp);
}

int64_t store_samples_each(struct store *st, int64_t id, store_sample_fn fn, void *userdata)
{
        struct sample_walk w = {.fn = fn, .userdata = userdata};
        _cleanup_dbuf_ struct dbuf sql = DBUF_INIT;
        int r = samples_sql(st, &w, &sql);

        return r < 0 ? r : store_query(st, sql.p, INT64_MAX, sample_row, &w, "i", id);
}

static int add_fact(void *userdata, const struct target_fact *t)
{
        struct run_facts *f = userdata;

        if (f->n < TARGETS_MAX)
                f->t[f->n++] = *t;
        return 0;
}

int store_targets_get(struct store *st, int64_t id, struct run_facts *ret)
{
        _cleanup_free_ struct run_facts *f = calloc(1, sizeof(*f));
        int64_t steps, cached;
        int r;

        if (!f)
                return -ENOMEM;
        r = store_targets_each(st, id, true, TARGETS_MAX, add_fact, f);
        if (r >= 0)
                r = store_run_steps(st, id, &steps, &cached);
        if (r < 0)
                return r;
        ret->n = f->n;
        memcpy(ret->t, f->t, f->n * sizeof(f->t[0]));
        ret->steps_set = steps >= 0 && cached >= 0;
        ret->steps = store_u32_of(steps);
        ret->cached = store_u32_of(cached);
        return (int)f->n;
}

int store_run_thresholds(const struct store_run *r, struct summary_config *cfg)
{
        int n = 0;

        if (isfinite(r->near_oom_mb)) {
                cfg->near_oom_mb = r->near_oom_mb;
                n++;
        }
        if (isfinite(r->low_disk_gb)) {
                cfg->low_disk_gb = r->low_disk_gb;
                n++;
        }
        return n;
}

/* ---- the log's compiler-cache blocks, back as the model's ---- */

struct cc_log_walk {
        struct targets *ts;
        double start_epoch;
};

static int cc_log_snapshot(void *userdata, const struct store_cache_snapshot *c)
{
        struct cc_log_walk *w = userdata;
        struct cc_block b = {
            .seen = c->taken_epoch - w->start_epoch,
            .size_bytes = c->size_bytes,
            .max_size_bytes = c->max_size_bytes,
            .files = c->files,
        };
        struct cc_blocks *cb;
        int k;

        for (k = 0; k < CC_TOOLS; k++)
                if (strcmp(c->tool, targets_cc_tool_name((enum cc_tool)k)) == 0)
                        break;
        if (k == CC_TOOLS || c->hits < 0 || c->misses < 0)
                return 0;
        b.hits = (uint64_t)c->hits;
        b.misses = (uint64_t)c->misses;
        copy_utf8_str(b.version, sizeof(b.version), c->version);
        cb = &w->ts->cc_log[k];
        if (strcmp(c->origin, "log-first") == 0) {
                cb->first = b;
                cb->blocks = 2;
        } else if (strcmp(c->origin, "log-last") == 0) {
                cb->last = b;
                if (!cb->blocks) {
                        cb->blocks = 1;
                        cb->first = b;
                }
        }
        return 0;
}

int store_cc_log_get(struct store *st, int64_t run, double start_epoch, struct targets *ts)
{
        struct cc_log_walk w = {ts, start_epoch};
        int r = store_cache_snapshots_each(st, run, cc_log_snapshot, &w);

        return r < 0 ? r : 0;
}
