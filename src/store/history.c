/* SPDX-License-Identifier: MIT */
#include "store/history.h"
#include "store/store-sql.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/figures.h"
#include "model/ranges.h"
#include "util/macro.h"
#include "util/util.h"

/* ---- runs ---------------------------------------------------------------- */

/* A run's steps: its own distinct steps (version 4: a step shared by
 * targets counts once), else (an older buildtel's run) the sum of its
 * targets', each capped so that a hand-edited file cannot make the sum
 * overflow (an SQL error) with a few huge values. */
#define STEPS_CAP "1099511627776"

/* A figure of the stored summary JSON (a finished run's; NULL before). */
#define SUMMARY_AT(path)                                                                           \
        "CASE WHEN json_valid(r.summary_json) THEN json_extract(r.summary_json, '" path "') END"

/* The columns of a run row, in the order of the enum: one line each, so a
 * column and its index cannot drift apart. F: read_run() takes the column
 * into that field of struct store_run as it is (TEXT a copy, COUNT, REAL,
 * THRESHOLD: threshold_of()); X: read by hand. */
/* clang-format off */
#define RUN_COLUMNS(X, F)                                                                          \
        X(ID, "r.id")                                                                              \
        X(RUN_ID, "r.run_id")                                                                      \
        X(KIND, "r.kind")                                                                          \
        X(ARGV, "r.argv")                                                                          \
        X(CWD, "r.cwd")                                                                            \
        X(HOST, "r.host")                                                                          \
        X(JOB, "r.job")                                                                            \
        F(BUILDER, "r.builder", TEXT, builder)                                                     \
        X(START, "r.start_epoch")                                                                  \
        X(END, "r.end_epoch")                                                                      \
        F(DURATION, "run_duration(r.start_epoch, r.end_epoch, r.start_epoch +"                     \
                    " (SELECT max(elapsed_s) FROM samples WHERE run = r.id))", REAL, duration_s)   \
        X(STATE, "r.state")                                                                        \
        X(EXIT_CODE, "r.exit_code")                                                                \
        X(TERM_SIGNAL, "r.term_signal")                                                            \
        X(PID, "r.pid")                                                                            \
        X(NCPU, "r.ncpu")                                                                          \
        X(INTERVAL, "r.interval")                                                                  \
        F(CGROUP_MODE, "r.cgroup_mode", TEXT, cgroup_mode)                                         \
        F(VCS_REV, "r.vcs_rev", TEXT, vcs_rev)                                                     \
        F(VCS_REF, "r.vcs_ref", TEXT, vcs_ref)                                                     \
        F(BUILD_LOG, "r.build_log", TEXT, build_log)                                               \
        F(SAMPLES, "r.samples", COUNT, samples)                                                    \
        F(DROPPED, "r.samples_dropped", COUNT, samples_dropped)                                    \
        F(MEM_TOTAL, "r.mem_total_mb", REAL, mem_total_mb)                                         \
        F(MEM_PEAK, "r.mem_used_peak_mb", REAL, mem_used_peak_mb)                                  \
        F(MEM_PEAK_ELAPSED, "r.mem_used_peak_elapsed_s", REAL, mem_used_peak_elapsed_s)            \
        F(MEM_PEAK_STAGE, "r.mem_used_peak_stage", TEXT, mem_used_peak_stage)                      \
        F(MEM_PEAK_CONTEXT, "r.mem_used_peak_context", TEXT, mem_used_peak_context)                \
        F(MEM_AVAIL_MIN, "r.mem_avail_min_mb", REAL, mem_avail_min_mb)                             \
        F(SWAP_PEAK, "r.swap_used_peak_mb", REAL, swap_used_peak_mb)                               \
        F(DISK_MIN, "r.disk_avail_min_gb", REAL, disk_avail_min_gb)                                \
        F(LOAD1_PEAK, "r.load1_peak", REAL, load1_peak)                                            \
        F(CPU_PEAK, "r.cpu_pct_peak", REAL, cpu_pct_peak)                                          \
        F(CPU_AVG, "r.cpu_pct_avg", REAL, cpu_pct_avg)                                             \
        F(COMPILERS_PEAK, "r.compilers_peak", REAL, compilers_peak)                                \
        F(NEAR_OOM, "r.near_oom_samples", COUNT, near_oom_samples)                                 \
        F(LOW_DISK, "r.low_disk_samples", COUNT, low_disk_samples)                                 \
        X(BOOT_ID, "r.boot_id")                                                                    \
        X(RECORDER_PID, "r.recorder_pid")                                                          \
        X(RECORDER_START, "r.recorder_start")                                                      \
        F(NODES, "(SELECT group_concat(DISTINCT node) FROM targets t"                              \
                 " WHERE t.run = r.id AND node <> '')", TEXT, nodes)                               \
        F(STEPS, "COALESCE(r.steps, (SELECT sum(min(steps, " STEPS_CAP "))"                        \
                 " FROM targets t WHERE t.run = r.id))", COUNT, steps)                             \
        X(CACHED, "CASE WHEN r.steps IS NOT NULL THEN COALESCE(r.cached_steps, 0) ELSE"            \
                  " (SELECT sum(min(COALESCE(cached, 0), " STEPS_CAP ")) FROM targets t"           \
                  " WHERE t.run = r.id AND steps IS NOT NULL) END")                                \
        F(NEAR_OOM_MB, SUMMARY_AT("$.thresholds.near_oom_mb"), THRESHOLD, near_oom_mb)             \
        F(LOW_DISK_GB, SUMMARY_AT("$.thresholds.low_disk_gb"), THRESHOLD, low_disk_gb)             \
        F(MEM_CAP_MB, SUMMARY_AT("$.thresholds.memory_max_mb"), THRESHOLD, mem_cap_mb)             \
        F(BUILD_PEAK, SUMMARY_AT("$.build.mem_peak_mb.value"), THRESHOLD, build_mem_peak_mb)       \
        F(BUILD_ANON_PEAK, SUMMARY_AT("$.build.mem_anon_peak_mb.value"), THRESHOLD,                \
          build_anon_peak_mb)                                                                      \
        F(BUILD_CPU, SUMMARY_AT("$.build.cpu_user_s") " + " SUMMARY_AT("$.build.cpu_sys_s"),       \
          THRESHOLD, build_cpu_s)                                                                  \
        F(BUILD_OOM, SUMMARY_AT("$.build.oom_kills"), THRESHOLD, build_oom_kills)                  \
        F(UNIT_NAME, SUMMARY_AT("$.units[0].name"), TEXT, unit_peak_name)                          \
        F(UNIT_SHOWN, SUMMARY_AT("$.units[0].shown"), TEXT, unit_peak_shown)                       \
        F(UNIT_TOOL, SUMMARY_AT("$.units[0].tool"), TEXT, unit_peak_tool)                          \
        F(FAIL_TARGET, SUMMARY_AT("$.run.failure.target"), TEXT, fail_target)                      \
        F(FAIL_TOOL, SUMMARY_AT("$.run.failure.tool"), TEXT, fail_tool)                            \
        F(FAIL_FIRST, SUMMARY_AT("$.run.failure.first_error"), TEXT, fail_first)                   \
        F(FAIL_LAST, SUMMARY_AT("$.run.failure.last_error"), TEXT, fail_last)                      \
        F(PROCS, SUMMARY_AT("$.processes"), TEXT, procs_json)                                      \
        F(GUARD, SUMMARY_AT("$.memory_guard"), TEXT, guard_json)                                   \
        F(UNIT_PEAK, SUMMARY_AT("$.units[0].peak_mb"), THRESHOLD, unit_peak_mb)                    \
        F(JOBS,                                                                                    \
          "CASE WHEN json_valid(r.summary_json) THEN (SELECT json_extract(j.value, '$.text')"      \
          " FROM json_each(r.summary_json, '$.readings') j"                                        \
          " WHERE json_extract(j.value, '$.id') = 'jobs') END", TEXT, jobs_reading)
