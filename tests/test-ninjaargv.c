/* SPDX-License-Identifier: MIT */
/* Where a build command keeps its .ninja_log (parse/ninjaargv),
 * table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "parse/ninjaargv.h"
#include "util/macro.h"

struct tcase {
        const char *argv[8];
        int want;        /* 1 found, 0 not */
        const char *dir; /* when found */
        enum ninjaargv_need need;
};

static const struct tcase cases[] = {
    {{"ninja"}, 1, ".", NINJAARGV_NONE},
    {{"ninja", "-C", "build"}, 1, "build", NINJAARGV_NONE},
    {{"ninja", "-Cbuild", "all"}, 1, "build", NINJAARGV_NONE},
    {{"/usr/bin/ninja", "-j", "4", "-C", "out/Release", "chrome"},
     1,
     "out/Release",
     NINJAARGV_NONE},
    {{"ninja", "-C", "a", "-C", "b"}, 1, "b", NINJAARGV_NONE},
    {{"ninja", "-C"}, 0, NULL, 0},
    {{"ninja-build", "-C", "x"}, 1, "x", NINJAARGV_NONE},
    {{"samu", "-C", "x"}, 1, "x", NINJAARGV_NONE},
    {{"env", "CCACHE_DIR=/c", "ninja", "-C", "b"}, 1, "b", NINJAARGV_NONE},
    {{"env"}, 0, NULL, 0},
    {{"cmake", "--build", "build"}, 1, "build", NINJAARGV_BUILD_NINJA},
    {{"cmake", "--build", "build", "-j", "8", "--target", "all"},
     1,
     "build",
     NINJAARGV_BUILD_NINJA},
    {{"cmake", "--build=out"}, 1, "out", NINJAARGV_BUILD_NINJA},
    {{"cmake", "--build", "--preset", "dev"}, 0, NULL, 0},
    {{"cmake", "--build"}, 0, NULL, 0},
    {{"cmake", "-S", ".", "-B", "build"}, 0, NULL, 0},
    {{"meson", "compile", "-C", "builddir"}, 1, "builddir", NINJAARGV_BUILD_NINJA},
    {{"meson", "compile"}, 1, ".", NINJAARGV_BUILD_NINJA},
    {{"meson", "compile", "-Cbd", "-j", "2"}, 1, "bd", NINJAARGV_BUILD_NINJA},
    {{"meson", "setup", "build"}, 0, NULL, 0},
    {{"meson", "test", "-C", "build"}, 0, NULL, 0},
    {{"make", "-C", "build"}, 0, NULL, 0},
    {{"sh", "-c", "ninja -C build"}, 0, NULL, 0},
    {{"ninjas", "-C", "x"}, 0, NULL, 0},
    {{NULL}, 0, NULL, 0},
};

static void test_cases(void **state)
{
        (void)state;
        for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
                const struct tcase *t = &cases[c];
                const char *dir = "unset";
                enum ninjaargv_need need = 99;
                int r = ninjaargv_dir((char *const *)(uintptr_t)t->argv, &dir, &need);

                if (r != t->want)
                        fail_msg("case %zu (%s ...): %d, not %d", c,
                                 t->argv[0] ? t->argv[0] : "(empty)", r, t->want);
                if (r == 1 && (strcmp(dir, t->dir) != 0 || need != t->need))
                        fail_msg("case %zu (%s): dir '%s' need %d, not '%s' %d", c, t->argv[0], dir,
                                 (int)need, t->dir, (int)t->need);
                if (r == 0 && strcmp(dir, "unset") != 0)
                        fail_msg("case %zu: dir set when not found", c);
        }
        assert_int_equal(ninjaargv_dir(NULL, &(const char *){NULL}, &(enum ninjaargv_need){0}), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
