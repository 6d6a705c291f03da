/* SPDX-License-Identifier: MIT */
#include "store/history.h"
#include "store/history-run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/procfs.h"
#include "util/macro.h"
#include "util/util.h"

#define HISTORY_ROWS_MAX 100000 /* rows of one listing, whatever --limit says */

/* A column as JSON: integers, reals, text (made valid UTF-8), null. */
static json_t *column_json(sqlite3_stmt *s, int i)
{
        switch (sqlite3_column_type(s, i)) {
        case SQLITE_INTEGER:
                return json_integer(sqlite3_column_int64(s, i));
        case SQLITE_FLOAT:
                return json_real(sqlite3_column_double(s, i));
        case SQLITE_TEXT:
                return run_json_string((const char *)sqlite3_column_text(s, i));
        default:
                return json_null();
        }
}

static json_t *row_json(sqlite3_stmt *s)
{
        json_t *o = json_object();

        for (int i = 0; o && i < sqlite3_column_count(s); i++)
                json_object_set_new(o, sqlite3_column_name(s, i), column_json(s, i));
        return o;
}

/* Is the recorder of a running row still there? */
static bool recorder_alive(const char *host, const char *boot_id, int64_t pid, int64_t start)
{
        char myhost[256] = "", path[64];
        struct store_recorder me;
        _cleanup_free_ char *buf = NULL;
        struct pidstat ps;
        size_t len;

        (void)gethostname(myhost, sizeof(myhost) - 1);
        if (!host || strcmp(host, myhost) != 0)
                return true; /* another machine: cannot tell */
        if (store_recorder_self(&me) < 0 || !boot_id || strcmp(boot_id, me.boot_id) != 0)
                return false; /* rebooted since */
        snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
        if (pid <= 0 || read_file_at(AT_FDCWD, path, 4096, &buf, &len) < 0 ||
            pidstat_parse(buf, len, &ps) < 0)
                return false;
        return (int64_t)ps.starttime == start;
}

/* state and result of a run object, from its raw columns (which go). */
static void add_state(json_t *o)
{
        const char *state = json_string_value(json_object_get(o, "state"));
        json_t *ec = json_object_get(o, "exit_code");
        int64_t sig = json_integer_value(json_object_get(o, "term_signal"));
        char result[32];

        if (state && strcmp(state, "running") == 0) {
                bool alive =
                    recorder_alive(json_string_value(json_object_get(o, "host")),
                                   json_string_value(json_object_get(o, "boot_id")),
                                   json_integer_value(json_object_get(o, "recorder_pid")),
                                   json_integer_value(json_object_get(o, "recorder_start")));
                state = alive ? "running" : "incomplete";
                snprintf(result, sizeof(result), "%s", state);
        } else if (sig > 0) {
                snprintf(result, sizeof(result), "signal %lld", (long long)sig);
        } else if (json_is_integer(ec) && json_integer_value(ec) == 0) {
                snprintf(result, sizeof(result), "ok");
        } else if (json_is_integer(ec)) {
                snprintf(result, sizeof(result), "exit %lld", (long long)json_integer_value(ec));
        } else {
                snprintf(result, sizeof(result), "unknown");
        }
        json_object_set_new(o, "state", json_string(state ? state : "unknown"));
        json_object_set_new(o, "result", json_string(result));
        json_object_del(o, "boot_id");
        json_object_del(o, "recorder_pid");
        json_object_del(o, "recorder_start");
        /* argv is stored as a JSON array in text */
        {
                const char *a = json_string_value(json_object_get(o, "argv"));
                json_t *arr = a ? json_loads(a, 0, NULL) : NULL;
                json_object_set_new(o, "argv", arr ? arr : json_array());
        }
}

/* Run a query and collect its rows as objects (at most max). */
static int query_rows(struct store *st, sqlite3_stmt *s, size_t max, json_t **ret)
{
        json_t *a = json_array();
        int rc;

        if (!a)
                return -ENOMEM;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW && json_array_size(a) < max)
                json_array_append_new(a, row_json(s));
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
                json_decref(a);
                return store_map_rc(store_db(st), rc);
        }
        *ret = a;
        return 0;
}

