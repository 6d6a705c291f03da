/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view/live.h"
#include "util/macro.h"

#define FULL                                                                                       \
        " 1:02:05 | mem 8.0G avail (build 512M) | swap 0B | cpu 45% | disk 100G | compile: "       \
        "libfoo | unit heavy.c | top cc1plus 800M "
#define PREFIX " 1:02:05 | mem 8.0G avail (build 512M) | swap 0B | cpu 45% | disk 100G | "

static struct live_view view(const char *stage)
{
        struct live_view v = {
            .elapsed_s = 3725.4,
            .mem_avail_bytes = 8.0 * 1024 * 1024 * 1024,
            .cg_mem_bytes = 512.0 * 1024 * 1024,
            .swap_used_bytes = 0,
            .cpu_pct = 45.4,
            .disk_avail_bytes = 100.0 * 1024 * 1024 * 1024,
            .top_bytes = 800.0 * 1024 * 1024,
        };

        bool full = strcmp(stage, "compile") == 0;

        snprintf(v.stage, sizeof(v.stage), "%s", stage);
        snprintf(v.context, sizeof(v.context), "%s", full ? "libfoo" : "");
        if (strcmp(stage, "nostage") == 0) {
                v.stage[0] = '\0';
                snprintf(v.context, sizeof(v.context), "ctx");
        }
        snprintf(v.top, sizeof(v.top), "%s", full ? "cc1plus" : "");
        snprintf(v.unit, sizeof(v.unit), "%s", full ? "heavy.c" : "");
        return v;
}

static const struct {
        const char *name;
        const char *stage;
        int cols;
        bool color;
        double near_oom_mb, low_disk_gb;
        const char *want;
} fmt_cases[] = {
    {"200 columns, all of it", "compile", 200, false, 4096, 20, FULL},
    {"80 columns, cut", "compile", 80, false, 4096, 20,
     " 1:02:05 | mem 8.0G avail (build 512M) | swap 0B | cpu 45% | disk 100G | compile"},
    {"20 columns, cut", "compile", 20, false, 4096, 20, " 1:02:05 | mem 8.0G "},
    {"colour, no warning: reverse video", "compile", 200, true, 4096, 20, "\033[7m" FULL "\033[0m"},
    {"colour under --near-oom-mb: red", "compile", 200, true, 16384, 20,
     "\033[1;37;41m" FULL "\033[0m"},
    {"colour under --low-disk-gb: red", "compile", 200, true, 4096, 200,
     "\033[1;37;41m" FULL "\033[0m"},
    {"NO_COLOR under the limits: no SGR", "compile", 200, false, 16384, 200, FULL},
    {"colour, cut: SGR reset kept", "compile", 20, true, 4096, 20,
     "\033[7m 1:02:05 | mem 8.0G \033[0m"},
    /* PREFIX is 73 columns; each of 日本 is 2 */
    {"wide character not split", "日本", 76, false, 4096, 20, PREFIX "日"},
    {"wide character fits", "日本", 77, false, 4096, 20, PREFIX "日本"},
    {"invalid UTF-8 shown as ?",
     "a\xff"
     "b",
     200, false, 4096, 20, PREFIX "a?b "},
    {"truncated UTF-8 at the end as ?", "x\xe6\x97", 200, false, 4096, 20, PREFIX "x?? "},
    {"no stage: a dash", "", 200, false, 4096, 20, PREFIX "- "},
    {"context without a stage", "nostage", 200, false, 4096, 20, PREFIX "ctx "},
    {"zero columns: nothing", "compile", 0, true, 4096, 20, ""},
};

static void test_format(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(fmt_cases); i++) {
                struct live_view v = view(fmt_cases[i].stage);
                struct live_limits lim = {fmt_cases[i].near_oom_mb, fmt_cases[i].low_disk_gb};
                char out[1024];
                size_t n =
                    live_format(&v, &lim, fmt_cases[i].cols, fmt_cases[i].color, out, sizeof(out));

                if (strcmp(out, fmt_cases[i].want) != 0)
                        fail_msg("%s: got '%s' want '%s'", fmt_cases[i].name, out,
                                 fmt_cases[i].want);
                assert_int_equal(n, strlen(out));
        }
}

/* A small buffer: the line is cut to fit, still whole characters. */
static void test_format_small_buffer(void **state)
{
        struct live_view v = view("日本");
        struct live_limits lim = {4096, 20};
        char out[sizeof(PREFIX) + 2]; /* PREFIX, 2 of 日's 3 bytes, NUL */
        size_t n;

        (void)state;
        n = live_format(&v, &lim, 200, false, out, sizeof(out));
        assert_int_equal(n, strlen(out));
        assert_string_equal(out, PREFIX);
}

/* Control bytes of the build's stage never reach the terminal. */
static void test_view_cleans(void **state)
{
        struct sample s;
        struct live_view v;

        (void)state;
        sample_clear(&s);
        s.stage = "st\033[2Jage";
        s.context = "a\nb";
        s.top_proc = "cc1";
        s.running = "heavy.c s5.c ld:app.so";
        live_view_from_sample(&v, &s);
        assert_string_equal(v.stage, "st?[2Jage");
        assert_string_equal(v.context, "a?b");
        assert_string_equal(v.top, "cc1");
        assert_string_equal(v.unit, "heavy.c");
        assert_true(isnan(v.mem_avail_bytes));

        /* C1 controls as UTF-8 (an 8-bit CSI clears the screen), bidi
         * overrides, bad bytes: '?' each */
        s.stage = "st\xc2\x9b"
                  "2Jage";
        s.context = "\xe2\x80\xae"
                    "exe.gnp \xff";
        s.running = "u\xc2\x9b"
                    "2J.c b.c";
        live_view_from_sample(&v, &s);
        assert_string_equal(v.stage, "st?2Jage");
        assert_string_equal(v.context, "?exe.gnp ?");
        assert_string_equal(v.unit, "u?2J.c");
}

