/* SPDX-License-Identifier: MIT */
/* `ninja -t graph` (parse/ninjagraph.c) and the critical path through a
 * run's .ninja_log edges (model/critpath.c), issue 38. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <math.h>
#include <stdlib.h>

#include "model/critpath.h"
#include "model/units.h"
#include "parse/ninjagraph.h"

/* What ninja 1.11 printed for: a.o <- a.c; gen.h <- gen.in; b.o <- b.c |
 * gen.h || order (order: phony gen.h); app <- a.o b.o (link); all: phony
 * app; and x.o <- x.c beside them. */
static const char graph[] = "digraph ninja {\n"
                            "rankdir=\"LR\"\n"
                            "node [fontsize=10, shape=box, height=0.25]\n"
                            "edge [fontsize=10]\n"
                            "\"0x10\" [label=\"all\"]\n"
                            "\"0x11\" -> \"0x10\" [label=\" phony\"]\n"
                            "\"0x11\" [label=\"app\"]\n"
                            "\"0x90\" [label=\"link\", shape=ellipse]\n"
                            "\"0x90\" -> \"0x11\"\n"
                            "\"0x12\" -> \"0x90\" [arrowhead=none]\n"
                            "\"0x13\" -> \"0x90\" [arrowhead=none]\n"
                            "\"0x12\" [label=\"a.o\"]\n"
                            "\"0x14\" -> \"0x12\" [label=\" cc\"]\n"
                            "\"0x14\" [label=\"a.c\"]\n"
                            "\"0x13\" [label=\"b.o\"]\n"
                            "\"0x91\" [label=\"cc\", shape=ellipse]\n"
                            "\"0x91\" -> \"0x13\"\n"
                            "\"0x15\" -> \"0x91\" [arrowhead=none]\n"
                            "\"0x16\" -> \"0x91\" [arrowhead=none]\n"
                            "\"0x17\" -> \"0x91\" [arrowhead=none style=dotted]\n"
                            "\"0x15\" [label=\"b.c\"]\n"
                            "\"0x16\" [label=\"gen.h\"]\n"
                            "\"0x18\" -> \"0x16\" [label=\" gen\"]\n"
                            "\"0x18\" [label=\"gen.in\"]\n"
                            "\"0x17\" [label=\"order\"]\n"
                            "\"0x16\" -> \"0x17\" [label=\" phony\"]\n"
                            "\"0x19\" [label=\"x.o\"]\n"
                            "\"0x1a\" -> \"0x19\" [label=\" cc\"]\n"
                            "\"0x1a\" [label=\"x.c\"]\n"
                            "}\n";

struct seen {
        char s[256];
};

static void add(void *userdata, const char *input)
{
        struct seen *x = userdata;

        strcat(x->s, input);
        strcat(x->s, " ");
}

static void test_graph(void **state)
{
        struct ninjagraph *g;
        const char *rule = NULL;
        struct seen x = {""};

        (void)state;
        assert_int_equal(ninjagraph_parse(graph, strlen(graph), &g), 0);
        assert_int_equal(ninjagraph_inputs(g, "b.o", &rule, add, &x), 3);
        assert_string_equal(rule, "cc");
        assert_string_equal(x.s, "b.c gen.h order ");
        x.s[0] = '\0';
        assert_int_equal(ninjagraph_inputs(g, "a.o", &rule, add, &x), 1);
        assert_string_equal(x.s, "a.c ");
        assert_int_equal(ninjagraph_inputs(g, "order", &rule, NULL, NULL), 1);
        assert_string_equal(rule, "phony");
        assert_int_equal(ninjagraph_inputs(g, "a.c", &rule, NULL, NULL), -ENOENT);
        assert_int_equal(ninjagraph_inputs(g, "nothing", &rule, NULL, NULL), -ENOENT);
        /* "cc" and "link" name edges, not files */
        assert_int_equal(ninjagraph_inputs(g, "link", &rule, NULL, NULL), -ENOENT);
        ninjagraph_free(g);
        assert_int_equal(ninjagraph_parse("not a graph", 11, &g), -EINVAL);
        /* damaged lines are skipped */
        {
                static const char bad[] = "digraph ninja {\n\"0x1\" [label=\"a\"]\n\"0x7\" [label=\"c\n"
                                          "xx -> yy\n\"0x2\" -> \n\"zz\" [label=\"b\"]\n"
                                          "\"0x3\" -> \"0x1\" [label=\" r\"]\n";

                assert_int_equal(ninjagraph_parse(bad, strlen(bad), &g), 0);
                assert_int_equal(ninjagraph_inputs(g, "a", &rule, NULL, NULL), 1);
                ninjagraph_free(g);
        }
        ninjagraph_free(NULL);
}

