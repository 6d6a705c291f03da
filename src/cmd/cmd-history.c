/* SPDX-License-Identifier: MIT */
#include "cmd/cmd-history.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "model/figures.h"
#include "model/ranges.h"
#include "store/history.h"
#include "util/util.h"
#include "render/jsonw.h"

int history_opts_parse(const char *cmd, int argc, char **argv, struct common_opts *o,
                       int *ret_optind)
{
        int k = cmd_parse_options(cmd_mask(cmd), cmd, argc, argv, o);

        common_opts_release(o);
        if (k <= 0)
                return k < 0 ? EXIT_BT_USAGE : 0;
        *ret_optind = k;
        return -1;
}

int history_open(const char *cmd, const char *path, bool create, struct store **ret)
{
        _cleanup_free_ char *def = NULL;
        int e;

        if (!path) {
                def = store_default_path();
                if (!def) {
                        fprintf(stderr,
                                "buildtel %s: no history database: set HOME or XDG_STATE_HOME, or "
                                "use --db\n",
                                cmd);
                        return 1;
                }
                path = def;
        }
        e = history_store_open(path, create, 2000, ret);
        if (e == -ENOENT && !create) {
                fprintf(stderr,
                        "buildtel %s: history database '%s' does not exist (no run recorded yet)\n",
                        cmd, path);
                return 1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel %s: history database '%s': %s\n", cmd, path,
                        store_strerror(e));
                return 1;
        }
        return 0;
}

int history_print_json(const json_t *v)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        if (jsonw_dump(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), &b) < 0)
                return 1;
        return write_all(STDOUT_FILENO, b.p, b.len) < 0 ? 1 : 0;
}

