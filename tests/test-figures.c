/* SPDX-License-Identifier: MIT */
/* The derived figures (model/figures.h), each row from the header's
 * contract: the ratios' unknowns, the run's duration to its end or its last
 * sample, and where ninja started, with the slack at both ends. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "model/figures.h"
#include "model/run.h"
#include "util/macro.h"

#include "helpers/test.h"

/* Exactly want (every want below is exact in binary), or both NAN. */
static void check_double(double got, double want)
{
        if (isnan(want) ? !isnan(got) : !(got == want))
                fail_msg("got %.17g, want %.17g", got, want);
}

static const struct {
        const char *what;
        int64_t steps, cached;
        double want;
} cached_cases[] = {
    {"some cached", 10, 3, 0.3},
    {"none cached", 10, 0, 0.0},
    {"all cached", 10, 10, 1.0},
    {"one step, cached", 1, 1, 1.0},
    {"the most steps, all cached", INT64_MAX, INT64_MAX, 1.0},
    {"no steps", 0, 0, NAN},
    {"no steps, some cached", 0, 5, NAN},
    {"steps unknown", -1, 0, NAN},
    {"steps unknown, some cached", -1, 3, NAN},
    {"steps INT64_MIN", INT64_MIN, 0, NAN},
    {"cached unknown", 10, -1, NAN},
    {"cached INT64_MIN", 10, INT64_MIN, NAN},
    {"both unknown", -1, -1, NAN},
};

TEST(cached_ratio)
{
        FOREACH_ROW(i, cached_cases) {
                test_row("%s", cached_cases[i].what);
                check_double(figure_cached_ratio(cached_cases[i].steps, cached_cases[i].cached),
                             cached_cases[i].want);
        }
}

static const struct {
        const char *what;
        uint64_t hits, misses;
        double want;
} hit_cases[] = {
    {"three in four", 3, 1, 0.75},
    {"misses only", 0, 5, 0.0},
    {"hits only", 5, 0, 1.0},
    {"half", 1, 1, 0.5},
    {"none", 0, 0, NAN},
    {"half, a sum that wraps in 64 bits", UINT64_MAX, UINT64_MAX, 0.5},
    {"the most hits only", UINT64_MAX, 0, 1.0},
    {"the most misses only", 0, UINT64_MAX, 0.0},
};

TEST(hit_ratio)
{
        FOREACH_ROW(i, hit_cases) {
                test_row("%s", hit_cases[i].what);
                check_double(figure_hit_ratio(hit_cases[i].hits, hit_cases[i].misses),
                             hit_cases[i].want);
        }
}

/* A compiler cache's counts over a run from its first and last blocks. */
static const struct {
        const char *what;
        uint64_t fh, fm, lh, lm;
        uint64_t want_h, want_m;
        bool reset;
} cc_delta_cases[] = {
    {"counted up", 10, 5, 15, 6, 5, 1, false},
    {"nothing new", 10, 5, 10, 5, 0, 0, false},
    {"from zero", 0, 0, 7, 3, 7, 3, false},
    {"hits reset (ccache -z), misses up: since the reset", 20, 9, 19, 9, 19, 9, true},
    {"misses reset only", 20, 9, 25, 2, 25, 2, true},
    {"both reset to zero", 20, 9, 0, 0, 0, 0, true},
    {"a new sccache server, counted past the old", 100, 50, 3, 60, 3, 60, true},
    {"the largest counters", 0, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, false},
    {"the largest, then reset", UINT64_MAX, UINT64_MAX, 1, 1, 1, 1, true},
};

TEST(cc_delta)
{
        FOREACH_ROW(i, cc_delta_cases) {
                uint64_t h = 42, m = 42;

                test_row("%s", cc_delta_cases[i].what);
                assert_int_equal(figure_cc_delta(cc_delta_cases[i].fh, cc_delta_cases[i].fm,
                                                 cc_delta_cases[i].lh, cc_delta_cases[i].lm, &h,
                                                 &m),
                                 cc_delta_cases[i].reset);
                assert_true(h == cc_delta_cases[i].want_h);
                assert_true(m == cc_delta_cases[i].want_m);
        }
}

/* The run's compiler-cache figures over its targets, and its memory peak
 * as shown. */
