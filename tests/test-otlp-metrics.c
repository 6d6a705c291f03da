/* SPDX-License-Identifier: MIT */
/* render/otlp-metrics.c: which metric each figure of the model becomes, with
 * what value, unit and attributes. Every body is encoded as OTLP JSON and
 * read back with jansson; values are compared exactly (counts as the
 * decimal strings OTLP JSON gives 64-bit integers, doubles bit for bit). */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/baseline.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/otlp-metrics.h"
#include "sinks/sink.h"
#include "parse/otelenv.h"
#include "util/macro.h"

#define MiB 1048576.0

static char run_id[] = "r1", kind[] = "run", host[] = "host-a";

static struct run_info run_of(bool finished, int exit_code, int sig)
{
        return (struct run_info){.run_id = run_id,
                                 .kind = kind,
                                 .host = host,
                                 .start_epoch = 1795968800.0,
                                 .end_epoch = 1795968862.25,
                                 .finished = finished,
                                 .exit_code = exit_code,
                                 .term_signal = sig};
}

/* The baseline the next encode() puts in its summary (NULL: none). */
static const struct baseline *encode_baseline;

/* Encode one final body of run ri with facts f (and samples when
 * given) and parse it. */
static json_t *encode(const struct run_info *ri, const struct run_facts *f,
                      const struct sample *samples, size_t nsamples)
{
        struct otel_config cfg = {.enabled = true, .protocol = OTEL_PROTOCOL_JSON};
        struct otlp_metrics *m = NULL;
        struct summary sum;
        struct run_model rm = {.run = ri, .summary = &sum, .facts = f};
        struct dbuf out = DBUF_INIT;
        json_t *root;

        summary_init(&sum, NULL);
        sum.baseline = encode_baseline;
        for (size_t i = 0; i < nsamples; i++)
                summary_add(&sum, &samples[i]);
        assert_int_equal(otlp_metrics_new(&cfg, ri, &m), 0);
        for (size_t i = 0; i < nsamples; i++)
                otlp_metrics_add_sample(m, &samples[i]);
        assert_int_equal(otlp_metrics_encode(m, &rm, true, &out), 0);
        assert_int_equal(otlp_metrics_pending(m), 0); /* taken on success */
        root = json_loadb(out.p, out.len, 0, NULL);
        assert_non_null(root);
        dbuf_release(&out);
        otlp_metrics_free(m);
        return root;
}

static json_t *metrics_of(json_t *root)
{
        return json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(root, "resourceMetrics"), 0),
                                "scopeMetrics"),
                0),
            "metrics");
}

static const char *attr(json_t *point, const char *key)
{
        static char buf[64];
        json_t *a;
        size_t i;

        json_array_foreach(json_object_get(point, "attributes"), i, a)
        {
                json_t *v = json_object_get(a, "value");

                if (strcmp(json_string_value(json_object_get(a, "key")), key) != 0)
                        continue;
                if (json_object_get(v, "stringValue"))
                        return json_string_value(json_object_get(v, "stringValue"));
                snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(v, "intValue")));
                return buf;
        }
        return NULL;
}

/* The points of metric name whose attribute target is target (NULL: any)
 * and build.compiler_cache is tool (NULL: none). */
static size_t points(json_t *root, const char *name, const char *unit, const char *target,
                     const char *tool, json_t **ret)
{
        json_t *m, *p;
        size_t i, k, n = 0;

        json_array_foreach(metrics_of(root), i, m)
        {
                json_t *body;

                if (strcmp(json_string_value(json_object_get(m, "name")), name) != 0)
                        continue;
                if (unit)
                        assert_string_equal(json_string_value(json_object_get(m, "unit")), unit);
                body = json_object_get(m, "gauge") ? json_object_get(m, "gauge")
                                                   : json_object_get(m, "sum");
                json_array_foreach(json_object_get(body, "dataPoints"), k, p)
                {
                        const char *t = attr(p, "target"), *c = attr(p, "build.compiler_cache");

                        if (target && (!t || strcmp(t, target) != 0))
                                continue;
                        if ((tool == NULL) != (c == NULL) || (tool && strcmp(tool, c) != 0))
                                continue;
                        *ret = p;
                        n++;
                }
        }
        return n;
}

