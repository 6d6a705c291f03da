/* SPDX-License-Identifier: MIT */
#include "parse/ccstats.h"

#include "model/units.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "model/ranges.h"
#include "util/macro.h"
#include "util/util.h"

enum {
        K_SC_HITS = 1u << 0,
        K_SC_MISSES = 1u << 1,
        K_C3_DIRECT = 1u << 2,
        K_C3_PRE = 1u << 3,
        K_C3_MISS = 1u << 4,
        K_C4_HITS = 1u << 5,
        K_C4_MISSES = 1u << 6,
        K_PS_DIRECT = 1u << 7,
        K_PS_PRE = 1u << 8,
        K_PS_MISS = 1u << 9,
        K_EXTRA = 1u << 10, /* a size or file count: never starts a block itself */
};

/* ccache 4.x sections: the counters are read under "Summary:" (or
 * "Cacheable calls:"), the size under the local storage heading. */
enum { HEAD_NONE, HEAD_SUMMARY, HEAD_LOCAL, HEAD_REMOTE };

enum extra { X_SIZE, X_MAX, X_FILES };

static void new_block(struct ccstats_parser *p)
{
        memset(&p->cur, 0, sizeof(p->cur));
        p->cur.size_bytes = p->cur.max_size_bytes = p->cur.files = -1;
        p->seen = 0;
}

void ccstats_parser_init(struct ccstats_parser *p)
{
        memset(p, 0, sizeof(*p));
        new_block(p);
        p->last = p->cur;
}

static bool is_complete(const struct ccstats_parser *p)
{
        unsigned s = p->seen;

        return ((s & K_SC_HITS) && (s & K_SC_MISSES)) || (s & K_C3_MISS) ||
               ((s & K_C4_HITS) && (s & K_C4_MISSES)) ||
               ((s & K_PS_DIRECT) && (s & K_PS_PRE) && (s & K_PS_MISS));
}

/* Counters from the build's output are capped here: 2^53 is exact in a
 * double and in JSON, and hits + misses cannot wrap (a ratio of 4.6e18, a
 * "hits" of -1). */
#define CCSTATS_COUNT_MAX (UINT64_C(1) << 53)
static uint64_t add_capped(uint64_t a, uint64_t b)
{
        return b >= CCSTATS_COUNT_MAX - MIN(a, CCSTATS_COUNT_MAX) ? CCSTATS_COUNT_MAX : a + b;
}

/* Account one counter. A key seen twice, or a key of another tool, starts a
 * new block: the stats were printed again. */
static int put(struct ccstats_parser *p, enum ccstats_kind kind, unsigned key, uint64_t v)
{
        bool was;

        if ((p->seen & key) || (p->seen && p->cur.kind != kind))
                new_block(p);
        was = is_complete(p);
        p->cur.kind = kind;
        p->seen |= key;
        if (key & (K_SC_HITS | K_C3_DIRECT | K_C3_PRE | K_C4_HITS | K_PS_DIRECT | K_PS_PRE))
                p->cur.hits = add_capped(p->cur.hits, v);
        else
                p->cur.misses = add_capped(p->cur.misses, v);
        if (!is_complete(p))
                return 0;
        p->last = p->cur;
        p->complete = true;
        return was ? 2 : 1;
}

/* A size or a file count. The text layouts print it after the counters,
 * so it may complete the picture of the block completed last (2). It
 * overwrites rather than starting a block: every layout starts a printing
 * again with a counter or a heading. */
static int put_extra(struct ccstats_parser *p, enum ccstats_kind kind, enum extra x, int64_t v)
{
        if (p->seen && p->cur.kind != kind)
                new_block(p);
        p->cur.kind = kind;
        p->seen |= K_EXTRA;
        if (x == X_SIZE)
                p->cur.size_bytes = v;
        else if (x == X_MAX)
                p->cur.max_size_bytes = v;
        else
                p->cur.files = v;
        if (!is_complete(p))
                return 0;
        p->last = p->cur;
        return 2;
}

/* "LABEL<spaces>N[ rest]" at the start of [cur,end): the number, when the
 * label is followed by at least one blank and then digits. */
static bool label_num(const char *cur, const char *end, const char *label, uint64_t *ret)
{
        const char *c = cur;

        if (!skip_prefix(&c, end, label))
                return false;
        if (c >= end || !is_blank(*c))
                return false;
        skip_spaces(&c, end);
        if (parse_u64(&c, end, ret) < 0 || !range_ok_u64(RANGE_EVENTS, *ret))
                return false;
        return c == end || *c == ' ';
}

