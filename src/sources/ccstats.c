/* SPDX-License-Identifier: MIT */
#include "sources/ccstats.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

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
};

enum { HEAD_NONE, HEAD_SUMMARY, HEAD_STORAGE };

void ccstats_parser_init(struct ccstats_parser *p)
{
        memset(p, 0, sizeof(*p));
}

static void new_block(struct ccstats_parser *p)
{
        memset(&p->cur, 0, sizeof(p->cur));
        p->seen = 0;
}

static bool is_complete(const struct ccstats_parser *p)
{
        unsigned s = p->seen;

        return ((s & K_SC_HITS) && (s & K_SC_MISSES)) || (s & K_C3_MISS) ||
               ((s & K_C4_HITS) && (s & K_C4_MISSES)) ||
               ((s & K_PS_DIRECT) && (s & K_PS_PRE) && (s & K_PS_MISS));
}

/* Account one counter. A key seen twice, or a key of another tool, starts a
 * new block: the stats were printed again. */
static int put(struct ccstats_parser *p, enum ccstats_kind kind, unsigned key, uint64_t v)
{
        bool was = is_complete(p);

        if ((p->seen & key) || (p->seen && p->cur.kind != kind))
                new_block(p);
        p->cur.kind = kind;
        p->seen |= key;
        if (key & (K_SC_HITS | K_C3_DIRECT | K_C3_PRE | K_C4_HITS | K_PS_DIRECT | K_PS_PRE))
                p->cur.hits += v;
        else
                p->cur.misses += v;
        if (!is_complete(p))
                return 0;
        p->last = p->cur;
        p->complete = true;
        if (!was)
                p->blocks++;
        return 1;
}

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* "LABEL<spaces>N[ rest]" at the start of [cur,end): the number, when the
 * label is followed by at least one blank and then digits. */
static bool label_num(const char *cur, const char *end, const char *label, uint64_t *ret)
{
        const char *c = cur;

        if (!skip_prefix(&c, end, label))
                return false;
        if (c >= end || !is_space(*c))
                return false;
        while (c < end && is_space(*c))
                c++;
        if (parse_u64(&c, end, ret) < 0)
                return false;
        return c == end || *c == ' ';
}

static uint64_t sum_counts(json_t *o)
{
        json_t *counts = json_object_get(o, "counts"), *v;
        const char *k;
        uint64_t s = 0;

        json_object_foreach(counts, k, v)
                if (json_is_integer(v) && json_integer_value(v) > 0)
                        s += (uint64_t)json_integer_value(v);
        return s;
}

static int feed_sccache_json(struct ccstats_parser *p, const char *line, size_t len)
{
        json_t *root = json_loadb(line, len, 0, NULL), *stats;
        int r = 0;

        stats = json_object_get(root, "stats");
        if (json_is_object(json_object_get(stats, "cache_hits")) &&
            json_is_object(json_object_get(stats, "cache_misses"))) {
                new_block(p);
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
                unsigned key;
        } ids[] = {
                { "direct_cache_hit", K_PS_DIRECT },
                { "preprocessed_cache_hit", K_PS_PRE },
                { "cache_miss", K_PS_MISS },
        };
        bool quoted = c < end && *c == '"';
        uint64_t v;

        if (quoted)
                c++;
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                const char *q = c;

                if (!skip_prefix(&q, end, ids[i].id))
                        continue;
                if (quoted && !skip_prefix(&q, end, "\":"))
                        return 0;
                if (!quoted && (q >= end || *q != '\t'))
                        return 0;
                while (q < end && is_space(*q))
                        q++;
                if (parse_u64(&q, end, &v) < 0)
                        return 0;
                if (quoted && q < end && *q == ',')
                        q++;
                if (q != end)
                        return 0;
                return put(p, CCSTATS_CCACHE, ids[i].key, v);
        }
        return 0;
}

/* The bytes a stats line can start with. */
static const bool first_byte[256] = {
        ['{'] = true, ['C'] = true, ['c'] = true, ['d'] = true, ['p'] = true, ['S'] = true,
        ['P'] = true, ['L'] = true, ['R'] = true, ['"'] = true, [' '] = true, ['\t'] = true,
};

int ccstats_feed_line(struct ccstats_parser *p, const char *line, size_t len)
{
        const char *c = line, *end = line + len;
        uint64_t v;

        while (end > c && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
        if (c == end)
                return 0;
        /* Most lines are not stats: one look at the first byte. */
        if (!first_byte[(unsigned char)*c])
                return 0;
        /* "cc -c ..." and the like: only "cache..." is stats among 'c' lines. */
        if (*c == 'c' && !((size_t)(end - c) >= 5 && memcmp(c, "cache", 5) == 0))
                return 0;

        /* sccache, column 0 */
        if (*c == '{')
                return skip_prefix(&c, end, "{\"stats\":") ? feed_sccache_json(p, line, (size_t)(end - line)) : 0;
        if (label_num(c, end, "Compile requests", &v)) {
                new_block(p);
                return 0;
        }
        if (label_num(c, end, "Cache hits", &v))
                return put(p, CCSTATS_SCCACHE, K_SC_HITS, v);
        if (label_num(c, end, "Cache misses", &v))
                return put(p, CCSTATS_SCCACHE, K_SC_MISSES, v);

        /* ccache 3.x (and 4.0-4.3), column 0, lower case */
        if (skip_prefix(&c, end, "cache directory")) {
                new_block(p);
                return 0;
        }
        if (label_num(c, end, "cache hit (direct)", &v))
                return put(p, CCSTATS_CCACHE, K_C3_DIRECT, v);
        if (label_num(c, end, "cache hit (preprocessed)", &v))
                return put(p, CCSTATS_CCACHE, K_C3_PRE, v);
        if (label_num(c, end, "cache miss", &v))
                return put(p, CCSTATS_CCACHE, K_C3_MISS, v);

        /* ccache 4.4+: headings at column 0, rows indented */
        if (len >= 1 && !is_space(*c)) {
                if (skip_prefix(&c, end, "Summary:") || skip_prefix(&c, end, "Cacheable calls:")) {
                        new_block(p);
                        p->heading = HEAD_SUMMARY;
                        return 0;
                }
                if (skip_prefix(&c, end, "Primary storage:") ||
                    skip_prefix(&c, end, "Secondary storage:") ||
                    skip_prefix(&c, end, "Local storage:") ||
                    skip_prefix(&c, end, "Remote storage:")) {
                        p->heading = HEAD_STORAGE;
                        return 0;
                }
                return feed_print_stats(p, c, end);
        }
        while (c < end && is_space(*c))
                c++;
        if (*c == '"')
                return feed_print_stats(p, c, end);
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
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                (void)ccstats_feed_line(&p, c, (size_t)(le - c));
                c = nl ? nl + 1 : end;
        }
        if (!p.complete)
                return -ENOENT;
        *ret = p.last;
        return 0;
}
