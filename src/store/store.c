/* SPDX-License-Identifier: MIT */
#include "store/store.h"
#include "store/store-sql.h"

#include "model/figures.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
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

/* Version 11: ninja's last [n/m] (issue 35): with the .ninja_log's
 * edges, how many commands the build ran, which the units seen are set
 * against. */
static const char schema_v11[] = "ALTER TABLE runs ADD COLUMN ninja_done INTEGER;"
                                 "ALTER TABLE runs ADD COLUMN ninja_total INTEGER;";

/* Version 12: where a unit's figures came from (issue 36): 'taskstats'
 * (the kernel's accounting, exact) or 'sampled' (process scans); NULL,
 * older runs, were sampled. And what ccache said of it: 'hit', 'miss',
 * 'uncacheable'; NULL unknown. */
static const char schema_v12[] = "ALTER TABLE units ADD COLUMN source TEXT;"
                                 "ALTER TABLE units ADD COLUMN cache TEXT;";

/* Version 13: a unit's output directory (its tail, as the units table
 * has it): the plan names the CMake target of a heavy unit from it. */
static const char schema_v13[] = "ALTER TABLE units ADD COLUMN dir TEXT;";

/* Version 14: each unit's waits for a CPU, for IO and for memory (the
 * kernel's delay accounting); NULL unknown. */
static const char schema_v14[] = "ALTER TABLE units ADD COLUMN wait_cpu_s REAL;"
                                 "ALTER TABLE units ADD COLUMN wait_io_s REAL;"
                                 "ALTER TABLE units ADD COLUMN wait_mem_s REAL;";

/* Version 15: where a step's figures came from: 'exec-cgroup' (read by
 * buildtel) or 'buildkit-record' (BuildKit's own, parse/bkrecord.h). */
static const char schema_v15[] = "ALTER TABLE steps ADD COLUMN usage_source TEXT;";

/* migrations[v] takes a file from version v to v + 1. */
static const char *const migrations[] = {
    schema_v1, schema_v2,  schema_v3,  schema_v4,  schema_v5,  schema_v6,  schema_v7, schema_v8,
    schema_v9, schema_v10, schema_v11, schema_v12, schema_v13, schema_v14, schema_v15};
_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION, "one migration per version");

struct store {
        sqlite3 *db;
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

/* An SQLite result code as 0 or -errno (-STORE_ENOTDB for a file that is
 * not a database, or corrupt); db, when given, supplies the OS error
 * behind an IO failure. */
static int store_map_rc(sqlite3 *db, int rc)
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

void store_set_busy_timeout(struct store *st, int ms)
{
        sqlite3_busy_timeout(st->db, ms);
}

char *store_default_path(void)
{
        return state_read_path("history.db");
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

/* cc_delta(first_hits, first_misses, last_hits, last_misses, misses):
 * figure_cc_delta() for the SQL (a reset between the blocks: the counts
 * since it), its hits or (misses != 0) its misses. NULL in, NULL out. */
static void sql_cc_delta(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
        sqlite3_int64 v[4];
        uint64_t h, m;

        for (int i = 0; i < 5 && i < argc; i++) {
                if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
                        sqlite3_result_null(ctx);
                        return;
                }
                if (i < 4)
                        v[i] = MAX(sqlite3_value_int64(argv[i]), 0);
        }
        (void)figure_cc_delta((uint64_t)v[0], (uint64_t)v[1], (uint64_t)v[2], (uint64_t)v[3], &h,
                              &m);
        sqlite3_result_int64(ctx, (sqlite3_int64)(sqlite3_value_int(argv[4]) ? m : h));
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

/* Bind v, or NULL when v is not finite. */
static void store_bind_real(sqlite3_stmt *s, int i, double v)
{
        if (isfinite(v))
                sqlite3_bind_double(s, i, v);
        else
                sqlite3_bind_null(s, i);
}

/* Bind the arguments ap holds to ?first, ?first+1...: one letter of binds
 * each. */
static void bind_args(sqlite3_stmt *s, int first, const char *binds, va_list ap)
{
        for (int i = first; binds[i - first]; i++) {
                const char *t;
                int64_t v;

                switch (binds[i - first]) {
                case 'i':
                        sqlite3_bind_int64(s, i, va_arg(ap, int64_t));
                        break;
                case 'n':
                        v = va_arg(ap, int64_t);
                        if (v >= 0)
                                sqlite3_bind_int64(s, i, v);
                        else
                                sqlite3_bind_null(s, i);
                        break;
                case 'd':
                        sqlite3_bind_double(s, i, va_arg(ap, double));
                        break;
                case 'r':
                        store_bind_real(s, i, va_arg(ap, double));
                        break;
                default: /* 't' */
                        t = va_arg(ap, const char *);
                        if (t)
                                sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
                        else
                                sqlite3_bind_null(s, i);
                        break;
                }
        }
}

void store_bind(sqlite3_stmt *s, int first, const char *binds, ...)
{
        va_list ap;

        va_start(ap, binds);
        bind_args(s, first, binds, ap);
        va_end(ap);
}

int64_t store_query(struct store *st, const char *sql, int64_t max, store_row_fn row, void *ctx,
                    const char *binds, ...)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(st, sql, &s);
        va_list ap;

        if (r < 0)
                return r;
        va_start(ap, binds);
        bind_args(s, 1, binds, ap);
        va_end(ap);
        return store_rows(st, s, max, row, ctx);
}

int store_exec(struct store *st, const char *sql, const char *binds, ...)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(st, sql, &s);
        va_list ap;