static const struct {
        const char *unit;
        double mult;
} units[] = {
    {"bytes", 1.0},
    {"B", 1.0},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
};

/* The multiplier of the unit [c,end) exactly, or 0 when unknown. */
static double unit_mult(const char *c, const char *end)
{
        size_t n = (size_t)(end - c);

        for (size_t i = 0; i < ARRAY_SIZE(units); i++)
                if (strlen(units[i].unit) == n && memcmp(units[i].unit, c, n) == 0)
                        return units[i].mult;
        return 0;
}

/* -1 (not printed) for what is out of range. */
static int64_t to_bytes(double v, double mult)
{
        double b = v * mult;

        if (!range_ok(RANGE_BYTES, b))
                return -1;
        return (int64_t)(b + 0.5);
}

/* A non-negative decimal number at *c. */
static bool decimal(const char **c, const char *end, double *ret)
{
        return *c < end && **c != '-' && parse_double(c, end, ret) >= 0;
}

/* "LABEL<blanks>N[.N]<blanks>UNIT" as the whole line: ccache 3.x prints
 * decimal units ("2.5 GB"), sccache binary ones ("494 MiB", "0 bytes"). */
static bool label_size(const char *cur, const char *end, const char *label, int64_t *ret)
{
        const char *c = cur;
        double v, m;

        if (!skip_prefix(&c, end, label) || c >= end || !is_blank(*c))
                return false;
        skip_spaces(&c, end);
        if (!decimal(&c, end, &v))
                return false;
        skip_spaces(&c, end);
        m = unit_mult(c, end);
        if (m == 0)
                return false;
        *ret = to_bytes(v, m);
        return true;
}

/* ccache 4.x: "Cache size (GB): 0.12 / 5.00 ( 2.40%)", the limit optional
 * (none when unlimited). */
static int cache_size_line(struct ccstats_parser *p, const char *c, const char *end)
{
        const char *u, *close;
        double m, v;
        int r;

        if (!skip_prefix(&c, end, "Cache size ("))
                return 0;
        u = c;
        close = memchr(c, ')', (size_t)(end - c));
        if (!close || (m = unit_mult(u, close)) == 0)
                return 0;
        c = close + 1;
        if (!skip_prefix(&c, end, ":"))
                return 0;
        skip_spaces(&c, end);
        if (!decimal(&c, end, &v))
                return 0;
        r = put_extra(p, CCSTATS_CCACHE, X_SIZE, to_bytes(v, m));
        skip_spaces(&c, end);
        if (!skip_prefix(&c, end, "/"))
                return r;
        skip_spaces(&c, end);
        if (decimal(&c, end, &v))
                r = put_extra(p, CCSTATS_CCACHE, X_MAX, to_bytes(v, m));
        return r;
}

static int64_t int_or_unknown(json_t *v)
{
        return json_is_integer(v) && range_ok_i64(RANGE_BYTES, json_integer_value(v))
                   ? json_integer_value(v)
                   : -1;
}

static uint64_t sum_counts(json_t *o)
{
        json_t *counts = json_object_get(o, "counts"), *v;
        const char *k;
        uint64_t s = 0;

        /* one count per language: out of range counts as none */
        json_object_foreach(counts, k, v) if (json_is_integer(v) &&
                                              range_ok_i64(RANGE_EVENTS, json_integer_value(v))) s =
            add_capped(s, (uint64_t)json_integer_value(v));
        return s;
}

static int feed_sccache_json(struct ccstats_parser *p, const char *line, size_t len)
{
        /* sccache prints its JSON without a newline: the next output of the
         * build may follow on the same line. */
        json_t *root = json_loadb(line, len, JSON_DISABLE_EOF_CHECK, NULL), *stats;
        int r = 0;

        stats = json_object_get(root, "stats");
        if (json_is_object(json_object_get(stats, "cache_hits")) &&
            json_is_object(json_object_get(stats, "cache_misses"))) {
                const char *ver = json_string_value(json_object_get(root, "version"));

                new_block(p);
                /* Local disk only; null until something was cached. */
                p->cur.size_bytes = int_or_unknown(json_object_get(root, "cache_size"));
                p->cur.max_size_bytes = int_or_unknown(json_object_get(root, "max_cache_size"));
                if (ver)
                        copy_utf8(p->cur.version, sizeof(p->cur.version), ver, strlen(ver));
                (void)put(p, CCSTATS_SCCACHE, K_SC_HITS,
                          sum_counts(json_object_get(stats, "cache_hits")));
                r = put(p, CCSTATS_SCCACHE, K_SC_MISSES,
                        sum_counts(json_object_get(stats, "cache_misses")));
        }
        json_decref(root);
        return r;
}

