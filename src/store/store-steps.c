/* SPDX-License-Identifier: MIT */
/* A run's BuildKit steps and slowest ninja edges (schema version 6): the
 * model's step facts and edges written and read back. */
#include "store/store.h"
#include "store/store-sql.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "util/macro.h"
#include "util/util.h"

/* A count as a column holds it. */
static int64_t count_of(uint64_t v)
{
        return (int64_t)MIN(v, (uint64_t)INT64_MAX);
}

/* The steps the run cut past TARGETS_STEPS_MAX (NULL: none, or an older
 * file's run). */
static int steps_dropped_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;

        if (store_col_count(s, 0) > 0)
                ts->steps_dropped = store_u32_of(store_col_count(s, 0));
        return 0;
}

/* The 14 exec columns of a step from column i on: NULL when not measured. */
static void bind_step_exec(sqlite3_stmt *s, int i, const struct step_exec *e)
{
        if (!e->set) {
                for (int k = 0; k < 14; k++)
                        sqlite3_bind_null(s, i + k);
                return;
        }
        store_bind(s, i, "irrrrrrrrrttrt", (int64_t)e->execs, e->cpu_s, e->mem_peak_bytes,
                   e->anon_peak_bytes, e->io_read_bytes, e->io_write_bytes, e->net_rx_bytes,
                   e->net_tx_bytes, e->oom_kills, e->oom_at_s,
                   e->oom_victim[0] ? e->oom_victim : NULL, e->peak_proc[0] ? e->peak_proc : NULL,
                   e->peak_proc_bytes, e->from_record ? "buildkit-record" : "exec-cgroup");
}

/* The exec columns read back (column i on). */
static void step_exec_row(sqlite3_stmt *s, int i, struct step_exec *e)
{
        double *v[] = {&e->cpu_s,         &e->mem_peak_bytes, &e->anon_peak_bytes,
                       &e->io_read_bytes, &e->io_write_bytes, &e->net_rx_bytes,
                       &e->net_tx_bytes,  &e->oom_kills,      &e->oom_at_s};
        int64_t n = store_col_count(s, i);
        const char *src;

        step_exec_clear(e);
        if (n < 0)
                return;
        e->set = true;
        e->execs = (uint32_t)MIN(n, (int64_t)UINT32_MAX);
        for (int k = 0; k < (int)ARRAY_SIZE(v); k++)
                *v[k] = store_col_real(s, i + 1 + k);
        copy_utf8_str(e->oom_victim, sizeof(e->oom_victim), store_col_text(s, i + 10));
        copy_utf8_str(e->peak_proc, sizeof(e->peak_proc), store_col_text(s, i + 11));
        e->peak_proc_bytes = store_col_real(s, i + 12);
        src = store_col_text(s, i + 13);
        e->from_record = src && strcmp(src, "buildkit-record") == 0;
}

int store_steps_insert(struct store *st, int64_t run, const struct targets *ts)
{
        sqlite3_stmt *s = NULL;
        int r =
            store_prepare(st,
                          "INSERT OR REPLACE INTO steps (run, seq, name, target, start_s, end_s,"
                          " step, cached, error, canceled, exec_n, cpu_s, mem_peak_bytes,"
                          " anon_peak_bytes, io_read_bytes, io_write_bytes, net_rx_bytes,"
                          " net_tx_bytes, oom_kills, oom_at_s, oom_victim, peak_proc,"
                          " peak_proc_bytes, usage_source) VALUES "
                          "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          &s);

        for (uint32_t i = 0; r >= 0 && i < ts->nstepv && i < TARGETS_STEPS_MAX; i++) {
                const struct step_fact *f = &ts->stepv[i];

                store_bind(s, 1, "iittrriiii", run, (int64_t)i, f->name,
                           f->target >= 0 && (size_t)f->target < ts->n ? ts->t[f->target].name
                                                                       : NULL,
                           f->start_s, f->end_s, (int64_t)f->step, (int64_t)f->cached,
                           (int64_t)f->error, (int64_t)f->canceled);
                bind_step_exec(s, 11, &f->exec);
                r = store_step_done(st, s);
        }
        sqlite3_finalize(s);
        if (r >= 0 && ts->steps_dropped)
                r = store_exec(st, "UPDATE runs SET steps_dropped = ? WHERE id = ?", "ii",
                               count_of(ts->steps_dropped), run);
        return r;
}

static int step_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;
        const char *target = store_col_text(s, 1);
        struct step_fact f = {
            .target = -1,
            .start_s = store_col_real(s, 2),
            .end_s = store_col_real(s, 3),
            .step = store_col_count(s, 4) > 0,
            .cached = store_col_count(s, 5) > 0,
            .error = store_col_count(s, 6) > 0,
            .canceled = store_col_count(s, 7) > 0,
        };

        copy_utf8_str(f.name, sizeof(f.name), store_col_text(s, 0));
        step_exec_row(s, 8, &f.exec);
        if (target)
                f.target = (int)targets_get(ts, target, strlen(target));
        return targets_add_step(ts, &f);
}