        if (r >= 0) {
                va_start(ap, binds);
                bind_args(s, 1, binds, ap);
                va_end(ap);
                r = store_step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
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

int64_t store_last_rowid(struct store *st)
{
        return sqlite3_last_insert_rowid(st->db);
}

int store_step_done(struct store *st, sqlite3_stmt *s)
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
        int64_t n = store_query(st, "PRAGMA user_version", 1, version_row, ret, "");

        return n < 0 ? (int)n : n == 1 ? 0 : -EIO;
}

static bool column_name_ok(const char *n)
{
        return *n && !n[strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_")];
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
        int64_t n;

        memset(have, 0, SAMPLE_COLUMNS_MAX * sizeof(*have));
        n = store_query(st, "SELECT name FROM pragma_table_xinfo('samples')", STORE_COLUMNS_MAX,
                        column_row, have, "");
        return n < 0 ? (int)n : 0;
}

/* Add the sample columns the table lacks (add false: only count them): a
 * column appended to the table in sample.c becomes an SQL column on the
 * next open, with no code here. Called inside the upgrade transaction.
 * Returns how many it lacked, or -errno. */
static int sync_sample_columns(struct store *st, bool add)
{
        /* derived from epoch: computed when read, never stored */
        static const char iso_column[] =
            "TEXT GENERATED ALWAYS AS "
            "(strftime('%Y-%m-%dT%H:%M:%fZ', epoch, 'unixepoch')) VIRTUAL";
        bool have[SAMPLE_COLUMNS_MAX];
        int r = store_sample_columns(st, have), missing = 0;

        for (size_t i = 0; r >= 0 && i < sample_column_count(); i++) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);
                char sql[512];
                int n;

                if (have[i] || !column_name_ok(name))
                        continue;
                missing++;
                if (!add)
                        continue;
                n = snprintf(sql, sizeof(sql), "ALTER TABLE samples ADD COLUMN \"%s\" %s", name,
                             t == SAMPLE_COLUMN_NUMBER ? "REAL"
                             : t == SAMPLE_COLUMN_TEXT ? "TEXT"
                                                       : iso_column);
                if (n < 0 || (size_t)n >= sizeof(sql))
                        return -ENAMETOOLONG;
                r = exec_sql(st, sql);
        }
        return r < 0 ? r : missing;
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
        if (v > STORE_SCHEMA_VERSION)
                return -STORE_ENEWER;
        /* Up to date: no write lock needed, so a reader (status) opens the
         * file while a run writes to it. */
        if (v == STORE_SCHEMA_VERSION && sync_sample_columns(st, false) == 0)
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
                r = sync_sample_columns(st, true);
        if (r >= 0)
                r = store_commit(st);
        if (r < 0)
                store_rollback(st);
        return r;
}

/* Prepare the sample insert over the columns the table has. */
static int prepare_sample_insert(struct store *st)
{
        _cleanup_dbuf_ struct dbuf sql = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&sql);
        size_t n = 0;
        int r;

        st->sample_cols = calloc(sample_column_count(), sizeof(*st->sample_cols));
        if (!st->sample_cols)
                return -ENOMEM;
        dw_puts(&w, "INSERT INTO samples (run, seq");
        for (size_t i = 0; i < sample_column_count(); i++) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);

                if (t == SAMPLE_COLUMN_ISO || !column_name_ok(name))
                        continue;
                dw_printf(&w, ", \"%s\"", name);
                st->sample_cols[n++] = i;
        }
        dw_puts(&w, ") VALUES (?, ?");
        for (size_t i = 0; i < n; i++)
                dw_puts(&w, ", ?");
        dw_puts(&w, ")");
        r = dw_ok(&w) ? store_prepare(st, sql.p, &st->ins_sample) : w.err;
        st->nsample_cols = n;
        return r;
}

int store_open(const char *path, bool create, int busy_ms, struct store **ret)
{
        struct store *st;
        struct stat sb;
        int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, rc, r;

        if (create) {
                _cleanup_free_ char *dir = strdup(path);

                r = dir ? mkdir_p(dirname(dir), 0700) : -ENOMEM;
                if (r < 0)
                        return r;
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
        if (rc == SQLITE_OK) {
                sqlite3_extended_result_codes(st->db, 1);
                sqlite3_busy_timeout(st->db, busy_ms);
                rc = sqlite3_create_function(st->db, "run_duration", 3,
                                             SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                             sql_run_duration, NULL, NULL);
        }
        if (rc == SQLITE_OK)
                rc = sqlite3_create_function(st->db, "cc_delta", 5,
                                             SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_cc_delta,
                                             NULL, NULL);
        if (rc != SQLITE_OK) {
                r = store_map_rc(st->db, rc);
                store_close(st);
                return r < 0 ? r : -EIO;
        }
        /* WAL: readers never block the writer, and a commit needs no fsync
         * with synchronous=NORMAL (only checkpoints do). A crash may lose
         * the last commits, never the file. */
        r = exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                         " PRAGMA foreign_keys = ON");
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
                        store_bind_real(s, p, sample_column_number(smp, i));
                } else {
                        size_t len = 0;
                        const char *v = sample_column_text(smp, i, &len);
                        sqlite3_bind_text(s, p, v ? v : "", (int)len, SQLITE_STATIC);
                }
        }
        return store_step_done(st, s);
}
