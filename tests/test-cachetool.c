/* SPDX-License-Identifier: MIT */
/* Running a compiler-cache tool for `buildtel cache`, through
 * spawn_capture(): the $PATH lookup, the status and the capped output, a
 * tool that closes its output but never exits (it used to be waited for
 * without a deadline), and the real ccache, on a cache directory of our
 * own, read by the same parser as the stats in build logs. */
#include <errno.h>
#include <fcntl.h>
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

#include "parse/ccstats.h"
#include "platform/cachetool.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define ARGV(...) ((char *const *)(uintptr_t)(const char *const[]){__VA_ARGS__, NULL})

static void test_run(void **state)
{
        const struct {
                const char *what;
                char *const *argv;
                size_t max;
                double timeout_s;
                int ret;
                const char *out;
        } cases[] = {
            {"output", ARGV("sh", "-c", "echo hits 3"), 100, 10, 0, "hits 3\n"},
            {"exit status", ARGV("sh", "-c", "echo x; exit 2"), 100, 10, 2, "x\n"},
            {"stderr dropped", ARGV("sh", "-c", "echo no >&2"), 100, 10, 0, ""},
            {"capped", ARGV("head", "-c", "100000", "/dev/zero"), 10, 10, 0, NULL},
            {"not found", ARGV("buildtel-no-such-tool"), 100, 10, -ENOENT, NULL},
            {"closes its output, never exits",
             ARGV("sh", "-c", "echo partial; exec >&-; sleep 100"), 100, 0.3, -ETIMEDOUT, NULL},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *out = NULL;
                size_t len = 0;
                double t0 = now_monotonic();
                int r = cachetool_run(cases[i].argv, cases[i].max, cases[i].timeout_s, &out, &len);

                if (r != cases[i].ret)
                        fail_msg("%s: %d, want %d", cases[i].what, r, cases[i].ret);
                if (now_monotonic() - t0 > cases[i].timeout_s + 2)
                        fail_msg("%s: took %.2f s", cases[i].what, now_monotonic() - t0);
                if (r < 0) {
                        assert_null(out);
                        continue;
                }
                assert_true(len <= cases[i].max);
                assert_int_equal(out[len], '\0');
                if (cases[i].out)
                        assert_string_equal(out, cases[i].out);
                else
                        assert_int_equal(len, cases[i].max);
                free(out);
        }
}

static void test_on_path(void **state)
{
        char dir[] = "/tmp/buildtel-test-cachetool.XXXXXX";
        char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
        int dfd;

        assert_true(cachetool_on_path("sh"));
        assert_false(cachetool_on_path("buildtel-no-such-tool"));
        /* a file named like the tool that is not executable is not it */
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(outfile_write_at(dfd, "fake-ccache", "#!/bin/sh\n", 10, 0644), 0);
        assert_int_equal(setenv("PATH", dir, 1), 0);
        assert_false(cachetool_on_path("fake-ccache"));
        assert_int_equal(fchmodat(dfd, "fake-ccache", 0755, 0), 0);
        assert_true(cachetool_on_path("fake-ccache"));
        assert_false(cachetool_on_path("sh")); /* only what PATH says */
        assert_int_equal(old ? setenv("PATH", old, 1) : unsetenv("PATH"), 0);
        free(old);
        unlinkat(dfd, "fake-ccache", 0);
        close(dfd);
        rmdir(dir);
}

/* The real ccache on an empty cache directory of ours: zero counters. */
static void test_real_ccache(void **state)
{
        char dir[] = "/tmp/buildtel-test-ccache.XXXXXX";
        char *out = NULL;
        size_t len = 0;
        struct ccstats s;
        int r;

        if (!cachetool_on_path("ccache")) {
                print_message("real ccache not tested: ccache is not installed\n");
                skip();
        }
        assert_non_null(mkdtemp(dir));
        assert_int_equal(setenv("CCACHE_DIR", dir, 1), 0);
        r = cachetool_run(ARGV("ccache", "--print-stats"), 1 << 20, 30, &out, &len);
        assert_int_equal(r, 0);
        assert_int_equal(ccstats_parse(out, len, &s), 0);
        assert_int_equal(s.kind, CCSTATS_CCACHE);
        assert_true(s.hits == 0 && s.misses == 0);
        free(out);
        unsetenv("CCACHE_DIR");
        /* ccache may leave its config or stats files there */
        r = cachetool_run(ARGV("rm", "-rf", dir), 100, 10, &out, &len);
        assert_int_equal(r, 0);
        free(out);
}

struct calls {
        char input[6][64];
        char cache[6];
        size_t n;
};

static void on_call(void *userdata, const char *input, char cache)
{
        struct calls *c = userdata;

        if (c->n < 6) {
                snprintf(c->input[c->n], sizeof(c->input[0]), "%s", input);
                c->cache[c->n] = cache;
        }
        c->n++;
}

/* The real ccache's stats log (CCACHE_STATSLOG): a miss, a hit, a call
 * that only preprocesses; and the grammar's edges on text made here. */
