/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/run.h"
#include "util/macro.h"
#include "runfiles/runjson.h"

/* run_info holds char *; -Wwrite-strings makes literals const */
static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

static void test_round_trip(void **state)
{
        char *argv[] = {M("make"), M("-j8"), M("CFLAGS=-O2 -g"), M("it's"), NULL};
        struct run_info ri = {
            .run_id = M("20251129-154020-ab12"),
            .kind = M("run"),
            .argv = argv,
            .cwd = M("/src/proj"),
            .host = M("builder"),
            .start_epoch = 1764430820.123456789,
            .end_epoch = 1764434543.987654321,
            .finished = true,
            .exit_code = 2,
            .term_signal = 0,
            .ncpu = 16,
            .interval = 1.0,
            .pid = 4242,
            .exit_comm = M("cc1plus"),
            .job = M("CI build/linux"),
            .memory_max_mb = 1536,
            .procs = {.ended = 1204, .cpu_s = 61.25, .delayacct = true, .delay_cpu_s = 3.5,
                      .delay_io_s = 0.125, .delay_mem_s = 0,
                      .top = {{"cc1plus", 568, 55.5, 1201.25}, {"sh", 600, 0.75, 2.5}},
                      .ntop = 2, .unread = 3, .lost = 1},
            .guard = {.on = true, .headroom_mb = 64, .limit_mb = 1536, .units = 41,
                      .from_ledger = 38, .held = 7, .held_s = 41.25, .longest_s = 12.5,
                      .longest = "heavy.cpp"},
        };
        struct run_info back;
        struct dbuf b = DBUF_INIT, b2 = DBUF_INIT;

        (void)state;
        assert_int_equal(runjson_format(&ri, &b), 0);
        assert_int_equal(runjson_parse(b.p, b.len, &back), 0);
        assert_string_equal(back.run_id, ri.run_id);
        assert_string_equal(back.kind, "run");
        assert_string_equal(back.argv[0], "make");
        assert_string_equal(back.argv[2], "CFLAGS=-O2 -g");
        assert_string_equal(back.argv[3], "it's");
        assert_null(back.argv[4]);
        assert_string_equal(back.cwd, "/src/proj");
        assert_string_equal(back.host, "builder");
        /* bit for bit, so a summary from files matches the live one */
        assert_true(back.start_epoch == ri.start_epoch);
        assert_true(back.end_epoch == ri.end_epoch);
        assert_true(back.finished);
        assert_int_equal(back.exit_code, 2);
        assert_int_equal(back.term_signal, 0);
        assert_int_equal(back.ncpu, 16);
        assert_true(back.interval == 1.0);
        assert_int_equal(back.pid, 4242);
        assert_string_equal(back.exit_comm, "cc1plus");
        assert_string_equal(back.job, "CI build/linux");
        assert_true(back.memory_max_mb == 1536);
        assert_int_equal(back.procs.ended, 1204);
        assert_true(back.procs.cpu_s == 61.25 && back.procs.delayacct && back.procs.delay_cpu_s == 3.5);
        assert_int_equal(back.procs.ntop, 2);
        assert_true(back.procs.unread == 3 && back.procs.lost == 1);
        assert_string_equal(back.procs.top[0].comm, "cc1plus");
        assert_int_equal(back.procs.top[0].count, 568);
        assert_true(back.procs.top[0].peak_mb == 1201.25);
        assert_true(back.guard.on && back.guard.headroom_mb == 64 && back.guard.limit_mb == 1536);
        assert_true(back.guard.units == 41 && back.guard.from_ledger == 38 && back.guard.held == 7);
        assert_true(back.guard.held_s == 41.25 && back.guard.longest_s == 12.5);
        assert_string_equal(back.guard.longest, "heavy.cpp");
        /* and writing it again gives the same bytes */
        assert_int_equal(runjson_format(&back, &b2), 0);
        assert_string_equal(b.p, b2.p);
        run_info_release(&back);
        assert_null(back.run_id);
        run_info_release(NULL);
        dbuf_release(&b);
        dbuf_release(&b2);
}