static const struct {
        const char *what;
        int64_t hits[3], misses[3];
        double want_ratio;
} run_cc_cases[] = {
    {"no target knew", {-1, -1, -1}, {-1, -1, -1}, NAN},
    {"one target", {3, -1, -1}, {1, -1, -1}, 0.75},
    {"summed, the unknown skipped", {3, 5, -1}, {1, -1, 0}, 0.75},
    {"known, nothing compiled", {0, 0, -1}, {0, 0, -1}, NAN},
    {"all misses", {0, 0, 0}, {2, 2, 4}, 0.0},
};

TEST(run_figures_cc)
{
        FOREACH_ROW(i, run_cc_cases) {
                struct run_figures f;

                test_row("%s", run_cc_cases[i].what);
                run_figures_init(&f);
                check_double(run_figures_cc_ratio(&f), NAN);
                for (size_t k = 0; k < 3; k++)
                        run_figures_cc_add(&f, run_cc_cases[i].hits[k], run_cc_cases[i].misses[k]);
                check_double(run_figures_cc_ratio(&f), run_cc_cases[i].want_ratio);
        }
}

TEST(run_figures_mem_peak)
{
        struct run_figures f;

        run_figures_init(&f);
        check_double(run_figures_mem_peak(&f), NAN);
        f.mem_sampled_peak_mb = 700;
        check_double(run_figures_mem_peak(&f), 700); /* no memory.peak: the sampled */
        f.mem_peak_mb = 900;
        check_double(run_figures_mem_peak(&f), 900); /* the kernel's counter wins */
        check_double(f.cpu_s, NAN);
        assert_int_equal(f.exit_code, -1);
        assert_false(f.steps_set);
}

/* A run's start, in whole seconds: its differences with whole seconds and
 * halves are exact, and one ulp is 2^-22 s (T0 is in [2^30, 2^31)). */
#define T0 1764430820.0
#define ULP 0x1p-22

static const struct {
        double start, end, last;
        double want;
        bool to_last;
} duration_cases[] = {
    /* ended: end minus start, whatever the samples say */
    {T0, T0 + 90.5, T0 + 88.0, 90.5, false},
    {T0, T0 + 90.5, NAN, 90.5, false},
    {T0, T0, NAN, 0.0, false},
    /* killed or running: to the last sample */
    {T0, NAN, T0 + 42.5, 42.5, true},
    {T0, INFINITY, T0 + 42.5, 42.5, true},
    /* and no sample: nothing else is known */
    {T0, NAN, NAN, NAN, false},
    {T0, NAN, INFINITY, NAN, false},
    /* the start unknown */
    {NAN, T0 + 90.5, T0 + 88.0, NAN, false},
    {NAN, NAN, T0 + 88.0, NAN, false},
    {-INFINITY, T0, T0, NAN, false},
    {NAN, NAN, NAN, NAN, false},
};

TEST(run_duration)
{
        FOREACH_ROW(i, duration_cases) {
                bool to_last = !duration_cases[i].to_last;

                test_row("start %.17g, end %.17g, last %.17g", duration_cases[i].start,
                         duration_cases[i].end, duration_cases[i].last);
                check_double(figure_run_duration(duration_cases[i].start, duration_cases[i].end,
                                                 duration_cases[i].last, &to_last),
                             duration_cases[i].want);
                assert_int_equal(to_last, duration_cases[i].to_last);
                /* ret_to_last may be NULL */
                check_double(figure_run_duration(duration_cases[i].start, duration_cases[i].end,
                                                 duration_cases[i].last, NULL),
                             duration_cases[i].want);
        }
}

/* One word per outcome, for every surface (issue 35): a signal by its
 * name (never "signal 1" for SIGPIPE), OOM-killed when the build failed
 * after an OOM kill, whatever status followed. */
static const struct {
        int exit_code, term_signal;
        double oom_kills;
        const char *want;
} outcome_cases[] = {
    {0, 0, 0, "ok"},
    {0, 0, NAN, "ok"},
    {0, 0, 1, "ok"}, /* a victim, and the build went on to succeed */
    {2, 0, 0, "exit 2"},
    {127, 0, NAN, "exit 127"},
    {-1, 13, 0, "SIGPIPE"},
    {-1, 9, 0, "SIGKILL"},
    {-1, 9, 1, "OOM-killed"},
    {2, 0, 3, "OOM-killed"}, /* make's exit after its compiler's kill */
    {-1, 0, 0, "unknown"},
    {-1, 0, 2, "unknown"},
};