#define RUN_COLUMNS                                                                                \
        "r.id AS db_id, r.run_id AS id, r.kind, r.argv, r.cwd, r.host, r.builder,"                 \
        " r.start_epoch, r.end_epoch, COALESCE(r.end_epoch - r.start_epoch,"                       \
        " (SELECT max(elapsed_s) FROM samples WHERE run = r.id)) AS duration_s, r.state,"          \
        " r.exit_code, r.term_signal, r.pid, r.ncpu, r.interval, r.cgroup_mode, r.vcs_rev,"        \
        " r.vcs_ref, r.samples, r.samples_dropped, r.mem_total_mb, r.mem_used_peak_mb,"            \
        " r.mem_used_peak_elapsed_s, r.mem_used_peak_stage, r.mem_used_peak_context,"              \
        " r.mem_avail_min_mb, r.swap_used_peak_mb, r.disk_avail_min_gb, r.load1_peak,"             \
        " r.cpu_pct_peak, r.cpu_pct_avg, r.compilers_peak, r.near_oom_samples,"                    \
        " r.low_disk_samples, r.boot_id, r.recorder_pid, r.recorder_start,"                        \
        " (SELECT group_concat(DISTINCT node) FROM targets t WHERE t.run = r.id AND node <> '')"   \
        " AS nodes"

int history_runs(struct store *st, double since, int64_t limit, json_t **ret)
{
        sqlite3_stmt *s = NULL;
        json_t *a = NULL;
        int r;

        r = store_map_rc(store_db(st),
                         sqlite3_prepare_v2(store_db(st),
                                            "SELECT " RUN_COLUMNS
                                            " FROM runs r WHERE r.start_epoch >= ?"
                                            " ORDER BY r.start_epoch DESC, r.id DESC LIMIT ?",
                                            -1, &s, NULL));
        if (r < 0)
                return r;
        sqlite3_bind_double(s, 1, isnan(since) ? -1e18 : since);
        sqlite3_bind_int64(s, 2, limit > 0 ? MIN(limit, HISTORY_ROWS_MAX) : HISTORY_ROWS_MAX);
        r = query_rows(st, s, HISTORY_ROWS_MAX, &a);
        sqlite3_finalize(s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++)
                add_state(json_array_get(a, i));
        *ret = a;
        return 0;
}

int history_find_run(struct store *st, const char *spec, int64_t *ret_id)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        int64_t id = 0;
        int n = 0, rc, r;

        if (!spec || !*spec)
                r = store_map_rc(
                    db, sqlite3_prepare_v2(
                            db, "SELECT id FROM runs ORDER BY start_epoch DESC, id DESC LIMIT 1",
                            -1, &s, NULL));
        else
                /* exact first, then prefixes; substr() avoids LIKE wildcards */
                r = store_map_rc(db, sqlite3_prepare_v2(db,
                                                        "SELECT id, run_id = ?1 FROM runs WHERE"
                                                        " substr(run_id, 1, length(?1)) = ?1"
                                                        " ORDER BY run_id = ?1 DESC LIMIT 2",
                                                        -1, &s, NULL));
        if (r < 0)
                return r;
        if (spec && *spec)
                sqlite3_bind_text(s, 1, spec, -1, SQLITE_STATIC);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                if (n == 0)
                        id = sqlite3_column_int64(s, 0);
                if (n == 0 && spec && *spec && sqlite3_column_int(s, 1) == 1) {
                        n = 1;
                        break; /* exact match wins */
                }
                n++;
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                r = store_map_rc(db, rc);
        sqlite3_finalize(s);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENOENT;
        if (n > 1)
                return -EEXIST;
        *ret_id = id;
        return 0;
}

static int rows_of(struct store *st, const char *sql, int64_t id, json_t **ret)
{
        sqlite3_stmt *s = NULL;
        int r = store_map_rc(store_db(st), sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL));

        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        r = query_rows(st, s, HISTORY_ROWS_MAX, ret);
        sqlite3_finalize(s);
        return r;
}

