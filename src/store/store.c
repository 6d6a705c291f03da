/* SPDX-License-Identifier: MIT */
#include "store/store.h"
#include "store/store-sql.h"

#include "model/figures.h"
#include "model/targets.h"
#include "model/units.h"
#include "render/jsonw.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

/* Version 1: runs and the seed's sample columns. Kept verbatim: it is what
 * a version-1 file holds (tests/fixtures/history-v1 is one). */
static const char schema_v1[] =
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " run_id TEXT NOT NULL UNIQUE,"
    " kind TEXT NOT NULL,"
    " argv TEXT NOT NULL," /* a JSON array */
    " cwd TEXT, host TEXT,"
    " start_epoch REAL NOT NULL, end_epoch REAL,"
    " state TEXT NOT NULL," /* running | finished */
    " exit_code INTEGER, term_signal INTEGER,"
    " pid INTEGER, ncpu INTEGER, interval REAL,"
    " recorder_pid INTEGER, recorder_start INTEGER, boot_id TEXT,"
    " samples INTEGER NOT NULL DEFAULT 0,"
    " mem_total_mb REAL, mem_used_peak_mb REAL, mem_used_peak_elapsed_s REAL,"
    " mem_used_peak_stage TEXT, mem_used_peak_context TEXT,"
    " mem_avail_min_mb REAL, swap_used_peak_mb REAL, disk_avail_min_gb REAL,"
    " load1_peak REAL, cpu_pct_peak REAL, cpu_pct_avg REAL, compilers_peak REAL,"
    " near_oom_samples INTEGER, low_disk_samples INTEGER,"
    " summary_json TEXT);"
    "CREATE INDEX runs_start ON runs(start_epoch);"
    "CREATE TABLE samples ("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " epoch REAL, elapsed_s REAL, load1 REAL, cpu_pct REAL, mem_used_mb REAL,"
    " mem_avail_mb REAL, mem_pct REAL, swap_used_mb REAL, disk_avail_gb REAL,"
    " disk_pct REAL, compilers REAL, stage TEXT, context TEXT);"
    "CREATE UNIQUE INDEX samples_run_seq ON samples(run, seq);";

/* Version 2: builder, cgroup mode, VCS revision, dropped samples; targets
 * and compiler-cache snapshots. */
static const char schema_v2[] =
    "ALTER TABLE runs ADD COLUMN builder TEXT;"
    "ALTER TABLE runs ADD COLUMN cgroup_mode TEXT;"
    "ALTER TABLE runs ADD COLUMN vcs_rev TEXT;"
    "ALTER TABLE runs ADD COLUMN vcs_ref TEXT;"
    "ALTER TABLE runs ADD COLUMN samples_dropped INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE targets ("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL,"
    " duration_s REAL, steps INTEGER, cached INTEGER, success INTEGER,"
    " cc_hits INTEGER, cc_misses INTEGER, node TEXT, ref TEXT,"
    " PRIMARY KEY (run, name));"
    "CREATE INDEX targets_name ON targets(name);"
    "CREATE TABLE cache_snapshots ("
    " id INTEGER PRIMARY KEY,"
    " taken_epoch REAL NOT NULL,"
    " tool TEXT NOT NULL,"
    " origin TEXT NOT NULL," /* cache | run-start | run-end */
    " run INTEGER REFERENCES runs(id) ON DELETE SET NULL,"
    " hits INTEGER, misses INTEGER, size_bytes INTEGER, max_size_bytes INTEGER,"
    " files INTEGER, version TEXT, raw TEXT);"
    "CREATE INDEX cache_snapshots_tool ON cache_snapshots(tool, origin, taken_epoch);";

/* Version 3: what a target's OTLP metrics carry besides its figures (the
 * buildx builder, and the compiler-cache counts per tool: one target may
 * report both), so `buildtel export` sends a stored run as the live run
 * did. cc_hits and cc_misses stay as they were (sccache's, else ccache's). */
static const char schema_v3[] = "ALTER TABLE targets ADD COLUMN builder TEXT;"
                                "ALTER TABLE targets ADD COLUMN sccache_hits INTEGER;"
                                "ALTER TABLE targets ADD COLUMN sccache_misses INTEGER;"
                                "ALTER TABLE targets ADD COLUMN ccache_hits INTEGER;"
                                "ALTER TABLE targets ADD COLUMN ccache_misses INTEGER;";

/* Version 4: the run's distinct BuildKit steps and cached steps, as the
 * model counts them (a step shared by targets counts once), so `inspect`
 * shows the totals the textfile and OTLP sent. NULL: unknown, or a run of
 * an older buildtel (readers then sum the targets, as they did). */
static const char schema_v4[] = "ALTER TABLE runs ADD COLUMN steps INTEGER;"
                                "ALTER TABLE runs ADD COLUMN cached_steps INTEGER;";

/* Version 5: the compile units of a run (issue 10). */
static const char schema_v5[] = "CREATE TABLE units ("
                                " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                " kind TEXT NOT NULL," /* compile | link */
                                " name TEXT NOT NULL,"
                                " tool TEXT,"
                                " first_elapsed_s REAL, last_elapsed_s REAL,"
                                " peak_mb REAL, peak_elapsed_s REAL, cpu_s REAL,"
                                " PRIMARY KEY (run, kind, name));"
                                "CREATE INDEX units_name ON units(name);";

/* Version 6: when each target started and ended (buildtel's clock, as
 * the live sinks had them), the run's BuildKit steps (the model's step
 * facts, capped at TARGETS_STEPS_MAX, with the count cut past it), and the
 * slowest ninja edges of its .ninja_log (as the model keeps them, with the
 * count of all), so the trace and the report of a stored run show what the
 * live run's did. */
