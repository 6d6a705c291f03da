/* SPDX-License-Identifier: MIT */
/* The history store on a real SQLite file: schema, runs, samples, read-back
 * through sources/history.c, the upgrade of a version-1 file, liveness of
 * running rows, faults (garbage file, newer schema), --since parsing and
 * the compiler-cache output parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/summary.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

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
        struct store_target t = {.name = "app",
                                 .duration_s = 12.5,
                                 .steps = 9,
                                 .cached = 6,
                                 .success = 1,
                                 .cc_hits = 40,
                                 .cc_misses = 2,
                                 .node = "node-a"};
        struct store *st;
        struct sample s[3];
        struct summary sum, back;
        struct run_info ri2;
        json_t *runs, *d;
        int64_t id, id2;

        (void)state;
        path_in(db, sizeof(db), "sub/dir/h.db");
        known_samples(s);
        summary_init(&sum, NULL);
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(store_opened_version(st), 0);
        assert_int_equal(store_recorder_self(&me), 0);
        assert_int_equal(store_run_begin(st, &ri, &x, &me, &id), 0);

        /* while it runs: alive, as far as it got */
        assert_int_equal(store_begin(st), 0);
        for (int i = 0; i < 3; i++) {
                assert_int_equal(store_sample_insert(st, id, (uint64_t)i, &s[i]), 0);
                summary_add(&sum, &s[i]);
        }
        assert_int_equal(store_run_progress(st, id, &sum, 0), 0);
        assert_int_equal(store_commit(st), 0);
        assert_int_equal(history_runs(st, NAN, 0, &runs), 0);
        assert_int_equal(json_array_size(runs), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "state")),
                            "running");
        assert_true(json_real_value(json_object_get(json_array_get(runs, 0), "duration_s")) == 4.0);
        json_decref(runs);

        ri.end_epoch = 1761962460.75;
        ri.finished = true;
        ri.exit_code = 2;
        assert_int_equal(store_begin(st), 0);
        assert_int_equal(store_run_finish(st, id, &ri, &sum, "{}", 0), 0);
        assert_int_equal(store_target_insert(st, id, &t), 0);
        assert_int_equal(store_commit(st), 0);

        assert_int_equal(history_runs(st, NAN, 10, &runs), 0);
        {
                json_t *o = json_array_get(runs, 0);
                assert_string_equal(json_string_value(json_object_get(o, "id")), ri.run_id);
                assert_string_equal(json_string_value(json_object_get(o, "state")), "finished");
                assert_string_equal(json_string_value(json_object_get(o, "result")), "exit 2");
                assert_true(json_real_value(json_object_get(o, "duration_s")) == 60.5);
                assert_true(json_real_value(json_object_get(o, "mem_used_peak_mb")) == 12000);
                assert_true(json_real_value(json_object_get(o, "mem_used_peak_elapsed_s")) == 2.0);
                assert_string_equal(json_string_value(json_object_get(o, "mem_used_peak_context")),
                                    "[3/9] Building CXX object big.cc.o");
                assert_int_equal(json_integer_value(json_object_get(o, "near_oom_samples")), 1);
                assert_int_equal(json_integer_value(json_object_get(o, "samples")), 3);
                assert_string_equal(
                    json_string_value(json_array_get(json_object_get(o, "argv"), 1)), "-j8");
                assert_string_equal(json_string_value(json_object_get(o, "nodes")), "node-a");
                assert_string_equal(json_string_value(json_object_get(o, "vcs_ref")),
                                    "refs/heads/main");
        }
        json_decref(runs);
        assert_int_equal(history_runs(st, 1761962401.0, 10, &runs), 0);
        assert_int_equal(json_array_size(runs), 0); /* --since after its start */
        json_decref(runs);

        assert_int_equal(history_find_run(st, NULL, &id2), 0);
        assert_int_equal(id2, id);
        assert_int_equal(history_find_run(st, "20261129T15", &id2), 0);
        assert_int_equal(history_find_run(st, "nope", &id2), -ENOENT);

        assert_int_equal(history_run_detail(st, id, &d), 0);
        assert_int_equal(json_integer_value(json_object_get(d, "steps")), 9);
        assert_int_equal(json_integer_value(json_object_get(d, "cached_steps")), 6);
        assert_int_equal(json_array_size(json_object_get(d, "targets")), 1);
        assert_true(
            json_real_value(json_object_get(json_array_get(json_object_get(d, "targets"), 0),
                                            "cached_ratio")) == 6.0 / 9.0);
        json_decref(d);

        /* summarize from the database: the same summary, bit for bit */
        summary_init(&back, NULL);
        assert_int_equal(history_replay(st, id, &back), 3);
        assert_true(back.mem_used_peak.value == sum.mem_used_peak.value);
        assert_string_equal(back.mem_used_peak.context, sum.mem_used_peak.context);
        assert_true(back.cpu_pct_sum == sum.cpu_pct_sum);
        assert_true(back.load1_peak.value == 2.5);
        assert_int_equal(back.near_oom_samples, 1);
        assert_int_equal(history_run_info(st, id, &ri2), 0);
        assert_true(ri2.start_epoch == ri.start_epoch && ri2.end_epoch == ri.end_epoch);
        assert_int_equal(ri2.exit_code, 2);
        assert_true(ri2.finished);
        assert_string_equal(ri2.argv[0], "make");
        assert_null(ri2.argv[2]);
        run_info_release(&ri2);

        /* a rewritten run id replaces the old row and its samples */
        assert_int_equal(store_run_begin(st, &ri, &x, &me, &id2), 0);
        summary_init(&back, NULL);
        assert_int_equal(history_replay(st, id2, &back), 0);
        assert_int_equal(history_runs(st, NAN, 0, &runs), 0);
        assert_int_equal(json_array_size(runs), 1);
        json_decref(runs);
        store_close(st);
}