/* clang-format on */

#define RUN_ENUM(e, sql) RC_##e,
#define RUN_ENUM_F(e, sql, kind, field) RC_##e,
enum { RUN_COLUMNS(RUN_ENUM, RUN_ENUM_F) RC_COUNT };
/* Each column with a comma after it; a constant ends the list. */
#define RUN_SQL(e, sql) sql ", "
#define RUN_SQL_F(e, sql, kind, field) sql ", "
#define RUN_SELECT "SELECT " RUN_COLUMNS(RUN_SQL, RUN_SQL_F) "0 FROM runs r"

#define RUN_NO_FIELD(e, sql)
#define RUN_FIELD(e, sql, kind, field) {RC_##e, RF_##kind, offsetof(struct store_run, field)},
static const struct run_field {
        int col;
        enum { RF_TEXT, RF_COUNT, RF_REAL, RF_THRESHOLD } kind;
        size_t off;
} run_fields[] = {RUN_COLUMNS(RUN_NO_FIELD, RUN_FIELD)};

/* Is the recorder of a running row still there? Without the reader's
 * liveness facts, or for another machine's row, it cannot tell. */
static bool recorder_alive(const struct store_liveness *lv, const char *host, const char *boot_id,
                           int64_t pid, int64_t start)
{
        if (!lv || !host || strcmp(host, lv->host) != 0)
                return true; /* another machine: cannot tell */
        if (!lv->boot_id || !boot_id || strcmp(boot_id, lv->boot_id) != 0)
                return false; /* rebooted since */
        return pid > 0 && pid <= LONG_MAX && start >= 0 && lv->alive &&
               lv->alive(lv->userdata, (long)pid, (uint64_t)start);
}