/* The chain that set the wall: gen.h, then b.o (it waited for gen.h), then
 * app (it waited for b.o, which ended after a.o); x.o and a.o are off it. */
static void test_chain(void **state)
{
        struct ninjagraph *g;
        struct critpath cp;
        const struct ninja_edge ev[] = {
            {0, 50, "x.o"}, {0, 100, "a.o"}, {0, 300, "gen.h"}, {350, 500, "b.o"}, {520, 700, "app"},
        };

        (void)state;
        assert_int_equal(ninjagraph_parse(graph, strlen(graph), &g), 0);
        assert_int_equal(critpath_ninja(ninjagraph_inputs, g, ev, 5, 2, &cp), 0);
        assert_int_equal(cp.n, 3);
        assert_int_equal(cp.dropped, 0);
        assert_string_equal(cp.step[0].name, "gen.h");
        assert_string_equal(cp.step[0].rule, "gen");
        assert_string_equal(cp.step[1].name, "b.o");
        assert_string_equal(cp.step[2].name, "app");
        assert_string_equal(cp.step[2].rule, "link");
        assert_float_equal(cp.step[0].slack_s, 0, 1e-9);
        assert_float_equal(cp.step[1].slack_s, 0.05, 1e-9);
        assert_float_equal(cp.step[2].slack_s, 0.02, 1e-9);
        assert_float_equal(cp.length_s, 0.3 + 0.15 + 0.18, 1e-9);
        assert_float_equal(cp.wall_s, 0.7, 1e-9);
        /* only app rebuilt: a chain of one, its slack from ninja's start */
        assert_int_equal(critpath_ninja(ninjagraph_inputs, g, &ev[4], 1, 2, &cp), 0);
        assert_int_equal(cp.n, 1);
        assert_float_equal(cp.step[0].slack_s, 0.52, 1e-9);
        assert_int_equal(critpath_ninja(ninjagraph_inputs, g, ev, 0, 2, &cp), -ENODATA);
        ninjagraph_free(g);
}

/* A diamond: d waits for b and c, c ended later: a, c, d. */
static void test_diamond(void **state)
{
        static const char dia[] = "digraph ninja {\n"
                                  "\"0x1\" [label=\"d\"]\n\"0x9\" [label=\"r\", shape=ellipse]\n"
                                  "\"0x9\" -> \"0x1\"\n\"0x2\" -> \"0x9\" [arrowhead=none]\n"
                                  "\"0x3\" -> \"0x9\" [arrowhead=none]\n"
                                  "\"0x2\" [label=\"b\"]\n\"0x4\" -> \"0x2\" [label=\" r\"]\n"
                                  "\"0x3\" [label=\"c\"]\n\"0x4\" -> \"0x3\" [label=\" r\"]\n"
                                  "\"0x4\" [label=\"a\"]\n\"0x5\" -> \"0x4\" [label=\" r\"]\n"
                                  "\"0x5\" [label=\"src\"]\n}\n";
        const struct ninja_edge ev[] = {{0, 100, "a"}, {100, 150, "b"}, {100, 300, "c"}, {300, 400, "d"}};
        struct ninjagraph *g;
        struct critpath cp;

        (void)state;
        assert_int_equal(ninjagraph_parse(dia, strlen(dia), &g), 0);
        assert_int_equal(critpath_ninja(ninjagraph_inputs, g, ev, 4, 2, &cp), 0);
        assert_int_equal(cp.n, 3);
        assert_string_equal(cp.step[0].name, "a");
        assert_string_equal(cp.step[1].name, "c");
        assert_string_equal(cp.step[2].name, "d");
        assert_float_equal(cp.length_s, 0.4, 1e-9);
        ninjagraph_free(g);
}

/* Weighted time and the stretch under -j 2, without a graph: A 0-4 s, B
 * 0-2, C 2-4, D 4-10 alone. */
