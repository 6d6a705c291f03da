/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Asking buildx about a build it ran: the output is parsed by
 * parse/bakemeta.h (buildx_history_parse), which takes a buffer. */

#define BUILDX_FETCH_MAX (4u << 20)

/* `docker buildx history inspect --format json ID` (ID: ref's bare id)
 * through spawn_capture(): its stdout (at most BUILDX_FETCH_MAX) within
 * timeout_s, malloc'd and NUL-terminated. 0, -EINVAL for a ref that starts
 * with '-', -ENOENT without docker, -ETIMEDOUT, -EFBIG for more output
 * than the cap, -EIO for a non-zero exit, or another -errno. */
int buildx_history_fetch(const char *ref, double timeout_s, char **ret, size_t *ret_len);

/* The same for `docker buildx history logs ID`: BuildKit's plain progress
 * of the record replayed (buildx prints it to stderr; that is *ret). */
int buildx_history_logs(const char *ref, double timeout_s, char **ret, size_t *ret_len);
/* The record's provenance (parse/bkrecord.h): history inspect attachment
 * --type provenance ID; -EIO also when the record has none. */
int buildx_history_provenance(const char *ref, double timeout_s, char **ret, size_t *ret_len);

/* This host is pure cgroup v2 (/sys/fs/cgroup is cgroup2), where a local
 * daemon's BuildKit samples its steps (parse/bkrecord.h). */
bool buildx_host_v2(void);

/* The same for `docker buildx history ls --format json`: one JSON object
 * per record and line (parse/bakemeta.h buildx_history_ls_parse). */
int buildx_history_list(double timeout_s, char **ret, size_t *ret_len);
