/* SPDX-License-Identifier: MIT */
/* model/targets.c: targets_facts(), the one rule that turns what the log,
 * the metadata file and buildx history said about a target into the one
 * value of each figure every output reports (targets.h states the rule).
 * One table line per disagreement between the sources. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/run.h"
#include "model/targets.h"
#include "util/macro.h"

/* How the run ended. */
enum end { END_OK, END_FAIL, END_SIGNAL, END_WATCH, END_KILLED };

static struct run_info run_of(enum end e)
{
        struct run_info ri = {.start_epoch = 1000, .end_epoch = 1090.5, .finished = true};

        ri.exit_code = e == END_OK ? 0 : e == END_FAIL ? 2 : -1;
        ri.term_signal = e == END_SIGNAL ? 15 : 0;
        if (e == END_KILLED) {
                ri.finished = false;
                ri.end_epoch = NAN;
        }
        return ri;
}

/* One case a line or two, the columns as declared. */
/* clang-format off */
static const struct fact_case {
        const char *what;
        enum end end;
        bool buildkit;
        /* the log */
        double first, last;
        uint32_t steps, cached, errors, canceled;
        bool done;
        const char *log_builder, *meta_builder; /* run's "#0 building with", the metadata file's */
        /* buildx history; NULL status: not imported */
        const char *h_status;
        double h_duration;
        bool h_steps_set;
        uint32_t h_steps, h_cached;
        /* expected */
        double duration; /* NAN: unknown */
        bool steps_set;
        uint32_t want_steps, want_cached;
        int success;
        const char *builder;
} cases[] = {
    {"log only, exported", END_FAIL, true, 1.0, 4.5, 5, 2, 0, 0, true, "b0", NULL,
     NULL, 0, false, 0, 0, /* -> */ 3.5, true, 5, 2, TARGET_BUILT, "b0"},
    {"log only, no export seen, run exited 0", END_OK, true, 2.0, 2.0, 3, 3, 0, 0, false, "b0", NULL,
     NULL, 0, false, 0, 0, /* -> */ 0.0, true, 3, 3, TARGET_BUILT, "b0"},
    {"no export seen, run exited 2", END_FAIL, true, 2.0, 3.0, 3, 3, 0, 0, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 1.0, true, 3, 3, TARGET_FAILED, ""},
    {"no export seen, run killed by a signal", END_SIGNAL, true, 2.0, 3.0, 3, 0, 0, 0, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 1.0, true, 3, 0, TARGET_FAILED, ""},
    {"no verdict, a watched process", END_WATCH, true, 2.0, 3.0, 1, 0, 0, 0, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 1.0, true, 1, 0, TARGET_SUCCESS_UNKNOWN, ""},
    {"no verdict, buildtel killed", END_KILLED, true, 2.0, 3.0, 1, 0, 0, 0, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 1.0, true, 1, 0, TARGET_SUCCESS_UNKNOWN, ""},
    {"an ERROR step beats the run's exit 0", END_OK, true, 0.5, 9.0, 4, 1, 1, 0, true, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 8.5, true, 4, 1, TARGET_FAILED, ""},
    {"a CANCELED step fails it", END_OK, true, 0.5, 1.0, 4, 1, 0, 1, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 0.5, true, 4, 1, TARGET_FAILED, ""},
    {"history wins: duration, steps, completed over an ERROR", END_FAIL, true, 1.0, 2.0, 2, 0, 1, 0, false, "b0", "meta-b",
     "completed", 62.233706155, true, 7, 5, /* -> */ 62.233706155, true, 7, 5, TARGET_BUILT, "meta-b"},
    {"history failed over an export", END_OK, true, 1.0, 2.0, 2, 0, 0, 0, true, "b0", NULL,
     "failed", 3.0, true, 2, 0, /* -> */ 3.0, true, 2, 0, TARGET_FAILED, "b0"},
    {"history canceled", END_OK, true, 1.0, 2.0, 2, 0, 0, 0, true, "", NULL,
     "canceled", 3.0, true, 2, 0, /* -> */ 3.0, true, 2, 0, TARGET_FAILED, ""},
    {"history running: no verdict from it, the log decides", END_FAIL, true, 1.0, 2.0, 2, 0, 0, 0, true, "", NULL,
     "running", NAN, false, 0, 0, /* -> */ 1.0, true, 2, 0, TARGET_BUILT, ""},
    {"history without a duration or steps: the log's", END_OK, true, 1.0, 2.25, 6, 1, 0, 0, true, "", NULL,
     "completed", NAN, false, 0, 0, /* -> */ 1.25, true, 6, 1, TARGET_BUILT, ""},
    {"history with zero steps is a figure", END_OK, true, 1.0, 2.0, 6, 1, 0, 0, true, "", NULL,
     "completed", 1.5, true, 0, 0, /* -> */ 1.5, true, 0, 0, TARGET_BUILT, ""},
    {"no BuildKit in the log: steps unknown, not zero", END_OK, false, 0.0, 80.0, 0, 0, 0, 0, false, "", NULL,
     NULL, 0, false, 0, 0, /* -> */ 80.0, false, 0, 0, TARGET_BUILT, ""},
    {"--progress=quiet: history gives the steps and the run's totals", END_OK, false, NAN, NAN, 0, 0, 0, 0, false, "", "meta-b",
     "completed", 20.5, true, 7, 5, /* -> */ 20.5, true, 7, 5, TARGET_BUILT, "meta-b"},
    {"metadata only, never in the log", END_OK, true, NAN, NAN, 0, 0, 0, 0, false, "b0", "meta-b",
     NULL, 0, false, 0, 0, /* -> */ NAN, true, 0, 0, TARGET_BUILT, "meta-b"},
};
/* clang-format on */

