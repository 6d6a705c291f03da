/* SPDX-License-Identifier: MIT */
/* The history's writes of a run: its row (begun, its progress, its extra
 * facts, finished, marked unrecorded), its targets, compiler-cache
 * snapshots and compile units (and their read back). */
#include "store/store.h"
#include "store/store-sql.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "model/targets.h"
#include "model/units.h"
#include "render/jsonw.h"
#include "util/json-cleanup.h"
#include "util/macro.h"
#include "util/util.h"

static double point_of(const struct summary_point *p)
{
        return p->set ? p->value : NAN;
}

/* The run's argv as a compact JSON array ([] for none); NULL when memory
 * ran out. */
static char *argv_json(const struct run_info *ri)
{
        _cleanup_json_ json_t *a = ri->argv ? jsonw_argv(ri->argv) : json_array();

        return a ? json_dumps(a, JSON_COMPACT) : NULL;
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
        int r;

        if (!argv)
                return -ENOMEM;
        r = store_begin(st);
        if (r < 0)
                return r;
        r = store_exec(st, "DELETE FROM runs WHERE run_id = ?", "t", ri->run_id);
        if (r >= 0)
                r = store_exec(
                    st, sql, "tttttdiiriittttttt", ri->run_id, ri->kind ? ri->kind : "run", argv,
                    ri->cwd, ri->host, isfinite(ri->start_epoch) ? ri->start_epoch : 0.0,
                    (int64_t)ri->pid, (int64_t)ri->ncpu, ri->interval,
                    (int64_t)(rec ? rec->pid : 0), (int64_t)(rec ? rec->starttime : 0),
                    rec ? rec->boot_id : NULL, x ? x->builder : NULL, x ? x->cgroup_mode : NULL,
                    x ? x->vcs_rev : NULL, x && x->vcs_ref && x->vcs_ref[0] ? x->vcs_ref : NULL,
                    x ? x->build_log : NULL, ri->job);
        if (r >= 0)
                r = store_commit(st);
        if (r >= 0)
                *ret_id = store_last_rowid(st);
        else
                store_rollback(st);
        return r;
}

/* The summary figures, bound first, in the order of SUMMARY_SET. */
#define SUMMARY_SET                                                                                \
        "samples = ?, mem_total_mb = ?, mem_used_peak_mb = ?, mem_used_peak_elapsed_s = ?,"        \
        " mem_used_peak_stage = ?, mem_used_peak_context = ?, mem_avail_min_mb = ?,"               \
        " swap_used_peak_mb = ?, disk_avail_min_gb = ?, load1_peak = ?, cpu_pct_peak = ?,"         \
        " cpu_pct_avg = ?, compilers_peak = ?, near_oom_samples = ?, low_disk_samples = ?,"        \
        " samples_dropped = ?"
#define SUMMARY_NPARAMS 16

/* With ri, the cgroup mode too. */
int store_run_update(struct store *st, int64_t id, const struct run_info *ri,
                     const struct summary *sum, const char *summary_json, uint64_t dropped)
{
        const struct summary_point *peak = &sum->mem_used_peak;
        sqlite3_stmt *s = NULL;
        int r = store_prepare(
            st,
            ri ? "UPDATE runs SET " SUMMARY_SET ", end_epoch = ?, state = ?, exit_code = ?,"
                 " term_signal = ?, summary_json = ?, cgroup_mode = COALESCE(?, cgroup_mode),"
                 " pid = ? WHERE id = ?"
               : "UPDATE runs SET " SUMMARY_SET " WHERE id = ?",
            &s);

        if (r < 0)
                return r;
        store_bind(s, 1, "irrrttrrrrrrriii", (int64_t)sum->samples, sum->mem_total_mb,
                   point_of(peak), peak->set ? peak->elapsed_s : NAN,
                   peak->set ? peak->stage : NULL, peak->set ? peak->context : NULL,
                   point_of(&sum->mem_avail_min), point_of(&sum->swap_used_peak),
                   point_of(&sum->disk_avail_min), point_of(&sum->load1_peak),
                   point_of(&sum->cpu_pct_peak),
                   sum->cpu_pct_n ? sum->cpu_pct_sum / (double)sum->cpu_pct_n : NAN,
                   point_of(&sum->compilers_peak), (int64_t)sum->near_oom_samples,
                   (int64_t)sum->low_disk_samples, (int64_t)dropped);
        if (ri)
                store_bind(s, SUMMARY_NPARAMS + 1, "rtnittii", ri->end_epoch,
                           ri->finished ? "finished" : "running", (int64_t)ri->exit_code,
                           (int64_t)ri->term_signal, summary_json,
                           sum->build.mode[0] ? sum->build.mode : NULL, (int64_t)ri->pid, id);
        else
                store_bind(s, SUMMARY_NPARAMS + 1, "i", id);
        r = store_step_done(st, s);
        sqlite3_finalize(s);
        return r;
}

int store_run_set_extra(struct store *st, int64_t id, const struct store_run_extra *x)
{
        return store_exec(st,
                          "UPDATE runs SET builder = COALESCE(?, builder),"
                          " cgroup_mode = COALESCE(?, cgroup_mode), vcs_rev = COALESCE(?, vcs_rev),"
                          " vcs_ref = COALESCE(?, vcs_ref), build_log = COALESCE(?, build_log)"
                          " WHERE id = ?",
                          "ttttti", x->builder, x->cgroup_mode, x->vcs_rev,
                          x->vcs_ref && x->vcs_ref[0] ? x->vcs_ref : NULL, x->build_log, id);
}

