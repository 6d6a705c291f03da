/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/targets.h"

/* BuildKit progress, --progress=plain and --progress=rawjson (one object
 * per line, or the indented multi-line form of buildx 0.12-0.14), read one
 * line at a time. Keeps a table of vertices (capped), never the log. */

#define BUILDKIT_MAX_VERTICES 65536
#define BUILDKIT_MAX_JSON (8u << 20) /* one rawjson object, assembled */
#define BUILDKIT_MAX_MARKERS 32

/* A vertex's log text, as the build printed it (plain: the text after
 * "#N <secs> "; rawjson: the decoded log data, split into lines). vidx
 * names the vertex for buildkit_vertex_*(); marker is the index of the
 * first marker its name contains, or -1. */
typedef void (*buildkit_log_fn)(void *userdata, uint32_t vidx, int marker, const char *text,
                                size_t len);

/* rawjson only: the vertex event as the line --progress=plain would print
 * for it ("#N [stage i/n] RUN ..." when a vertex starts, "#N 0.000 <text>"
 * for its log lines), for the context of a run (never the JSON itself). N
 * is the vertex's index in this parser plus one. */
typedef void (*buildkit_ctx_fn)(void *userdata, const char *line, size_t len);

struct buildkit_config {
        const char *const *targets; /* --targets a,b: the invocation's targets */
        size_t ntargets;
        const char *const *markers; /* substrings to find in vertex names */
        size_t nmarkers;            /* at most BUILDKIT_MAX_MARKERS */
        buildkit_log_fn log;
        buildkit_ctx_fn ctx; /* NULL: none */
        void *userdata;      /* log's */
        void *ctx_userdata;
};

struct buildkit;

/* The config's strings must outlive the parser. 0 or -ENOMEM. */
int buildkit_new(const struct buildkit_config *cfg, struct buildkit **ret);
void buildkit_free(struct buildkit *b);

/* A plain line's "#N " and, after it, "<secs> " (a container's output), the
 * prefix three parsers read (bkrun, buildkit, logctx): parsed once per line
 * by bkline_parse and handed to each (the recorder's on_line). */
struct bkline {
        const char *end;        /* the line without its trailing '\r's */
        bool hash;              /* "#" and a digit */
        const char *digits_end; /* when hash: after "#" and every digit after it */
        bool ok;                /* 1 to 18 digits, then ' ' (buildkit's "#N ") */
        uint64_t n;             /* N, when ok */
        const char *rest;       /* after "#N ", when ok */
        const char *secs_end;   /* rest is "<digits>.<1-3 digits>" and then ' ' or
                                 * the end: after them; NULL otherwise */
};
/* rest's "<secs>" in a shape other than "<digits>.<3 digits> ": the end
 * of the secs as bkline.secs_end says, or NULL. */
const char *bkline_secs_end(const char *s, const char *end);
/* Past the spaces (' ' only) at p. */
static inline const char *skip_sp(const char *p, const char *end)
{
        while (p < end && *p == ' ')
                p++;
        return p;
}
/* The next space-separated token of [*p, end): its length (0 at the end)
 * and *ret_tok; *p past it. */
size_t bk_next_token(const char **p, const char *end, const char **ret_tok);
/* "i/n": digits, '/', digits, the whole of s[0..n) (a step's place). */
bool bk_is_step_token(const char *s, size_t n);
/* "sha256:<64 hex>" alone: BuildKit 0.8 naming a vertex's digest while it
 * resolves, no work of the vertex. */
bool bkline_is_digest(const char *s, const char *end);
/* "#N" (any digits), "#N " (1-18 digits) and "<secs> " after it. Inline:
 * it runs once for every line of the build's output. */
