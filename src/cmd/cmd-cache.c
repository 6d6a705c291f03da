/* SPDX-License-Identifier: MIT */
/* buildtel cache: the compiler caches now (ccache --print-stats, sccache
 * --show-stats --stats-format=json, each when it is on PATH, run with a
 * fixed argv and no shell), stored as snapshots, with the change since the
 * previous `buildtel cache`. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "platform/cachetool.h"
#include "parse/ccstats.h"
#include "store/history.h"
#include "util/util.h"

#define TOOL_OUTPUT_MAX (1 << 20)
#define TOOL_TIMEOUT_S 20.0

static json_t *int_or_null(int64_t v)
{
        return v >= 0 ? json_integer(v) : json_null();
}

static json_t *delta(const json_t *prev, const char *key, int64_t now)
{
        json_t *p = json_object_get(prev, key);

        /* a stored counter below 0 is out of range (and now - it could overflow) */
        if (!prev || now < 0 || !json_is_integer(p) || json_integer_value(p) < 0)
                return json_null();
        return json_integer(now - json_integer_value(p));
}

/* One tool: run it, parse, store, and describe with the delta. NULL with
 * a message in err when the tool gave nothing usable. */
static json_t *snapshot(struct store *st, const char *tool, double now, char *err, size_t errlen)
{
        static char a_ccache[] = "ccache", a_print[] = "--print-stats", a_sccache[] = "sccache",
                    a_show[] = "--show-stats", a_fmt[] = "--stats-format=json";
        static char *const ccache_argv[] = {a_ccache, a_print, NULL};
        static char *const sccache_argv[] = {a_sccache, a_show, a_fmt, NULL};
        bool is_ccache = strcmp(tool, "ccache") == 0;
        _cleanup_free_ char *out = NULL;
        struct ccstats s;
        struct store_cache_snapshot c;
        json_t *prev = NULL, *o, *d, *runs;
        int64_t id = 0;
        size_t len;
        int r;

        r = cachetool_run(is_ccache ? ccache_argv : sccache_argv, TOOL_OUTPUT_MAX, TOOL_TIMEOUT_S,
                          &out, &len);
        if (r < 0) {
                snprintf(err, errlen, "cannot run %s: %s", tool, strerror(-r));
                return NULL;
        }
        if (r != 0) {
                snprintf(err, errlen, "%s exited with status %d", tool, r);
                return NULL;
        }
        /* The parser of stats in build logs reads these too (it takes the
         * last block; a tool prints one). */
        r = ccstats_parse(out, len, &s);
        if (r >= 0 && s.kind != (is_ccache ? CCSTATS_CCACHE : CCSTATS_SCCACHE))
                r = -EINVAL;
        if (r < 0) {
                snprintf(err, errlen, "%s printed no statistics buildtel can read", tool);
                return NULL;
        }
        if (history_cache_previous(st, tool, 0, &prev) < 0)
                prev = NULL;
        c = (struct store_cache_snapshot){
            .taken_epoch = now,
            .tool = tool,
            .origin = "cache",
            .hits = (int64_t)MIN(s.hits, (uint64_t)INT64_MAX),
            .misses = (int64_t)MIN(s.misses, (uint64_t)INT64_MAX),
            .size_bytes = s.size_bytes,
            .max_size_bytes = s.max_size_bytes,
            .files = s.files,
            .version = s.version[0] ? s.version : NULL,
            .raw = out,
        };
        r = store_cache_snapshot_insert(st, &c, &id);
        if (r < 0) {
                snprintf(err, errlen, "cannot store the %s snapshot: %s", tool, store_strerror(r));
                json_decref(prev);
                return NULL;
        }
        o = json_object();
        json_object_set_new(o, "tool", json_string(tool));
        json_object_set_new(o, "taken_epoch", json_real(now));
        json_object_set_new(o, "version", s.version[0] ? json_string(s.version) : json_null());
        json_object_set_new(o, "hits", int_or_null(c.hits));
        json_object_set_new(o, "misses", int_or_null(c.misses));
        json_object_set_new(o, "hit_rate",
                            s.hits + s.misses > 0
                                ? json_real((double)s.hits / ((double)s.hits + (double)s.misses))
                                : json_null());
        json_object_set_new(o, "size_bytes", int_or_null(s.size_bytes));
        json_object_set_new(o, "max_size_bytes", int_or_null(s.max_size_bytes));
        json_object_set_new(o, "files", int_or_null(s.files));
        if (prev) {
                d = json_object();
                json_object_set_new(d, "since_epoch",
                                    json_incref(json_object_get(prev, "taken_epoch")));
                json_object_set_new(d, "seconds",
                                    json_real(now - history_num(prev, "taken_epoch")));
                json_object_set_new(d, "hits", delta(prev, "hits", c.hits));
                json_object_set_new(d, "misses", delta(prev, "misses", c.misses));
                json_object_set_new(d, "size_bytes", delta(prev, "size_bytes", s.size_bytes));
                json_object_set_new(d, "files", delta(prev, "files", s.files));
                /* How much of it the recorded runs' logs account for. */
                if (history_cache_runs_since(st, tool, history_num(prev, "taken_epoch"), &runs) >=
                    0)
                        json_object_set_new(d, "runs", runs);
                json_object_set_new(o, "delta", d);
        } else {
                json_object_set_new(o, "delta", json_null());
        }
        json_decref(prev);
        return o;
}

