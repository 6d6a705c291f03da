/* SPDX-License-Identifier: MIT */
/* The window of a job's earlier runs as the baseline compares them
 * (model/baseline.h): what the history holds of each, read back. */
#include "store/history.h"
#include "store/store-sql.h"

#include <math.h>
#include <string.h>

#include "model/baseline.h"
#include "util/macro.h"

struct window {
        struct baseline_run *win;
        int64_t id[BASELINE_WINDOW];
        size_t n, cap;
};

static int on_run(void *userdata, const struct store_run *r)
{
        struct window *w = userdata;
        struct baseline_run *b;

        if (w->n == w->cap)
                return 0;
        b = &w->win[w->n];
        baseline_run_init(b);
        store_run_figures(r, &b->fig);
        b->ncpu = r->info.ncpu ? (long)r->info.ncpu : -1;
        b->mem_total_mb = r->mem_total_mb;
        b->jobs = baseline_argv_jobs(r->info.argv);
        w->id[w->n++] = r->id;
        return 0;
}

static int on_target(void *userdata, const struct target_fact *t)
{
        struct baseline_run *b = userdata;

        baseline_add_target(b, t->name, t->duration_s, t->cache_ratio);
        run_figures_cc_add(&b->fig, store_cc_count(&t->cc, true), store_cc_count(&t->cc, false));
        return 0;
}

static int unit_row(void *ctx, sqlite3_stmt *s)
{
        const char *name = store_col_text(s, 0);

        baseline_add_unit(ctx, name ? name : "", store_col_text(s, 1), store_col_real(s, 2));
        return 0;
}

static int step_row(void *ctx, sqlite3_stmt *s)
{
        const char *name = store_col_text(s, 0);
        double mem = store_col_real(s, 2);

        baseline_add_step(ctx, name ? name : "", store_col_real(s, 1),
                          isfinite(mem) ? mem / 1048576.0 : NAN);
        return 0;
}

static int read_one(struct store *st, int64_t id, struct baseline_run *b)
{
        int r = store_targets_each(st, id, false, 0, on_target, b);

        if (r >= 0)
                r = (int)store_query(st,
                                     "SELECT name, tool, peak_mb FROM units WHERE run = ?1"
                                     " AND peak_mb IS NOT NULL ORDER BY peak_mb DESC, name LIMIT 8",
                                     BASELINE_UNITS_MAX, unit_row, b, "i", id);
        if (r >= 0)
                r = (int)store_query(st,
                                     "SELECT name, end_s - start_s, mem_peak_bytes FROM steps"
                                     " WHERE run = ?1 AND step = 1 AND end_s IS NOT NULL"
                                     " ORDER BY end_s - start_s DESC, seq LIMIT 16",
                                     BASELINE_STEPS_MAX, step_row, b, "i", id);
        return r; /* < 0, or a count: only its sign is read */
}
_Static_assert(BASELINE_UNITS_MAX == 8 && BASELINE_STEPS_MAX == 16, "the LIMITs above");

int store_baseline_window(struct store *st, const char *job, const char *host, bool success,
                          int64_t before_id, struct baseline_run *win, size_t cap)
{
        struct window w = {.win = win, .cap = MIN(cap, (size_t)BASELINE_WINDOW)};
        struct store_job_filter f = {
            .job = job,
            .host = host,
            .finished_only = true,
            .success = success,
            .before_id = before_id,
            .since = NAN,
        };
        int r = store_job_runs(st, &f, (int64_t)w.cap, on_run, &w);

        for (size_t i = 0; r >= 0 && i < w.n; i++)
                r = read_one(st, w.id[i], &win[i]);
        return r < 0 ? r : (int)w.n;
}
