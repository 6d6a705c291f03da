/* SPDX-License-Identifier: MIT */
/* resources-<id>.targets.json: written from the model, read back into it. */
#include "runfiles/targetsjson.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model/critpath.h"
#include "model/ranges.h"
#include "render/jsonw.h"
#include "util/json-cleanup.h"
#include "util/macro.h"
#include "util/util.h"

static double num_or_nan(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- a step's exec: one table for both ways, in the order written ---- */

static const struct {
        const char *key;
        size_t off;
        bool text; /* char[EXEC_LABEL_MAX + 1], null when ""; else a double */
} exec_fields[] = {
    {"cpu_s", offsetof(struct step_exec, cpu_s), false},
    {"mem_peak_bytes", offsetof(struct step_exec, mem_peak_bytes), false},
    {"anon_peak_bytes", offsetof(struct step_exec, anon_peak_bytes), false},
    {"io_read_bytes", offsetof(struct step_exec, io_read_bytes), false},
    {"io_write_bytes", offsetof(struct step_exec, io_write_bytes), false},
    {"net_rx_bytes", offsetof(struct step_exec, net_rx_bytes), false},
    {"net_tx_bytes", offsetof(struct step_exec, net_tx_bytes), false},
    {"oom_kills", offsetof(struct step_exec, oom_kills), false},
    {"oom_at_s", offsetof(struct step_exec, oom_at_s), false},
    {"oom_victim", offsetof(struct step_exec, oom_victim), true},
    {"peak_proc", offsetof(struct step_exec, peak_proc), true},
    {"peak_proc_bytes", offsetof(struct step_exec, peak_proc_bytes), false},
};

json_t *targetsjson_exec(const struct step_exec *e)
{
        json_t *o;

        if (!e->set)
                return json_null();
        o = json_pack("{s:I,s:s}", "execs", (json_int_t)e->execs, "source",
                      e->from_record ? "buildkit-record" : "exec-cgroup");
        for (size_t i = 0; o && i < ARRAY_SIZE(exec_fields); i++) {
                const char *p = (const char *)e + exec_fields[i].off;
                json_t *v = !exec_fields[i].text ? jsonw_real(*(const double *)(const void *)p)
                            : p[0]               ? jsonw_str(p)
                                                 : json_null();

                if (json_object_set_new(o, exec_fields[i].key, v) < 0) {
                        json_decref(o);
                        o = NULL;
                }
        }
        return o;
}

/* Anything but such an object reads as not measured; a text is cut at its
 * size. */
static void exec_from_json(json_t *o, struct step_exec *e)
{
        json_t *n = json_object_get(o, "execs");
        const char *src = json_string_value(json_object_get(o, "source"));

        step_exec_clear(e);
        if (!json_is_object(o) || !json_is_integer(n) || json_integer_value(n) < 0)
                return;
        e->set = true;
        e->from_record = src && strcmp(src, "buildkit-record") == 0;
        e->execs = (uint32_t)MIN(json_integer_value(n), (json_int_t)UINT32_MAX);
        for (size_t i = 0; i < ARRAY_SIZE(exec_fields); i++) {
                char *p = (char *)e + exec_fields[i].off;

                if (exec_fields[i].text)
                        copy_utf8_str(p, EXEC_LABEL_MAX + 1,
                                      json_string_value(json_object_get(o, exec_fields[i].key)));
                else
                        *(double *)(void *)p = num_or_nan(o, exec_fields[i].key);
        }
}

/* ---- the file, written ---- */

static json_t *cc_json(const struct cc_counts *c)
{
        if (!c->set)
                return json_null();
        return json_pack("{s:I,s:I}", "hits", (json_int_t)MIN(c->hits, (uint64_t)INT64_MAX),
                         "misses", (json_int_t)MIN(c->misses, (uint64_t)INT64_MAX));
}

static json_t *count_or_null(bool set, uint32_t v)
{
        return set ? json_integer(v) : json_null();
}

/* json_pack's "o" steals every value, even when packing fails. */
static json_t *target_json(const struct target_fact *f)
{
        return json_pack(
            "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:b,s:o}", "name", jsonw_str(f->name),
            "builder", jsonw_str(f->builder), "node", jsonw_str(f->node), "ref", jsonw_str(f->ref),
            "first_seen_s", jsonw_real(f->start_s), "last_seen_s", jsonw_real(f->end_s),
            "duration_s", jsonw_real(f->duration_s), "steps", count_or_null(f->steps_set, f->steps),
            "cached", count_or_null(f->steps_set, f->cached), "success",
            f->success == TARGET_SUCCESS_UNKNOWN ? json_null() : json_boolean(f->success), "failed",
            (json_int_t)f->failed, "sccache", cc_json(&f->sccache), "sccache_guess",
            f->sccache_guess, "ccache", cc_json(&f->ccache));
}

static json_t *failed_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < ts->nfailed; i++) {
                const struct failed_step *f = &ts->failed[i];

                a = json_push(
                    a, json_pack("{s:o,s:o}", "name", jsonw_str(f->name), "target",
                                 f->target >= 0 ? jsonw_str(ts->t[f->target].name) : json_null()));
        }
        return a;
}