/* A processes object that is not one we wrote: the file does not read. */
static void test_bad_procs(void **state)
{
        static const char *const bad[] = {
            "{\"processes\": {\"ended\": 0, \"cpu_s\": 1, \"delayacct\": false, \"delay_cpu_s\": 0,"
            " \"delay_io_s\": 0, \"delay_mem_s\": 0, \"by_name\": []}}",
            "{\"processes\": {\"ended\": 3, \"cpu_s\": -1, \"delayacct\": false, \"delay_cpu_s\": 0,"
            " \"delay_io_s\": 0, \"delay_mem_s\": 0, \"by_name\": []}}",
            "{\"processes\": {\"ended\": 3, \"cpu_s\": 1, \"delayacct\": false, \"delay_cpu_s\": 0,"
            " \"delay_io_s\": 0, \"delay_mem_s\": 0, \"by_name\": [{\"comm\": "
            "\"a-name-longer-than-thirty-two-bytes-x\", \"count\": 1, \"cpu_s\": 0, \"peak_mb\": 1}]}}",
            "{\"processes\": {\"ended\": 3, \"cpu_s\": 1, \"delayacct\": false, \"delay_cpu_s\": 0,"
            " \"delay_io_s\": 0, \"delay_mem_s\": 0, \"by_name\": [{\"comm\": \"a\\u0000b\", "
            "\"count\": 1, \"cpu_s\": 0, \"peak_mb\": 1}]}}",
            "{\"processes\": [1]}",
            /* a memory guard that held more than it saw, or a bad time */
            "{\"memory_guard\": {\"headroom_mb\": 64, \"limit_mb\": 0, \"units\": 2, "
            "\"from_ledger\": 0, \"held\": 3, \"held_s\": 1, \"longest_s\": 1, \"longest\": \"a\"}}",
            "{\"memory_guard\": {\"headroom_mb\": 64, \"limit_mb\": 0, \"units\": 2, "
            "\"from_ledger\": 0, \"held\": 1, \"held_s\": -1, \"longest_s\": 1, \"longest\": \"a\"}}",
            "{\"memory_guard\": true}",
        };
        struct run_info ri;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                assert_int_equal(runjson_parse(bad[i], strlen(bad[i]), &ri), -EINVAL);
        /* none at all, or null: none accounted */
        assert_int_equal(runjson_parse("{\"processes\": null}", 19, &ri), 0);
        assert_int_equal(ri.procs.ended, 0);
        run_info_release(&ri);
        assert_int_equal(runjson_parse("{\"memory_guard\": null}", 22, &ri), 0);
        assert_false(ri.guard.on);
        run_info_release(&ri);
}

static void test_unknowns(void **state)
{
        struct run_info ri = {
            .kind = M("watch"),
            .start_epoch = 100.5,
            .end_epoch = NAN,
            .exit_code = -1,
            .interval = NAN,
        };
        struct run_info back;
        struct dbuf b = DBUF_INIT;

        (void)state;
        assert_int_equal(runjson_format(&ri, &b), 0);
        assert_non_null(strstr(b.p, "\"end_epoch\": null"));
        assert_non_null(strstr(b.p, "\"run_id\": null"));
        assert_non_null(strstr(b.p, "\"argv\": null"));
        assert_non_null(strstr(b.p, "\"finished\": false"));
        assert_int_equal(b.p[b.len - 1], '\n');
        assert_int_equal(runjson_parse(b.p, b.len, &back), 0);
        assert_null(back.run_id);
        assert_null(back.argv);
        assert_null(back.job);
        assert_null(strstr(b.p, "\"job\"")); /* optional: absent when unknown */
        /* no cap: absent, and read back as none */
        assert_null(strstr(b.p, "\"memory_max_mb\""));
        assert_true(back.memory_max_mb == 0);
        assert_true(isnan(back.end_epoch));
        assert_true(isnan(back.interval));
        assert_true(back.start_epoch == 100.5);
        assert_int_equal(back.exit_code, -1);
        assert_false(back.finished);
        run_info_release(&back);

        /* a job that is not a string is none, not an error (tolerant) */
        {
                static const char bad[] = "{\"job\": 42, \"exit_code\": 3}";

                assert_int_equal(runjson_parse(bad, sizeof(bad) - 1, &back), 0);
                assert_null(back.job);
                assert_int_equal(back.exit_code, 3);
                run_info_release(&back);
        }
        /* absent members keep their "unknown" values */
        assert_int_equal(runjson_parse("{}", 2, &back), 0);
        assert_true(isnan(back.start_epoch) && isnan(back.end_epoch));
        assert_int_equal(back.exit_code, -1);
        run_info_release(&back);
        dbuf_release(&b);
}

