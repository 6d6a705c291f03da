/* SPDX-License-Identifier: MIT */
#include "util/dbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dbuf_grow(struct dbuf *b, size_t need)
{
        size_t cap;
        char *p;

        if (need < b->len || need == SIZE_MAX)
                return -ENOMEM;
        need++; /* room for the NUL */
        if (need <= b->cap)
                return 0;
        cap = b->cap ? b->cap : 64;
        while (cap < need) {
                if (cap > SIZE_MAX / 2)
                        return -ENOMEM;
                cap *= 2;
        }
        p = realloc(b->p, cap);
        if (!p)
                return -ENOMEM;
        b->p = p;
        b->cap = cap;
        return 0;
}

int dbuf_append(struct dbuf *b, const void *data, size_t len)
{
        int r = dbuf_grow(b, b->len + len);

        if (r < 0)
                return r;
        if (len)
                memcpy(b->p + b->len, data, len);
        b->len += len;
        b->p[b->len] = '\0';
        return 0;
}

int dbuf_reserve(struct dbuf *b, size_t len)
{
        return dbuf_grow(b, b->len + len);
}

int dbuf_puts(struct dbuf *b, const char *s)
{
        return dbuf_append(b, s, strlen(s));
}

int dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
        va_list ap;
        int n, r;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        r = dbuf_grow(b, b->len + (size_t)n);
        if (r < 0)
                return r;
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
        return 0;
}

void dbuf_reset(struct dbuf *b)
{
        b->len = 0;
        if (b->p)
                b->p[0] = '\0';
}

void dbuf_release(struct dbuf *b)
{
        free(b->p);
        b->p = NULL;
        b->len = b->cap = 0;
}
