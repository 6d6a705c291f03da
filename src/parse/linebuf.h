/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Splits a byte stream on '\n' into lines for the parsers, without copying
 * when a whole line sits in one chunk. A line longer than the cap is cut:
 * the first cap bytes are delivered with truncated = true and the rest of
 * that line is dropped. */

#define LINEBUF_MAX 65536

typedef void (*linebuf_cb)(void *userdata, const char *line, size_t len, bool truncated);

struct linebuf;

int linebuf_new(size_t cap, struct linebuf **ret); /* cap 0 = LINEBUF_MAX */
void linebuf_free(struct linebuf *lb);

/* Deliver every complete line in buf (without the '\n'). */
void linebuf_feed(struct linebuf *lb, const char *buf, size_t len, linebuf_cb cb, void *userdata);
/* Drop the next line it would deliver (a file picked up mid-file: its
 * first bytes up to '\n' are the tail of a line). */
void linebuf_skip_line(struct linebuf *lb);
/* Deliver a pending partial line, if any (at EOF). */
void linebuf_flush(struct linebuf *lb, linebuf_cb cb, void *userdata);
