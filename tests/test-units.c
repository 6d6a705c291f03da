/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/units.h"
#include "util/macro.h"

/* ---- observations ---- */

static const struct {
        int kind;
        const char *tool, *name;
        double t, mb, cpu;
} seen[] = {
    {UNITS_COMPILE, "gcc", "src/heavy.c", 1.0, 3.0, 0.0},
    {UNITS_COMPILE, "cc1", "src/heavy.c", 1.2, 250.0, 0.5},
    {UNITS_COMPILE, "cc1", "s5.c", 1.2, 20.0, 0.1},
    {UNITS_LINK, "ld", "app.so", 5.0, 40.0, 0.2},
    {UNITS_COMPILE, "gcc", "src/heavy.c", 4.0, 12.0, 4.1}, /* dying: its peak stays */
    {UNITS_LINK, "lto1-ltrans", "app.so", 5.5, 90.0, 1.0},
    {UNITS_COMPILE, "cc1", "app.so", 6.0, 1.0, NAN}, /* another kind: another unit */
};

static const struct {
        int kind;
        const char *tool, *name;
        double first, last, peak, peak_s, cpu;
} want_top[] = {
    {UNITS_COMPILE, "cc1", "src/heavy.c", 1.0, 4.0, 250.0, 1.2, 4.1},
    {UNITS_LINK, "lto1-ltrans", "app.so", 5.0, 5.5, 90.0, 5.5, 1.0},
    {UNITS_COMPILE, "cc1", "s5.c", 1.2, 1.2, 20.0, 1.2, 0.1},
    {UNITS_COMPILE, "cc1", "app.so", 6.0, 6.0, 1.0, 6.0, NAN},
};

static bool same(double a, double b)
{
        return (isnan(a) && isnan(b)) || a == b;
}

static void test_observe(void **state)
{
        struct units *u = NULL;
        struct unit top[8];
        size_t n;

        (void)state;
        assert_int_equal(units_new(&u), 0);
        for (size_t i = 0; i < ARRAY_SIZE(seen); i++)
                assert_int_equal(units_observe(u, seen[i].kind, seen[i].tool, seen[i].name,
                                               seen[i].t, seen[i].mb, seen[i].cpu),
                                 0);
        units_in_flight(u, 2);
        units_in_flight(u, 1);
        assert_int_equal(units_count(u), 4);
        assert_int_equal(units_peak_in_flight(u), 2);
        n = units_top(u, top, ARRAY_SIZE(top));
        assert_int_equal(n, ARRAY_SIZE(want_top));
        for (size_t i = 0; i < n; i++) {
                print_message("unit %zu\n", i);
                assert_int_equal(top[i].kind, want_top[i].kind);
                assert_string_equal(top[i].tool, want_top[i].tool);
                assert_string_equal(top[i].name, want_top[i].name);
                assert_true(same(top[i].first_s, want_top[i].first));
                assert_true(same(top[i].last_s, want_top[i].last));
                assert_true(same(top[i].peak_mb, want_top[i].peak));
                assert_true(same(top[i].peak_s, want_top[i].peak_s));
                assert_true(same(top[i].cpu_s, want_top[i].cpu));
        }
        /* a shorter list keeps the largest */
        assert_int_equal(units_top(u, top, 2), 2);
        assert_string_equal(top[1].tool, "lto1-ltrans");
        units_free(u);
        units_free(NULL);
}

