/* SPDX-License-Identifier: MIT */
/* The -j reading (CPUs and memory) and the parallelism reading (issue 26):
 * model/jobs.c. The units' short names: test-unitname.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/jobs.h"
#include "model/sample.h"
#include "model/summary.h"
#include "model/units.h"
#include "util/macro.h"

/* ---- the -j reading ---- */

static const struct {
        const char *name;
        size_t units;  /* unit k peaks at mb0 + step * k MiB, alive [k * gap, k * gap + 1] */
        double mb0, step, gap;
        double total_mb;
        unsigned ncpu;
        int ret;
        long jobs;
        int cpu_limit;
        const char *text;
} jobs_cases[] = {
    {"too few units", 19, 100, 100, 2, 24576, 4, -ENODATA, 0, 0, NULL},
    {"no memory figure", 40, 100, 100, 2, NAN, 4, -ENODATA, 0, 0, NULL},
    /* the case: small units, a big machine's memory, 2 cores */
    {"many small units on 2 CPUs", 400, 50, 0.01, 0.5, 24064, 2, 0, 2, 1,
     "the 2 CPUs are the limit: -j 2 (the "
     "95th-percentile unit needs 53.8 MiB; at the busiest, 3 units held 162 MiB together); "
     "this run peaked at 3 in flight"},
    {"memory-bound", 20, 100, 100, 2, 24576, 64, 0, 12, 0,
     "memory is the limit: 24.0 GiB allows -j 12 of the 64 CPUs (the 95th-percentile unit "
     "needs 1.86 GiB; at the busiest, 1 unit held 1.95 GiB together); this run peaked at 3 "
     "in flight; `buildtel plan` pools the heavy units so more run"},
    {"the CPU count unknown", 20, 100, 100, 2, 24576, 0, 0, 12, 0,
     "memory allows -j 12 in 24.0 GiB, the CPU count unknown (the 95th-percentile unit needs "
     "1.86 GiB; at the busiest, 1 unit held 1.95 GiB together); this run peaked at 3 in flight"
     "; `buildtel plan` pools the heavy units so more run"},
    {"equal units, five at once", 40, 1000, 0, 0.25, 8192, 64, 0, 8, 0,
     "memory is the limit: 8.00 GiB allows -j 8 of the 64 CPUs (the 95th-percentile unit needs "
     "0.98 GiB; at the busiest, 5 units held 4.88 GiB together); this run peaked at 3 in "
     "flight; `buildtel plan` pools the heavy units so more run"},
    {"memory smaller than one unit: still -j 1", 100, 9000, 10, 2, 8192, 8, 0, 1, 0, NULL},
};

static void test_jobs(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(jobs_cases); i++) {
                struct units *u = NULL;
                struct jobs_reading j;
                struct dbuf b = DBUF_INIT;
                char name[32];

                print_message("%s\n", jobs_cases[i].name);
                assert_int_equal(units_new(&u), 0);
                for (size_t k = 0; k < jobs_cases[i].units; k++) {
                        double t = (double)k * jobs_cases[i].gap;
                        double mb = jobs_cases[i].mb0 + jobs_cases[i].step * (double)k;
                        struct units_seen s = {.kind = UNITS_COMPILE,
                                               .tool = "cc1",
                                               .name = name,
                                               .elapsed_s = t,
                                               .rss_mb = mb,
                                               .cpu_s = 1};

                        snprintf(name, sizeof(name), "u%zu.c", k);
                        assert_int_equal(units_see(u, &s), 0);
                        s.elapsed_s = t + 1;
                        assert_int_equal(units_see(u, &s), 0);
                }
                assert_int_equal(jobs_read(u, jobs_cases[i].total_mb, jobs_cases[i].ncpu, 3, &j),
                                 jobs_cases[i].ret);
                if (jobs_cases[i].ret == 0) {
                        assert_int_equal(j.jobs, jobs_cases[i].jobs);
                        assert_int_equal(j.cpu_limit, jobs_cases[i].cpu_limit);
                        assert_int_equal(jobs_render(&j, &b), 0);
                        print_message("  %s\n", b.p);
                        if (jobs_cases[i].text)
                                assert_string_equal(b.p, jobs_cases[i].text);
                        assert_null(strstr(b.p, "-j 0"));
                }
                dbuf_release(&b);
                units_free(u);
        }
}

