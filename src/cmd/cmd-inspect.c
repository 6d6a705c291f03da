/* SPDX-License-Identifier: MIT */
/* buildtel inspect [RUN]: one run from the history database, the latest by
 * default: its facts, steps, targets, VCS revision, resource peaks with
 * their stage and context, and compiler-cache figures. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "render/jsonw.h"
#include "render/summary.h"
#include "store/history.h"
#include "util/macro.h"
#include "util/util.h"

static void line(struct dwriter *w, const char *label, const char *value)
{
        dw_printf(w, "%-12s ", label);
        history_dw_clean(w, NULL, value, 400);
        dw_puts(w, "\n");
}

static void peak(struct dwriter *w, const char *label, double v, int decimals, const char *unit)
{
        if (isfinite(v))
                dw_printf(w, "  %-24s %.*f%s\n", label, decimals, v, unit);
}

/* A size in MiB, as every text surface spells it (SIZE_STR) */
static void peak_size(struct dwriter *w, const char *label, double mib)
{
        if (isfinite(mib))
                dw_printf(w, "  %-24s %s\n", label, SIZE_STR(mib));
}

static const char *or_empty(const char *s)
{
        return s ? s : "";
}

static void render_facts(const struct store_run *run, struct dwriter *w)
{
        const struct run_info *ri = &run->info;
        _cleanup_dbuf_ struct dbuf cmd = DBUF_INIT;
        char buf[512];

        for (size_t i = 0; ri->argv && ri->argv[i]; i++)
                dw_check(w, dbuf_printf(&cmd, "%s%s", i ? " " : "", ri->argv[i]));
        snprintf(buf, sizeof(buf), "%s (%s)", or_empty(ri->run_id), or_empty(ri->kind));
        line(w, "run", buf);
        if (ri->job && *ri->job)
                line(w, "job", ri->job);
        line(w, "command", cmd.p ? cmd.p : "");
        line(w, "cwd", or_empty(ri->cwd));
        line(w, "host", or_empty(ri->host));
        if (run->builder && *run->builder)
                line(w, "builder", run->builder);
        if (run->cgroup_mode && *run->cgroup_mode)
                line(w, "cgroup", run->cgroup_mode);
        if (run->vcs_rev && *run->vcs_rev) {
                snprintf(buf, sizeof(buf), "%s%s%s)", run->vcs_rev,
                         run->vcs_ref && *run->vcs_ref ? " (" : " (detached",
                         or_empty(run->vcs_ref));
                line(w, "revision", buf);
        }
        line(w, "start", TIME_STR(ri->start_epoch, true));
        line(w, "duration", SPAN_STR(run->duration_s));
        line(w, "result", RESULT_STR(run));
        if (dw_ok(w))
                dw_check(w, history_put_failure(w->b, run, "failed       "));
        /* figures: nothing of the build's to clean, as line() would */
        if (run->steps >= 0)
                dw_printf(w, "%-12s %lld (%lld cached)\n", "steps", (long long)run->steps,
                          (long long)MAX(run->cached_steps, 0));
        dw_printf(w, run->samples_dropped > 0 ? "%-12s %lld (%lld dropped)\n" : "%-12s %lld\n",
                  "samples", (long long)MAX(run->samples, 0), (long long)run->samples_dropped);
}

static void render_peak_memory(const struct store_run *run, struct dwriter *w)
{
        dw_printf(w, "  %-24s %s at +%s", "host memory used", SIZE_STR(run->mem_used_peak_mb),
                  SPAN_STR(run->mem_used_peak_elapsed_s));
        if (run->mem_used_peak_stage && *run->mem_used_peak_stage)
                history_dw_clean(w, ", in ", run->mem_used_peak_stage, 256);
        if (run->mem_used_peak_context && *run->mem_used_peak_context)
                history_dw_clean(w, ", while ", run->mem_used_peak_context, 512);
        dw_puts(w, "\n");
}

