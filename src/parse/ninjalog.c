/* SPDX-License-Identifier: MIT */
#include "parse/ninjalog.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/ranges.h"
#include "util/macro.h"
#include "util/util.h"

struct rec {
        int64_t start, end;
        const char *out, *hash;
        size_t out_len, hash_len;
        const char *mtime;
        size_t mtime_len;
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
        r->mtime = mt; /* its unit differs by platform and version: see ninjalog_runs() */
        r->mtime_len = n;
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

/* An mtime field as epoch seconds: nanoseconds (ninja >= 1.9 on Linux) or
 * seconds; NAN when it is neither (0 for a missing output, junk). */
static double mtime_epoch(const char *s, size_t n)
{
        uint64_t v = 0;

        if (n == 0 || n > 20)
                return NAN;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return NAN;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (v >= 1000000000ull * 100000000ull && v < 1000000000ull * 10000000000ull)
                return (double)v / 1e9; /* ns: 1973 .. 2286 */
        if (v >= 100000000ull && v < 10000000000ull)
                return (double)v;
        return NAN;
}

static void run_close(struct ninjalog_run *runs, size_t cap, size_t *n, struct ninjalog_run *cur,
                      size_t at)
{
        cur->end = at;
        if (cur->max_end_ms == INT64_MIN)
                return; /* no record */
        if (*n == cap) {
                memmove(runs, runs + 1, (cap - 1) * sizeof(*runs));
                (*n)--;
        }
        runs[(*n)++] = *cur;
}

int ninjalog_runs(const char *buf, size_t len, struct ninjalog_run *runs, size_t cap)
{
        const char *c = buf, *end = buf + len;
        struct ninjalog_run cur = {0, 0, INT64_MIN, NAN};
        size_t n = 0;
        struct rec r;

        if (cap == 0)
                return -EINVAL;
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;
                int k = parse_line(c, le, &r);

                if (k == -2)
                        return -EINVAL;
                if (k == 0 || (k == 1 && cur.max_end_ms != INT64_MIN && r.end < cur.max_end_ms)) {
                        run_close(runs, cap, &n, &cur, (size_t)(c - buf));
                        cur = (struct ninjalog_run){(size_t)(c - buf), 0, INT64_MIN, NAN};
                }
                if (k == 1) {
                        double m = mtime_epoch(r.mtime, r.mtime_len) - (double)r.end / 1000.0;

                        cur.max_end_ms = MAX(cur.max_end_ms, r.end);
                        if (isfinite(m) && (isnan(cur.start_epoch) || m > cur.start_epoch))
                                cur.start_epoch = m;
                }
                c = nl ? nl + 1 : end;
        }
        run_close(runs, cap, &n, &cur, len);
        return n == 0 ? -EINVAL : (int)n;
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
