/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "util/dbuf.h"

/* The one JSON string writer of the hand-written encoders (the trace, OTLP
 * JSON); jansson writes the rest. Appends s[0..len) as a JSON string
 * literal (quotes included): quotes, backslashes and control characters
 * escaped (\n \t \r, else \u00XX), bytes that are not well-formed UTF-8
 * replaced by U+FFFD (model/run.c's cleaner). 0 or -ENOMEM. */
int jsonw_string(struct dbuf *out, const char *s, size_t len);

/* A new jansson string (a json_t *) holding s with every byte that is not
 * well-formed UTF-8 made U+FFFD, or NULL when s is NULL or memory ran out:
 * the strings of every file jansson writes. */
struct json_t;
struct json_t *jsonw_str(const char *s);