static const char schema_v6[] = "ALTER TABLE targets ADD COLUMN start_s REAL;"
                                "ALTER TABLE targets ADD COLUMN end_s REAL;"
                                "ALTER TABLE runs ADD COLUMN steps_dropped INTEGER;"
                                "CREATE TABLE steps ("
                                " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                " seq INTEGER NOT NULL,"
                                " name TEXT NOT NULL,"
                                " target TEXT," /* NULL: none or several */
                                " start_s REAL, end_s REAL,"
                                " step INTEGER, cached INTEGER, error INTEGER, canceled INTEGER,"
                                " PRIMARY KEY (run, seq));"
                                "ALTER TABLE runs ADD COLUMN ninja_edges INTEGER;"
                                "ALTER TABLE runs ADD COLUMN ninja_max_end_ms INTEGER;"
                                "ALTER TABLE runs ADD COLUMN ninja_mtime REAL;"
                                "CREATE TABLE ninja_edges ("
                                " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                " slow INTEGER NOT NULL," /* 1: the slowest-edges table */
                                " seq INTEGER NOT NULL,"  /* its rank, or the index in edgev */
                                " start_ms INTEGER, end_ms INTEGER," /* from ninja's start */
                                " output TEXT NOT NULL,"
                                " PRIMARY KEY (run, slow, seq));";

/* Version 7: where the run's build log is, so that `top` can show the
 * recent lines of a running build. */
static const char schema_v7[] = "ALTER TABLE runs ADD COLUMN build_log TEXT;";

/* Version 8: what each BuildKit RUN step used inside the daemon (its
 * exec cgroups, issue 25); exec_n NULL: the step was not measured. */
static const char schema_v8[] = "ALTER TABLE steps ADD COLUMN exec_n INTEGER;"
                                "ALTER TABLE steps ADD COLUMN cpu_s REAL;"
                                "ALTER TABLE steps ADD COLUMN mem_peak_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN anon_peak_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN io_read_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN io_write_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN net_rx_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN net_tx_bytes REAL;"
                                "ALTER TABLE steps ADD COLUMN oom_kills REAL;"
                                "ALTER TABLE steps ADD COLUMN oom_at_s REAL;"
                                "ALTER TABLE steps ADD COLUMN oom_victim TEXT;"
                                "ALTER TABLE steps ADD COLUMN peak_proc TEXT;"
                                "ALTER TABLE steps ADD COLUMN peak_proc_bytes REAL;";

/* Version 9: the job a run belongs to (issue 23), and an index to read a
 * job's recent runs (store_job_runs()). */
static const char schema_v9[] = "ALTER TABLE runs ADD COLUMN job TEXT;"
                                "CREATE INDEX runs_job ON runs(job, start_epoch);";

/* Version 10: a compile unit's source resolved against its compiler's cwd
 * (issue 26; '' unknown), part of its key: ../x.c from a/build and from
 * b/build are two units of one name. SQLite cannot change a primary key:
 * the table is made again, its rows in their order. */
static const char schema_v10[] =
    "CREATE TABLE units_v10 ("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL, name TEXT NOT NULL, tool TEXT,"
    " first_elapsed_s REAL, last_elapsed_s REAL,"
    " peak_mb REAL, peak_elapsed_s REAL, cpu_s REAL,"
    " path TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (run, kind, name, path));"
    "INSERT INTO units_v10 (run, kind, name, tool, first_elapsed_s, last_elapsed_s, peak_mb,"
    " peak_elapsed_s, cpu_s) SELECT run, kind, name, tool, first_elapsed_s, last_elapsed_s,"
    " peak_mb, peak_elapsed_s, cpu_s FROM units ORDER BY rowid;"
    "DROP TABLE units;"
    "ALTER TABLE units_v10 RENAME TO units;"
    "CREATE INDEX units_name ON units(name);";

/* migrations[v] takes a file from version v to v + 1. */
static const char *const migrations[] = {schema_v1, schema_v2, schema_v3, schema_v4,
                                         schema_v5, schema_v6, schema_v7, schema_v8,
                                         schema_v9, schema_v10};
_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION, "one migration per version");

struct store {
        sqlite3 *db;
        int opened_version;
        sqlite3_stmt *ins_sample;
        size_t *sample_cols; /* column table index per bound parameter */
        size_t nsample_cols;
        struct store_liveness lv; /* host and boot_id point at the two below */
        char *lv_host, *lv_boot;
        bool has_lv;
};

int store_set_liveness(struct store *st, const struct store_liveness *lv)
{
        char *host = strdup(lv->host ? lv->host : "");
        char *boot = lv->boot_id ? strdup(lv->boot_id) : NULL;

        if (!host || (lv->boot_id && !boot)) {
                free(host);
                free(boot);
                return -ENOMEM;
        }
        free(st->lv_host);
        free(st->lv_boot);
        st->lv_host = host;
        st->lv_boot = boot;
        st->lv = *lv;
        st->lv.host = host;
        st->lv.boot_id = boot;
        st->has_lv = true;
        return 0;
}

const struct store_liveness *store_liveness(const struct store *st)
{
        return st->has_lv ? &st->lv : NULL;
}

int store_map_rc(sqlite3 *db, int rc)
{
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
        case SQLITE_FORMAT:
                return -STORE_ENOTDB;
        case SQLITE_CANTOPEN:
        case SQLITE_IOERR: {
                int e = db ? sqlite3_system_errno(db) : 0;
                if (e == ENOSPC || e == EDQUOT)
                        return -ENOSPC;
                return e > 0 ? -e : ((rc & 0xff) == SQLITE_CANTOPEN ? -EACCES : -EIO);
        }
        default:
                return -EIO;
        }
}

const char *store_strerror(int e)
{
        switch (-e) {
        case STORE_ENOTDB:
                return "not a buildtel history database (not SQLite, or corrupt)";
        case STORE_ENEWER:
                return "written by a newer buildtel (unknown schema version)";
        case EBUSY:
                return "locked by another process past the busy timeout";
        default:
                return strerror(-e);
        }
}

int store_opened_version(const struct store *st)
{
        return st->opened_version;
}

void store_set_busy_timeout(struct store *st, int ms)
{
        sqlite3_busy_timeout(st->db, ms);
}

char *store_default_path(void)
{
        return state_path("history.db");
}

/* run_duration(start, end, last): figure_run_duration() for the SQL, so
 * the history's duration is the summary's. NULL in, NULL out. */
