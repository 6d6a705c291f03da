/* SPDX-License-Identifier: MIT */
/* A run's files (runfiles/names.h): the names, and targets.json read back
 * as targetsjson_format() writes it, with its figures range checked. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model/targets.h"
#include "runfiles/names.h"
#include "runfiles/targetsjson.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

static void test_path(void **state)
{
        static const struct {
                const char *dir;
                enum runfile kind;
                const char *want;
        } cases[] = {
            {"/l", RUNFILE_CSV, "/l/resources-R1.csv"},
            {"/l", RUNFILE_RUN, "/l/resources-R1.run.json"},
            {"/l", RUNFILE_SUMMARY_TXT, "/l/resources-R1.summary.txt"},
            {"/l", RUNFILE_SUMMARY_JSON, "/l/resources-R1.summary.json"},
            {"/l", RUNFILE_TARGETS, "/l/resources-R1.targets.json"},
            {"/l", RUNFILE_UNITS, "/l/resources-R1.units.csv"},
            {"/l", RUNFILE_BUILD_LOG, "/l/build-R1.log"},
            {"/l", RUNFILE_REPORT, "/l/report-R1.html"},
            {"/l", RUNFILE_TRACE, "/l/trace-R1.json"},
            {".", RUNFILE_TRACE, "./trace-R1.json"},
            {"x/", RUNFILE_CSV, "x//resources-R1.csv"}, /* as given, as the sinks always did */
            {"", RUNFILE_REPORT, "/report-R1.html"},
            {NULL, RUNFILE_REPORT, "report-R1.html"},
            {NULL, RUNFILE_BUILD_LOG, "build-R1.log"},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *p = runfiles_path(cases[i].dir, "R1", cases[i].kind);

                print_message("case %zu\n", i);
                assert_non_null(p);
                assert_string_equal(p, cases[i].want);
                free(p);
        }
        assert_null(runfiles_path("/l", "R1", RUNFILE_COUNT_));
}

static void test_beside(void **state)
{
        static const struct {
                const char *csv;
                enum runfile kind;
                const char *want; /* NULL: none */
        } cases[] = {
            {"/l/resources-R1.csv", RUNFILE_RUN, "/l/resources-R1.run.json"},
            {"/l/resources-R1.csv", RUNFILE_UNITS, "/l/resources-R1.units.csv"},
            {"/l/resources-R1.csv", RUNFILE_TARGETS, "/l/resources-R1.targets.json"},
            {"/l/resources-R1.csv", RUNFILE_BUILD_LOG, "/l/build-R1.log"},
            {"/l/resources-R1.csv", RUNFILE_REPORT, "/l/report-R1.html"},
            {"resources-R1.csv", RUNFILE_TRACE, "trace-R1.json"},
            {"resources-R1.csv", RUNFILE_RUN, "resources-R1.run.json"},
            {"/resources-R1.csv", RUNFILE_RUN, "/resources-R1.run.json"},
            /* not resources-<id>.csv: ".csv" swapped, the others have no name */
            {"a/copy.csv", RUNFILE_RUN, "a/copy.run.json"},
            {"a/copy", RUNFILE_UNITS, "a/copy.units.csv"},
            {"a/resources-.csv", RUNFILE_RUN, "a/resources-.run.json"},
            {"a/copy.csv", RUNFILE_REPORT, NULL},
            {"a/resources-R1.csv.bak", RUNFILE_BUILD_LOG, NULL},
            {"", RUNFILE_RUN, ".run.json"},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *p = runfiles_beside(cases[i].csv, cases[i].kind);

                print_message("case %zu: %s\n", i, cases[i].csv);
                if (!cases[i].want) {
                        assert_null(p);
                        continue;
                }
                assert_non_null(p);
                assert_string_equal(p, cases[i].want);
                free(p);
        }
}

static void test_dir_of(void **state)
{
        static const struct {
                const char *path, *want;
        } cases[] = {
            {"/l/resources-R1.csv", "/l"},
            {"a/b/c.csv", "a/b"},
            {"/c.csv", ""},
            {"c.csv", NULL},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                bool oom = true;
                char *p = runfiles_dir_of(cases[i].path, &oom);

                assert_false(oom);
                if (!cases[i].want)
                        assert_null(p);
                else
                        assert_string_equal(p, cases[i].want);
                free(p);
        }
}

