/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "helpers/float.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/units.h"
#include "util/macro.h"
#include "runfiles/unitscsv.h"

/* One unit seen with key 0 and no std or dir. */
static int observe(struct units *u, int kind, const char *tool, const char *name, double t,
                   double mb, double cpu)
{
        struct units_seen s = {
            .kind = kind, .tool = tool, .name = name, .elapsed_s = t, .rss_mb = mb, .cpu_s = cpu};

        return units_see(u, &s);
}

static int ended(struct units *u, int kind, const char *name, uint64_t key, double cpu)
{
        struct units_seen s = {.kind = kind, .name = name, .key = key, .cpu_s = cpu};

        return units_ended_seen(u, &s);
}

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
                assert_int_equal(observe(u, seen[i].kind, seen[i].tool, seen[i].name, seen[i].t,
                                         seen[i].mb, seen[i].cpu),
                                 0);
        assert_int_equal(units_count(u), 4);
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

/* ---- one source built several ways: several units, tagged ---- */

static const struct {
        const char *name, *std, *dir;
        uint64_t key;
        double mb;
        const char *want; /* its name once all are seen */
} variants[][3] = {
    /* told apart by -std= */
    {{"x.cpp", "gnu++11", "", 1, 180, "x.cpp [gnu++11]"},
     {"x.cpp", "gnu++17", "", 2, 190, "x.cpp [gnu++17]"},
     {"y.cpp", "gnu++17", "", 3, 50, "y.cpp"}},
    /* the same -std=: by the part of the directory that differs */
    {{"u.cpp", "c++17", "t/CMakeFiles/test-u_cpp17.dir/src", 1, 10, "u.cpp [test-u_cpp17]"},
     {"u.cpp", "c++17", "t/CMakeFiles/test-u_all.dir/src", 2, 20, "u.cpp [test-u_all]"},
     {"u.cpp", "c++17", "t/CMakeFiles/test-u_cpp17.dir/src", 1, 30, "u.cpp [test-u_cpp17]"}},
    /* nothing tells them apart: in order of first sight */
    {{"z.c", "", "", 7, 1, "z.c [#1]"},
     {"z.c", "", "", 9, 2, "z.c [#2]"},
     {"z.c", "", "", 0, 3, "z.c [#3]"}},
};

static void test_variants(void **state)
{
        (void)state;
        for (size_t c = 0; c < ARRAY_SIZE(variants); c++) {
                struct units *u = NULL;
                const struct unit *rows;
                size_t n, distinct = 0;

                print_message("case %zu\n", c);
                assert_int_equal(units_new(&u), 0);
                for (size_t i = 0; i < 3; i++) {
                        struct units_seen s = {.kind = UNITS_COMPILE,
                                               .tool = "cc1plus",
                                               .name = variants[c][i].name,
                                               .std = variants[c][i].std,
                                               .dir = variants[c][i].dir,
                                               .key = variants[c][i].key,
                                               .elapsed_s = (double)i,
                                               .rss_mb = variants[c][i].mb,
                                               .cpu_s = 1.0};

                        assert_int_equal(units_see(u, &s), 0);
                        distinct += i == 0 || variants[c][i].key != variants[c][0].key;
                }
                rows = units_rows(u, &n);
                assert_int_equal(n, distinct);
                for (size_t i = 0; i < 3; i++) {
                        const struct unit *r = NULL;

                        for (size_t k = 0; k < n; k++)
                                if (rows[k].key == variants[c][i].key &&
                                    strcmp(rows[k].base, variants[c][i].name) == 0)
                                        r = &rows[k];
                        assert_non_null(r);
                        assert_string_equal(r->name, variants[c][i].want);
                }
                /* each its own peak, not their sum */
                assert_true(rows[0].peak_mb == (c == 1 ? 30 : variants[c][0].mb));
                /* an ended process counts toward its own unit only */
                assert_int_equal(
                    ended(u, UNITS_COMPILE, variants[c][1].name, variants[c][1].key, 2.0), 0);
                rows = units_rows(u, &n);
                assert_true(rows[1].cpu_s == 2.0 && rows[0].cpu_s == 1.0);
                units_free(u);
        }
}

static void test_bad_input(void **state)
{
        struct units *u = NULL;
        char longname[300], longtool[100];
        struct unit top[1];

        (void)state;
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(observe(u, UNITS_COMPILE, "cc1", "", 0, 1, 1), -EINVAL);
        assert_int_equal(observe(u, UNITS_COMPILE, "cc1", NULL, 0, 1, 1), -EINVAL);
        assert_int_equal(observe(u, 7, "cc1", "a.c", 0, 1, 1), -EINVAL);
        /* names and tools are cut, never on half a UTF-8 character */
        memset(longname, 'a', sizeof(longname));
        memcpy(longname + UNITS_NAME_MAX - 1, "\xc3\xa9", 2);
        longname[sizeof(longname) - 1] = '\0';
        memset(longtool, 't', sizeof(longtool));
        longtool[sizeof(longtool) - 1] = '\0';
        assert_int_equal(observe(u, UNITS_COMPILE, longtool, longname, 0, INFINITY, NAN), 0);
        assert_int_equal(units_top(u, top, 1), 1);
        assert_int_equal(strlen(top[0].name), UNITS_NAME_MAX - 1);
        assert_int_equal(strlen(top[0].tool), UNITS_TOOL_MAX);
        assert_true(isnan(top[0].peak_mb)); /* an infinite RSS is no figure */
        /* the same cut name is the same unit */
        assert_int_equal(observe(u, UNITS_COMPILE, "x", longname, 1, 5, 1), 0);
        assert_int_equal(units_count(u), 1);
        units_free(u);
}

