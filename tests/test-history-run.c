/* SPDX-License-Identifier: MIT */
/* A stored run read back whole for a replay (store/history-run.h) on a
 * real SQLite file: every sample column as stored and in time order, the
 * targets as the model has them (unknowns, both compiler caches, cut names,
 * the cap), the summary's thresholds through the typed run read. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/target-row.h"
#include "store/history-run.h"
#include "store/store.h"
#include "platform/procfs.h"
#include "pipeline/recorder.h"

static char dir[256];
static struct store *st;
static int64_t run_id;

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

/* A fresh database with one run row (not finished: tests finish it). */
static int setup(void **state)
{
        char db[300], *argv[] = {M("make"), NULL};
        struct run_info ri = {
            .run_id = M("r1"),
            .kind = M("run"),
            .argv = argv,
            .host = M("builder"),
            .start_epoch = 1761962400.25,
            .end_epoch = NAN,
            .exit_code = -1,
            .interval = 1.0,
        };
        struct store_recorder me;

        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test-history-run.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(db, sizeof(db), "%s/h.db", dir);
        if (store_open(db, true, 1000, &st) < 0 || recorder_self(&me) < 0)
                return -1;
        return store_run_begin(st, &ri, NULL, &me, &run_id) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        char db[300];

        (void)state;
        store_close(st);
        st = NULL;
        for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
                snprintf(db, sizeof(db), "%s/h.db%s", dir, *s);
                (void)unlink(db);
        }
        return rmdir(dir);
}

/* ---- samples ---------------------------------------------------------- */

#define NSAMPLES 4

static void known_sample(struct sample *s, int i)
{
        sample_clear(s);
        s->epoch = 1761962400.5 + i;
        s->elapsed_s = 0.25 + i;
        s->load1 = i == 2 ? NAN : 1.5 + i; /* unknown stays unknown */
        s->cpu_pct = 12.5 * i;
        s->mem_used_bytes = (1000 + 7 * i) * SAMPLE_MIB;
        s->mem_avail_bytes = (9000 - 7 * i) * SAMPLE_MIB;
        s->disk_avail_bytes = 31.125 * SAMPLE_GIB;
        s->cg_cpu_user_s = 0.001 * i;
        s->cg_mode = "v2";
        s->stage = i ? "app/builder" : "";
        s->context = i == 3 ? "[3/9] Building CXX object big.cc.o" : "";
        s->top_proc = "cc1plus";
}

struct walk {
        struct sample got[NSAMPLES];
        char stage[NSAMPLES][64], context[NSAMPLES][64], mode[NSAMPLES][8];
        int n, stop_at;
};

static int collect(void *userdata, const struct sample *s)
{
        struct walk *w = userdata;

        if (w->n == w->stop_at)
                return -42;
        assert_true(w->n < NSAMPLES);
        w->got[w->n] = *s;
        /* strings are borrowed for the call only */
        snprintf(w->stage[w->n], sizeof(w->stage[0]), "%s", s->stage);
        snprintf(w->context[w->n], sizeof(w->context[0]), "%s", s->context);
        snprintf(w->mode[w->n], sizeof(w->mode[0]), "%s", s->cg_mode);
        w->n++;
        return 0;
}

static void test_samples(void **state)
{
        struct walk w = {.stop_at = -1};
        struct sample s;

        (void)state;
        assert_int_equal(store_begin(st), 0);
        for (int i = 0; i < NSAMPLES; i++) {
                known_sample(&s, i);
                assert_int_equal(store_sample_insert(st, run_id, (uint64_t)i, &s), 0);
        }
        assert_int_equal(store_commit(st), 0);

        assert_int_equal(store_samples_each(st, run_id, collect, &w), NSAMPLES);
        assert_int_equal(w.n, NSAMPLES);
        for (int i = 0; i < NSAMPLES; i++) {
                known_sample(&s, i);
                /* every number column, bit for bit (NAN as NAN) */
                for (size_t c = 0; c < sample_column_count(); c++) {
                        double a = sample_column_number(&s, c),
                               b = sample_column_number(&w.got[i], c);
                        if (isnan(a))
                                assert_true(isnan(b));
                        else
                                assert_true(a == b);
                }
                assert_string_equal(w.stage[i], s.stage);
                assert_string_equal(w.context[i], s.context);
                assert_string_equal(w.mode[i], "v2");
        }

        /* a callback that stops the walk: its value comes back */
        memset(&w, 0, sizeof(w));
        w.stop_at = 2;
        assert_int_equal(store_samples_each(st, run_id, collect, &w), -42);
        assert_int_equal(w.n, 2);

        /* no such run: no samples */
        memset(&w, 0, sizeof(w));
        w.stop_at = -1;
        assert_int_equal(store_samples_each(st, run_id + 99, collect, &w), 0);
}

