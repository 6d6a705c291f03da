/* SPDX-License-Identifier: MIT */
/* The usual of a job and a run's findings (issue 23): model/baseline.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/baseline.h"
#include "render/short.h"
#include "util/dbuf.h"
#include "util/macro.h"

#define W_MAX 20
#define assert_near(a, b, e) assert_true(fabs((a) - (b)) <= (e))

static const struct baseline_rule dur_rule = {false, 0.1, 5.0, 0.5};
static const struct baseline_rule ratio_rule = {true, 0.1, 0.05, 0.01};

/* ---- the rule ---- */

static const struct {
        const char *name;
        const struct baseline_rule *rule;
        double window[W_MAX];
        size_t n;
        double value;
        int verdict;
        double usual; /* NAN: not checked */
} judge_cases[] = {
    {"too few points", &dur_rule, {100, 101}, 2, 500, BASELINE_UNKNOWN, 100.5},
    {"none at all", &dur_rule, {0}, 0, 500, BASELINE_UNKNOWN, NAN},
    {"current unknown", &dur_rule, {100, 101, 99}, 3, NAN, BASELINE_UNKNOWN, 100},
    {"three is enough", &dur_rule, {100, 101, 99}, 3, 200, BASELINE_REGRESSION, 100},
    {"step change up", &dur_rule, {550, 560, 548, 552, 555, 549}, 6, 840, BASELINE_REGRESSION, 551},
    {"step change down",
     &dur_rule,
     {550, 560, 548, 552, 555, 549},
     6,
     300,
     BASELINE_IMPROVEMENT,
     551},
    {"within noise", &dur_rule, {550, 560, 548, 552, 555, 549}, 6, 566, BASELINE_NOISE, 551},
    /* one huge outlier in the window moves neither the median nor the MAD */
    {"outlier in window",
     &dur_rule,
     {100, 102, 98, 5000, 101, 99},
     6,
     140,
     BASELINE_REGRESSION,
     100.5},
    /* a noisy window: +30 % is within 3 scaled MADs */
    {"noisy window", &dur_rule, {100, 160, 70, 130, 90, 150, 60}, 7, 130, BASELINE_NOISE, 100},
    /* slow drift: each run a little slower; the next step of it is noise */
    {"slow drift",
     &dur_rule,
     {300, 306, 312, 318, 324, 330, 336, 342},
     8,
     348,
     BASELINE_NOISE,
     321},
    /* zero spread: tiny changes are not findings (the floors), large are */
    {"zero spread tiny", &dur_rule, {10, 10, 10, 10}, 4, 11, BASELINE_NOISE, 10},
    {"zero spread under floor", &dur_rule, {10, 10, 10, 10}, 4, 14.9, BASELINE_NOISE, 10},
    {"zero spread past floor", &dur_rule, {10, 10, 10, 10}, 4, 16, BASELINE_REGRESSION, 10},
    /* 10 % minimum effect on a long build: +40 s of 1000 s is not one */
    {"under min effect", &dur_rule, {1000, 1000, 1000, 1000}, 4, 1040, BASELINE_NOISE, 1000},
    {"NaN skipped", &dur_rule, {100, NAN, 101, NAN, 99}, 5, 200, BASELINE_REGRESSION, 100},
    {"NaN leaves too few", &dur_rule, {100, NAN, NAN, 99}, 4, 200, BASELINE_UNKNOWN, 99.5},
    /* ratios: lower is worse */
    {"cache collapses", &ratio_rule, {0.9, 0.92, 0.91, 0.9}, 4, 0.12, BASELINE_REGRESSION, 0.905},
    {"cache rises", &ratio_rule, {0.3, 0.32, 0.31, 0.3}, 4, 0.9, BASELINE_IMPROVEMENT, 0.305},
    {"cache wobbles", &ratio_rule, {0.9, 0.92, 0.91, 0.9}, 4, 0.87, BASELINE_NOISE, 0.905},
};

static void test_judge(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(judge_cases); i++) {
                struct baseline_stat st;

                print_message("case %s\n", judge_cases[i].name);
                baseline_judge(judge_cases[i].value, judge_cases[i].window, judge_cases[i].n,
                               judge_cases[i].rule, &st);
                assert_string_equal(baseline_verdict_name(st.verdict),
                                    baseline_verdict_name(judge_cases[i].verdict));
                if (isnan(judge_cases[i].usual))
                        assert_true(isnan(st.usual));
                else
                        assert_near(st.usual, judge_cases[i].usual, 1e-9);
        }
}

