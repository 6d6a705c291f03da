/* SPDX-License-Identifier: MIT */
/* A run's files: their names, and targets.json read back. */
#include "parse/runfiles.h"

#include "model/execs.h"
#include "model/ranges.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

static const struct {
        const char *prefix, *suffix;
} names[RUNFILE_COUNT_] = {
    [RUNFILE_CSV] = {"resources-", ".csv"},
    [RUNFILE_RUN] = {"resources-", ".run.json"},
    [RUNFILE_SUMMARY_TXT] = {"resources-", ".summary.txt"},
    [RUNFILE_SUMMARY_JSON] = {"resources-", ".summary.json"},
    [RUNFILE_TARGETS] = {"resources-", ".targets.json"},
    [RUNFILE_UNITS] = {"resources-", ".units.csv"},
    [RUNFILE_BUILD_LOG] = {"build-", ".log"},
    [RUNFILE_REPORT] = {"report-", ".html"},
    [RUNFILE_TRACE] = {"trace-", ".json"},
    [RUNFILE_BUILD_LOG_GZ] = {"build-", ".log.gz"},
    [RUNFILE_BUILD_LOG_GZ_TMP] = {"build-", ".log.gz.tmp"},
};

/* "<dir, dirlen bytes>/<prefix><id, idlen bytes><suffix>" (no dir and no
 * '/' when dir is NULL), malloc'd. */
static char *join(const char *dir, size_t dirlen, const char *id, size_t idlen, enum runfile kind)
{
        const char *sep = dir ? "/" : "";
        size_t n;
        char *p;
        int r;

        if ((unsigned)kind >= RUNFILE_COUNT_)
                return NULL;
        n = dirlen + 1 + strlen(names[kind].prefix) + idlen + strlen(names[kind].suffix) + 1;
        p = malloc(n);
        if (!p)
                return NULL;
        r = snprintf(p, n, "%.*s%s%s%.*s%s", (int)dirlen, dir ? dir : "", sep, names[kind].prefix,
                     (int)idlen, id, names[kind].suffix);
        if (r < 0 || (size_t)r >= n) {
                free(p);
                return NULL;
        }
        return p;
}

char *runfiles_path(const char *dir, const char *run_id, enum runfile kind)
{
        if (dir && strlen(dir) > INT32_MAX)
                return NULL;
        return join(dir, dir ? strlen(dir) : 0, run_id, strlen(run_id), kind);
}

char *runfiles_dir_of(const char *path, bool *ret_oom)
{
        const char *slash = strrchr(path, '/');
        char *p;

        *ret_oom = false;
        if (!slash)
                return NULL;
        p = strndup(path, (size_t)(slash - path));
        *ret_oom = !p;
        return p;
}

char *runfiles_beside(const char *csv, enum runfile kind)
{
        static const char pre[] = "resources-", suf[] = ".csv";
        const char *slash = strrchr(csv, '/'), *base = slash ? slash + 1 : csv;
        size_t n = strlen(csv), bl = strlen(base), stem;
        bool named = bl > strlen(pre) + strlen(suf) && strncmp(base, pre, strlen(pre)) == 0 &&
                     strcmp(base + bl - strlen(suf), suf) == 0;
        char *p;

        if ((unsigned)kind >= RUNFILE_COUNT_ || n > INT32_MAX)
                return NULL;
        if (named)
                return join(slash ? csv : NULL, slash ? (size_t)(slash - csv) : 0,
                            base + strlen(pre), bl - strlen(pre) - strlen(suf), kind);
        if (strcmp(names[kind].prefix, pre) != 0)
                return NULL;
        /* not resources-<id>.csv: its name with .csv swapped */
        stem = n >= strlen(suf) && strcmp(csv + n - strlen(suf), suf) == 0 ? n - strlen(suf) : n;
        p = malloc(stem + strlen(names[kind].suffix) + 1);
        if (p) {
                memcpy(p, csv, stem);
                memcpy(p + stem, names[kind].suffix, strlen(names[kind].suffix) + 1);
        }
        return p;
}

/* ---- targets.json ---- */