static json_t *slow_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < ts->nslow; i++)
                a = json_push(
                    a, json_pack("{s:o,s:f}", "output", jsonw_str(ts->slow[i].output), "seconds",
                                 (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) / 1000.0));
        return a;
}

/* This run's edges of the .ninja_log as kept (edgev, in its order: read
 * back in that order it is the same heap) with what places them on the
 * run's clock: a replay from the files places the peaks' edges as the run
 * did. null when none were kept. */
static json_t *ninja_log_json(const struct targets *ts)
{
        json_t *a;

        if (!ts->nedgev || !(ts->ninja_mtime > 0))
                return json_null();
        a = json_array();
        for (uint32_t i = 0; a && i < ts->nedgev; i++)
                a = json_push(a, json_pack("[I,I,o]", (json_int_t)ts->edgev[i].start_ms,
                                           (json_int_t)ts->edgev[i].end_ms,
                                           jsonw_str(ts->edgev[i].output)));
        return a ? json_pack("{s:f,s:I,s:o}", "mtime", ts->ninja_mtime, "max_end_ms",
                             (json_int_t)ts->ninja_max_end_ms, "edges", a)
                 : NULL;
}

static json_t *steps_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (uint32_t i = 0; a && i < ts->nstepv; i++) {
                const struct step_fact *st = &ts->stepv[i];
                bool tgt = st->target >= 0 && (size_t)st->target < ts->n;

                a = json_push(a, json_pack("{s:o,s:o,s:o,s:o,s:b,s:b,s:b,s:b,s:o}", "name",
                                           jsonw_str(st->name), "target",
                                           tgt ? jsonw_str(ts->t[st->target].name) : json_null(),
                                           "start_s", jsonw_real(st->start_s), "end_s",
                                           jsonw_real(st->end_s), "step", st->step, "cached",
                                           st->cached, "error", st->error, "canceled", st->canceled,
                                           "exec", targetsjson_exec(&st->exec)));
        }
        return a;
}

static json_t *run_json(const struct run_facts *f)
{
        const char *o = targets_outcome_name(f->outcome);

        const struct run_failure *fl = &f->failure;

        return json_pack("{s:o,s:o,s:o,s:o,s:o}", "outcome", o ? json_string(o) : json_null(),
                         "exit_code", f->exit_code >= 0 ? json_integer(f->exit_code) : json_null(),
                         "signal", f->term_signal ? json_integer(f->term_signal) : json_null(),
                         "duration_s", jsonw_real(f->duration_s), "failure",
                         fl->target[0] || fl->first[0]
                             ? json_pack("{s:o,s:o,s:o,s:o}", "target", jsonw_str(fl->target),
                                         "tool", jsonw_str(fl->tool), "first_error",
                                         jsonw_str(fl->first), "last_error", jsonw_str(fl->last))
                             : json_null());
}

