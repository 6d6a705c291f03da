/* SPDX-License-Identifier: MIT */
/* The job's unit ledger (issue 37): model/ledger.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model/ledger.h"
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
        assert_int_equal(ledger_runs(l), 3);
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
        assert_int_equal(ledger_runs(l), LEDGER_RUNS);
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_medians),
            cmocka_unit_test(test_even_and_cap),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
