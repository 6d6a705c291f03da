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
        LOGLINE_QUIET,         /* kbuild/automake/libtool quiet rule: "CC foo.o", "CCLD prog" */
        LOGLINE_CARGO,         /* "Compiling serde v1.0.200" (also Checking, Documenting) */
        LOGLINE_BAZEL,         /* "[1,234 / 5,678] Compiling src/a.cc; 3s linux-sandbox" */
        LOGLINE_DIAG,          /* never context: a compiler's diagnostic ("x.c:3:5: warning:",
                                * "In file included from", "  12 | code", "  ^~~~", "note:")
                                * or a progress bar ("[=====>   ] 45%", "#####", "....") */
};

/* Classification of one cleaned line. stage points into the line given to
 * logline_classify_bk() (or is NULL with stage_len 0 when the line sets none).
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
        bool work;        /* names work: preferred as context over noise */
        bool bookkeeping; /* BuildKit's "#N DONE 0.1s", "#N CACHED", "#N ...", "#N
                           * sha256:<digest>": never the context */
};

struct logctx_config {
        const char *stage_regex; /* POSIX ERE; first capture = stage; NULL none */
        const char *fixed_stage; /* --stage NAME: used while nothing else applies */
        double hold_s;           /* how long a work line pins the context: the sampling
                                  * interval (0: only lines of the same instant) */
};

struct logctx;

/* Returns 0, -EINVAL for a bad regex, or -ENOMEM. */
int logctx_new(const struct logctx_config *cfg, struct logctx **ret);
void logctx_free(struct logctx *c);

/* Feed one raw line (no '\n'), as linebuf delivers it, with the time it
 * arrived (seconds, any monotonic origin) and its bkline_parse() (bl; NULL:
 * none). */
struct bkline;
void logctx_feed_line_bk(struct logctx *c, const char *line, size_t len, double now_s,
                         const struct bkline *bl);
/* The chunk the next lines come from, as linebuf hands them out in place:
 * escapes and '\r' are then looked for once per chunk, not twice per line,
 * and the context is copied out only when read or at the next chunk. A
 * line outside the chunk is looked at on its own; the result is the same.
 * logctx_chunk(c, NULL, 0) before the chunk is gone. */
void logctx_chunk(struct logctx *c, const char *buf, size_t len);

/* The context rule, in one place. A non-blank line becomes the context when
 * it names work (work), when no work line has been seen yet (!seen_work),
 * or when the last work line arrived more than hold_s before it (now_s -
 * last_work_s > hold_s): a work line holds the context against later noise
 * for one sampling interval, never longer, so a build that prints a compile
 * line and then minutes of other output is not pinned to that compile. */
bool logctx_line_wins(bool work, bool seen_work, double last_work_s, double now_s, double hold_s);

/* Current values, NUL-terminated, "" when none; valid until the next feed. */
const char *logctx_stage(struct logctx *c);   /* not const: lines may be batched */
const char *logctx_context(struct logctx *c); /* not const: see logctx_chunk */
