/* SPDX-License-Identifier: MIT */
/* The history store on a real SQLite file: schema, runs, samples, targets,
 * compiler-cache snapshots and layers read back as typed structs
 * (history.h, history-run.h), the upgrade of a version-1 file, liveness of
 * running rows (and the platform reads behind it, on a fixture tree),
 * faults (garbage file, a file corrupted after it was written, a lock held
 * by another process, newer schema), --since parsing and the sample column
 * table. The sqlite3 API appears here only to make those files and to
 * cross-check them from outside the store. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "helpers/float.h"
#include "helpers/target-row.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/summary.h"
#include "cmd/cmd-history.h"
#include "model/targets.h"
#include "model/units.h"
#include "platform/procfs.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/macro.h"
#include "util/util.h"
#include "pipeline/recorder.h"

static char dir[256];

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

static void path_in(char *buf, size_t len, const char *name)
{
        snprintf(buf, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test-store.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[300];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Three samples with known values; the second is the memory peak. */
static void known_samples(struct sample s[3])
{
        static const double mem[3] = {8000, 12000, 9000}, avail[3] = {8000, 4000, 7000};
        static const char *const ctx[3] = {"", "[3/9] Building CXX object big.cc.o",
                                           "[9/9] Linking"};

        for (int i = 0; i < 3; i++) {
                sample_clear(&s[i]);
                s[i].epoch = 1761962400.0 + 2 * i;
                s[i].elapsed_s = 2.0 * i;
                s[i].load1 = 1.5 + i;
                s[i].cpu_pct = 33.0 * (i + 1);
                s[i].mem_used_bytes = mem[i] * SAMPLE_MIB;
                s[i].mem_avail_bytes = avail[i] * SAMPLE_MIB;
                s[i].mem_pct = mem[i] / 160;
                s[i].swap_used_bytes = 0;
                s[i].disk_avail_bytes = (31.0 - i) * SAMPLE_GIB;
                s[i].disk_pct = 40.0;
                s[i].compilers = 2.0 * (i + 1);
                s[i].stage = i ? "app/builder" : "";
                s[i].context = ctx[i];
        }
        s[2].load1 = NAN; /* unknown stays unknown */
}

/* Runs as a listing sees them, copied out of the callback. */
#define RUNS_MAX 8
struct seen {
        int n;
        char id[RUNS_MAX][64];
        enum store_run_state state[RUNS_MAX];
        double duration[RUNS_MAX];
};

static int see_run(void *userdata, const struct store_run *r)
{
        struct seen *w = userdata;

        assert_true(w->n < RUNS_MAX);
        snprintf(w->id[w->n], sizeof(w->id[0]), "%s", r->info.run_id);
        w->state[w->n] = r->state;
        w->duration[w->n] = r->duration_s;
        w->n++;
        return 0;
}

static int add_to_summary(void *userdata, const struct sample *s)
{
        summary_add(userdata, s);
        return 0;
}

/* The schema version of the file, read from outside the store. */
static int file_version(const char *db)
{
        sqlite3 *h;
        sqlite3_stmt *s;
        int v;

        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        v = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
        sqlite3_close(h);
        return v;
}

/* The targets as store_targets_each() gives them, copied. */
struct seen_targets {
        int n;
        char name[4][TARGET_NAME_MAX + 1], node[4][TARGET_FIELD_MAX + 1];
        int64_t steps[4], cached[4], cc_hits[4];
        int success[4];
        double duration[4], ratio[4];
};

static int see_target(void *userdata, const struct target_fact *t)
{
        struct seen_targets *w = userdata;

        assert_true(w->n < 4);
        snprintf(w->name[w->n], sizeof(w->name[0]), "%s", t->name);
        snprintf(w->node[w->n], sizeof(w->node[0]), "%s", t->node[0] ? t->node : "(null)");
        w->steps[w->n] = store_fact_steps(t, false);
        w->cached[w->n] = store_fact_steps(t, true);
        w->cc_hits[w->n] = store_cc_count(&t->cc, true);
        w->success[w->n] = t->success;
        w->duration[w->n] = t->duration_s;
        w->ratio[w->n] = t->cache_ratio;
        w->n++;
        return 0;
}

static void check_finished_run(const struct store_run *r, const struct run_info *ri)
{
        assert_string_equal(r->info.run_id, ri->run_id);
        assert_int_equal(r->state, STORE_RUN_FINISHED);
        assert_true(r->info.finished);
        assert_int_equal(r->info.exit_code, 2);
        assert_int_equal(r->info.term_signal, 0);
        assert_true(r->info.start_epoch == ri->start_epoch && r->info.end_epoch == ri->end_epoch);
        assert_true(r->duration_s == 60.5);
        assert_string_equal(r->info.argv[0], "make");
        assert_string_equal(r->info.argv[1], "-j8");
        assert_null(r->info.argv[2]);
        assert_string_equal(r->info.cwd, "/src/proj");
        assert_int_equal(r->info.ncpu, 8);
        assert_int_equal(r->info.pid, 4242);
        assert_true(r->info.interval == 2.0);
        assert_true(r->mem_used_peak_mb == 12000);
        assert_true(r->mem_used_peak_elapsed_s == 2.0);
        assert_string_equal(r->mem_used_peak_context, "[3/9] Building CXX object big.cc.o");
        assert_true(r->load1_peak == 2.5);
        assert_true(r->cpu_pct_avg == 66.0);
        assert_int_equal(r->near_oom_samples, 1);
        assert_int_equal(r->low_disk_samples, 0);
        assert_int_equal(r->samples, 3);
        assert_int_equal(r->samples_dropped, 0);
        assert_string_equal(r->nodes, "node-a");
        assert_string_equal(r->builder, "make");
        assert_string_equal(r->vcs_ref, "refs/heads/main");
        assert_null(r->cgroup_mode); /* unknown stays unknown */
        assert_int_equal(r->steps, 9);
        assert_int_equal(r->cached_steps, 6);
        /* its stored summary named no thresholds */
        assert_true(isnan(r->near_oom_mb) && isnan(r->low_disk_gb));
}