/* What the writer writes reads back: the same facts, steps and edges. */
static void test_targets_roundtrip(void **state)
{
        struct targets *ts = calloc(1, sizeof(*ts)), *back = calloc(1, sizeof(*back));
        struct run_facts *f = calloc(1, sizeof(*f)), *g = calloc(1, sizeof(*g));
        struct step_fact st = {.target = 0, .start_s = 1.5, .end_s = 4, .step = true};
        struct dbuf out = DBUF_INIT;

        (void)state;
        assert_non_null(ts && back && f && g);
        targets_init(ts);
        targets_init(back);
        f->n = 2;
        copy_utf8(f->t[0].name, sizeof(f->t[0].name), "app", 3);
        f->t[0].start_s = 1;
        f->t[0].end_s = 9;
        f->t[0].duration_s = 8;
        f->t[0].steps_set = true;
        f->t[0].steps = 10;
        f->t[0].cached = 4;
        f->t[0].success = TARGET_BUILT;
        f->t[0].ccache = (struct cc_counts){.set = true, .hits = 3, .misses = 1};
        targets_fact_ratios(&f->t[0]);
        copy_utf8(f->t[1].name, sizeof(f->t[1].name), "db", 2);
        f->t[1].start_s = f->t[1].end_s = f->t[1].duration_s = NAN;
        f->t[1].success = TARGET_FAILED;
        targets_fact_ratios(&f->t[1]);
        (void)targets_get(ts, "app", 3);
        copy_utf8(st.name, sizeof(st.name), "[app 1/2] RUN make", 18);
        assert_int_equal(targets_add_step(ts, &st), 0);
        targets_offer_edge(ts, 0, 2500, "obj/a.o", 7);
        /* the run's edges with their times, and what places them */
        targets_keep_edge(ts, 0, 2500, "obj/a.o", 7);
        targets_keep_edge(ts, 100, 400, "obj/b.o", 7);
        targets_keep_edge(ts, 2500, 3000, "app", 3);
        ts->ninja_mtime = 1796140000.25;
        ts->ninja_max_end_ms = 3100; /* an edge not kept ended later */
        /* the counts of all edges (the slowest and the kept are a few) */
        ts->ninja_log_set = true;
        ts->ninja_edges = 568;
        ts->ninja_done = 570;
        ts->ninja_total = 600;
        assert_int_equal(targetsjson_format(ts, f, &out), 0);

        assert_int_equal(targetsjson_parse(out.p, out.len, g, back), 2);
        assert_int_equal(g->n, 2);
        assert_string_equal(g->t[0].name, "app");
        assert_true(g->t[0].start_s == 1 && g->t[0].end_s == 9 && g->t[0].duration_s == 8);
        assert_true(g->t[0].steps_set);
        assert_int_equal(g->t[0].steps, 10);
        assert_int_equal(g->t[0].cached, 4);
        assert_int_equal(g->t[0].success, TARGET_BUILT);
        assert_true(g->t[0].ccache.set && g->t[0].ccache.hits == 3 && g->t[0].ccache.misses == 1);
        assert_true(fabs(g->t[0].cache_ratio - 0.4) < 1e-9);
        assert_true(fabs(g->t[0].ccache_ratio - 0.75) < 1e-9);
        assert_string_equal(g->t[1].name, "db");
        assert_true(isnan(g->t[1].start_s) && isnan(g->t[1].duration_s));
        assert_false(g->t[1].steps_set);
        assert_int_equal(g->t[1].success, TARGET_FAILED);
        assert_true(isnan(g->t[1].cache_ratio));
        assert_int_equal(back->nstepv, 1);
        assert_string_equal(back->stepv[0].name, "[app 1/2] RUN make");
        assert_string_equal(back->t[back->stepv[0].target].name, "app");
        assert_true(back->stepv[0].start_s == 1.5 && back->stepv[0].end_s == 4);
        assert_int_equal(back->nslow, 1);
        assert_string_equal(back->slow[0].output, "obj/a.o");
        assert_int_equal(back->slow[0].end_ms, 2500);
        assert_true(back->ninja_log_set);
        /* edgev read back is the same heap, in the same order */
        assert_int_equal(back->nedgev, 3);
        for (uint32_t i = 0; i < 3; i++) {
                assert_string_equal(back->edgev[i].output, ts->edgev[i].output);
                assert_true(back->edgev[i].start_ms == ts->edgev[i].start_ms &&
                            back->edgev[i].end_ms == ts->edgev[i].end_ms);
        }
        assert_true(back->ninja_mtime == 1796140000.25);
        assert_true(back->ninja_max_end_ms == 3100);
        assert_true(back->ninja_edges == 568 && back->ninja_done == 570 && back->ninja_total == 600);
        assert_true(targets_commands_ran(back) == 570);

        dbuf_release(&out);
        targets_release(ts);
        targets_release(back);
        free(ts);
        free(back);
        free(f);
        free(g);
}

