/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dbuf.h"

/* What the build's own output says it built: per target (a bake/compose
 * target, or the one implicit target of a plain build), the steps, the
 * layer cache, the compiler cache; for the whole invocation, ninja/make
 * progress and the slowest ninja edges. Plain value structs: the parsers
 * fill them, the sinks read them. Every count the build controls is
 * capped. */

#define TARGETS_MAX 256      /* targets tracked; more are folded into the last */
#define TARGET_NAME_MAX 128  /* bytes kept of a target name (cut, never split UTF-8 badly) */
#define TARGET_FIELD_MAX 160 /* builder, node, ref */
#define TARGETS_SLOW_EDGES 10
#define TARGETS_FAILED_MAX 16    /* failing steps named in the summary */
#define TARGET_STEP_NAME_MAX 255 /* bytes kept of a failing step's name */

/* Compiler-cache counters: absent is not zero. */
struct cc_counts {
        bool set;
        uint64_t hits, misses;
};

struct target {
        char name[TARGET_NAME_MAX + 1];
        char builder[TARGET_FIELD_MAX + 1]; /* "" unknown */
        char node[TARGET_FIELD_MAX + 1];
        char ref[TARGET_FIELD_MAX + 1];
        /* buildtel's clock (seconds since the run started), NAN when never seen */
        double first_seen, last_seen;
        uint32_t steps, cached; /* [... i/n] vertices; a vertex counts once */
        uint32_t internal;      /* other vertices of this target */
        uint32_t errors, canceled;
        bool done; /* every step it showed ended (DONE or CACHED) and it exported or ended */
        /* sccache stats from the marker step; guess = taken from the last
         * stats block because no marker step was found */
        struct cc_counts sccache;
        bool sccache_guess;
        struct cc_counts ccache;
        /* docker buildx history inspect: filled in when imported */
        bool history_set;
        double history_duration_s;
        uint32_t history_steps, history_cached;
        char history_status[16];
        char history_vcs_revision[80]; /* the build context's, "" unknown */
};

/* The compiler caches whose stats a build log can print. */
enum cc_tool { CC_TOOL_SCCACHE, CC_TOOL_CCACHE, CC_TOOLS };

/* One stats block as the log printed it: the tool's counters at that
 * moment (cumulative: per cache dir, per sccache server). */
struct cc_block {
        double seen; /* buildtel's clock */
        uint64_t hits, misses;
        int64_t size_bytes, max_size_bytes, files; /* -1: not printed */
        char version[32];                          /* "" unknown */
};

/* The first and the last block of one tool in the whole log (the same
 * block when it printed one), for the run history's snapshots. */
struct cc_blocks {
        uint32_t blocks; /* 0: none printed */
        struct cc_block first, last;
};

struct ninja_edge {
        int64_t start_ms, end_ms;
        char output[256];
};

/* A BuildKit vertex that ended in ERROR (not CANCELED), in the order the
 * vertices first appeared. */
struct failed_step {
        char name[TARGET_STEP_NAME_MAX + 1]; /* its last header, "[stage 2/5] RUN ..." */
        int target;                          /* index in t[], -1 none or several */
};

struct targets {
        size_t n;
        struct target t[TARGETS_MAX];
        bool multi;                         /* several targets (prefixes, or --targets a,b) */
        char builder[TARGET_FIELD_MAX + 1]; /* #0 building with "X" instance */
        uint32_t steps, cached, internal, errors, canceled; /* distinct vertices */
        bool vertex_cap_hit;                                /* more vertices than tracked */
        bool buildkit_seen;
        size_t nfailed;
        struct failed_step failed[TARGETS_FAILED_MAX];
        /* ninja [n/m] and make [ nn%] progress, last seen */
        uint64_t ninja_done, ninja_total;
        int make_pct; /* -1 none */
        /* .ninja_log of this run */
        bool ninja_log_set;
        uint64_t ninja_edges;
        size_t nslow;
        struct ninja_edge slow[TARGETS_SLOW_EDGES]; /* slowest first */
        struct cc_blocks cc_log[CC_TOOLS];          /* targets_cc_blocks() */
};

/* Empty model: no targets, unknown progress. */
void targets_init(struct targets *ts);
/* The same for a model in memory that is already all zero (calloc'd): it
 * leaves the 220 KB untouched, so only the pages in use are ever faulted
 * in (under ASan each calloc this large is a fresh mmap). */
void targets_init_zeroed(struct targets *ts);

/* The index of the target called name[0..len) (cut to TARGET_NAME_MAX),
 * adding it when new. When the table is full the last slot is returned.
 * Never fails. */
size_t targets_get(struct targets *ts, const char *name, size_t len);
/* The index, or -1 when no such target. */
int targets_find(const struct targets *ts, const char *name);

/* Note that target i was seen at time now (buildtel's clock). */
void targets_touch(struct targets *ts, size_t i, double now);

/* Offer an edge of this run to the slowest-edges table (kept slowest
 * first; an edge already present with the same times is a second output of
 * the same edge and is skipped). */
void targets_offer_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                        size_t out_len);

/* Copy src[0..len) into dst (size cap), cut at a UTF-8 boundary. */
void targets_copy_field(char *dst, size_t cap, const char *src, size_t len);

/* Note a compiler-cache stats block of tool seen in the log: a new one
 * (is_new), or more figures of the last one (a size printed after its
 * counters). */
void targets_note_cc_block(struct targets *ts, enum cc_tool tool, const struct cc_block *b,
                           bool is_new);
/* The blocks of tool the log printed, or NULL when none. */
const struct cc_blocks *targets_cc_blocks(const struct targets *ts, enum cc_tool tool);
/* "sccache", "ccache". */
const char *targets_cc_tool_name(enum cc_tool tool);

/* Human-readable lines about the targets (for the terminal and the
 * summary text); appended to out. Returns 0 or -ENOMEM. Nothing is
 * appended when nothing was seen. */
int targets_render_text(const struct targets *ts, struct dbuf *out);
/* The same as JSON (2-space indent, trailing newline). 0 or -ENOMEM. */
int targets_render_json(const struct targets *ts, struct dbuf *out);
/* Anything worth reporting at all. */
bool targets_any(const struct targets *ts);
