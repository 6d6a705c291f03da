/* SPDX-License-Identifier: MIT */
/* The span model (model/spans.h): a run with targets, BuildKit steps
 * (cached and not), ninja edges and compile units; which spans exist,
 * their parents, their times on the run's clock, and the one cap. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/critpath.h"
#include "model/spans.h"
#include "util/macro.h"

#include "helpers/test.h"

#define T0 1764430820.0 /* the run's start; whole seconds and halves stay exact */

static struct run_facts facts;
static struct targets ts;
static struct step_fact steps[4];
static struct ninja_edge edges[3];
static struct run_info ri;

/* Targets "app" and "db" (steps 5, 2 cached), "lost" with no times;
 * steps under app, under none, one cached under db, one ending before it
 * starts; three edges of a .ninja_log written 10 s into the run whose
 * last edge ended at 4 s: ninja started at 6 s. */
static void model(double mtime)
{
        memset(&facts, 0, sizeof(facts));
        memset(&ts, 0, sizeof(ts));
        ri = (struct run_info){.start_epoch = T0, .end_epoch = T0 + 20};
        facts.n = 3;
        facts.t[0] =
            (struct target_fact){.name = "app", .start_s = 1, .end_s = 9, .success = TARGET_BUILT};
        facts.t[1] = (struct target_fact){.name = "lost", .start_s = NAN, .end_s = NAN};
        facts.t[2] = (struct target_fact){.name = "db",
                                          .start_s = 2,
                                          .end_s = 4.5,
                                          .steps_set = true,
                                          .steps = 5,
                                          .cached = 2,
                                          .success = TARGET_FAILED};
        ts.n = 3;
        memcpy(ts.t[0].name, "app", 4);
        memcpy(ts.t[1].name, "lost", 5);
        memcpy(ts.t[2].name, "db", 3);
        steps[0] = (struct step_fact){
            .name = "[app 1/2] RUN make", .target = 0, .start_s = 1.5, .end_s = 8, .step = true};
        steps[1] =
            (struct step_fact){.name = "load metadata", .target = -1, .start_s = 0.5, .end_s = 1};
        steps[2] = (struct step_fact){.name = "[db 1/1] COPY . .",
                                      .target = 2,
                                      .start_s = 2,
                                      .end_s = 2,
                                      .step = true,
                                      .cached = true};
        steps[3] = (struct step_fact){.name = "backwards", .target = 0, .start_s = 3, .end_s = 2};
        ts.stepv = steps;
        ts.nstepv = ARRAY_SIZE(steps);
        edges[0] = (struct ninja_edge){0, 500, "a.o"};
        edges[1] = (struct ninja_edge){1000, 4000, "app"};
        edges[2] = (struct ninja_edge){0, 1000, "b.o"};
        ts.edgev = edges;
        ts.nedgev = ARRAY_SIZE(edges);
        ts.ninja_max_end_ms = 4000;
        ts.ninja_mtime = mtime;
}

struct want {
        enum span_kind kind;
        const char *name;
        ssize_t parent;
        double start_s, end_s;
        int64_t steps, cached; /* targets' */
        bool step_cached;
};

static void check(const struct spans *S, const struct want *w, size_t n)
{
        assert_int_equal(S->n, n);
        for (size_t i = 0; i < n; i++) {
                const struct span *s = &S->v[i];
                test_row("span %zu, %s", i, w[i].name);
                assert_int_equal(s->kind, w[i].kind);
                assert_int_equal(s->len, strlen(w[i].name));
                assert_memory_equal(s->name, w[i].name, s->len);
                assert_int_equal(s->parent, w[i].parent);
                assert_true(s->start_s == w[i].start_s && s->end_s == w[i].end_s);
                assert_true(s->kind == SPAN_TARGET ? s->tf && !s->sf
                                                   : !s->tf && (s->kind == SPAN_STEP) == !!s->sf);
                if (s->kind == SPAN_TARGET)
                        assert_int_equal(s->tf->steps_set ? (int64_t)s->tf->steps : -1, w[i].steps);
                if (s->kind == SPAN_STEP)
                        assert_int_equal(s->sf->cached, w[i].step_cached);
        }
}

/* Targets, then steps under their target's span, then the edges slowest
 * first on the run's clock; "lost" and "backwards" are no spans. */
static const struct want all[] = {
    {SPAN_TARGET, "app", -1, 1, 9, -1, -1, false},
    {SPAN_TARGET, "db", -1, 2, 4.5, 5, 2, false},
    {SPAN_STEP, "[app 1/2] RUN make", 0, 1.5, 8, 0, 0, false},
    {SPAN_STEP, "load metadata", -1, 0.5, 1, 0, 0, false},
    {SPAN_STEP, "[db 1/1] COPY . .", 1, 2, 2, 0, 0, true},
    {SPAN_EDGE, "app", -1, 7, 10, 0, 0, false},
    {SPAN_EDGE, "b.o", -1, 6, 7, 0, 0, false},
    {SPAN_EDGE, "a.o", -1, 6, 6.5, 0, 0, false},
};