static void test_invalid_utf8(void **state)
{
        char *argv[] = {M("gcc"),      M("caf\xc3\xa9"),  M("bad\xff\xfe"),
                        M("\xe2\x82"), M("over\xc0\xaf"), NULL};
        struct run_info ri = {.argv = argv, .cwd = M("/tmp/\xed\xa0\x80x"), .exit_code = -1};
        struct run_info back;
        struct dbuf b = DBUF_INIT;

        (void)state;
        assert_int_equal(runjson_format(&ri, &b), 0);
        assert_int_equal(runjson_parse(b.p, b.len, &back), 0);
        assert_string_equal(back.argv[1], "caf\xc3\xa9");
        assert_string_equal(back.argv[2], "bad\xef\xbf\xbd\xef\xbf\xbd");
        assert_string_equal(back.argv[3], "\xef\xbf\xbd\xef\xbf\xbd");
        assert_string_equal(back.argv[4], "over\xef\xbf\xbd\xef\xbf\xbd");
        /* a UTF-16 surrogate encoded in UTF-8 is not UTF-8 */
        assert_string_equal(back.cwd, "/tmp/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
        run_info_release(&back);
        dbuf_release(&b);
}

static void test_lossy_controls(void **state)
{
        struct dbuf b = DBUF_INIT;
        static const char in[] = "a\x1b[31mb\n\x7f\xf0\x9f\x98\x80";

        (void)state;
        assert_int_equal(run_append_utf8_lossy(&b, in, sizeof(in) - 1, true), 0);
        assert_string_equal(b.p, "a?[31mb??\xf0\x9f\x98\x80");
        dbuf_reset(&b);
        assert_int_equal(run_append_utf8_lossy(&b, "a\tb", 3, false), 0);
        assert_string_equal(b.p, "a\tb");
        dbuf_reset(&b);
        assert_int_equal(run_append_utf8_lossy(&b, "\xf4\x90\x80\x80", 4, false), 0);
        assert_int_equal(b.len, 12); /* above U+10FFFF: four bad bytes */
        dbuf_release(&b);
}

/* Terminal text: C1 controls (as UTF-8), bidi and format characters and
 * bad bytes are one '?' each; printable text beyond ASCII is kept. */
static void test_lossy_terminal(void **state)
{
        static const struct {
                const char *in, *term, *plain;
        } cases[] = {
            {"u\xc2\x9b"
             "2J.c",
             "u?2J.c",
             "u\xc2\x9b"
             "2J.c"}, /* CSI */
            {"\xc2\x9d"
             "0;t\xc2\x9c",
             "?0;t?",
             "\xc2\x9d"
             "0;t\xc2\x9c"}, /* OSC .. ST */
            {"\xc2\x80\xc2\x9f\xc2\xa0", "??\xc2\xa0", "\xc2\x80\xc2\x9f\xc2\xa0"},
            {"a\xe2\x80\xaegnp.exe", "a?gnp.exe", "a\xe2\x80\xaegnp.exe"}, /* U+202E RLO */
            {"\xe2\x80\x8e\xe2\x80\x8f\xe2\x81\xa6\xe2\x81\xa9\xd8\x9c", "?????",
             "\xe2\x80\x8e\xe2\x80\x8f\xe2\x81\xa6\xe2\x81\xa9\xd8\x9c"},
            {"\xe2\x80\xaa\xe2\x80\xad\xef\xbb\xbf", "???", "\xe2\x80\xaa\xe2\x80\xad\xef\xbb\xbf"},
            {"bad\xff\xc0\xaf", "bad???", "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
            {"cut\xe2\x82", "cut??", "cut\xef\xbf\xbd\xef\xbf\xbd"},
            {"\xef\xbf\xbd", "?", "\xef\xbf\xbd"},
            {"caf\xc3\xa9 \xe2\x86\x92 \xe4\xb8\xad", "caf\xc3\xa9 \xe2\x86\x92 \xe4\xb8\xad",
             "caf\xc3\xa9 \xe2\x86\x92 \xe4\xb8\xad"},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct dbuf b = DBUF_INIT;

                print_message("case %zu\n", i);
                assert_int_equal(run_append_utf8_lossy(&b, cases[i].in, strlen(cases[i].in), true),
                                 0);
                assert_string_equal(b.p, cases[i].term);
                dbuf_reset(&b);
                assert_int_equal(run_append_utf8_lossy(&b, cases[i].in, strlen(cases[i].in), false),
                                 0);
                assert_string_equal(b.p, cases[i].plain);
                dbuf_release(&b);
        }
}

/* Run ids read back from a run.json follow --run-id's rule. */
static void test_run_id(void **state)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"20261201T093000Z-ab12", "20261201T093000Z-ab12"},
            {"x/../../escape/pwn", "x_.._.._escape_pwn"},
            {"../up", "_._up"},
            {"-rf", "_rf"},
            {"a\x1b]0;t\x07", "a__0_t_"},
            {"", "unknown"},
            {"_ok.1", "_ok.1"},
        };
        char big[100];

        (void)state;
        assert_true(run_id_is_valid("a-b.c_d"));
        assert_false(run_id_is_valid(".hidden"));
        assert_false(run_id_is_valid("a/b"));
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char json[256], *id = strdup(cases[i].in);
                struct run_info ri;
                int n;

                assert_non_null(id);
                assert_int_equal(run_id_sanitize(&id), strcmp(cases[i].in, cases[i].out) != 0);
                assert_string_equal(id, cases[i].out);
                assert_true(run_id_is_valid(id));
                free(id);
                n = snprintf(json, sizeof(json), "{\"run_id\": \"%s\"}",
                             cases[i].in[0] == 0x61 && cases[i].in[1] == 0x1b
                                 ? "a\\u001b]0;t\\u0007"
                                 : cases[i].in);
                assert_true(n > 0 && (size_t)n < sizeof(json));
                assert_int_equal(runjson_parse(json, (size_t)n, &ri), 0);
                assert_string_equal(ri.run_id, cases[i].out);
                run_info_release(&ri);
        }
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        {
                char *id = strdup(big);
                assert_non_null(id);
                assert_int_equal(run_id_sanitize(&id), 1);
                assert_int_equal(strlen(id), 64);
                free(id);
        }
}