const char *history_fmt_time(double epoch, bool with_seconds, char buf[static 32])
{
        /* (time_t) is defined only in range */
        time_t t = range_ok(RANGE_EPOCH, epoch) ? (time_t)epoch : 0;
        struct tm tm;

        if (!range_ok(RANGE_EPOCH, epoch) || !localtime_r(&t, &tm) ||
            strftime(buf, 32, with_seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M", &tm) == 0)
                return "-";
        return buf;
}

const char *history_fmt_count(int64_t v, char buf[static 24])
{
        snprintf(buf, 24, v >= 0 ? "%lld" : "-", (long long)v);
        return buf;
}

const char *history_fmt_ratio(double v, char buf[static 16])
{
        snprintf(buf, 16, isfinite(v) ? "%.0f%%" : "-", v * 100);
        return buf;
}

json_t *history_json_count(int64_t v)
{
        return v >= 0 ? json_integer(v) : json_null();
}

const char *history_run_result(const struct store_run *r, char buf[static 32])
{
        char o[FIGURE_OUTCOME_LEN];
        bool unfinished = r->state == STORE_RUN_RUNNING || r->state == STORE_RUN_INCOMPLETE ||
                          r->state == STORE_RUN_UNRECORDED || r->state == STORE_RUN_DISK_FULL;

        snprintf(buf, 32, "%s",
                 unfinished ? store_run_state_name(r->state)
                            : figure_outcome(r->info.exit_code, r->info.term_signal,
                                             r->build_oom_kills, o));
        return buf;
}

json_t *history_run_json(const struct store_run *r)
{
        const struct run_info *ri = &r->info;

        /* the row, the resource figures stored with it, then the later
         * keys (issue 23's job appended: the keys' order is an interface) */
        return json_pack(
            "{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:I, s:I, s:o, s:o,"
            " s:o, s:o, s:o,"
            " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
            " s:o, s:o, s:o, s:o, s:o,"
            " s:o, s:s, s:o, s:o}",
            "db_id", (json_int_t)r->id, "id", jsonw_text(ri->run_id), "kind", jsonw_text(ri->kind),
            "argv", ri->argv ? jsonw_argv(ri->argv) : json_array(), "cwd", jsonw_text(ri->cwd),
            "host", jsonw_text(ri->host), "builder", jsonw_text(r->builder), "start_epoch",
            jsonw_real(ri->start_epoch), "end_epoch", jsonw_real(ri->end_epoch), "duration_s",
            jsonw_real(r->duration_s), "state", store_run_state_name(r->state), "exit_code",
            history_json_count(ri->exit_code),
            /* the signal is written when the run finishes */
            "term_signal", ri->finished ? json_integer(ri->term_signal) : json_null(), "pid",
            (json_int_t)ri->pid, "ncpu", (json_int_t)ri->ncpu, "interval", jsonw_real(ri->interval),
            "cgroup_mode", jsonw_text(r->cgroup_mode),
            /* mode none: the build's figures are estimates */
            "estimates",
            r->cgroup_mode ? json_boolean(strcmp(r->cgroup_mode, "none") == 0) : json_null(),
            "vcs_rev", jsonw_text(r->vcs_rev), "vcs_ref", jsonw_text(r->vcs_ref), "samples",
            history_json_count(r->samples), "samples_dropped",
            history_json_count(r->samples_dropped), "mem_total_mb", jsonw_real(r->mem_total_mb),
            "mem_used_peak_mb", jsonw_real(r->mem_used_peak_mb), "mem_used_peak_elapsed_s",
            jsonw_real(r->mem_used_peak_elapsed_s), "mem_used_peak_stage",
            jsonw_text(r->mem_used_peak_stage), "mem_used_peak_context",
            jsonw_text(r->mem_used_peak_context), "mem_avail_min_mb",
            jsonw_real(r->mem_avail_min_mb), "swap_used_peak_mb", jsonw_real(r->swap_used_peak_mb),
            "disk_avail_min_gb", jsonw_real(r->disk_avail_min_gb), "load1_peak",
            jsonw_real(r->load1_peak), "cpu_pct_peak", jsonw_real(r->cpu_pct_peak), "cpu_pct_avg",
            jsonw_real(r->cpu_pct_avg), "compilers_peak", jsonw_real(r->compilers_peak),
            "near_oom_samples", history_json_count(r->near_oom_samples), "low_disk_samples",
            history_json_count(r->low_disk_samples), "build_mem_peak_mb",
            jsonw_real(r->build_mem_peak_mb), "build_anon_peak_mb",
            jsonw_real(r->build_anon_peak_mb), "unit_peak_name", jsonw_text(r->unit_peak_name),
            "unit_peak_tool", jsonw_text(r->unit_peak_tool), "unit_peak_mb",
            jsonw_real(r->unit_peak_mb), "jobs_reading", jsonw_text(r->jobs_reading), "nodes",
            jsonw_text(r->nodes), "result", RESULT_STR(r), "job", jsonw_text(ri->job), "failure",
            r->fail_target || r->fail_first
                ? json_pack("{s:o, s:o, s:o, s:o}", "target", jsonw_text(r->fail_target), "tool",
                            jsonw_text(r->fail_tool), "first_error", jsonw_text(r->fail_first),
                            "last_error", jsonw_text(r->fail_last))
                : json_null());
}

int history_put_failure(struct dbuf *out, const struct store_run *r, const char *lead)
{
        bool last = r->fail_last && (!r->fail_first || strcmp(r->fail_last, r->fail_first) != 0);
        const char *part[] = {r->fail_target, r->fail_first, last ? r->fail_last : NULL};
        const char *sep[] = {"", r->fail_target ? ": " : "", " ... "};
        int e;

        if (!r->fail_target && !r->fail_first)
                return 0;
        e = dbuf_puts(out, lead);
        for (size_t i = 0; e >= 0 && i < 3; i++) {
                if (part[i] && (e = dbuf_puts(out, sep[i])) >= 0)
                        e = history_put_clean(out, part[i], 240);
                if (i == 0 && e >= 0 && r->fail_target && r->fail_tool)
                        e = dbuf_printf(out, " (%s)", r->fail_tool); /* "foo.o (make)" */
        }
        return e < 0 || dbuf_puts(out, "\n") < 0 ? -ENOMEM : 1;
}

int history_put_clean(struct dbuf *out, const char *s, size_t max)
{
        size_t n = strlen(s);
        int r;

        if (n <= max)
                return run_append_utf8_lossy(out, s, n, true);
        /* cut on a character start */
        while (max > 3 && ((unsigned char)s[max - 3] & 0xc0) == 0x80)
                max--;
        r = run_append_utf8_lossy(out, s, max - 3, true);
        return r < 0 ? r : dbuf_puts(out, "...");
}

void history_dw_clean(struct dwriter *w, const char *lead, const char *s, size_t max)
{
        if (lead)
                dw_puts(w, lead);
        if (dw_ok(w))
                dw_check(w, history_put_clean(w->b, s, max));
}

int history_list_begin(const char *cmd, int argc, char **argv, struct common_opts *o, bool create,
                       struct store **ret_st)
{
        int oi, ret = history_opts_parse(cmd, argc, argv, o, &oi);

        if (ret >= 0)
                return ret;
        if (oi != argc) {
                fprintf(stderr, "buildtel %s: no operands expected; see 'buildtel help %s'\n", cmd,
                        cmd);
                return EXIT_BT_USAGE;
        }
        return history_open(cmd, o->rec.db_path, create, ret_st) ? 1 : -1;
}

int history_find_run(const char *cmd, struct store *st, const char *spec, int64_t *ret)
{
        int e = store_run_find(st, spec, ret);

        if (e == -ENOENT && !spec)
                fprintf(stderr, "buildtel %s: no run recorded yet\n", cmd);
        else if (e == -ENOENT)
                fprintf(stderr, "buildtel %s: no run '%s' in the history\n", cmd, spec);
        else if (e == -EEXIST)
                fprintf(stderr, "buildtel %s: '%s' names several runs; give more of the id\n", cmd,
                        spec);
        else if (e < 0)
                fprintf(stderr, "buildtel %s: cannot read the history: %s\n", cmd,
                        store_strerror(e));
        return e;
}

int history_list_end(const char *cmd, int n, struct json_t *json, struct dbuf *out,
                     const char *empty, struct store *st)
{
        int ret = 1;

        if (n < 0)
                fprintf(stderr, "buildtel %s: cannot read the history: %s\n", cmd,
                        store_strerror(n));
        else if (json)
                ret = history_print_json(json);
        else if (n == 0 && empty) {
                printf("%s\n", empty);
                ret = 0;
        } else if (out->p && write_all(STDOUT_FILENO, out->p, out->len) >= 0)
                ret = 0;
        json_decref(json);
        dbuf_release(out);
        store_close(st);
        return ret;
}