static inline void bkline_parse(const char *line, size_t len, struct bkline *ret)
{
        const char *end = line + len, *s = line + 1, *d;
        uint64_t n;

        if (len && end[-1] == '\r')
                while (end > line && end[-1] == '\r')
                        end--;
        ret->end = end;
        ret->hash = ret->ok = false;
        ret->secs_end = NULL;
        if (len < 2 || line[0] != '#' || (unsigned char)(line[1] - '0') > 9)
                return;
        ret->hash = true;
        /* At most 18 digits make an index (no overflow); real ones are far
         * smaller. bkrun and logctx look past any number of them. */
        n = (unsigned char)(*s++ - '0');
        while (s < end && (unsigned char)(*s - '0') < 10)
                n = n * 10 + (unsigned char)(*s++ - '0'); /* wraps past 19: not ok */
        ret->digits_end = s;
        if (s - (line + 1) > 18 || s >= end || *s != ' ')
                return;
        ret->ok = true;
        ret->n = n;
        ret->rest = ++s;
        /* Most lines are "<secs> text", secs with three decimals: looked at
         * without a loop, else as bkline_secs_end says. */
        if (s >= end || (unsigned char)(*s - '0') > 9)
                return;
        d = s + 1;
        while (d < end && (unsigned char)(*d - '0') < 10)
                d++;
        if (end - d > 4 && d[0] == '.' && (unsigned char)(d[1] - '0') < 10 &&
            (unsigned char)(d[2] - '0') < 10 && (unsigned char)(d[3] - '0') < 10 && d[4] == ' ') {
                ret->secs_end = d + 4;
                return;
        }
        ret->secs_end = bkline_secs_end(s, end);
}
/* Feed one line (no '\n'), bl its bkline_parse(). now is buildtel's clock
 * in seconds. Returns what the line was: a "#N" line (BK_LINE_PLAIN), part
 * of a rawjson object (BK_LINE_JSON: its context went to cfg.ctx), or any
 * other (0). Never fails: past the caps, new vertices are not tracked. */
enum { BK_LINE_OTHER, BK_LINE_PLAIN, BK_LINE_JSON };
int buildkit_feed_line_bk(struct buildkit *b, const char *line, size_t len, double now,
                          const struct bkline *bl);

/* Fill ts: the targets (one named after --targets or "default" for a
 * single-target build), their steps and times, the totals and the builder.
 * Call once, at the end. */
void buildkit_finish(struct buildkit *b, struct targets *ts);

/* Whether the stream's names carry a target's prefix ("[app common 2/3]"):
 * several --targets, or the stream showed them. */
bool buildkit_multi(const struct buildkit *b);
/* Whether the stream exported and no vertex of it failed or was canceled
 * (then a FROM that never ended counts as cached). */
bool buildkit_ended_ok(const struct buildkit *b);

/* A step's place "[stage i/n]" (stage: the tokens before "i/n", hashed),
 * and where it was seen (owner: a target's index, or -1) and whether
 * cached there. */
struct step_place {
        uint64_t stage;
        uint32_t i, n;
        int32_t owner;
        bool cached;
};

/* name's place: true and *ret (stage, i, n) set for a step header; without
 * its first token when strip_target (a multi-target stream's prefix). */
bool buildkit_step_place(const char *name, bool strip_target, struct step_place *ret);
/* Sort places for buildkit_complete_steps(). */
void buildkit_sort_places(struct step_place *v, size_t n);
/* Add to *steps and *cached the places of owner's stages that another
 * record or the live stream printed and owner's record did not: BuildKit
 * does not always write a vertex shared by several builds into each
 * record. A place printed nowhere is no step (BuildKit merges identical
 * vertices). A step found is cached when every other place of it is. Only
 * for a record that ended ok (a failed build stops early); v sorted. */
void buildkit_complete_steps(const struct step_place *v, size_t n, int32_t owner, uint32_t *steps,
                             uint32_t *cached);

/* After buildkit_finish: the one target vertex vidx belongs to, or -1 when
 * none or several; whether it came from the layer cache. */
int buildkit_vertex_target(const struct buildkit *b, uint32_t vidx);
bool buildkit_vertex_cached(const struct buildkit *b, uint32_t vidx);
/* The last vertex whose name holds marker i: 0 and *ret set, or -ENOENT. */
int buildkit_marker_vertex(const struct buildkit *b, size_t marker, uint32_t *ret);
/* An RFC 3339 time as BuildKit's rawjson writes it ("2024-05-01T10:00:02.5Z",
 * or with a +hh:mm offset) in Unix seconds; NAN when s[0..n) is not one. */
double buildkit_parse_time(const char *s, size_t n);

/* Every line of buf fed to b at time 0, then b finished into ts (zeroed,
 * targets_release() after). 0, or -EINVAL when it holds no BuildKit line. */
int buildkit_replay(struct buildkit *b, const char *buf, size_t len, struct targets *ts);
/* A whole replayed record (`buildx history logs ID`: plain progress of one
 * target) counted by the same definition as a live stream: its steps and
 * cached steps. 0, -EINVAL when it holds no BuildKit line, or -ENOMEM. */
int buildkit_count_log(const char *buf, size_t len, uint32_t *ret_steps, uint32_t *ret_cached);
