/* SPDX-License-Identifier: MIT */
/* buildtel bench's model (model/bench): the cold/warm/hot rule, the
 * statistics of a series, the Mann-Whitney U test and the ratio. The
 * test's references: SciPy's documented example (U 17, p 0.1111 exact)
 * and a brute-force count over every rank arrangement, plus the normal
 * approximation with tie and continuity correction, both computed with
 * python3 when these cases were written. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "helpers/float.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "model/bench.h"
#include "render/bench.h"
#include "util/macro.h"

static void test_classify(void **state)
{
        (void)state;
        static const struct {
                const char *name;
                struct run_figures f;
                enum bench_class want;
        } cases[] = {
            {"nothing compiled, no layers (sleep)", {.exit_code = 0}, BENCH_HOT},
            {"every layer cached", {.steps_set = true, .steps = 12, .cached = 12}, BENCH_HOT},
            {"no steps known but steps_set", {.steps_set = true, .steps = 0}, BENCH_HOT},
            {"layers cached but a compile ran",
             {.steps_set = true, .steps = 5, .cached = 5, .compile_units = 3},
             BENCH_WARM},
            {"part of the layers cached",
             {.steps_set = true, .steps = 10, .cached = 4},
             BENCH_WARM},
            {"no layer cached", {.steps_set = true, .steps = 10, .cached = 0}, BENCH_COLD},
            {"compiler-cache hits",
             {.cc_hits = 40, .cc_misses = 2, .compile_units = 42},
             BENCH_WARM},
            {"compiler-cache misses only", {.cc_misses = 42, .compile_units = 42}, BENCH_COLD},
            {"cc activity, no units seen", {.cc_hits = 1}, BENCH_WARM},
            {"compile units, no cache", {.compile_units = 120}, BENCH_COLD},
            {"layers unknown, compile units", {.steps_set = false, .compile_units = 1}, BENCH_COLD},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                enum bench_class got = bench_classify(&cases[i].f);

                if (got != cases[i].want)
                        fail_msg("%s: %s, want %s", cases[i].name, bench_class_name(got),
                                 bench_class_name(cases[i].want));
        }
        assert_string_equal(bench_class_name(BENCH_HOT), "hot");
        assert_string_equal(bench_class_name(BENCH_COLD), "cold");
        assert_string_equal(bench_class_name(BENCH_WARM), "warm");
}

static void test_stats(void **state)
{
        (void)state;
        static const struct {
                double x[8];
                size_t n;
                double mean, stddev, median, min, max;
        } cases[] = {
            {{2, 4, 4, 4, 5, 5, 7, 9}, 8, 5.0, 2.138089935299395, 4.5, 2, 9},
            {{3, 1, 2}, 3, 2.0, 1.0, 2.0, 1, 3},
            {{0.2}, 1, 0.2, NAN, 0.2, 0.2, 0.2},
            {{0.5, 0.1}, 2, 0.3, 0.28284271247461906, 0.3, 0.1, 0.5},
        };
        struct bench_stats s;

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                double before[8];

                memcpy(before, cases[i].x, sizeof(before));
                bench_stats_of(cases[i].x, cases[i].n, &s);
                assert_int_equal(s.n, cases[i].n);
                assert_float_equal(s.mean, cases[i].mean, 1e-12);
                if (isnan(cases[i].stddev))
                        assert_true(isnan(s.stddev));
                else
                        assert_float_equal(s.stddev, cases[i].stddev, 1e-12);
                assert_float_equal(s.median, cases[i].median, 1e-12);
                assert_float_equal(s.min, cases[i].min, 0);
                assert_float_equal(s.max, cases[i].max, 0);
                assert_memory_equal(before, cases[i].x, sizeof(before)); /* not reordered */
        }
        bench_stats_of(NULL, 0, &s);
        assert_int_equal(s.n, 0);
        assert_true(isnan(s.mean) && isnan(s.median) && isnan(s.min));
}

