/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Follows the newest regular file in a directory as `tail -F` would
 * (`watch --stage-log-dir`). */

struct follow;

int follow_new(const char *dir, struct follow **ret); /* 0 or -errno (dir unreadable) */
void follow_free(struct follow *f);

/* Raw bytes, split into lines by the caller. FOLLOW_SWITCH (len 0) comes
 * first when a newer file is picked up: the old one's partial line is
 * complete. FOLLOW_MID_FILE with it: the new file's bytes up to the first
 * '\n' are the tail of a line. */
#define FOLLOW_SWITCH 1u
#define FOLLOW_MID_FILE 2u
typedef void (*follow_fn)(void *userdata, const char *buf, size_t len, unsigned flags);

/* Deliver the bytes appended since the last call (a few MiB at most, so a
 * tick stays short; a new file from its last MiB). The count, or -errno. */
long follow_poll(struct follow *f, follow_fn cb, void *userdata);