int history_run_detail(struct store *st, int64_t id, json_t **ret)
{
        json_t *rows = NULL, *o, *targets = NULL, *cache = NULL;
        int64_t steps = 0, cached = 0;
        bool any_steps = false;
        int r;

        r = rows_of(st,
                    "SELECT " RUN_COLUMNS ", r.steps AS run_steps, r.cached_steps AS run_cached"
                    " FROM runs r WHERE r.id = ?",
                    id, &rows);
        if (r < 0)
                return r;
        if (json_array_size(rows) != 1) {
                json_decref(rows);
                return -ENOENT;
        }
        o = json_incref(json_array_get(rows, 0));
        json_decref(rows);
        add_state(o);
        r = rows_of(
            st,
            "SELECT name, duration_s, steps, cached,"
            " CASE WHEN steps > 0 THEN CAST(cached AS REAL) / steps END AS cached_ratio,"
            " success, cc_hits, cc_misses, node, ref FROM targets WHERE run = ? ORDER BY name",
            id, &targets);
        if (r >= 0)
                r = rows_of(st,
                            "SELECT tool, origin, taken_epoch, hits, misses, size_bytes,"
                            " max_size_bytes, files, version FROM cache_snapshots WHERE run = ?"
                            " ORDER BY taken_epoch, id",
                            id, &cache);
        if (r < 0) {
                json_decref(o);
                json_decref(targets);
                return r;
        }
        for (size_t i = 0; i < json_array_size(targets); i++) {
                json_t *t = json_array_get(targets, i);
                if (json_is_integer(json_object_get(t, "steps"))) {
                        any_steps = true;
                        steps += json_integer_value(json_object_get(t, "steps"));
                        cached += json_integer_value(json_object_get(t, "cached"));
                }
        }
        /* The run's own totals (a step shared by targets counts once);
         * runs of an older buildtel have none: the sum of their targets. */
        if (json_is_integer(json_object_get(o, "run_steps"))) {
                any_steps = true;
                steps = json_integer_value(json_object_get(o, "run_steps"));
                cached = json_integer_value(json_object_get(o, "run_cached"));
        }
        json_object_del(o, "run_steps");
        json_object_del(o, "run_cached");
        json_object_set_new(o, "steps", any_steps ? json_integer(steps) : json_null());
        json_object_set_new(o, "cached_steps", any_steps ? json_integer(cached) : json_null());
        json_object_set_new(o, "targets", targets);
        json_object_set_new(o, "compiler_cache", cache);
        *ret = o;
        return 0;
}

static char *col_strdup(sqlite3_stmt *s, int i)
{
        const unsigned char *t = sqlite3_column_text(s, i);

        return t ? strdup((const char *)t) : NULL;
}

int history_run_info(struct store *st, int64_t id, struct run_info *ret)
{
        sqlite3 *db = store_db(st);
        sqlite3_stmt *s = NULL;
        struct run_info ri = {0};
        int r, rc;

        r = store_map_rc(
            db, sqlite3_prepare_v2(db,
                                   "SELECT run_id, kind, argv, cwd, host, start_epoch, end_epoch,"
                                   " state, exit_code, term_signal, ncpu, interval, pid"
                                   " FROM runs WHERE id = ?",
                                   -1, &s, NULL));
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) {
                sqlite3_finalize(s);
                return rc == SQLITE_DONE ? -ENOENT : store_map_rc(db, rc);
        }
        ri.run_id = col_strdup(s, 0);
        ri.kind = col_strdup(s, 1);
        {
                const char *a = (const char *)sqlite3_column_text(s, 2);
                json_t *arr = a ? json_loads(a, 0, NULL) : NULL;
                size_t n = json_array_size(arr);

                ri.argv = calloc(n + 1, sizeof(char *));
                for (size_t i = 0; ri.argv && i < n; i++) {
                        const char *v = json_string_value(json_array_get(arr, i));
                        ri.argv[i] = strdup(v ? v : "");
                }
                json_decref(arr);
        }
        ri.cwd = col_strdup(s, 3);
        ri.host = col_strdup(s, 4);
        ri.start_epoch = sqlite3_column_double(s, 5);
        ri.end_epoch = sqlite3_column_type(s, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 6);
        ri.finished = sqlite3_column_text(s, 7) &&
                      strcmp((const char *)sqlite3_column_text(s, 7), "finished") == 0;
        ri.exit_code = sqlite3_column_type(s, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 8);
        ri.term_signal = sqlite3_column_int(s, 9);
        ri.ncpu = (unsigned)sqlite3_column_int(s, 10);
        ri.interval =
            sqlite3_column_type(s, 11) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 11);
        ri.pid = (long)sqlite3_column_int64(s, 12);
        sqlite3_finalize(s);
        if (!ri.run_id || !ri.kind || !ri.argv) {
                run_info_release(&ri);
                return -ENOMEM;
        }
        *ret = ri;
        return 0;
}

