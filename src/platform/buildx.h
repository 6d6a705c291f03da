/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Asking buildx about a build it ran: the output is parsed by
 * parse/bakemeta.h (buildx_history_parse), which takes a buffer. */

#define BUILDX_FETCH_MAX (4u << 20)

/* Run `docker buildx history inspect --format json REF` through
 * spawn_capture() (a fixed argv, never a shell; its own process group, so
 * the buildx plugin docker runs dies with it) and read its stdout (at most
 * BUILDX_FETCH_MAX) within timeout_s seconds. *ret is malloc'd and
 * NUL-terminated. Returns 0, -EINVAL for a ref that starts with '-',
 * -ENOENT when docker is not found, -ETIMEDOUT, -EFBIG for more output
 * than the cap, -EIO for a non-zero exit, or another -errno. */
int buildx_history_fetch(const char *ref, double timeout_s, char **ret, size_t *ret_len);
