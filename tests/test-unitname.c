/* SPDX-License-Identifier: MIT */
/* The units' names (issue 26): a compiler's source resolved against its
 * cwd, and the shortest unique name relative to the project
 * (model/unitname.c), through the units table (model/units.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/unitname.h"
#include "model/units.h"
#include "util/dbuf.h"
#include "util/macro.h"

#include "helpers/test.h"
#include "runfiles/unitscsv.h"

/* ---- lexical resolution ---- */

static const struct {
        const char *cwd, *src, *want; /* want NULL: fails with ret */
        int ret;
} resolve_cases[] = {
    {"/p/build", "../src/a.c", "/p/src/a.c", 0},
    {"/p", "src/a.c", "/p/src/a.c", 0},
    {"/p/a/build", "../x.c", "/p/a/x.c", 0},
    {"/p/b/build", "../x.c", "/p/b/x.c", 0},
    {"/p/a", "../x.c", "/p/x.c", 0}, /* from /p/a and /p/b: one file */
    {"/p/b", "../x.c", "/p/x.c", 0},
    {"/p", "./src/./b/../a.c", "/p/src/a.c", 0},
    {"/p//build/", "..//src/a.c", "/p/src/a.c", 0},
    {"/p/build", "/abs/./dir/../x.c", "/abs/x.c", 0},
    {NULL, "/abs/x.c", "/abs/x.c", 0},
    {"/", "../../x.c", "/x.c", 0},
    {"/p", "..", "/", 0},
    {NULL, "x.c", NULL, -ENOENT}, /* a cwd that could not be read */
    {"", "../x.c", NULL, -ENOENT},
    {"rel/dir", "x.c", NULL, -ENOENT},
    {"/p", "", NULL, -EINVAL},
};

TEST(resolve)
{
        FOREACH_ROW(i, resolve_cases) {
                char out[UNITS_PATH_MAX + 1];
                int r;

                test_row("%s + %s", resolve_cases[i].cwd ? resolve_cases[i].cwd : "(none)",
                         resolve_cases[i].src);
                r = unitname_resolve(resolve_cases[i].cwd, resolve_cases[i].src, out, sizeof(out));
                if (!resolve_cases[i].want) {
                        assert_int_equal(r, resolve_cases[i].ret);
                        continue;
                }
                assert_int_equal(r, (int)strlen(resolve_cases[i].want));
                assert_string_equal(out, resolve_cases[i].want);
        }
}

TEST(resolve_long)
{
        char cwd[300], out[64];

        memset(cwd, 'd', sizeof(cwd) - 1);
        cwd[0] = '/';
        cwd[sizeof(cwd) - 1] = '\0';
        assert_int_equal(unitname_resolve(cwd, "x.c", out, sizeof(out)), -ENAMETOOLONG);
        /* the cwd is put first: ".." does not save it */
        assert_int_equal(unitname_resolve(cwd, "../x.c", out, sizeof(out)), -ENAMETOOLONG);
        assert_int_equal(unitname_resolve("/p", "x.c", out, 7), 6);
        assert_int_equal(unitname_resolve("/p", "x.c", out, 6), -ENAMETOOLONG);
}

/* ---- short names, paths not known (as read from an old table) ---- */

static const char *const names_tree[] = {
    "../../../checkout/src/platform/cgroup.c",
    "../../../checkout/src/model/cgroup.c",
    "../../../checkout/src/model/units.c",
    "./main.c",
    "app",
    "/abs/dir/x.c",
    "../../src/conv.cpp [c++17]",
    "../../src/conv.cpp [c++14]",
    "../../lib/conv.cpp [c++17]",
    "../src/y.c [obj/a]",
};

static const struct {
        const char *name, *want;
} short_cases[] = {
    {"../../../checkout/src/platform/cgroup.c", "platform/cgroup.c"},
    {"../../../checkout/src/model/cgroup.c", "model/cgroup.c"},
    {"../../../checkout/src/model/units.c", "units.c"},
    {"./main.c", "main.c"},
    {"app", "app"},
    {"/abs/dir/x.c", "x.c"},
    {"../../src/conv.cpp [c++17]", "src/conv.cpp [c++17]"},
    {"../../src/conv.cpp [c++14]", "conv.cpp [c++14]"},
    {"../../lib/conv.cpp [c++17]", "lib/conv.cpp [c++17]"},
    {"../src/y.c [obj/a]", "y.c [obj/a]"},
};