/* A long name is cut between characters, never inside one. */
static void test_view_cut(void **state)
{
        char name[sizeof(((struct live_view *)0)->unit) * 2 + 3];
        struct sample s;
        struct live_view v;
        size_t n;

        (void)state;
        for (size_t off = 0; off < 2; off++) {
                memset(name, 'a', off);
                for (n = off; n + 2 < sizeof(name); n += 2)
                        memcpy(name + n, "\xc3\xa9", 2);
                name[n] = '\0';
                sample_clear(&s);
                s.running = name;
                live_view_from_sample(&v, &s);
                n = strlen(v.unit);
                assert_true(n > 0 && n < sizeof(v.unit));
                assert_true(((unsigned char)v.unit[n - 1]) == 0xa9);
        }
}

static const struct {
        const char *in;
        int want_seen;
        bool want_alt;
} scan_cases[] = {
    {"plain text\n", 0, false},
    {"\033[?1049h", LIVE_SCAN_ALT, true},
    {"a\033[?1049hb\033[?1049lc", LIVE_SCAN_ALT, false},
    {"\033[?1047h", LIVE_SCAN_ALT, true},
    {"\033[?47h", LIVE_SCAN_ALT, true},
    {"\033[?47hxx\033[?47l", LIVE_SCAN_ALT, false},
    {"\033[3A\033[2K", LIVE_SCAN_UP, false},
    {"\033[A", LIVE_SCAN_UP, false},
    {"\033[12F", LIVE_SCAN_UP, false},
    {"\r\033[2Kninja [3/10]\033[K", 0, false},
    {"\033[?25l\033[?25h", 0, false},
    {"\033[1049h", 0, false},
    {"\033[?1049\030h", 0, false}, /* cancelled */
    {"\033\033[?1049h", LIVE_SCAN_ALT, true},
    {"\033[1;31mred\033[0m", 0, false},
    {"\033[?1049h\033[5A", LIVE_SCAN_ALT | LIVE_SCAN_UP, true},
    {"\033[r", LIVE_SCAN_REGION, false},
    {"x\033[1;20ry", LIVE_SCAN_REGION, false},
    {"\033c", LIVE_SCAN_REGION, false},
    {"\033[?1r", 0, false},
    {"\033]0;ti[Atle\007\033[A", LIVE_SCAN_UP, false},
    {"\033]0;title\033\\\033[2A", LIVE_SCAN_UP, false},
    {"\033]8;;http://e/[r\033\\", 0, false}, /* inside the OSC: no region */
    {"\033(B\033[A", LIVE_SCAN_UP, false},
    {"\033P1$r\033\\", 0, false},
};

static void check_scan(size_t i, const char *in, size_t len, size_t step, size_t split)
{
        struct live_scan sc = {0};
        int seen = 0;

        if (split) {
                seen |= live_scan_feed(&sc, in, split);
                seen |= live_scan_feed(&sc, in + split, len - split);
        } else {
                for (size_t off = 0; off < len; off += step)
                        seen |= live_scan_feed(&sc, in + off, MIN(step, len - off));
        }
        if (seen != scan_cases[i].want_seen || sc.alt != scan_cases[i].want_alt)
                fail_msg("case %zu step %zu split %zu: seen %d alt %d", i, step, split, seen,
                         sc.alt);
}

/* Every case whole, a byte at a time, and split at every offset. */
static void test_scan(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(scan_cases); i++) {
                const char *in = scan_cases[i].in;
                size_t len = strlen(in);

                check_scan(i, in, len, len, 0);
                check_scan(i, in, len, 1, 0);
                for (size_t k = 1; k < len; k++)
                        check_scan(i, in, len, 0, k);
        }
}

/* Where the stream stands: the line is never drawn inside the build's
 * unfinished escape sequence or UTF-8 character. */
static void test_scan_busy(void **state)
{
        static const struct {
                const char *in;
                bool busy;
        } cases[] = {
            {"plain", false},       {"\033", true},
            {"\033[1", true},       {"\033[1;31m", false},
            {"\033]0;title", true}, {"\033]0;title\007", false},
            {"\033]0;t\033", true}, {"\033]0;t\033\\", false},
            {"\033(", true},        {"\033(B", false},
            {"\033P1$r", true},     {"\033[1\030", false},
            {"caf\xc3", true},      {"caf\xc3\xa9", false},
            {"\xe2\x82", true},     {"\xe2\x82\xac", false},
            {"\xf0\x9f\x98", true}, {"\xf0\x9f\x98\x80", false},
            {"\xff", false},        {"\033[1;31mred\xe6\x97", true},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *in = cases[i].in;
                size_t len = strlen(in);

                /* whole, and a byte at a time */
                for (size_t step = len; step >= 1; step = step > 1 ? 1 : 0) {
                        struct live_scan sc = {0};

                        for (size_t off = 0; off < len; off += step)
                                (void)live_scan_feed(&sc, in + off, MIN(step, len - off));
                        if (live_scan_busy(&sc) != cases[i].busy)
                                fail_msg("case %zu step %zu: busy %d", i, step,
                                         live_scan_busy(&sc));
                        if (step == 1)
                                break;
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_format),      cmocka_unit_test(test_format_small_buffer),
            cmocka_unit_test(test_view_cleans), cmocka_unit_test(test_view_cut),
            cmocka_unit_test(test_scan),        cmocka_unit_test(test_scan_busy),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
