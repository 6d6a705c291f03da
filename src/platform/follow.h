/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "parse/linebuf.h"

/* Follows the newest regular file in a directory, as `tail -F` would, and
 * switches to a newer one when it appears. Used by `watch --stage-log-dir`
 * to know what an already running build is doing. */

struct follow;

int follow_new(const char *dir, struct follow **ret); /* 0 or -errno (dir unreadable) */
void follow_free(struct follow *f);

/* Look for a newer file and deliver the lines appended since the last call
 * (at most a few MiB per call, so a tick stays short). When a file is first
 * picked up, only its last MiB is read. Returns the bytes read, or -errno. */
long follow_poll(struct follow *f, linebuf_cb cb, void *userdata);
