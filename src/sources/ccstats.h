/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Compiler-cache statistics as the tools print them, read line by line
 * from a build log: sccache --show-stats (every text layout, and
 * --stats-format=json), ccache -s (3.x, 4.4-4.6 "Summary:", 4.7+
 * "Cacheable calls:") and ccache --print-stats (TSV, and the 4.10+ JSON
 * lines). Lines that are not stats are ignored, so the stats may be
 * interleaved with other output. A block is complete once both its hits
 * and its misses are known; the last complete block wins. */

enum ccstats_kind {
        CCSTATS_NONE,
        CCSTATS_SCCACHE,
        CCSTATS_CCACHE,
};

struct ccstats {
        enum ccstats_kind kind;
        uint64_t hits, misses;
};

/* A plain struct: no allocation, init with ccstats_parser_init. */
struct ccstats_parser {
        struct ccstats cur;     /* the block being read */
        unsigned seen;          /* keys of cur seen so far */
        int heading;            /* ccache 4.x section */
        bool complete;          /* last holds a complete block */
        struct ccstats last;
        uint64_t blocks;        /* complete blocks seen */
};

void ccstats_parser_init(struct ccstats_parser *p);

/* Feed one line (no '\n'; a trailing '\r' is ignored). Returns 1 when this
 * line completed (or updated) a block, else 0. Never fails. */
int ccstats_feed_line(struct ccstats_parser *p, const char *line, size_t len);

/* The last complete block of buf. Returns 0, or -ENOENT when buf holds
 * none (*ret untouched). */
int ccstats_parse(const char *buf, size_t len, struct ccstats *ret);