/* A unit's processes come and go: what ended counts with what runs. */
static const struct {
        char op; /* 'o' observe (live CPU), 'e' ended */
        int kind;
        const char *name;
        double cpu, want; /* want: the unit's cpu_s after; for 'e', NAN = the return */
        int ret;
} cpu_steps[] = {
    {'o', UNITS_COMPILE, "x.c", 0.5, 0.5, 0}, /* x.c's static object */
    {'o', UNITS_COMPILE, "x.c", 1.9, 1.9, 0},
    {'e', UNITS_COMPILE, "x.c", 1.9, 1.9, 0},    /* it ended */
    {'o', UNITS_COMPILE, "x.c", 0.3, 2.2, 0},    /* the shared one */
    {'e', UNITS_COMPILE, "x.c", 2.0, 3.9, 0},    /* ended too */
    {'o', UNITS_LINK, "x.c", 1.0, 1.0, 0},       /* another kind: its own */
    {'e', UNITS_LINK, "app", 1.0, NAN, -ENOENT}, /* never observed */
    {'e', UNITS_COMPILE, "x.c", -1.0, NAN, -EINVAL},
    {'e', UNITS_COMPILE, "x.c", NAN, NAN, -EINVAL},
    {'e', UNITS_COMPILE, "", 1.0, NAN, -EINVAL},
    {'o', UNITS_COMPILE, "x.c", NAN, 3.9, 0}, /* unknown live CPU changes nothing */
};

static void test_ended(void **state)
{
        struct units *u = NULL;

        (void)state;
        assert_int_equal(units_new(&u), 0);
        for (size_t i = 0; i < ARRAY_SIZE(cpu_steps); i++) {
                const struct unit *rows;
                size_t n;
                int r = cpu_steps[i].op == 'o'
                            ? observe(u, cpu_steps[i].kind, "cc1", cpu_steps[i].name, (double)i,
                                      10.0, cpu_steps[i].cpu)
                            : ended(u, cpu_steps[i].kind, cpu_steps[i].name, 0, cpu_steps[i].cpu);

                print_message("step %zu\n", i);
                assert_int_equal(r, cpu_steps[i].ret);
                if (isnan(cpu_steps[i].want))
                        continue;
                rows = units_rows(u, &n);
                for (size_t k = 0; k < n; k++)
                        if (rows[k].kind == cpu_steps[i].kind &&
                            strcmp(rows[k].name, cpu_steps[i].name) == 0)
                                assert_float_equal(rows[k].cpu_s, cpu_steps[i].want, 1e-9);
        }
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
                r = observe(u, UNITS_COMPILE, "cc1", name, i, i % 100, 0);
                assert_int_equal(r, i < UNITS_MAX ? 0 : -ENOSPC);
        }
        assert_int_equal(units_count(u), UNITS_MAX);
        /* a known unit is still updated */
        assert_int_equal(observe(u, UNITS_COMPILE, "cc1", "f0.c", 1e6, 1e5, 0), 0);
        units_free(u);
}

/* Delay accounting: a unit's processes' waits add up as they end; a
 * scan's unit has none (NAN), and so has one whose delays were not
 * measured; the units file keeps them, and reads a file without them. */