/* ccache --print-stats: "id<TAB>N", or "  \"id\": N," in its JSON form. */
static int feed_print_stats(struct ccstats_parser *p, const char *c, const char *end)
{
        static const struct {
                const char *id;
                unsigned key; /* a counter, or 0 for an extra */
                enum extra x;
        } ids[] = {
            {"direct_cache_hit", K_PS_DIRECT, X_SIZE}, {"preprocessed_cache_hit", K_PS_PRE, X_SIZE},
            {"cache_miss", K_PS_MISS, X_SIZE},         {"cache_size_kibibyte", 0, X_SIZE},
            {"max_cache_size_kibibyte", 0, X_MAX},     {"files_in_cache", 0, X_FILES},
        };
        bool quoted = c < end && *c == '"';
        uint64_t v;

        if (quoted)
                c++;
        for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
                const char *q = c;

                if (!skip_prefix(&q, end, ids[i].id))
                        continue;
                if (quoted ? !skip_prefix(&q, end, "\":") : q >= end || *q != '\t')
                        return 0;
                skip_spaces(&q, end);
                if (parse_u64(&q, end, &v) < 0 || !range_ok_u64(RANGE_EVENTS, v))
                        return 0;
                if (quoted && q < end && *q == ',')
                        q++;
                if (q != end)
                        return 0;
                if (ids[i].key)
                        return put(p, CCSTATS_CCACHE, ids[i].key, v);
                if (ids[i].x != X_FILES) /* KiB */
                        return put_extra(p, CCSTATS_CCACHE, ids[i].x,
                                         range_ok_u64(RANGE_KIB, v) ? (int64_t)v * 1024 : -1);
                return put_extra(p, CCSTATS_CCACHE, ids[i].x, (int64_t)v);
        }
        return 0;
}

/* The bytes a stats line can start with. */
static const bool first_byte[256] = {
    ['{'] = true, ['C'] = true,  ['c'] = true, ['d'] = true, ['p'] = true,
    ['S'] = true, ['P'] = true,  ['L'] = true, ['R'] = true, ['"'] = true,
    [' '] = true, ['\t'] = true, ['M'] = true, ['m'] = true, ['f'] = true,
};

