/* SPDX-License-Identifier: MIT */
/* model/compare.c: figures paired by key, rows and sections ordered by
 * the size of their change; render/compare.c on the result. */
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

static const struct fig side_b[] = {
    {COMPARE_FACTS, "", "command", 0, "make"},
    {COMPARE_FACTS, "", "host", 0, "other"},
    {COMPARE_UNIT, "dup.c", "peak_mb", 11, NULL},
    {COMPARE_UNIT, "dup.c", "peak_mb", 40, NULL},
    {COMPARE_UNIT, "a.c", "peak_mb", 100, NULL},
    {COMPARE_UNIT, "new.c", "peak_mb", 30, NULL},
    {COMPARE_TARGET, "app", "duration_s", 11, NULL},
    {COMPARE_TARGET, "app", "cached", 0, NULL},
    {COMPARE_RUN, "", "cpu_s", 9, NULL},
    {COMPARE_RUN, "", "oom_kills", 1, NULL},
    {COMPARE_RUN, "", "build_mem_peak_mb", 200, NULL},
    {COMPARE_RUN, "", "duration_s", 150, NULL},
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
        assert_int_equal(compare_runs(a, b, r), 0);
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
        /* run: +300 % first; then oom 0 -> 1 (rank 1), duration +50 %, cpu -10 % */
        assert_int_equal(r.order[0], COMPARE_RUN);
        assert_true(r.score[COMPARE_RUN] == 3);
        assert_string_equal(r.rows[0].figure, "build_mem_peak_mb");
        assert_string_equal(r.rows[1].figure, "oom_kills");
        assert_string_equal(r.rows[2].figure, "duration_s");
        assert_string_equal(r.rows[3].figure, "cpu_s");
        /* every section's rows are together, ranks not increasing */
        for (int k = 0; k < COMPARE_SECTIONS; k++) {
                int s = r.order[k];

                for (size_t i = at; i < at + r.count[s]; i++) {
                        assert_int_equal(r.rows[i].section, s);
                        if (i > at)
                                assert_true(r.rows[i].rank <= r.rows[i - 1].rank);
                }
                at += r.count[s];
                if (k > 0)
                        assert_true(r.score[s] <= r.score[r.order[k - 1]]);
        }
        assert_int_equal(at, r.n);
        /* unit: dup.c 10 -> 40 ... (+100 %) and new.c (1) tie at 1, before +10 % and same */
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

static void test_empty_and_same(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        struct compare_labels l = {"x", "y", NAN, NAN};
        struct dbuf out = DBUF_INIT;

        (void)state;
        assert_int_equal(compare_runs(&a, &b, &r), 0);
        assert_int_equal(r.n, 0);
        compare_result_release(&r);
        fill(&a, side_a, 2);
        fill(&b, side_a, 2);
        assert_int_equal(compare_runs(&a, &b, &r), 0);
        assert_int_equal(r.n, 2);
        assert_true(r.score[COMPARE_RUN] == 0);
        assert_int_equal(render_compare_text(&r, &l, 0, &out), 0);
        assert_non_null(strstr(out.p, "no differences"));
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

static void test_render(void **state)
{
        struct compare_side a = {0}, b = {0};
        struct compare_result r;
        struct compare_labels l = {"ra", "rb\x1b[2J", 1.7e9, NAN};
        struct dbuf out = DBUF_INIT;
        json_t *j, *rows;
        json_error_t err;
        char *mem, *dur, *host;

        (void)state;
        compared(&a, &b, &r);
        assert_int_equal(render_compare_text(&r, &l, 1, &out), 0);
        assert_null(strchr(out.p, '\x1b')); /* cleaned for a terminal */
        mem = strstr(out.p, "build_mem_peak_mb");
        dur = strstr(out.p, "duration_s");
        host = strstr(out.p, "host");
        assert_non_null(mem);
        assert_non_null(strstr(mem, "+300.0%"));
        assert_non_null(strstr(out.p, "more; --json lists all"));
        assert_null(dur); /* past the 1 row of the run section */
        assert_non_null(host);
        assert_non_null(strstr(out.p, "A  vm"));
        dbuf_release(&out);
        assert_int_equal(render_compare_json(&r, &l, &out), 0);
        j = json_loadb(out.p, out.len, 0, &err);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "a"), "run_id")),
                            "ra");
        assert_true(json_is_null(json_object_get(json_object_get(j, "b"), "start_epoch")));
        rows = json_object_get(json_array_get(json_object_get(j, "sections"), 0), "rows");
        assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "figure")),
                            "build_mem_peak_mb");
        assert_true(json_real_value(json_object_get(json_array_get(rows, 0), "b")) == 200);
        assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "subject")));
        json_decref(j);
        dbuf_release(&out);
        compare_result_release(&r);
        compare_side_release(&a);
        compare_side_release(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pairs),
            cmocka_unit_test(test_order),
            cmocka_unit_test(test_empty_and_same),
            cmocka_unit_test(test_render),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