static void fmt_count(const json_t *o, const char *key, const json_t *d, char *buf, size_t len)
{
        json_t *v = json_object_get(o, key), *dv = json_object_get(d, key);
        int n;

        if (!json_is_integer(v)) {
                snprintf(buf, len, "-");
                return;
        }
        n = snprintf(buf, len, "%lld", (long long)json_integer_value(v));
        if (json_is_integer(dv) && n > 0 && (size_t)n < len)
                snprintf(buf + n, len - (size_t)n, " (%+lld)", (long long)json_integer_value(dv));
}

static int render(const json_t *tools, struct dbuf *out)
{
        int r = dbuf_printf(out, "%-8s %18s %18s %9s %24s %14s  %s\n", "TOOL", "HITS", "MISSES",
                            "HIT RATE", "SIZE", "FILES", "SINCE");

        for (size_t i = 0; r >= 0 && i < json_array_size(tools); i++) {
                const json_t *o = json_array_get(tools, i), *d = json_object_get(o, "delta");
                char hits[48], misses[48], rate[16], size[64], files[48], since[64], ds[32];
                double dsz = history_num(d, "size_bytes");

                fmt_count(o, "hits", d, hits, sizeof(hits));
                fmt_count(o, "misses", d, misses, sizeof(misses));
                fmt_count(o, "files", d, files, sizeof(files));
                snprintf(rate, sizeof(rate), isfinite(history_num(o, "hit_rate")) ? "%.1f%%" : "-",
                         history_num(o, "hit_rate") * 100);
                history_fmt_bytes(history_num(o, "size_bytes"), size, sizeof(size));
                if (isfinite(dsz)) {
                        history_fmt_bytes(fabs(dsz), ds, sizeof(ds));
                        snprintf(size + strlen(size), sizeof(size) - strlen(size), " (%s%s)",
                                 dsz < 0 ? "-" : "+", ds);
                }
                if (d && json_is_object(d)) {
                        char when[32];
                        history_fmt_time(history_num(d, "since_epoch"), true, when, sizeof(when));
                        snprintf(since, sizeof(since), "%s", when);
                } else {
                        snprintf(since, sizeof(since), "first snapshot");
                }
                r = dbuf_printf(out, "%-8s %18s %18s %9s %24s %14s  %s\n", history_str(o, "tool"),
                                hits, misses, rate, size, files, since);
        }
        return r;
}

int cmd_cache(int argc, char **argv)
{
        static const char *const tools[] = {"ccache", "sccache"};
        struct history_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        json_t *arr = NULL;
        double now = now_realtime();
        bool any_tool = false;
        int oi, ret;

        ret = history_opts_parse("cache", "j", argc, argv, &o, &oi);
        if (ret)
                return ret;
        if (o.help) {
                cmd_print_usage("cache");
                return 0;
        }
        if (oi != argc) {
                fprintf(stderr,
                        "buildtel cache: no operands expected; see 'buildtel help cache'\n");
                return EXIT_BT_USAGE;
        }
        if (history_open("cache", &o, true, &st))
                return 1;
        ret = 1;
        arr = json_array();
        for (size_t i = 0; arr && i < ARRAY_SIZE(tools); i++) {
                char err[256];
                json_t *s;

                if (!cachetool_on_path(tools[i]))
                        continue;
                any_tool = true;
                s = snapshot(st, tools[i], now, err, sizeof(err));
                if (s)
                        json_array_append_new(arr, s);
                else
                        fprintf(stderr, "buildtel cache: %s\n", err);
        }
        if (!any_tool) {
                fprintf(stderr, "buildtel cache: neither ccache nor sccache is on PATH\n");
                goto out;
        }
        if (json_array_size(arr) == 0)
                goto out;
        if (o.json)
                ret = history_print_json(arr);
        else if (render(arr, &out) >= 0 && write_all(STDOUT_FILENO, out.p, out.len) >= 0)
                ret = 0;
out:
        json_decref(arr);
        dbuf_release(&out);
        store_close(st);
        return ret;
}
