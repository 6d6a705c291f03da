/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* Where a build command keeps its .ninja_log, from its argv alone (so
 * `run` reads it without --ninja-log): `ninja [-C DIR]` (also ninja-build,
 * samu), `cmake --build DIR` and `meson compile [-C DIR]`, after a leading
 * `env [VAR=VALUE...]`. Pure: no I/O. */

enum ninjaargv_need {
        NINJAARGV_NONE,        /* ninja itself: DIR/.ninja_log is its log */
        NINJAARGV_BUILD_NINJA, /* a front end: only when DIR/build.ninja (or
                                  DIR/.ninja_log) exists, ninja is its backend */
};

/* Returns 1 with *ret_dir (a string of argv, or ".") and *ret_need when
 * argv is one of those commands; 0 when it is not, or when it names a
 * directory this cannot tell (an option with a missing argument). */
int ninjaargv_dir(char *const *argv, const char **ret_dir, enum ninjaargv_need *ret_need);
