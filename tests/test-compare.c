/* SPDX-License-Identifier: MIT */
/* model/compare.c: figures paired by key, sections in the order of what
 * matters, rows by the size of their change, changes within the sampling
 * quantum or under the baseline's floors marked noise; render/compare.c on
 * the result: people's labels, the noise folded. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/compare.h"
#include "render/compare.h"
#include "util/macro.h"

struct fig {
        int section;
        const char *subject, *figure;
        double v;
        const char *text;
};

static void fill(struct compare_side *s, const struct fig *f, size_t n)
{
        for (size_t i = 0; i < n; i++)
                assert_int_equal(f[i].text ? compare_side_add_text(s, f[i].section, f[i].subject,
                                                                   f[i].figure, f[i].text)
                                           : compare_side_add(s, f[i].section, f[i].subject,
                                                              f[i].figure, f[i].v),
                                 0);
}

static const struct fig side_a[] = {
    {COMPARE_RUN, "", "duration_s", 100, NULL},
    {COMPARE_RUN, "", "build_mem_peak_mb", 50, NULL},
    {COMPARE_RUN, "", "oom_kills", 0, NULL},
    {COMPARE_RUN, "", "cpu_s", 10, NULL},
    {COMPARE_RUN, "", "steps", NAN, NULL}, /* unknown: not added */
    {COMPARE_TARGET, "app", "duration_s", 10, NULL},
    {COMPARE_TARGET, "app", "cached", 4, NULL},
    {COMPARE_TARGET, "old", "duration_s", 5, NULL},
    {COMPARE_UNIT, "a.c", "peak_mb", 100, NULL},
    {COMPARE_UNIT, "dup.c", "peak_mb", 10, NULL},
    {COMPARE_UNIT, "dup.c", "peak_mb", 20, NULL},
    {COMPARE_FACTS, "", "host", 0, "vm"},
    {COMPARE_FACTS, "", "command", 0, "make"},
};

/* the run's figures in A's order (as cmd/ adds them), the rest shuffled */
static const struct fig side_b[] = {
    {COMPARE_RUN, "", "duration_s", 150, NULL},
    {COMPARE_RUN, "", "build_mem_peak_mb", 200, NULL},
    {COMPARE_RUN, "", "oom_kills", 1, NULL},
    {COMPARE_RUN, "", "cpu_s", 9, NULL},
    {COMPARE_FACTS, "", "command", 0, "make"},
    {COMPARE_FACTS, "", "host", 0, "other"},
    {COMPARE_UNIT, "dup.c", "peak_mb", 11, NULL},
    {COMPARE_UNIT, "dup.c", "peak_mb", 40, NULL},
    {COMPARE_UNIT, "a.c", "peak_mb", 100, NULL},
    {COMPARE_UNIT, "new.c", "peak_mb", 30, NULL},
    {COMPARE_TARGET, "app", "duration_s", 11, NULL},
    {COMPARE_TARGET, "app", "cached", 0, NULL},
};

static const struct compare_row *find(const struct compare_result *r, int section,
                                      const char *subject, const char *figure, size_t nth)
{
        for (size_t i = 0; i < r->n; i++)
                if (r->rows[i].section == section && strcmp(r->rows[i].subject, subject) == 0 &&
                    strcmp(r->rows[i].figure, figure) == 0 && nth-- == 0)
                        return &r->rows[i];
        return NULL;
}

static void compared(struct compare_side *a, struct compare_side *b, struct compare_result *r)
{
        fill(a, side_a, ARRAY_SIZE(side_a));
        fill(b, side_b, ARRAY_SIZE(side_b));
        assert_int_equal(compare_runs(a, b, NAN, r), 0); /* no quantum */
}

