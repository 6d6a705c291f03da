/* SPDX-License-Identifier: MIT */
/* buildtel compare A B | --last: two runs of the history side by side,
 * what matters first. The runs are read through the store (the rows
 * inspect, summarize RUN and report read), turned into the model's figure
 * lists here, compared by model/compare.c and formatted by
 * render/compare.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "model/compare.h"
#include "model/critpath.h"
#include "model/figures.h"
#include "model/targets.h"
#include "model/unitname.h"
#include "model/units.h"
#include "render/compare.h"
#include "runfiles/targetsjson.h"
#include "store/history.h"
#include "util/macro.h"

#define MIB (1024.0 * 1024.0)
#define TEXT_ROWS 12 /* rows a section shows in the text */

static double count_of(int64_t v)
{
        return v >= 0 ? (double)v : NAN;
}

static int add_facts(const struct store_run *run, struct compare_side *s)
{
        _cleanup_dbuf_ struct dbuf cmd = DBUF_INIT, rev = DBUF_INIT;
        int r = 0;

        for (size_t i = 0; r >= 0 && run->info.argv && run->info.argv[i]; i++)
                r = dbuf_printf(&cmd, "%s%s", i ? " " : "", run->info.argv[i]);
        if (r >= 0 && run->vcs_rev && *run->vcs_rev)
                r = dbuf_printf(&rev, "%s (%s)", run->vcs_rev,
                                run->vcs_ref && *run->vcs_ref ? run->vcs_ref : "detached");
        {
                const char *const v[][2] = {
                    {"command", cmd.p ? cmd.p : ""}, {"revision", rev.p ? rev.p : "-"},
                    {"host", run->info.host},        {"job", run->info.job},
                    {"cwd", run->info.cwd},          {"builder", run->builder}};

                for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(v); i++)
                        r = compare_side_add_text(s, COMPARE_FACTS, "", v[i][0], v[i][1]);
        }
        return r;
}

static int add_target(void *userdata, const struct target_fact *t)
{
        struct compare_side *s = userdata;
        static const char *const key[] = {"duration_s", "steps", "cached", "cached_ratio"};
        const double v[] = {t->duration_s, count_of(store_fact_steps(t, false)),
                            count_of(store_fact_steps(t, true)), t->cache_ratio};
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(v); i++)
                r = compare_side_add(s, COMPARE_TARGET, t->name, key[i], v[i]);
        return r;
}

/* The BuildKit steps (container builds): duration, and what its exec
 * used where measured. */
static int add_steps(struct store *st, int64_t id, struct compare_side *s)
{
        _cleanup_free_ struct targets *ts = malloc(sizeof(*ts));
        int r;

        if (!ts)
                return -ENOMEM;
        targets_init(ts);
        r = store_steps_get(st, id, ts);
        for (uint32_t i = 0; r >= 0 && i < ts->nstepv; i++) {
                const struct step_fact *f = &ts->stepv[i];

                if (!f->step)
                        continue;
                r = compare_side_add(s, COMPARE_STEP, f->name, "duration_s",
                                     targets_step_duration(f));
                if (r >= 0 && f->exec.set)
                        r = compare_side_add(s, COMPARE_STEP, f->name, "mem_peak_mb",
                                             f->exec.mem_peak_bytes / MIB);
                if (r >= 0 && f->exec.set)
                        r = compare_side_add(s, COMPARE_STEP, f->name, "cpu_s", f->exec.cpu_s);
        }
        targets_release(ts);
        return r;
}

/* The critical path (model/critpath.h): its length, and each step's time
 * and slack; a step on one run's path only appears or goes. */
static int add_path(struct store *st, int64_t id, struct compare_side *s)
{
        _cleanup_free_ char *json = NULL;
        struct critpath *p = NULL;
        int r = store_path_get(st, id, &json);

        if (r > 0)
                r = targetsjson_path_load(json, &p);
        if (r > 0)
                r = compare_side_add(s, COMPARE_RUN, "", "critical_path_s", p->length_s);
        for (size_t i = 0; r >= 0 && p && i < p->n; i++) {
                r = compare_side_add(s, COMPARE_PATH, p->step[i].name, "duration_s",
                                     p->step[i].end_s - p->step[i].start_s);
                if (r >= 0)
                        r = compare_side_add(s, COMPARE_PATH, p->step[i].name, "slack_s",
                                             p->step[i].slack_s);
        }
        free(p);
        return r;
}

