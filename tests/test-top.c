/* SPDX-License-Identifier: MIT */
/* view/top.c: the frame of `buildtel top` from typed rows: the 80x24 cut,
 * the sparkline (UTF-8 and ASCII), no escape codes (NO_COLOR and --once),
 * an empty history, the detail view. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "view/top.h"
#include "util/macro.h"

/* Columns of a line: UTF-8 lead bytes count, continuation bytes do not. */
static size_t columns(const char *s, size_t len)
{
        size_t c = 0;

        for (size_t i = 0; i < len; i++)
                c += ((unsigned char)s[i] & 0xc0) != 0x80;
        return c;
}

static void check_fits(const char *frame, int cols, int lines)
{
        int n = 0;

        for (const char *p = frame; *p; n++) {
                const char *nl = strchr(p, '\n');

                assert_non_null(nl);
                assert_true(columns(p, (size_t)(nl - p)) <= (size_t)cols);
                p = nl + 1;
        }
        assert_true(n <= lines);
        assert_null(strchr(frame, '\033'));
}

static void test_sparkline(void **state)
{
        static const struct {
                double v[6];
                size_t n, width;
                bool utf8;
                const char *want;
        } cases[] = {
            {{0, 1, 2, 3, 4, 5}, 6, 6, false, " .-=*#"}, {{0, 1, 2, 3, 4, 5}, 6, 3, false, " =#"},
            {{5, 5, 5}, 3, 5, false, "---  "},           {{0, NAN, 7}, 3, 3, false, "  #"},
            {{0, 7}, 2, 2, true, "\u2581\u2588"},        {{0}, 0, 4, true, "    "},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct dbuf out = DBUF_INIT;

                assert_int_equal(
                    top_sparkline(cases[i].v, cases[i].n, cases[i].width, cases[i].utf8, &out), 0);
                assert_int_equal(dbuf_puts(&out, ""), 0);
                assert_string_equal(out.p, cases[i].want);
                dbuf_release(&out);
        }
}

static struct top_row row_of(const char *cmd, bool running, const char *stage, double avail)
{
        struct top_row r = {.command = cmd,
                            .running = running,
                            .result = running ? "" : "ok",
                            .elapsed_s = 3725,
                            .stage = stage,
                            .context = "[12/40] cc foo.c",
                            .mem_avail_mb = avail,
                            .cpu_pct = 87,
                            .build_mem_mb = 1536,
                            .psi_mem_pct = 12,
                            .units = "cc1plus foo.c",
                            .near_oom = avail < 4096};

        for (size_t i = 0; i < 30; i++)
                r.spark[r.nspark++] = avail + (double)(i % 7) * 100;
        return r;
}

static void test_frames(void **state)
{
        static const struct {
                int cols, lines;
                bool utf8;
                size_t nrows;
                const char *want[4];
        } cases[] = {
            {80, 24, true, 3, {"2 running, 1 recent", "!!", "-- recent --", "1h02m"}},
            {80, 24, false, 3, {"STAGE", "make -j8", "12%", "ok"}},
            {132, 50, true, 3, {"TREND", "compile / [12/40] cc foo.c", "87%", "1.50 GiB"}},
            {40, 24, false, 3, {"COMMAND", "running", NULL}},
            {80, 6, false, 3, {"running", NULL}},
            {80, 24, true, 0, {"no runs recorded", "0 running, 0 recent", NULL}},
        };
        struct top_row rows[3];

        (void)state;
        rows[0] = row_of("make -j8 all-of-a-very-long-command-line-that-does-not-fit", true,
                         "compile", 2000);
        rows[1] = row_of("docker buildx bake", true, "", 20000);
        rows[2] = row_of("ninja", false, "link", 30000);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct top_view v = {.rows = rows,
                                     .nrows = cases[i].nrows,
                                     .selected = 0,
                                     .cols = cases[i].cols,
                                     .lines = cases[i].lines,
                                     .utf8 = cases[i].utf8};
                struct dbuf out = DBUF_INIT;

                assert_int_equal(top_frame_text(&v, &out), 0);
                assert_int_equal(dbuf_puts(&out, ""), 0);
                check_fits(out.p, cases[i].cols, cases[i].lines);
                for (size_t k = 0; k < 4 && cases[i].want[k]; k++)
                        if (!strstr(out.p, cases[i].want[k]))
                                fail_msg("case %zu: no '%s' in\n%s", i, cases[i].want[k], out.p);
                if (!cases[i].utf8)
                        for (const char *p = out.p; *p; p++)
                                assert_true((unsigned char)*p < 0x80);
                dbuf_release(&out);
        }
}