static void test_weigh(void **state)
{
        const struct ninja_edge ev[] = {
            {0, 4000, "a.o"}, {0, 2000, "b.o"}, {2000, 4000, "c.o"}, {4000, 10000, "lib/d.so"}};
        struct critpath cp;

        (void)state;
        assert_int_equal(critpath_ninja(ninjagraph_inputs, NULL, ev, 4, 2, &cp), 0);
        assert_int_equal(cp.n, 1); /* no graph: the last edge alone */
        assert_string_equal(cp.step[0].name, "lib/d.so");
        assert_int_equal(cp.nweight, 4);
        assert_string_equal(cp.weight[0].name, "lib/d.so");
        assert_float_equal(cp.weight[0].weighted_s, 6, 1e-9);
        assert_string_equal(cp.weight[1].name, "a.o");
        assert_float_equal(cp.weight[1].weighted_s, 2, 1e-9);
        assert_float_equal(cp.weight[1].s, 4, 1e-9);
        assert_float_equal(cp.weight[2].weighted_s, 1, 1e-9);
        /* by extension when there is no rule */
        assert_int_equal(cp.nrule, 2);
        assert_string_equal(cp.rule[0].name, ".so");
        assert_string_equal(cp.rule[1].name, ".o");
        assert_float_equal(cp.rule[1].weighted_s, 4, 1e-9);
        assert_float_equal(cp.rule[1].s, 8, 1e-9);
        assert_int_equal(cp.ngap, 1);
        assert_float_equal(cp.gap[0].start_s, 4, 1e-9);
        assert_float_equal(cp.gap[0].end_s, 10, 1e-9);
        assert_float_equal(cp.gap[0].running, 1, 1e-9);
        assert_string_equal(cp.gap[0].waited_for, "lib/d.so");
        assert_float_equal(cp.under_s, 6, 1e-9);
        /* -j 4: the whole build ran under it */
        assert_int_equal(critpath_ninja(ninjagraph_inputs, NULL, ev, 4, 4, &cp), 0);
        assert_float_equal(cp.under_s, 10, 1e-9);
        assert_int_equal(cp.ngap, 1);
        assert_float_equal(cp.gap[0].running, 1.4, 1e-9);
}

/* CMake's rules, one per target and config, are one rule */
static void test_cmake_rules(void **state)
{
        static const char cm[] = "digraph ninja {\n\"0x1\" [label=\"a.o\"]\n"
                                 "\"0x2\" -> \"0x1\" [label=\" CXX_COMPILER__app_Release\"]\n"
                                 "\"0x2\" [label=\"a.c\"]\n\"0x3\" [label=\"b.o\"]\n"
                                 "\"0x4\" -> \"0x3\" [label=\" CXX_COMPILER__lib_Debug\"]\n"
                                 "\"0x4\" [label=\"b.c\"]\n}\n";
        const struct ninja_edge ev[] = {{0, 1000, "a.o"}, {0, 2000, "b.o"}};
        struct ninjagraph *g;
        struct critpath cp;

        (void)state;
        assert_int_equal(ninjagraph_parse(cm, strlen(cm), &g), 0);
        assert_int_equal(critpath_ninja(ninjagraph_inputs, g, ev, 2, 2, &cp), 0);
        assert_int_equal(cp.nrule, 1);
        assert_string_equal(cp.rule[0].name, "CXX_COMPILER");
        assert_float_equal(cp.rule[0].s, 3, 1e-9);
        assert_string_equal(cp.step[0].rule, "CXX_COMPILER");
        ninjagraph_free(g);
}

static void add_step(struct targets *ts, const char *name, double a, double b, bool step)
{
        struct step_fact f = {.target = -1, .start_s = a, .end_s = b, .step = step};

        strcpy(f.name, name);
        assert_int_equal(targets_add_step(ts, &f), 0);
}

/* A multi-stage Dockerfile: the final stage's COPY --from=build waits for
 * build's last step; the single-stage "[k/n]" names too. */