int targetsjson_format(const struct targets *ts, const struct run_facts *f, struct dbuf *out)
{
        static const struct targets none = {.make_pct = -1};
        json_t *arr = json_array();
        _cleanup_json_ json_t *root = NULL;

        if (!ts)
                ts = &none;
        for (size_t i = 0; arr && i < f->n; i++)
                arr = json_push(arr, target_json(&f->t[i]));
        if (!arr)
                return -ENOMEM;
        root = json_pack(
            "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:o,s:o,s:o}", "targets", arr, "steps",
            count_or_null(f->steps_set, f->steps), "cached", count_or_null(f->steps_set, f->cached),
            "run", run_json(f), "failed_steps", failed_json(ts), "slowest_edges", slow_json(ts),
            "buildkit_steps", steps_json(ts), "buildkit_steps_dropped",
            (json_int_t)ts->steps_dropped, "ninja_log", ninja_log_json(ts), "ninja_log_edges",
            ts->ninja_log_set ? json_integer((json_int_t)MIN(ts->ninja_edges, (uint64_t)INT64_MAX))
                              : json_null(),
            "ninja_progress",
            ts->ninja_total
                ? json_pack("[I,I]", (json_int_t)MIN(ts->ninja_done, (uint64_t)INT64_MAX),
                            (json_int_t)MIN(ts->ninja_total, (uint64_t)INT64_MAX))
                : json_null(),
            "critical_path", targetsjson_path(ts->path));
        return jsonw_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
}

/* ---- the file, read back ---- */

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

/* "ninja_log": the run's edges as kept (ninja_log_json() above), back
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

/* The counts of all the edges (the slowest and ninja_log keep a few):
 * "ninja_log_edges" and "ninja_progress" [done, total]. */
static void parse_ninja_counts(json_t *root, struct targets *ts)
{
        json_t *n = json_object_get(root, "ninja_log_edges");
        json_t *p = json_object_get(root, "ninja_progress");
        json_t *done = json_array_get(p, 0), *total = json_array_get(p, 1);

        if (json_is_integer(n) && json_integer_value(n) >= 0) {
                ts->ninja_log_set = true;
                ts->ninja_edges = MAX(ts->ninja_edges, (uint64_t)json_integer_value(n));
        }
        if (json_is_integer(done) && json_is_integer(total) && json_integer_value(done) >= 0 &&
            json_integer_value(total) >= json_integer_value(done)) {
                ts->ninja_done = (uint64_t)json_integer_value(done);
                ts->ninja_total = (uint64_t)json_integer_value(total);
        }
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
                exec_from_json(json_object_get(v, "exec"), &f.exec);
                if (e >= 0)
                        e = targets_add_step(ts, &f);
        }
        if (json_is_integer(dropped) && json_integer_value(dropped) > 0)
                ts->steps_dropped +=
                    (uint32_t)MIN(json_integer_value(dropped), (json_int_t)UINT32_MAX);
        return e;
}

/* ---- the critical path (issue 38): the same object here, in summary.json
 * and in the history ---- */

static json_t *weights_json(const struct critpath_weight *v, size_t n)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < n; i++)
                a = json_push(a, json_pack("{s:o,s:o,s:o}", "name", jsonw_str(v[i].name), "weighted_s",
                                           jsonw_real(v[i].weighted_s), "seconds", jsonw_real(v[i].s)));
        return a;
}

json_t *targetsjson_path(const struct critpath *p)
{
        json_t *st = p ? json_array() : NULL, *gaps = p ? json_array() : NULL;

        if (!p)
                return json_null();
        for (size_t i = 0; st && i < p->n; i++) {
                const struct critpath_step *s = &p->step[i];

                st = json_push(st, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "name", jsonw_str(s->name),
                                             "rule", s->rule[0] ? jsonw_str(s->rule) : json_null(),
                                             "start_s", jsonw_real(s->start_s), "end_s",
                                             jsonw_real(s->end_s), "slack_s", jsonw_real(s->slack_s),
                                             "mem_peak_mb", jsonw_real(s->mem_mb)));
        }
        for (size_t i = 0; gaps && i < p->ngap; i++) {
                const struct critpath_gap *g = &p->gap[i];

                gaps = json_push(gaps, json_pack("{s:o,s:o,s:o,s:o}", "start_s", jsonw_real(g->start_s),
                                                 "end_s", jsonw_real(g->end_s), "running",
                                                 jsonw_real(g->running), "waited_for",
                                                 jsonw_str(g->waited_for)));
        }
        return json_pack("{s:o,s:o,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "length_s",
                         jsonw_real(p->length_s), "wall_s", jsonw_real(p->wall_s), "target",
                         p->target[0] ? jsonw_str(p->target) : json_null(), "dropped",
                         (json_int_t)p->dropped, "steps", st, "jobs",
                         p->jobs ? json_integer(p->jobs) : json_null(), "under_jobs_s",
                         p->jobs ? jsonw_real(p->under_s) : json_null(), "under_jobs", gaps,
                         "weighted", weights_json(p->weight, p->nweight), "by_rule",
                         weights_json(p->rule, p->nrule));
}