static void test_waits(void **state)
{
        struct units *u = NULL, *v = NULL;
        struct units_seen s = {.kind = UNITS_COMPILE,
                               .tool = "cc1",
                               .name = "w.c",
                               .elapsed_s = 2,
                               .rss_mb = 10,
                               .cpu_s = 1,
                               .exact = true,
                               .wait_s = {0.5, 0.25, 0}};
        struct dbuf out = DBUF_INIT;
        const struct unit *r;
        size_t n;

        (void)state;
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(units_done(u, &s, 1), 0);
        s.wait_s[0] = 1.5; /* its second process (a source built twice) */
        assert_int_equal(units_done(u, &s, 1), 0);
        s.name = "off.c";
        s.wait_s[0] = s.wait_s[1] = s.wait_s[2] = NAN;
        assert_int_equal(units_done(u, &s, 1), 0);
        assert_int_equal(observe(u, UNITS_COMPILE, "cc1", "scan.c", 1, 5, 0.5), 0);
        r = units_rows(u, &n);
        assert_int_equal(n, 3);
        assert_float_equal(r[0].wait_s[0], 2.0, 1e-12);
        assert_float_equal(r[0].wait_s[1], 0.5, 1e-12);
        assert_float_equal(r[0].wait_s[2], 0.0, 1e-12);
        assert_true(isnan(r[1].wait_s[0]) && isnan(r[1].wait_s[2]) && isnan(r[2].wait_s[1]));
        assert_int_equal(unitscsv_format(u, &out), 0);
        assert_non_null(strstr(out.p, ",cache,wait_cpu_s,wait_io_s,wait_mem_s\r\n"));
        assert_non_null(strstr(out.p, ",taskstats,,2,0.5,0\r\n"));
        assert_int_equal(units_new(&v), 0);
        assert_int_equal(unitscsv_parse(out.p, out.len, v, &n), 3);
        r = units_rows(v, &n);
        assert_true(r[0].wait_s[0] == 2.0 && r[0].wait_s[1] == 0.5 && r[0].wait_s[2] == 0.0);
        assert_true(isnan(r[1].wait_s[1]) && isnan(r[2].wait_s[2]));
        units_free(v);
        /* a bad wait is a bad record; a file of before has none */
        assert_int_equal(units_new(&v), 0);
        assert_int_equal(
            unitscsv_parse("kind,tool,name,first_elapsed_s,last_elapsed_s,peak_mb,peak_elapsed_s,"
                           "cpu_s,path,source,cache,wait_cpu_s,wait_io_s,wait_mem_s\r\n"
                           "compile,cc1,x.c,1,2,3,4,5,,taskstats,,1,x,2\r\n"
                           "compile,cc1,y.c,1,2,3,4,5,,taskstats,hit\r\n",
                           213, v, &n),
            1);
        assert_int_equal(n, 1);
        r = units_rows(v, &n);
        assert_true(r[0].cache == UNITS_CACHE_HIT && isnan(r[0].wait_s[0]));
        units_free(v);
        units_free(u);
        dbuf_release(&out);
}

/* ---- the units file: what a run writes, summarize reads ---- */

static void test_csv_round_trip(void **state)
{
        struct units *u = NULL, *v = NULL;
        struct unit a[8], b[8];
        struct dbuf out = DBUF_INIT;
        size_t skipped = 9, na, nb;
        static const char junk[] =
            "kind,tool,name,first_elapsed_s,last_elapsed_s,peak_mb,peak_elapsed_s,cpu_s\r\n"
            "compile,cc1,a.c,1,2,3,4,5\r\n"
            "other,cc1,b.c,1,2,3,4,5\r\n"   /* bad kind */
            "compile,cc1,,1,2,3,4,5\r\n"    /* no name */
            "compile,cc1,c.c,1,x,3,4,5\r\n" /* bad number */
            "compile,cc1,d.c,1,2\r\n"       /* short */
            "link,\"ld, gold\",\"a \"\"b\"\".so\",1,2,,,\r\n"
            "compile,cc1,torn.c,1";

        (void)state;
        assert_int_equal(units_new(&u), 0);
        for (size_t i = 0; i < ARRAY_SIZE(seen); i++)
                assert_int_equal(observe(u, seen[i].kind, seen[i].tool, seen[i].name,
                                         seen[i].t + 1.0 / 3.0, seen[i].mb / 7.0, seen[i].cpu),
                                 0);
        assert_int_equal(unitscsv_format(u, &out), 0);
        assert_int_equal(units_new(&v), 0);
        assert_int_equal(unitscsv_parse(out.p, out.len, v, &skipped), 4);
        assert_int_equal(skipped, 0);
        na = units_top(u, a, ARRAY_SIZE(a));
        nb = units_top(v, b, ARRAY_SIZE(b));
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++) { /* exactly: full precision */
                assert_int_equal(a[i].kind, b[i].kind);
                assert_string_equal(a[i].tool, b[i].tool);
                assert_string_equal(a[i].name, b[i].name);
                assert_true(same(a[i].first_s, b[i].first_s) && same(a[i].last_s, b[i].last_s));
                assert_true(same(a[i].peak_mb, b[i].peak_mb) && same(a[i].peak_s, b[i].peak_s));
                assert_true(same(a[i].cpu_s, b[i].cpu_s));
        }
        units_free(v);

        assert_int_equal(units_new(&v), 0);
        assert_int_equal(unitscsv_parse(junk, strlen(junk), v, &skipped), 2);
        assert_int_equal(skipped, 4);
        nb = units_top(v, b, ARRAY_SIZE(b));
        assert_int_equal(nb, 2);
        assert_string_equal(b[0].name, "a.c");
        assert_string_equal(b[1].tool, "ld, gold");
        assert_string_equal(b[1].name, "a \"b\".so");
        assert_true(isnan(b[1].peak_mb));
        assert_int_equal(unitscsv_parse("name,x\r\n", 8, v, &skipped), -EINVAL);
        units_free(v);
        units_free(u);
        dbuf_release(&out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_observe),
            cmocka_unit_test(test_bad_input),
            cmocka_unit_test(test_variants),
            cmocka_unit_test(test_ended),
            cmocka_unit_test(test_cap),
            cmocka_unit_test(test_waits),
            cmocka_unit_test(test_csv_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
