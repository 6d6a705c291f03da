/* SPDX-License-Identifier: MIT */
#pragma once
/* Private to logline.c and logctx.c: the line classifier's pieces the
 * context's state machine uses too. */
#include <stdbool.h>
#include <stddef.h>

#include "parse/logctx.h"
#include "util/util.h"

#define ESC '\x1b'
#define BEL '\x07'

struct bkline;

static inline bool is_space(char c)
{
        return c == ' ' || (unsigned char)(c - '\t') <= '\f' - '\t'; /* \t \n \v \f */
}

/* Longest prefix of s[0..len) of at most max bytes that does not split a
 * well-formed UTF-8 sequence (malformed bytes are plain bytes). */
size_t logline_utf8_cut(const char *s, size_t len, size_t max);
/* What a terminal leaves visible of in[0..len) into out (at most cap
 * bytes, not NUL-terminated): the last '\r' segment with text, cleaned. */
size_t logline_visible(const char *in, size_t len, char *out, size_t cap);
/* Past GitHub's "2025-07-03T08:13:03.5879809Z " prefix (p when absent);
 * past the digits at p. */
const char *logline_skip_ci_timestamp(const char *p, const char *end);
const char *logline_skip_digits(const char *p, const char *end);
/* Classify a cleaned line (leading spaces trimmed, as logctx does), its
 * BuildKit prefix parsed once (bl; NULL: parse it here). Never fails. */
void logline_classify_bk(const char *line, size_t len, const struct bkline *bl,
                         struct logline *ret);
