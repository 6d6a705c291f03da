/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "store/store-sql.h"

/* A targets row with any values, for the readers' tests: what an older or
 * hand-edited file may hold, past what store_target_insert() writes from a
 * fact. Unknown numbers -1, unknown strings NULL. */
struct target_row {
        const char *name;
        double duration_s;
        int64_t steps, cached;
        int success;
        int64_t cc_hits, cc_misses;
        const char *node, *ref, *builder;
        int64_t sccache_hits, sccache_misses, ccache_hits, ccache_misses;
        double start_s, end_s;
};

/* The six cache counters unknown, as a row that never printed them holds
 * them: designated initializers, inside a struct target_row's braces. */
#define TARGET_ROW_NO_CACHE                                                                        \
        .cc_hits = -1, .cc_misses = -1, .sccache_hits = -1, .sccache_misses = -1,                  \
        .ccache_hits = -1, .ccache_misses = -1

static inline int target_row_insert(struct store *st, int64_t run, const struct target_row *t)
{
        return store_exec(st,
                          "INSERT OR REPLACE INTO targets (run, name, duration_s, steps, cached,"
                          " success, cc_hits, cc_misses, node, ref, builder, sccache_hits,"
                          " sccache_misses, ccache_hits, ccache_misses, start_s, end_s)"
                          " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          "itrnnnnntttnnnnrr", run, t->name ? t->name : "", t->duration_s, t->steps,
                          t->cached, (int64_t)t->success, t->cc_hits, t->cc_misses, t->node, t->ref,
                          t->builder, t->sccache_hits, t->sccache_misses, t->ccache_hits,
                          t->ccache_misses, t->start_s, t->end_s);
}
