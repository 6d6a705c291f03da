/* SPDX-License-Identifier: MIT */
/* Which records of a .ninja_log are a run's (parse/ninjalog.h's
 * ninjalog_window(), issue 34), each row from the header's rule: a live
 * run's tail, a log created, rewritten or cut during it, unchanged; a
 * recorded run's export by its time window, a later build appended after
 * it, undated records placed by the file's mtime. And where each chosen
 * run sits on the run's clock. (The parser itself: test-buildmetrics.) */
#include <math.h>
#include <stdint.h>

#include "parse/ninjalog.h"
#include "util/macro.h"

#include "helpers/test.h"

#define S 1700000000.0 /* the run's start */
#define E (S + 60)     /* and end */
#define U NAN          /* a run no record dates */
#define INF INFINITY

struct fl {
        bool exists;
        uint64_t size, ino;
        double mtime;
};

struct want {
        enum ninjalog_why why;
        uint64_t from, to;
        size_t first, n;
        double until_s;
};

/* The snapshot (NULL: an export), the file now, the run's end, the runs
 * as read from the scan on (which is scan), and the pick. */
static const struct fl none = {0}, s100 = {1, 100, 7, 0}, s500 = {1, 500, 7, 0};
/* clang-format off */
static const struct {
        const char *what;
        const struct fl *snap;
        struct fl now;
        double end;
        size_t n;
        struct ninjalog_run runs[3];
        uint64_t scan;
        struct want want;
} cases[] = {
    {"appended tail: every ninja run in it, however dated", &s100, {1, 300, 7, E}, E,
     2, {{100, 200, 5000, U}, {200, 300, 3000, S - 999}},
     100, {NINJALOG_TAIL, 100, 300, 0, 2, INF}},
    {"unchanged: nothing ran", &s100, {1, 100, 7, E}, E,
     0, {{0}},
     100, {NINJALOG_UNCHANGED, 100, 100, 0, 0, INF}},
    {"none at the start: all of it", &none, {1, 300, 7, E}, E,
     2, {{15, 120, 900, S + 1}, {120, 300, 800, S + 9}},
     0, {NINJALOG_NEW, 0, 300, 0, 2, INF}},
    {"rewritten (another inode): its last run", &s500, {1, 300, 8, E}, E,
     2, {{0, 150, 900, S - 9000}, {150, 290, 800, S + 1}},
     0, {NINJALOG_REPLACED, 150, 290, 1, 1, INF}},
    {"cut (smaller, same inode): its last run", &s500, {1, 300, 7, E}, E,
     1, {{0, 300, 900, U}},
     0, {NINJALOG_REPLACED, 0, 300, 0, 1, INF}},
    {"export: a later build appended after the run's end", NULL, {1, 200, 7, E + 100}, E,
     2, {{0, 100, 5000, S + 1}, {100, 200, 3000, E + 50}},
     0, {NINJALOG_WINDOW, 0, 100, 0, 1, 65}},
    {"export: a later build 3 s after the end is another's", NULL, {1, 200, 7, E + 9}, E,
     2, {{0, 100, 5000, S + 1}, {100, 200, 3000, E + 3}},
     0, {NINJALOG_WINDOW, 0, 100, 0, 1, 65}},
    {"export: the newest run started in the window", NULL, {1, 300, 7, E}, E,
     3, {{0, 100, 5000, S - 500}, {100, 200, 3000, S - 1.5}, {200, 300, 3000, S + 20}},
     0, {NINJALOG_WINDOW, 200, 300, 2, 1, 65}},
    {"export: the run still running (no end)", NULL, {1, 300, 7, E}, NAN,
     1, {{0, 300, 5000, S + 20}},
     0, {NINJALOG_WINDOW, 0, 300, 0, 1, INF}},
    {"export: dated, none started in the window", NULL, {1, 200, 7, E}, E,
     2, {{0, 100, 5000, S - 500}, {100, 200, 3000, E + 60}},
     0, {NINJALOG_NOT_IN, 200, 200, 0, 0, INF}},
    {"export: undated, written during the run: its last run", NULL, {1, 200, 7, E - 1}, E,
     2, {{0, 100, 5000, U}, {100, 200, 3000, U}},
     0, {NINJALOG_UNDATED, 100, 200, 1, 1, 65}},
    {"export: undated, written before the run", NULL, {1, 200, 7, S - 2}, E,
     1, {{0, 200, 5000, U}},
     0, {NINJALOG_BEFORE, 200, 200, 0, 0, INF}},
    {"export: undated, written after the run", NULL, {1, 200, 7, E + 6}, E,
     1, {{0, 200, 5000, U}},
     0, {NINJALOG_AFTER, 200, 200, 0, 0, INF}},
};
/* clang-format on */

static void as_file(const struct fl *f, struct ninjalog_file *ret)
{
        *ret = (struct ninjalog_file){f->exists, f->size, f->ino, f->mtime};
}

TEST(window)
{
        FOREACH_ROW(i, cases) {
                const struct want *w = &cases[i].want;
                struct ninjalog_file snap, now, *sp = cases[i].snap ? &snap : NULL;
                struct ninjalog_pick p;

                test_row("%s", cases[i].what);
                as_file(cases[i].snap ? cases[i].snap : &none, &snap);
                as_file(&cases[i].now, &now);
                assert_int_equal(ninjalog_window_scan(sp, &now), cases[i].scan);
                ninjalog_window(sp, &now, cases[i].runs, cases[i].n, S, cases[i].end, &p);
                assert_int_equal(p.why, w->why);
                assert_int_equal(p.from, w->from);
                assert_int_equal(p.to, w->to);
                assert_int_equal(p.n, w->n);
                if (p.n)
                        assert_int_equal(p.first, w->first);
                assert_true(p.until_s == w->until_s);
        }
}

static const struct {
        const char *what;
        double mtime;
        size_t i;
        double want;
} offset_cases[] = {
    {"the last run, the file written in the window: by its mtime", S + 30, 2, 27},
    {"the last run, the file written after: by its records", E + 100, 2, 20},
    {"an earlier run: by its records", S + 30, 1, 5},
    {"a run dated before the start: at 0", S + 30, 0, 0},
};

TEST(run_offset)
{
        static const struct ninjalog_run runs[] = {
            {0, 100, 5000, S - 1.5}, {100, 200, 3000, S + 5}, {200, 300, 3000, S + 20}};
        static const struct ninjalog_run undated[] = {{0, 100, 5000, U}, {100, 200, 3000, U}};

        FOREACH_ROW(i, offset_cases) {
                test_row("%s", offset_cases[i].what);
                assert_true(ninjalog_run_offset(runs, 3, offset_cases[i].i, offset_cases[i].mtime,
                                                S, E) == offset_cases[i].want);
        }
        /* undated: the last by the file's mtime, an earlier one nowhere */
        assert_true(ninjalog_run_offset(undated, 2, 1, S + 10, S, E) == 7);
        assert_true(isnan(ninjalog_run_offset(undated, 2, 0, S + 10, S, E)));
}

RUN_TESTS()