static void test_statslog(void **state)
{
        static const char made[] = "# a.c\ncache_miss\n# \nno_input_file\n# dir/b.c\r\n"
                                   "local_storage_hit\npreprocessed_cache_hit\ncache_miss\n"
                                   "stray_line_before_any\n# c.c";
        char dir[] = "/tmp/buildtel-test-statslog.XXXXXX", cmd[512];
        struct calls c = {0};
        char *out = NULL;
        size_t len = 0;

        (void)state;
        assert_int_equal(ccstatslog_parse(made, sizeof(made) - 1, on_call, &c), 4);
        assert_string_equal(c.input[0], "a.c");
        assert_int_equal(c.cache[0], 'm');
        assert_string_equal(c.input[1], "");
        assert_int_equal(c.cache[1], 'u');
        assert_string_equal(c.input[2], "dir/b.c\r"); /* as given, but for the newline */
        assert_int_equal(c.cache[2], 'h');            /* a hit stays one */
        assert_int_equal(c.cache[3], 'u');            /* cut short: no verdict */
        if (!cachetool_on_path("ccache") || !cachetool_on_path("gcc")) {
                print_message("real ccache not tested: ccache or gcc is not installed\n");
                skip();
        }
        assert_non_null(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd),
                 "cd %s && echo 'int f(void) { return 1; }' >x.c && export CCACHE_DIR=%s/c "
                 "CCACHE_STATSLOG=%s/log && ccache gcc -c x.c && ccache gcc -c x.c && "
                 "ccache gcc -E x.c >/dev/null",
                 dir, dir, dir);
        assert_int_equal(cachetool_run(ARGV("sh", "-c", cmd), 1 << 16, 60, &out, &len), 0);
        free(out);
        assert_int_equal(
            read_regular_file(strcat(strcpy(cmd, dir), "/log"), 0, 1 << 20, &out, &len), 0);
        memset(&c, 0, sizeof(c));
        assert_int_equal(ccstatslog_parse(out, len, on_call, &c), 3);
        assert_string_equal(c.input[0], "x.c");
        assert_true(c.cache[0] == 'm' && c.cache[1] == 'h' && c.cache[2] == 'u');
        free(out);
        assert_int_equal(cachetool_run(ARGV("rm", "-rf", dir), 100, 10, &out, &len), 0);
        free(out);
}

/* sccache's server log (0.4's text, as its server wrote it here, and the
 * newer verdicts of compiler.rs): two compiles in flight at once, a hit,
 * a miss, one compiled but not cacheable, one it could not cache, one
 * whose verdict never came, and lines of other modules and cut short. */
static void test_scclog(void **state)
{
        static const char made[] =
            "[2026-12-05T19:30:16Z INFO  sccache::server] start_server: port: 24555\n"
            "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] [a.o]: "
            "get_cached_or_compile: "
            "[\"-I\", \"inc.c\", \"-c\", \"./src/a.c\", \"-o\", \"o/a.o\"]\n"
            "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] [b.o]: "
            "get_cached_or_compile: "
            "[\"-O1\", \"-c\", \"../b.c\"]\n"
            "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] [b.o]: Cache hit in 0.000 s\n"
            "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] [a.o]: Cache miss in 0.000 "
            "s\n"
            "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] [a.o]: Compiling locally\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [a.o]: Compiled in 0.239 s, "
            "storing in cache\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::server] parse_arguments: CannotCache(multiple "
            "input "
            "files, [\"d.c\"]): [\"-c\", \"c.c\", \"d.c\"]\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [e.o]: "
            "get_cached_or_compile: "
            "[\"-c\", \"e \\\"q\\\".c\"]\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [e.o]: Cache recache in 0.0 "
            "s\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [e.o]: Compiled in 0.1 s, "
            "but "
            "not cacheable\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [f.o]: "
            "get_cached_or_compile: "
            "[\"-c\", \"f.c\"]\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::config] [g.o]: Cache hit in 0.0 s\n"
            "a build's own line: [b.o]: Cache hit in 0.0 s\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [h.o]: "
            "get_cached_or_compile: "
            "[\"-c\", \"h.c\"]\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [h.o]: Cache timed out 60.0 "
            "s\n"
            "[2026-12-05T19:30:18Z DEBUG sccache::compiler::compiler] [i.o]: "
            "get_cached_or_compile: "
            "[\"-c\", \"i";
        struct calls c = {0};

        (void)state;
        assert_int_equal(scclog_parse(made, sizeof(made) - 1, on_call, &c), 5);
        assert_int_equal(c.n, 5);
        assert_string_equal(c.input[0], "b.c"); /* "../" dropped; an include dir is no source */
        assert_int_equal(c.cache[0], 'h');
        assert_string_equal(c.input[1], "src/a.c");
        assert_int_equal(c.cache[1], 'm');
        assert_string_equal(c.input[2], "c.c"); /* the reason's brackets are not the arguments */
        assert_int_equal(c.cache[2], 'u');
        assert_string_equal(c.input[3], "e \"q\".c");
        assert_int_equal(c.cache[3], 'u');
        /* f.c: no verdict; g.o: another module's; h.c timed out, a miss
         * whose compile's end the log lacks; i: cut short */
        assert_string_equal(c.input[4], "h.c");
        assert_int_equal(c.cache[4], 'm');
        assert_int_equal(scclog_parse("", 0, on_call, &c), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_run),         cmocka_unit_test(test_on_path),
            cmocka_unit_test(test_real_ccache), cmocka_unit_test(test_statslog),
            cmocka_unit_test(test_scclog),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