static void test_bad_input(void **state)
{
        struct units *u = NULL;
        char longname[300], longtool[100];
        struct unit top[1];

        (void)state;
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(units_observe(u, UNITS_COMPILE, "cc1", "", 0, 1, 1), -EINVAL);
        assert_int_equal(units_observe(u, UNITS_COMPILE, "cc1", NULL, 0, 1, 1), -EINVAL);
        assert_int_equal(units_observe(u, 7, "cc1", "a.c", 0, 1, 1), -EINVAL);
        /* names and tools are cut, never on half a UTF-8 character */
        memset(longname, 'a', sizeof(longname));
        memcpy(longname + UNITS_NAME_MAX - 1, "\xc3\xa9", 2);
        longname[sizeof(longname) - 1] = '\0';
        memset(longtool, 't', sizeof(longtool));
        longtool[sizeof(longtool) - 1] = '\0';
        assert_int_equal(units_observe(u, UNITS_COMPILE, longtool, longname, 0, INFINITY, NAN), 0);
        assert_int_equal(units_top(u, top, 1), 1);
        assert_int_equal(strlen(top[0].name), UNITS_NAME_MAX - 1);
        assert_int_equal(strlen(top[0].tool), UNITS_TOOL_MAX);
        assert_true(isnan(top[0].peak_mb)); /* an infinite RSS is no figure */
        /* the same cut name is the same unit */
        assert_int_equal(units_observe(u, UNITS_COMPILE, "x", longname, 1, 5, 1), 0);
        assert_int_equal(units_count(u), 1);
        units_free(u);
}

static void test_cap(void **state)
{
        struct units *u = NULL;
        char name[32];

        (void)state;
        assert_int_equal(units_new(&u), 0);
        for (int i = 0; i < UNITS_MAX + 5; i++) {
                int r;

                snprintf(name, sizeof(name), "f%d.c", i);
                r = units_observe(u, UNITS_COMPILE, "cc1", name, i, i % 100, 0);
                assert_int_equal(r, i < UNITS_MAX ? 0 : -ENOSPC);
        }
        assert_int_equal(units_count(u), UNITS_MAX);
        assert_int_equal(units_dropped(u), 5);
        /* a known unit is still updated */
        assert_int_equal(units_observe(u, UNITS_COMPILE, "cc1", "f0.c", 1e6, 1e5, 0), 0);
        units_free(u);
}

/* ---- the -j reading ---- */

static const struct {
        const char *name;
        size_t units; /* peaks 100, 200, ... MiB */
        double total_mb;
        int ret;
        double p95;
        long jobs;
        const char *text;
} jobs_cases[] = {
    {"too few units", 19, 24576, -ENODATA, 0, 0, NULL},
    {"no memory figure", 40, NAN, -ENODATA, 0, 0, NULL},
    {"20 units", 20, 24576, 0, 1900, 12,
     "the 95th-percentile unit needs 1.9 GiB; 24.0 GiB fits -j 12 of them; this run peaked at 3 "
     "in flight"},
    {"100 units", 100, 8192, 0, 9500, 0,
     "the 95th-percentile unit needs 9.3 GiB; 8.0 GiB fits -j 0 of them; this run peaked at 3 "
     "in flight"},
};

static void test_jobs(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(jobs_cases); i++) {
                struct units *u = NULL;
                struct units_jobs j;
                struct dbuf b = DBUF_INIT;
                char name[32];

                print_message("%s\n", jobs_cases[i].name);
                assert_int_equal(units_new(&u), 0);
                for (size_t k = 0; k < jobs_cases[i].units; k++) {
                        snprintf(name, sizeof(name), "u%zu.c", k);
                        assert_int_equal(units_observe(u, UNITS_COMPILE, "cc1", name, (double)k,
                                                       100.0 * (double)(k + 1), 1),
                                         0);
                }
                units_in_flight(u, 3);
                assert_int_equal(units_jobs(u, jobs_cases[i].total_mb, &j), jobs_cases[i].ret);
                if (jobs_cases[i].ret == 0) {
                        assert_true(j.p95_mb == jobs_cases[i].p95);
                        assert_int_equal(j.jobs, jobs_cases[i].jobs);
                        assert_int_equal(units_jobs_render(&j, &b), 0);
                        assert_string_equal(b.p, jobs_cases[i].text);
                }
                dbuf_release(&b);
                units_free(u);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_observe),
            cmocka_unit_test(test_bad_input),
            cmocka_unit_test(test_cap),
            cmocka_unit_test(test_jobs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
