/* SPDX-License-Identifier: MIT */
/* render/trace.c, render/trace-lanes.c and cmd/cmd-trace.c: the Chrome trace of
 * a recorded run. A golden file of the fixture run in fixtures/trace (its
 * CSV, run record, targets and a .ninja_log), the string escaper, the
 * lanes, the slice cap. BUILDTEL_UPDATE_GOLDEN=1 rewrites the golden file
 * (check the diff by eye). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cmd/cmd-trace.h"
#include "pipeline/replay.h"
#include "render/jsonw.h"
#include "render/trace-lanes.h"
#include "render/trace.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define FIX FIXTURES "/trace/"

static void copy_file(const char *from, const char *dir, const char *name)
{
        _cleanup_free_ char *buf = NULL;
        char path[4096];
        size_t len;

        assert_int_equal(read_file_at(AT_FDCWD, from, 1 << 20, &buf, &len), 0);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_int_equal(write_file_atomic(path, buf, len), 0);
}

static void test_golden(void **state)
{
        char dir[] = "/tmp/test-trace.XXXXXX", csv[4096], nlog[4096], out[4096];
        static const char *const files[] = {"resources-t1.csv", "resources-t1.run.json",
                                            "resources-t1.targets.json", "resources-t1.units.csv",
                                            "ninja_log"};
        _cleanup_free_ char *got = NULL, *want = NULL;
        size_t glen, wlen;
        /* ninja's last edge ended 5 s into the run: its clock starts at 2 s */
        struct timespec ts[2] = {{1700000005, 0}, {1700000005, 0}};
        struct trace_job j = {.cmd = "test"};
        struct replay_ref ref = {.thresholds = {.near_oom_mb = 4096, .low_disk_gb = 20},
                                 .no_db = true,
                                 .need_record = true,
                                 .own_thresholds = true};
        struct replay *rp = NULL;
        char why[256];
        json_t *root;

        assert_non_null(mkdtemp(dir));
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char from[4096];
                snprintf(from, sizeof(from), FIX "%s", files[i]);
                copy_file(from, dir, files[i]);
        }
        snprintf(csv, sizeof(csv), "%s/resources-t1.csv", dir);
        snprintf(nlog, sizeof(nlog), "%s/ninja_log", dir);
        snprintf(out, sizeof(out), "%s/out.json", dir);
        assert_int_equal(utimensat(AT_FDCWD, nlog, ts, 0), 0);
        j.out_path = out;
        j.ninja_log = nlog;
        ref.run = csv;
        assert_int_equal(replay_open(&ref, &rp, why, sizeof(why)), 0);
        assert_int_equal(trace_write(&j, rp), 0);
        replay_free(rp);
        assert_int_equal(read_file_at(AT_FDCWD, out, 1 << 20, &got, &glen), 0);
        root = json_loadb(got, glen, 0, NULL);
        assert_non_null(root); /* strict JSON */
        assert_true(json_is_array(json_object_get(root, "traceEvents")));
        json_decref(root);
        if (getenv("BUILDTEL_UPDATE_GOLDEN"))
                assert_int_equal(write_file_atomic(FIX "golden.json", got, glen), 0);
        assert_int_equal(read_file_at(AT_FDCWD, FIX "golden.json", 1 << 20, &want, &wlen), 0);
        assert_string_equal(got, want);
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char p[4096];
                snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
                unlink(p);
        }
        unlink(out);
        rmdir(dir);
}