int store_steps_get(struct store *st, int64_t run, struct targets *ts)
{
        int64_t n =
            store_query(st,
                        "SELECT name, target, start_s, end_s, step, cached, error, canceled,"
                        " exec_n, cpu_s, mem_peak_bytes, anon_peak_bytes, io_read_bytes,"
                        " io_write_bytes, net_rx_bytes, net_tx_bytes, oom_kills, oom_at_s,"
                        " oom_victim, peak_proc, peak_proc_bytes, usage_source"
                        " FROM steps WHERE run = ? ORDER BY seq",
                        TARGETS_STEPS_MAX, step_row, ts, "i", run);

        if (n < 0)
                return (int)n;
        (void)store_query(st, "SELECT steps_dropped FROM runs WHERE id = ?", 1, steps_dropped_row,
                          ts, "i", run);
        return (int)n;
}

/* ---- ninja edges (version 6) ---- */

/* Rows of one list: the slowest-edges table (slow = 1, seq its rank) or
 * edgev (slow = 0). */
static int insert_edges(struct store *st, int64_t run, int slow, const struct ninja_edge *e,
                        size_t n)
{
        sqlite3_stmt *s = NULL;
        int r =
            store_prepare(st,
                          "INSERT OR REPLACE INTO ninja_edges (run, slow, seq, start_ms, end_ms,"
                          " output) VALUES (?,?,?,?,?,?)",
                          &s);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                store_bind(s, 1, "iiiiit", run, (int64_t)slow, (int64_t)i, e[i].start_ms,
                           e[i].end_ms, e[i].output);
                r = store_step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
}

int store_edges_insert(struct store *st, int64_t run, const struct targets *ts)
{
        bool log = ts->ninja_log_set;
        /* each unknown (-1, NAN) stays NULL */
        int r = store_exec(st,
                           "UPDATE runs SET ninja_done = ?, ninja_total = ?, ninja_edges = ?,"
                           " ninja_max_end_ms = ?, ninja_mtime = ? WHERE id = ?",
                           "nnnnri", ts->ninja_total ? count_of(ts->ninja_done) : -1,
                           ts->ninja_total ? count_of(ts->ninja_total) : -1,
                           log ? count_of(ts->ninja_edges) : -1,
                           log ? count_of((uint64_t)MAX(ts->ninja_max_end_ms, 0)) : -1,
                           log && ts->ninja_mtime > 0 ? ts->ninja_mtime : NAN, run);

        if (r >= 0 && log)
                r = insert_edges(st, run, 1, ts->slow, MIN(ts->nslow, (size_t)TARGETS_SLOW_EDGES));
        if (r >= 0 && log && ts->edgev)
                r = insert_edges(st, run, 0, ts->edgev, MIN(ts->nedgev, TARGETS_EDGES_MAX));
        return r;
}

static int edge_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;
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
                copy_utf8_str(d->output, sizeof(d->output), store_col_text(s, 3));
        }
        return 0;
}

/* The run row's ninja figures: each NULL unknown (an older file's run). */
static int ninja_row(void *ctx, sqlite3_stmt *s)
{
        struct targets *ts = ctx;
        int64_t n = store_col_count(s, 0), done = store_col_count(s, 1),
                total = store_col_count(s, 2);

        if (done >= 0 && total >= done) {
                ts->ninja_done = (uint64_t)done;
                ts->ninja_total = (uint64_t)total;
        }
        if (n >= 0) {
                ts->ninja_log_set = true;
                ts->ninja_edges = (uint64_t)n;
                ts->ninja_max_end_ms = MAX(store_col_count(s, 3), 0);
        }
        if (isfinite(store_col_real(s, 4)))
                ts->ninja_mtime = store_col_real(s, 4);
        return 0;
}

int store_edges_get(struct store *st, int64_t run, struct targets *ts)
{
        int64_t n = store_query(st,
                                "SELECT ninja_edges, ninja_done, ninja_total, ninja_max_end_ms,"
                                " ninja_mtime FROM runs WHERE id = ?",
                                1, ninja_row, ts, "i", run);

        if (n < 0)
                return (int)n;
        free(ts->edgev);
        ts->edgev = malloc(TARGETS_EDGES_MAX * sizeof(*ts->edgev));
        ts->nedgev = 0;
        ts->nslow = 0;
        n = store_query(st,
                        "SELECT slow, start_ms, end_ms, output FROM ninja_edges WHERE run = ?"
                        " ORDER BY slow, seq",
                        TARGETS_SLOW_EDGES + TARGETS_EDGES_MAX, edge_row, ts, "i", run);
        return n < 0 ? (int)n : (int)ts->nedgev;
}

static int text_row(void *ctx, sqlite3_stmt *s)
{
        const char *v = store_col_text(s, 0);

        return v && *v && !(*(char **)ctx = strdup(v)) ? -ENOMEM : 0;
}

int store_path_get(struct store *st, int64_t run, char **ret_json)
{
        int64_t n = store_query(st,
                                "SELECT json_extract(summary_json, '$.critical_path') FROM runs"
                                " WHERE id = ? AND json_valid(summary_json)",
                                1, text_row, ret_json, "i", run);

        return n < 0 ? (int)n : *ret_json != NULL;
}