static void test_mann_whitney(void **state)
{
        (void)state;
        static const struct {
                double a[9], b[9];
                size_t na, nb;
                double u, p;
                bool exact;
        } cases[] = {
            /* SciPy's mannwhitneyu documentation example */
            {{19, 22, 16, 29, 24}, {20, 11, 17, 12}, 5, 4, 17, 0.1111111111111111, true},
            {{20, 11, 17, 12}, {19, 22, 16, 29, 24}, 4, 5, 3, 0.1111111111111111, true},
            {{1, 2, 3}, {4, 5, 6}, 3, 3, 0, 0.1, true},
            {{0.1, 0.11, 0.12, 0.105, 0.115},
             {0.4, 0.41, 0.42, 0.405, 0.415},
             5,
             5,
             0,
             0.007936507936507936,
             true},
            /* larger than the exact table: the normal approximation */
            {{1, 2, 3, 4, 5, 6, 7, 8, 9},
             {5, 6, 7, 8, 9, 10, 11, 12, 13},
             9,
             9,
             12.5,
             0.014908315051868211,
             false},
            /* ties: the approximation, tie-corrected */
            {{1, 2, 2, 3}, {2, 3, 3, 4}, 4, 4, 3, 0.17203370892182296, false},
            /* all equal: no evidence at all */
            {{5, 5, 5}, {5, 5, 5}, 3, 3, 4.5, 1.0, false},
        };
        struct bench_mwu r;

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                assert_int_equal(
                    bench_mann_whitney(cases[i].a, cases[i].na, cases[i].b, cases[i].nb, &r), 0);
                assert_float_equal(r.u, cases[i].u, 1e-12);
                assert_float_equal(r.p, cases[i].p, 1e-9);
                assert_int_equal(r.exact, cases[i].exact);
        }
        assert_int_equal(bench_mann_whitney(cases[0].a, 0, cases[0].b, 4, &r), -EINVAL);
}

static void test_ratio(void **state)
{
        (void)state;
        struct bench_stats a = {.n = 5, .mean = 0.1, .stddev = 0.01, .median = 0.1};
        struct bench_stats b = {.n = 5, .mean = 0.4, .stddev = 0.02, .median = 0.38};
        struct bench_ratio r;

        bench_ratio_of(&a, &b, &r);
        assert_float_equal(r.mean, 4.0, 1e-12);
        /* 4 * sqrt(0.1^2 + 0.05^2) */
        assert_float_equal(r.mean_err, 0.4472135954999579, 1e-12);
        assert_float_equal(r.median, 3.8, 1e-12);
        a.mean = 0;
        a.median = NAN;
        bench_ratio_of(&a, &b, &r);
        assert_true(isnan(r.mean) && isnan(r.mean_err) && isnan(r.median));
}

/* Two series through the model and every renderer: a cold then two warm
 * runs of a compile, and three hot ones of a cached image build. */
