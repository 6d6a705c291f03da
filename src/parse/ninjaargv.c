/* SPDX-License-Identifier: MIT */
#include "parse/ninjaargv.h"

#include <string.h>

/* Whether arg's base name is name. */
static bool is(const char *arg, const char *name)
{
        const char *s = strrchr(arg, '/');

        return strcmp(s ? s + 1 : arg, name) == 0;
}

/* The value of option opt ("-C") at argv[*i]: "-C DIR" or "-CDIR"; with
 * long, "--opt=DIR" too. NULL when argv[*i] is not it; "" when its value
 * is missing. Advances *i past a separate value. */
static const char *opt_value(char *const *argv, size_t *i, const char *opt)
{
        const char *a = argv[*i];
        size_t n = strlen(opt);

        if (strncmp(a, opt, n) != 0)
                return NULL;
        if (a[n] == '\0') {
                if (!argv[*i + 1])
                        return "";
                return argv[++*i];
        }
        if (opt[1] != '-') /* -CDIR */
                return a + n;
        return a[n] == '=' ? a + n + 1 : NULL;
}

/* ninja's -C: the last one wins, as in ninja. */
static int ninja_dir(char *const *argv, const char **ret)
{
        const char *dir = ".";

        for (size_t i = 1; argv[i]; i++) {
                const char *v = opt_value(argv, &i, "-C");

                if (v && !*v)
                        return 0;
                if (v)
                        dir = v;
        }
        *ret = dir;
        return 1;
}

static int cmake_dir(char *const *argv, const char **ret)
{
        for (size_t i = 1; argv[i]; i++) {
                if (strcmp(argv[i], "--build") == 0) {
                        if (!argv[i + 1] || argv[i + 1][0] == '-')
                                return 0; /* --build --preset P: the preset knows */
                        *ret = argv[i + 1];
                        return 1;
                }
                if (strncmp(argv[i], "--build=", 8) == 0 && argv[i][8]) {
                        *ret = argv[i] + 8;
                        return 1;
                }
        }
        return 0;
}

int ninjaargv_dir(char *const *argv, const char **ret_dir, enum ninjaargv_need *ret_need)
{
        enum ninjaargv_need need = NINJAARGV_BUILD_NINJA;
        const char *dir = NULL;
        size_t k = 0;
        int r = 0;

        if (!argv || !argv[0])
                return 0;
        if (is(argv[0], "env")) /* env [VAR=VALUE...] COMMAND */
                for (k = 1; argv[k] && strchr(argv[k], '=') && argv[k][0] != '-'; k++)
                        ;
        if (!argv[k])
                return 0;
        if (is(argv[k], "ninja") || is(argv[k], "ninja-build") || is(argv[k], "samu")) {
                r = ninja_dir(argv + k, &dir);
                need = NINJAARGV_NONE;
        } else if (is(argv[k], "cmake")) {
                r = cmake_dir(argv + k, &dir);
        } else if (is(argv[k], "meson") && argv[k + 1] && strcmp(argv[k + 1], "compile") == 0) {
                r = ninja_dir(argv + k + 1, &dir); /* its -C read as ninja's */
        }
        if (r > 0) {
                *ret_dir = dir;
                *ret_need = need;
        }
        return r;
}