TEST(derive)
{
        struct spans S = {.max = SIZE_MAX};

        model(T0 + 10);
        assert_int_equal(spans_derive(&S, &ri, &facts, &ts), 0);
        check(&S, all, ARRAY_SIZE(all));
        assert_int_equal(S.dropped, 0);
        assert_string_equal(S.v[2].target, "app");
        assert_string_equal(S.v[3].target, "");
        assert_int_equal(S.v[2].group, 1);
        assert_int_equal(S.v[3].group, 0);
        assert_ptr_equal(S.v[1].tf, &facts.t[2]);
        assert_ptr_equal(S.v[4].sf, &steps[2]);
        spans_release(&S);
        spans_release(NULL);
}

/* The critical path's spans marked: ninja's by name and start placed on
 * the run's clock (app from 1.0 s of ninja's, at 7 s of the run's), a
 * BuildKit path's steps as they are. */
TEST(path)
{
        struct spans S = {.max = SIZE_MAX};
        struct critpath cp = {.n = 1, .jobs = 4};

        model(T0 + 10);
        strcpy(cp.step[0].name, "app");
        cp.step[0].start_s = 1.0;
        ts.path = &cp;
        assert_int_equal(spans_derive(&S, &ri, &facts, &ts), 0);
        for (size_t i = 0; i < S.n; i++)
                assert_int_equal(S.v[i].critical, i == 5);
        spans_release(&S);
        cp.jobs = 0;
        strcpy(cp.step[0].name, "[app 1/2] RUN make");
        cp.step[0].start_s = 1.5;
        assert_int_equal(spans_derive(&S, &ri, &facts, &ts), 0);
        for (size_t i = 0; i < S.n; i++)
                assert_int_equal(S.v[i].critical, i == 2);
        spans_release(&S);
        ts.path = NULL;
}

/* The one cap: the first max in the order of priority (targets, steps,
 * edges slowest first); the rest counted. */
static const struct {
        size_t max, kept;
        uint64_t dropped;
} caps[] = {
    {0, 0, 8}, {1, 1, 7}, {2, 2, 6}, {4, 4, 4}, {6, 6, 2}, {8, 8, 0}, {100, 8, 0},
};

TEST(caps)
{
        FOREACH_ROW(i, caps) {
                struct spans S = {.max = caps[i].max};

                test_row("max %zu", caps[i].max);
                model(T0 + 10);
                assert_int_equal(spans_derive(&S, &ri, &facts, &ts), 0);
                check(&S, all, caps[i].kept);
                assert_int_equal(S.dropped, caps[i].dropped);
                spans_release(&S);
        }
}

/* Edges only where ninja's clock can be placed on the run's
 * (figure_ninja_offset): not a log written before the run or well after
 * it, and never before the run's start. */
static const struct {
        const char *what;
        double mtime;
        size_t edges;
        double slowest_start;
} clocks[] = {
    {"ninja started 6 s in", T0 + 10, 3, 7},
    {"ninja's last edge ended at its 4 s, 2 s in: it started with the run", T0 + 2, 3, 1},
    {"a log of another build, before the run", T0 - 60, 0, 0},
    {"a log written long after the run", T0 + 60, 0, 0},
    {"no log", 0, 0, 0},
};

TEST(run_clock)
{
        FOREACH_ROW(i, clocks) {
                struct spans S = {.max = SIZE_MAX};

                test_row("%s", clocks[i].what);
                model(clocks[i].mtime);
                assert_int_equal(spans_derive(&S, &ri, &facts, &ts), 0);
                assert_int_equal(S.n, 5 + clocks[i].edges);
                if (clocks[i].edges)
                        assert_true(S.v[5].start_s == clocks[i].slowest_start);
                spans_release(&S);
        }
}

/* Added one by one (the Chrome trace's way): units and the command's
 * edges after the model's; a step of a target not kept goes under the run. */
TEST(added)
{
        struct spans S = {.max = 4};
        struct unit u = {
            .tool = "cc1", .name = "main.c", .first_s = 1, .last_s = 3, .peak_mb = 50, .cpu_s = 2};
        struct unit never = {.tool = "cc1", .name = "x.c", .first_s = NAN, .last_s = NAN};

        model(0);
        assert_int_equal(spans_add_step(&S, &steps[0], "app"), 0);
        assert_int_equal(spans_add_unit(&S, &u), 0);
        assert_int_equal(spans_add_unit(&S, &never), 0);
        assert_int_equal(spans_add_edge(&S, 2, 2.5, "out.o and more", 5), 0);
        assert_int_equal(spans_add_edge(&S, 3, 3.5, "late.o", 6), 0);
        assert_int_equal(spans_add_edge(&S, 4, 4.5, "cut.o", 5), 0);
        assert_int_equal(S.n, 4);
        assert_int_equal(S.dropped, 1);
        assert_int_equal(S.v[0].parent, -1);
        assert_int_equal(S.v[1].kind, SPAN_UNIT);
        assert_ptr_equal(S.v[1].unit, &u);
        assert_int_equal(S.v[2].len, 5);
        assert_memory_equal(S.v[2].name, "out.o", 5);
        spans_release(&S);
}

RUN_TESTS()
