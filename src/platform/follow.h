/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Follows the newest regular file in a directory, as `tail -F` would, and
 * switches to a newer one when it appears. Used by `watch --stage-log-dir`
 * to know what an already running build is doing. */

struct follow;

int follow_new(const char *dir, struct follow **ret); /* 0 or -errno (dir unreadable) */
void follow_free(struct follow *f);

/* What follow_poll hands over: raw bytes, split into lines by the caller.
 * A call with FOLLOW_SWITCH (and len 0) comes first when a newer file is
 * picked up: the old file's partial line is complete. FOLLOW_MID_FILE with
 * it: the new file was picked up mid-file, so its bytes up to the first
 * '\n' are the tail of a line. */
#define FOLLOW_SWITCH 1u
#define FOLLOW_MID_FILE 2u
typedef void (*follow_fn)(void *userdata, const char *buf, size_t len, unsigned flags);

/* Look for a newer file and deliver the bytes appended since the last call
 * (at most a few MiB per call, so a tick stays short). When a file is first
 * picked up, only its last MiB is read. Returns the bytes read, or -errno. */
long follow_poll(struct follow *f, follow_fn cb, void *userdata);