const char *store_run_state_name(enum store_run_state s)
{
        static const char *const names[] = {
            [STORE_RUN_FINISHED] = "finished",
            [STORE_RUN_RUNNING] = "running",
            [STORE_RUN_INCOMPLETE] = "incomplete",
            [STORE_RUN_UNRECORDED] = "failed-to-record",
            [STORE_RUN_DISK_FULL] = "not recorded: disk full",
        };

        return (unsigned)s < ARRAY_SIZE(names) && names[s] ? names[s] : "unknown";
}

void store_run_release(struct store_run *r)
{
        if (!r)
                return;
        run_info_release(&r->info);
        for (size_t i = 0; i < ARRAY_SIZE(run_fields); i++)
                if (run_fields[i].kind == RF_TEXT)
                        free(*(char **)((char *)r + run_fields[i].off));
        memset(r, 0, sizeof(*r));
}

/* A copy of text column i (NULL for NULL); *oom set when memory ran out. */
static char *col_dup(sqlite3_stmt *s, int i, bool *oom)
{
        const char *v = store_col_text(s, i);
        char *d = v ? strdup(v) : NULL;

        if (v && !d)
                *oom = true;
        return d;
}

/* A threshold of the stored summary: a number >= 0, else NAN. */
static double threshold_of(sqlite3_stmt *s, int i)
{
        int t = sqlite3_column_type(s, i);
        double v = sqlite3_column_double(s, i);

        return (t == SQLITE_INTEGER || t == SQLITE_FLOAT) && isfinite(v) && v >= 0 ? v : NAN;
}

/* argv is stored as a JSON array of strings; anything else reads as an
 * empty command. NULL when memory ran out. */
static char **argv_of(const char *text)
{
        json_t *arr = text ? json_loads(text, 0, NULL) : NULL;
        size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
        char **argv = calloc(n + 1, sizeof(char *));
        bool oom = !argv;

        for (size_t i = 0; argv && i < n; i++) {
                const char *v = json_string_value(json_array_get(arr, i));
                argv[i] = strdup(v ? v : "");
                oom = oom || !argv[i];
        }
        json_decref(arr);
        if (oom && argv) {
                for (size_t i = 0; i < n; i++)
                        free(argv[i]);
                free(argv);
                argv = NULL;
        }
        return argv;
}

static int clamp_int(int64_t v, int unknown)
{
        return v < 0 || v > INT_MAX ? unknown : (int)v;
}

/* A number of a row: NAN when NULL or out of its range (model/ranges.h). */
static double col_range(sqlite3_stmt *s, int i, enum range_kind k)
{
        double v = store_col_real(s, i);

        return range_ok(k, v) ? v : NAN;
}