static void fill(struct targets *ts, const struct fact_case *c)
{
        size_t i;
        struct target *t;

        targets_init(ts);
        ts->buildkit_seen = c->buildkit;
        snprintf(ts->builder, sizeof(ts->builder), "%s", c->log_builder);
        i = targets_get(ts, "app", 3);
        t = &ts->t[i];
        t->first_seen = c->first;
        t->last_seen = c->last;
        t->steps = c->steps;
        t->cached = c->cached;
        t->errors = c->errors;
        t->canceled = c->canceled;
        t->done = c->done;
        /* as buildkit_finish() and bakemeta_parse() fill it */
        snprintf(t->builder, sizeof(t->builder), "%s",
                 c->meta_builder ? c->meta_builder : c->log_builder);
        if (c->h_status) {
                t->history_set = true;
                snprintf(t->history_status, sizeof(t->history_status), "%s", c->h_status);
                t->history_duration_s = c->h_duration;
                t->history_steps_set = c->h_steps_set;
                t->history_steps = c->h_steps;
                t->history_cached = c->h_cached;
        }
}

static void test_rule(void **state)
{
        static struct targets ts;
        static struct run_facts f;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct fact_case *c = &cases[i];
                struct run_info ri = run_of(c->end);
                const struct target_fact *t;

                printf("case %zu: %s\n", i, c->what);
                fill(&ts, c);
                targets_facts(&ts, &ri, &f);
                assert_int_equal(f.n, 1);
                t = &f.t[0];
                assert_string_equal(t->name, "app");
                if (isnan(c->duration))
                        assert_true(isnan(t->duration_s));
                else
                        assert_true(t->duration_s == c->duration);
                assert_int_equal(t->steps_set, c->steps_set);
                assert_int_equal(t->steps, c->want_steps);
                assert_int_equal(t->cached, c->want_cached);
                if (c->steps_set && c->want_steps)
                        assert_true(t->cache_ratio == (double)c->want_cached / c->want_steps);
                else
                        assert_true(isnan(t->cache_ratio));
                assert_int_equal(t->success, c->success);
                assert_string_equal(t->builder, c->builder);
                /* the start and end stay the log's */
                assert_true(isnan(c->first) ? isnan(t->start_s) : t->start_s == c->first);
                /* the run's totals are the log's distinct steps */
                assert_int_equal(f.steps_set, c->buildkit || c->steps_set);
                if (!c->buildkit) /* no BuildKit in the log: history's sum */
                        assert_true(f.steps == c->want_steps && f.cached == c->want_cached);
        }
}