/* clang-format off */
static const struct esc_case {
        const char *in;
        size_t len;
        const char *want;
} esc_cases[] = {
        {"plain", 5, "\"plain\""},
        {"", 0, "\"\""},
        {"a\"b\\c", 5, "\"a\\\"b\\\\c\""},
        {"\n\t\r\x01\x1f\x7f", 6, "\"\\n\\t\\r\\u0001\\u001f\\u007f\""},
        {"nul\0x", 5, "\"nul\\u0000x\""},
        {"\xc3\xa9", 2, "\"\xc3\xa9\""},                          /* é kept */
        {"\xff" "a", 2, "\"\xef\xbf\xbd" "a\""},                  /* bad byte */
        {"\xc3", 1, "\"\xef\xbf\xbd\""},                          /* cut sequence */
        {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},          /* overlong */
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* surrogate */
        {"\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""},          /* 4-byte kept */
};
/* clang-format on */

static void test_escape(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(esc_cases); i++) {
                struct dbuf b = DBUF_INIT;
                struct dwriter w = DWRITER_INIT(&b);

                jsonw_put(&w, esc_cases[i].in, esc_cases[i].len);
                assert_int_equal(w.err, 0);
                if (strcmp(b.p, esc_cases[i].want) != 0)
                        fail_msg("case %zu: got %s want %s", i, b.p, esc_cases[i].want);
                dbuf_release(&b);
        }
}

/* clang-format off */
static const struct lane_case {
        const char *what;
        struct trace_span in[6];
        size_t n;
        uint32_t want[6];
        int64_t lanes;
} lane_cases[] = {
        {"none", {{0, 0}}, 0, {0}, 0},
        {"serial", {{0, 10}, {10, 20}, {20, 30}}, 3, {0, 0, 0}, 1},
        {"two at once", {{0, 10}, {5, 15}, {10, 20}}, 3, {0, 1, 0}, 2},
        {"lowest free lane", {{0, 30}, {1, 5}, {2, 6}, {7, 8}, {8, 40}}, 5, {0, 1, 2, 1, 1}, 3},
        {"zero length", {{5, 5}, {5, 5}, {5, 9}}, 3, {0, 0, 0}, 1},
        {"all overlap", {{0, 9}, {1, 9}, {2, 9}, {3, 9}}, 4, {0, 1, 2, 3}, 4},
};
/* clang-format on */

static void test_lanes(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(lane_cases); i++) {
                const struct lane_case *c = &lane_cases[i];
                uint32_t lane[6] = {0};

                if (trace_lanes_assign(c->in, c->n, lane) != c->lanes)
                        fail_msg("%s: lanes", c->what);
                for (size_t k = 0; k < c->n; k++)
                        if (lane[k] != c->want[k])
                                fail_msg("%s: slice %zu on lane %u, want %u", c->what, k, lane[k],
                                         c->want[k]);
        }
}

/* More slices than the cap: the first ones kept, a note says how many went. */
static void test_cap(void **state)
{
        struct trace_config cfg = {.thresholds = {4096, 20}, .max_slices = 2};
        char id[] = "c";
        struct run_info ri = {.run_id = id, .start_epoch = 0, .end_epoch = 10, .exit_code = -1};
        struct trace *t;
        json_t *root, *ev;
        size_t i, x = 0, notes = 0;

        assert_int_equal(trace_new(&cfg, &ri, &t), 0);
        for (int k = 0; k < 5; k++)
                assert_int_equal(spans_add_edge(trace_spans(t), k, k + 0.5, "e", 1), 0);
        assert_int_equal(trace_finish(t), 0);
        root = json_loadb(trace_output(t)->p, trace_output(t)->len, 0, NULL);
        trace_free(t);
        assert_non_null(root);
        json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
        {
                const char *ph = json_string_value(json_object_get(ev, "ph"));
                x += strcmp(ph, "X") == 0;
                if (strcmp(ph, "i") == 0) {
                        notes++;
                        assert_int_equal(json_integer_value(json_object_get(
                                             json_object_get(ev, "args"), "dropped")),
                                         3);
                }
        }
        assert_int_equal(x, 3); /* the run and two edges */
        assert_int_equal(notes, 1);
        json_decref(root);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_golden),
            cmocka_unit_test(test_escape),
            cmocka_unit_test(test_lanes),
            cmocka_unit_test(test_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