static void test_pairs(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        const struct compare_row *x;

        (void)state;
        compared(&a, &b, &r);
        assert_int_equal(a.n, ARRAY_SIZE(side_a) - 1); /* the NAN one */
        /* 4 run + 3 target + 1 + 2 + 1 unit + 2 facts */
        assert_int_equal(r.n, 13);
        x = find(&r, COMPARE_RUN, "", "build_mem_peak_mb", 0);
        assert_non_null(x);
        assert_true(x->a == 50 && x->b == 200 && x->change == 150);
        assert_true(fabs(x->change_pct - 300) < 1e-9);
        assert_int_equal(x->status, COMPARE_CHANGED);
        x = find(&r, COMPARE_RUN, "", "oom_kills", 0);
        assert_true(isnan(x->change_pct) && x->rank == 1 && x->change == 1);
        x = find(&r, COMPARE_TARGET, "old", "duration_s", 0);
        assert_int_equal(x->status, COMPARE_GONE);
        assert_true(isnan(x->b) && x->a == 5 && isnan(x->change));
        x = find(&r, COMPARE_UNIT, "new.c", "peak_mb", 0);
        assert_int_equal(x->status, COMPARE_APPEARED);
        x = find(&r, COMPARE_UNIT, "a.c", "peak_mb", 0);
        assert_int_equal(x->status, COMPARE_SAME);
        assert_true(x->rank == 0);
        /* duplicates pair in the order they were added: 10-11, 20-40 */
        x = find(&r, COMPARE_UNIT, "dup.c", "peak_mb", 0);
        assert_true((x->a == 20 && x->b == 40) || (x->a == 10 && x->b == 11));
        assert_non_null(find(&r, COMPARE_UNIT, "dup.c", "peak_mb", 1));
        {
                const struct compare_row *y = find(&r, COMPARE_UNIT, "dup.c", "peak_mb", 1);

                assert_true(x->a + y->a == 30 && x->b + y->b == 51);
                assert_true(x->b - x->a == 20 || x->b - x->a == 1);
                assert_true((x->a == 20) == (x->b == 40));
        }
        x = find(&r, COMPARE_FACTS, "", "host", 0);
        assert_int_equal(x->status, COMPARE_CHANGED);
        assert_string_equal(x->ta, "vm");
        assert_string_equal(x->tb, "other");
        assert_int_equal(find(&r, COMPARE_FACTS, "", "command", 0)->status, COMPARE_SAME);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

static void test_order(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        size_t at = 0;

        (void)state;
        compared(&a, &b, &r);
        /* the run's own first, in the order they were added, whatever
         * changed most (its +300 % memory, oom 0 -> 1) */
        assert_int_equal(r.rows[0].section, COMPARE_RUN);
        assert_string_equal(r.rows[0].figure, "duration_s");
        assert_string_equal(r.rows[1].figure, "build_mem_peak_mb");
        assert_string_equal(r.rows[2].figure, "oom_kills");
        assert_string_equal(r.rows[3].figure, "cpu_s");
        assert_true(r.score[COMPARE_RUN] == 3);
        /* sections in enum order (run, cache, target, step, unit, facts),
         * each together; within target and unit, the noise (under the
         * floors: app's +1 s, dup.c's +1 MiB) last, ranks not increasing
         * before it and in it */
        for (int s = 0; s < COMPARE_SECTIONS; s++) {
                for (size_t i = at; i < at + r.count[s]; i++) {
                        const struct compare_row *x = &r.rows[i], *y = x - 1;

                        assert_int_equal(x->section, s);
                        if (i == at || s == COMPARE_RUN || s == COMPARE_FACTS)
                                continue;
                        assert_true(x->noise >= y->noise);
                        assert_true(x->noise != y->noise || x->rank <= y->rank);
                }
                at += r.count[s];
        }
        assert_int_equal(at, r.n);
        assert_int_equal(r.count[COMPARE_CACHE], 0);
        /* facts in the order added: A added host before command */
        assert_string_equal(r.rows[r.n - 2].figure, "host");
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

/* Two like builds sampled every 2 s: what changed within the quantum or
 * under the baseline's floors is noise, after the real changes. */
static const struct fig like_a[] = {
    {COMPARE_RUN, "", "outcome", 0, "ok"},
    {COMPARE_RUN, "", "duration_s", 100, NULL},               /* +3 s: under 5 s */
    {COMPARE_RUN, "", "cpu_s", 10, NULL},                     /* +20 s: real */
    {COMPARE_RUN, "", "build_mem_peak_mb", 500, NULL},        /* +20 MiB: under 32 */
    {COMPARE_RUN, "", "oom_kills", 0, NULL},                  /* the same */
    {COMPARE_TARGET, "app", "duration_s", 10, NULL},          /* +20 s: real */
    {COMPARE_STEP, "[app 1/2] RUN x", "duration_s", 1, NULL}, /* +3 s: under 5 s */
    {COMPARE_UNIT, "u1.c", "duration_s", 2, NULL},            /* -2 s: one sample */
    {COMPARE_UNIT, "u2.c", "duration_s", 10, NULL},           /* +10 s: real */
    {COMPARE_UNIT, "big.c", "peak_mb", 100, NULL},            /* +200 MiB: real */
    {COMPARE_UNIT, "small.c", "peak_mb", 100, NULL},          /* +20 MiB: under 32 */
    {COMPARE_UNIT, "long.c", "duration_s", 30, NULL},         /* only in A, 30 s: real */
    {COMPARE_UNIT, "long.c", "peak_mb", 10, NULL},
};

static const struct fig like_b[] = {
    {COMPARE_RUN, "", "outcome", 0, "exit 2"},
    {COMPARE_RUN, "", "duration_s", 103, NULL},
    {COMPARE_RUN, "", "cpu_s", 30, NULL},
    {COMPARE_RUN, "", "build_mem_peak_mb", 520, NULL},
    {COMPARE_RUN, "", "oom_kills", 0, NULL},
    {COMPARE_TARGET, "app", "duration_s", 30, NULL},
    {COMPARE_STEP, "[app 1/2] RUN x", "duration_s", 4, NULL},
    {COMPARE_UNIT, "u1.c", "duration_s", 0, NULL},
    {COMPARE_UNIT, "u2.c", "duration_s", 20, NULL},
    {COMPARE_UNIT, "big.c", "peak_mb", 300, NULL},
    {COMPARE_UNIT, "small.c", "peak_mb", 120, NULL},
    {COMPARE_STEP, "[app 2/2] RUN y", "duration_s", 0.1, NULL}, /* only in B: real */
    {COMPARE_UNIT, "flash.c", "duration_s", 0, NULL},           /* only in B, seen once: noise */
    {COMPARE_UNIT, "flash.c", "peak_mb", 900, NULL},
};

static void like(struct compare_side *a, struct compare_side *b, double q, struct compare_result *r)
{
        fill(a, like_a, ARRAY_SIZE(like_a));
        fill(b, like_b, ARRAY_SIZE(like_b));
        assert_int_equal(compare_runs(a, b, q, r), 0);
}

static void test_noise(void **state)
{
        static const struct {
                int section;
                const char *subject, *figure;
                bool noise;
        } want[] = {
            {COMPARE_RUN, "", "outcome", false},
            {COMPARE_RUN, "", "duration_s", true},
            {COMPARE_RUN, "", "cpu_s", false},
            {COMPARE_RUN, "", "build_mem_peak_mb", true},
            {COMPARE_RUN, "", "oom_kills", false},
            {COMPARE_TARGET, "app", "duration_s", false},
            {COMPARE_STEP, "[app 1/2] RUN x", "duration_s", true},
            {COMPARE_STEP, "[app 2/2] RUN y", "duration_s", false},
            {COMPARE_UNIT, "u1.c", "duration_s", true},
            {COMPARE_UNIT, "u2.c", "duration_s", false},
            {COMPARE_UNIT, "big.c", "peak_mb", false},
            {COMPARE_UNIT, "small.c", "peak_mb", true},
            {COMPARE_UNIT, "long.c", "duration_s", false},
            {COMPARE_UNIT, "long.c", "peak_mb", false},
            {COMPARE_UNIT, "flash.c", "duration_s", true},
            {COMPARE_UNIT, "flash.c", "peak_mb", true},
        };
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        size_t at, k;

        (void)state;
        like(&a, &b, 2.0, &r);
        assert_true(r.quantum_s == 2.0);
        assert_int_equal(r.n, ARRAY_SIZE(want));
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                const struct compare_row *x =
                    find(&r, want[i].section, want[i].subject, want[i].figure, 0);

                assert_non_null(x);
                if (x->noise != want[i].noise)
                        fail_msg("%s %s: noise %d", want[i].subject, want[i].figure, x->noise);
        }
        /* the run's in the order added, noise or not */
        assert_string_equal(r.rows[0].figure, "outcome");
        assert_string_equal(r.rows[1].figure, "duration_s");
        assert_string_equal(r.rows[2].figure, "cpu_s");
        assert_string_equal(r.rows[3].figure, "build_mem_peak_mb");
        /* the units: the real changes, then the noise */
        at = r.count[COMPARE_RUN] + r.count[COMPARE_CACHE] + r.count[COMPARE_TARGET] +
             r.count[COMPARE_STEP];
        assert_int_equal(r.count[COMPARE_UNIT], 8);
        for (k = at; k < at + 4; k++)
                assert_false(r.rows[k].noise);
        for (; k < at + 8; k++)
                assert_true(r.rows[k].noise);
        /* the unit's score leaves the noise out: big.c's +200 % */
        assert_true(r.score[COMPARE_UNIT] == 2);
        assert_true(r.score[COMPARE_STEP] == 1);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);

        /* no quantum: the floors alone; a unit's time is then real */
        like(&a, &b, NAN, &r);
        assert_true(r.quantum_s == 0);
        assert_false(find(&r, COMPARE_UNIT, "u1.c", "duration_s", 0)->noise);
        assert_false(find(&r, COMPARE_UNIT, "flash.c", "peak_mb", 0)->noise);
        assert_true(find(&r, COMPARE_RUN, "", "duration_s", 0)->noise);
        assert_true(find(&r, COMPARE_UNIT, "small.c", "peak_mb", 0)->noise);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);

        /* a longer quantum: u2.c's +10 s is within 2.5 samples of 5 s */
        like(&a, &b, 5.0, &r);
        assert_true(find(&r, COMPARE_UNIT, "u2.c", "duration_s", 0)->noise);
        assert_false(find(&r, COMPARE_UNIT, "long.c", "peak_mb", 0)->noise);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

