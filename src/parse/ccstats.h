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
 * and its misses are known; the last complete block wins.
 *
 * The same parser reads what `buildtel cache` runs (ccache --print-stats,
 * sccache --show-stats --stats-format=json), so a block also carries the
 * cache's size, its limit and its file count where the layout prints them:
 * exact in --print-stats (KiB) and sccache's JSON, rounded in the text
 * layouts ("2.5 GB", "494 MiB", "Cache size (GB): 0.12 / 5.00"). */

enum ccstats_kind {
        CCSTATS_NONE,
        CCSTATS_SCCACHE,
        CCSTATS_CCACHE,
};

#define CCSTATS_VERSION_MAX 31

struct ccstats {
        enum ccstats_kind kind;
        uint64_t hits, misses;
        int64_t size_bytes, max_size_bytes, files; /* -1: not printed */
        char version[CCSTATS_VERSION_MAX + 1];     /* sccache's JSON only; "" unknown */
};

/* A plain struct: no allocation, init with ccstats_parser_init. */
struct ccstats_parser {
        struct ccstats cur; /* the block being read */
        unsigned seen;      /* keys of cur seen so far */
        int heading;        /* ccache 4.x section */
        bool complete;      /* last holds a complete block */
        struct ccstats last;
};

void ccstats_parser_init(struct ccstats_parser *p);

/* Feed one line (no '\n'; a trailing '\r' is ignored). Returns 1 when this
 * line completed a new block, 2 when it added to the block completed last
 * (a size or file count printed after the counters: p->last changed, but it
 * is the same block), else 0. Never fails. */
int ccstats_feed_line(struct ccstats_parser *p, const char *line, size_t len);

/* The last complete block of buf. Returns 0, or -ENOENT when buf holds
 * none (*ret untouched). */
int ccstats_parse(const char *buf, size_t len, struct ccstats *ret);

/* ccache's stats log (CCACHE_STATSLOG, ccache 4): a "# INPUT" line per
 * call, then the counters it bumped, one a line. Each call goes to fn with
 * its input (NUL-terminated, cut at 4095 bytes) and what it was: a hit
 * (direct_cache_hit, preprocessed_cache_hit), a miss (cache_miss), or
 * neither (enum units_cache). Returns how many calls. */
typedef void (*ccstatslog_fn)(void *userdata, const char *input, char cache);
size_t ccstatslog_parse(const char *buf, size_t len, ccstatslog_fn fn, void *userdata);

/* sccache's server log (SCCACHE_LOG=sccache::compiler::compiler=debug,
 * sccache::server=debug; SCCACHE_ERROR_LOG the file of a server it starts):
 * "[OUT]: get_cached_or_compile: [ARGS]", then "[OUT]: Cache hit in ..."
 * or a miss ("Cache miss", "none", "recache", "timed out", "read error")
 * and "[OUT]: Compiled in ..." (", but not cacheable"); and
 * "parse_arguments: CannotCache(REASON): [ARGS]". Each compile's verdict
 * goes to fn with its source (the first argument that is no option nor an
 * option's value, relative to the compile's cwd with "./" and "../"
 * dropped, cut at 511 bytes). Returns how many verdicts. */
size_t scclog_parse(const char *buf, size_t len, ccstatslog_fn fn, void *userdata);