/* The run's facts (run_info) from its row. */
static void read_run_info(sqlite3_stmt *s, struct run_info *ri, bool *oom)
{
        const char *state = store_col_text(s, RC_STATE);
        int64_t ncpu = store_col_count(s, RC_NCPU), pid = store_col_count(s, RC_PID);

        ri->run_id = strdup(store_col_text(s, RC_RUN_ID) ? store_col_text(s, RC_RUN_ID) : "");
        /* the row may have been edited: its id names files */
        *oom = *oom || run_id_sanitize(&ri->run_id) < 0;
        ri->kind = strdup(store_col_text(s, RC_KIND) ? store_col_text(s, RC_KIND) : "run");
        ri->argv = argv_of(store_col_text(s, RC_ARGV));
        *oom = *oom || !ri->run_id || !ri->kind || !ri->argv;
        ri->cwd = col_dup(s, RC_CWD, oom);
        ri->host = col_dup(s, RC_HOST, oom);
        ri->job = col_dup(s, RC_JOB, oom);
        ri->start_epoch = col_range(s, RC_START, RANGE_EPOCH);
        ri->end_epoch = col_range(s, RC_END, RANGE_EPOCH);
        ri->finished = state && strcmp(state, "finished") == 0;
        ri->exit_code = clamp_int(store_col_count(s, RC_EXIT_CODE), -1);
        ri->term_signal = clamp_int(store_col_count(s, RC_TERM_SIGNAL), 0);
        ri->ncpu = ncpu > 0 && ncpu <= UINT_MAX ? (unsigned)ncpu : 0;
        ri->interval = col_range(s, RC_INTERVAL, RANGE_INTERVAL);
        if (!range_ok_i64(RANGE_EXIT_CODE, ri->exit_code))
                ri->exit_code = -1;
        if (!range_ok_i64(RANGE_SIGNAL, ri->term_signal))
                ri->term_signal = 0;
        ri->pid = pid > 0 && pid <= LONG_MAX ? (long)pid : 0;
}

static enum store_run_state state_of(sqlite3_stmt *s, const struct store_liveness *lv)
{
        const char *state = store_col_text(s, RC_STATE);

        if (!state)
                return STORE_RUN_UNKNOWN;
        if (strcmp(state, "finished") == 0)
                return STORE_RUN_FINISHED;
        if (strcmp(state, "failed-to-record") == 0)
                return STORE_RUN_UNRECORDED;
        if (strcmp(state, "disk-full") == 0)
                return STORE_RUN_DISK_FULL;
        if (strcmp(state, "running") != 0)
                return STORE_RUN_UNKNOWN;
        return recorder_alive(lv, store_col_text(s, RC_HOST), store_col_text(s, RC_BOOT_ID),
                              store_col_count(s, RC_RECORDER_PID),
                              store_col_count(s, RC_RECORDER_START))
                   ? STORE_RUN_RUNNING
                   : STORE_RUN_INCOMPLETE;
}

