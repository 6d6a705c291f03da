/* SPDX-License-Identifier: MIT */
#include "store/history-run.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbuf.h"
#include "util/macro.h"

/* Which sample columns the samples table has: an older file lacks the
 * newer ones. */
static int stored_columns(sqlite3 *db, bool has[SAMPLE_COLUMNS_MAX])
{
        sqlite3_stmt *s = NULL;
        int r, rc;

        memset(has, 0, SAMPLE_COLUMNS_MAX * sizeof(*has));
        r = store_map_rc(
            db,
            sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo('samples')", -1, &s, NULL));
        if (r < 0)
                return r;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                const char *name = (const char *)sqlite3_column_text(s, 0);

                for (size_t i = 0; name && i < sample_column_count() && i < SAMPLE_COLUMNS_MAX;
                     i++) {
                        enum sample_column_type t;
                        const char *n = sample_column_name(i, &t);

                        if (t != SAMPLE_COLUMN_ISO && strcmp(n, name) == 0)
                                has[i] = true;
                }
        }
        r = rc == SQLITE_DONE ? 0 : store_map_rc(db, rc);
        sqlite3_finalize(s);
        return r;
}

int64_t history_run_samples(struct store *st, int64_t id, history_sample_fn fn, void *userdata)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        struct dbuf sql = DBUF_INIT;
        bool has[SAMPLE_COLUMNS_MAX];
        size_t cols[SAMPLE_COLUMNS_MAX], n = 0;
        int64_t rows = 0;
        int r, rc;

        r = stored_columns(db, has);
        if (r < 0)
                return r;
        r = dbuf_puts(&sql, "SELECT seq");
        for (size_t i = 0; r >= 0 && i < sample_column_count() && i < SAMPLE_COLUMNS_MAX; i++) {
                if (!has[i])
                        continue;
                /* names come from our column table, not from the file */
                r = dbuf_printf(&sql, ", \"%s\"", sample_column_name(i, NULL));
                cols[n++] = i;
        }
        if (r >= 0)
                r = dbuf_puts(&sql, " FROM samples WHERE run = ? ORDER BY seq");
        if (r >= 0)
                r = store_map_rc(db, sqlite3_prepare_v2(db, sql.p, -1, &s, NULL));
        dbuf_release(&sql);
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                struct sample smp;

                sample_clear(&smp);
                for (size_t k = 0; k < n; k++) {
                        enum sample_column_type t;
                        int c = (int)k + 1;

                        (void)sample_column_name(cols[k], &t);
                        if (t == SAMPLE_COLUMN_NUMBER) {
                                if (sqlite3_column_type(s, c) != SQLITE_NULL)
                                        (void)sample_column_set_number(&smp, cols[k],
                                                                       sqlite3_column_double(s, c));
                        } else {
                                const char *v = (const char *)sqlite3_column_text(s, c);
                                (void)sample_column_set_text(&smp, cols[k], v ? v : "");
                        }
                }
                r = fn(userdata, &smp);
                if (r < 0)
                        break;
                rows++;
        }
        if (r >= 0)
                r = rc == SQLITE_DONE ? 0 : store_map_rc(db, rc);
        sqlite3_finalize(s);
        return r < 0 ? r : rows;
}

/* A count column: absent when NULL or out of range. */
static bool count_of(sqlite3_stmt *s, int i, uint64_t *ret)
{
        int64_t v;

        if (sqlite3_column_type(s, i) == SQLITE_NULL)
                return false;
        v = sqlite3_column_int64(s, i);
        if (v < 0)
                return false;
        *ret = (uint64_t)v;
        return true;
}

static uint32_t u32_of(sqlite3_stmt *s, int i)
{
        uint64_t v = 0;

        (void)count_of(s, i, &v);
        return (uint32_t)MIN(v, (uint64_t)UINT32_MAX);
}

static void text_of(sqlite3_stmt *s, int i, char *dst, size_t cap)
{
        const char *v = (const char *)sqlite3_column_text(s, i);

        targets_copy_field(dst, cap, v ? v : "", v ? (size_t)sqlite3_column_bytes(s, i) : 0);
}

static void cc_of(sqlite3_stmt *s, int hits, int misses, struct cc_counts *ret)
{
        struct cc_counts c = {0};

        c.set = count_of(s, hits, &c.hits) && count_of(s, misses, &c.misses);
        if (c.set)
                *ret = c;
}