/* ---- targets ---------------------------------------------------------- */

/* 127 ASCII bytes, then "é" (2 bytes) straddling the 128-byte cut. */
#define LONG_PREFIX                                                                                \
        "target-with-a-very-long-name-0123456789-0123456789-0123456789-0123456789-0123456789-"     \
        "0123456789-0123456789-0123456789-abcdefghij"
#define LONG_NAME LONG_PREFIX "\xc3\xa9-tail"
_Static_assert(sizeof(LONG_PREFIX) - 1 == 127, "the cut falls inside the 2-byte character");

static const struct {
        struct target_row row;
        /* expected */
        const char *name, *builder, *node;
        double duration; /* NAN: unknown */
        uint32_t steps, cached;
        int success;                                    /* enum target_success */
        int64_t sc_hits, sc_misses, cc_hits, cc_misses; /* -1: absent */
} target_cases[] = {
    {{.name = "lib",
      .duration_s = 3.25,
      .steps = 6,
      .cached = 2,
      .success = 1,
      .cc_hits = 212,
      .cc_misses = 88,
      .builder = "ci-builder",
      .sccache_hits = 212,
      .sccache_misses = 88,
      .ccache_hits = -1,
      .ccache_misses = -1},
     "lib",
     "ci-builder",
     "",
     3.25,
     6,
     2,
     TARGET_BUILT,
     212,
     88,
     -1,
     -1},
    {{.name = "both",
      .duration_s = 0,
      .steps = 1,
      .cached = 0,
      .success = 0,
      .cc_hits = 1,
      .cc_misses = 2,
      .node = "node-a",
      .builder = "b",
      .sccache_hits = 1,
      .sccache_misses = 2,
      .ccache_hits = 3,
      .ccache_misses = 4},
     "both",
     "b",
     "node-a",
     0,
     1,
     0,
     TARGET_FAILED,
     1,
     2,
     3,
     4},
    {{.name = "unknown",
      .duration_s = NAN,
      .steps = -1,
      .cached = -1,
      .success = -1,
      .cc_hits = -1,
      .cc_misses = -1,
      .sccache_hits = 5,
      .sccache_misses = -1,
      .ccache_hits = -1,
      .ccache_misses = -1},
     "unknown",
     "",
     "",
     NAN,
     0,
     0,
     TARGET_SUCCESS_UNKNOWN,
     -1,
     -1,
     -1,
     -1},
    {{.name = LONG_NAME,
      .duration_s = 1e-3,
      .steps = 4294967296LL,
      .cached = 2,
      .success = 1,
      TARGET_ROW_NO_CACHE},
     /* cut before the é rather than inside it; a count past 32 bits saturates */
     LONG_PREFIX,
     "",
     "",
     1e-3,
     UINT32_MAX,
     2,
     TARGET_BUILT,
     -1,
     -1,
     -1,
     -1},
};

static void check_cc(const struct cc_counts *c, int64_t hits, int64_t misses)
{
        assert_int_equal(c->set, hits >= 0);
        if (hits >= 0) {
                assert_int_equal(c->hits, (uint64_t)hits);
                assert_int_equal(c->misses, (uint64_t)misses);
        }
}