/* The compile units by the name the summary shows (model/unitname.h):
 * the same file of two checkouts is one unit. */
static int add_units(struct store *st, const struct store_run *run, struct compare_side *s)
{
        struct units *u = NULL;
        const struct unit *rows;
        struct unitnames un;
        char name[UNITNAME_SHORT_MAX + 1];
        size_t n = 0;
        int r = units_new(&u);

        if (r >= 0)
                r = store_units_read(st, run->id, u);
        rows = r >= 0 ? units_rows(u, &n) : NULL;
        unitnames_init(&un, rows, n, run->info.cwd);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                unitnames_short(&un, &rows[i], name, sizeof(name));
                r = compare_side_add(s, COMPARE_UNIT, name, "peak_mb", rows[i].peak_mb);
                if (r >= 0)
                        r = compare_side_add(s, COMPARE_UNIT, name, "duration_s",
                                             rows[i].last_s - rows[i].first_s);
        }
        units_free(u);
        return r;
}

/* The compiler-cache stats the run's log printed, per tool: the last
 * block less the first (or the last alone). */
struct cache_seen {
        char tool[16];
        int64_t first_hits, first_misses, hits, misses;
        bool first;
};
struct caches {
        struct cache_seen t[4];
        size_t n;
};

static int add_cache(void *userdata, const struct store_cache_snapshot *c)
{
        struct caches *cs = userdata;
        struct cache_seen *t = NULL;

        if (!c->tool || !c->origin || strncmp(c->origin, "log-", 4) != 0)
                return 0;
        for (size_t i = 0; i < cs->n && !t; i++)
                if (strcmp(cs->t[i].tool, c->tool) == 0)
                        t = &cs->t[i];
        if (!t && cs->n < ARRAY_SIZE(cs->t)) {
                t = &cs->t[cs->n++];
                *t = (struct cache_seen){.hits = -1, .misses = -1};
                snprintf(t->tool, sizeof(t->tool), "%s", c->tool);
        }
        if (!t)
                return 0;
        if (strcmp(c->origin, "log-first") == 0) {
                t->first = true;
                t->first_hits = c->hits;
                t->first_misses = c->misses;
        } else {
                t->hits = c->hits;
                t->misses = c->misses;
        }
        return 0;
}

static int add_caches(struct store *st, int64_t id, struct compare_side *s)
{
        struct caches cs = {0};
        int r = store_cache_snapshots_each(st, id, add_cache, &cs);

        for (size_t i = 0; r >= 0 && i < cs.n; i++) {
                const struct cache_seen *t = &cs.t[i];
                bool both = t->first && t->first_hits >= 0 && t->first_misses >= 0;

                if (t->hits < 0 || t->misses < 0)
                        continue; /* no last block: unknown */
                r = compare_side_add_cache(s, t->tool, both, (uint64_t)t->first_hits,
                                           (uint64_t)t->first_misses, (uint64_t)t->hits,
                                           (uint64_t)t->misses);
        }
        return r;
}

/* Everything compare shows of run row run->id, its outcome first, into
 * *s. 0 or -errno. */
static int load_side(struct store *st, const struct store_run *run, const char *outcome,
                     struct compare_side *s)
{
        struct run_figures f;
        int r = compare_side_add_text(s, COMPARE_RUN, "", "outcome", outcome);

        store_run_figures(run, &f);
        if (r >= 0)
                r = compare_side_add_run(s, &f);

        if (r >= 0)
                r = store_targets_each(st, run->id, false, 0, add_target, s);
        if (r >= 0)
                r = add_path(st, run->id, s);
        if (r >= 0)
                r = add_steps(st, run->id, s);
        if (r >= 0)
                r = add_units(st, run, s);
        if (r >= 0)
                r = add_caches(st, run->id, s);
        if (r >= 0)
                r = add_facts(run, s);
        return r < 0 ? r : 0;
}