static void sql_run_duration(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
        double v[3];
        double d;

        for (int i = 0; i < 3 && i < argc; i++)
                v[i] = sqlite3_value_type(argv[i]) == SQLITE_NULL ? NAN
                                                                  : sqlite3_value_double(argv[i]);
        d = figure_run_duration(v[0], v[1], v[2], NULL);
        if (isfinite(d))
                sqlite3_result_double(ctx, d);
        else
                sqlite3_result_null(ctx);
}

static int exec_sql(struct store *st, const char *sql)
{
        return store_map_rc(st->db, sqlite3_exec(st->db, sql, NULL, NULL, NULL));
}

int store_begin(struct store *st)
{
        return exec_sql(st, "BEGIN IMMEDIATE");
}
int store_commit(struct store *st)
{
        return exec_sql(st, "COMMIT");
}

void store_rollback(struct store *st)
{
        if (!sqlite3_get_autocommit(st->db))
                (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_prepare(struct store *st, const char *sql, sqlite3_stmt **ret)
{
        return store_map_rc(st->db, sqlite3_prepare_v2(st->db, sql, -1, ret, NULL));
}

/* The writers' name for it. */
static int prepare(struct store *st, const char *sql, sqlite3_stmt **ret)
{
        return store_prepare(st, sql, ret);
}

int store_step_end(struct store *st, int rc)
{
        return rc == SQLITE_DONE ? 0 : store_map_rc(st->db, rc);
}

int64_t store_rows(struct store *st, sqlite3_stmt *s, int64_t max, store_row_fn row, void *ctx)
{
        int64_t n = 0;
        int r = 0, rc = SQLITE_DONE;

        while (n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
                n++;
                r = row(ctx, s);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != SQLITE_ROW)
                r = store_step_end(st, rc);
        sqlite3_finalize(s);
        return r < 0 ? r : n;
}

const char *store_col_text(sqlite3_stmt *s, int i)
{
        return (const char *)sqlite3_column_text(s, i);
}

double store_col_real(sqlite3_stmt *s, int i)
{
        return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

int64_t store_col_count(sqlite3_stmt *s, int i)
{
        int64_t v;

        if (sqlite3_column_type(s, i) == SQLITE_NULL)
                return -1;
        v = sqlite3_column_int64(s, i);
        return v < 0 ? -1 : v;
}

/* Run a statement to its end and reset it. */
static int step_done(struct store *st, sqlite3_stmt *s)
{
        int rc = sqlite3_step(s);
        int r = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_map_rc(st->db, rc);

        sqlite3_reset(s);
        return r;
}

static int version_row(void *ctx, sqlite3_stmt *s)
{
        *(int *)ctx = sqlite3_column_int(s, 0);
        return 0;
}

static int read_version(struct store *st, int *ret)
{
        sqlite3_stmt *s = NULL;
        int64_t n;
        int r = prepare(st, "PRAGMA user_version", &s);

        if (r < 0)
                return r;
        n = store_rows(st, s, 1, version_row, ret);
        return n < 0 ? (int)n : n == 1 ? 0 : -EIO;
}

static bool column_name_ok(const char *n)
{
        if (!*n)
                return false;
        for (; *n; n++)
                if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_'))
                        return false;
        return true;
}

/* Columns of a table read back at most (SQLite's own limit is 2000). */
#define STORE_COLUMNS_MAX 4096

static int column_row(void *ctx, sqlite3_stmt *s)
{
        bool *have = ctx;
        const char *name = (const char *)sqlite3_column_text(s, 0);

        for (size_t i = 0; name && i < sample_column_count() && i < SAMPLE_COLUMNS_MAX; i++)
                if (strcmp(name, sample_column_name(i, NULL)) == 0)
                        have[i] = true;
        return 0;
}

int store_sample_columns(struct store *st, bool have[SAMPLE_COLUMNS_MAX])
{
        sqlite3_stmt *s = NULL;
        int64_t n;
        int r = prepare(st, "SELECT name FROM pragma_table_xinfo('samples')", &s);

        memset(have, 0, SAMPLE_COLUMNS_MAX * sizeof(*have));
        if (r < 0)
                return r;
        n = store_rows(st, s, STORE_COLUMNS_MAX, column_row, have);
        return n < 0 ? (int)n : 0;
}

/* Whether the samples table has every column of the column table (false
 * when it cannot tell). */
static bool sample_columns_complete(struct store *st)
{
        bool have[SAMPLE_COLUMNS_MAX];

        if (store_sample_columns(st, have) < 0)
                return false;
        for (size_t i = 0; i < sample_column_count(); i++)
                if (!have[i] && column_name_ok(sample_column_name(i, NULL)))
                        return false;
        return true;
}

/* Add the sample columns the table lacks: a column appended to the table
 * in sample.c becomes an SQL column on the next open, with no code here.
 * Called inside the upgrade transaction. */
static int sync_sample_columns(struct store *st)
{
        bool have[SAMPLE_COLUMNS_MAX];
        int r = store_sample_columns(st, have);

        for (size_t i = 0; r >= 0 && i < sample_column_count(); i++) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);
                char sql[512];
                int n;

                if (have[i] || !column_name_ok(name))
                        continue;
                if (t == SAMPLE_COLUMN_NUMBER)
                        n = snprintf(sql, sizeof(sql), "ALTER TABLE samples ADD COLUMN \"%s\" REAL",
                                     name);
                else if (t == SAMPLE_COLUMN_TEXT)
                        n = snprintf(sql, sizeof(sql), "ALTER TABLE samples ADD COLUMN \"%s\" TEXT",
                                     name);
                else /* derived from epoch: computed when read, never stored */
                        n = snprintf(
                            sql, sizeof(sql),
                            "ALTER TABLE samples ADD COLUMN \"%s\" TEXT GENERATED ALWAYS AS "
                            "(strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', epoch, 'unixepoch')) VIRTUAL",
                            name);
                if (n < 0 || (size_t)n >= sizeof(sql))
                        return -ENAMETOOLONG;
                r = exec_sql(st, sql);
        }
        return r;
}

/* Bring the file to STORE_SCHEMA_VERSION and the sample columns up to
 * date, in one IMMEDIATE transaction (two buildtels opening a new file at
 * once: the second sees the first one's work). */
static int upgrade(struct store *st)
{
        int v, r;

        r = read_version(st, &v);
        if (r < 0)
                return r;
        st->opened_version = v;
        if (v > STORE_SCHEMA_VERSION)
                return -STORE_ENEWER;
        /* Up to date: no write lock needed, so a reader (status) opens the
         * file while a run writes to it. */
        if (v == STORE_SCHEMA_VERSION && sample_columns_complete(st))
                return 0;
        r = store_begin(st);
        if (r < 0)
                return r;
        r = read_version(st, &v);
        for (; r >= 0 && v < STORE_SCHEMA_VERSION; v++) {
                char sql[64];

                r = exec_sql(st, migrations[v]);
                if (r >= 0) {
                        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
                        r = exec_sql(st, sql);
                }
        }
        if (r >= 0 && v > STORE_SCHEMA_VERSION)
                r = -STORE_ENEWER;
        if (r >= 0)
                r = sync_sample_columns(st);
        if (r >= 0)
                r = store_commit(st);
        if (r < 0)
                store_rollback(st);
        return r;
}

/* Prepare the sample insert over the columns the table has. */
static int prepare_sample_insert(struct store *st)
{
        struct dbuf sql = DBUF_INIT;
        size_t n = 0;
        int r;

        st->sample_cols = calloc(sample_column_count(), sizeof(*st->sample_cols));
        if (!st->sample_cols)
                return -ENOMEM;
        r = dbuf_puts(&sql, "INSERT INTO samples (run, seq");
        for (size_t i = 0; r >= 0 && i < sample_column_count(); i++) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);

                if (t == SAMPLE_COLUMN_ISO || !column_name_ok(name))
                        continue;
                r = dbuf_printf(&sql, ", \"%s\"", name);
                st->sample_cols[n++] = i;
        }
        if (r >= 0)
                r = dbuf_puts(&sql, ") VALUES (?, ?");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = dbuf_puts(&sql, ", ?");
        if (r >= 0)
                r = dbuf_puts(&sql, ")");
        if (r >= 0)
                r = prepare(st, sql.p, &st->ins_sample);
        st->nsample_cols = n;
        dbuf_release(&sql);
        return r;
}

