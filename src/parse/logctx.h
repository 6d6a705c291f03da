/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/sample.h"

/* What the build is doing, from its own output: the coarse `stage` and the
 * latest line that names work (`context`). Fed one line at a time. */

enum logline_kind {
        LOGLINE_BLANK,         /* nothing left after cleaning */
        LOGLINE_NOISE,         /* any other line */
        LOGLINE_NINJA,         /* [n/m] ... */
        LOGLINE_MAKE,          /* [ nn%] Building|Linking ... , make[N]: *** (not work) */
        LOGLINE_BUILDKIT_STEP, /* #N [... i/n] INSTR ... */
        LOGLINE_BUILDKIT,      /* other #N lines */
        LOGLINE_COMPILER,      /* a compiler command line */
        LOGLINE_GHA_GROUP,     /* ::group::NAME (or ##[group]NAME) */
};

/* Classification of one cleaned line. stage points into the line given to
 * logline_classify() (or is NULL with stage_len 0 when the line sets none).
 * For LOGLINE_BUILDKIT_STEP it spans the bracket tokens before `i/n` with
 * leading and trailing platform tokens left out, still space-separated
 * ("pytorch builder"); logctx_stage() reports it as "pytorch/builder" and
 * also drops a platform token in the middle. For LOGLINE_GHA_GROUP it is
 * the group name. A BuildKit log line whose text is a ninja, make or
 * compiler line ("#12 1.234 cc -c a.c") gets that kind. A line with a CI
 * timestamp prefix ("2025-07-03T08:13:03.5879809Z ") is classified by what
 * follows it. */
struct logline {
        enum logline_kind kind;
        const char *stage;
        size_t stage_len;
        bool work; /* names work: preferred as context over noise */
};

/* Strip ANSI escape sequences (CSI, OSC incl. OSC-8 links), drop '\r' (keep
 * the text after the last '\r' that is followed by text, as a terminal
 * shows it), trim spaces, and cap at SAMPLE_CONTEXT_MAX bytes without
 * cutting a UTF-8 sequence. Writes at most cap-1 bytes plus NUL into out;
 * returns the length. */
size_t logline_clean(const char *in, size_t len, char *out, size_t cap);

/* Classify a cleaned line. Never fails. */
void logline_classify(const char *line, size_t len, struct logline *ret);

struct logctx_config {
        const char *stage_regex; /* POSIX ERE; first capture = stage; NULL none */
        const char *fixed_stage; /* --stage NAME: used while nothing else applies */
};

struct logctx;

/* Returns 0, -EINVAL for a bad regex, or -ENOMEM. */
int logctx_new(const struct logctx_config *cfg, struct logctx **ret);
void logctx_free(struct logctx *c);

/* Feed one raw line (no '\n'), as linebuf delivers it. */
void logctx_feed_line(struct logctx *c, const char *line, size_t len);

/* Current values, NUL-terminated, "" when none; valid until the next feed. */
const char *logctx_stage(const struct logctx *c);
const char *logctx_context(const struct logctx *c);