TEST(outcome)
{
        FOREACH_ROW(i, outcome_cases) {
                char buf[FIGURE_OUTCOME_LEN];

                test_row("exit %d, signal %d, oom %g", outcome_cases[i].exit_code,
                         outcome_cases[i].term_signal, outcome_cases[i].oom_kills);
                assert_string_equal(figure_outcome(outcome_cases[i].exit_code,
                                                   outcome_cases[i].term_signal,
                                                   outcome_cases[i].oom_kills, buf),
                                    outcome_cases[i].want);
        }
}

#define T_END (T0 + 100.0)

static const struct {
        double end; /* the run's; the start is T0 */
        double mtime;
        int64_t max_end_ms;
        int ret;
        double off;  /* when ret is 0 */
        bool before; /* when ret is -ESRCH */
} ninja_cases[] = {
    /* ninja started max_end_ms before the log's mtime */
    {T_END, T0 + 60.0, 50000, 0, 10.0, false},
    {T_END, T0 + 60.0, 0, 0, 60.0, false},
    {T_END, T0 + 60.0, 60000, 0, 0.0, false},
    {T_END, T0 + 60.0, 59500, 0, 0.5, false},
    /* never before the run */
    {T_END, T0 + 60.0, 60500, 0, 0.0, false},
    {T_END, T0 + 60.0, INT64_MAX, 0, 0.0, false},
    /* up to a second before the start: still this run's */
    {T_END, T0 - 1.0, 0, 0, 0.0, false},
    {T_END, T0 - 0.5, 0, 0, 0.0, false},
    {T_END, T0 - 1.0 - ULP, 0, -ESRCH, 0, true},
    {T_END, T0 - 3600.0, 1000, -ESRCH, 0, true},
    /* up to FIGURE_NINJA_SLACK_S after the end */
    {T_END, T_END, 1000, 0, 99.0, false},
    {T_END, T_END + FIGURE_NINJA_SLACK_S, 1000, 0, 104.0, false},
    {T_END, T_END + FIGURE_NINJA_SLACK_S + ULP, 1000, -ESRCH, 0, false},
    {T_END, T_END + 3600.0, 1000, -ESRCH, 0, false},
    /* still running (or killed): no end to be after */
    {NAN, T0 + 3600.0, 1000, 0, 3599.0, false},
    {NAN, T0 - 1.5, 0, -ESRCH, 0, true},
};

TEST(ninja_offset)
{
        /* the rows just past the slack are the nearest doubles past it */
        assert_true(T0 - 1.0 - ULP == nextafter(T0 - 1.0, 0));
        assert_true(T_END + FIGURE_NINJA_SLACK_S + ULP ==
                    nextafter(T_END + FIGURE_NINJA_SLACK_S, INFINITY));
        FOREACH_ROW(i, ninja_cases) {
                struct run_info ri = {
                    .start_epoch = T0, .end_epoch = ninja_cases[i].end, .exit_code = -1};
                double off = -42.0;
                bool before = !ninja_cases[i].before;
                int r;

                test_row("end %.17g, mtime %.17g, max_end %lld ms", ninja_cases[i].end,
                         ninja_cases[i].mtime, (long long)ninja_cases[i].max_end_ms);
                r = figure_ninja_offset(&ri, ninja_cases[i].mtime, ninja_cases[i].max_end_ms, &off,
                                        &before);
                assert_int_equal(r, ninja_cases[i].ret);
                if (r == 0) {
                        check_double(off, ninja_cases[i].off);
                } else {
                        check_double(off, -42.0); /* untouched */
                        assert_int_equal(before, ninja_cases[i].before);
                }
                /* ret_before may be NULL */
                off = -42.0;
                assert_int_equal(figure_ninja_offset(&ri, ninja_cases[i].mtime,
                                                     ninja_cases[i].max_end_ms, &off, NULL),
                                 ninja_cases[i].ret);
                check_double(off, r == 0 ? ninja_cases[i].off : -42.0);
        }
}

RUN_TESTS()
