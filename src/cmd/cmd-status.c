/* SPDX-License-Identifier: MIT */
/* buildtel status: the recent runs from the history database. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "store/history.h"
#include "util/util.h"

#define STATUS_LIMIT_DEFAULT 20

static int render(const json_t *runs, struct dbuf *out)
{
        int r = dbuf_printf(out, "%-26s %-16s %9s %-11s %-20s %-16s %10s %8s\n", "ID", "START",
                            "DURATION", "RESULT", "BUILDER", "HOST/NODE", "PEAK MEM", "NEAR-OOM");

        for (size_t i = 0; r >= 0 && i < json_array_size(runs); i++) {
                const json_t *o = json_array_get(runs, i);
                char start[32], dur[32], mem[32], oom[32];
                struct dbuf id = DBUF_INIT, b = DBUF_INIT, h = DBUF_INIT;
                const char *nodes = history_str(o, "nodes");
                double d = history_num(o, "duration_s");

                history_fmt_time(history_num(o, "start_epoch"), false, start, sizeof(start));
                history_fmt_duration(d, dur, sizeof(dur));
                history_fmt_mib(history_num(o, "mem_used_peak_mb"), mem, sizeof(mem));
                if (isfinite(history_num(o, "near_oom_samples")))
                        snprintf(oom, sizeof(oom), "%.0f", history_num(o, "near_oom_samples"));
                else
                        snprintf(oom, sizeof(oom), "-");
                r = history_put_clean(&id, history_str(o, "id"), 26);
                if (r >= 0)
                        r = history_put_clean(
                            &b, *history_str(o, "builder") ? history_str(o, "builder") : "-", 20);
                if (r >= 0)
                        r = history_put_clean(&h, *nodes ? nodes : history_str(o, "host"), 16);
                if (r >= 0)
                        r = dbuf_printf(out, "%-26s %-16s %9s %-11s %-20s %-16s %10s %8s\n",
                                        id.p ? id.p : "", start, dur, history_str(o, "result"),
                                        b.p ? b.p : "", h.p ? h.p : "", mem, oom);
                dbuf_release(&id);
                dbuf_release(&b);
                dbuf_release(&h);
        }
        return r;
}

int cmd_status(int argc, char **argv)
{
        struct history_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        json_t *runs = NULL;
        int oi, ret, e;

        ret = history_opts_parse("status", "jls", argc, argv, &o, &oi);
        if (ret)
                return ret;
        if (o.help) {
                cmd_print_usage("status");
                return 0;
        }
        if (oi != argc) {
                fprintf(stderr,
                        "buildtel status: no operands expected; see 'buildtel help status'\n");
                return EXIT_BT_USAGE;
        }
        if (history_open("status", &o, false, &st))
                return 1;
        ret = 1;
        e = history_runs(st, o.since, o.limit ? o.limit : STATUS_LIMIT_DEFAULT, &runs);
        if (e < 0) {
                fprintf(stderr, "buildtel status: cannot read the history: %s\n",
                        store_strerror(e));
                goto out;
        }
        if (o.json) {
                ret = history_print_json(runs);
                goto out;
        }
        if (json_array_size(runs) == 0) {
                printf("no runs recorded%s\n", isnan(o.since) ? "" : " in that time");
                ret = 0;
                goto out;
        }
        if (render(runs, &out) >= 0 && write_all(STDOUT_FILENO, out.p, out.len) >= 0)
                ret = 0;
out:
        json_decref(runs);
        dbuf_release(&out);
        store_close(st);
        return ret;
}