/* Hostile files: the range checks and the clamp, and what is not a file. */
static void test_targets_ranges(void **state)
{
        static const struct {
                const char *json;
                int ret;
                uint32_t steps, cached; /* of the first target, when steps_set */
                bool steps_set;
        } cases[] = {
            {"{\"targets\":[{\"name\":\"a\",\"steps\":3,\"cached\":9}]}", 1, 3, 3, true},
            {"{\"targets\":[{\"name\":\"a\",\"steps\":-3,\"cached\":-1}]}", 1, 0, 0, true},
            {"{\"targets\":[{\"name\":\"a\",\"steps\":99999999999,\"cached\":5}]}", 1, UINT32_MAX,
             5, true},
            {"{\"targets\":[{\"name\":\"a\",\"steps\":3}]}", 1, 0, 0, false},
            {"{\"targets\":[{\"name\":\"a\",\"steps\":3.5,\"cached\":1}]}", 1, 0, 0, false},
            {"{\"targets\":[1,\"x\",{\"steps\":2,\"cached\":1}]}", 1, 2, 1, true},
            {"{\"targets\":{}}", 0, 0, 0, false},
            {"{}", 0, 0, 0, false},
            {"[]", -EINVAL, 0, 0, false},
            {"not json", -EINVAL, 0, 0, false},
            {"", -EINVAL, 0, 0, false},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct run_facts *f = calloc(1, sizeof(*f));
                struct targets *ts = calloc(1, sizeof(*ts));

                print_message("case %zu: %s\n", i, cases[i].json);
                assert_non_null(f && ts);
                targets_init(ts);
                assert_int_equal(targetsjson_parse(cases[i].json, strlen(cases[i].json), f, ts),
                                 cases[i].ret);
                if (cases[i].ret > 0) {
                        assert_int_equal(f->t[0].steps_set, cases[i].steps_set);
                        assert_int_equal(f->t[0].steps, cases[i].steps);
                        assert_int_equal(f->t[0].cached, cases[i].cached);
                }
                targets_release(ts);
                free(ts);
                free(f);
        }
}

/* A hostile "ninja_log": what is not [start, end, output] within RANGE_MS
 * with end >= start is skipped; a bad mtime keeps none. */
static void test_targets_ninja_log(void **state)
{
        static const struct {
                const char *json;
                uint32_t nedgev;
                int64_t max_end_ms;
        } cases[] = {
            {"{\"ninja_log\":{\"mtime\":1e9,\"max_end_ms\":9,\"edges\":[[0,5,\"a\"],[1,2,\"b\"]]}}",
             2, 9},
            {"{\"ninja_log\":{\"mtime\":1e9,\"edges\":[[5,1,\"a\"],[-1,2,\"b\"],[0,1e20,\"c\"]]}}",
             0, 0},
            {"{\"ninja_log\":{\"mtime\":1e9,\"edges\":[[0,1],[0,1,2],[0,1,\"x\",4],{},\"e\",[0,3,"
             "\"ok\"]]}}",
             1, 3},
            {"{\"ninja_log\":{\"mtime\":1e9,\"max_end_ms\":-5,\"edges\":[[0,7,\"a\"]]}}", 1, 7},
            {"{\"ninja_log\":{\"mtime\":-1,\"edges\":[[0,5,\"a\"]]}}", 0, 0},
            {"{\"ninja_log\":{\"mtime\":1e300,\"edges\":[[0,5,\"a\"]]}}", 0, 0},
            {"{\"ninja_log\":{\"edges\":[[0,5,\"a\"]]}}", 0, 0},
            {"{\"ninja_log\":[[0,5,\"a\"]]}", 0, 0},
            {"{\"ninja_log\":null}", 0, 0},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct run_facts *f = calloc(1, sizeof(*f));
                struct targets *ts = calloc(1, sizeof(*ts));

                print_message("case %zu: %s\n", i, cases[i].json);
                assert_non_null(f && ts);
                targets_init(ts);
                assert_int_equal(targetsjson_parse(cases[i].json, strlen(cases[i].json), f, ts), 0);
                assert_int_equal(ts->nedgev, cases[i].nedgev);
                assert_true(ts->ninja_max_end_ms == cases[i].max_end_ms);
                assert_true(cases[i].nedgev ? ts->ninja_mtime == 1e9 : !(ts->ninja_mtime > 0));
                targets_release(ts);
                free(ts);
                free(f);
        }
}