/* The current row of a RUN_SELECT statement into *ret. 0 or -ENOMEM. */
static int read_run(sqlite3_stmt *s, const struct store_liveness *lv, struct store_run *ret)
{
        struct store_run r = {.id = sqlite3_column_int64(s, RC_ID)};
        bool oom = false;

        read_run_info(s, &r.info, &oom);
        r.state = state_of(s, lv);
        for (size_t i = 0; i < ARRAY_SIZE(run_fields); i++) {
                const struct run_field *f = &run_fields[i];
                void *field = (char *)&r + f->off;

                if (f->kind == RF_TEXT)
                        *(char **)field = col_dup(s, f->col, &oom);
                else if (f->kind == RF_COUNT)
                        *(int64_t *)field = store_col_count(s, f->col);
                else
                        *(double *)field = f->kind == RF_REAL ? store_col_real(s, f->col)
                                                              : threshold_of(s, f->col);
        }
        r.cached_steps = r.steps >= 0 ? store_col_count(s, RC_CACHED) : -1;
        if (oom) {
                store_run_release(&r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

/* A walk over run rows: each to fn, or with one the row into *one. */
struct run_walk {
        const struct store_liveness *lv;
        store_run_fn fn;
        void *userdata;
        struct store_run *one;
};

static int run_row(void *ctx, sqlite3_stmt *s)
{
        struct run_walk *w = ctx;
        struct store_run run;
        int r = read_run(s, w->lv, &run);

        if (r < 0)
                return r;
        if (w->one) {
                *w->one = run;
                return 0;
        }
        r = w->fn ? w->fn(w->userdata, &run) : 0;
        store_run_release(&run);
        return r;
}

int store_runs_each(struct store *st, double since, int64_t limit, store_run_fn fn, void *userdata)
{
        struct run_walk w = {.lv = store_liveness(st), .fn = fn, .userdata = userdata};

        return (int)store_query(
            st,
            RUN_SELECT " WHERE r.start_epoch >= ? ORDER BY r.start_epoch DESC, r.id DESC LIMIT ?",
            STORE_ROWS_MAX, run_row, &w, "di", isnan(since) ? -1e18 : since,
            (int64_t)(limit > 0 ? MIN(limit, STORE_ROWS_MAX) : STORE_ROWS_MAX));
}

int store_job_runs(struct store *st, const struct store_job_filter *f, int64_t limit,
                   store_run_fn fn, void *userdata)
{
        struct run_walk w = {.lv = store_liveness(st), .fn = fn, .userdata = userdata};

        if (!f || !f->job)
                return -EINVAL;
        return (int)store_query(st,
                                RUN_SELECT " WHERE r.job = ?1 AND (?2 IS NULL OR r.host = ?2)"
                                           " AND (?3 = 0 OR r.state = 'finished')"
                                           " AND (?4 < 0 OR (?4 = 1) = (r.state = 'finished' AND"
                                           "  r.exit_code = 0 AND COALESCE(r.term_signal, 0) = 0))"
                                           " AND (?5 = 0 OR r.id < ?5) AND r.start_epoch >= ?6"
                                           " ORDER BY r.start_epoch DESC, r.id DESC LIMIT ?7",
                                STORE_ROWS_MAX, run_row, &w, "ttiiidi", f->job, f->host,
                                (int64_t)f->finished_only,
                                (int64_t)(f->success < 0 ? -1 : f->success > 0),
                                (int64_t)(f->before_id > 0 ? f->before_id : 0),
                                isnan(f->since) || f->since == 0 ? -1e18 : f->since,
                                (int64_t)(limit > 0 ? MIN(limit, STORE_ROWS_MAX) : STORE_ROWS_MAX));
}

void store_run_figures(const struct store_run *r, struct run_figures *ret)
{
        run_figures_init(ret);
        ret->duration_s = r->duration_s;
        ret->cpu_s = r->build_cpu_s;
        ret->mem_peak_mb = r->build_mem_peak_mb;
        ret->mem_anon_peak_mb = r->build_anon_peak_mb;
        ret->oom_kills = r->build_oom_kills;
        ret->host_mem_used_peak_mb = r->mem_used_peak_mb;
        ret->cpu_avg_pct = r->cpu_pct_avg;
        ret->steps_set = r->steps >= 0;
        ret->steps = store_u32_of(r->steps);
        ret->cached = store_u32_of(r->cached_steps);
        ret->exit_code = r->info.exit_code;
}

int store_run_get(struct store *st, int64_t id, struct store_run *ret)
{
        struct store_run run;
        struct run_walk w = {.lv = store_liveness(st), .one = &run};
        int64_t n = store_query(st, RUN_SELECT " WHERE r.id = ?", 1, run_row, &w, "i", id);

        if (n < 0)
                return (int)n;
        if (n == 0)
                return -ENOENT;
        *ret = run;
        return 0;
}

struct find {
        int64_t id;
        int n;
        bool exact;
};

static int find_row(void *ctx, sqlite3_stmt *s)
{
        struct find *f = ctx;

        if (f->n++ == 0) {
                f->id = sqlite3_column_int64(s, 0);
                f->exact = sqlite3_column_int(s, 1) == 1;
        }
        return 0;
}

int store_run_find(struct store *st, const char *spec, int64_t *ret_id)
{
        struct find f = {0};
        /* exact first, then prefixes (substr() avoids LIKE wildcards); no
         * spec: every run, the latest first */
        int64_t n =
            store_query(st,
                        "SELECT id, ?1 <> '' AND run_id = ?1 FROM runs"
                        " WHERE substr(run_id, 1, length(?1)) = ?1"
                        " ORDER BY 2 DESC, start_epoch DESC, id DESC LIMIT ?2",
                        2, find_row, &f, "ti", spec ? spec : "", (int64_t)(spec && *spec ? 2 : 1));

        if (n < 0)
                return (int)n;
        if (n == 0)
                return -ENOENT;
        if (n > 1 && !f.exact) /* an exact match wins */
                return -EEXIST;
        *ret_id = f.id;
        return 0;
}

static int steps_row(void *ctx, sqlite3_stmt *s)
{
        int64_t *v = ctx;

        v[0] = store_col_count(s, 0);
        v[1] = store_col_count(s, 1);
        return 0;
}

int store_run_steps(struct store *st, int64_t id, int64_t *ret_steps, int64_t *ret_cached)
{
        int64_t v[2] = {-1, -1};
        int64_t n = store_query(st, "SELECT steps, cached_steps FROM runs WHERE id = ?", 1,
                                steps_row, v, "i", id);

        if (n < 0)
                return (int)n;
        *ret_steps = v[0];
        *ret_cached = v[1];
        return 0;
}

/* ---- targets ------------------------------------------------------------- */

enum {
        TC_NAME,
        TC_DURATION,
        TC_STEPS,
        TC_CACHED,
        TC_SUCCESS,
        TC_CC_HITS,
        TC_CC_MISSES,
        TC_NODE,
        TC_REF,
        TC_BUILDER,
        TC_SCCACHE_HITS,
        TC_SCCACHE_MISSES,
        TC_CCACHE_HITS,
        TC_CCACHE_MISSES,
        TC_START,
        TC_END,
        TC_COUNT
};
#define TARGET_COLUMNS                                                                             \
        "name, duration_s, steps, cached, success, cc_hits, cc_misses, node, ref,"                 \
        " builder, sccache_hits, sccache_misses, ccache_hits, ccache_misses, start_s, end_s"
#define TARGET_SELECT "SELECT " TARGET_COLUMNS " FROM targets"

uint32_t store_u32_of(int64_t v)
{
        return v < 0 ? 0 : (uint32_t)MIN(v, (int64_t)UINT32_MAX);
}

/* Counts in columns i and i + 1 into *ret, when both are known. */
static void cc_of(sqlite3_stmt *s, int i, struct cc_counts *ret)
{
        int64_t hits = store_col_count(s, i), misses = store_col_count(s, i + 1);

        if (hits >= 0 && misses >= 0)
                *ret = (struct cc_counts){
                    .set = true, .hits = (uint64_t)hits, .misses = (uint64_t)misses};
}

/* One stored row as the fact it was written from (sink-sqlite.c). */
static void read_target(sqlite3_stmt *s, struct target_fact *t)
{
        int64_t success = store_col_count(s, TC_SUCCESS);

        memset(t, 0, sizeof(*t));
        copy_utf8_str(t->name, sizeof(t->name), store_col_text(s, TC_NAME));
        /* out of range: unknown, as NULL */
        t->start_s = col_range(s, TC_START, RANGE_DURATION);
        t->end_s = col_range(s, TC_END, RANGE_DURATION);
        t->end_s = t->end_s >= t->start_s ? t->end_s : NAN;
        t->duration_s = col_range(s, TC_DURATION, RANGE_DURATION);
        t->steps_set = store_col_count(s, TC_STEPS) >= 0;
        t->steps = store_u32_of(store_col_count(s, TC_STEPS));
        t->cached = store_u32_of(store_col_count(s, TC_CACHED));
        t->success = success == 1   ? TARGET_BUILT
                     : success == 0 ? TARGET_FAILED
                                    : TARGET_SUCCESS_UNKNOWN;
        copy_utf8_str(t->node, sizeof(t->node), store_col_text(s, TC_NODE));
        copy_utf8_str(t->ref, sizeof(t->ref), store_col_text(s, TC_REF));
        copy_utf8_str(t->builder, sizeof(t->builder), store_col_text(s, TC_BUILDER));
        cc_of(s, TC_SCCACHE_HITS, &t->sccache);
        cc_of(s, TC_CCACHE_HITS, &t->ccache);
        targets_fact_ratios(t);
        /* a version-2 row has only the combined counts */
        cc_of(s, TC_CC_HITS, &t->cc);
}

/* A walk over target rows: each to fn. */
struct target_walk {
        store_target_fn fn;
        void *userdata;
};

static int target_row(void *ctx, sqlite3_stmt *s)
{
        struct target_walk *w = ctx;
        struct target_fact t;

        read_target(s, &t);
        return w->fn(w->userdata, &t);
}

int store_targets_each(struct store *st, int64_t id, bool insertion_order, int64_t limit,
                       store_target_fn fn, void *userdata)
{
        struct target_walk w = {.fn = fn, .userdata = userdata};

        /* rowid: the order the run inserted them, which is the model's */
        return (int)store_query(st,
                                insertion_order
                                    ? TARGET_SELECT " WHERE run = ? ORDER BY rowid LIMIT ?"
                                    : TARGET_SELECT " WHERE run = ? ORDER BY name LIMIT ?",
                                STORE_ROWS_MAX, target_row, &w, "ii", id,
                                (int64_t)(limit > 0 ? MIN(limit, STORE_ROWS_MAX) : STORE_ROWS_MAX));
}

/* ---- compiler-cache snapshots -------------------------------------------- */

/* The counters of a snapshot row from column first on: hits, misses,
 * size_bytes, max_size_bytes, files. */
static void read_counters(sqlite3_stmt *s, int first, struct store_cache_snapshot *c)
{
        c->hits = store_col_count(s, first);
        c->misses = store_col_count(s, first + 1);
        c->size_bytes = store_col_count(s, first + 2);
        c->max_size_bytes = store_col_count(s, first + 3);
        c->files = store_col_count(s, first + 4);
}

struct cache_walk {
        int64_t run;
        store_cache_fn fn;
        void *userdata;
};

static int cache_row(void *ctx, sqlite3_stmt *s)
{
        struct cache_walk *w = ctx;
        const char *tool = store_col_text(s, 0), *origin = store_col_text(s, 1);
        struct store_cache_snapshot c = {
            .tool = tool ? tool : "",
            .origin = origin ? origin : "",
            .taken_epoch = store_col_real(s, 2),
            .run = w->run,
            .version = store_col_text(s, 8),
        };

        read_counters(s, 3, &c);
        return w->fn(w->userdata, &c);
}

int store_cache_snapshots_each(struct store *st, int64_t id, store_cache_fn fn, void *userdata)
{
        struct cache_walk w = {.run = id, .fn = fn, .userdata = userdata};

        return (int)store_query(st,
                                "SELECT tool, origin, taken_epoch, hits, misses, size_bytes,"
                                " max_size_bytes, files, version FROM cache_snapshots WHERE run = ?"
                                " ORDER BY taken_epoch, id LIMIT ?",
                                STORE_ROWS_MAX, cache_row, &w, "ii", id, (int64_t)STORE_ROWS_MAX);
}

static int previous_row(void *ctx, sqlite3_stmt *s)
{
        struct store_cache_snapshot *c = ctx;

        c->taken_epoch = store_col_real(s, 0);
        read_counters(s, 1, c);
        c->run = MAX(store_col_count(s, 6), 0);
        return 0;
}

int store_cache_previous(struct store *st, const char *tool, struct store_cache_snapshot *ret)
{
        struct store_cache_snapshot c = {.tool = tool, .origin = "cache"};
        int64_t n = store_query(st,
                                "SELECT taken_epoch, hits, misses, size_bytes, max_size_bytes,"
                                " files, run FROM cache_snapshots"
                                " WHERE tool = ? AND origin = 'cache' ORDER BY id DESC LIMIT 1",
                                1, previous_row, &c, "t", tool);

        if (n == 1)
                *ret = c;
        return (int)n;
}

static int runs_since_row(void *ctx, sqlite3_stmt *s)
{
        *(struct store_cache_runs *)ctx = (struct store_cache_runs){
            .runs = MAX(store_col_count(s, 0), 0),
            .hits = store_col_count(s, 1),
            .misses = store_col_count(s, 2),
        };
        return 0;
}

int store_cache_runs_since(struct store *st, const char *tool, double since,
                           struct store_cache_runs *ret)
{
        struct store_cache_runs c;
        int64_t n =
            store_query(st,
                        "SELECT count(*),"
                        " sum(cc_delta(f.hits, f.misses, l.hits, l.misses, 0)),"
                        " sum(cc_delta(f.hits, f.misses, l.hits, l.misses, 1))"
                        " FROM runs r JOIN cache_snapshots l ON l.run = r.id AND l.tool = ?1"
                        "  AND l.origin = 'log-last'"
                        " LEFT JOIN cache_snapshots f ON f.run = r.id AND f.tool = ?1"
                        "  AND f.origin = 'log-first'"
                        " WHERE r.start_epoch >= ?2",
                        1, runs_since_row, &c, "td", tool, since);

        if (n < 0)
                return (int)n;
        if (n == 0)
                return -EIO; /* an aggregate has a row */
        *ret = c;
        return 0;
}

/* ---- layers -------------------------------------------------------------- */

struct layer_walk {
        store_layer_fn fn;
        void *userdata;
};

static int layer_row(void *ctx, sqlite3_stmt *s)
{
        struct layer_walk *w = ctx;
        const char *run = store_col_text(s, TC_COUNT);
        struct store_layer l = {
            .run = run ? run : "",
            .start_epoch = store_col_real(s, TC_COUNT + 1),
            .previous_node = store_col_text(s, TC_COUNT + 2),
            .previous_run = store_col_text(s, TC_COUNT + 3),
        };

        read_target(s, &l.target);
        l.node_changed =
            l.previous_node && l.target.node[0] && strcmp(l.previous_node, l.target.node) != 0;
        return w->fn(w->userdata, &l);
}

int store_layers_each(struct store *st, double since, int64_t limit, store_layer_fn fn,
                      void *userdata)
{
        /* The latest build of each target, and the node of the build
         * before it: a new node cannot use the old node's local cache. */
        static const char sql[] =
            "WITH b AS (SELECT t.*, r.run_id, r.start_epoch,"
            "  ROW_NUMBER() OVER (PARTITION BY t.name ORDER BY r.start_epoch DESC, r.id DESC) AS k"
            "  FROM targets t JOIN runs r ON r.id = t.run)"
            " SELECT " TARGET_COLUMNS ", run_id, start_epoch, prev_node, prev_run FROM"
            " (SELECT cur.*, prev.node AS prev_node, prev.run_id AS prev_run"
            "  FROM b cur LEFT JOIN b prev ON prev.name = cur.name AND prev.k = 2"
            "  WHERE cur.k = 1 AND cur.start_epoch >= ?)"
            " ORDER BY start_epoch DESC, name LIMIT ?";
        struct layer_walk w = {.fn = fn, .userdata = userdata};

        return (int)store_query(st, sql, STORE_ROWS_MAX, layer_row, &w, "di",
                                isnan(since) ? -1e18 : since,
                                (int64_t)(limit > 0 ? MIN(limit, STORE_ROWS_MAX) : STORE_ROWS_MAX));
}

/* ---- --since ------------------------------------------------------------- */

/* n digits exactly at *p into *ret. */
static int digits(const char **p, const char *end, int n, int *ret)
{
        const char *q = *p;
        uint64_t v;

        if (end - *p < n || parse_u64(&q, *p + n, &v) < 0 || q != *p + n)
                return -EINVAL;
        *p = q;
        *ret = (int)v;
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
                static const double unit_s[] = {1, 60, 3600, 86400, 604800};
                uint64_t n;
                const char *q = p;

                if (parse_u64(&q, end - 1, &n) < 0 || q != end - 1 || n > 100u * 365 * 86400)
                        return -EINVAL;
                *ret = now - (double)n * unit_s[strchr("smhdw", end[-1]) - "smhdw"];
                return 0;
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

/* ---- buildtel top ---------------------------------------------------- */

#define TAIL_BASE "elapsed_s, cpu_pct, mem_avail_mb, stage, context"
#define TAIL_FROM                                                                                  \
        " FROM (SELECT * FROM samples WHERE run = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq"

struct tail_walk {
        struct store_tail_point *out;
        size_t n, max;
        bool extended; /* the build's columns are there (a newer file) */
};

static int tail_row(void *ctx, sqlite3_stmt *s)
{
        struct tail_walk *w = ctx;
        struct store_tail_point *p;

        if (w->n >= w->max)
                return 0;
        p = &w->out[w->n++];
        /* the row may have been edited: each figure in its column's range */
        p->elapsed_s = col_range(s, 0, RANGE_DURATION);
        p->cpu_pct = col_range(s, 1, RANGE_PERCENT);
        p->mem_avail_mb = col_range(s, 2, RANGE_MIB);
        copy_utf8_str(p->stage, sizeof(p->stage), store_col_text(s, 3));
        copy_utf8_str(p->context, sizeof(p->context), store_col_text(s, 4));
        p->cg_mem_mb = w->extended ? col_range(s, 5, RANGE_MIB) : NAN;
        p->cg_psi_mem_some_s = w->extended ? col_range(s, 6, RANGE_CPU_SECONDS) : NAN;
        copy_utf8_str(p->running, sizeof(p->running), w->extended ? store_col_text(s, 7) : NULL);
        return 0;
}

int store_run_tail(struct store *st, int64_t id, struct store_tail_point *out, size_t max)
{
        struct tail_walk w = {.out = out, .max = MIN(max, (size_t)STORE_TAIL_MAX)};
        sqlite3_stmt *s = NULL;
        int64_t n;
        int r = store_prepare(
            st, "SELECT " TAIL_BASE ", cg_mem_mb, cg_psi_mem_some_s, running" TAIL_FROM, &s);

        w.extended = r >= 0;
        if (r < 0)
                r = store_prepare(st, "SELECT " TAIL_BASE TAIL_FROM, &s);
        if (r < 0)
                return r;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)w.max);
        n = store_rows(st, s, (int64_t)w.max, tail_row, &w);
        return n < 0 ? (int)n : (int)w.n;
}