static void text_of(json_t *o, const char *key, char *buf, size_t cap)
{
        const char *v = json_string_value(json_object_get(o, key));

        copy_utf8_str(buf, cap, v ? v : "");
}

static size_t weights_parse(json_t *a, struct critpath_weight *v)
{
        size_t n = 0;

        for (size_t i = 0; i < json_array_size(a) && n < CRITPATH_TOP; i++, n++) {
                json_t *o = json_array_get(a, i);

                text_of(o, "name", v[n].name, sizeof(v[n].name));
                v[n].weighted_s = num_or_nan(o, "weighted_s");
                v[n].s = num_or_nan(o, "seconds");
        }
        return n;
}

int targetsjson_path_parse(json_t *o, struct critpath **ret)
{
        json_t *a = json_object_get(o, "steps"), *j = json_object_get(o, "jobs");
        struct critpath *p;

        if (!json_is_object(o) || !json_is_array(a))
                return 0;
        if (!(p = calloc(1, sizeof(*p))))
                return -ENOMEM;
        for (size_t i = 0; i < json_array_size(a) && p->n < CRITPATH_MAX; i++) {
                json_t *x = json_array_get(a, i);
                struct critpath_step *s = &p->step[p->n++];

                text_of(x, "name", s->name, sizeof(s->name));
                text_of(x, "rule", s->rule, sizeof(s->rule));
                s->start_s = num_or_nan(x, "start_s");
                s->end_s = num_or_nan(x, "end_s");
                s->slack_s = num_or_nan(x, "slack_s");
                s->mem_mb = num_or_nan(x, "mem_peak_mb");
        }
        a = json_object_get(o, "under_jobs");
        for (size_t i = 0; i < json_array_size(a) && p->ngap < CRITPATH_TOP; i++) {
                json_t *x = json_array_get(a, i);
                struct critpath_gap *g = &p->gap[p->ngap++];

                g->start_s = num_or_nan(x, "start_s");
                g->end_s = num_or_nan(x, "end_s");
                g->running = num_or_nan(x, "running");
                text_of(x, "waited_for", g->waited_for, sizeof(g->waited_for));
        }
        p->length_s = num_or_nan(o, "length_s");
        p->wall_s = num_or_nan(o, "wall_s");
        p->under_s = num_or_nan(o, "under_jobs_s");
        text_of(o, "target", p->target, sizeof(p->target));
        p->dropped = (size_t)count_clamped(json_object_get(o, "dropped"), UINT32_MAX);
        p->jobs = count_clamped(j, 65535);
        p->nweight = weights_parse(json_object_get(o, "weighted"), p->weight);
        p->nrule = weights_parse(json_object_get(o, "by_rule"), p->rule);
        free(*ret);
        *ret = p;
        return 1;
}

int targetsjson_path_load(const char *text, struct critpath **ret)
{
        _cleanup_json_ json_t *o = text ? json_loads(text, 0, NULL) : NULL;

        return targetsjson_path_parse(o, ret);
}

int targetsjson_parse(const char *buf, size_t len, struct run_facts *f, struct targets *ts)
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
        arr = json_object_get(json_object_get(root, "run"), "failure");
        if (json_is_object(arr))
                run_failure_set(&f->failure, json_string_value(json_object_get(arr, "target")),
                                json_string_value(json_object_get(arr, "tool")),
                                json_string_value(json_object_get(arr, "first_error")),
                                json_string_value(json_object_get(arr, "last_error")));
        parse_slow_edges(json_object_get(root, "slowest_edges"), ts);
        parse_ninja_log(json_object_get(root, "ninja_log"), ts);
        parse_ninja_counts(root, ts);
        e = parse_steps(root, ts);
        if (e >= 0)
                e = targetsjson_path_parse(json_object_get(root, "critical_path"), &ts->path);
        json_decref(root);
        return e < 0 ? e : n;
}