/* ---- the parallelism reading ---- */

struct par_row {
        double t, compilers;
        const char *running;
};

static const struct par_row par_serial_tail[] = {
    {0, 0, ""},        {1, 4, "a.c b.c c.c d.c"}, {2, 4, "a.c b.c c.c d.c"},
    {3, 2, "c.c d.c"}, {4, 1, "d.c"},             {5, 1, "d.c"},
    {6, 0, "ld:app"},  {7, 0, "ld:app"},          {8, 0, "ld:app"},
    {9, 0, ""},
};
/* ten short units alone, then a long one: it still gets in */
static const struct par_row par_late_long[] = {
    {0, 1, "a.c"}, {1, 1, "b.c"}, {2, 1, "c.c"}, {3, 1, "d.c"},   {4, 1, "e.c"},
    {5, 1, "f.c"}, {6, 1, "g.c"}, {7, 1, "h.c"}, {8, 1, "i.c"},   {9, 1, "j.c"},
    {10, 1, "big.c"}, {11, 1, "big.c"}, {12, 1, "big.c"}, {13, 1, "big.c"},
};
static const struct par_row par_no_jobs[] = {
    {0, NAN, ""},
    {1, NAN, ""},
};

static const struct {
        const char *name;
        const struct par_row *rows;
        size_t n;
        unsigned ncpu;
        int ret;
        double busy, under, alone;
        const char *text;
} par_cases[] = {
    {"a serial tail and a link alone", par_serial_tail, ARRAY_SIZE(par_serial_tail), 4, 0, 8, 6,
     5,
     "fewer jobs than the 4 CPUs for 6.0s of 8.0s with work in flight (75 %); one job alone for "
     "5.0s: ld:app (3.0s from +6.0s), d.c (2.0s from +4.0s)"},
    {"a long unit alone after the table filled", par_late_long, ARRAY_SIZE(par_late_long), 2, 0,
     13, 13, 13,
     "fewer jobs than the 2 CPUs for 13.0s of 13.0s with work in flight (100 %); one job alone "
     "for 13.0s: big.c (4.0s from +10.0s), j.c (1.0s from +9.0s), c.c (1.0s from +2.0s)"},
    {"one CPU: no reading", par_serial_tail, ARRAY_SIZE(par_serial_tail), 1, -ENODATA, 0, 0, 0,
     NULL},
    {"no jobs figure: no reading", par_no_jobs, ARRAY_SIZE(par_no_jobs), 4, -ENODATA, 0, 0, 0,
     NULL},
};

static void test_par(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(par_cases); i++) {
                struct summary s;
                struct par_reading p;
                struct dbuf b = DBUF_INIT;

                print_message("%s\n", par_cases[i].name);
                summary_init(&s, NULL);
                for (size_t k = 0; k < par_cases[i].n; k++) {
                        struct sample smp;

                        sample_clear(&smp);
                        smp.elapsed_s = par_cases[i].rows[k].t;
                        smp.compilers = par_cases[i].rows[k].compilers;
                        smp.running = par_cases[i].rows[k].running;
                        summary_add(&s, &smp);
                }
                assert_int_equal(par_read(&s, par_cases[i].ncpu, &p), par_cases[i].ret);
                if (par_cases[i].ret < 0)
                        continue;
                assert_true(p.busy_s == par_cases[i].busy);
                assert_true(p.under_s == par_cases[i].under);
                assert_true(p.alone_s == par_cases[i].alone);
                assert_true(p.worth);
                assert_int_equal(par_render(&p, &b), 0);
                assert_string_equal(b.p, par_cases[i].text);
                dbuf_release(&b);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_jobs),
            cmocka_unit_test(test_par),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
