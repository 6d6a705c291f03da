/* SPDX-License-Identifier: MIT */
#pragma once
/* Private to buildkit.c (the stream, its vertices, the plain format),
 * buildkit-json.c (rawjson) and buildkit-steps.c (the vertices counted into
 * the model's targets and steps at the end). */
#include <stdbool.h>
#include <stdint.h>

#include "model/targets.h"
#include "parse/buildkit.h"
#include "util/dbuf.h"

#define CARRY_MAX 65536

/* Bit sets over TARGETS_MAX candidates or targets (more than 64: a plain
 * uint64_t shift would be undefined). */
#define CAND_WORDS ((TARGETS_MAX + 63) / 64)
static inline void bit_set(uint64_t *w, size_t i)
{
        w[i / 64] |= 1ULL << (i % 64);
}
/* The lowest set bit at or after `from`, or -1. */
static inline int bit_next(const uint64_t *w, int from)
{
        for (int i = from < 0 ? 0 : from; i < CAND_WORDS * 64; i = (i / 64 + 1) * 64) {
                uint64_t m = w[i / 64] & (~0ULL << (i % 64));
                if (m)
                        return (i / 64) * 64 + __builtin_ctzll(m);
        }
        return -1;
}

enum vstate { V_NEW, V_RUNNING, V_DONE, V_CACHED, V_ERROR, V_CANCELED };

struct vtx {
        uint64_t key;
        char *name;                 /* the last header, cut to TARGET_STEP_NAME_MAX; NULL unnamed */
        double first, last;         /* buildtel's clock: its first and last line */
        double end;                 /* the line that ended it (DONE, CACHED, ...); NAN none */
        double bk_started, bk_done; /* rawjson: BuildKit's timestamps, Unix seconds; NAN none */
        double bk_secs;             /* plain: BuildKit's "DONE 1.4s"; NAN none */
        uint64_t cands[CAND_WORDS]; /* bit i: announced under prefix cands[i] */
        int16_t target;             /* after finish: the one target, or -1 */
        int8_t marker;
        uint8_t state;
        bool named, step, exporting;
        bool from;   /* a "FROM image" step: the stage's base image */
        bool worked; /* a status or log line: it did something (pulled, ran) */
};

/* A first bracket token: a target, or (single-target builds) a stage. */
struct cand {
        char name[TARGET_NAME_MAX + 1];
};

struct buildkit {
        struct buildkit_config cfg;
        struct vtx *v;
        uint32_t nv;
        size_t capv;
        uint32_t *slots;  /* open addressing: vidx + 1, 0 empty */
        uint32_t last_vi; /* the vertex found last */
        uint32_t nslots;
        struct cand cands[TARGETS_MAX];
        size_t ncands;
        bool multi_evidence, seen, prev_blank;
        double first, last; /* any vertex line */
        char builder[TARGET_FIELD_MAX + 1];
        /* rawjson */
        struct dbuf json;
        int depth;
        bool in_str, esc, json_active, json_skip;
        bool json_compact; /* began "{\"": one object per line (rawjson) */
        unsigned json_lines;
        struct dbuf carry, data;
        uint32_t carry_v;
        bool carry_set;
        uint32_t marker_v[BUILDKIT_MAX_MARKERS]; /* vidx + 1 */
};

void bk_emit_ctx(struct buildkit *b, uint32_t vidx, const char *pfx, const char *text, size_t len);
void bk_emit_log(struct buildkit *b, uint32_t vidx, const char *text, size_t len);
void bk_end_vertex(struct vtx *v, enum vstate state, double now);
void bk_name_vertex(struct buildkit *b, struct vtx *v, const char *name, size_t len);
void bk_touch(struct buildkit *b, struct vtx *v, double now);
/* The vertex of key (its index), added when add and absent; -1 past the
 * cap or out of memory. */
int64_t bk_vertex(struct buildkit *b, uint64_t key, bool add);
uint32_t bk_slot_of(uint64_t key, uint32_t nslots);
void bk_flush_carry(struct buildkit *b);
/* A rawjson line (or a piece of one object); true when it was one. */
bool bk_feed_json(struct buildkit *b, const char *line, const char *end, double now);
