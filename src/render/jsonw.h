/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "util/dbuf.h"

/* The one JSON string writer of the hand-written encoders (the trace, OTLP
 * JSON); jansson writes the rest. Appends s[0..len) to w as a JSON string
 * literal (quotes included): quotes, backslashes and control characters
 * escaped (\n \t \r, else \u00XX), bytes that are not well-formed UTF-8
 * replaced by U+FFFD (model/run.c's cleaner). */
void jsonw_put(struct dwriter *w, const char *s, size_t len);

/* A new jansson string (a json_t *) holding s with every byte that is not
 * well-formed UTF-8 made U+FFFD, or NULL when s is NULL or memory ran out:
 * the strings of every file jansson writes. */
struct json_t;
struct json_t *jsonw_str(const char *s);
/* jsonw_str(s), or a JSON null when s is NULL. NULL only when memory ran
 * out. */
struct json_t *jsonw_text(const char *s);
/* A new JSON real, or a JSON null for NAN or an infinity (jansson takes
 * neither). NULL only when memory ran out. */
struct json_t *jsonw_real(double v);

/* A new jansson array of argv's strings (jsonw_str()) up to its NULL, a
 * JSON null when argv is NULL, or NULL when memory ran out. */
struct json_t *jsonw_argv(char *const *argv);

/* Append v as jansson's json_dumps(v, flags) writes it, and a newline, to
 * out. v may be NULL (its building ran out of memory). 0 or -ENOMEM. */
int jsonw_dump(const struct json_t *v, size_t flags, struct dbuf *out);