static void exec_file(const char *db, const char *sql_path)
{
        char *sql = NULL, *err = NULL;
        size_t len;
        sqlite3 *h;

        assert_int_equal(read_file_at(AT_FDCWD, sql_path, 1 << 20, &sql, &len), 0);
        assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, &err), SQLITE_OK);
        sqlite3_close(h);
        free(sql);
}

static void test_upgrade_v1(void **state)
{
        char db[300];
        struct store *st;
        struct summary sum;
        json_t *runs, *d;
        int64_t id;
        sqlite3_stmt *s;

        (void)state;
        path_in(db, sizeof(db), "v1.db");
        exec_file(db, FIXTURES "/history-v1/history.sql");
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(store_opened_version(st), 1);
        /* now the current version, with the v2 tables */
        assert_int_equal(sqlite3_prepare_v2(store_db(st), "PRAGMA user_version", -1, &s, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(s, 0), STORE_SCHEMA_VERSION);
        sqlite3_finalize(s);
        assert_int_equal(sqlite3_prepare_v2(store_db(st),
                                            "SELECT iso FROM samples WHERE run = 1 AND seq = 1", -1,
                                            &s, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(s, 0), "2025-11-01T02:00:02.000Z");
        sqlite3_finalize(s);

        assert_int_equal(history_runs(st, NAN, 0, &runs), 0);
        assert_int_equal(json_array_size(runs), 1);
        {
                json_t *o = json_array_get(runs, 0);
                assert_string_equal(json_string_value(json_object_get(o, "id")),
                                    "20251101T020000Z-0a0b0c");
                assert_string_equal(json_string_value(json_object_get(o, "result")), "exit 2");
                assert_true(json_is_null(json_object_get(o, "builder")));
                assert_true(json_real_value(json_object_get(o, "duration_s")) == 3600);
                assert_true(json_real_value(json_object_get(o, "mem_used_peak_mb")) == 12000);
        }
        json_decref(runs);
        assert_int_equal(history_find_run(st, "20251101T020000Z-0a0b0c", &id), 0);
        summary_init(&sum, NULL);
        assert_int_equal(history_replay(st, id, &sum), 3);
        assert_true(sum.mem_used_peak.value == 12000);
        assert_string_equal(sum.mem_used_peak.stage, "app/builder");
        assert_true(sum.disk_avail_min.value == 30.5);
        assert_int_equal(sum.near_oom_samples, 1);
        assert_int_equal(history_run_detail(st, id, &d), 0);
        assert_int_equal(json_array_size(json_object_get(d, "targets")), 0);
        json_decref(d);
        store_close(st);
        /* a second open has nothing to do */
        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(store_opened_version(st), STORE_SCHEMA_VERSION);
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
        json_t *runs;
        char host[256] = "";
        int64_t id;
        pid_t pid;

        (void)state;
        (void)gethostname(host, sizeof(host) - 1);
        ri.host = host;
        path_in(db, sizeof(db), "live.db");
        assert_int_equal(store_open(db, true, 1000, &st), 0);
        assert_int_equal(store_recorder_self(&me), 0);
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
        assert_int_equal(history_runs(st, NAN, 0, &runs), 0);
        assert_int_equal(json_array_size(runs), 3);
        assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "state")),
                            "incomplete");
        assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "state")),
                            "running");
        assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 2), "state")),
                            "incomplete");
        json_decref(runs);
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_run_round_trip), cmocka_unit_test(test_upgrade_v1),
            cmocka_unit_test(test_liveness),       cmocka_unit_test(test_faults),
            cmocka_unit_test(test_parse_when),     cmocka_unit_test(test_sample_columns),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
