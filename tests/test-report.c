/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/baseline.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/report.h"
#include "util/macro.h"

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

static void test_escape(void **state)
{
        static const struct {
                const char *in;
                size_t len; /* 0: strlen */
                const char *html, *md;
        } cases[] = {
            {"plain", 0, "plain", "plain"},
            {"<script>alert('x')</script>", 0, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;",
             "&lt;script&gt;alert\\(&#39;x&#39;\\)&lt;/script&gt;"},
            {"a&b \"q\"", 0, "a&amp;b &quot;q&quot;", "a&amp;b &quot;q&quot;"},
            {"bad \xff byte", 0, "bad \xef\xbf\xbd byte", "bad \xef\xbf\xbd byte"},
            {"cut \xe2\x82", 0, "cut \xef\xbf\xbd\xef\xbf\xbd", "cut \xef\xbf\xbd\xef\xbf\xbd"},
            {"esc\x1b[31m", 0, "esc?[31m", "esc?\\[31m"},
            {"a|b`c`", 0, "a|b`c`", "a\\|b\\`c\\`"},
            {"[x](http://e)", 0, "[x](http://e)", "\\[x\\]\\(http://e\\)"},
            {"![x](u)", 0, "![x](u)", "\\!\\[x\\]\\(u\\)"},
            {"a\\b", 0, "a\\b", "a\\\\b"},
            {"two\nlines", 0, "two\nlines", "two lines"},
            {"nul\0inside", 10, "nul?inside", "nul?inside"},
            {"\xc3\xa9t\xc3\xa9", 0, "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
                struct dbuf a = DBUF_INIT, b = DBUF_INIT;
                struct dwriter wa = DWRITER_INIT(&a), wb = DWRITER_INIT(&b);

                report_html_escape(&wa, cases[i].in, len);
                report_md_escape(&wb, cases[i].in, len);
                assert_int_equal(wa.err, 0);
                assert_int_equal(wb.err, 0);
                assert_true(a.len > 0 && b.len > 0);
                assert_string_equal(a.p, cases[i].html);
                assert_string_equal(b.p, cases[i].md);
                dbuf_release(&a);
                dbuf_release(&b);
        }
}

/* n rows at 1 s of a flat 10, with spikes (row, value) */
static void series(double *t, double *v, size_t n, const size_t *rows, const double *vals,
                   size_t nspikes)
{
        for (size_t i = 0; i < n; i++) {
                t[i] = (double)i;
                v[i] = 10;
        }
        for (size_t k = 0; k < nspikes; k++)
                v[rows[k]] = vals[k];
}

static void test_downsample(void **state)
{
        static const struct {
                size_t n, buckets, nspikes;
                size_t rows[3];
                double vals[3];
        } cases[] = {
            {86400, 600, 1, {43210}, {99}},        /* a one-sample spike in a day */
            {86400, 600, 2, {0, 86399}, {-5, 77}}, /* at both ends */
            {86400, 600, 2, {101, 102}, {1, 60}},  /* peak and trough in one bucket */
            {10, 600, 1, {3}, {42}},               /* fewer rows than buckets */
            {1, 600, 0, {0}, {0}},
        };
        (void)state;
        for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
                size_t n = cases[c].n;
                double *t = malloc(n * sizeof(double)), *v = malloc(n * sizeof(double));
                struct report_pt *pts = malloc(2 * cases[c].buckets * sizeof(*pts));
                size_t k;

                assert_non_null(t);
                assert_non_null(v);
                assert_non_null(pts);
                series(t, v, n, cases[c].rows, cases[c].vals, cases[c].nspikes);
                k = report_downsample(t, v, n, cases[c].buckets, pts);
                assert_true(k >= 1 && k <= 2 * cases[c].buckets && k <= n);
                for (size_t i = 1; i < k; i++)
                        assert_true(pts[i].t > pts[i - 1].t);
                for (size_t s = 0; s < cases[c].nspikes; s++) {
                        bool found = false;

                        for (size_t i = 0; i < k; i++)
                                found |= pts[i].t == (double)cases[c].rows[s] &&
                                         pts[i].v == cases[c].vals[s];
                        assert_true(found);
                }
                free(t);
                free(v);
                free(pts);
        }
}