/* The counts of all edges read back: what is not a count is left out. */
static void test_targets_ninja_counts(void **state)
{
        static const struct {
                const char *json;
                uint64_t edges, done, total, ran;
        } cases[] = {
            {"{\"ninja_log_edges\":568,\"ninja_progress\":[570,600]}", 568, 570, 600, 570},
            {"{\"ninja_log_edges\":7}", 7, 0, 0, 7},
            {"{\"ninja_progress\":[3,3]}", 0, 3, 3, 3},
            {"{\"ninja_log_edges\":-1,\"ninja_progress\":[5,3]}", 0, 0, 0, 0},
            {"{\"ninja_log_edges\":1.5,\"ninja_progress\":[-1,3]}", 0, 0, 0, 0},
            {"{\"ninja_log_edges\":\"9\",\"ninja_progress\":{\"done\":1}}", 0, 0, 0, 0},
            {"{\"ninja_log_edges\":null,\"ninja_progress\":null}", 0, 0, 0, 0},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct run_facts *f = calloc(1, sizeof(*f));
                struct targets *ts = calloc(1, sizeof(*ts));

                print_message("case %zu: %s\n", i, cases[i].json);
                assert_non_null(f && ts);
                targets_init(ts);
                assert_int_equal(targetsjson_parse(cases[i].json, strlen(cases[i].json), f, ts), 0);
                assert_true(ts->ninja_edges == cases[i].edges);
                assert_true(ts->ninja_done == cases[i].done && ts->ninja_total == cases[i].total);
                assert_true(targets_commands_ran(ts) == cases[i].ran);
                targets_release(ts);
                free(ts);
                free(f);
        }
}

/* Negative cache counts, edges out of range, and the target cap. */
static void test_targets_caps(void **state)
{
        struct run_facts *f = calloc(1, sizeof(*f));
        struct targets *ts = calloc(1, sizeof(*ts));
        struct dbuf b = DBUF_INIT;
        const char *cc = "{\"targets\":[{\"name\":\"a\",\"ccache\":{\"hits\":-1,\"misses\":2},"
                         "\"sccache\":{\"hits\":1,\"misses\":1}}],\"slowest_edges\":[{\"output\":"
                         "\"x\",\"seconds\":-1},{\"output\":\"y\",\"seconds\":1e12},{\"output\":"
                         "\"z\",\"seconds\":2}],\"buildkit_steps\":[{\"target\":\"t\"},{\"name\":"
                         "\"s\",\"target\":\"t\"}],\"buildkit_steps_dropped\":7}";

        (void)state;
        assert_non_null(f && ts);
        targets_init(ts);
        assert_int_equal(targetsjson_parse(cc, strlen(cc), f, ts), 1);
        assert_false(f->t[0].ccache.set);
        assert_true(f->t[0].sccache.set);
        assert_int_equal(ts->nslow, 1);
        assert_string_equal(ts->slow[0].output, "z");
        assert_int_equal(ts->nstepv, 1);
        assert_int_equal(ts->steps_dropped, 7);
        targets_release(ts);

        assert_int_equal(dbuf_puts(&b, "{\"targets\":["), 0);
        for (int i = 0; i < TARGETS_MAX + 5; i++)
                assert_int_equal(dbuf_printf(&b, "%s{\"name\":\"t%d\"}", i ? "," : "", i), 0);
        assert_int_equal(dbuf_puts(&b, "]}"), 0);
        f->n = 0;
        targets_init(ts);
        assert_int_equal(targetsjson_parse(b.p, b.len, f, ts), TARGETS_MAX);
        assert_int_equal(f->n, TARGETS_MAX);
        targets_release(ts);
        dbuf_release(&b);
        free(ts);
        free(f);
}

/* A step's exec, its one table both ways: the members in their order, an
 * unknown figure null, an empty label null; read back the same; a step not
 * measured is null and reads back not measured. */