static void test_median_mad(void **state)
{
        double v[] = {1, 2, 3, 4, 100, NAN}, scratch[6], med, sp;

        (void)state;
        assert_int_equal(baseline_median_mad(v, 6, scratch, &med, &sp), 5);
        assert_near(med, 3, 1e-12);
        /* |v - 3| = 2 1 0 1 97: MAD 1 */
        assert_near(sp, 1.4826, 1e-12);
        assert_int_equal(baseline_median_mad(v + 5, 1, scratch, &med, &sp), 0);
        assert_true(isnan(med) && isnan(sp));
}

static const struct {
        const char *argv[6];
        long jobs;
} jobs_cases[] = {
    {{"make", "-j8", NULL}, 8},       {{"make", "-j", "4", "all", NULL}, 4},
    {{"ninja", "--jobs=3", NULL}, 3}, {{"cargo", "build", "--jobs", "12", NULL}, 12},
    {{"make", "-jx", NULL}, -1},      {{"make", "-j", NULL}, -1},
    {{"sleep", "1", NULL}, -1},
};

static void test_argv_jobs(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(jobs_cases); i++) {
                char words[6][16], *argv[6] = {NULL};

                for (size_t j = 0; jobs_cases[i].argv[j]; j++) {
                        assert_true(snprintf(words[j], sizeof(words[j]), "%s",
                                             jobs_cases[i].argv[j]) < (int)sizeof(words[j]));
                        argv[j] = words[j];
                }
                assert_int_equal(baseline_argv_jobs(argv), jobs_cases[i].jobs);
        }
}

/* ---- findings ---- */

static void run_of(struct baseline_run *r, double dur, double cache)
{
        baseline_run_init(r);
        r->fig.duration_s = dur;
        r->fig.cpu_s = dur / 2;
        r->fig.mem_anon_peak_mb = 800;
        r->fig.mem_peak_mb = 1200;
        r->fig.oom_kills = 0;
        r->ncpu = 8;
        r->mem_total_mb = 32768;
        r->jobs = 8;
        baseline_add_target(r, "pytorch", dur - 10, cache);
        baseline_add_unit(r, "conv.cpp", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", 700);
}

static const struct baseline_finding *find(const struct baseline *b, const char *fig,
                                           const char *target)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->f[i].figure, fig) == 0 && strcmp(b->f[i].target, target) == 0)
                        return &b->f[i];
        return NULL;
}

static void test_derive_cache_collapse(void **state)
{
        struct baseline_run win[12], cur;
        static struct baseline b;
        const struct baseline_finding *f;
        struct dbuf out = {0};

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(win); i++)
                run_of(&win[i], 550 + (double)(i % 3) * 5, 0.91);
        run_of(&cur, 842, 0.12);
        baseline_derive("ci/build", &cur, win, ARRAY_SIZE(win), &b);
        assert_int_equal(b.runs, 12);
        f = find(&b, "duration_s", "");
        assert_non_null(f);
        /* the window oldest first, then this run's */
        assert_int_equal(f->nhist, 13);
        assert_near(f->hist[12], 842, 1e-9);
        assert_near(f->hist[0], 560, 1e-9);  /* win[11], the oldest */
        assert_near(f->hist[11], 550, 1e-9); /* win[0], the latest */
        assert_near(find(&b, "cpu_s", "")->hist[12], 421, 1e-9);
        assert_int_equal(f->st.verdict, BASELINE_REGRESSION);
        assert_near(f->st.usual, 555, 1e-9);
        assert_non_null(strstr(f->cause, "layer cache of pytorch 12 %, usually 91 %"));
        f = find(&b, "target_cache_ratio", "pytorch");
        assert_non_null(f);
        assert_int_equal(f->st.verdict, BASELINE_REGRESSION);
        f = find(&b, "mem_peak_mb", "");
        assert_non_null(f);
        assert_int_equal(f->st.verdict, BASELINE_NOISE);
        assert_string_equal(f->cause, "");
        assert_int_equal(render_baseline_short(&b, &out), 0);
        print_message("%s", out.p);
        assert_non_null(strstr(out.p, "buildtel: slower than usual: 14m02s against 9m15s (+52 %, "
                                      "last 12 runs)"));
        assert_non_null(strstr(out.p, "layer cache of pytorch: 12 % against 91 %"));
        dbuf_release(&out);
}