/* ---- per-target metrics ----------------------------------------------- */

/* A value expected: absent, an integer (OTLP JSON: a decimal string), or a
 * double. */
enum vk { ABSENT, INT, DBL };
struct want {
        enum vk k;
        const char *i;
        double d;
};
#define NONE                                                                                       \
        {                                                                                          \
                ABSENT, NULL, 0                                                                    \
        }
#define I(s)                                                                                       \
        {                                                                                          \
                INT, s, 0                                                                          \
        }
#define D(x)                                                                                       \
        {                                                                                          \
                DBL, NULL, x                                                                       \
        }

static const struct target_case {
        const char *name, *builder;
        double duration;
        bool steps_set;
        uint32_t steps, cached;
        int success;
        bool sc_set, cc_set;
        uint64_t sc_hits, sc_misses, cc_hits, cc_misses;
        /* duration, steps, cached, success, sccache hits, misses, ratio,
         * ccache hits, misses, ratio */
        struct want w[10];
} target_cases[] = {
    {"lib",
     "ci-builder",
     62.233706155,
     true,
     6,
     2,
     TARGET_BUILT,
     true,
     false,
     212,
     88,
     0,
     0,
     {D(62.233706155), I("6"), I("2"), I("1"), I("212"), I("88"), D(212.0 / 300.0), NONE, NONE,
      NONE}},
    /* failed, both compiler caches, a duration of zero is a figure */
    {"tools",
     "",
     0.0,
     true,
     3,
     0,
     TARGET_FAILED,
     true,
     true,
     1,
     3,
     5,
     0,
     {D(0.0), I("3"), I("0"), I("0"), I("1"), I("3"), D(0.25), I("5"), I("0"), D(1.0)}},
    /* nothing known: no point at all (absent is not zero) */
    {"ghost",
     "",
     NAN,
     false,
     0,
     0,
     TARGET_SUCCESS_UNKNOWN,
     false,
     false,
     0,
     0,
     0,
     0,
     {NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE}},
    /* counts past 2^53 stay exact: integers, never through a double */
    {"huge",
     "b2",
     1e-9,
     true,
     0,
     0,
     TARGET_BUILT,
     true,
     false,
     9007199254740993ULL,
     0,
     0,
     0,
     {D(1e-9), I("0"), I("0"), I("1"), I("9007199254740993"), I("0"), D(1.0), NONE, NONE, NONE}},
    /* a hit ratio needs hits or misses */
    {"idle",
     "",
     4.5,
     true,
     1,
     1,
     TARGET_BUILT,
     false,
     true,
     0,
     0,
     0,
     0,
     {D(4.5), I("1"), I("1"), I("1"), NONE, NONE, NONE, I("0"), I("0"), NONE}},
};

static const struct {
        const char *metric, *unit, *tool;
} target_metrics[10] = {
    {"build.target.duration", "s", NULL},
    {"build.target.steps", "{step}", NULL},
    {"build.target.steps.cached", "{step}", NULL},
    {"build.target.success", "1", NULL},
    {"build.target.compiler_cache.hits", "{hit}", "sccache"},
    {"build.target.compiler_cache.misses", "{miss}", "sccache"},
    {"build.target.compiler_cache.hit_ratio", "1", "sccache"},
    {"build.target.compiler_cache.hits", "{hit}", "ccache"},
    {"build.target.compiler_cache.misses", "{miss}", "ccache"},
    {"build.target.compiler_cache.hit_ratio", "1", "ccache"},
};