static void test_targets_exec(void **state)
{
        static const char want[] =
            "{\"execs\":2,\"source\":\"exec-cgroup\",\"cpu_s\":1.5,\"mem_peak_bytes\":1048576.0,"
            "\"anon_peak_bytes\":null,\"io_read_bytes\":4096.0,\"io_write_bytes\":0.0,\"net_rx_bytes\":10.0,"
            "\"net_tx_bytes\":20.0,\"oom_kills\":1.0,\"oom_at_s\":3.25,\"oom_victim\":\"cc1 a.c\","
            "\"peak_proc\":null,\"peak_proc_bytes\":null}";
        struct targets *ts = calloc(1, sizeof(*ts)), *back = calloc(1, sizeof(*back));
        struct run_facts *f = calloc(1, sizeof(*f));
        struct step_fact st = {.target = -1, .start_s = 1, .end_s = 2, .step = true};
        struct dbuf out = DBUF_INIT;
        json_t *j;
        char *s;

        (void)state;
        assert_non_null(ts && back && f);
        targets_init(ts);
        targets_init(back);
        step_exec_clear(&st.exec);
        st.exec.set = true;
        st.exec.execs = 2;
        st.exec.cpu_s = 1.5;
        st.exec.mem_peak_bytes = 1048576;
        st.exec.io_read_bytes = 4096;
        st.exec.io_write_bytes = 0;
        st.exec.net_rx_bytes = 10;
        st.exec.net_tx_bytes = 20;
        st.exec.oom_kills = 1;
        st.exec.oom_at_s = 3.25;
        copy_utf8_str(st.exec.oom_victim, sizeof(st.exec.oom_victim), "cc1 a.c");
        j = targetsjson_exec(&st.exec);
        s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        assert_string_equal(s, want);
        free(s);
        json_decref(j);

        copy_utf8_str(st.name, sizeof(st.name), "[2/3] RUN make");
        assert_int_equal(targets_add_step(ts, &st), 0);
        step_exec_clear(&st.exec); /* the second step was not measured */
        assert_int_equal(targets_add_step(ts, &st), 0);
        st.exec.set = st.exec.from_record = true; /* the third's from BuildKit's record */
        st.exec.mem_peak_bytes = 7;
        assert_int_equal(targets_add_step(ts, &st), 0);
        assert_int_equal(targetsjson_format(ts, f, &out), 0);
        assert_non_null(strstr(out.p, "\"buildkit-record\""));
        assert_int_equal(targetsjson_parse(out.p, out.len, f, back), 0);
        assert_int_equal(back->nstepv, 3);
        for (int i = 0; i < 3; i++) {
                const struct step_exec *a = &ts->stepv[i].exec, *b = &back->stepv[i].exec;
                const double *x[] = {&a->cpu_s,          &a->mem_peak_bytes, &a->anon_peak_bytes,
                                     &a->io_read_bytes,  &a->io_write_bytes, &a->net_rx_bytes,
                                     &a->net_tx_bytes,   &a->oom_kills,      &a->oom_at_s,
                                     &a->peak_proc_bytes};
                const double *y[] = {&b->cpu_s,          &b->mem_peak_bytes, &b->anon_peak_bytes,
                                     &b->io_read_bytes,  &b->io_write_bytes, &b->net_rx_bytes,
                                     &b->net_tx_bytes,   &b->oom_kills,      &b->oom_at_s,
                                     &b->peak_proc_bytes};

                assert_int_equal(a->set, b->set);
                assert_int_equal(a->from_record, b->from_record);
                assert_int_equal(a->execs, b->execs);
                for (size_t k = 0; k < ARRAY_SIZE(x); k++)
                        assert_true(*x[k] == *y[k] || (isnan(*x[k]) && isnan(*y[k])));
                assert_string_equal(a->oom_victim, b->oom_victim);
                assert_string_equal(a->peak_proc, b->peak_proc);
        }
        dbuf_release(&out);
        targets_release(ts);
        targets_release(back);
        free(ts);
        free(back);
        free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_path),
            cmocka_unit_test(test_beside),
            cmocka_unit_test(test_dir_of),
            cmocka_unit_test(test_targets_roundtrip),
            cmocka_unit_test(test_targets_ranges),
            cmocka_unit_test(test_targets_caps),
            cmocka_unit_test(test_targets_ninja_log),
            cmocka_unit_test(test_targets_ninja_counts),
            cmocka_unit_test(test_targets_exec),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