static int replay_add(void *userdata, const struct sample *smp)
{
        summary_add(userdata, smp);
        return 0;
}

int64_t history_replay(struct store *st, int64_t id, struct summary *sum)
{
        /* The same row reader as export: only the columns the file has, so
         * an older file's missing columns stay unknown (NAN, ""). */
        return history_run_samples(st, id, replay_add, sum);
}

int history_layers(struct store *st, double since, int64_t limit, json_t **ret)
{
        /* The latest build of each target, and the node of the build
         * before it: a new node cannot use the old node's local cache. */
        static const char sql[] =
            "WITH b AS (SELECT t.name, t.steps, t.cached, t.node, t.duration_s, t.success,"
            "  r.run_id, r.start_epoch,"
            "  ROW_NUMBER() OVER (PARTITION BY t.name ORDER BY r.start_epoch DESC, r.id DESC) AS k"
            "  FROM targets t JOIN runs r ON r.id = t.run)"
            " SELECT cur.name AS target, cur.run_id AS run, cur.start_epoch, cur.steps,"
            "  cur.cached, CASE WHEN cur.steps > 0 THEN CAST(cur.cached AS REAL) / cur.steps END"
            "  AS ratio, cur.node, prev.node AS previous_node, prev.run_id AS previous_run,"
            "  (prev.node IS NOT NULL AND cur.node IS NOT NULL AND prev.node <> cur.node)"
            "  AS node_changed, cur.duration_s, cur.success"
            " FROM b cur LEFT JOIN b prev ON prev.name = cur.name AND prev.k = 2"
            " WHERE cur.k = 1 AND cur.start_epoch >= ? ORDER BY cur.start_epoch DESC,"
            " cur.name LIMIT ?";
        sqlite3_stmt *s = NULL;
        json_t *a = NULL;
        int r = store_map_rc(store_db(st), sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL));

        if (r < 0)
                return r;
        sqlite3_bind_double(s, 1, isnan(since) ? -1e18 : since);
        sqlite3_bind_int64(s, 2, limit > 0 ? MIN(limit, HISTORY_ROWS_MAX) : HISTORY_ROWS_MAX);
        r = query_rows(st, s, HISTORY_ROWS_MAX, &a);
        sqlite3_finalize(s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *o = json_array_get(a, i);
                json_object_set_new(
                    o, "node_changed",
                    json_boolean(json_integer_value(json_object_get(o, "node_changed"))));
        }
        *ret = a;
        return 0;
}

int history_cache_previous(struct store *st, const char *tool, int64_t before_id, json_t **ret)
{
        sqlite3_stmt *s = NULL;
        json_t *a = NULL;
        int r = store_map_rc(
            store_db(st),
            sqlite3_prepare_v2(store_db(st),
                               "SELECT id, taken_epoch, tool, hits, misses, size_bytes,"
                               " max_size_bytes, files, version FROM cache_snapshots"
                               " WHERE tool = ? AND origin = 'cache' AND (?2 = 0 OR id < ?2)"
                               " ORDER BY id DESC LIMIT 1",
                               -1, &s, NULL));

        if (r < 0)
                return r;
        sqlite3_bind_text(s, 1, tool, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, before_id);
        r = query_rows(st, s, 1, &a);
        sqlite3_finalize(s);
        if (r < 0)
                return r;
        *ret = json_array_size(a) ? json_incref(json_array_get(a, 0)) : NULL;
        json_decref(a);
        return 0;
}