static double num_or_nan(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A count as written (an integer), clamped to [0, max]. */
static uint32_t count_clamped(json_t *v, uint32_t max)
{
        json_int_t i = json_integer_value(v);

        return (uint32_t)MIN(MAX(i, 0), (json_int_t)max);
}

static void parse_fact(json_t *o, struct target_fact *t)
{
        json_t *name = json_object_get(o, "name"), *steps = json_object_get(o, "steps"),
               *cached = json_object_get(o, "cached"), *v;
        const char *ns = json_string_value(name);

        memset(t, 0, sizeof(*t));
        copy_utf8(t->name, sizeof(t->name), ns ? ns : "", json_string_length(name));
        t->start_s = num_or_nan(o, "first_seen_s");
        t->end_s = num_or_nan(o, "last_seen_s");
        t->duration_s = num_or_nan(o, "duration_s");
        t->steps_set = json_is_integer(steps) && json_is_integer(cached);
        if (t->steps_set) {
                t->steps = count_clamped(steps, UINT32_MAX);
                t->cached = count_clamped(cached, t->steps);
        }
        v = json_object_get(o, "success");
        t->success = json_is_true(v)    ? TARGET_BUILT
                     : json_is_false(v) ? TARGET_FAILED
                                        : TARGET_SUCCESS_UNKNOWN;
        for (int k = 0; k < 2; k++) {
                struct cc_counts *c = k ? &t->ccache : &t->sccache;
                json_t *cc = json_object_get(o, k ? "ccache" : "sccache");
                json_t *h = json_object_get(cc, "hits"), *m = json_object_get(cc, "misses");

                c->set = json_is_integer(h) && json_is_integer(m) && json_integer_value(h) >= 0 &&
                         json_integer_value(m) >= 0;
                if (c->set) {
                        c->hits = (uint64_t)json_integer_value(h);
                        c->misses = (uint64_t)json_integer_value(m);
                }
        }
        targets_fact_ratios(t);
}

/* The slowest ninja edges (durations: targets.json keeps no start times,
 * so each starts at 0). */
static void parse_slow_edges(json_t *arr, struct targets *ts)
{
        for (size_t i = 0; i < json_array_size(arr) && i < TARGETS_SLOW_EDGES; i++) {
                json_t *e = json_array_get(arr, i), *o = json_object_get(e, "output");
                double sec = json_number_value(json_object_get(e, "seconds"));

                if (json_is_string(o) && sec >= 0 && sec < 1e9)
                        targets_offer_edge(ts, 0, (int64_t)(sec * 1000), json_string_value(o),
                                           json_string_length(o));
        }
        ts->ninja_log_set = ts->nslow > 0;
        ts->ninja_edges = ts->nslow;
}

/* "ninja_log": the run's edges as kept (targets.c ninja_log_json()), back
 * into edgev in their order, with the log's mtime and the run's latest end:
 * what targets_ninja_offset() places them by. An edge out of range, or not
 * [start, end, output], is skipped. */
static void parse_ninja_log(json_t *o, struct targets *ts)
{
        json_t *arr = json_object_get(o, "edges"), *v;
        double mtime = json_number_value(json_object_get(o, "mtime"));
        json_t *max_end = json_object_get(o, "max_end_ms");
        size_t i;

        if (!json_is_object(o) || !range_ok(RANGE_EPOCH, mtime) || !(mtime > 0))
                return;
        json_array_foreach(arr, i, v)
        {
                json_t *s = json_array_get(v, 0), *e = json_array_get(v, 1),
                       *out = json_array_get(v, 2);

                if (i >= TARGETS_EDGES_MAX)
                        break;
                if (json_array_size(v) != 3 || !json_is_integer(s) || !json_is_integer(e) ||
                    !json_is_string(out) || !range_ok_i64(RANGE_MS, json_integer_value(s)) ||
                    !range_ok_i64(RANGE_MS, json_integer_value(e)) ||
                    json_integer_value(e) < json_integer_value(s))
                        continue;
                targets_keep_edge(ts, json_integer_value(s), json_integer_value(e),
                                  json_string_value(out), json_string_length(out));
        }
        if (!ts->nedgev)
                return;
        ts->ninja_mtime = mtime;
        if (json_is_integer(max_end) && range_ok_i64(RANGE_MS, json_integer_value(max_end)))
                ts->ninja_max_end_ms = MAX(ts->ninja_max_end_ms, json_integer_value(max_end));
}

/* "buildkit_steps": each step's target by name (added to ts when new);
 * malformed entries are skipped. 0 or -ENOMEM. */
static int parse_steps(json_t *root, struct targets *ts)
{
        json_t *arr = json_object_get(root, "buildkit_steps"), *v;
        json_t *dropped = json_object_get(root, "buildkit_steps_dropped");
        size_t i;
        int e = 0;

        json_array_foreach(arr, i, v)
        {
                const char *name = json_string_value(json_object_get(v, "name"));
                const char *tn = json_string_value(json_object_get(v, "target"));
                struct step_fact f = {.target = -1};

                if (!name)
                        continue;
                copy_utf8(f.name, sizeof(f.name), name, strlen(name));
                if (tn)
                        f.target = (int)targets_get(ts, tn, strlen(tn));
                f.start_s = num_or_nan(v, "start_s");
                f.end_s = num_or_nan(v, "end_s");
                f.step = json_is_true(json_object_get(v, "step"));
                f.cached = json_is_true(json_object_get(v, "cached"));
                f.error = json_is_true(json_object_get(v, "error"));
                f.canceled = json_is_true(json_object_get(v, "canceled"));
                execs_step_from_json(json_object_get(v, "exec"), &f.exec);
                if (e >= 0)
                        e = targets_add_step(ts, &f);
        }
        if (json_is_integer(dropped) && json_integer_value(dropped) > 0)
                ts->steps_dropped +=
                    (uint32_t)MIN(json_integer_value(dropped), (json_int_t)UINT32_MAX);
        return e;
}

int runfiles_targets_parse(const char *buf, size_t len, struct run_facts *f, struct targets *ts)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *arr = json_object_get(root, "targets");
        int n = 0, e = 0;

        if (!json_is_object(root)) {
                json_decref(root);
                return -EINVAL;
        }
        for (size_t i = 0; i < json_array_size(arr) && f->n < TARGETS_MAX; i++)
                if (json_is_object(json_array_get(arr, i))) {
                        parse_fact(json_array_get(arr, i), &f->t[f->n++]);
                        n++;
                }
        if (ts) {
                parse_slow_edges(json_object_get(root, "slowest_edges"), ts);
                parse_ninja_log(json_object_get(root, "ninja_log"), ts);
                e = parse_steps(root, ts);
        }
        json_decref(root);
        return e < 0 ? e : n;
}
