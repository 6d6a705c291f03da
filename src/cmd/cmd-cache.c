/* SPDX-License-Identifier: MIT */
/* buildtel cache: the compiler caches now (ccache --print-stats, sccache
 * --show-stats --stats-format=json, each when it is on PATH, run with a
 * fixed argv and no shell), stored as snapshots, with the change since the
 * previous `buildtel cache`. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "model/figures.h"
#include "platform/cachetool.h"
#include "parse/ccstats.h"
#include "render/jsonw.h"
#include "render/summary.h"
#include "store/history.h"
#include "util/json-cleanup.h"
#include "util/util.h"

#define TOOL_OUTPUT_MAX (1 << 20)
#define TOOL_TIMEOUT_S 20.0

/* One tool now, and the change since its previous snapshot. */
struct report {
        const char *tool;
        double now;
        struct store_cache_snapshot c; /* as stored */
        bool has_prev, has_runs;
        struct store_cache_snapshot prev;
        struct store_cache_runs runs; /* what the runs' logs account for */
};

/* now - before, or -1 (unknown) with either unknown; INT64_MIN marks
 * "unknown" for a difference that may be negative. */
#define DELTA_UNKNOWN INT64_MIN

static int64_t delta(bool has_prev, int64_t before, int64_t now)
{
        return has_prev && before >= 0 && now >= 0 ? now - before : DELTA_UNKNOWN;
}

/* One tool: run it, parse, store. Returns 0, or -1 with a message in err
 * when the tool gave nothing usable. */
static int snapshot(struct store *st, const char *tool, double now, struct report *ret, char *err,
                    size_t errlen)
{
        static char a_ccache[] = "ccache", a_print[] = "--print-stats", a_sccache[] = "sccache",
                    a_show[] = "--show-stats", a_fmt[] = "--stats-format=json";
        static char *const ccache_argv[] = {a_ccache, a_print, NULL};
        static char *const sccache_argv[] = {a_sccache, a_show, a_fmt, NULL};
        bool is_ccache = strcmp(tool, "ccache") == 0;
        _cleanup_free_ char *out = NULL;
        struct ccstats s;
        struct report rep = {.tool = tool, .now = now};
        size_t len;
        int r;

        r = cachetool_run(is_ccache ? ccache_argv : sccache_argv, TOOL_OUTPUT_MAX, TOOL_TIMEOUT_S,
                          &out, &len);
        if (r < 0) {
                snprintf(err, errlen, "cannot run %s: %s", tool, strerror(-r));
                return -1;
        }
        if (r != 0) {
                snprintf(err, errlen, "%s exited with status %d", tool, r);
                return -1;
        }
        /* The parser of stats in build logs reads these too (it takes the
         * last block; a tool prints one). */
        r = ccstats_parse(out, len, &s);
        if (r >= 0 && s.kind != (is_ccache ? CCSTATS_CCACHE : CCSTATS_SCCACHE))
                r = -EINVAL;
        if (r < 0) {
                snprintf(err, errlen, "%s printed no statistics buildtel can read", tool);
                return -1;
        }
        rep.has_prev = store_cache_previous(st, tool, &rep.prev) > 0;
        rep.c = (struct store_cache_snapshot){
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
        r = store_cache_snapshot_insert(st, &rep.c);
        if (r < 0) {
                snprintf(err, errlen, "cannot store the %s snapshot: %s", tool, store_strerror(r));
                return -1;
        }
        /* How much of the change the recorded runs' logs account for. */
        rep.has_runs =
            rep.has_prev && store_cache_runs_since(st, tool, rep.prev.taken_epoch, &rep.runs) >= 0;
        rep.c.raw = NULL;
        *ret = rep;
        return 0;
}

static double hit_rate(const struct store_cache_snapshot *c)
{
        if (c->hits < 0 || c->misses < 0)
                return NAN;
        return figure_hit_ratio((uint64_t)c->hits, (uint64_t)c->misses);
}

static json_t *delta_json(int64_t d)
{
        return d == DELTA_UNKNOWN ? json_null() : json_integer(d);
}

static json_t *report_delta_json(const struct report *rep)
{
        const struct store_cache_snapshot *c = &rep->c, *p = &rep->prev;
        _cleanup_json_ json_t *d = NULL;

        if (!rep->has_prev)
                return json_null();
        d = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "since_epoch", jsonw_real(p->taken_epoch),
                      "seconds", jsonw_real(rep->now - p->taken_epoch), "hits",
                      delta_json(delta(true, p->hits, c->hits)), "misses",
                      delta_json(delta(true, p->misses, c->misses)), "size_bytes",
                      delta_json(delta(true, p->size_bytes, c->size_bytes)), "files",
                      delta_json(delta(true, p->files, c->files)));
        if (d && rep->has_runs &&
            json_object_set_new(d, "runs",
                                json_pack("{s:I, s:o, s:o}", "runs", (json_int_t)rep->runs.runs,
                                          "hits", history_json_count(rep->runs.hits), "misses",
                                          history_json_count(rep->runs.misses))) < 0)
                return NULL;
        return TAKE_PTR(d);
}

