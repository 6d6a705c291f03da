/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The figures of a compiler cache as `buildtel cache` stores them: the
 * counters and the size, from `ccache --print-stats` (tab-separated
 * "id<TAB>value" lines, ccache 3.7+) and `sccache --show-stats
 * --stats-format=json`. Scoped to the snapshot command: the parsing of
 * stats printed inside a build log is sources/ccstats.h. */

struct cachetool_stats {
        int64_t hits, misses; /* -1: unknown */
        int64_t size_bytes, max_size_bytes, files;
        char version[32]; /* "" unknown */
};

/* Returns 0, or -EINVAL when buf holds no hit or miss counter. */
int cachetool_parse_ccache(const char *buf, size_t len, struct cachetool_stats *ret);
int cachetool_parse_sccache_json(const char *buf, size_t len, struct cachetool_stats *ret);

/* Run argv (posix_spawnp, no shell; stdin /dev/null, stderr dropped) and
 * collect its stdout, at most max bytes, waiting at most timeout_s.
 * Returns the exit status (>= 0) with *ret (malloc'd, NUL-terminated) and
 * *ret_len, or -errno (-ETIMEDOUT: killed). */
int cachetool_run(char *const argv[], size_t max, double timeout_s, char **ret, size_t *ret_len);

/* Whether name is an executable file in a directory of $PATH. */
int cachetool_on_path(const char *name);