static void test_labels(void **state)
{
        static const char *const cases[][2] = {
            {"duration_s", "wall time"},
            {"cpu_s", "CPU time"},
            {"build_mem_peak_mb", "memory peak"},
            {"host_mem_used_peak_mb", "host memory used, peak"},
            {"oom_kills", "OOM kills"},
            {"peak_mb", "memory peak"},
            {"cached_steps", "cached steps"},
            {"hit_ratio", "hit ratio"},
            {"outcome", "outcome"},
            {"hits", "hits"},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                assert_string_equal(compare_figure_label(cases[i][0]), cases[i][1]);
        assert_int_equal(compare_figure_in("duration_s"), COMPARE_IN_S);
        assert_int_equal(compare_figure_in("host_mem_used_peak_mb"), COMPARE_IN_MB);
        assert_int_equal(compare_figure_in("cpu_avg_pct"), COMPARE_IN_PCT);
        assert_int_equal(compare_figure_in("cached_ratio"), COMPARE_IN_RATIO);
        assert_int_equal(compare_figure_in("cached_steps"), COMPARE_IN_COUNT);
        assert_int_equal(compare_figure_in("hits"), COMPARE_IN_COUNT);
        assert_int_equal(compare_figure_in("s"), COMPARE_IN_COUNT);
}

static void test_empty_and_same(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        struct compare_labels l = {.a_id = "x", .b_id = "y", .a_start = NAN, .b_start = NAN};
        struct dbuf out = DBUF_INIT;

        (void)state;
        assert_int_equal(compare_runs(&a, &b, 1.0, &r), 0);
        assert_int_equal(r.n, 0);
        compare_result_release(&r);
        fill(&a, side_a, 2);
        fill(&b, side_a, 2);
        assert_int_equal(compare_runs(&a, &b, 1.0, &r), 0);
        assert_int_equal(r.n, 2);
        assert_true(r.score[COMPARE_RUN] == 0);
        assert_int_equal(render_compare_text(&r, &l, 0, &out), 0);
        assert_non_null(strstr(out.p, "no differences"));
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

/* The text, from the like builds: the header's outcomes, the run's rows
 * first with people's labels, the noise folded, no raw key. */
static void test_render_text(void **state)
{
        static const char *const raw[] = {"duration_s", "cpu_s", "peak_mb", "oom_kills",
                                          "appeared",   "gone",  "_mb",     "_s "};
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        struct compare_labels l = {.a_id = "ra",
                                   .b_id = "rb",
                                   .a_start = 1.7e9,
                                   .b_start = NAN,
                                   .a_outcome = "ok",
                                   .b_outcome = "exit 2"};
        struct dbuf out = DBUF_INIT;
        const char *p, *run, *unit, *target;

        (void)state;
        like(&a, &b, 2.0, &r);
        assert_int_equal(render_compare_text(&r, &l, 12, &out), 0);
        p = strchr(out.p, '\n') + 1;
        assert_true(strncmp(out.p, "A: ra  2023-11-14T22:13:20.000Z  ok\n", (size_t)(p - out.p)) ==
                    0);
        assert_true(strncmp(p, "B: rb    exit 2\n", strlen("B: rb    exit 2\n")) == 0);
        for (size_t i = 0; i < ARRAY_SIZE(raw); i++)
                if (strstr(out.p, raw[i]))
                        fail_msg("raw key '%s' in:\n%s", raw[i], out.p);
        /* the run's rows right after the header, in their order */
        run = strstr(out.p, "\n\nrun ");
        assert_non_null(run);
        p = strchr(run + 2, '\n') + 1;
        assert_true(strncmp(p, "  outcome ", 10) == 0);
        assert_non_null(strstr(p, "ok"));
        p = strchr(p, '\n') + 1;
        assert_true(strncmp(p, "  wall time ", 12) == 0);
        assert_non_null(strstr(p, "1m40s")); /* fmt_duration */
        assert_true(strstr(p, "noise") < strchr(p, '\n'));
        p = strchr(p, '\n') + 1;
        assert_true(strncmp(p, "  CPU time ", 11) == 0);
        assert_true(strstr(p, "+200.0%") < strchr(p, '\n'));
        p = strchr(p, '\n') + 1;
        assert_true(strncmp(p, "  memory peak ", 14) == 0);
        assert_true(strstr(p, "500 MiB") < strchr(p, '\n')); /* fmt_size */
        assert_true(strstr(p, "+20.0 MiB") < strchr(p, '\n'));
        p = strchr(p, '\n') + 1;
        assert_true(strncmp(p, "  OOM kills ", 12) == 0);
        /* then the target, the steps (one new, one change folded), the units */
        target = strstr(out.p, "\ntarget ");
        p = strstr(out.p, "\nstep ");
        unit = strstr(out.p, "\nunit ");
        assert_true(run && target && p && unit && run < target && target < p && p < unit);
        assert_non_null(strstr(p, "\n  [app 2/2] RUN y wall time "));
        assert_non_null(strstr(p, " only in B\n  1 change within noise (--all lists them)\n"));
        assert_null(strstr(out.p, "\ncache "));
        assert_non_null(strstr(target, "  app wall time "));
        /* the units: the real changes by rank, the 4 noise ones folded */
        p = strchr(unit + 1, '\n') + 1;
        assert_true(strncmp(p, "  big.c memory peak ", 20) == 0);
        assert_non_null(strstr(unit, "  long.c wall time "));
        assert_non_null(strstr(unit, "only in A"));
        assert_null(strstr(unit, "u1.c"));
        assert_null(strstr(unit, "flash.c"));
        assert_non_null(strstr(unit, "\n  4 changes within noise (--all lists them)\n"));
        dbuf_release(&out);

        /* --all (max_rows 0): the noise listed, marked, at the end */
        assert_int_equal(render_compare_text(&r, &l, 0, &out), 0);
        assert_null(strstr(out.p, "within noise"));
        unit = strstr(out.p, "\nunit ");
        p = strstr(unit, "  u1.c wall time ");
        assert_non_null(p);
        assert_true(strstr(p, "noise") < strchr(p, '\n'));
        assert_true(strstr(unit, "  flash.c memory peak ") > strstr(unit, "  u2.c wall time "));
        p = strstr(unit, "  flash.c memory peak ");
        assert_true(strstr(p, " noise\n") < strchr(p, '\n') + 1); /* not "only in B" */
        dbuf_release(&out);

        /* at most max_rows real changes a section, the rest counted */
        assert_int_equal(render_compare_text(&r, &l, 1, &out), 0);
        unit = strstr(out.p, "\nunit ");
        assert_non_null(strstr(unit, "(3 more; --all lists them)"));
        assert_non_null(strstr(unit, "4 changes within noise"));
        /* the run's rows are never cut */
        assert_non_null(strstr(out.p, "  OOM kills "));
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

static void test_render(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        struct compare_labels l = {
            .a_id = "ra", .b_id = "rb\x1b[2J", .a_start = 1.7e9, .b_start = NAN};
        struct dbuf out = DBUF_INIT;
        json_t *j, *rows, *row;
        json_error_t err;
        char *host;

        (void)state;
        compared(&a, &b, &r);
        assert_int_equal(render_compare_text(&r, &l, 1, &out), 0);
        assert_null(strchr(out.p, '\x1b')); /* cleaned for a terminal */
        assert_non_null(strstr(out.p, "  memory peak "));
        assert_non_null(strstr(out.p, "+300.0%"));
        assert_non_null(strstr(out.p, "more; --all lists them"));
        host = strstr(out.p, "  host\n");
        assert_non_null(host);
        assert_non_null(strstr(host, "A  vm"));
        assert_non_null(strstr(out.p, "unknown\n")); /* no outcome given */
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);

        like(&a, &b, 2.0, &r);
        l.a_outcome = "ok";
        assert_int_equal(render_compare_json(&r, &l, &out), 0);
        j = json_loadb(out.p, out.len, 0, &err);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "a"), "run_id")),
                            "ra");
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "a"), "outcome")),
                            "ok");
        assert_true(json_is_null(json_object_get(json_object_get(j, "b"), "outcome")));
        assert_true(json_is_null(json_object_get(json_object_get(j, "b"), "start_epoch")));
        assert_true(json_real_value(json_object_get(j, "quantum_s")) == 2.0);
        /* every row, the noise too, in the result's order; stable keys */
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(j, "sections"), 0), "section")),
                            "run");
        rows = json_object_get(json_array_get(json_object_get(j, "sections"), 0), "rows");
        row = json_array_get(rows, 1);
        assert_string_equal(json_string_value(json_object_get(row, "figure")), "duration_s");
        assert_string_equal(json_string_value(json_object_get(row, "label")), "wall time");
        assert_true(json_is_true(json_object_get(row, "noise")));
        assert_true(json_real_value(json_object_get(row, "b")) == 103);
        assert_true(json_is_null(json_object_get(row, "subject")));
        row = json_array_get(rows, 2);
        assert_true(json_is_false(json_object_get(row, "noise")));
        {
                size_t n = 0, ns = json_array_size(json_object_get(j, "sections"));

                for (size_t i = 0; i < ns; i++)
                        n += json_array_size(json_object_get(
                            json_array_get(json_object_get(j, "sections"), i), "rows"));
                assert_int_equal(n, r.n);
        }
        json_decref(j);
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pairs),          cmocka_unit_test(test_order),
            cmocka_unit_test(test_noise),          cmocka_unit_test(test_labels),
            cmocka_unit_test(test_empty_and_same), cmocka_unit_test(test_render_text),
            cmocka_unit_test(test_render),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