static void test_detail(void **state)
{
        struct top_row row = row_of("make", true, "compile", 8000);
        struct top_target t[] = {{"web", 12, 9, 31.5}, {"api", -1, -1, NAN}};
        const char *lines[] = {"1.0s compile a.c", "2.0s link app", "\x1b[31mred"};
        struct top_detail d = {
            .row = &row, .targets = t, .ntargets = 2, .lines = lines, .nlines = 3};
        struct dbuf out = DBUF_INIT;

        (void)state;
        assert_int_equal(top_detail_text(&d, 80, 24, true, &out), 0);
        assert_int_equal(dbuf_puts(&out, ""), 0);
        check_fits(out.p, 80, 24);
        assert_non_null(strstr(out.p, "12 / 9 cached"));
        assert_non_null(strstr(out.p, "api"));
        assert_non_null(strstr(out.p, "UNITS running: cc1plus foo.c"));
        assert_non_null(strstr(out.p, "link app"));
        assert_non_null(strstr(out.p, "?[31mred"));
        dbuf_release(&out);
}

/* C1 controls (as UTF-8), bidi overrides and bad bytes from the build
 * never reach the terminal; a cut never splits a character. */
static void test_c1(void **state)
{
        struct top_row row = row_of("make u\xc2\x9b"
                                    "2J.c \xe2\x80\xae"
                                    "cod.exe",
                                    true,
                                    "st\xc2\x9d"
                                    "0;x\xc2\x9c",
                                    8000);
        const char *lines[] = {"cc u\xc2\x9b"
                               "2J.c",
                               "bad \xff\xfe", "\xe2\x81\xa6iso\xe2\x81\xa9"};
        struct top_detail d = {.row = &row, .lines = lines, .nlines = 3};
        struct top_view v = {.rows = &row, .nrows = 1, .cols = 80, .lines = 24, .utf8 = true};
        struct dbuf out = DBUF_INIT;

        (void)state;
        assert_int_equal(top_detail_text(&d, 80, 24, true, &out), 0);
        assert_int_equal(top_frame_text(&v, &out), 0);
        assert_int_equal(dbuf_puts(&out, ""), 0);
        assert_null(strstr(out.p, "\xc2\x9b"));
        assert_null(strstr(out.p, "\xc2\x9d"));
        assert_null(strstr(out.p, "\xe2\x80\xae"));
        assert_null(strstr(out.p, "\xe2\x81\xa6"));
        assert_null(strchr(out.p, '\xff'));
        assert_non_null(strstr(out.p, "u?2J.c"));
        assert_non_null(strstr(out.p, "bad ??"));
        dbuf_release(&out);

        /* a width that ends on a two-byte character keeps it whole */
        for (int cols = 20; cols < 40; cols++) {
                struct top_row r2 =
                    row_of("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                           "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                           true, "x", 1000);
                struct top_view v2 = {
                    .rows = &r2, .nrows = 1, .cols = cols, .lines = 24, .utf8 = true};

                assert_int_equal(top_frame_text(&v2, &out), 0);
                assert_int_equal(dbuf_puts(&out, ""), 0);
                for (const unsigned char *p = (const unsigned char *)out.p; *p; p++)
                        if (*p == 0xc3)
                                assert_true(p[1] == 0xa9);
                        else if (*p == 0xa9)
                                assert_true(p > (const unsigned char *)out.p && p[-1] == 0xc3);
                dbuf_reset(&out);
        }
        dbuf_release(&out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sparkline),
            cmocka_unit_test(test_frames),
            cmocka_unit_test(test_detail),
            cmocka_unit_test(test_c1),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
