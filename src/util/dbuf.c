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

static int vappend(struct dbuf *b, const char *fmt, va_list ap)
{
        va_list ap2;
        int n, r;

        va_copy(ap2, ap);
        n = vsnprintf(NULL, 0, fmt, ap2);
        va_end(ap2);
        if (n < 0)
                return -EINVAL;
        r = dbuf_grow(b, b->len + (size_t)n);
        if (r < 0)
                return r;
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
        return 0;
}

int dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vappend(b, fmt, ap);
        va_end(ap);
        return r;
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

void dw_check(struct dwriter *w, int r)
{
        if (r < 0 && w->err >= 0)
                w->err = r;
}

void dw_append(struct dwriter *w, const void *data, size_t len)
{
        if (w->err >= 0)
                dw_check(w, dbuf_append(w->b, data, len));
}

void dw_puts(struct dwriter *w, const char *s)
{
        if (w->err >= 0)
                dw_check(w, dbuf_puts(w->b, s));
}

void dw_printf(struct dwriter *w, const char *fmt, ...)
{
        va_list ap;

        if (w->err < 0)
                return;
        va_start(ap, fmt);
        dw_check(w, vappend(w->b, fmt, ap));
        va_end(ap);
}
