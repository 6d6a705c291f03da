/* SPDX-License-Identifier: MIT */
/* The job's unit ledger and the plan from it (issue 37): model/ledger.c,
 * model/plan.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "helpers/float.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ledger.h"
#include "model/plan.h"
#include "model/units.h"

static struct unit row(int kind, const char *name, const char *path, double peak, double cpu,
                       double first, double last, char cache)
{
        struct unit u = {.kind = kind,
                         .peak_mb = peak,
                         .cpu_s = cpu,
                         .first_s = first,
                         .last_s = last,
                         .cache = cache};

        strcpy(u.name, name);
        strcpy(u.path, path);
        return u;
}

/* Three runs: a unit's usual is the median of its runs; a cache hit and a
 * second row of one key in one run do not count. */
static void test_medians(void **state)
{
        struct ledger *l;
        const struct ledger_unit *u;
        struct unit r1[] = {
            row(UNITS_COMPILE, "a.cpp", "/p/a.cpp", 100, 1, 0, 2, UNITS_CACHE_MISS),
            row(UNITS_COMPILE, "b.cpp", "/p/b.cpp", 50, 1, 0, 1, 0),
            row(UNITS_LINK, "app", "", 400, 3, 5, 9, UNITS_CACHE_NONE),
        };
        struct unit r2[] = {
            row(UNITS_COMPILE, "a.cpp", "/p/a.cpp", 300, 3, 0, 4, UNITS_CACHE_MISS),
            row(UNITS_COMPILE, "a.cpp", "/p/a.cpp", 900, 9, 0, 9, UNITS_CACHE_MISS),
            row(UNITS_COMPILE, "b.cpp", "/p/b.cpp", 5, 0.01, 0, 0.1, UNITS_CACHE_HIT),
        };
        struct unit r3[] = {
            row(UNITS_COMPILE, "a.cpp", "/p/a.cpp", 200, 2, 1, 4, 0),
            row(UNITS_COMPILE, "a.cpp", "/q/a.cpp", 10, 2, 1, 4, 0),
            row(UNITS_COMPILE, "a.cpp", "/q/a.cpp", 20, 2, 1, 4, 0),
        };

        (void)state;
        assert_int_equal(ledger_new(&l), 0);
        assert_int_equal(ledger_add_run(l, r1, 3), 0);
        assert_int_equal(ledger_add_run(l, r2, 3), 0);
        assert_int_equal(ledger_add_run(l, r3, 3), 0);
        assert_int_equal(ledger_count(l), 4);

        u = ledger_find(l, UNITS_COMPILE, "a.cpp", "/p/a.cpp");
        assert_non_null(u);
        assert_int_equal(u->runs, 3);
        assert_float_equal(u->peak_mb, 200, 1e-9); /* 100, 300, 200; not the 900 */
        assert_float_equal(u->cpu_s, 2, 1e-9);
        assert_float_equal(u->wall_s, 3, 1e-9); /* 2, 4, 3 */
        u = ledger_find(l, UNITS_COMPILE, "b.cpp", "/p/b.cpp");
        assert_non_null(u);
        assert_int_equal(u->runs, 1); /* the hit is no measure */
        assert_float_equal(u->peak_mb, 50, 1e-9);
        assert_null(ledger_find(l, UNITS_LINK, "a.cpp", "/p/a.cpp"));
        assert_null(ledger_find(l, UNITS_COMPILE, "c.cpp", NULL));
        /* a path's every name: a tagged row is the same source */
        {
                struct unit r4 = row(UNITS_COMPILE, "b.cpp [c++20]", "/p/b.cpp", 70, 1, 0, 1, 0);
                struct ledger *l2;

                assert_int_equal(ledger_new(&l2), 0);
                assert_int_equal(ledger_add_run(l2, &r4, 1), 0);
                assert_float_equal(ledger_find(l2, UNITS_COMPILE, "b.cpp", "/p/b.cpp")->peak_mb, 70,
                                   1e-9);
                assert_float_equal(ledger_find(l2, UNITS_COMPILE, "b.cpp", "")->peak_mb, 70, 1e-9);
                assert_null(ledger_find(l2, UNITS_COMPILE, "b.cp", ""));
                ledger_free(l2);
        }
        /* by name alone: the heaviest of that name */
        u = ledger_find(l, UNITS_COMPILE, "a.cpp", "");
        assert_non_null(u);
        assert_string_equal(u->path, "/p/a.cpp");
        u = ledger_find(l, UNITS_LINK, "app", NULL);
        assert_non_null(u);
        assert_float_equal(u->peak_mb, 400, 1e-9);

        /* the heaviest first, ties by key */
        assert_string_equal(ledger_at(l, 0)->name, "app");
        assert_string_equal(ledger_at(l, 1)->path, "/p/a.cpp");
        assert_string_equal(ledger_at(l, 2)->name, "b.cpp");
        assert_string_equal(ledger_at(l, 3)->path, "/q/a.cpp");
        assert_int_equal(ledger_at(l, 3)->runs, 1); /* new in run 3, its second row not counted */
        assert_float_equal(ledger_at(l, 3)->peak_mb, 10, 1e-9);
        assert_null(ledger_at(l, 4));
        ledger_free(l);
}

/* An even count: the mean of the middle two; past LEDGER_RUNS runs,
 * nothing more counts; no rows at all is an empty ledger. */