static void check_want(json_t *root, const char *target, size_t k, const struct want *w)
{
        json_t *p = NULL;
        size_t n = points(root, target_metrics[k].metric, target_metrics[k].unit, target,
                          target_metrics[k].tool, &p);

        printf("  %s %s%s%s\n", target, target_metrics[k].metric, target_metrics[k].tool ? " " : "",
               target_metrics[k].tool ? target_metrics[k].tool : "");
        if (w->k == ABSENT) {
                assert_int_equal(n, 0);
                return;
        }
        assert_int_equal(n, 1);
        if (w->k == INT) {
                assert_null(json_object_get(p, "asDouble"));
                assert_string_equal(json_string_value(json_object_get(p, "asInt")), w->i);
        } else {
                assert_null(json_object_get(p, "asInt"));
                assert_true(json_real_value(json_object_get(p, "asDouble")) == w->d ||
                            json_number_value(json_object_get(p, "asDouble")) == w->d);
        }
        /* at the run's end, with no start */
        assert_string_equal(json_string_value(json_object_get(p, "timeUnixNano")),
                            "1795968862250000000");
        assert_null(json_object_get(p, "startTimeUnixNano"));
}

static void test_targets(void **state)
{
        static struct run_facts f;
        struct run_info ri = run_of(true, 0, 0);
        json_t *root;

        (void)state;
        targets_facts(NULL, &ri, &f);
        for (size_t i = 0; i < ARRAY_SIZE(target_cases); i++) {
                const struct target_case *c = &target_cases[i];
                struct target_fact *t = &f.t[f.n++];

                memset(t, 0, sizeof(*t));
                snprintf(t->name, sizeof(t->name), "%s", c->name);
                snprintf(t->builder, sizeof(t->builder), "%s", c->builder);
                t->duration_s = c->duration;
                t->steps_set = c->steps_set;
                t->steps = c->steps;
                t->cached = c->cached;
                t->success = c->success;
                t->sccache = (struct cc_counts){c->sc_set, c->sc_hits, c->sc_misses};
                t->ccache = (struct cc_counts){c->cc_set, c->cc_hits, c->cc_misses};
                targets_fact_ratios(t);
        }
        root = encode(&ri, &f, NULL, 0);
        for (size_t i = 0; i < ARRAY_SIZE(target_cases); i++) {
                const struct target_case *c = &target_cases[i];
                json_t *p = NULL;

                printf("case %s\n", c->name);
                for (size_t k = 0; k < ARRAY_SIZE(target_metrics); k++)
                        check_want(root, c->name, k, &c->w[k]);
                /* the builder attribute is the fact's, "" included */
                if (points(root, "build.target.steps", NULL, c->name, NULL, &p) == 1)
                        assert_string_equal(attr(p, "builder"), c->builder);
        }
        json_decref(root);
}

/* ---- the run's totals --------------------------------------------------- */

static const struct {
        bool finished;
        int exit_code, sig;
        const char *result; /* cicd.pipeline.result; NULL: absent */
        const char *code;   /* build.exit_code; NULL: absent */
        bool steps_set;
        uint32_t steps, cached;
} outcome_cases[] = {
    {true, 0, 0, "success", "0", true, 31, 17},
    {true, 3, 0, "failure", "3", true, 0, 0},
    {true, -1, 9, "cancellation", NULL, false, 0, 0},
    {true, 137, 9, "cancellation", "137", true, 5, 5},
    /* a watched process: its exit status is not buildtel's to see */
    {true, -1, 0, NULL, NULL, false, 0, 0},
    /* buildtel killed before the end: no outcome */
    {false, -1, 0, NULL, NULL, true, 2, 1},
};

