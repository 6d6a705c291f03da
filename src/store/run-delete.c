/* SPDX-License-Identifier: MIT */
/* Removing a run from the history (buildtel prune): its rows in every
 * table, in one transaction. */
#include "store/store.h"
#include "store/store-sql.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/dbuf.h"
#include "util/macro.h"

/* The compiler-cache snapshots a run's log printed go with it; a
 * `buildtel cache` snapshot (origin 'cache') outlives it, unlinked. */
static const char *const cache_sql[] = {
    "DELETE FROM cache_snapshots WHERE run = ?1 AND origin <> 'cache'",
    "UPDATE cache_snapshots SET run = NULL WHERE run = ?1",
};

/* Run sql with ?1 = id. Returns the rows it changed, or -errno. */
static int exec_bound(struct store *st, const char *sql, int64_t id)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(st, sql, &s);

        if (r >= 0) {
                sqlite3_bind_int64(s, 1, id);
                r = store_step_end(st, sqlite3_step(s));
                if (r >= 0)
                        r = sqlite3_changes(sqlite3_db_handle(s));
        }
        sqlite3_finalize(s);
        return r;
}

/* The run's rows of every table that references runs (samples, targets,
 * units, steps, ninja_edges, and a newer schema's, whatever its ON
 * DELETE), one table (and column) a row of the schema query; the
 * snapshots are cache_sql's. */
struct others {
        struct store *st;
        int64_t id;
};

static int other_row(void *ctx, sqlite3_stmt *s)
{
        const struct others *o = ctx;
        const char *t = store_col_text(s, 0), *col = store_col_text(s, 1);
        _cleanup_dbuf_ struct dbuf sql = DBUF_INIT;

        if (!t || !col || strcmp(t, "cache_snapshots") == 0 || strchr(t, '"') || strchr(col, '"'))
                return 0;
        if (dbuf_printf(&sql, "DELETE FROM \"%s\" WHERE \"%s\" = ?1", t, col) < 0)
                return -ENOMEM;
        return exec_bound(o->st, sql.p, o->id);
}

static int delete_others(struct store *st, int64_t id)
{
        struct others o = {st, id};
        int64_t n = store_query(st,
                                "SELECT m.name, f.\"from\" FROM sqlite_master m,"
                                " pragma_foreign_key_list(m.name) f"
                                " WHERE m.type = 'table' AND f.\"table\" = 'runs'",
                                1000, other_row, &o, "");

        return n < 0 ? (int)n : 0;
}

int store_run_delete(struct store *st, int64_t id)
{
        int r = store_begin(st);

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(cache_sql); i++)
                r = exec_bound(st, cache_sql[i], id);
        if (r >= 0)
                r = delete_others(st, id);
        if (r >= 0)
                r = exec_bound(st, "DELETE FROM runs WHERE id = ?1", id);
        if (r == 0)
                r = -ENOENT;
        if (r >= 0)
                r = store_commit(st);
        if (r < 0)
                store_rollback(st);
        return r;
}