static void test_even_and_cap(void **state)
{
        struct ledger *l;
        const struct ledger_unit *u;

        (void)state;
        assert_int_equal(ledger_new(&l), 0);
        for (int i = 0; i < LEDGER_RUNS + 5; i++) {
                struct unit r =
                    row(UNITS_COMPILE, "x.c", "/x.c", i < 2 ? 100 + 100 * i : 1000, NAN, 0, 1, 0);

                assert_int_equal(ledger_add_run(l, &r, i < 2 || i >= LEDGER_RUNS ? 1 : 0), 0);
        }
        u = ledger_find(l, UNITS_COMPILE, "x.c", "/x.c");
        assert_non_null(u);
        assert_int_equal(u->runs, 2);
        assert_float_equal(u->peak_mb, 150, 1e-9);
        assert_true(isnan(u->cpu_s));
        ledger_free(l);

        assert_int_equal(ledger_new(&l), 0);
        assert_int_equal(ledger_count(l), 0);
        assert_null(ledger_at(l, 0));
        assert_null(ledger_find(l, UNITS_COMPILE, "x.c", "/x.c"));
        ledger_free(l);
        ledger_free(NULL);
}

/* Two heavy units beside four light ones, one after the other in a run. */
static struct ledger *mixed(void)
{
        struct ledger *l;
        struct unit r[6];

        for (int i = 0; i < 6; i++) {
                char name[16];

                snprintf(name, sizeof(name), "u%d.cpp", i);
                r[i] = row(UNITS_COMPILE, name, "", i < 2 ? 60 : 25, 1, i, i + 1, 0);
        }
        assert_int_equal(ledger_new(&l), 0);
        assert_int_equal(ledger_add_run(l, r, 6), 0);
        return l;
}

static void test_plan(void **state)
{
        struct ledger *l = mixed();
        struct plan p;

        (void)state;
        assert_float_equal(plan_headroom_mb(512), 64, 1e-9);
        assert_float_equal(plan_headroom_mb(16384), 1024, 1e-9);
        /* 140 MiB free of 4 CPUs: 60+60 fits, 60+60+25 does not; each heavy above
         * its share (35); a pool of one keeps 60 + 3 * 25 = 135 */
        assert_int_equal(plan_make(l, 150, 4, 10, &p), 0);
        assert_int_equal(p.units, 6);
        assert_int_equal(p.j_fit, 2);
        assert_int_equal(p.nsteps, 4);
        assert_float_equal(p.steps[3].worst_mb, 170, 1e-9);
        assert_false(p.steps[2].fits);
        assert_int_equal(p.nheavy, 2);
        assert_float_equal(p.light_mb, 25, 1e-9);
        assert_int_equal(p.pool_depth, 1);
        assert_int_equal(p.j_pooled, 4);
        /* one at a time, in their usual order: 6 s, never two at once */
        assert_float_equal(p.steps[0].wall_s, 6, 1e-9);
        assert_float_equal(p.steps[0].sched_mb, 60, 1e-9);
        /* two slots: the two heavy first, together */
        assert_float_equal(p.steps[1].sched_mb, 120, 1e-9);
        assert_float_equal(p.steps[1].wall_s, 3, 1e-9);
        /* room for all: no heavy unit, no pool */
        assert_int_equal(plan_make(l, 4096, 4, 256, &p), 0);
        assert_int_equal(p.j_fit, 4);
        assert_int_equal(p.nheavy, 0);
        assert_int_equal(p.pool_depth, 0);
        /* every unit heavy (above 96 / 4): the pool is the -j that fits */
        assert_int_equal(plan_make(l, 106, 4, 10, &p), 0);
        assert_int_equal(p.nheavy, 6);
        assert_int_equal(p.j_fit, 1);
        assert_int_equal(p.pool_depth, 1);
        assert_int_equal(p.j_pooled, 1);
        /* not one fits */
        assert_int_equal(plan_make(l, 50, 2, 0, &p), 0);
        assert_int_equal(p.j_fit, 0);
        ledger_free(l);
        /* an empty ledger has no plan */
        assert_int_equal(ledger_new(&l), 0);
        assert_int_equal(plan_make(l, 1024, 2, 64, &p), -ENODATA);
        ledger_free(l);
}

static void test_cmake_target(void **state)
{
        static const struct {
                const char *dir, *want;
        } cases[] = {
            {"CMakeFiles/heavylib.dir", "heavylib"},
            {"CMakeFiles/app.dir/src/sub", "app"},
            {"build/CMakeFiles/x_y-z.dir/a", "x_y-z"},
            {"CMakeFiles/.dir", NULL},
            {"NotCMakeFiles/a.dir", NULL},
            {"CMakeFiles/plain", NULL},
            {"", NULL},
        };
        char buf[64];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool ok = plan_cmake_target(cases[i].dir, buf, sizeof(buf));

                assert_int_equal(ok, cases[i].want != NULL);
                if (ok)
                        assert_string_equal(buf, cases[i].want);
        }
        assert_false(plan_cmake_target("CMakeFiles/longname.dir", buf, 4));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_medians),
            cmocka_unit_test(test_even_and_cap),
            cmocka_unit_test(test_plan),
            cmocka_unit_test(test_cmake_target),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