static void test_outcomes(void **state)
{
        static struct run_facts f;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(outcome_cases); i++) {
                struct run_info ri = run_of(outcome_cases[i].finished, outcome_cases[i].exit_code,
                                            outcome_cases[i].sig);
                json_t *root, *p = NULL;
                char want[16];

                printf("case %zu\n", i);
                targets_facts(NULL, &ri, &f);
                f.steps_set = outcome_cases[i].steps_set;
                f.steps = outcome_cases[i].steps;
                f.cached = outcome_cases[i].cached;
                root = encode(&ri, &f, NULL, 0);
                assert_int_equal(points(root, "build.duration", "s", NULL, NULL, &p), 1);
                assert_true(json_real_value(json_object_get(p, "asDouble")) == 62.25);
                if (outcome_cases[i].result)
                        assert_string_equal(attr(p, "cicd.pipeline.result"),
                                            outcome_cases[i].result);
                else
                        assert_null(attr(p, "cicd.pipeline.result"));
                if (outcome_cases[i].code)
                        assert_string_equal(attr(p, "build.exit_code"), outcome_cases[i].code);
                else
                        assert_null(attr(p, "build.exit_code"));
                if (!outcome_cases[i].steps_set) {
                        assert_int_equal(points(root, "build.steps", NULL, NULL, NULL, &p), 0);
                        assert_int_equal(points(root, "build.steps.cached", NULL, NULL, NULL, &p),
                                         0);
                } else {
                        assert_int_equal(points(root, "build.steps", "{step}", NULL, NULL, &p), 1);
                        snprintf(want, sizeof(want), "%u", (unsigned)outcome_cases[i].steps);
                        assert_string_equal(json_string_value(json_object_get(p, "asInt")), want);
                        assert_int_equal(
                            points(root, "build.steps.cached", "{step}", NULL, NULL, &p), 1);
                        snprintf(want, sizeof(want), "%u", (unsigned)outcome_cases[i].cached);
                        assert_string_equal(json_string_value(json_object_get(p, "asInt")), want);
                }
                json_decref(root);
        }
}

/* ---- the usual: sent once enough earlier runs give one ---- */

static void test_usual(void **state)
{
        static struct run_facts f;
        static struct baseline b;
        struct baseline_run win[4], cur;
        struct run_info ri = run_of(true, 0, 0);
        json_t *root, *p = NULL;

        (void)state;
        targets_facts(NULL, &ri, &f);
        for (size_t i = 0; i < ARRAY_SIZE(win); i++) {
                baseline_run_init(&win[i]);
                win[i].fig.duration_s = 10 + (double)i;
        }
        baseline_run_init(&cur);
        cur.fig.duration_s = f.duration_s;
        for (size_t n = 1; n <= ARRAY_SIZE(win); n += ARRAY_SIZE(win) - 1) {
                baseline_derive("j", &cur, win, n, &b);
                encode_baseline = &b;
                root = encode(&ri, &f, NULL, 0);
                encode_baseline = NULL;
                if (n < BASELINE_MIN_RUNS) {
                        assert_int_equal(points(root, "build.duration.usual", NULL, NULL, NULL, &p),
                                         0);
                        json_decref(root);
                        continue;
                }
                assert_int_equal(points(root, "build.duration.usual", "s", NULL, NULL, &p), 1);
                assert_true(json_real_value(json_object_get(p, "asDouble")) == 11.5);
                assert_int_equal(points(root, "build.duration.ratio_to_usual", "1", NULL, NULL, &p),
                                 1);
                assert_true(fabs(json_real_value(json_object_get(p, "asDouble")) - 62.25 / 11.5) <
                            1e-9);
                json_decref(root);
        }
}

/* ---- samples: gauges per sample, sums from the last ------------------------ */

static size_t column(const char *name)
{
        for (size_t i = 0; i < sample_column_count(); i++) {
                enum sample_column_type t;

                if (strcmp(sample_column_name(i, &t), name) == 0)
                        return i;
        }
        fail_msg("no column %s", name);
        return 0;
}

static const struct {
        const char *metric, *column, *attr_key, *attr_val;
        double scale;
} sample_cases[] = {
    {"build.host.memory.usage", "mem_used_mb", NULL, NULL, MiB},
    {"build.host.cpu.utilization", "cpu_pct", NULL, NULL, 0.01},
    {"build.host.load.1m", "load1", NULL, NULL, 1},
    {"container.cpu.time", "cg_cpu_user_s", "cpu.mode", "user", 1},
    {"container.disk.io", "cg_io_write_mb", "disk.io.direction", "write", MiB},
};

