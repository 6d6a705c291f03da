/* SPDX-License-Identifier: MIT */
/* buildtel inspect [RUN]: one run from the history database, the latest by
 * default: its facts, steps, targets, VCS revision, resource peaks with
 * their stage and context, and compiler-cache figures. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "store/history.h"
#include "util/util.h"

static int line(struct dbuf *out, const char *label, const char *value)
{
        int r = dbuf_printf(out, "%-12s ", label);

        if (r >= 0)
                r = history_put_clean(out, value, 400);
        return r < 0 ? r : dbuf_puts(out, "\n");
}

static int peak(struct dbuf *out, const char *label, double v, int decimals, const char *unit)
{
        if (!isfinite(v))
                return 0;
        return dbuf_printf(out, "  %-24s %.*f%s\n", label, decimals, v, unit);
}

static int render(const json_t *o, struct dbuf *out)
{
        char buf[512], t1[64], t2[64];
        const json_t *targets = json_object_get(o, "targets");
        const json_t *cache = json_object_get(o, "compiler_cache");
        struct dbuf cmd = DBUF_INIT;
        int r;

        for (size_t i = 0; i < json_array_size(json_object_get(o, "argv")); i++) {
                const char *a = json_string_value(json_array_get(json_object_get(o, "argv"), i));
                if (i)
                        dbuf_puts(&cmd, " ");
                dbuf_puts(&cmd, a ? a : "");
        }
        snprintf(buf, sizeof(buf), "%s (%s)", history_str(o, "id"), history_str(o, "kind"));
        r = line(out, "run", buf);
        if (r >= 0)
                r = line(out, "command", cmd.p ? cmd.p : "");
        dbuf_release(&cmd);
        if (r >= 0)
                r = line(out, "cwd", history_str(o, "cwd"));
        if (r >= 0)
                r = line(out, "host", history_str(o, "host"));
        if (r >= 0 && *history_str(o, "builder"))
                r = line(out, "builder", history_str(o, "builder"));
        if (r >= 0 && *history_str(o, "cgroup_mode"))
                r = line(out, "cgroup", history_str(o, "cgroup_mode"));
        if (r >= 0 && *history_str(o, "vcs_rev")) {
                snprintf(buf, sizeof(buf), "%s%s%s%s", history_str(o, "vcs_rev"),
                         *history_str(o, "vcs_ref") ? " (" : " (detached",
                         history_str(o, "vcs_ref"), ")");
                r = line(out, "revision", buf);
        }
        history_fmt_time(history_num(o, "start_epoch"), true, t1, sizeof(t1));
        if (r >= 0)
                r = line(out, "start", t1);
        history_fmt_duration(history_num(o, "duration_s"), t2, sizeof(t2));
        if (r >= 0)
                r = line(out, "duration", t2);
        if (r >= 0)
                r = line(out, "result", history_str(o, "result"));
        if (r >= 0 && isfinite(history_num(o, "steps"))) {
                snprintf(buf, sizeof(buf), "%.0f (%.0f cached)", history_num(o, "steps"),
                         history_num(o, "cached_steps"));
                r = line(out, "steps", buf);
        }
        if (r >= 0) {
                snprintf(buf, sizeof(buf), "%.0f", history_num(o, "samples"));
                if (history_num(o, "samples_dropped") > 0)
                        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (%.0f dropped)",
                                 history_num(o, "samples_dropped"));
                r = line(out, "samples", buf);
        }
        if (r >= 0 && isfinite(history_num(o, "mem_used_peak_mb"))) {
                history_fmt_mib(history_num(o, "mem_used_peak_mb"), t1, sizeof(t1));
                history_fmt_duration(history_num(o, "mem_used_peak_elapsed_s"), t2, sizeof(t2));
                r = dbuf_printf(out, "peaks:\n  %-24s %s at +%s", "memory used", t1, t2);
                if (r >= 0 && *history_str(o, "mem_used_peak_stage")) {
                        r = dbuf_puts(out, ", in ");
                        if (r >= 0)
                                r = history_put_clean(out, history_str(o, "mem_used_peak_stage"),
                                                      256);
                }
                if (r >= 0 && *history_str(o, "mem_used_peak_context")) {
                        r = dbuf_puts(out, ", while ");
                        if (r >= 0)
                                r = history_put_clean(out, history_str(o, "mem_used_peak_context"),
                                                      512);
                }
                if (r >= 0)
                        r = dbuf_puts(out, "\n");
        }
        if (r >= 0)
                r = peak(out, "memory available (min)", history_num(o, "mem_avail_min_mb"), 0,
                         " MiB");
        if (r >= 0)
                r = peak(out, "swap used", history_num(o, "swap_used_peak_mb"), 0, " MiB");
        if (r >= 0)
                r = peak(out, "disk available (min)", history_num(o, "disk_avail_min_gb"), 2,
                         " GiB");
        if (r >= 0)
                r = peak(out, "load1", history_num(o, "load1_peak"), 2, "");
        if (r >= 0)
                r = peak(out, "cpu", history_num(o, "cpu_pct_peak"), 1, " %");
        if (r >= 0)
                r = peak(out, "compilers", history_num(o, "compilers_peak"), 0, "");
        if (r >= 0)
                r = peak(out, "near-OOM samples", history_num(o, "near_oom_samples"), 0, "");
        if (r >= 0 && json_array_size(targets)) {
                r = dbuf_printf(out, "targets:\n  %-24s %9s %6s %6s %6s %-16s %8s %8s\n", "TARGET",
                                "DURATION", "STEPS", "CACHED", "RATIO", "NODE", "CC HITS",
                                "CC MISS");
                for (size_t i = 0; r >= 0 && i < json_array_size(targets); i++) {
                        const json_t *t = json_array_get(targets, i);
                        struct dbuf n = DBUF_INIT, nd = DBUF_INIT;
                        char ratio[16], hits[24], miss[24], steps[24], cached[24];

                        history_fmt_duration(history_num(t, "duration_s"), t1, sizeof(t1));
                        snprintf(ratio, sizeof(ratio),
                                 isfinite(history_num(t, "cached_ratio")) ? "%.0f%%" : "-",
                                 history_num(t, "cached_ratio") * 100);
                        snprintf(steps, sizeof(steps),
                                 isfinite(history_num(t, "steps")) ? "%.0f" : "-",
                                 history_num(t, "steps"));
                        snprintf(cached, sizeof(cached),
                                 isfinite(history_num(t, "cached")) ? "%.0f" : "-",
                                 history_num(t, "cached"));
                        snprintf(hits, sizeof(hits),
                                 isfinite(history_num(t, "cc_hits")) ? "%.0f" : "-",
                                 history_num(t, "cc_hits"));
                        snprintf(miss, sizeof(miss),
                                 isfinite(history_num(t, "cc_misses")) ? "%.0f" : "-",
                                 history_num(t, "cc_misses"));
                        r = history_put_clean(&n, history_str(t, "name"), 24);
                        if (r >= 0)
                                r = history_put_clean(
                                    &nd, *history_str(t, "node") ? history_str(t, "node") : "-",
                                    16);
                        if (r >= 0)
                                r = dbuf_printf(out, "  %-24s %9s %6s %6s %6s %-16s %8s %8s\n",
                                                n.p ? n.p : "", t1, steps, cached, ratio,
                                                nd.p ? nd.p : "", hits, miss);
                        dbuf_release(&n);
                        dbuf_release(&nd);
                }
        }
        if (r >= 0 && json_array_size(cache)) {
                r = dbuf_printf(out, "compiler cache:\n  %-8s %-10s %10s %10s %12s\n", "TOOL",
                                "WHEN", "HITS", "MISSES", "SIZE");
                for (size_t i = 0; r >= 0 && i < json_array_size(cache); i++) {
                        const json_t *c = json_array_get(cache, i);

                        history_fmt_bytes(history_num(c, "size_bytes"), t1, sizeof(t1));
                        r = dbuf_printf(out, "  %-8s %-10s %10.0f %10.0f %12s\n",
                                        history_str(c, "tool"), history_str(c, "origin"),
                                        history_num(c, "hits"), history_num(c, "misses"), t1);
                }
        }
        return r;
}

int cmd_inspect(int argc, char **argv)
{
        struct history_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        json_t *run = NULL;
        const char *spec = NULL;
        int64_t id;
        int oi, ret, e;

        ret = history_opts_parse("inspect", "j", argc, argv, &o, &oi);
        if (ret)
                return ret;
        if (o.help) {
                cmd_print_usage("inspect");
                return 0;
        }
        if (argc - oi > 1) {
                fprintf(stderr, "buildtel inspect: one RUN at most; see 'buildtel help inspect'\n");
                return EXIT_BT_USAGE;
        }
        if (oi < argc)
                spec = argv[oi];
        if (history_open("inspect", &o, false, &st))
                return 1;
        ret = 1;
        e = history_find_run(st, spec, &id);
        if (e == -ENOENT) {
                if (spec)
                        fprintf(stderr, "buildtel inspect: no run '%s' in the history\n", spec);
                else
                        fprintf(stderr, "buildtel inspect: no run recorded yet\n");
                goto out;
        }
        if (e == -EEXIST) {
                fprintf(stderr, "buildtel inspect: '%s' names several runs; give more of the id\n",
                        spec);
                goto out;
        }
        if (e >= 0)
                e = history_run_detail(st, id, &run);
        if (e < 0) {
                fprintf(stderr, "buildtel inspect: cannot read the history: %s\n",
                        store_strerror(e));
                goto out;
        }
        if (o.json)
                ret = history_print_json(run);
        else if (render(run, &out) >= 0 && write_all(STDOUT_FILENO, out.p, out.len) >= 0)
                ret = 0;
out:
        json_decref(run);
        dbuf_release(&out);
        store_close(st);
        return ret;
}