static void test_series_render(void **state)
{
        (void)state;
        static const struct run_figures fa[] = {
            {.duration_s = 30,
             .user_s = 50,
             .sys_s = 5,
             .mem_peak_mb = 900,
             .mem_anon_peak_mb = 700,
             .cc_misses = 100,
             .compile_units = 100},
            {.duration_s = 10,
             .user_s = 12,
             .sys_s = 2,
             .mem_peak_mb = 500,
             .mem_anon_peak_mb = 300,
             .cc_hits = 95,
             .cc_misses = 5,
             .compile_units = 100},
            {.duration_s = 12,
             .user_s = 13,
             .sys_s = 2,
             .mem_peak_mb = 520,
             .mem_anon_peak_mb = 310,
             .cc_hits = 100,
             .compile_units = 100},
        };
        static const struct run_figures fb[] = {
            {.duration_s = 1.0,
             .user_s = NAN,
             .sys_s = NAN,
             .mem_peak_mb = NAN,
             .mem_sampled_peak_mb = NAN,
             .mem_anon_peak_mb = NAN,
             .steps_set = true,
             .steps = 8,
             .cached = 8},
            {.duration_s = 1.2,
             .user_s = NAN,
             .sys_s = NAN,
             .mem_peak_mb = NAN,
             .mem_sampled_peak_mb = NAN,
             .mem_anon_peak_mb = NAN,
             .steps_set = true,
             .steps = 8,
             .cached = 8},
            {.duration_s = 1.1,
             .user_s = NAN,
             .sys_s = NAN,
             .mem_peak_mb = NAN,
             .mem_sampled_peak_mb = NAN,
             .mem_anon_peak_mb = NAN,
             .steps_set = true,
             .steps = 8,
             .cached = 8},
        };
        static const char ids[3][BENCH_RUN_ID_MAX] = {"r1", "r2", "r3"};
        struct bench_series s[2] = {{"make -j8 | tee log", 3, fa, ids, NULL, NULL},
                                    {"docker build .", 3, fb, ids, NULL, NULL}};
        struct bench_result r[2];
        struct bench_cmp cmp[1];
        struct bench_view v = {.s = s, .r = r, .n = 2, .cmp = cmp};
        struct dbuf b = DBUF_INIT;
        json_t *j, *res, *c;
        json_error_t err;

        assert_int_equal(bench_result_of(&s[0], &r[0]), 0);
        assert_int_equal(bench_result_of(&s[1], &r[1]), 0);
        assert_int_equal(r[0].by_class[BENCH_COLD].n, 1);
        assert_float_equal(r[0].by_class[BENCH_COLD].mean, 30, 1e-12);
        assert_int_equal(r[0].by_class[BENCH_WARM].n, 2);
        assert_float_equal(r[0].by_class[BENCH_WARM].mean, 11, 1e-12);
        assert_int_equal(r[1].by_class[BENCH_HOT].n, 3);
        assert_float_equal(r[0].mem_peak.max, 900, 0);
        assert_int_equal(r[1].mem_peak.n, 0); /* unknown is not zero */
        assert_int_equal(bench_compare(s, r, 2, cmp, &v.ref), 1);
        v.nc = 1;
        assert_int_equal(v.ref, 1); /* the faster by mean */
        assert_int_equal(cmp[0].other, 0);
        assert_float_equal(cmp[0].ratio.mean, (52.0 / 3) / 1.1, 1e-9);
        assert_float_equal(cmp[0].mwu.u, 9, 0); /* every make run slower */
        assert_float_equal(cmp[0].mwu.p, 0.1, 1e-12);

        assert_int_equal(render_bench_json(&v, &b), 0);
        j = json_loadb(b.p, b.len, 0, &err);
        assert_non_null(j);
        res = json_object_get(j, "results");
        assert_int_equal(json_array_size(res), 2);
        assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "command")),
                            "make -j8 | tee log");
        assert_float_equal(json_real_value(json_object_get(json_array_get(res, 0), "median")), 12,
                           1e-12);
        assert_true(json_is_null(json_object_get(json_array_get(res, 1), "user")));
        assert_string_equal(json_string_value(json_array_get(
                                json_object_get(json_array_get(res, 0), "classes"), 0)),
                            "cold");
        c = json_array_get(json_object_get(j, "comparison"), 0);
        assert_string_equal(json_string_value(json_object_get(c, "reference")), "docker build .");
        assert_float_equal(json_real_value(json_object_get(c, "p_value")), 0.1, 1e-12);
        json_decref(j);

        dbuf_reset(&b);
        assert_int_equal(render_bench_markdown(&v, &b), 0);
        assert_int_equal(dbuf_puts(&b, ""), 0);
        assert_non_null(strstr(b.p, "| Command | Mean [s] | Min [s] | Max [s] | Relative |"));
        assert_non_null(
            strstr(b.p, "| `make -j8 \\| tee log` | 17.3 ± 11.0 | 10.0 | 30.0 | 15.76 ± "));
        assert_non_null(strstr(b.p, "| `docker build .` | 1.1 ± 0.1 | 1.0 | 1.2 | 1.00 | 3 hot |"));
        assert_non_null(strstr(b.p, "| 1 cold, 2 warm |"));

        dbuf_reset(&b);
        assert_int_equal(render_bench_series(&v, 0, &b), 0);
        assert_int_equal(render_bench_summary(&v, &b), 0);
        assert_int_equal(dbuf_puts(&b, ""), 0);
        assert_non_null(strstr(b.p, "Benchmark 1: make -j8 | tee log\n"));
        assert_non_null(strstr(b.p, "Range (min … max):"));
        assert_non_null(strstr(b.p, "  docker build . ran\n    15.76 ± "));
        assert_non_null(strstr(b.p, "'make -j8 | tee log' is 15.76x"));
        assert_non_null(strstr(b.p, "Mann-Whitney U = 9, p = 0.1 (exact)"));
        dbuf_release(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_classify),      cmocka_unit_test(test_stats),
            cmocka_unit_test(test_mann_whitney),  cmocka_unit_test(test_ratio),
            cmocka_unit_test(test_series_render),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