int ccstats_feed_line(struct ccstats_parser *p, const char *line, size_t len)
{
        const char *c = line, *end = line + len;
        uint64_t v;
        int64_t x;

        /* Most lines are not stats: one look at the first byte (before the
         * trim: a blank line starts with a byte of the table or is empty). */
        if (len == 0 || !first_byte[(unsigned char)*c])
                return 0;
        while (end > c && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
        if (c == end)
                return 0;
        /* "cc -c ..." and the like: only "cache..." is stats among 'c' lines. */
        if (*c == 'c' && !((size_t)(end - c) >= 5 && memcmp(c, "cache", 5) == 0))
                return 0;
        /* "make[1]: ...": only "max cache size" and "max_cache_size..." */
        if (*c == 'm' &&
            !((size_t)(end - c) >= 4 && (memcmp(c, "max ", 4) == 0 || memcmp(c, "max_", 4) == 0)))
                return 0;
        if (*c == 'f' && !((size_t)(end - c) >= 5 && memcmp(c, "files", 5) == 0))
                return 0;

        /* sccache, column 0 */
        if (*c == '{')
                return skip_prefix(&c, end, "{\"stats\":")
                           ? feed_sccache_json(p, line, (size_t)(end - line))
                           : 0;
        /* sccache's first line, ccache 3.x's (column 0, lower case) */
        if (label_num(c, end, "Compile requests", &v) || skip_prefix(&c, end, "cache directory")) {
                new_block(p);
                return 0;
        }
        if (label_num(c, end, "Cache hits", &v))
                return put(p, CCSTATS_SCCACHE, K_SC_HITS, v);
        if (label_num(c, end, "Cache misses", &v))
                return put(p, CCSTATS_SCCACHE, K_SC_MISSES, v);
        if (label_size(c, end, "Cache size", &x))
                return put_extra(p, CCSTATS_SCCACHE, X_SIZE, x);
        if (label_size(c, end, "Max cache size", &x))
                return put_extra(p, CCSTATS_SCCACHE, X_MAX, x);

        /* ccache 3.x (and 4.0-4.3), column 0, lower case */
        if (label_num(c, end, "cache hit (direct)", &v))
                return put(p, CCSTATS_CCACHE, K_C3_DIRECT, v);
        if (label_num(c, end, "cache hit (preprocessed)", &v))
                return put(p, CCSTATS_CCACHE, K_C3_PRE, v);
        if (label_num(c, end, "cache miss", &v))
                return put(p, CCSTATS_CCACHE, K_C3_MISS, v);
        if (label_size(c, end, "cache size", &x))
                return put_extra(p, CCSTATS_CCACHE, X_SIZE, x);
        if (label_size(c, end, "max cache size", &x))
                return put_extra(p, CCSTATS_CCACHE, X_MAX, x);
        if (label_num(c, end, "files in cache", &v))
                return put_extra(p, CCSTATS_CCACHE, X_FILES, (int64_t)v);

        /* ccache 4.4+: headings at column 0, rows indented */
        if (len >= 1 && !is_blank(*c)) {
                if (skip_prefix(&c, end, "Summary:") || skip_prefix(&c, end, "Cacheable calls:")) {
                        new_block(p);
                        p->heading = HEAD_SUMMARY;
                } else if (skip_prefix(&c, end, "Primary storage:") ||
                           skip_prefix(&c, end, "Local storage:")) {
                        p->heading = HEAD_LOCAL;
                } else if (skip_prefix(&c, end, "Secondary storage:") ||
                           skip_prefix(&c, end, "Remote storage:")) {
                        p->heading = HEAD_REMOTE;
                } else {
                        return feed_print_stats(p, c, end);
                }
                return 0;
        }
        skip_spaces(&c, end);
        if (*c == '"')
                return feed_print_stats(p, c, end);
        if (p->heading == HEAD_LOCAL) {
                if (label_num(c, end, "Files:", &v))
                        return put_extra(p, CCSTATS_CCACHE, X_FILES, (int64_t)v);
                return cache_size_line(p, c, end);
        }
        if (p->heading != HEAD_SUMMARY)
                return 0;
        if (label_num(c, end, "Hits:", &v))
                return put(p, CCSTATS_CCACHE, K_C4_HITS, v);
        if (label_num(c, end, "Misses:", &v))
                return put(p, CCSTATS_CCACHE, K_C4_MISSES, v);
        return 0;
}

int ccstats_parse(const char *buf, size_t len, struct ccstats *ret)
{
        struct ccstats_parser p;
        const char *c = buf, *end = buf + len;

        ccstats_parser_init(&p);
        while (c < end) {
                const char *le = line_end(c, end);

                (void)ccstats_feed_line(&p, c, (size_t)(le - c));
                c = next_line(le, end);
        }
        if (!p.complete)
                return -ENOENT;
        *ret = p.last;
        return 0;
}

/* One call's input and verdict, handed on at its end. */
struct statslog_call {
        char input[4096];
        char cache;
        bool open;
};

static size_t call_end(struct statslog_call *c, ccstatslog_fn fn, void *userdata)
{
        if (!c->open)
                return 0;
        fn(userdata, c->input, c->cache ? c->cache : UNITS_CACHE_NONE);
        c->open = false;
        return 1;
}

size_t ccstatslog_parse(const char *buf, size_t len, ccstatslog_fn fn, void *userdata)
{
        struct statslog_call c = {.open = false};
        const char *p = buf, *end = buf + len;
        size_t calls = 0;

        while (p < end) {
                const char *eol = line_end(p, end);
                size_t n = (size_t)(eol - p);

                if (n >= 2 && p[0] == '#' && p[1] == ' ') {
                        calls += call_end(&c, fn, userdata);
                        copy_utf8(c.input, sizeof(c.input), p + 2, n - 2);
                        c.cache = 0;
                        c.open = true;
                } else if (c.open && ((n == 16 && memcmp(p, "direct_cache_hit", 16) == 0) ||
                                      (n == 22 && memcmp(p, "preprocessed_cache_hit", 22) == 0))) {
                        c.cache = UNITS_CACHE_HIT;
                } else if (c.open && n == 10 && memcmp(p, "cache_miss", 10) == 0 &&
                           c.cache != UNITS_CACHE_HIT) {
                        c.cache = UNITS_CACHE_MISS;
                }
                p = next_line(eol, end);
        }
        return calls + call_end(&c, fn, userdata);
}