static int run_steps(struct store *st, int64_t id, struct run_facts *f)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        uint64_t steps = 0, cached = 0;
        int r = store_map_rc(
            db, sqlite3_prepare_v2(db, "SELECT steps, cached_steps FROM runs WHERE id = ?", -1, &s,
                                   NULL));
        int rc;

        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
                f->steps_set = count_of(s, 0, &steps) && count_of(s, 1, &cached);
                f->steps = (uint32_t)MIN(steps, (uint64_t)UINT32_MAX);
                f->cached = (uint32_t)MIN(cached, (uint64_t)UINT32_MAX);
        }
        r = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_map_rc(db, rc);
        sqlite3_finalize(s);
        return r;
}

/* One stored row as the fact it was written from (sink-sqlite.c). */
static void fact_of_row(sqlite3_stmt *s, struct target_fact *t)
{
        struct cc_counts cc = {0};

        memset(t, 0, sizeof(*t));
        text_of(s, 0, t->name, sizeof(t->name));
        t->start_s = t->end_s = NAN;
        t->duration_s =
            sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
        t->steps_set = sqlite3_column_type(s, 2) != SQLITE_NULL;
        t->steps = u32_of(s, 2);
        t->cached = u32_of(s, 3);
        t->success = TARGET_SUCCESS_UNKNOWN;
        if (sqlite3_column_type(s, 4) != SQLITE_NULL)
                t->success = sqlite3_column_int64(s, 4) == 1 ? TARGET_BUILT : TARGET_FAILED;
        text_of(s, 5, t->node, sizeof(t->node));
        text_of(s, 6, t->ref, sizeof(t->ref));
        text_of(s, 7, t->builder, sizeof(t->builder));
        cc_of(s, 8, 9, &t->sccache);
        cc_of(s, 10, 11, &t->ccache);
        targets_fact_ratios(t);
        /* a version-2 row has only the combined counts */
        cc_of(s, 12, 13, &cc);
        if (cc.set)
                t->cc = cc;
}

int history_run_targets(struct store *st, int64_t id, struct run_facts *ret)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        _cleanup_free_ struct run_facts *f = calloc(1, sizeof(*f));
        int r, rc = SQLITE_DONE;

        if (!f)
                return -ENOMEM;
        /* rowid: the order the run inserted them, which is the model's */
        r = store_map_rc(
            db, sqlite3_prepare_v2(db,
                                   "SELECT name, duration_s, steps, cached, success, node, ref,"
                                   " builder, sccache_hits, sccache_misses, ccache_hits,"
                                   " ccache_misses, cc_hits, cc_misses FROM targets WHERE run = ?"
                                   " ORDER BY rowid LIMIT ?",
                                   -1, &s, NULL));
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, TARGETS_MAX);
        while (f->n < TARGETS_MAX && (rc = sqlite3_step(s)) == SQLITE_ROW)
                fact_of_row(s, &f->t[f->n++]);
        r = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_map_rc(db, rc);
        sqlite3_finalize(s);
        if (r >= 0)
                r = run_steps(st, id, f);
        if (r < 0)
                return r;
        ret->n = f->n;
        memcpy(ret->t, f->t, f->n * sizeof(f->t[0]));
        ret->steps_set = f->steps_set;
        ret->steps = f->steps;
        ret->cached = f->cached;
        return (int)f->n;
}

int history_run_thresholds(struct store *st, int64_t id, struct summary_config *ret)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        struct summary_config c = *ret;
        int r, rc;

        /* SQLite reads the JSON: a stored summary is text like any other */
        r = store_map_rc(
            db, sqlite3_prepare_v2(db,
                                   "SELECT json_extract(summary_json, '$.thresholds.near_oom_mb'),"
                                   " json_extract(summary_json, '$.thresholds.low_disk_gb')"
                                   " FROM runs WHERE id = ? AND json_valid(summary_json)",
                                   -1, &s, NULL));
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
                int n = 0;

                for (int i = 0; i < 2; i++) {
                        int t = sqlite3_column_type(s, i);
                        double v = sqlite3_column_double(s, i);

                        if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !isfinite(v) || v < 0)
                                continue;
                        *(i == 0 ? &c.near_oom_mb : &c.low_disk_gb) = v;
                        n++;
                }
                r = n;
        } else {
                r = rc == SQLITE_DONE ? 0 : store_map_rc(db, rc);
        }
        sqlite3_finalize(s);
        if (r > 0)
                *ret = c;
        return r;
}