static void test_targets(void **state)
{
        struct run_facts *ts = calloc(1, sizeof(*ts));
        size_t n = sizeof(target_cases) / sizeof(target_cases[0]);

        (void)state;
        assert_non_null(ts);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(target_row_insert(st, run_id, &target_cases[i].row), 0);
        assert_int_equal(store_targets_get(st, run_id, ts), (int)n);
        assert_int_equal(ts->n, n);
        assert_false(ts->steps_set); /* the run row has no totals */
        for (size_t i = 0; i < n; i++) {
                const struct target_fact *t = &ts->t[i];

                printf("case %zu: %s\n", i, target_cases[i].name);
                /* in the order stored */
                assert_string_equal(t->name, target_cases[i].name);
                assert_string_equal(t->builder, target_cases[i].builder);
                assert_string_equal(t->node, target_cases[i].node);
                /* the stored figures, bit for bit */
                if (isnan(target_cases[i].duration))
                        assert_true(isnan(t->duration_s));
                else
                        assert_true(t->duration_s == target_cases[i].duration);
                assert_int_equal(t->steps_set, target_cases[i].row.steps >= 0);
                assert_int_equal(t->steps, target_cases[i].steps);
                assert_int_equal(t->cached, target_cases[i].cached);
                assert_int_equal(t->success, target_cases[i].success);
                check_cc(&t->sccache, target_cases[i].sc_hits, target_cases[i].sc_misses);
                check_cc(&t->ccache, target_cases[i].cc_hits, target_cases[i].cc_misses);
        }

        /* no such run: none, and *ret is initialized */
        assert_int_equal(store_targets_get(st, run_id + 99, ts), 0);
        assert_int_equal(ts->n, 0);
        free(ts);
}

static void test_targets_cap(void **state)
{
        struct run_facts *ts = calloc(1, sizeof(*ts));
        char name[32];

        (void)state;
        assert_non_null(ts);
        assert_int_equal(store_begin(st), 0);
        for (int i = 0; i < TARGETS_MAX + 44; i++) {
                struct target_row row = {.name = name,
                                         .duration_s = i,
                                         .steps = i,
                                         .cached = -1,
                                         .success = -1,
                                         TARGET_ROW_NO_CACHE};
                /* names that do not sort in insertion order */
                snprintf(name, sizeof(name), "t%03d", (i * 7) % 1000);
                assert_int_equal(target_row_insert(st, run_id, &row), 0);
        }
        assert_int_equal(store_commit(st), 0);
        assert_int_equal(store_targets_get(st, run_id, ts), TARGETS_MAX);
        assert_int_equal(ts->n, TARGETS_MAX);
        assert_string_equal(ts->t[0].name, "t000");
        assert_string_equal(ts->t[1].name, "t007");
        assert_string_equal(ts->t[TARGETS_MAX - 1].name, "t785");
        assert_int_equal(ts->t[TARGETS_MAX - 1].steps, TARGETS_MAX - 1);
        free(ts);
}

/* ---- thresholds ------------------------------------------------------- */

static void test_thresholds(void **state)
{
        static const struct {
                const char *json; /* the stored summary; NULL none */
                int ret;
                double near_oom_mb, low_disk_gb;
        } cases[] = {
            {NULL, 0, 4096, 20},
            {"not json", 0, 4096, 20},
            {"{\"samples\": 3}", 0, 4096, 20},
            {"{\"thresholds\": {\"near_oom_mb\": 2048, \"low_disk_gb\": 5.5}}", 2, 2048, 5.5},
            {"{\"thresholds\": {\"near_oom_mb\": 1000}}", 1, 1000, 20},
            {"{\"thresholds\": {\"near_oom_mb\": \"big\", \"low_disk_gb\": -1}}", 0, 4096, 20},
        };
        struct run_info ri = {.run_id = M("r1"), .end_epoch = 1761962500.0, .exit_code = 0};
        struct summary sum;

        (void)state;
        summary_init(&sum, NULL);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct summary_config c = {.near_oom_mb = 4096, .low_disk_gb = 20};

                printf("case %zu\n", i);
                struct store_run run;

                assert_int_equal(store_run_update(st, run_id, &ri, &sum, cases[i].json, 0), 0);
                assert_int_equal(store_run_get(st, run_id, &run), 0);
                assert_int_equal(store_run_thresholds(&run, &c), cases[i].ret);
                store_run_release(&run);
                assert_true(c.near_oom_mb == cases[i].near_oom_mb);
                assert_true(c.low_disk_gb == cases[i].low_disk_gb);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
            cmocka_unit_test_setup_teardown(test_targets, setup, teardown),
            cmocka_unit_test_setup_teardown(test_targets_cap, setup, teardown),
            cmocka_unit_test_setup_teardown(test_thresholds, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