int history_cache_runs_since(struct store *st, const char *tool, double since, json_t **ret)
{
        sqlite3_stmt *s = NULL;
        json_t *a = NULL;
        int r = store_map_rc(
            store_db(st),
            sqlite3_prepare_v2(store_db(st),
                               "SELECT count(*) AS runs,"
                               " sum(CASE WHEN l.hits >= f.hits AND l.misses >= f.misses"
                               "     THEN l.hits - f.hits END) AS hits,"
                               " sum(CASE WHEN l.hits >= f.hits AND l.misses >= f.misses"
                               "     THEN l.misses - f.misses END) AS misses"
                               " FROM runs r JOIN cache_snapshots l ON l.run = r.id AND l.tool = ?1"
                               "  AND l.origin = 'log-last'"
                               " LEFT JOIN cache_snapshots f ON f.run = r.id AND f.tool = ?1"
                               "  AND f.origin = 'log-first'"
                               " WHERE r.start_epoch >= ?2",
                               -1, &s, NULL));

        if (r < 0)
                return r;
        sqlite3_bind_text(s, 1, tool, -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, since);
        r = query_rows(st, s, 1, &a);
        sqlite3_finalize(s);
        if (r < 0)
                return r;
        *ret = json_incref(json_array_get(a, 0));
        json_decref(a);
        return *ret ? 0 : -ENOMEM;
}

/* n digits exactly at *p into *ret. */
static int digits(const char **p, const char *end, int n, int *ret)
{
        int v = 0;

        if (end - *p < n)
                return -EINVAL;
        for (int i = 0; i < n; i++) {
                char c = (*p)[i];
                if (c < '0' || c > '9')
                        return -EINVAL;
                v = v * 10 + (c - '0');
        }
        *p += n;
        *ret = v;
        return 0;
}

int history_parse_when(const char *str, double now, double *ret)
{
        const char *p = str, *end = str + strlen(str);
        struct tm tm = {0};
        bool utc = false;
        time_t t;
        int y, mo, d, h = 0, mi = 0, sec = 0;

        /* a span back from now */
        if (p < end && end - p <= 20 && strchr("smhdw", end[-1])) {
                uint64_t n;
                const char *q = p;
                static const struct {
                        char unit;
                        double s;
                } units[] = {
                    {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800},
                };

                if (parse_u64(&q, end - 1, &n) == 0 && q == end - 1 && n <= 100u * 365 * 86400) {
                        for (size_t i = 0; i < ARRAY_SIZE(units); i++)
                                if (units[i].unit == end[-1]) {
                                        *ret = now - (double)n * units[i].s;
                                        return 0;
                                }
                }
                return -EINVAL;
        }
        if (digits(&p, end, 4, &y) < 0 || !skip_prefix(&p, end, "-") ||
            digits(&p, end, 2, &mo) < 0 || !skip_prefix(&p, end, "-") || digits(&p, end, 2, &d) < 0)
                return -EINVAL;
        if (p < end && (*p == 'T' || *p == ' ')) {
                p++;
                if (digits(&p, end, 2, &h) < 0 || !skip_prefix(&p, end, ":") ||
                    digits(&p, end, 2, &mi) < 0)
                        return -EINVAL;
                if (skip_prefix(&p, end, ":") && digits(&p, end, 2, &sec) < 0)
                        return -EINVAL;
        }
        if (skip_prefix(&p, end, "Z"))
                utc = true;
        if (p != end || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
            sec > 60)
                return -EINVAL;
        tm.tm_year = y - 1900;
        tm.tm_mon = mo - 1;
        tm.tm_mday = d;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = sec;
        tm.tm_isdst = -1;
        t = utc ? timegm(&tm) : mktime(&tm);
        if (t == (time_t)-1)
                return -EINVAL;
        *ret = (double)t;
        return 0;
}