static const struct {
        enum end end;
        int outcome;
        const char *name;
        double duration;
} outcome_cases[] = {
    {END_OK, RUN_OUTCOME_SUCCESS, "success", 90.5},
    {END_FAIL, RUN_OUTCOME_FAILURE, "failure", 90.5},
    {END_SIGNAL, RUN_OUTCOME_CANCELLED, "cancellation", 90.5},
    {END_WATCH, RUN_OUTCOME_UNKNOWN, NULL, 90.5},
    {END_KILLED, RUN_OUTCOME_UNKNOWN, NULL, NAN},
};

static void test_outcome(void **state)
{
        static struct run_facts f;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(outcome_cases); i++) {
                struct run_info ri = run_of(outcome_cases[i].end);

                printf("case %zu\n", i);
                targets_facts(NULL, &ri, &f);
                assert_int_equal(f.n, 0);
                assert_false(f.steps_set);
                assert_int_equal(f.outcome, outcome_cases[i].outcome);
                if (outcome_cases[i].name)
                        assert_string_equal(targets_outcome_name(f.outcome), outcome_cases[i].name);
                else
                        assert_null(targets_outcome_name(f.outcome));
                if (isnan(outcome_cases[i].duration))
                        assert_true(isnan(f.duration_s));
                else
                        assert_true(f.duration_s == outcome_cases[i].duration);
        }
}

/* Compiler caches: per tool as attributed, the combined one sccache's
 * first; the run's builder: the log's, else the first target's. */
static void test_caches_and_builder(void **state)
{
        static struct targets ts;
        static struct run_facts f;
        struct run_info ri = run_of(END_OK);
        struct target *a, *b;

        (void)state;
        targets_init(&ts);
        ts.buildkit_seen = true;
        ts.steps = 9;
        ts.cached = 4;
        a = &ts.t[targets_get(&ts, "a", 1)];
        b = &ts.t[targets_get(&ts, "b", 1)];
        a->first_seen = a->last_seen = b->first_seen = b->last_seen = 1;
        a->ccache = (struct cc_counts){true, 5, 15};
        b->sccache = (struct cc_counts){true, 9007199254740993ULL, 1};
        b->sccache_guess = true;
        b->ccache = (struct cc_counts){true, 1, 1};
        snprintf(b->builder, sizeof(b->builder), "meta-b");
        targets_facts(&ts, &ri, &f);
        assert_int_equal(f.n, 2);
        assert_true(f.steps_set);
        assert_int_equal(f.steps, 9);
        assert_int_equal(f.cached, 4);
        assert_string_equal(f.builder, "meta-b");
        assert_true(f.t[0].cc.set && f.t[0].cc.hits == 5 && f.t[0].cc.misses == 15);
        assert_true(f.t[0].ccache_ratio == 0.25);
        assert_true(isnan(f.t[0].sccache_ratio));
        assert_false(f.t[0].sccache_guess);
        assert_true(f.t[1].cc.set && f.t[1].cc.hits == 9007199254740993ULL);
        assert_true(f.t[1].sccache_guess);
        assert_true(f.t[1].ccache_ratio == 0.5);
        assert_string_equal(f.t[0].builder, "");
        assert_string_equal(f.t[1].builder, "meta-b");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rule),
            cmocka_unit_test(test_outcome),
            cmocka_unit_test(test_caches_and_builder),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