static void test_downsample_nan(void **state)
{
        double t[] = {0, 1, NAN, 3, 4}, v[] = {NAN, 5, 7, NAN, 2};
        struct report_pt pts[8];

        (void)state;
        assert_int_equal(report_downsample(t, v, 5, 4, pts), 2);
        assert_true(pts[0].t == 1 && pts[0].v == 5);
        assert_true(pts[1].t == 4 && pts[1].v == 2);
        assert_int_equal(report_downsample(t, v, 0, 4, pts), 0);
}

/* A day at 1 s with a one-sample memory spike: the page stays under
 * 1 MiB, names no URL, and shows the spike with its stage and context. */
static void test_day_report(void **state)
{
        static struct run_facts facts;
        char *argv[] = {M("make"), M("-j8"), NULL};
        struct run_info ri = {.run_id = M("day"),
                              .argv = argv,
                              .host = M("h<1>"),
                              .start_epoch = 1e9,
                              .end_epoch = 1e9 + 86400,
                              .exit_code = 0,
                              .finished = true};
        struct report_data d;
        struct summary sum;
        struct dbuf out = DBUF_INIT;
        struct targets *ts = calloc(1, sizeof(*ts));
        struct run_model m = {.run = &ri, .summary = &sum, .facts = &facts, .targets = ts};

        (void)state;
        /* the most BuildKit steps the model keeps, over 8 targets, with a
         * name as long as it keeps: the page still stays under 1 MiB */
        assert_non_null(ts);
        targets_init(ts);
        for (uint32_t i = 0; i < TARGETS_STEPS_MAX; i++) {
                struct step_fact f = {.target = (int)(i % 8),
                                      .start_s = (double)i * 20,
                                      .end_s = (double)i * 20 + 5 + (double)(i % 50),
                                      .step = true,
                                      .cached = i % 3 == 0};
                char tn[16];
                snprintf(tn, sizeof(tn), "t%u", i % 8);
                (void)targets_get(ts, tn, strlen(tn));
                memset(f.name, 'x', TARGET_STEP_NAME_MAX);
                assert_int_equal(targets_add_step(ts, &f), 0);
        }
        report_data_init(&d);
        summary_init(&sum, NULL);
        for (size_t i = 0; i < 86400; i++) {
                struct sample s;

                sample_clear(&s);
                s.epoch = 1e9 + (double)i;
                s.elapsed_s = (double)i;
                s.mem_used_bytes = (i == 43210 ? 20000.0 : 3000.0) * SAMPLE_MIB;
                s.mem_avail_bytes = (i == 43210 ? 500.0 : 17500.0) * SAMPLE_MIB;
                s.cpu_pct = (double)(i % 100);
                s.load1 = 1;
                s.disk_avail_bytes = 50 * SAMPLE_GIB;
                s.compilers = (double)(i % 7);
                s.stage = i < 40000 ? "configure" : "compile <&>";
                s.context = i == 43210 ? "[ 50%] Building CXX object huge.cc.o" : "";
                summary_add(&sum, &s);
                assert_int_equal(report_data_add(&d, &s), 0);
        }
        targets_facts(NULL, &ri, &facts);
        assert_int_equal(report_render_html(&d, &m, &out), 0);
        assert_true(out.len < 1024 * 1024);
        assert_null(strstr(out.p, "http:"));
        assert_null(strstr(out.p, "https:"));
        /* one inline script (the hover read-out), loading nothing */
        assert_non_null(strstr(out.p, "<script>"));
        assert_null(strstr(strstr(out.p, "<script>") + 1, "<script"));
        assert_null(strstr(out.p, "src="));
        assert_non_null(strstr(out.p,
                               "peak used 19.53 GiB at 12h00m10s, stage compile &lt;&amp;&gt;"
                               ", context [ 50%] Building CXX object huge.cc.o"));
        assert_non_null(strstr(out.p, "h&lt;1&gt;"));
        assert_int_equal(d.nbands, 2);
        assert_non_null(strstr(out.p, "400 of 4096 shown"));
        dbuf_release(&out);
        targets_release(ts);
        free(ts);
        report_data_release(&d);
}