static void test_derive_causes(void **state)
{
        struct baseline_run win[6], cur;
        static struct baseline b;
        const struct baseline_finding *f;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(win); i++)
                run_of(&win[i], 100 + (double)i, 0.5);
        /* the same cache, a new compiler and -j 2 */
        run_of(&cur, 300, 0.5);
        cur.jobs = 2;
        cur.units[0].tool[0] = 'X';
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        f = find(&b, "duration_s", "");
        assert_int_equal(f->st.verdict, BASELINE_REGRESSION);
        assert_non_null(strstr(f->cause, "new compiler X"));
        /* only -j changed */
        run_of(&cur, 300, 0.5);
        cur.jobs = 2;
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        assert_string_equal(find(&b, "duration_s", "")->cause, "-j 2, usually -j 8");
        /* the host changed */
        run_of(&cur, 300, 0.5);
        cur.ncpu = 2;
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        assert_string_equal(find(&b, "duration_s", "")->cause, "2 CPUs, usually 8");
        /* a new target */
        run_of(&cur, 300, 0.5);
        baseline_add_target(&cur, "docs", 12, 0);
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        assert_string_equal(find(&b, "duration_s", "")->cause, "new target docs");
        f = find(&b, "target_duration_s", "docs");
        assert_int_equal(f->st.verdict, BASELINE_UNKNOWN);
        /* its series: no earlier run had it, then this run's */
        assert_int_equal(f->nhist, ARRAY_SIZE(win) + 1);
        for (size_t i = 0; i < ARRAY_SIZE(win); i++)
                assert_true(isnan(f->hist[i]));
        assert_near(f->hist[ARRAY_SIZE(win)], 12, 1e-9);
        /* a target's series, the window oldest first */
        f = find(&b, "target_duration_s", "pytorch");
        assert_near(f->hist[0], 100 + 5 - 10, 1e-9);
        assert_near(f->hist[5], 100 - 10, 1e-9);
        assert_near(f->hist[6], 300 - 10, 1e-9);
        /* faster: an improvement, the right word */
        run_of(&cur, 40, 0.5);
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        assert_int_equal(find(&b, "duration_s", "")->st.verdict, BASELINE_IMPROVEMENT);
}

static void test_derive_few(void **state)
{
        struct baseline_run win[1], cur;
        static struct baseline b;
        struct dbuf out = {0};

        (void)state;
        run_of(&win[0], 10, 0.5);
        run_of(&cur, 100, 0.5);
        baseline_derive("few", &cur, win, 1, &b);
        assert_int_equal(b.runs, 1);
        assert_int_equal(baseline_flagged(&b), 0);
        for (size_t i = 0; i < b.n; i++)
                assert_int_equal(b.f[i].st.verdict, BASELINE_UNKNOWN);
        assert_int_equal(render_baseline_short(&b, &out), 0);
        assert_int_equal(out.len, 0); /* too few for a usual: nothing that changes a decision */
        dbuf_release(&out);
        /* within noise: nothing said */
        {
                struct baseline_run w6[6];

                for (size_t i = 0; i < ARRAY_SIZE(w6); i++)
                        run_of(&w6[i], 100 + (double)i, 0.5);
                run_of(&cur, 103, 0.5);
                baseline_derive("few", &cur, w6, 6, &b);
                assert_int_equal(baseline_flagged(&b), 0);
                out.len = 0;
                assert_int_equal(render_baseline_short(&b, &out), 0);
                assert_int_equal(out.len, 0);
                dbuf_release(&out);
        }
}

static void test_steps_kept(void **state)
{
        struct baseline_run r;
        char name[32];

        (void)state;
        baseline_run_init(&r);
        for (int i = 0; i < BASELINE_STEPS_MAX + 10; i++) {
                assert_true(snprintf(name, sizeof(name), "s%d", i) < (int)sizeof(name));
                baseline_add_step(&r, name, (double)((i * 7) % 31), 10);
        }
        assert_int_equal(r.nsteps, BASELINE_STEPS_MAX);
        /* the fastest kept is at least as slow as any dropped: 26 steps of
         * distinct durations 0..30 (mod 31) keep the 16 slowest */
        for (size_t i = 0; i < r.nsteps; i++)
                assert_true(r.steps[i].a >= 10);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_judge),         cmocka_unit_test(test_median_mad),
            cmocka_unit_test(test_argv_jobs),     cmocka_unit_test(test_derive_cache_collapse),
            cmocka_unit_test(test_derive_causes), cmocka_unit_test(test_derive_few),
            cmocka_unit_test(test_steps_kept),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