int store_open(const char *path, bool create, int busy_ms, struct store **ret)
{
        struct store *st;
        struct stat sb;
        int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, rc, r;

        if (create) {
                _cleanup_free_ char *dir = strdup(path);
                char *slash;

                if (!dir)
                        return -ENOMEM;
                slash = strrchr(dir, '/');
                if (slash && slash != dir) {
                        *slash = '\0';
                        r = mkdir_p(dir, 0700);
                        if (r < 0)
                                return r;
                }
                /* The history holds build output: 0600 (SQLite gives its
                 * journal files the database's mode). */
                int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
                if (fd < 0)
                        return -errno;
                close(fd);
                flags |= SQLITE_OPEN_CREATE;
        } else if (stat(path, &sb) < 0) {
                return -errno;
        }
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        rc = sqlite3_open_v2(path, &st->db, flags, NULL);
        if (rc != SQLITE_OK) {
                r = store_map_rc(st->db, rc);
                store_close(st);
                return r < 0 ? r : -EIO;
        }
        sqlite3_extended_result_codes(st->db, 1);
        sqlite3_busy_timeout(st->db, busy_ms);
        rc = sqlite3_create_function(st->db, "run_duration", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     NULL, sql_run_duration, NULL, NULL);
        if (rc != SQLITE_OK) {
                r = store_map_rc(st->db, rc);
                store_close(st);
                return r < 0 ? r : -EIO;
        }
        /* WAL: readers never block the writer, and a commit needs no fsync
         * with synchronous=NORMAL (only checkpoints do). A crash may lose
         * the last commits, never the file. */
        r = exec_sql(st, "PRAGMA journal_mode = WAL");
        if (r >= 0)
                r = exec_sql(st, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
        if (r >= 0)
                r = upgrade(st);
        if (r >= 0)
                r = prepare_sample_insert(st);
        if (r < 0) {
                store_close(st);
                return r;
        }
        *ret = st;
        return 0;
}

void store_close(struct store *st)
{
        if (!st)
                return;
        sqlite3_finalize(st->ins_sample);
        sqlite3_close(st->db);
        free(st->sample_cols);
        free(st->lv_host);
        free(st->lv_boot);
        free(st);
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
        if (v)
                sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
        else
                sqlite3_bind_null(s, i);
}

static void bind_double_or_null(sqlite3_stmt *s, int i, double v)
{
        if (isfinite(v))
                sqlite3_bind_double(s, i, v);
        else
                sqlite3_bind_null(s, i);
}

static void bind_point(sqlite3_stmt *s, int i, const struct summary_point *p)
{
        if (p->set)
                sqlite3_bind_double(s, i, p->value);
        else
                sqlite3_bind_null(s, i);
}

static char *argv_json(const struct run_info *ri)
{
        json_t *a = json_array();
        char *out;

        if (!a)
                return NULL;
        for (size_t i = 0; ri->argv && ri->argv[i]; i++)
                json_array_append_new(a, jsonw_str(ri->argv[i]));
        out = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        return out;
}

int store_run_begin(struct store *st, const struct run_info *ri, const struct store_run_extra *x,
                    const struct store_recorder *rec, int64_t *ret_id)
{
        static const char sql[] =
            "INSERT INTO runs (run_id, kind, argv, cwd, host, start_epoch, state, pid,"
            " ncpu, interval, recorder_pid, recorder_start, boot_id, builder, cgroup_mode,"
            " vcs_rev, vcs_ref, build_log, job)"
            " VALUES (?,?,?,?,?,?,'running',?,?,?,?,?,?,?,?,?,?,?,?)";
        _cleanup_free_ char *argv = argv_json(ri);
        sqlite3_stmt *s = NULL, *del = NULL;
        int r;

        if (!argv)
                return -ENOMEM;
        r = store_begin(st);
        if (r < 0)
                return r;
        r = prepare(st, "DELETE FROM runs WHERE run_id = ?", &del);
        if (r >= 0) {
                sqlite3_bind_text(del, 1, ri->run_id, -1, SQLITE_STATIC);
                r = step_done(st, del);
        }
        if (r >= 0)
                r = prepare(st, sql, &s);
        if (r >= 0) {
                bind_text_or_null(s, 1, ri->run_id);
                bind_text_or_null(s, 2, ri->kind ? ri->kind : "run");
                sqlite3_bind_text(s, 3, argv, -1, SQLITE_STATIC);
                bind_text_or_null(s, 4, ri->cwd);
                bind_text_or_null(s, 5, ri->host);
                sqlite3_bind_double(s, 6, isfinite(ri->start_epoch) ? ri->start_epoch : 0);
                sqlite3_bind_int64(s, 7, ri->pid);
                sqlite3_bind_int64(s, 8, ri->ncpu);
                bind_double_or_null(s, 9, ri->interval);
                sqlite3_bind_int64(s, 10, rec ? rec->pid : 0);
                sqlite3_bind_int64(s, 11, rec ? (sqlite3_int64)rec->starttime : 0);
                bind_text_or_null(s, 12, rec ? rec->boot_id : NULL);
                bind_text_or_null(s, 13, x ? x->builder : NULL);
                bind_text_or_null(s, 14, x ? x->cgroup_mode : NULL);
                bind_text_or_null(s, 15, x ? x->vcs_rev : NULL);
                bind_text_or_null(s, 16, x && x->vcs_ref && x->vcs_ref[0] ? x->vcs_ref : NULL);
                bind_text_or_null(s, 17, x ? x->build_log : NULL);
                bind_text_or_null(s, 18, ri->job);
                r = step_done(st, s);
        }
        if (r >= 0)
                r = store_commit(st);
        if (r >= 0)
                *ret_id = sqlite3_last_insert_rowid(st->db);
        else
                store_rollback(st);
        sqlite3_finalize(s);
        sqlite3_finalize(del);
        return r;
}

/* The summary figures, bound from parameter `first` on, in the order of
 * SUMMARY_SET. */
#define SUMMARY_SET                                                                                \
        "samples = ?, mem_total_mb = ?, mem_used_peak_mb = ?, mem_used_peak_elapsed_s = ?,"        \
        " mem_used_peak_stage = ?, mem_used_peak_context = ?, mem_avail_min_mb = ?,"               \
        " swap_used_peak_mb = ?, disk_avail_min_gb = ?, load1_peak = ?, cpu_pct_peak = ?,"         \
        " cpu_pct_avg = ?, compilers_peak = ?, near_oom_samples = ?, low_disk_samples = ?,"        \
        " samples_dropped = ?"
#define SUMMARY_NPARAMS 16

static void bind_summary(sqlite3_stmt *s, int first, const struct summary *sum, uint64_t dropped)
{
        int i = first;

        sqlite3_bind_int64(s, i++, (sqlite3_int64)sum->samples);
        bind_double_or_null(s, i++, sum->mem_total_mb);
        bind_point(s, i++, &sum->mem_used_peak);
        if (sum->mem_used_peak.set) {
                sqlite3_bind_double(s, i++, sum->mem_used_peak.elapsed_s);
                sqlite3_bind_text(s, i++, sum->mem_used_peak.stage, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(s, i++, sum->mem_used_peak.context, -1, SQLITE_TRANSIENT);
        } else {
                sqlite3_bind_null(s, i++);
                sqlite3_bind_null(s, i++);
                sqlite3_bind_null(s, i++);
        }
        bind_point(s, i++, &sum->mem_avail_min);
        bind_point(s, i++, &sum->swap_used_peak);
        bind_point(s, i++, &sum->disk_avail_min);
        bind_point(s, i++, &sum->load1_peak);
        bind_point(s, i++, &sum->cpu_pct_peak);
        bind_double_or_null(s, i++,
                            sum->cpu_pct_n ? sum->cpu_pct_sum / (double)sum->cpu_pct_n : NAN);
        bind_point(s, i++, &sum->compilers_peak);
        sqlite3_bind_int64(s, i++, (sqlite3_int64)sum->near_oom_samples);
        sqlite3_bind_int64(s, i++, (sqlite3_int64)sum->low_disk_samples);
        sqlite3_bind_int64(s, i++, (sqlite3_int64)dropped);
}

int store_run_progress(struct store *st, int64_t id, const struct summary *sum, uint64_t dropped)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st, "UPDATE runs SET " SUMMARY_SET " WHERE id = ?", &s);

        if (r >= 0) {
                bind_summary(s, 1, sum, dropped);
                sqlite3_bind_int64(s, SUMMARY_NPARAMS + 1, id);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_run_set_extra(struct store *st, int64_t id, const struct store_run_extra *x)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st,
                        "UPDATE runs SET builder = COALESCE(?, builder),"
                        " cgroup_mode = COALESCE(?, cgroup_mode), vcs_rev = COALESCE(?, vcs_rev),"
                        " vcs_ref = COALESCE(?, vcs_ref), build_log = COALESCE(?, build_log)"
                        " WHERE id = ?",
                        &s);

        if (r >= 0) {
                bind_text_or_null(s, 1, x->builder);
                bind_text_or_null(s, 2, x->cgroup_mode);
                bind_text_or_null(s, 3, x->vcs_rev);
                bind_text_or_null(s, 4, x->vcs_ref && x->vcs_ref[0] ? x->vcs_ref : NULL);
                bind_text_or_null(s, 5, x->build_log);
                sqlite3_bind_int64(s, 6, id);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_run_finish(struct store *st, int64_t id, const struct run_info *ri,
                     const struct summary *sum, const char *summary_json, uint64_t dropped)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(
            st,
            "UPDATE runs SET " SUMMARY_SET ", end_epoch = ?, state = ?, exit_code = ?,"
            " term_signal = ?, summary_json = ?, cgroup_mode = COALESCE(?, cgroup_mode),"
            " pid = ? WHERE id = ?",
            &s);

        if (r >= 0) {
                int i = SUMMARY_NPARAMS + 1;

                bind_summary(s, 1, sum, dropped);
                bind_double_or_null(s, i++, ri->end_epoch);
                sqlite3_bind_text(s, i++, ri->finished ? "finished" : "running", -1, SQLITE_STATIC);
                if (ri->exit_code >= 0)
                        sqlite3_bind_int(s, i++, ri->exit_code);
                else
                        sqlite3_bind_null(s, i++);
                sqlite3_bind_int(s, i++, ri->term_signal);
                bind_text_or_null(s, i++, summary_json);
                bind_text_or_null(s, i++, sum->build.mode[0] ? sum->build.mode : NULL);
                sqlite3_bind_int64(s, i++, ri->pid);
                sqlite3_bind_int64(s, i++, id);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_sample_insert(struct store *st, int64_t run, uint64_t seq, const struct sample *smp)
{
        sqlite3_stmt *s = st->ins_sample;

        sqlite3_bind_int64(s, 1, run);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
        for (size_t k = 0; k < st->nsample_cols; k++) {
                size_t i = st->sample_cols[k];
                enum sample_column_type t;
                int p = (int)k + 3;

                (void)sample_column_name(i, &t);
                if (t == SAMPLE_COLUMN_NUMBER) {
                        bind_double_or_null(s, p, sample_column_number(smp, i));
                } else {
                        size_t len = 0;
                        const char *v = sample_column_text(smp, i, &len);
                        sqlite3_bind_text(s, p, v ? v : "", (int)len, SQLITE_STATIC);
                }
        }
        return step_done(st, s);
}

static void bind_i64_or_null(sqlite3_stmt *s, int i, int64_t v)
{
        if (v >= 0)
                sqlite3_bind_int64(s, i, v);
        else
                sqlite3_bind_null(s, i);
}

int store_target_insert(struct store *st, int64_t run, const struct store_target *t)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st,
                        "INSERT OR REPLACE INTO targets (run, name, duration_s, steps, cached,"
                        " success, cc_hits, cc_misses, node, ref, builder, sccache_hits,"
                        " sccache_misses, ccache_hits, ccache_misses, start_s, end_s)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        &s);

        if (r >= 0) {
                sqlite3_bind_int64(s, 1, run);
                bind_text_or_null(s, 2, t->name ? t->name : "");
                bind_double_or_null(s, 3, t->duration_s);
                bind_i64_or_null(s, 4, t->steps);
                bind_i64_or_null(s, 5, t->cached);
                bind_i64_or_null(s, 6, t->success);
                bind_i64_or_null(s, 7, t->cc_hits);
                bind_i64_or_null(s, 8, t->cc_misses);
                bind_text_or_null(s, 9, t->node);
                bind_text_or_null(s, 10, t->ref);
                bind_text_or_null(s, 11, t->builder);
                bind_i64_or_null(s, 12, t->sccache_hits);
                bind_i64_or_null(s, 13, t->sccache_misses);
                bind_i64_or_null(s, 14, t->ccache_hits);
                bind_i64_or_null(s, 15, t->ccache_misses);
                bind_double_or_null(s, 16, t->start_s);
                bind_double_or_null(s, 17, t->end_s);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

double store_target_cached_ratio(const struct store_target *t)
{
        return figure_cached_ratio(t->steps, t->cached);
}

int store_cache_snapshot_insert(struct store *st, const struct store_cache_snapshot *c,
                                int64_t *ret_id)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(
            st,
            "INSERT INTO cache_snapshots (taken_epoch, tool, origin, run, hits, misses,"
            " size_bytes, max_size_bytes, files, version, raw)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            &s);

        if (r >= 0) {
                sqlite3_bind_double(s, 1, c->taken_epoch);
                bind_text_or_null(s, 2, c->tool);
                bind_text_or_null(s, 3, c->origin);
                if (c->run > 0)
                        sqlite3_bind_int64(s, 4, c->run);
                else
                        sqlite3_bind_null(s, 4);
                bind_i64_or_null(s, 5, c->hits);
                bind_i64_or_null(s, 6, c->misses);
                bind_i64_or_null(s, 7, c->size_bytes);
                bind_i64_or_null(s, 8, c->max_size_bytes);
                bind_i64_or_null(s, 9, c->files);
                bind_text_or_null(s, 10, c->version);
                bind_text_or_null(s, 11, c->raw);
                r = step_done(st, s);
        }
        if (r >= 0 && ret_id)
                *ret_id = sqlite3_last_insert_rowid(st->db);
        sqlite3_finalize(s);
        return r;
}

int store_run_set_steps(struct store *st, int64_t id, int64_t steps, int64_t cached)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st, "UPDATE runs SET steps = ?, cached_steps = ? WHERE id = ?", &s);

        if (r >= 0) {
                bind_i64_or_null(s, 1, steps);
                bind_i64_or_null(s, 2, cached);
                sqlite3_bind_int64(s, 3, id);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_units_insert(struct store *st, int64_t run, const struct unit *rows, size_t n)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st,
                        "INSERT OR REPLACE INTO units (run, kind, name, tool, first_elapsed_s,"
                        " last_elapsed_s, peak_mb, peak_elapsed_s, cpu_s, path)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?)",
                        &s);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                const struct unit *u = &rows[i];

                sqlite3_reset(s);
                sqlite3_bind_int64(s, 1, run);
                bind_text_or_null(s, 2, u->kind == UNITS_LINK ? "link" : "compile");
                bind_text_or_null(s, 3, u->name);
                bind_text_or_null(s, 4, u->tool);
                bind_double_or_null(s, 5, u->first_s);
                bind_double_or_null(s, 6, u->last_s);
                bind_double_or_null(s, 7, u->peak_mb);
                bind_double_or_null(s, 8, u->peak_s);
                bind_double_or_null(s, 9, u->cpu_s);
                sqlite3_bind_text(s, 10, u->path, -1, SQLITE_STATIC);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

static void column_copy(sqlite3_stmt *s, int col, char *dst, size_t size)
{
        (void)copy_utf8_str(dst, size, (const char *)sqlite3_column_text(s, col));
}

struct units_walk {
        struct units *u;
        int n;
};

static int unit_row(void *ctx, sqlite3_stmt *s)
{
        struct units_walk *w = ctx;
        const char *kind = store_col_text(s, 0);
        struct unit row = {
            .kind = kind && strcmp(kind, "link") == 0 ? UNITS_LINK : UNITS_COMPILE,
            .first_s = store_col_real(s, 3),
            .last_s = store_col_real(s, 4),
            .peak_mb = store_col_real(s, 5),
            .peak_s = store_col_real(s, 6),
            .cpu_s = store_col_real(s, 7),
        };

        column_copy(s, 1, row.tool, sizeof(row.tool));
        column_copy(s, 2, row.name, sizeof(row.name));
        column_copy(s, 8, row.path, sizeof(row.path));
        if (row.path[0] != '/')
                row.path[0] = '\0';
        if (units_put(w->u, &row) >= 0)
                w->n++;
        return 0;
}

int store_units_read(struct store *st, int64_t run, struct units *u)
{
        struct units_walk w = {.u = u};
        sqlite3_stmt *s = NULL;
        int64_t n;
        int r = prepare(st,
                        "SELECT kind, tool, name, first_elapsed_s, last_elapsed_s, peak_mb,"
                        " peak_elapsed_s, cpu_s, path FROM units WHERE run = ? ORDER BY rowid",
                        &s);

        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, run);
        n = store_rows(st, s, UNITS_MAX, unit_row, &w);
        return n < 0 ? (int)n : w.n;
}

/* ---- BuildKit steps and ninja edges (version 6) ---- */

/* A count column of the run row (col: a name of ours, never the build's). */
static int set_run_count(struct store *st, int64_t run, const char *col, uint64_t v)
{
        char sql[96];
        sqlite3_stmt *s = NULL;
        int r;

        snprintf(sql, sizeof(sql), "UPDATE runs SET %s = ? WHERE id = ?", col);
        r = prepare(st, sql, &s);
        if (r >= 0) {
                sqlite3_bind_int64(s, 1, (int64_t)MIN(v, (uint64_t)INT64_MAX));
                sqlite3_bind_int64(s, 2, run);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

/* The same read back: -1 when NULL (unknown, or an older file's run). */
static int64_t get_run_count(struct store *st, int64_t run, const char *col)
{
        char sql[96];
        sqlite3_stmt *s = NULL;
        int64_t v = -1;
        int r;

        snprintf(sql, sizeof(sql), "SELECT %s FROM runs WHERE id = ?", col);
        r = prepare(st, sql, &s);
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, run);
        if (sqlite3_step(s) == SQLITE_ROW)
                v = store_col_count(s, 0);
        sqlite3_finalize(s);
        return v;
}

/* The 13 exec columns of a step from column i on: NULL when not measured. */
static void bind_step_exec(sqlite3_stmt *s, int i, const struct step_exec *e)
{
        const double v[] = {e->cpu_s,         e->mem_peak_bytes, e->anon_peak_bytes,
                            e->io_read_bytes, e->io_write_bytes, e->net_rx_bytes,
                            e->net_tx_bytes,  e->oom_kills,      e->oom_at_s};

        for (int k = 0; k < 13; k++)
                sqlite3_bind_null(s, i + k);
        if (!e->set)
                return;
        sqlite3_bind_int64(s, i, e->execs);
        for (int k = 0; k < (int)ARRAY_SIZE(v); k++)
                bind_double_or_null(s, i + 1 + k, v[k]);
        bind_text_or_null(s, i + 10, e->oom_victim[0] ? e->oom_victim : NULL);
        bind_text_or_null(s, i + 11, e->peak_proc[0] ? e->peak_proc : NULL);
        bind_double_or_null(s, i + 12, e->peak_proc_bytes);
}

static void copy_text(char *dst, size_t cap, const char *src)
{
        size_t n = src ? strlen(src) : 0;

        copy_utf8(dst, cap, src ? src : "", n);
}

/* The exec columns read back (column i on). */
static void step_exec_row(sqlite3_stmt *s, int i, struct step_exec *e)
{
        double *v[] = {&e->cpu_s,         &e->mem_peak_bytes, &e->anon_peak_bytes,
                       &e->io_read_bytes, &e->io_write_bytes, &e->net_rx_bytes,
                       &e->net_tx_bytes,  &e->oom_kills,      &e->oom_at_s};
        int64_t n = store_col_count(s, i);

        step_exec_clear(e);
        if (n < 0)
                return;
        e->set = true;
        e->execs = (uint32_t)MIN(n, (int64_t)UINT32_MAX);
        for (int k = 0; k < (int)ARRAY_SIZE(v); k++)
                *v[k] = store_col_real(s, i + 1 + k);
        copy_text(e->oom_victim, sizeof(e->oom_victim), store_col_text(s, i + 10));
        copy_text(e->peak_proc, sizeof(e->peak_proc), store_col_text(s, i + 11));
        e->peak_proc_bytes = store_col_real(s, i + 12);
}

int store_steps_insert(struct store *st, int64_t run, const struct targets *ts)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st,
                        "INSERT OR REPLACE INTO steps (run, seq, name, target, start_s, end_s,"
                        " step, cached, error, canceled, exec_n, cpu_s, mem_peak_bytes,"
                        " anon_peak_bytes, io_read_bytes, io_write_bytes, net_rx_bytes,"
                        " net_tx_bytes, oom_kills, oom_at_s, oom_victim, peak_proc,"
                        " peak_proc_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        &s);

        for (uint32_t i = 0; r >= 0 && i < ts->nstepv && i < TARGETS_STEPS_MAX; i++) {
                const struct step_fact *f = &ts->stepv[i];

                sqlite3_reset(s);
                sqlite3_bind_int64(s, 1, run);
                sqlite3_bind_int64(s, 2, i);
                bind_text_or_null(s, 3, f->name);
                bind_text_or_null(
                    s, 4,
                    f->target >= 0 && (size_t)f->target < ts->n ? ts->t[f->target].name : NULL);
                bind_double_or_null(s, 5, f->start_s);
                bind_double_or_null(s, 6, f->end_s);
                sqlite3_bind_int(s, 7, f->step);
                sqlite3_bind_int(s, 8, f->cached);
                sqlite3_bind_int(s, 9, f->error);
                sqlite3_bind_int(s, 10, f->canceled);
                bind_step_exec(s, 11, &f->exec);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        if (r >= 0 && ts->steps_dropped)
                r = set_run_count(st, run, "steps_dropped", ts->steps_dropped);
        return r;
}

static int step_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;
        const char *name = store_col_text(s, 0), *target = store_col_text(s, 1);
        struct step_fact f = {
            .target = -1,
            .start_s = store_col_real(s, 2),
            .end_s = store_col_real(s, 3),
            .step = store_col_count(s, 4) > 0,
            .cached = store_col_count(s, 5) > 0,
            .error = store_col_count(s, 6) > 0,
            .canceled = store_col_count(s, 7) > 0,
        };

        copy_utf8(f.name, sizeof(f.name), name ? name : "", name ? strlen(name) : 0);
        step_exec_row(s, 8, &f.exec);
        if (target)
                f.target = (int)targets_get(ts, target, strlen(target));
        return targets_add_step(ts, &f);
}

int store_steps_get(struct store *st, int64_t run, struct targets *ts)
{
        sqlite3_stmt *s = NULL;
        int64_t n;
        int r = prepare(st,
                        "SELECT name, target, start_s, end_s, step, cached, error, canceled,"
                        " exec_n, cpu_s, mem_peak_bytes, anon_peak_bytes, io_read_bytes,"
                        " io_write_bytes, net_rx_bytes, net_tx_bytes, oom_kills, oom_at_s,"
                        " oom_victim, peak_proc, peak_proc_bytes"
                        " FROM steps WHERE run = ? ORDER BY seq",
                        &s);

        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, run);
        n = store_rows(st, s, TARGETS_STEPS_MAX, step_row, ts);
        if (n < 0)
                return (int)n;
        if (get_run_count(st, run, "steps_dropped") > 0)
                ts->steps_dropped =
                    (uint32_t)MIN(get_run_count(st, run, "steps_dropped"), (int64_t)UINT32_MAX);
        return (int)n;
}

/* ---- ninja edges (version 6) ---- */

/* Rows of one list: the slowest-edges table (slow = 1, seq its rank) or
 * edgev (slow = 0). */
static int insert_edges(struct store *st, int64_t run, int slow, const struct ninja_edge *e,
                        size_t n)
{
        sqlite3_stmt *s = NULL;
        int r = prepare(st,
                        "INSERT OR REPLACE INTO ninja_edges (run, slow, seq, start_ms, end_ms,"
                        " output) VALUES (?,?,?,?,?,?)",
                        &s);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                sqlite3_reset(s);
                sqlite3_bind_int64(s, 1, run);
                sqlite3_bind_int(s, 2, slow);
                sqlite3_bind_int64(s, 3, (int64_t)i);
                sqlite3_bind_int64(s, 4, e[i].start_ms);
                sqlite3_bind_int64(s, 5, e[i].end_ms);
                bind_text_or_null(s, 6, e[i].output);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_edges_insert(struct store *st, int64_t run, const struct targets *ts)
{
        sqlite3_stmt *s = NULL;
        int r;

        if (!ts->ninja_log_set)
                return 0;
        r = insert_edges(st, run, 1, ts->slow, MIN(ts->nslow, (size_t)TARGETS_SLOW_EDGES));
        if (r >= 0 && ts->edgev)
                r = insert_edges(st, run, 0, ts->edgev, MIN(ts->nedgev, TARGETS_EDGES_MAX));
        if (r >= 0)
                r = set_run_count(st, run, "ninja_edges", ts->ninja_edges);
        if (r >= 0)
                r = set_run_count(st, run, "ninja_max_end_ms",
                                  (uint64_t)MAX(ts->ninja_max_end_ms, 0));
        if (r >= 0 && ts->ninja_mtime > 0)
                r = prepare(st, "UPDATE runs SET ninja_mtime = ? WHERE id = ?", &s);
        if (r >= 0 && s) {
                sqlite3_bind_double(s, 1, ts->ninja_mtime);
                sqlite3_bind_int64(s, 2, run);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

static int edge_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;
        const char *out = store_col_text(s, 3);
        struct ninja_edge e = {.start_ms = store_col_count(s, 1), .end_ms = store_col_count(s, 2)};
        struct ninja_edge *d = NULL;

        if (e.start_ms < 0 || e.end_ms < e.start_ms)
                return 0;
        if (store_col_count(s, 0) > 0 && ts->nslow < TARGETS_SLOW_EDGES)
                d = &ts->slow[ts->nslow++];
        else if (store_col_count(s, 0) == 0 && ts->edgev && ts->nedgev < TARGETS_EDGES_MAX)
                d = &ts->edgev[ts->nedgev++];
        if (d) {
                *d = e;
                copy_utf8(d->output, sizeof(d->output), out ? out : "", out ? strlen(out) : 0);
        }
        return 0;
}

int store_edges_get(struct store *st, int64_t run, struct targets *ts)
{
        sqlite3_stmt *s = NULL;
        int64_t n = get_run_count(st, run, "ninja_edges");
        int r;

        if (n >= 0) {
                ts->ninja_log_set = true;
                ts->ninja_edges = (uint64_t)n;
                ts->ninja_max_end_ms = MAX(get_run_count(st, run, "ninja_max_end_ms"), 0);
        }
        r = prepare(st, "SELECT ninja_mtime FROM runs WHERE id = ?", &s);
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, run);
        if (sqlite3_step(s) == SQLITE_ROW && isfinite(store_col_real(s, 0)))
                ts->ninja_mtime = store_col_real(s, 0);
        sqlite3_finalize(s);
        free(ts->edgev);
        ts->edgev = malloc(TARGETS_EDGES_MAX * sizeof(*ts->edgev));
        ts->nedgev = 0;
        ts->nslow = 0;
        r = prepare(st,
                    "SELECT slow, start_ms, end_ms, output FROM ninja_edges WHERE run = ?"
                    " ORDER BY slow, seq",
                    &s);
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, run);
        n = store_rows(st, s, TARGETS_SLOW_EDGES + TARGETS_EDGES_MAX, edge_row, ts);
        return n < 0 ? (int)n : (int)ts->nedgev;
}

int store_run_mark_unrecorded(struct store *st, int64_t id, bool full)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(st, "UPDATE runs SET state = ? WHERE id = ? AND state = 'running'", &s);

        if (r >= 0) {
                sqlite3_bind_text(s, 1, full ? "disk-full" : "failed-to-record", -1, SQLITE_STATIC);
                sqlite3_bind_int64(s, 2, id);
                r = step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}
