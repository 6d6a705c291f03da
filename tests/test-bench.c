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

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/bench.h"
#include "util/macro.h"

static void test_classify(void **state)
{
        (void)state;
        static const struct {
                const char *name;
                struct bench_facts f;
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_classify),
            cmocka_unit_test(test_stats),
            cmocka_unit_test(test_mann_whitney),
            cmocka_unit_test(test_ratio),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