static void render_peaks(const struct store_run *run, struct dwriter *w)
{
        /* the build's own first: its cgroup's peak, anon, the largest unit,
         * the -j reading (from the stored summary) */
        dw_puts(w, "peaks:\n");
        peak_size(w, "build memory (kernel)", run->build_mem_peak_mb);
        peak_size(w, "build anon memory", run->build_anon_peak_mb);
        if (run->unit_peak_name && isfinite(run->unit_peak_mb)) {
                dw_printf(w, "  %-24s %s, ", "largest unit", SIZE_STR(run->unit_peak_mb));
                if (run->unit_peak_tool)
                        dw_printf(w, "%s ", run->unit_peak_tool);
                history_dw_clean(w, NULL,
                                 run->unit_peak_shown ? run->unit_peak_shown : run->unit_peak_name,
                                 200);
                dw_puts(w, "\n");
        }
        if (run->jobs_reading && *run->jobs_reading) {
                dw_printf(w, "  %-24s ", "-j");
                history_dw_clean(w, NULL, run->jobs_reading, 400);
                dw_puts(w, "\n");
        }
        if (isfinite(run->mem_used_peak_mb))
                render_peak_memory(run, w);
        peak_size(w, "memory available (min)", run->mem_avail_min_mb);
        peak_size(w, "swap used", run->swap_used_peak_mb);
        peak_size(w, "disk available (min)", run->disk_avail_min_gb * 1024);
        peak(w, "load1", run->load1_peak, 2, "");
        peak(w, "cpu", run->cpu_pct_peak, 1, " %");
        peak(w, "compilers", run->compilers_peak, 0, "");
        if (run->near_oom_samples >= 0)
                peak(w, "near-OOM samples", (double)run->near_oom_samples, 0, "");
}

/* What the rows of one run go to: the JSON array, or the text. */
struct rows {
        json_t *json;
        struct dbuf *out;
        size_t n;
};

static json_t *target_json(const struct target_fact *t)
{
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
                         jsonw_text(t->name), "duration_s", jsonw_real(t->duration_s), "steps",
                         history_json_count(store_fact_steps(t, false)), "cached",
                         history_json_count(store_fact_steps(t, true)), "cached_ratio",
                         jsonw_real(t->cache_ratio), "success", history_json_count(t->success),
                         "cc_hits", history_json_count(store_cc_count(&t->cc, true)), "cc_misses",
                         history_json_count(store_cc_count(&t->cc, false)), "node",
                         jsonw_text(t->node[0] ? t->node : NULL), "ref",
                         jsonw_text(t->ref[0] ? t->ref : NULL));
}

static int target_text(struct dbuf *out, const struct target_fact *t)
{
        _cleanup_dbuf_ struct dbuf n = DBUF_INIT, nd = DBUF_INIT;
        int r;

        r = history_put_clean(&n, t->name, 24);
        if (r >= 0)
                r = history_put_clean(&nd, t->node[0] ? t->node : "-", 16);
        if (r >= 0)
                r = dbuf_printf(out, "  %-24s %9s %6s %6s %6s %-16s %8s %8s\n", n.p ? n.p : "",
                                SPAN_STR(t->duration_s), COUNT_STR(store_fact_steps(t, false)),
                                COUNT_STR(store_fact_steps(t, true)), RATIO_STR(t->cache_ratio),
                                nd.p ? nd.p : "", COUNT_STR(store_cc_count(&t->cc, true)),
                                COUNT_STR(store_cc_count(&t->cc, false)));
        return r;
}

static int add_target(void *userdata, const struct target_fact *t)
{
        struct rows *rows = userdata;
        int r = 0;

        if (rows->json)
                return json_array_append_new(rows->json, target_json(t)) < 0 ? -ENOMEM : 0;
        if (rows->n++ == 0)
                r = dbuf_printf(rows->out, "targets:\n  %-24s %9s %6s %6s %6s %-16s %8s %8s\n",
                                "TARGET", "DURATION", "STEPS", "CACHED", "RATIO", "NODE", "CC HITS",
                                "CC MISS");
        return r < 0 ? r : target_text(rows->out, t);
}