int64_t store_fact_steps(const struct target_fact *t, bool cached)
{
        return t->steps_set ? (int64_t)(cached ? t->cached : t->steps) : -1;
}

int64_t store_cc_count(const struct cc_counts *c, bool hits)
{
        if (!c->set)
                return -1;
        return (int64_t)MIN(hits ? c->hits : c->misses, (uint64_t)INT64_MAX);
}

int store_target_insert(struct store *st, int64_t run, const struct target_fact *t)
{
        return store_exec(st,
                          "INSERT OR REPLACE INTO targets (run, name, duration_s, steps, cached,"
                          " success, cc_hits, cc_misses, node, ref, builder, sccache_hits,"
                          " sccache_misses, ccache_hits, ccache_misses, start_s, end_s)"
                          " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          "itrnnnnntttnnnnrr", run, t->name, t->duration_s,
                          store_fact_steps(t, false), store_fact_steps(t, true),
                          (int64_t)t->success, store_cc_count(&t->cc, true),
                          store_cc_count(&t->cc, false), t->node[0] ? t->node : NULL,
                          t->ref[0] ? t->ref : NULL, t->builder, store_cc_count(&t->sccache, true),
                          store_cc_count(&t->sccache, false), store_cc_count(&t->ccache, true),
                          store_cc_count(&t->ccache, false), t->start_s, t->end_s);
}

int store_cache_snapshot_insert(struct store *st, const struct store_cache_snapshot *c)
{
        return store_exec(st,
                          "INSERT INTO cache_snapshots (taken_epoch, tool, origin, run, hits,"
                          " misses, size_bytes, max_size_bytes, files, version, raw)"
                          " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                          "dttnnnnnntt", c->taken_epoch, c->tool, c->origin,
                          c->run > 0 ? c->run : (int64_t)-1, c->hits, c->misses, c->size_bytes,
                          c->max_size_bytes, c->files, c->version, c->raw);
}

int store_run_set_steps(struct store *st, int64_t id, int64_t steps, int64_t cached)
{
        return store_exec(st, "UPDATE runs SET steps = ?, cached_steps = ? WHERE id = ?", "nni",
                          steps, cached, id);
}

int store_units_insert(struct store *st, int64_t run, const struct unit *rows, size_t n)
{
        sqlite3_stmt *s = NULL;
        int r = store_prepare(
            st,
            "INSERT OR REPLACE INTO units (run, kind, name, tool, first_elapsed_s,"
            " last_elapsed_s, peak_mb, peak_elapsed_s, cpu_s, path, source, cache, dir,"
            " wait_cpu_s, wait_io_s, wait_mem_s)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            &s);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                const struct unit *u = &rows[i];

                store_bind(s, 1, "itttrrrrrttttrrr", run,
                           u->kind == UNITS_LINK ? "link" : "compile", u->name, u->tool, u->first_s,
                           u->last_s, u->peak_mb, u->peak_s, u->cpu_s, u->path,
                           u->exact ? "taskstats" : "sampled",
                           u->cache ? units_cache_name(u->cache) : NULL, u->dir[0] ? u->dir : NULL,
                           u->wait_s[0], u->wait_s[1], u->wait_s[2]);
                r = store_step_done(st, s);
        }
        sqlite3_finalize(s);
        return r;
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
            .exact = store_col_text(s, 9) && strcmp(store_col_text(s, 9), "taskstats") == 0,
            .cache = units_cache_of(store_col_text(s, 10)),
            .wait_s = {store_col_real(s, 12), store_col_real(s, 13), store_col_real(s, 14)},
        };

        copy_utf8_str(row.tool, sizeof(row.tool), store_col_text(s, 1));
        copy_utf8_str(row.name, sizeof(row.name), store_col_text(s, 2));
        copy_utf8_str(row.path, sizeof(row.path), store_col_text(s, 8));
        copy_utf8_str(row.dir, sizeof(row.dir), store_col_text(s, 11));
        if (row.path[0] != '/')
                row.path[0] = '\0';
        if (units_put(w->u, &row) >= 0)
                w->n++;
        return 0;
}

int store_units_read(struct store *st, int64_t run, struct units *u)
{
        struct units_walk w = {.u = u};
        int64_t n =
            store_query(st,
                        "SELECT kind, tool, name, first_elapsed_s, last_elapsed_s, peak_mb,"
                        " peak_elapsed_s, cpu_s, path, source, cache, dir, wait_cpu_s, wait_io_s,"
                        " wait_mem_s FROM units WHERE run = ?"
                        " ORDER BY rowid",
                        UNITS_MAX, unit_row, &w, "i", run);

        return n < 0 ? (int)n : w.n;
}

int store_run_mark_unrecorded(struct store *st, int64_t id, bool full)
{
        return store_exec(st, "UPDATE runs SET state = ? WHERE id = ? AND state = 'running'", "ti",
                          full ? "disk-full" : "failed-to-record", id);
}
