/* SPDX-License-Identifier: MIT */
#include "parse/ninjalog.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "model/ranges.h"
#include "util/util.h"

struct rec {
        int64_t start, end;
        const char *out, *hash;
        size_t out_len, hash_len;
};

static const char *field(const char **cur, const char *end, size_t *ret_len)
{
        const char *s = *cur, *tab = memchr(s, '\t', (size_t)(end - s));
        const char *fe = tab ? tab : end;

        *ret_len = (size_t)(fe - s);
        *cur = tab ? tab + 1 : end;
        return s;
}

/* 1 record, 0 header, -1 other. A bad version header is -2. */
static int parse_line(const char *s, const char *end, struct rec *r)
{
        const char *c = s, *mt;
        size_t n;
        uint64_t ver;

        if (end > s && end[-1] == '\r')
                end--;
        if (skip_prefix(&c, end, "# ninja log v")) {
                if (parse_u64(&c, end, &ver) < 0 || c != end)
                        return -1;
                return ver >= 5 && ver <= 7 ? 0 : -2;
        }
        if (parse_i64(&c, end, &r->start) < 0 || c >= end || *c++ != '\t')
                return -1;
        if (parse_i64(&c, end, &r->end) < 0 || c >= end || *c++ != '\t')
                return -1;
        /* out of range is junk: end - start must not overflow */
        if (!range_ok_i64(RANGE_MS, r->start) || !range_ok_i64(RANGE_MS, r->end))
                return -1;
        mt = field(&c, end, &n);
        if (n == 0 || c >= end)
                return -1;
        (void)mt; /* opaque: its unit differs by platform and version */
        r->out = field(&c, end, &r->out_len);
        if (r->out_len == 0 || c >= end)
                return -1;
        r->hash = field(&c, end, &r->hash_len);
        if (r->hash_len == 0 || c != end || memchr(r->hash, '\t', r->hash_len))
                return -1;
        for (size_t i = 0; i < r->hash_len; i++)
                if (!((r->hash[i] >= '0' && r->hash[i] <= '9') ||
                      (r->hash[i] >= 'a' && r->hash[i] <= 'f')))
                        return -1;
        return 1;
}

int ninjalog_each(const char *buf, size_t len, bool last_run_only, ninjalog_edge_fn fn,
                  void *userdata)
{
        const char *c = buf, *end = buf + len, *from = buf;
        struct rec r, prev = {0};
        int64_t prev_end = INT64_MIN;
        bool have_prev = false;
        uint64_t edges = 0, records = 0;

        /* Pass 1: where the last run starts. */
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;
                int k = parse_line(c, le, &r);

                if (k == -2)
                        return -EINVAL;
                if (k == 0 || (k == 1 && r.end < prev_end)) {
                        from = c;
                        prev_end = INT64_MIN;
                }
                if (k == 1) {
                        prev_end = r.end;
                        records++;
                }
                c = nl ? nl + 1 : end;
        }
        if (records == 0)
                return -EINVAL;
        if (!last_run_only)
                from = buf;

        for (c = from; c < end;) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                if (parse_line(c, le, &r) == 1) {
                        bool same = have_prev && r.start == prev.start && r.end == prev.end &&
                                    r.hash_len == prev.hash_len &&
                                    memcmp(r.hash, prev.hash, r.hash_len) == 0;
                        if (!same) {
                                edges++;
                                fn(userdata, r.start, r.end, r.out, r.out_len);
                        }
                        prev = r;
                        have_prev = true;
                }
                c = nl ? nl + 1 : end;
        }
        return edges > INT32_MAX ? INT32_MAX : (int)edges;
}

static void offer_edge(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                       size_t out_len)
{
        targets_offer_edge(userdata, start_ms, end_ms, out, out_len);
}

int ninjalog_parse(const char *buf, size_t len, bool last_run_only, struct targets *ts)
{
        int e = ninjalog_each(buf, len, last_run_only, offer_edge, ts);

        if (e < 0)
                return e;
        ts->ninja_log_set = true;
        ts->ninja_edges = (uint64_t)e;
        return 0;
}
