/* SPDX-License-Identifier: MIT */
/* buildtel status: the recent runs from the history database. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "render/summary.h"
#include "store/history.h"
#include "util/util.h"

#define STATUS_LIMIT_DEFAULT 20

#define ROW_FORMAT "%-26s %-16s %9s %-10s %-14s %-12s %10s %10s %10s %8s\n"

/* The runs, as JSON or as table lines into out. */
struct listing {
        json_t *json; /* --json: the array */
        struct dbuf *out;
        struct dbuf latest; /* the newest finished run's unit and -j lines */
};

static int row_text(struct dbuf *out, const struct store_run *run)
{
        _cleanup_dbuf_ struct dbuf id = DBUF_INIT, b = DBUF_INIT, h = DBUF_INIT;
        const char *nodes = run->nodes && *run->nodes ? run->nodes : run->info.host;
        /* rounded as the summary rounds it (issue 26), "-" when unknown */
        const char *dur = isfinite(run->duration_s) && run->duration_s >= 0
                              ? DURATION_STR(run->duration_s)
                              : SPAN_STR(run->duration_s);
        int r;

        r = history_put_clean(&id, run->info.run_id, 26);
        if (r >= 0)
                r = history_put_clean(&b, run->builder && *run->builder ? run->builder : "-", 14);
        if (r >= 0)
                r = history_put_clean(&h, nodes ? nodes : "", 12);
        if (r >= 0)
                r = dbuf_printf(out, ROW_FORMAT, id.p ? id.p : "",
                                TIME_STR(run->info.start_epoch, false), dur, RESULT_STR(run),
                                b.p ? b.p : "", h.p ? h.p : "", SIZE_STR(run->build_mem_peak_mb),
                                SIZE_STR(run->build_anon_peak_mb), SIZE_STR(run->mem_used_peak_mb),
                                COUNT_STR(run->near_oom_samples));
        return r;
}

/* Under the table: the newest run's largest unit and -j reading. */
static int latest_text(struct dbuf *out, const struct store_run *run)
{
        struct dwriter w = DWRITER_INIT(out);
        const char *id = run->info.run_id ? run->info.run_id : "";
        char lead[96];
        int failed;

        snprintf(lead, sizeof(lead), "\n%.64s: failed ", id);
        failed = history_put_failure(out, run, lead);
        dw_check(&w, failed);
        if (run->unit_peak_name && isfinite(run->unit_peak_mb)) {
                dw_printf(&w, "%s%s: largest unit %s%s", failed > 0 ? "" : "\n", id,
                          run->unit_peak_tool ? run->unit_peak_tool : "",
                          run->unit_peak_tool ? " " : "");
                history_dw_clean(&w, NULL,
                                 run->unit_peak_shown ? run->unit_peak_shown : run->unit_peak_name,
                                 120);
                dw_printf(&w, ", %s peak RSS\n", SIZE_STR(run->unit_peak_mb));
        }
        if (run->jobs_reading && *run->jobs_reading) {
                dw_puts(&w, run->unit_peak_name || run->fail_target || run->fail_first ? "" : "\n");
                history_dw_clean(&w, "  ", run->jobs_reading, 400);
                dw_puts(&w, "\n");
        }
        return w.err;
}

static int add_run(void *userdata, const struct store_run *run)
{
        struct listing *l = userdata;
        int r = 0;

        if (l->json)
                return json_array_append_new(l->json, history_run_json(run)) < 0 ? -ENOMEM : 0;
        if (!l->latest.len && run->state == STORE_RUN_FINISHED)
                r = latest_text(&l->latest, run);
        return r < 0 ? r : row_text(l->out, run);
}

int cmd_status(int argc, char **argv)
{
        struct common_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&out);
        struct listing l = {.out = &out, .latest = DBUF_INIT};
        char empty[64];
        int ret, n;

        ret = history_list_begin("status", argc, argv, &o, false, &st);
        if (ret >= 0)
                return ret;
        if (o.json && !(l.json = json_array()))
                dw_check(&w, -ENOMEM);
        if (!o.json && o.job) { /* the job said once, above the table */
                history_dw_clean(&w, "job: ", o.job, 200);
                dw_puts(&w, "\n");
        }
        if (!o.json)
                dw_printf(&w, ROW_FORMAT, "ID", "START", "DURATION", "RESULT", "BUILDER",
                          "HOST/NODE", "BUILD PEAK", "ANON PEAK", "HOST PEAK", "NEAR-OOM");
        n = w.err;
        if (n >= 0 && o.job)
                n = store_job_runs(
                    st, &(struct store_job_filter){.job = o.job, .success = -1, .since = o.since},
                    o.limit ? o.limit : STATUS_LIMIT_DEFAULT, add_run, &l);
        else if (n >= 0)
                n = store_runs_each(st, o.since, o.limit ? o.limit : STATUS_LIMIT_DEFAULT, add_run,
                                    &l);
        if (n > 0 && l.latest.len && dbuf_append(&out, l.latest.p, l.latest.len) < 0)
                n = -ENOMEM;
        dbuf_release(&l.latest);
        snprintf(empty, sizeof(empty), "no runs recorded%s%s", o.job ? " for that job" : "",
                 isnan(o.since) ? "" : " in that time");
        return history_list_end("status", n, l.json, &out, empty, st);
}
