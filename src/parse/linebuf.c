/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "parse/linebuf.h"
#include "util/macro.h"

struct linebuf {
        char *buf; /* the partial line carried over from an earlier chunk */
        size_t len;
        size_t cap;
        bool truncated; /* the partial line passed cap; drop until '\n' */
        bool skip;      /* linebuf_skip_line: drop the next line */
};

int linebuf_new(size_t cap, struct linebuf **ret)
{
        _cleanup_free_ struct linebuf *lb = NULL;

        if (cap == 0)
                cap = LINEBUF_MAX;
        lb = calloc(1, sizeof(*lb));
        if (!lb)
                return -ENOMEM;
        /* Allocated once up front so feeding can never fail halfway. */
        lb->buf = malloc(cap);
        if (!lb->buf)
                return -ENOMEM;
        lb->cap = cap;
        *ret = TAKE_PTR(lb);
        return 0;
}

void linebuf_free(struct linebuf *lb)
{
        if (!lb)
                return;
        free(lb->buf);
        free(lb);
}

void linebuf_skip_line(struct linebuf *lb)
{
        lb->skip = true;
}

static void emit(struct linebuf *lb, linebuf_cb cb, void *userdata, const char *p, size_t n,
                 bool truncated)
{
        if (lb->skip) {
                lb->skip = false;
                return;
        }
        cb(userdata, p, n, truncated);
}

static void accumulate(struct linebuf *lb, const char *p, size_t n)
{
        size_t room = lb->cap - lb->len;

        if (n > room) {
                n = room;
                lb->truncated = true;
        }
        memcpy(lb->buf + lb->len, p, n);
        lb->len += n;
}

/* The line [p, p+n) that a '\n' ended: in place when whole in this chunk,
 * else after the partial line carried over. */
static inline void line_end(struct linebuf *lb, const char *p, size_t n, linebuf_cb cb,
                            void *userdata)
{
        if (lb->len == 0 && !lb->truncated) {
                emit(lb, cb, userdata, p, MIN(n, lb->cap), n > lb->cap);
                return;
        }
        accumulate(lb, p, n);
        emit(lb, cb, userdata, lb->buf, lb->len, lb->truncated);
        lb->len = 0;
        lb->truncated = false;
}

#if defined(__SSE2__)
/* The '\n's among the 64 bytes at p, one bit each: a chunk's lines are
 * found 64 bytes at a time, not by a memchr per line (most lines are
 * shorter than memchr's start-up pays for). */
static inline uint64_t newlines64(const char *p)
{
        const __m128i nl = _mm_set1_epi8('\n');
        uint64_t m = 0;

        for (int i = 0; i < 4; i++) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
                m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * i);
        }
        return m;
}
#endif

void linebuf_feed(struct linebuf *lb, const char *buf, size_t len, linebuf_cb cb, void *userdata)
{
        const char *p = buf, *end = buf + len, *start = buf; /* start: of the next line */

#if defined(__SSE2__)
        for (; end - p >= 64; p += 64)
                for (uint64_t m = newlines64(p); m; m &= m - 1) {
                        const char *nl = p + __builtin_ctzll(m);

                        line_end(lb, start, (size_t)(nl - start), cb, userdata);
                        start = nl + 1;
                }
#endif
        for (;;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));

                if (!nl)
                        break;
                line_end(lb, start, (size_t)(nl - start), cb, userdata);
                start = p = nl + 1;
        }
        if (start < end)
                accumulate(lb, start, (size_t)(end - start));
}

void linebuf_flush(struct linebuf *lb, linebuf_cb cb, void *userdata)
{
        if (lb->len > 0 || lb->truncated) /* as if a '\n' came */
                line_end(lb, lb->buf + lb->len, 0, cb, userdata);
}
