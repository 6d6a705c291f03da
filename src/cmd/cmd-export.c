/* SPDX-License-Identifier: MIT */
/* buildtel export --otlp RUN: send a recorded run to an OTLP collector
 * again (the collector was down, or a new one wants the history), as its
 * own final export would have. The run, from the history or its files, is
 * replayed as summarize replays it (pipeline/replay.h) into
 * sinks/sink-otlp-batch.c. A running run is refused: it would be sent
 * without its end, and twice once it ends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-trace.h"
#include "cmd/cmd.h"
#include "pipeline/replay.h"
#include "render/otlp-metrics.h"
#include "sinks/otlp-send.h"
#include "sinks/sink.h"
#include "util/libcurl.h"

/* A run that has not finished is refused (a running one always); 0 or 1
 * after saying so. */
static int check_state(const struct replay_run *run, bool incomplete)
{
        if (run->state == STORE_RUN_RUNNING && !run->csv)
                fprintf(stderr,
                        "buildtel export: run %s is still running; export it once it has "
                        "finished\n",
                        run->ri.run_id);
        else if (!run->ri.finished && !incomplete)
                fprintf(stderr,
                        run->csv ? "buildtel export: run %s has not finished (still running, or "
                                   "its buildtel was killed); --incomplete sends what it has\n"
                                 : "buildtel export: run %s is incomplete (its buildtel ended "
                                   "without completing it); --incomplete sends what it has\n",
                        run->ri.run_id);
        else
                return 0;
        return 1;
}

/* The replay's samples into sink_otlp_batch, the totals, targets and
 * spans at its end. 0, or 1 after printing why not. */
static int export_otlp(struct otel_config *cfg, struct replay *rp, bool incomplete)
{
        static const struct sink_ops *const sinks[] = {&sink_otlp_batch, NULL};
        const struct replay_run *run = replay_run(rp);
        struct otlp_batch_job j = {.cfg = cfg};
        const struct run_model *m;
        char msg[256];
        int e;

        if (check_state(run, incomplete))
                return 1;
        if (run->vcs_rev) {
                /* the revision the live run's span named */
                free(cfg->vcs_rev);
                cfg->vcs_rev = strdup(run->vcs_rev);
        }
        e = otlp_sender_new(cfg, &j.s);
        if (e == -ELIBACC) {
                fprintf(stderr, "buildtel export: %s\n", libcurl_error());
                return 1;
        }
        if (e >= 0)
                e = common_otlp_run_span(cfg, run->ri.run_id);
        if (e >= 0)
                e = otlp_metrics_new(cfg, &run->ri, &j.m);
        if (e >= 0 && !run->ri.finished)
                otlp_metrics_set_resource(j.m, "build.run.state", "incomplete");
        if (e < 0)
                fprintf(stderr, "buildtel export: out of memory\n");
        else if (common_replay_through("export", rp, sinks, &j, &m) < 0)
                e = -1;
        else if (j.result == -ENOMEM)
                fprintf(stderr, "buildtel export: out of memory\n");
        else if (j.result < 0) {
                if (!otlp_sender_take_error(j.s, msg, sizeof(msg)))
                        snprintf(msg, sizeof(msg), "OTLP export failed");
                fprintf(stderr, "buildtel export: %s\n", msg);
        } else {
                otelenv_url_for_display(cfg->url, msg, sizeof(msg));
                printf("buildtel export: run %s%s: %llu samples%s%s sent to %s%s\n", run->ri.run_id,
                       run->ri.finished ? "" : " (incomplete)", (unsigned long long)j.rows,
                       m->facts->n ? " and the targets" : "",
                       !run->csv ? " from the history" : " from its files", msg,
                       m->summary->skipped_rows ? " (junk rows skipped)" : "");
        }
        e = e >= 0 && j.result >= 0 ? 0 : 1;
        otlp_metrics_free(j.m);
        otlp_sender_free(j.s);
        return e;
}

int cmd_export(int argc, char **argv)
{
        struct common_opts o;
        struct otel_config cfg = {0};
        struct replay *rp = NULL;
        const char *spec;
        int k, e, ret = EXIT_BT_USAGE;

        k = cmd_parse_options(CMDS_EXPORT, "export", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (o.export_trace && !o.export_otlp && k >= argc - 1) {
                /* RUN defaults to the latest run in the history */
                spec = k < argc ? argv[k] : "";
                ret = 1;
                if (common_replay_open(&o, "export", spec, true, true, &rp) == 0) {
                        const struct trace_job tj = {.out_path = o.output,
                                                     .ninja_log = o.rec.metrics.ninja_log,
                                                     .cmd = "export"};

                        ret = trace_write(&tj, rp);
                }
                goto out;
        }
        if (!o.export_otlp || o.export_trace || k != argc - 1 || !*argv[k]) {
                cmd_print_short_usage("export");
                goto out;
        }
        spec = argv[k];
        e = otelenv_load(common_getenv, NULL, &o.otlp_opt, common_cmd_note,
                         (void *)(uintptr_t) "export", &cfg);
        if (e == -EINVAL) {
                fprintf(stderr, "buildtel export: --otlp-endpoint takes an http:// or https:// URL "
                                "with a host\n");
                goto out;
        }
        ret = 1;
        if (e < 0 || !cfg.enabled) {
                fprintf(stderr, "buildtel export: no collector: set OTEL_EXPORTER_OTLP_ENDPOINT or "
                                "--otlp-endpoint\n");
                goto out;
        }
        if (common_replay_open(&o, "export", spec, true, true, &rp) == 0)
                ret = export_otlp(&cfg, rp, o.incomplete);
out:
        replay_free(rp);
        otel_config_release(&cfg);
        common_opts_release(&o);
        return ret;
}