static void test_buildkit(void **state)
{
        struct targets *ts = calloc(1, sizeof(*ts));
        struct critpath cp;

        (void)state;
        assert_non_null(ts);
        targets_init(ts);
        assert_int_equal(critpath_buildkit(ts, &cp), -ENODATA);
        add_step(ts, "[internal] load build definition from Dockerfile", 0, 0.5, false);
        add_step(ts, "[build 1/3] FROM docker.io/library/alpine", 0.5, 1, true);
        add_step(ts, "[stage-1 1/2] FROM docker.io/library/alpine", 0.5, 1, true);
        add_step(ts, "[build 2/3] RUN make", 1, 5, true);
        add_step(ts, "[build 3/3] RUN strip /out/app", 5.5, 6, true);
        add_step(ts, "[stage-1 2/2] COPY --from=build /out /out", 6.25, 7, true);
        assert_int_equal(critpath_buildkit(ts, &cp), 0);
        assert_int_equal(cp.n, 4);
        assert_string_equal(cp.step[0].name, "[build 1/3] FROM docker.io/library/alpine");
        assert_string_equal(cp.step[1].name, "[build 2/3] RUN make");
        assert_string_equal(cp.step[2].name, "[build 3/3] RUN strip /out/app");
        assert_string_equal(cp.step[3].name, "[stage-1 2/2] COPY --from=build /out /out");
        assert_float_equal(cp.step[0].slack_s, 0, 1e-9);
        assert_float_equal(cp.step[2].slack_s, 0.5, 1e-9);
        assert_float_equal(cp.step[3].slack_s, 0.25, 1e-9);
        assert_float_equal(cp.length_s, 0.5 + 4 + 0.5 + 0.75, 1e-9);
        assert_float_equal(cp.wall_s, 6.5, 1e-9);
        targets_release(ts);
        targets_init(ts);
        add_step(ts, "[1/3] FROM docker.io/library/alpine", 0, 1, true);
        add_step(ts, "[2/3] RUN a", 1, 2, true);
        add_step(ts, "[3/3] COPY --from=0 x y", 2, 3, true);
        assert_int_equal(critpath_buildkit(ts, &cp), 0);
        assert_int_equal(cp.n, 3);
        targets_release(ts);
        /* as BuildKit numbers them: "FROM base" is no vertex, so build's
         * first step follows base's last; stage-2's FROM is base's */
        targets_init(ts);
        add_step(ts, "[base 1/3] FROM docker.io/local/busybox:latest", 0.2, 0.2, true);
        add_step(ts, "[base 2/3] RUN echo base", 0, 0.7, true);
        add_step(ts, "[base 3/3] RUN cat /lib", 0.8, 1.7, true);
        add_step(ts, "[build 1/2] COPY app.txt /src/app.txt", 1.8, 1.9, true);
        add_step(ts, "[build 2/2] RUN sleep 1", 1.9, 3, true);
        add_step(ts, "[stage-2 2/3] COPY --from=build /app.out /app.out", 3.1, 3.2, true);
        add_step(ts, "[stage-2 3/3] RUN wc -c /app.out", 3.2, 3.8, true);
        assert_int_equal(critpath_buildkit(ts, &cp), 0);
        assert_int_equal(cp.n, 7);
        assert_string_equal(cp.step[3].name, "[build 1/2] COPY app.txt /src/app.txt");
        assert_float_equal(cp.step[3].slack_s, 0.1, 1e-9);
        targets_release(ts);
        free(ts);
}

#define ARGV(v) ((char *const *)(uintptr_t)(v))

static void test_jobs_units(void **state)
{
        static const char *const a[] = {"ninja", "-C", "b", "-j", "4", NULL},
                                 *const b[] = {"cmake", "--build", ".", "-j8", NULL},
                                 *const c[] = {"meson", "compile", "--parallel=5", NULL},
                                 *const d[] = {"ninja", "-jx", NULL};
        const struct ninja_edge ev[] = {{0, 2000, "CMakeFiles/app.dir/src/main.cc.o"}};
        struct unit row = {.kind = UNITS_COMPILE, .first_s = 10.2, .last_s = 11.8, .peak_mb = 312.5};
        struct units *u;
        struct critpath cp;

        (void)state;
        assert_int_equal(critpath_jobs(ARGV(a), 2), 4);
        assert_int_equal(critpath_jobs(ARGV(b), 2), 8);
        assert_int_equal(critpath_jobs(ARGV(c), 2), 5);
        assert_int_equal(critpath_jobs(ARGV(d), 2), 3);
        assert_int_equal(critpath_jobs(ARGV(d), 8), 10);
        assert_int_equal(units_new(&u), 0);
        strcpy(row.name, "main.cc");
        assert_int_equal(units_put(u, &row), 0);
        assert_int_equal(critpath_ninja(ninjagraph_inputs, NULL, ev, 1, 2, &cp), 0);
        critpath_units(&cp, u, 20); /* ninja started 20 s into the run: not it */
        assert_true(isnan(cp.step[0].mem_mb));
        critpath_units(&cp, u, 10);
        assert_float_equal(cp.step[0].mem_mb, 312.5, 1e-9);
        units_free(u);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_graph),
            cmocka_unit_test(test_chain),
            cmocka_unit_test(test_diamond),
            cmocka_unit_test(test_weigh),
            cmocka_unit_test(test_cmake_rules),
            cmocka_unit_test(test_buildkit),
            cmocka_unit_test(test_jobs_units),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