/* One run of a job for the baseline: two targets (one named to be
 * escaped), a unit, BASELINE_STEPS_MAX steps. */
static void job_run(struct baseline_run *r, double dur, double app_dur, double app_cache)
{
        char name[32];

        baseline_run_init(r);
        r->fig.duration_s = dur;
        r->fig.cpu_s = dur / 2;
        r->fig.mem_anon_peak_mb = 800;
        r->fig.mem_peak_mb = 1200;
        r->fig.oom_kills = 0;
        baseline_add_target(r, "app", app_dur, app_cache);
        baseline_add_target(r, "<evil>", 20, 0.5);
        baseline_add_unit(r, "x.c", "cc1", 700);
        for (int i = 0; i < BASELINE_STEPS_MAX; i++) {
                assert_true(snprintf(name, sizeof(name), "step%d", i) < (int)sizeof(name));
                baseline_add_step(r, name, 10 + i, NAN);
        }
}

static size_t count(const char *hay, const char *needle)
{
        size_t n = 0;

        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* The report's small multiples: the run's four figures, then per target,
 * unit and step (the flagged ones first, at most 12, names escaped, none
 * for a target no earlier run had). */
static void test_baseline_multiples(void **state)
{
        struct baseline_run win[6], cur;
        static struct baseline b;
        static struct summary s;
        struct dbuf out = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&out);
        const char *named;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(win); i++)
                job_run(&win[i], 100 + (double)i, 50 + (double)i, 0.9);
        job_run(&cur, 300, 250, 0.1);
        baseline_add_target(&cur, "docs", 30, 1);
        /* the last step slower: the 21st named finding, flagged */
        assert_string_equal(cur.steps[BASELINE_STEPS_MAX - 1].name, "step15");
        cur.steps[BASELINE_STEPS_MAX - 1].a = 1000;
        baseline_derive("j", &cur, win, ARRAY_SIZE(win), &b);
        s.baseline = &b;
        report_baseline_html(&w, &s);
        assert_int_equal(w.err, 0);
        named = strstr(out.p, "<div class=\"sm-named\">");
        assert_non_null(named);
        /* the run's own, before the named ones */
        assert_true(strstr(out.p, "<figcaption>wall time</figcaption>") < named);
        assert_non_null(strstr(out.p, "<figcaption>memory peak</figcaption>"));
        assert_int_equal(count(out.p, "<figure"), 4 + 12);
        assert_int_equal(count(named, "<figure"), 12);
        /* flagged first: app's cache ratio and duration */
        assert_true(strstr(named, "<figcaption>app layer cache</figcaption>") <
                    strstr(named, "<figcaption>app time</figcaption>"));
        assert_true(strstr(named, "<figcaption>app time</figcaption>") <
                    strstr(named, "<figcaption>step step15 time</figcaption>"));
        assert_true(strstr(named, "<figcaption>step step15 time</figcaption>") <
                    strstr(named, "<figcaption>&lt;evil&gt; layer cache</figcaption>"));
        assert_non_null(strstr(named, "<figcaption>x.c peak</figcaption>"));
        assert_non_null(strstr(named, "<figcaption>step step0 time</figcaption>"));
        assert_null(strstr(named, "<figcaption>step step14 time</figcaption>")); /* past 12 */
        assert_null(strstr(out.p, "<evil>"));
        assert_null(strstr(out.p, "docs time</figcaption>"));
        /* this run's bar marked, 7 bars in each chart */
        assert_int_equal(count(named, "fill=\"#c0392b\""), 12);
        assert_int_equal(count(named, "<rect "), 12 * 7);
        dbuf_release(&out);
        /* a job's first run: no chart at all */
        out = (struct dbuf)DBUF_INIT;
        w = (struct dwriter)DWRITER_INIT(&out);
        baseline_derive("j", &cur, win, 0, &b);
        report_baseline_html(&w, &s);
        assert_null(strstr(out.p, "<figure"));
        dbuf_release(&out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_escape),
            cmocka_unit_test(test_downsample),
            cmocka_unit_test(test_downsample_nan),
            cmocka_unit_test(test_day_report),
            cmocka_unit_test(test_baseline_multiples),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