static json_t *cache_json(const struct store_cache_snapshot *c)
{
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "tool",
                         jsonw_text(c->tool), "origin", jsonw_text(c->origin), "taken_epoch",
                         jsonw_real(c->taken_epoch), "hits", history_json_count(c->hits), "misses",
                         history_json_count(c->misses), "size_bytes",
                         history_json_count(c->size_bytes), "max_size_bytes",
                         history_json_count(c->max_size_bytes), "files",
                         history_json_count(c->files), "version", jsonw_text(c->version));
}

static int add_cache(void *userdata, const struct store_cache_snapshot *c)
{
        struct rows *rows = userdata;
        int r = 0;

        if (rows->json)
                return json_array_append_new(rows->json, cache_json(c)) < 0 ? -ENOMEM : 0;
        if (rows->n++ == 0)
                r = dbuf_printf(rows->out, "compiler cache:\n  %-8s %-10s %10s %10s %12s\n", "TOOL",
                                "WHEN", "HITS", "MISSES", "SIZE");
        if (r >= 0)
                r = dbuf_printf(rows->out, "  %-8s %-10s %10s %10s %12s\n", c->tool, c->origin,
                                COUNT_STR(c->hits), COUNT_STR(c->misses),
                                BYTES_STR((double)c->size_bytes));
        return r;
}

/* The run as JSON: the row, its step totals, targets and compiler-cache
 * snapshots. */
static int run_json(struct store *st, const struct store_run *run, json_t **ret)
{
        struct rows targets = {.json = json_array()}, cache = {.json = json_array()};
        json_t *o = history_run_json(run);
        int r = o && targets.json && cache.json ? 0 : -ENOMEM;

        if (r >= 0)
                r = store_targets_each(st, run->id, false, 0, add_target, &targets);
        if (r >= 0)
                r = store_cache_snapshots_each(st, run->id, add_cache, &cache);
        if (r >= 0 &&
            (json_object_set_new(o, "steps", history_json_count(run->steps)) < 0 ||
             json_object_set_new(o, "cached_steps", history_json_count(run->cached_steps)) < 0 ||
             json_object_set_new(o, "targets", json_incref(targets.json)) < 0 ||
             json_object_set_new(o, "compiler_cache", json_incref(cache.json)) < 0))
                r = -ENOMEM;
        json_decref(targets.json);
        json_decref(cache.json);
        if (r < 0) {
                json_decref(o);
                return r;
        }
        *ret = o;
        return 0;
}

/* The run as text into out. */
static int run_text(struct store *st, const struct store_run *run, struct dbuf *out)
{
        struct rows targets = {.out = out}, cache = {.out = out};
        struct dwriter w = DWRITER_INIT(out);

        render_facts(run, &w);
        render_peaks(run, &w);
        if (dw_ok(&w))
                dw_check(&w, store_targets_each(st, run->id, false, 0, add_target, &targets));
        if (dw_ok(&w))
                dw_check(&w, store_cache_snapshots_each(st, run->id, add_cache, &cache));
        return w.err;
}

int cmd_inspect(int argc, char **argv)
{
        struct common_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        struct store_run run = {0};
        json_t *json = NULL;
        const char *spec = NULL;
        int64_t id;
        int oi, ret, e;

        ret = history_opts_parse("inspect", argc, argv, &o, &oi);
        if (ret >= 0)
                return ret;
        if (argc - oi > 1) {
                fprintf(stderr, "buildtel inspect: one RUN at most; see 'buildtel help inspect'\n");
                return EXIT_BT_USAGE;
        }
        if (oi < argc)
                spec = argv[oi];
        if (history_open("inspect", o.rec.db_path, false, &st))
                return 1;
        if (history_find_run("inspect", st, spec, &id) < 0) {
                store_close(st);
                return 1;
        }
        e = store_run_get(st, id, &run);
        if (e >= 0)
                e = o.json ? run_json(st, &run, &json) : run_text(st, &run, &out);
        store_run_release(&run);
        return history_list_end("inspect", e, json, &out, NULL, st);
}