static void test_run_round_trip(void **state)
{
        char db[300], *argv[] = {M("make"), M("-j8"), NULL};
        struct run_info ri = {
            .run_id = M("20261129T154020Z-a1b2c3"),
            .kind = M("run"),
            .argv = argv,
            .cwd = M("/src/proj"),
            .host = M("builder"),
            .start_epoch = 1761962400.25,
            .end_epoch = NAN,
            .exit_code = -1,
            .ncpu = 8,
            .interval = 2.0,
            .pid = 4242,
        };
        struct store_run_extra x = {.builder = "make",
                                    .vcs_rev = "0123456789abcdef0123456789abcdef01234567",
                                    .vcs_ref = "refs/heads/main"};
        struct store_recorder me;
        struct target_row t = {.name = "app",
                               .duration_s = 12.5,
                               .steps = 9,
                               .cached = 6,
                               .success = 1,
                               .cc_hits = 40,
                               .cc_misses = 2,
                               .node = "node-a"},
                          u = {.name = "aaa-unknown",
                               .duration_s = NAN,
                               .steps = -1,
                               .cached = -1,
                               .success = -1,
                               .cc_hits = -1,
                               .cc_misses = -1};
        struct store *st;
        struct sample s[3];
        struct summary sum, back;
        struct store_run run;
        struct seen w = {0};
        struct seen_targets tw = {0};
        int64_t id, id2;

        (void)state;
        path_in(db, sizeof(db), "sub/dir/h.db");
        known_samples(s);
        summary_init(&sum, NULL);
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(file_version(db), STORE_SCHEMA_VERSION);
        assert_int_equal(recorder_self(&me), 0);
        assert_int_equal(me.pid, (long)getpid());
        assert_int_equal(store_run_begin(st, &ri, &x, &me, &id), 0);

        /* while it runs: alive, as far as it got */
        assert_int_equal(store_begin(st), 0);
        for (int i = 0; i < 3; i++) {
                assert_int_equal(store_sample_insert(st, id, (uint64_t)i, &s[i]), 0);
                summary_add(&sum, &s[i]);
        }
        assert_int_equal(store_run_update(st, id, NULL, &sum, NULL, 0), 0);
        assert_int_equal(store_commit(st), 0);
        assert_int_equal(store_runs_each(st, NAN, 0, see_run, &w), 1);
        assert_int_equal(w.state[0], STORE_RUN_RUNNING);
        assert_true(w.duration[0] == 4.0); /* the last sample's elapsed */
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_false(run.info.finished);
        assert_int_equal(run.info.exit_code, -1);
        assert_true(isnan(run.info.end_epoch));
        assert_int_equal(run.steps, -1); /* no targets yet */
        assert_int_equal(run.cached_steps, -1);
        store_run_release(&run);

        ri.end_epoch = 1761962460.75;
        ri.finished = true;
        ri.exit_code = 2;
        assert_int_equal(store_begin(st), 0);
        assert_int_equal(store_run_update(st, id, &ri, &sum, "{}", 0), 0);
        assert_int_equal(target_row_insert(st, id, &t), 0);
        assert_int_equal(target_row_insert(st, id, &u), 0);
        assert_int_equal(store_commit(st), 0);

        assert_int_equal(store_run_get(st, id, &run), 0);
        check_finished_run(&run, &ri);
        store_run_release(&run);
        assert_int_equal(store_run_get(st, id + 1, &run), -ENOENT);
        memset(&w, 0, sizeof(w));
        assert_int_equal(store_runs_each(st, 1761962401.0, 10, see_run, &w), 0); /* --since */
        assert_int_equal(w.n, 0);

        assert_int_equal(store_run_find(st, NULL, &id2), 0);
        assert_int_equal(id2, id);
        assert_int_equal(store_run_find(st, "20261129T15", &id2), 0);
        assert_int_equal(store_run_find(st, "nope", &id2), -ENOENT);

        /* targets by name, unknowns as unknown */
        assert_int_equal(store_targets_each(st, id, false, 0, see_target, &tw), 2);
        assert_string_equal(tw.name[0], "aaa-unknown");
        assert_int_equal(tw.steps[0], -1);
        assert_int_equal(tw.success[0], -1);
        assert_true(isnan(tw.duration[0]));
        assert_string_equal(tw.node[0], "(null)");
        assert_string_equal(tw.name[1], "app");
        assert_int_equal(tw.steps[1], 9);
        assert_int_equal(tw.cached[1], 6);
        assert_int_equal(tw.cc_hits[1], 40);
        assert_int_equal(tw.success[1], 1);
        assert_true(tw.duration[1] == 12.5);
        assert_true(tw.ratio[1] == 6.0 / 9.0);
        assert_true(isnan(tw.ratio[0]));
        /* the run's own distinct steps, once stored, win over the sum */
        assert_int_equal(store_run_set_steps(st, id, 7, 3), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_int_equal(run.steps, 7);
        assert_int_equal(run.cached_steps, 3);
        store_run_release(&run);

        /* summarize from the database: the same summary, bit for bit */
        summary_init(&back, NULL);
        assert_int_equal(store_samples_each(st, id, add_to_summary, &back), 3);
        assert_true(back.mem_used_peak.value == sum.mem_used_peak.value);
        assert_string_equal(back.mem_used_peak.context, sum.mem_used_peak.context);
        assert_true(back.cpu_pct_sum == sum.cpu_pct_sum);
        assert_true(back.load1_peak.value == 2.5);
        assert_int_equal(back.near_oom_samples, 1);

        /* a rewritten run id replaces the old row and its samples */
        assert_int_equal(store_run_begin(st, &ri, &x, &me, &id2), 0);
        summary_init(&back, NULL);
        assert_int_equal(store_samples_each(st, id2, add_to_summary, &back), 0);
        assert_int_equal(store_samples_each(st, id, add_to_summary, &back), 0);
        assert_int_equal(store_runs_each(st, NAN, 0, NULL, NULL) >= 0, 1);
        memset(&w, 0, sizeof(w));
        assert_int_equal(store_runs_each(st, NAN, 0, see_run, &w), 1);
        store_close(st);
}

static void exec_sql_on(const char *db, const char *sql)
{
        char *err = NULL;
        sqlite3 *h;

        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
                fail_msg("%s: %s", sql, err);
        sqlite3_close(h);
}

static void exec_file(const char *db, const char *sql_path)
{
        char *sql = NULL;
        size_t len;

        assert_int_equal(read_file_at(AT_FDCWD, sql_path, 1 << 20, &sql, &len), 0);
        exec_sql_on(db, sql);
        free(sql);
}

/* Schema 6: the targets' times, the BuildKit steps (with the count past
 * the cap), the slowest ninja edges and the log's compiler-cache blocks
 * read back as the model had them. */
static void test_steps_edges_round_trip(void **state)
{
        char db[300], *argv[] = {M("docker"), M("buildx"), M("bake"), NULL};
        struct run_info ri = {.run_id = M("steps-1"),
                              .kind = M("run"),
                              .argv = argv,
                              .start_epoch = 1761962400,
                              .end_epoch = 1761962430,
                              .exit_code = 0,
                              .finished = true};
        struct target_row t = {.name = "web",
                               .duration_s = 8,
                               .steps = 2,
                               .cached = 1,
                               .success = 1,
                               TARGET_ROW_NO_CACHE,
                               .start_s = 1.5,
                               .end_s = 9.5};
        struct store_cache_snapshot first = {.taken_epoch = ri.start_epoch + 2,
                                             .tool = "sccache",
                                             .origin = "log-first",
                                             .hits = 1,
                                             .misses = 3,
                                             .size_bytes = -1,
                                             .max_size_bytes = -1,
                                             .files = -1},
                                    last = first;
        struct targets *in = calloc(1, sizeof(*in)), *out = calloc(1, sizeof(*out));
        _cleanup_free_ struct run_facts *f = calloc(1, sizeof(*f));
        struct summary sum;
        struct store *st;
        int64_t id;

        (void)state;
        assert_non_null(in);
        assert_non_null(out);
        assert_non_null(f);
        targets_init(in);
        targets_init(out);
        (void)targets_get(in, "api", 3);
        (void)targets_get(in, "web", 3);
        assert_int_equal(targets_add_step(in, &(struct step_fact){.name = "[web 1/2] RUN npm ci",
                                                                  .target = 1,
                                                                  .start_s = 1.5,
                                                                  .end_s = 2.25,
                                                                  .step = true,
                                                                  .cached = true}),
                         0);
        assert_int_equal(targets_add_step(in, &(struct step_fact){.name = "[internal] load",
                                                                  .target = -1,
                                                                  .start_s = 0.5,
                                                                  .end_s = NAN}),
                         0);
        assert_int_equal(targets_add_step(in, &(struct step_fact){.name = "[api 1/1] RUN x",
                                                                  .target = 0,
                                                                  .start_s = 3,
                                                                  .end_s = 4,
                                                                  .step = true,
                                                                  .error = true,
                                                                  .canceled = false,
                                                                  .exec = {.set = true,
                                                                           .from_record = true,
                                                                           .cpu_s = 2.5}}),
                         0);
        in->steps_dropped = 7;
        in->ninja_log_set = true;
        in->ninja_edges = 1234;
        targets_offer_edge(in, 100, 5100, "big.o", 5);
        targets_offer_edge(in, 0, 300, "small.o", 7);
        targets_offer_edge(in, 100, 5100, "big.d", 5); /* a second output: not in slow */
        targets_keep_edge(in, 100, 5100, "big.o", 5);
        targets_keep_edge(in, 0, 300, "small.o", 7);
        targets_keep_edge(in, 100, 5100, "big.d", 5);
        in->ninja_mtime = 1761962425.5;
        last.origin = "log-last";
        last.taken_epoch = ri.start_epoch + 20;
        last.hits = 12;
        last.misses = 8;

        path_in(db, sizeof(db), "steps.db");
        summary_init(&sum, NULL);
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(store_run_begin(st, &ri, NULL, NULL, &id), 0);
        assert_int_equal(store_begin(st), 0);
        assert_int_equal(store_run_update(st, id, &ri, &sum, "{}", 0), 0);
        assert_int_equal(target_row_insert(st, id, &t), 0);
        assert_int_equal(store_steps_insert(st, id, in), 0);
        assert_int_equal(store_edges_insert(st, id, in), 0);
        first.run = last.run = id;
        assert_int_equal(store_cache_snapshot_insert(st, &first), 0);
        assert_int_equal(store_cache_snapshot_insert(st, &last), 0);
        assert_int_equal(store_commit(st), 0);

        assert_int_equal(store_targets_get(st, id, f), 1);
        assert_float_equal(f->t[0].start_s, 1.5, 1e-9);
        assert_float_equal(f->t[0].end_s, 9.5, 1e-9);

        /* the steps' targets by name: "web" comes first in out */
        assert_int_equal(store_steps_get(st, id, out), 3);
        assert_int_equal(out->nstepv, 3);
        assert_int_equal(out->steps_dropped, 7);
        assert_string_equal(out->stepv[0].name, "[web 1/2] RUN npm ci");
        assert_string_equal(out->t[out->stepv[0].target].name, "web");
        assert_float_equal(out->stepv[0].start_s, 1.5, 1e-9);
        assert_float_equal(out->stepv[0].end_s, 2.25, 1e-9);
        assert_true(out->stepv[0].step && out->stepv[0].cached && !out->stepv[0].error);
        assert_int_equal(out->stepv[1].target, -1);
        assert_true(isnan(out->stepv[1].end_s));
        assert_false(out->stepv[1].step);
        assert_string_equal(out->t[out->stepv[2].target].name, "api");
        assert_true(out->stepv[2].error && !out->stepv[2].canceled);
        /* its figures' source (version 15) */
        assert_true(out->stepv[2].exec.set && out->stepv[2].exec.from_record);
        assert_float_equal(out->stepv[2].exec.cpu_s, 2.5, 1e-9);
        assert_false(out->stepv[0].exec.set);

        assert_int_equal(store_edges_get(st, id, out), 3);
        assert_int_equal(out->nedgev, 3);
        assert_int_equal(out->ninja_max_end_ms, 5100);
        assert_float_equal(out->ninja_mtime, 1761962425.5, 1e-6);
        assert_true(out->ninja_log_set);
        assert_int_equal(out->ninja_edges, 1234);
        assert_string_equal(out->slow[0].output, "big.o");
        assert_int_equal(out->slow[0].start_ms, 100);
        assert_int_equal(out->slow[0].end_ms, 5100);
        assert_string_equal(out->slow[1].output, "small.o");

        assert_int_equal(store_cc_log_get(st, id, ri.start_epoch, out), 0);
        assert_non_null(targets_cc_blocks(out, CC_TOOL_SCCACHE));
        assert_null(targets_cc_blocks(out, CC_TOOL_CCACHE));
        assert_int_equal(out->cc_log[CC_TOOL_SCCACHE].blocks, 2);
        assert_int_equal(out->cc_log[CC_TOOL_SCCACHE].first.hits, 1);
        assert_int_equal(out->cc_log[CC_TOOL_SCCACHE].last.hits, 12);
        assert_int_equal(out->cc_log[CC_TOOL_SCCACHE].last.misses, 8);
        assert_float_equal(out->cc_log[CC_TOOL_SCCACHE].last.seen, 20, 1e-6);
        store_close(st);
        targets_release(in);
        targets_release(out);
        free(in);
        free(out);
}

static void test_upgrade_v1(void **state)
{
        char db[300];
        struct store *st;
        struct summary sum;
        struct store_run run;
        struct seen w = {0};
        struct seen_targets tw = {0};
        int64_t id;

        (void)state;
        path_in(db, sizeof(db), "v1.db");
        exec_file(db, FIXTURES "/history-v1/history.sql");
        assert_int_equal(file_version(db), 1);
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        /* now the current version, with the v2 tables */
        assert_int_equal(file_version(db), STORE_SCHEMA_VERSION);

        assert_int_equal(store_runs_each(st, NAN, 0, see_run, &w), 1);
        assert_string_equal(w.id[0], "20251101T020000Z-0a0b0c");
        assert_int_equal(w.state[0], STORE_RUN_FINISHED);
        assert_int_equal(store_run_find(st, "20251101T020000Z-0a0b0c", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_int_equal(run.info.exit_code, 2);
        assert_null(run.builder); /* a column version 1 did not have */
        assert_null(run.vcs_rev);
        assert_int_equal(run.samples_dropped, 0);
        assert_true(run.duration_s == 3600);
        assert_true(run.mem_used_peak_mb == 12000);
        assert_string_equal(run.mem_used_peak_stage, "app/builder");
        assert_string_equal(run.info.host, "oldhost");
        assert_string_equal(run.info.argv[1], "-j8");
        assert_int_equal(run.steps, -1);
        store_run_release(&run);
        summary_init(&sum, NULL);
        assert_int_equal(store_samples_each(st, id, add_to_summary, &sum), 3);
        assert_true(sum.mem_used_peak.value == 12000);
        assert_string_equal(sum.mem_used_peak.stage, "app/builder");
        assert_true(sum.disk_avail_min.value == 30.5);
        assert_int_equal(sum.near_oom_samples, 1);
        assert_int_equal(store_targets_each(st, id, false, 0, see_target, &tw), 0);
        store_close(st);
        /* iso is derived from epoch on the upgraded file */
        {
                sqlite3 *h;
                sqlite3_stmt *s;

                assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
                assert_int_equal(
                    sqlite3_prepare_v2(h, "SELECT iso FROM samples WHERE run = 1 AND seq = 1", -1,
                                       &s, NULL),
                    SQLITE_OK);
                assert_int_equal(sqlite3_step(s), SQLITE_ROW);
                assert_string_equal((const char *)sqlite3_column_text(s, 0),
                                    "2025-11-01T02:00:02.000Z");
                sqlite3_finalize(s);
                sqlite3_close(h);
        }
        /* a second open has nothing to do */
        assert_int_equal(file_version(db), STORE_SCHEMA_VERSION);
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        store_close(st);
}

static void test_liveness(void **state)
{
        char db[300], *argv[] = {M("sleep"), NULL};
        struct run_info ri = {.run_id = M("dead"),
                              .kind = M("run"),
                              .argv = argv,
                              .host = NULL,
                              .start_epoch = 100,
                              .end_epoch = NAN,
                              .exit_code = -1};
        struct store_recorder me, gone;
        struct store *st;
        struct seen w = {0};
        char host[256] = "";
        int64_t id;
        pid_t pid;

        (void)state;
        (void)gethostname(host, sizeof(host) - 1);
        ri.host = host;
        path_in(db, sizeof(db), "live.db");
        /* as the commands open it: this host, this boot, /proc */
        assert_int_equal(history_store_open(db, true, 1000, &st), 0);
        assert_int_equal(recorder_self(&me), 0);
        /* a recorder that is gone: a child that exited */
        pid = fork();
        if (pid == 0)
                _exit(0);
        waitpid(pid, NULL, 0);
        gone = me;
        gone.pid = pid;
        assert_int_equal(store_run_begin(st, &ri, NULL, &gone, &id), 0);
        ri.run_id = M("alive");
        ri.start_epoch = 50;
        assert_int_equal(store_run_begin(st, &ri, NULL, &me, &id), 0);
        /* the same pid, but another process since (start time differs) */
        me.starttime++;
        ri.run_id = M("reused-pid");
        ri.start_epoch = 40;
        assert_int_equal(store_run_begin(st, &ri, NULL, &me, &id), 0);
        /* another machine: cannot tell, so running */
        ri.run_id = M("elsewhere");
        ri.host = M("some-other-host.invalid");
        ri.start_epoch = 30;
        assert_int_equal(store_run_begin(st, &ri, NULL, &gone, &id), 0);
        /* this machine, another boot */
        me.starttime--;
        snprintf(me.boot_id, sizeof(me.boot_id), "not-this-boot");
        ri.run_id = M("rebooted");
        ri.host = host;
        ri.start_epoch = 20;
        assert_int_equal(store_run_begin(st, &ri, NULL, &me, &id), 0);
        assert_int_equal(store_runs_each(st, NAN, 0, see_run, &w), 5);
        assert_int_equal(w.state[0], STORE_RUN_INCOMPLETE);
        assert_int_equal(w.state[1], STORE_RUN_RUNNING);
        assert_int_equal(w.state[2], STORE_RUN_INCOMPLETE);
        assert_int_equal(w.state[3], STORE_RUN_RUNNING);
        assert_int_equal(w.state[4], STORE_RUN_INCOMPLETE);
        assert_string_equal(store_run_state_name(w.state[4]), "incomplete");
        store_close(st);
}

/* ---- the platform reads behind liveness, on a fixture tree -------------- */

static void put_file(const char *root, const char *rel, const char *text)
{
        char path[512], *slash;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        slash = strrchr(path, '/');
        *slash = '\0';
        assert_int_equal(mkdir_p(path, 0755), 0);
        *slash = '/';
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static void test_identity(void **state)
{
        static const struct {
                long pid;
                uint64_t start;
                int want;
        } alive[] = {
            {77, 4242, 1}, {77, 4243, 0}, {78, 4242, 0}, {0, 1, -EINVAL}, {-5, 1, -EINVAL},
        };
        char root[300];
        struct procfs_identity me, real;
        int fd;

        (void)state;
        path_in(root, sizeof(root), "root");
        put_file(root, "proc/self/stat",
                 "77 (buildtel) S 1 77 77 0 -1 4194304 98 0 0 0 12 3 0 0 "
                 "20 0 1 0 4242 3133440 381 0 0 0\n");
        put_file(root, "proc/77/stat",
                 "77 (build tel) S 1 77 77 0 -1 4194304 98 0 0 0 12 3 0 0 20 "
                 "0 1 0 4242 3133440 381 0 0 0\n");
        put_file(root, "proc/sys/kernel/random/boot_id", "0f0e0d0c-aaaa-bbbb-cccc-000000000001\n");
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(procfs_self_identity(fd, &me), 0);
        assert_int_equal(me.pid, 77);
        assert_int_equal(me.starttime, 4242);
        assert_string_equal(me.boot_id, "0f0e0d0c-aaaa-bbbb-cccc-000000000001");
        for (size_t i = 0; i < sizeof(alive) / sizeof(alive[0]); i++)
                assert_int_equal(procfs_pid_alive(fd, alive[i].pid, alive[i].start), alive[i].want);
        /* no boot id: "" (and the rest still read) */
        path_in(root, sizeof(root), "root/proc/sys/kernel/random/boot_id");
        assert_int_equal(unlink(root), 0);
        assert_int_equal(procfs_self_identity(fd, &me), 0);
        assert_string_equal(me.boot_id, "");
        /* a stat that is not one */
        path_in(root, sizeof(root), "root");
        put_file(root, "proc/self/stat", "junk\n");
        me.pid = 1;
        assert_int_equal(procfs_self_identity(fd, &me), -EINVAL);
        assert_int_equal(me.pid, 1); /* untouched */
        close(fd);

        /* the real tree: this process */
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(procfs_self_identity(fd, &real), 0);
        assert_int_equal(real.pid, (long)getpid());
        assert_int_equal(procfs_pid_alive(fd, real.pid, real.starttime), 1);
        assert_int_equal(procfs_pid_alive(fd, real.pid, real.starttime + 1), 0);
        close(fd);
}

/* ---- compiler-cache snapshots and layers -------------------------------- */

struct seen_cache {
        int n;
        char tool[4][16], origin[4][16];
        int64_t hits[4], misses[4];
};

static int see_cache(void *userdata, const struct store_cache_snapshot *c)
{
        struct seen_cache *w = userdata;

        assert_true(w->n < 4);
        snprintf(w->tool[w->n], sizeof(w->tool[0]), "%s", c->tool);
        snprintf(w->origin[w->n], sizeof(w->origin[0]), "%s", c->origin);
        w->hits[w->n] = c->hits;
        w->misses[w->n] = c->misses;
        w->n++;
        return 0;
}

static int64_t begin_run(struct store *st, const char *run_id, double start)
{
        char *argv[] = {M("make"), NULL};
        struct run_info ri = {.run_id = M(run_id),
                              .kind = M("run"),
                              .argv = argv,
                              .host = M("h"),
                              .start_epoch = start,
                              .end_epoch = NAN,
                              .exit_code = -1};
        int64_t id;

        assert_int_equal(store_run_begin(st, &ri, NULL, NULL, &id), 0);
        return id;
}

static void test_cache(void **state)
{
        static const struct {
                int run; /* index into ids, -1: none */
                const char *tool, *origin;
                double taken;
                int64_t hits, misses;
        } rows[] = {
            {-1, "ccache", "cache", 100, 10, 5},   {0, "ccache", "log-first", 201, 10, 5},
            {0, "ccache", "log-last", 202, 15, 6}, {1, "ccache", "log-first", 301, 20, 9},
            {1, "ccache", "log-last", 302, 19, 9}, /* went down: a reset, 19 and 9 since */
            {2, "ccache", "log-last", 402, 3, 3},  /* one block only */
            {-1, "ccache", "cache", 500, 40, 20},  {-1, "sccache", "cache", 501, 1, 1},
        };
        char db[300];
        struct store *st;
        struct store_cache_snapshot prev;
        struct store_cache_runs cr;
        struct seen_cache w = {0};
        int64_t ids[3];

        (void)state;
        path_in(db, sizeof(db), "cache.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(store_cache_previous(st, "ccache", &prev), 0); /* none yet */
        ids[0] = begin_run(st, "r0", 200);
        ids[1] = begin_run(st, "r1", 300);
        ids[2] = begin_run(st, "r2", 400);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct store_cache_snapshot c = {.taken_epoch = rows[i].taken,
                                                 .tool = rows[i].tool,
                                                 .origin = rows[i].origin,
                                                 .run = rows[i].run >= 0 ? ids[rows[i].run] : 0,
                                                 .hits = rows[i].hits,
                                                 .misses = rows[i].misses,
                                                 .size_bytes = -1,
                                                 .max_size_bytes = -1,
                                                 .files = 7};

                /* before the latest `buildtel cache` of ccache, the one before it */
                if (rows[i].taken == 500) {
                        assert_int_equal(store_cache_previous(st, "ccache", &prev), 1);
                        assert_true(prev.taken_epoch == 100);
                }
                assert_int_equal(store_cache_snapshot_insert(st, &c), 0);
        }
        /* the latest `buildtel cache` of ccache */
        assert_int_equal(store_cache_previous(st, "ccache", &prev), 1);
        assert_true(prev.taken_epoch == 500);
        assert_int_equal(prev.hits, 40);
        assert_int_equal(prev.size_bytes, -1);
        assert_int_equal(prev.files, 7);
        assert_string_equal(prev.tool, "ccache");
        assert_null(prev.version);
        assert_int_equal(store_cache_previous(st, "nosuchtool", &prev), 0);
        /* what the runs since 100 saw: three printed stats, two pairs count
         * (figure_cc_delta(): 5 and 1, then the 19 and 9 since a reset) */
        assert_int_equal(store_cache_runs_since(st, "ccache", 100, &cr), 0);
        assert_int_equal(cr.runs, 3);
        assert_int_equal(cr.hits, 5 + 19);
        assert_int_equal(cr.misses, 1 + 9);
        assert_int_equal(store_cache_runs_since(st, "ccache", 350, &cr), 0);
        assert_int_equal(cr.runs, 1);
        assert_int_equal(cr.hits, -1); /* no pair: unknown */
        /* a run's own snapshots, oldest first */
        assert_int_equal(store_cache_snapshots_each(st, ids[0], see_cache, &w), 2);
        assert_string_equal(w.origin[0], "log-first");
        assert_string_equal(w.origin[1], "log-last");
        assert_int_equal(w.hits[1], 15);
        store_close(st);
}

struct seen_layers {
        int n;
        char target[4][TARGET_NAME_MAX + 1], run[4][16], prev_node[4][16];
        bool changed[4];
        double ratio[4];
};

static int see_layer(void *userdata, const struct store_layer *l)
{
        struct seen_layers *w = userdata;

        assert_true(w->n < 4);
        snprintf(w->target[w->n], sizeof(w->target[0]), "%s", l->target.name);
        snprintf(w->run[w->n], sizeof(w->run[0]), "%s", l->run);
        snprintf(w->prev_node[w->n], sizeof(w->prev_node[0]), "%s",
                 l->previous_node ? l->previous_node : "(null)");
        w->changed[w->n] = l->node_changed;
        w->ratio[w->n] = l->target.cache_ratio;
        w->n++;
        return 0;
}

static void test_layers(void **state)
{
        static const struct {
                int run;
                const char *name, *node;
                int64_t steps, cached;
        } rows[] = {
            {0, "app", "node-a", 10, 9},
            {1, "app", "node-b", 10, 2},
            {1, "web", "node-a", 4, 4},
            {2, "lib", NULL, 0, 0},
        };
        char db[300];
        struct store *st;
        struct seen_layers w = {0};
        int64_t ids[3];

        (void)state;
        path_in(db, sizeof(db), "layers.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(store_layers_each(st, NAN, 0, see_layer, &w), 0);
        ids[0] = begin_run(st, "a", 100);
        ids[1] = begin_run(st, "b", 200);
        ids[2] = begin_run(st, "c", 300);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct target_row t = {.name = rows[i].name,
                                       .duration_s = NAN,
                                       .steps = rows[i].steps,
                                       .cached = rows[i].cached,
                                       .success = -1,
                                       .cc_hits = -1,
                                       .cc_misses = -1,
                                       .node = rows[i].node,
                                       .sccache_hits = -1,
                                       .sccache_misses = -1,
                                       .ccache_hits = -1,
                                       .ccache_misses = -1};
                assert_int_equal(target_row_insert(st, ids[rows[i].run], &t), 0);
        }
        assert_int_equal(store_layers_each(st, NAN, 0, see_layer, &w), 3);
        /* newest build first, then by name */
        assert_string_equal(w.target[0], "lib");
        assert_true(isnan(w.ratio[0])); /* 0 steps */
        assert_string_equal(w.target[1], "app");
        assert_string_equal(w.run[1], "b");
        assert_true(w.changed[1]);
        assert_string_equal(w.prev_node[1], "node-a");
        assert_true(w.ratio[1] == 0.2);
        assert_string_equal(w.target[2], "web");
        assert_false(w.changed[2]);
        assert_string_equal(w.prev_node[2], "(null)");
        memset(&w, 0, sizeof(w));
        assert_int_equal(store_layers_each(st, 250, 0, see_layer, &w), 1); /* --since */
        memset(&w, 0, sizeof(w));
        assert_int_equal(store_layers_each(st, NAN, 2, see_layer, &w), 2); /* --limit */
        store_close(st);
}

/* ---- faults ------------------------------------------------------------- */

static int stop_at_first(void *userdata, const struct store_run *r)
{
        (void)userdata;
        (void)r;
        return -ECANCELED;
}

/* Another process runs sql on the database and keeps its transaction
 * (and lock) open until *ret_release is closed. Returns its pid. */
static pid_t hold_lock(const char *db, const char *sql, int *ret_release)
{
        int ready[2], release[2];
        char c;
        pid_t pid;

        assert_int_equal(pipe(ready), 0);
        assert_int_equal(pipe(release), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                sqlite3 *h;

                close(ready[0]);
                close(release[1]);
                if (sqlite3_open(db, &h) != SQLITE_OK ||
                    sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
                        _exit(1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                (void)!read(release[0], &c, 1);
                sqlite3_close(h);
                _exit(0);
        }
        close(ready[1]);
        close(release[0]);
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        *ret_release = release[1];
        return pid;
}

static void let_go(pid_t pid, int release)
{
        int status;

        close(release);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_locked(void **state)
{
        char db[300];
        struct store *st, *st2 = NULL;
        struct store_run run;
        struct summary sum;
        struct sample smp;
        int64_t id;
        int release;
        pid_t pid;

        (void)state;
        path_in(db, sizeof(db), "locked.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        id = begin_run(st, "locked", 100);
        sample_clear(&smp);
        smp.cpu_pct = 12.5; /* as the CSV rounds it: the summary rounds so */
        assert_int_equal(store_sample_insert(st, id, 0, &smp), 0);

        /* a run writing (its transaction open): the typed reads go on (WAL),
         * on this store and on one opened now; a second writer waits out the
         * timeout and says so */
        pid = hold_lock(db, "BEGIN IMMEDIATE; UPDATE runs SET samples = 99", &release);
        store_set_busy_timeout(st, 50);
        assert_int_equal(store_runs_each(st, NAN, 0, NULL, NULL), 1);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_int_equal(run.samples, 0); /* not the uncommitted 99 */
        store_run_release(&run);
        summary_init(&sum, NULL);
        assert_int_equal(store_samples_each(st, id, add_to_summary, &sum), 1);
        assert_true(sum.cpu_pct_peak.value == 12.5);
        assert_int_equal(store_begin(st), -EBUSY);
        assert_non_null(strstr(store_strerror(-EBUSY), "locked"));
        assert_int_equal(store_open(db, false, 50, &st2), 0);
        assert_int_equal(store_runs_each(st2, NAN, 0, NULL, NULL), 1);
        store_close(st2);
        st2 = NULL;
        let_go(pid, release);
        assert_int_equal(store_runs_each(st, NAN, 0, stop_at_first, NULL), -ECANCELED);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_int_equal(run.state, STORE_RUN_RUNNING); /* host "h": cannot tell */
        store_run_release(&run);
        store_close(st);

        /* a process holding the file in exclusive locking mode: no reader
         * gets in either */
        pid = hold_lock(db, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE", &release);
        assert_int_equal(store_open(db, false, 50, &st2), -EBUSY);
        assert_null(st2);
        let_go(pid, release);
        assert_int_equal(store_open(db, false, 50, &st), 0);
        assert_int_equal(store_runs_each(st, NAN, 0, NULL, NULL), 1);
        store_close(st);
}

/* A database whose samples table was overwritten with junk after it was
 * written: the file opens (its schema is intact), the sample read says it
 * is corrupt. */
static void test_corrupt(void **state)
{
        char db[300], junk[4096];
        struct store *st;
        struct sample s;
        struct summary sum;
        sqlite3 *h;
        sqlite3_stmt *q;
        int64_t id;
        int root, page, fd;

        (void)state;
        path_in(db, sizeof(db), "corrupt.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        id = begin_run(st, "c", 100);
        assert_int_equal(store_begin(st), 0);
        for (int i = 0; i < 2000; i++) {
                sample_clear(&s);
                s.epoch = 100 + i;
                s.cpu_pct = i % 100;
                s.context = "[1/2] Building C object with a context long enough to fill pages";
                assert_int_equal(store_sample_insert(st, id, (uint64_t)i, &s), 0);
        }
        assert_int_equal(store_commit(st), 0);
        store_close(st); /* checkpoints the WAL into the file */

        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h,
                                            "SELECT rootpage, (SELECT page_size FROM "
                                            "pragma_page_size) FROM sqlite_master WHERE name = "
                                            "'samples'",
                                            -1, &q, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        root = sqlite3_column_int(q, 0);
        page = sqlite3_column_int(q, 1);
        sqlite3_finalize(q);
        sqlite3_close(h);
        assert_true(root > 1 && page == (int)sizeof(junk));
        memset(junk, 0xa5, sizeof(junk));
        fd = open(db, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, junk, sizeof(junk), (off_t)(root - 1) * page),
                         (ssize_t)sizeof(junk));
        close(fd);

        assert_int_equal(store_open(db, false, 1000, &st), 0);
        summary_init(&sum, NULL);
        assert_int_equal(store_samples_each(st, id, add_to_summary, &sum), -STORE_ENOTDB);
        assert_non_null(strstr(store_strerror(-STORE_ENOTDB), "corrupt"));
        store_close(st);
}

static void test_faults(void **state)
{
        char db[300];
        struct store *st = NULL;
        sqlite3 *h;
        int fd;

        (void)state;
        path_in(db, sizeof(db), "garbage.db");
        fd = open(db, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        for (int i = 0; i < 64; i++)
                assert_int_equal(
                    write(fd, "this is not an SQLite database at all, just junk....\n", 53), 53);
        close(fd);
        assert_int_equal(store_open(db, true, 100, &st), -STORE_ENOTDB);
        assert_null(st);
        assert_non_null(strstr(store_strerror(-STORE_ENOTDB), "not a buildtel history database"));

        path_in(db, sizeof(db), "missing.db");
        assert_int_equal(store_open(db, false, 100, &st), -ENOENT);

        path_in(db, sizeof(db), "newer.db");
        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(h);
        assert_int_equal(store_open(db, false, 100, &st), -STORE_ENEWER);
}

/* Rows a hand (or another program) wrote: what no buildtel writes reads as
 * unknown, never as a made-up number. */
static void test_hand_written(void **state)
{
        char db[300];
        struct store *st;
        struct store_run run;
        int64_t id;

        (void)state;
        path_in(db, sizeof(db), "hand.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        store_close(st);
        exec_sql_on(db, "INSERT INTO runs (run_id, kind, argv, start_epoch, state, exit_code,"
                        " samples, near_oom_samples, summary_json) VALUES ('h', 'run',"
                        " '{\"not\": \"an array\"}', 5, 'weird', -3, 2, -1,"
                        " '{\"thresholds\": {\"near_oom_mb\": 2048, \"low_disk_gb\": \"x\"}}');"
                        "INSERT INTO targets (run, name, steps, cached, success) VALUES"
                        " (1, 't', -4, 2, 7);");
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(store_run_find(st, "h", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_int_equal(run.state, STORE_RUN_UNKNOWN);
        assert_null(run.info.argv[0]); /* not an array: no command */
        assert_int_equal(run.info.exit_code, -1);
        assert_int_equal(run.near_oom_samples, -1);
        assert_int_equal(run.samples, 2);
        assert_null(run.info.cwd);
        assert_true(run.near_oom_mb == 2048);
        assert_true(isnan(run.low_disk_gb));
        assert_int_equal(run.steps, -1); /* the one target's steps are not a count */
        {
                struct summary_config c = {.near_oom_mb = 1, .low_disk_gb = 2};
                assert_int_equal(store_run_thresholds(&run, &c), 1);
                assert_true(c.near_oom_mb == 2048 && c.low_disk_gb == 2);
        }
        store_run_release(&run);
        store_run_release(&run); /* a released run releases again */
        store_run_release(NULL);
        store_close(st);
}

static void test_parse_when(void **state)
{
        static const struct {
                const char *in;
                int ret;
                double want; /* for UTC and relative forms */
        } cases[] = {
            {"2h", 0, 1000000 - 7200},
            {"30m", 0, 1000000 - 1800},
            {"3d", 0, 1000000 - 3 * 86400},
            {"1w", 0, 1000000 - 604800},
            {"45s", 0, 1000000 - 45},
            {"2026-11-29T15:40:20Z", 0, 1795966820},
            {"2026-11-29T15:40Z", 0, 1795966800},
            {"2026-11-29Z", 0, 1795910400},
            {"2h30m", -EINVAL, 0},
            {"h", -EINVAL, 0},
            {"-2h", -EINVAL, 0},
            {"yesterday", -EINVAL, 0},
            {"2026-13-01", -EINVAL, 0},
            {"2026-11-29T25:00", -EINVAL, 0},
            {"2026-11-29 15:40:20 junk", -EINVAL, 0},
            {"", -EINVAL, 0},
        };
        double t;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                t = -1;
                assert_int_equal(history_parse_when(cases[i].in, 1000000, &t), cases[i].ret);
                if (cases[i].ret == 0)
                        assert_true(t == cases[i].want);
                else
                        assert_true(t == -1);
        }
        /* local time forms parse (their value depends on TZ) */
        assert_int_equal(history_parse_when("2026-11-29", 0, &t), 0);
        assert_int_equal(history_parse_when("2026-11-29 15:40", 0, &t), 0);
}

static void test_sample_columns(void **state)
{
        struct sample s;
        enum sample_column_type t;
        size_t len, n = sample_column_count();

        (void)state;
        sample_clear(&s);
        assert_true(n >= 14);
        assert_string_equal(sample_column_name(0, &t), "epoch");
        assert_int_equal(t, SAMPLE_COLUMN_NUMBER);
        assert_string_equal(sample_column_name(1, &t), "iso");
        assert_int_equal(t, SAMPLE_COLUMN_ISO);
        assert_null(sample_column_name(n, &t));
        assert_int_equal(sample_column_set_number(&s, 0, 12.5), 0);
        assert_true(s.epoch == 12.5);
        assert_true(sample_column_number(&s, 0) == 12.5);
        assert_int_equal(sample_column_set_number(&s, 1, 1), -EINVAL);
        for (size_t i = 0; i < n; i++) {
                if (strcmp(sample_column_name(i, &t), "stage") != 0)
                        continue;
                assert_int_equal(sample_column_set_text(&s, i, "app/builder"), 0);
                assert_string_equal(sample_column_text(&s, i, &len), "app/builder");
                assert_int_equal(len, 11);
                assert_null(sample_column_text(&s, 0, &len));
        }
        assert_string_equal(s.stage, "app/builder");
}

/* One run with a row in every table that references runs. */
static int64_t fill_run(struct store *st, const char *run_id, double start)
{
        char *argv[] = {M("ninja"), NULL};
        struct run_info ri = {.run_id = M(run_id),
                              .kind = M("run"),
                              .argv = argv,
                              .start_epoch = start,
                              .end_epoch = start + 10,
                              .exit_code = 0,
                              .finished = true};
        struct target_row t = {.name = "app",
                               .duration_s = 1,
                               .steps = 1,
                               .cached = 0,
                               .success = 1,
                               TARGET_ROW_NO_CACHE,
                               .start_s = NAN,
                               .end_s = NAN};
        struct store_cache_snapshot c = {.taken_epoch = start + 1,
                                         .tool = "ccache",
                                         .origin = "log-last",
                                         .hits = 1,
                                         .misses = 1,
                                         .size_bytes = -1,
                                         .max_size_bytes = -1,
                                         .files = -1};
        struct unit u = {.kind = 0, .tool = "cc1", .name = "a.c", .peak_mb = 10, .cpu_s = 1};
        struct targets *ts = calloc(1, sizeof(*ts));
        struct sample smp[3];
        struct summary sum;
        int64_t id;

        assert_non_null(ts);
        targets_init(ts);
        (void)targets_get(ts, "app", 3);
        assert_int_equal(targets_add_step(ts, &(struct step_fact){.name = "[app 1/1] RUN x",
                                                                  .target = 0,
                                                                  .start_s = 1,
                                                                  .end_s = 2,
                                                                  .step = true}),
                         0);
        ts->ninja_log_set = true;
        ts->ninja_edges = 1;
        targets_offer_edge(ts, 0, 300, "a.o", 3);
        targets_keep_edge(ts, 0, 300, "a.o", 3);
        known_samples(smp);
        summary_init(&sum, NULL);
        assert_int_equal(store_run_begin(st, &ri, NULL, NULL, &id), 0);
        assert_int_equal(store_begin(st), 0);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(store_sample_insert(st, id, i, &smp[i]), 0);
        assert_int_equal(store_run_update(st, id, &ri, &sum, "{}", 0), 0);
        assert_int_equal(target_row_insert(st, id, &t), 0);
        assert_int_equal(store_steps_insert(st, id, ts), 0);
        assert_int_equal(store_edges_insert(st, id, ts), 0);
        assert_int_equal(store_units_insert(st, id, &u, 1), 0);
        c.run = id;
        assert_int_equal(store_cache_snapshot_insert(st, &c), 0);
        c.origin = "cache"; /* a `buildtel cache` snapshot that names the run */
        assert_int_equal(store_cache_snapshot_insert(st, &c), 0);
        assert_int_equal(store_commit(st), 0);
        targets_release(ts);
        free(ts);
        return id;
}

/* Rows of every table with a `run` column that name run id. */
static int64_t rows_of(sqlite3 *db, int64_t id)
{
        sqlite3_stmt *t, *c;
        int64_t n = 0;

        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT m.name FROM sqlite_master m,"
                                            " pragma_table_info(m.name) i"
                                            " WHERE m.type = 'table' AND i.name = 'run'",
                                            -1, &t, NULL),
                         SQLITE_OK);
        while (sqlite3_step(t) == SQLITE_ROW) {
                char sql[256];

                snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\" WHERE run = ?",
                         (const char *)sqlite3_column_text(t, 0));
                assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &c, NULL), SQLITE_OK);
                sqlite3_bind_int64(c, 1, id);
                assert_int_equal(sqlite3_step(c), SQLITE_ROW);
                n += sqlite3_column_int64(c, 0);
                sqlite3_finalize(c);
        }
        sqlite3_finalize(t);
        return n;
}

static int64_t count_sql(sqlite3 *db, const char *sql)
{
        sqlite3_stmt *s;
        int64_t n;

        assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        n = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        return n;
}

/* A run of job on host, started at start, finished with exit code (-1:
 * left running). */
static int64_t job_run(struct store *st, const char *run_id, const char *job, const char *host,
                       double start, int exit_code)
{
        char *argv[] = {M("make"), NULL};
        struct run_info ri = {.run_id = M(run_id),
                              .kind = M("run"),
                              .argv = argv,
                              .host = M(host),
                              .job = job ? M(job) : NULL,
                              .start_epoch = start,
                              .end_epoch = NAN,
                              .exit_code = -1};
        struct summary sum;
        int64_t id;

        assert_int_equal(store_run_begin(st, &ri, NULL, NULL, &id), 0);
        if (exit_code >= 0) {
                summary_init(&sum, NULL);
                ri.end_epoch = start + 10;
                ri.finished = true;
                ri.exit_code = exit_code;
                assert_int_equal(store_begin(st), 0);
                assert_int_equal(store_run_update(st, id, &ri, &sum, NULL, 0), 0);
                assert_int_equal(store_commit(st), 0);
        }
        return id;
}

struct seen_jobs {
        int n;
        char id[RUNS_MAX][64];
        char job[RUNS_MAX][64];
};

static int see_job_run(void *userdata, const struct store_run *r)
{
        struct seen_jobs *w = userdata;

        assert_true(w->n < RUNS_MAX);
        snprintf(w->id[w->n], sizeof(w->id[0]), "%s", r->info.run_id);
        snprintf(w->job[w->n], sizeof(w->job[0]), "%s", r->info.job ? r->info.job : "(null)");
        w->n++;
        return 0;
}

/* Version 9: the job of a run, stored and read back, and a job's runs
 * selected by store_job_runs(). */
static void test_job_runs(void **state)
{
        static const struct {
                struct store_job_filter f;
                int64_t limit;
                const char *want; /* run ids, newest first, space-separated */
        } cases[] = {
            {{.job = "a", .since = NAN, .success = -1}, 0, "a6 a5 a4 a3 a2 a1"},
            {{.job = "a", .since = NAN, .success = -1, .finished_only = true}, 0, "a5 a4 a3 a2 a1"},
            {{.job = "a", .since = NAN, .success = 1, .finished_only = true}, 0, "a5 a3 a1"},
            {{.job = "a", .since = NAN, .success = 0, .finished_only = true}, 0, "a4 a2"},
            {{.job = "a", .since = NAN, .success = 1, .host = "h2"}, 0, "a3"},
            {{.job = "a", .since = NAN, .success = -1, .finished_only = true}, 2, "a5 a4"},
            {{.job = "a", .since = 1030, .success = -1}, 0, "a6 a5 a4 a3"},
            {{.job = "a", .since = NAN, .success = -1}, 0, "a6 a5 a4 a3 a2 a1"},
            {{.job = "b", .since = NAN, .success = -1}, 0, "b1"},
            {{.job = "c", .since = NAN, .success = -1}, 0, ""},
            {{.job = "a/b c", .since = NAN, .success = -1}, 0, "odd"},
        };
        char db[300], want[400];
        struct store *st;
        struct store_run run;
        struct store_job_filter before = {.job = "a", .since = NAN, .success = -1};
        struct seen_jobs w = {0};
        int64_t a5, id;

        (void)state;
        path_in(db, sizeof(db), "jobs.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        job_run(st, "a1", "a", "h1", 1000, 0);
        job_run(st, "a2", "a", "h1", 1010, 2);
        job_run(st, "b1", "b", "h1", 1015, 0);
        job_run(st, "a3", "a", "h2", 1030, 0);
        job_run(st, "a4", "a", "h1", 1040, 1);
        a5 = job_run(st, "a5", "a", "h1", 1050, 0);
        job_run(st, "a6", "a", "h1", 1060, -1); /* running */
        job_run(st, "none", NULL, "h1", 1070, 0);
        job_run(st, "odd", "a/b c", "h1", 1080, 0);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char got[400] = "";
                size_t len = 0;
                int n;

                memset(&w, 0, sizeof(w));
                n = store_job_runs(st, &cases[i].f, cases[i].limit, see_job_run, &w);

                assert_int_equal(n, w.n);
                for (int k = 0; k < w.n; k++) {
                        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", k ? " " : "",
                                                w.id[k]);
                        assert_string_equal(w.job[k], cases[i].f.job);
                }
                print_message("case %zu: %s\n", i, got);
                snprintf(want, sizeof(want), "%s", cases[i].want);
                assert_string_equal(got, want);
        }
        /* before_id leaves out the run compared and later ones */
        before.before_id = a5;
        memset(&w, 0, sizeof(w));
        assert_int_equal(store_job_runs(st, &before, 0, see_job_run, &w), 4);
        assert_string_equal(w.id[0], "a4");
        assert_int_equal(
            store_job_runs(st, &(struct store_job_filter){.since = NAN}, 0, NULL, NULL), -EINVAL);
        /* the job reads back with the run */
        assert_int_equal(store_run_find(st, "odd", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_string_equal(run.info.job, "a/b c");
        store_run_release(&run);
        assert_int_equal(store_run_find(st, "none", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_null(run.info.job);
        store_run_release(&run);
        store_close(st);
}

/* A version-8 file (the current schema without version 9's column and
 * index, made by taking them out of a new file) is upgraded: its runs
 * stay, with no job, the index is made, and new runs store theirs. */
static void test_upgrade_v8(void **state)
{
        char db[300];
        struct store *st;
        struct store_run run;
        struct seen_jobs w = {0};
        sqlite3 *h;
        int64_t id;

        (void)state;
        path_in(db, sizeof(db), "v8.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        job_run(st, "old", NULL, "h1", 1000, 0);
        store_close(st);
        exec_sql_on(db, "DROP INDEX runs_job; ALTER TABLE runs DROP COLUMN job;"
                        " ALTER TABLE runs DROP COLUMN ninja_done;"
                        " ALTER TABLE runs DROP COLUMN ninja_total;"
                        " ALTER TABLE steps DROP COLUMN usage_source;"
                        " PRAGMA user_version = 8;");
        assert_int_equal(file_version(db), 8);
        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(count_sql(h, "SELECT count(*) FROM pragma_table_info('runs')"
                                      " WHERE name = 'job'"),
                         0);
        sqlite3_close(h);

        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(file_version(db), STORE_SCHEMA_VERSION);
        assert_int_equal(store_run_find(st, "old", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_null(run.info.job);
        assert_int_equal(run.info.exit_code, 0);
        store_run_release(&run);
        job_run(st, "new", "ci/build", "h1", 2000, 0);
        assert_int_equal(
            store_job_runs(
                st, &(struct store_job_filter){.job = "ci/build", .since = NAN, .success = -1}, 0,
                see_job_run, &w),
            1);
        assert_string_equal(w.id[0], "new");
        store_close(st);
        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(count_sql(h, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                      " AND name = 'runs_job'"),
                         1);
        /* the index serves a job's runs by time */
        {
                sqlite3_stmt *s;
                const char *detail;

                assert_int_equal(sqlite3_prepare_v2(h,
                                                    "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE"
                                                    " job = 'x' ORDER BY start_epoch DESC",
                                                    -1, &s, NULL),
                                 SQLITE_OK);
                assert_int_equal(sqlite3_step(s), SQLITE_ROW);
                detail = (const char *)sqlite3_column_text(s, 3);
                print_message("plan: %s\n", detail);
                assert_non_null(strstr(detail, "runs_job"));
                sqlite3_finalize(s);
        }
        sqlite3_close(h);
}

/* Units of one name and two paths (../x.c from a/build and from b/build)
 * are two rows (version 10), read back with their paths; a version 9 file's
 * units keep their rows, their paths unknown. */
static void test_units_path(void **state)
{
        char db[300];
        struct store *st;
        struct units *u;
        struct unit rows[2] = {
            {.kind = UNITS_COMPILE,
             .tool = "cc1",
             .name = "../x.c",
             .path = "/p/a/x.c",
             .peak_mb = 10,
             .first_s = 0,
             .last_s = 1,
             .peak_s = 1,
             .cpu_s = 1,
             .wait_s = {1.5, 0.25, 0}},
            {.kind = UNITS_COMPILE,
             .tool = "cc1",
             .name = "../x.c",
             .path = "/p/b/x.c",
             .peak_mb = 20,
             .first_s = 0,
             .last_s = 1,
             .peak_s = 1,
             .cpu_s = 1,
             .wait_s = {NAN, NAN, NAN}},
        };
        const struct unit *got;
        size_t n;
        int64_t id;

        (void)state;
        path_in(db, sizeof(db), "units-path.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        id = job_run(st, "r1", NULL, "h1", 1000, 0);
        assert_int_equal(store_units_insert(st, id, rows, 2), 0);
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(store_units_read(st, id, u), 2);
        got = units_rows(u, &n);
        assert_int_equal(n, 2);
        assert_string_equal(got[0].path, "/p/a/x.c");
        assert_string_equal(got[1].path, "/p/b/x.c");
        assert_true(got[1].peak_mb == 20);
        /* the waits (version 14), NULL unknown */
        assert_true(got[0].wait_s[0] == 1.5 && got[0].wait_s[1] == 0.25 && got[0].wait_s[2] == 0);
        assert_true(isnan(got[1].wait_s[0]) && isnan(got[1].wait_s[2]));
        units_free(u);
        store_close(st);

        /* back to version 9's table, then upgraded again */
        exec_sql_on(db, "DROP TABLE units; CREATE TABLE units ("
                        " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                        " kind TEXT NOT NULL, name TEXT NOT NULL, tool TEXT,"
                        " first_elapsed_s REAL, last_elapsed_s REAL, peak_mb REAL,"
                        " peak_elapsed_s REAL, cpu_s REAL, PRIMARY KEY (run, kind, name));"
                        " CREATE INDEX units_name ON units(name);"
                        " INSERT INTO units (run, kind, name, tool, peak_mb)"
                        "  SELECT id, 'compile', 'old.c', 'cc1', 5 FROM runs;"
                        " INSERT INTO units (run, kind, name, tool, peak_mb)"
                        "  SELECT id, 'link', 'app', 'ld', 7 FROM runs;"
                        " ALTER TABLE runs DROP COLUMN ninja_done;"
                        " ALTER TABLE runs DROP COLUMN ninja_total;"
                        " ALTER TABLE steps DROP COLUMN usage_source;"
                        " PRAGMA user_version = 9;");
        assert_int_equal(file_version(db), 9);
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(file_version(db), STORE_SCHEMA_VERSION);
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(store_units_read(st, id, u), 2);
        got = units_rows(u, &n);
        assert_string_equal(got[0].name, "old.c");
        assert_string_equal(got[0].path, "");
        assert_string_equal(got[1].name, "app");
        assert_true(isnan(got[0].wait_s[1]));
        units_free(u);
        assert_int_equal(store_units_insert(st, id, rows, 2), 0); /* the new key */
        assert_int_equal(units_new(&u), 0);
        assert_int_equal(store_units_read(st, id, u), 4);
        units_free(u);
        store_close(st);
}

static void test_run_delete(void **state)
{
        char db[300];
        struct store *st;
        sqlite3 *raw;
        int64_t a, b, before_b;
        struct store_run run;

        (void)state;
        path_in(db, sizeof(db), "delete.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        a = fill_run(st, "old", 1761962400);
        b = fill_run(st, "new", 1761962500);
        /* a table of a newer schema, without ON DELETE: found and emptied,
         * or the foreign key would refuse the delete */
        assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
        assert_int_equal(
            sqlite3_exec(raw,
                         "CREATE TABLE later (run INTEGER NOT NULL REFERENCES runs(id),"
                         " x INTEGER);"
                         "INSERT INTO later SELECT id, 1 FROM runs",
                         NULL, NULL, NULL),
            SQLITE_OK);
        assert_true(rows_of(raw, a) >=
                    9); /* 3 samples, target, step, edges, unit, 2 snaps, later */
        before_b = rows_of(raw, b);

        assert_int_equal(store_run_delete(st, a), 0);
        assert_int_equal(rows_of(raw, a), 0);
        assert_int_equal(rows_of(raw, b), before_b);
        assert_int_equal(count_sql(raw, "SELECT count(*) FROM runs"), 1);
        /* the `buildtel cache` snapshot outlives the run, unlinked */
        assert_int_equal(count_sql(raw, "SELECT count(*) FROM cache_snapshots WHERE origin = "
                                        "'cache' AND run IS NULL"),
                         1);
        assert_int_equal(store_run_get(st, a, &run), -ENOENT);
        assert_int_equal(store_run_get(st, b, &run), 0);
        assert_string_equal(run.info.run_id, "new");
        store_run_release(&run);
        assert_int_equal(store_run_delete(st, a), -ENOENT);
        sqlite3_close(raw);
        store_close(st);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_run_round_trip),
            cmocka_unit_test(test_upgrade_v1),
            cmocka_unit_test(test_liveness),
            cmocka_unit_test(test_identity),
            cmocka_unit_test(test_cache),
            cmocka_unit_test(test_layers),
            cmocka_unit_test(test_locked),
            cmocka_unit_test(test_corrupt),
            cmocka_unit_test(test_faults),
            cmocka_unit_test(test_hand_written),
            cmocka_unit_test(test_parse_when),
            cmocka_unit_test(test_sample_columns),
            cmocka_unit_test(test_steps_edges_round_trip),
            cmocka_unit_test(test_units_path),
            cmocka_unit_test(test_run_delete),
            cmocka_unit_test(test_job_runs),
            cmocka_unit_test(test_upgrade_v8),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