TEST(short_unresolved)
{
        struct unit rows[ARRAY_SIZE(names_tree)];
        struct unitnames un;

        memset(rows, 0, sizeof(rows));
        for (size_t i = 0; i < ARRAY_SIZE(names_tree); i++)
                snprintf(rows[i].name, sizeof(rows[i].name), "%s", names_tree[i]);
        unitnames_init(&un, rows, ARRAY_SIZE(rows), "/work/checkout");
        FOREACH_ROW(i, short_cases) {
                char buf[UNITNAME_SHORT_MAX + 1];
                const char *got;

                test_row("%s", short_cases[i].name);
                got = unitnames_short(&un, &rows[i], buf, sizeof(buf));
                assert_string_equal(rows[i].name, short_cases[i].name);
                assert_string_equal(got, short_cases[i].want);
                assert_null(strstr(got, "../"));
        }
}

/* ---- short names through the units table: seen with their cwd ---- */

static const struct {
        const char *name, *cwd; /* name is the source as given */
        const char *path;       /* the row's path, "" unknown */
        const char *want;       /* as shown with the project root /p */
} seen_cases[] = {
    /* one file reached two ways: one unit, one name */
    {"../src/a.c", "/p/build", "/p/src/a.c", "src/a.c"},
    {"src/a.c", "/p", "/p/src/a.c", "src/a.c"},
    {"lib/a.c", "/p", "/p/lib/a.c", "lib/a.c"},
    /* one text, two files */
    {"../x.c", "/p/a/build", "/p/a/x.c", "a/x.c"},
    {"../x.c", "/p/b/build", "/p/b/x.c", "b/x.c"},
    /* ./ and a/../ parts */
    {"./src/./b/../c.c", "/p", "/p/src/c.c", "c.c"},
    /* absolute: no cwd needed */
    {"/p/src/abs.c", NULL, "/p/src/abs.c", "abs.c"},
    /* outside the project: below the longest common directory of those */
    {"../../q/one/m.c", "/p/build", "/q/one/m.c", "one/m.c"},
    {"/q/two/m.c", NULL, "/q/two/m.c", "two/m.c"},
    /* a cwd that could not be read: the name as given, without ../ */
    {"../../lost/d.c", NULL, "", "d.c"},
    /* below the project and below the common directory outside it, the
     * same text: then whole */
    {"src/dup.c", "/p", "/p/src/dup.c", "/p/src/dup.c"},
    {"/q/src/dup.c", NULL, "/q/src/dup.c", "/q/src/dup.c"},
    /* one name the tail of another's: each its path below the project */
    {"top.c", "/p", "/p/top.c", "top.c"},
    {"sub/top.c", "/p", "/p/sub/top.c", "sub/top.c"},
};

TEST(short_seen)
{
        struct units *u;
        const struct unit *rows;
        struct unitnames un;
        size_t n;

        assert_int_equal(units_new(&u), 0);
        FOREACH_ROW(i, seen_cases) {
                struct units_seen s = {.kind = UNITS_COMPILE,
                                       .tool = "cc1",
                                       .name = seen_cases[i].name,
                                       .src = seen_cases[i].name,
                                       .cwd = seen_cases[i].cwd,
                                       .elapsed_s = (double)i,
                                       .rss_mb = 10.0 + (double)i,
                                       .cpu_s = NAN};

                assert_int_equal(units_see(u, &s), 0);
        }
        rows = units_rows(u, &n);
        assert_int_equal(n, ARRAY_SIZE(seen_cases) - 1); /* src/a.c is ../src/a.c's unit */
        unitnames_init(&un, rows, n, "/p/");
        FOREACH_ROW(i, seen_cases) {
                char buf[UNITNAME_SHORT_MAX + 1];
                const struct unit *row = &rows[i == 0 ? 0 : i - 1];
                const char *got;

                test_row("%s in %s", seen_cases[i].name,
                         seen_cases[i].cwd ? seen_cases[i].cwd : "(unread)");
                if (i == 1) {
                        row = &rows[0];
                        assert_string_equal(row->name, "../src/a.c"); /* as first given */
                } else {
                        assert_string_equal(row->name, seen_cases[i].name);
                }
                got = unitnames_short(&un, row, buf, sizeof(buf));
                assert_string_equal(row->path, seen_cases[i].path);
                assert_string_equal(got, seen_cases[i].want);
        }
        units_free(u);
}