/* The last two finished runs, newest first into ids[0], ids[1]. */
struct last_two {
        int64_t ids[2];
        size_t n;
};

static int take_finished(void *userdata, const struct store_run *r)
{
        struct last_two *l = userdata;

        if (r->state != STORE_RUN_FINISHED)
                return 0;
        l->ids[l->n++] = r->id;
        return l->n == 2 ? -ECANCELED : 0;
}

static int pick_runs(struct store *st, const struct common_opts *o, char **ops, int64_t ids[2])
{
        struct last_two l = {0};
        int64_t e;

        if (!o->last) {
                if (history_find_run("compare", st, ops[0], &ids[0]) < 0 ||
                    history_find_run("compare", st, ops[1], &ids[1]) < 0)
                        return -1;
                return 0;
        }
        if (o->job) {
                struct store_job_filter f = {
                    .job = o->job, .finished_only = true, .success = -1, .since = NAN};

                e = store_job_runs(st, &f, 2, take_finished, &l);
        } else
                e = store_runs_each(st, NAN, 50, take_finished, &l);
        if (e < 0 && e != -ECANCELED) {
                fprintf(stderr, "buildtel compare: cannot read the history: %s\n",
                        store_strerror((int)e));
                return -1;
        }
        if (l.n < 2) {
                fprintf(stderr,
                        "buildtel compare: fewer than two finished runs%s%s in the history "
                        "(%zu)\n",
                        o->job ? " of job " : "", o->job ? o->job : "", l.n);
                return -1;
        }
        ids[0] = l.ids[1];
        ids[1] = l.ids[0];
        return 0;
}

/* Read both runs, compare (the sampling quantum: the larger interval),
 * format into out. 0 or -errno. */
static int compare(struct store *st, const int64_t ids[2], const struct common_opts *o,
                   struct dbuf *out)
{
        struct store_run run[2] = {0};
        struct compare_side side[2] = {0};
        struct compare_result res = {0};
        struct compare_labels l;
        char outcome[2][64];
        int r = store_run_get(st, ids[0], &run[0]);

        if (r >= 0)
                r = store_run_get(st, ids[1], &run[1]);
        for (int i = 0; r >= 0 && i < 2; i++) {
                history_run_result(&run[i], outcome[i]);
                r = load_side(st, &run[i], outcome[i], &side[i]);
        }
        if (r >= 0)
                r = compare_runs(&side[0], &side[1],
                                 fmax(run[0].info.interval, run[1].info.interval), &res);
        if (r >= 0) {
                l = (struct compare_labels){.a_id = run[0].info.run_id,
                                            .b_id = run[1].info.run_id,
                                            .a_start = run[0].info.start_epoch,
                                            .b_start = run[1].info.start_epoch,
                                            .a_outcome = outcome[0],
                                            .b_outcome = outcome[1]};
                r = o->json ? render_compare_json(&res, &l, out)
                            : render_compare_text(&res, &l, o->all ? 0 : TEXT_ROWS, out);
        }
        compare_result_release(&res);
        for (int i = 0; i < 2; i++) {
                compare_side_release(&side[i]);
                store_run_release(&run[i]);
        }
        return r;
}

int cmd_compare(int argc, char **argv)
{
        struct common_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        int64_t ids[2];
        int oi, ret, e;

        ret = history_opts_parse("compare", argc, argv, &o, &oi);
        if (ret >= 0)
                return ret;
        if (o.job && !o.last) {
                fprintf(stderr, "buildtel compare: --job goes with --last; see 'buildtel help "
                                "compare'\n");
                return EXIT_BT_USAGE;
        }
        if (argc - oi != (o.last ? 0 : 2)) {
                fprintf(stderr, "buildtel compare: %s; see 'buildtel help compare'\n",
                        o.last ? "--last takes no RUN" : "two runs, A and B, or --last");
                return EXIT_BT_USAGE;
        }
        if (history_open("compare", o.rec.db_path, false, &st))
                return 1;
        if (pick_runs(st, &o, argv + oi, ids) < 0) {
                store_close(st);
                return 1;
        }
        e = compare(st, ids, &o, &out);
        return history_list_end("compare", e, NULL, &out, NULL, st);
}