static json_t *report_json(const struct report *rep)
{
        const struct store_cache_snapshot *c = &rep->c;

        return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "tool", rep->tool,
                         "taken_epoch", jsonw_real(rep->now), "version", jsonw_text(c->version),
                         "hits", history_json_count(c->hits), "misses",
                         history_json_count(c->misses), "hit_rate", jsonw_real(hit_rate(c)),
                         "size_bytes", history_json_count(c->size_bytes), "max_size_bytes",
                         history_json_count(c->max_size_bytes), "files",
                         history_json_count(c->files), "delta", report_delta_json(rep));
}

/* A count and its change: "12 (+3)", "12", "-". */
static const char *fmt_count_delta(int64_t v, int64_t d, char buf[static 48])
{
        snprintf(buf, 48, v >= 0 && d != DELTA_UNKNOWN ? "%s (%+lld)" : "%s", COUNT_STR(v),
                 (long long)d);
        return buf;
}

#define COUNT_DELTA_STR(v, d) fmt_count_delta(v, d, (char[48]){0})

static int report_text(const struct report *rep, struct dbuf *out)
{
        const struct store_cache_snapshot *c = &rep->c, *p = &rep->prev;
        char rate[16], size[64];
        int64_t dsz = delta(rep->has_prev, p->size_bytes, c->size_bytes);
        double hr = hit_rate(c);

        snprintf(rate, sizeof(rate), isfinite(hr) ? "%.1f%%" : "-", hr * 100);
        snprintf(size, sizeof(size), dsz != DELTA_UNKNOWN ? "%s (%s%s)" : "%s",
                 BYTES_STR((double)c->size_bytes), dsz < 0 ? "-" : "+",
                 BYTES_STR(fabs((double)dsz)));
        return dbuf_printf(out, "%-8s %18s %18s %9s %24s %14s  %s\n", rep->tool,
                           COUNT_DELTA_STR(c->hits, delta(rep->has_prev, p->hits, c->hits)),
                           COUNT_DELTA_STR(c->misses, delta(rep->has_prev, p->misses, c->misses)),
                           rate, size,
                           COUNT_DELTA_STR(c->files, delta(rep->has_prev, p->files, c->files)),
                           rep->has_prev ? TIME_STR(p->taken_epoch, true) : "first snapshot");
}

int cmd_cache(int argc, char **argv)
{
        static const char *const tools[] = {"ccache", "sccache"};
        struct common_opts o;
        struct store *st = NULL;
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        json_t *arr = NULL;
        double now = now_realtime();
        bool any_tool = false;
        size_t n = 0;
        int ret, r;

        ret = history_list_begin("cache", argc, argv, &o, true, &st);
        if (ret >= 0)
                return ret;
        ret = 1;
        if (o.json)
                r = (arr = json_array()) ? 0 : -ENOMEM;
        else
                r = dbuf_printf(&out, "%-8s %18s %18s %9s %24s %14s  %s\n", "TOOL", "HITS",
                                "MISSES", "HIT RATE", "SIZE", "FILES", "SINCE");
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(tools); i++) {
                struct report rep;
                char err[256];

                if (!cachetool_on_path(tools[i]))
                        continue;
                any_tool = true;
                if (snapshot(st, tools[i], now, &rep, err, sizeof(err)) < 0) {
                        fprintf(stderr, "buildtel cache: %s\n", err);
                        continue;
                }
                n++;
                if (arr)
                        r = json_array_append_new(arr, report_json(&rep)) < 0 ? -ENOMEM : 0;
                else
                        r = report_text(&rep, &out);
        }
        if (!any_tool) {
                fprintf(stderr, "buildtel cache: neither ccache nor sccache is on PATH\n");
                goto out;
        }
        if (r < 0) {
                fprintf(stderr, "buildtel cache: out of memory\n");
                goto out;
        }
        if (n == 0)
                goto out;
        if (o.json)
                ret = history_print_json(arr);
        else if (write_all(STDOUT_FILENO, out.p, out.len) >= 0)
                ret = 0;
out:
        json_decref(arr);
        store_close(st);
        return ret;
}