/* Processes of a unit that ended are found by their path too. */
TEST(ended_by_path)
{
        struct units *u;
        const struct unit *rows;
        size_t n;
        struct units_seen a = {.kind = UNITS_COMPILE,
                               .name = "../x.c",
                               .src = "../x.c",
                               .cwd = "/p/a/build",
                               .rss_mb = 5,
                               .cpu_s = 1.0};
        struct units_seen b = a;

        b.cwd = "/p/b/build";
        b.cpu_s = 2.0;
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(units_see(u, &a), 0);
        assert_int_equal(units_see(u, &b), 0);
        a.cpu_s = 3.0;
        assert_int_equal(units_ended_seen(u, &a), 0);
        rows = units_rows(u, &n);
        assert_int_equal(n, 2);
        assert_true(rows[0].cpu_s == 3.0);
        assert_true(rows[1].cpu_s == 2.0);
        units_free(u);
}

/* The CSV keeps the path, and a table read back names as the run did; one
 * written before the path column still reads. */
TEST(csv_path)
{
        static const char old[] =
            "kind,tool,name,first_elapsed_s,last_elapsed_s,peak_mb,peak_elapsed_s,cpu_s\r\n"
            "compile,cc1,../x.c,0,1,5,0,\r\n";
        struct units *u, *back;
        struct dbuf b = DBUF_INIT;
        const struct unit *rows;
        size_t n, skipped = 9;
        struct units_seen a = {.kind = UNITS_COMPILE,
                               .tool = "cc1",
                               .name = "../x.c",
                               .src = "../x.c",
                               .cwd = "/p/a/build",
                               .rss_mb = 5,
                               .cpu_s = NAN};
        struct units_seen c = a;

        c.cwd = "/p/b/build";
        c.exact = true; /* the kernel's figures: its source says so, and reads back */
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(units_see(u, &a), 0);
        assert_int_equal(units_done(u, &c, 0.5), 0);
        /* ccache's word: the input as given, against each unit's path */
        assert_int_equal(units_mark_cache(u, "y.c", UNITS_CACHE_HIT), -ENOENT);
        assert_int_equal(units_mark_cache(u, "b/x.c", UNITS_CACHE_HIT), 0);
        assert_int_equal(units_mark_cache(u, "b/x.c", UNITS_CACHE_HIT), -ENOENT); /* marked once */
        assert_int_equal(unitscsv_format(u, &b), 0);
        print_message("%s", b.p);
        assert_non_null(strstr(b.p, ",/p/a/x.c,sampled,,,,\r\n"));
        assert_non_null(strstr(b.p, ",/p/b/x.c,taskstats,hit,0,0,0\r\n"));
        assert_int_equal(units_new(&back), 0);
        assert_int_equal(unitscsv_parse(b.p, b.len, back, &skipped), 2);
        assert_int_equal(skipped, 0);
        rows = units_rows(back, &n);
        assert_int_equal(n, 2); /* one name, two files: both kept */
        assert_string_equal(rows[1].path, "/p/b/x.c");
        assert_false(rows[0].exact);
        assert_true(rows[1].exact);
        assert_int_equal(rows[0].cache, UNITS_CACHE_UNKNOWN);
        assert_int_equal(rows[1].cache, UNITS_CACHE_HIT);
        assert_true(rows[1].first_s == 0.5);
        units_free(back);
        assert_int_equal(units_new(&back), 0);
        assert_int_equal(unitscsv_parse(old, sizeof(old) - 1, back, &skipped), 1);
        rows = units_rows(back, &n);
        assert_string_equal(rows[0].path, "");
        units_free(back);
        units_free(u);
        dbuf_release(&b);
}

RUN_TESTS()
