/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Running a compiler-cache tool for `buildtel cache` (`ccache
 * --print-stats`); parse/ccstats.h reads what it prints. */

/* argv's stdout through spawn_capture() (stderr dropped), at most max
 * bytes, within timeout_s: its exit status with *ret (malloc'd,
 * NUL-terminated), or spawn_capture()'s -errno. */
int cachetool_run(char *const argv[], size_t max, double timeout_s, char **ret, size_t *ret_len);

/* Whether name is an executable file in a directory of $PATH. */
int cachetool_on_path(const char *name);