static const char *const bad_json[] = {
    "",
    "[]",
    "\"run\"",
    "{",
    "{\"run_id\": 5}",
    "{\"argv\": \"make\"}",
    "{\"argv\": [\"make\", 1]}",
    "{\"argv\": [\"a\\u0000b\"]}",
    "{\"start_epoch\": \"now\"}",
    "{\"exit_code\": 256}",
    "{\"memory_max_mb\": -5}",
    "{\"memory_max_mb\": \"1G\"}",
    "{\"memory_max_mb\": 1e300}",
    "{\"exit_code\": -2}",
    "{\"exit_code\": 1.5}",
    "{\"ncpu\": -1}",
    "{\"finished\": 1}",
    "{\"run_id\": \"a\", \"run_id\": \"b\"}",
    "{\"kind\": \"\xff\"}",
};

static void test_bad_json(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(bad_json); i++) {
                struct run_info ri = {.run_id = (char *)(uintptr_t)1};

                print_message("case %zu\n", i);
                assert_int_equal(runjson_parse(bad_json[i], strlen(bad_json[i]), &ri),
                                 -EINVAL);
                /* untouched on failure */
                assert_true(ri.run_id == (char *)(uintptr_t)1);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_unknowns),
            cmocka_unit_test(test_bad_procs),
            cmocka_unit_test(test_invalid_utf8), cmocka_unit_test(test_lossy_controls),
            cmocka_unit_test(test_bad_json),     cmocka_unit_test(test_lossy_terminal),
            cmocka_unit_test(test_run_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
