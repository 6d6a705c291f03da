/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Running a compiler-cache tool for `buildtel cache` (`ccache
 * --print-stats`, `sccache --show-stats --stats-format=json`). What they
 * print is read by parse/ccstats.h, the same parser that reads the
 * stats printed inside a build log. */

/* Run argv through spawn_capture() (no shell; stdin /dev/null, stderr
 * dropped) and collect its stdout, at most max bytes (the rest is read and
 * dropped), waiting at most timeout_s. Returns the exit status (>= 0, or
 * 128 + signal) with *ret (malloc'd, NUL-terminated) and *ret_len, or
 * -errno (-ENOENT: not found; -ETIMEDOUT: its process group was killed). */
int cachetool_run(char *const argv[], size_t max, double timeout_s, char **ret, size_t *ret_len);

/* Whether name is an executable file in a directory of $PATH. */
int cachetool_on_path(const char *name);