static void test_samples(void **state)
{
        static struct run_facts f;
        struct run_info ri = run_of(true, 0, 0);
        struct sample s[3];
        json_t *root;

        (void)state;
        targets_facts(NULL, &ri, &f);
        for (size_t k = 0; k < 3; k++) {
                sample_clear(&s[k]);
                s[k].epoch = ri.start_epoch + 0.5 * (double)k;
                for (size_t i = 0; i < ARRAY_SIZE(sample_cases); i++)
                        assert_int_equal(
                            sample_column_set_number(&s[k], column(sample_cases[i].column),
                                                     100.25 * (double)(k + 1) + (double)i),
                            0);
        }
        root = encode(&ri, &f, s, 3);
        for (size_t i = 0; i < ARRAY_SIZE(sample_cases); i++) {
                json_t *m, *p;
                size_t mi, k, n = 0;

                printf("case %s\n", sample_cases[i].metric);
                json_array_foreach(metrics_of(root), mi, m)
                {
                        json_t *g = json_object_get(m, "gauge"), *sm = json_object_get(m, "sum");

                        if (strcmp(json_string_value(json_object_get(m, "name")),
                                   sample_cases[i].metric) != 0)
                                continue;
                        json_array_foreach(json_object_get(g ? g : sm, "dataPoints"), k, p)
                        {
                                const char *a = sample_cases[i].attr_key
                                                    ? attr(p, sample_cases[i].attr_key)
                                                    : NULL;
                                size_t row = g ? n : 2; /* a sum: the last sample */
                                double want = (100.25 * (double)(row + 1) + (double)i) *
                                              sample_cases[i].scale;

                                if (sample_cases[i].attr_key &&
                                    (!a || strcmp(a, sample_cases[i].attr_val) != 0))
                                        continue;
                                assert_true(json_real_value(json_object_get(p, "asDouble")) ==
                                            want);
                                if (sm)
                                        assert_string_equal(json_string_value(json_object_get(
                                                                p, "startTimeUnixNano")),
                                                            "1795968800000000000");
                                n++;
                        }
                }
                /* a gauge: one point per sample; a sum: one */
                assert_int_equal(n, sample_cases[i].attr_key ? 1 : 3);
        }
        json_decref(root);
}

/* More samples than fit: the oldest are dropped. */
static void test_pending_cap(void **state)
{
        struct otel_config cfg = {.enabled = true, .protocol = OTEL_PROTOCOL_JSON};
        struct run_info ri = run_of(true, 0, 0);
        struct otlp_metrics *m = NULL;
        struct dbuf out = DBUF_INIT;
        struct sample s;
        json_t *root, *mt, *first = NULL;
        size_t mi;

        (void)state;
        assert_int_equal(otlp_metrics_new(&cfg, &ri, &m), 0);
        sample_clear(&s);
        for (size_t i = 0; i < OTLP_MAX_PENDING + 3; i++) {
                s.epoch = ri.start_epoch + (double)i;
                assert_int_equal(sample_column_set_number(&s, column("load1"), 1), 0);
                otlp_metrics_add_sample(m, &s);
        }
        s.epoch = NAN; /* no time: not kept */
        otlp_metrics_add_sample(m, &s);
        assert_int_equal(otlp_metrics_pending(m), OTLP_MAX_PENDING);
        assert_int_equal(otlp_metrics_encode(m, NULL, true, &out), 0);
        root = json_loadb(out.p, out.len, 0, NULL);
        assert_non_null(root);
        json_array_foreach(metrics_of(root), mi, mt)
        {
                const char *name = json_string_value(json_object_get(mt, "name"));

                if (strcmp(name, "build.host.load.1m") == 0)
                        first = json_array_get(
                            json_object_get(json_object_get(mt, "gauge"), "dataPoints"), 0);
        }
        /* the first kept is the fourth: three dropped */
        assert_string_equal(json_string_value(json_object_get(first, "timeUnixNano")),
                            "1795968803000000000");
        json_decref(root);
        dbuf_release(&out);
        otlp_metrics_free(m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_targets),     cmocka_unit_test(test_outcomes),
            cmocka_unit_test(test_usual),       cmocka_unit_test(test_samples),
            cmocka_unit_test(test_pending_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
