/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "util/macro.h"

/* A growable byte buffer (curl's dynbuf). Always NUL-terminated after any
 * successful append, so p can be used as a C string when the content has no
 * NUL. A buffer that failed an allocation stays valid and keeps its content. */
struct dbuf {
        char *p;
        size_t len;
        size_t cap;
};

#define DBUF_INIT                                                                                  \
        {                                                                                          \
                NULL, 0, 0                                                                         \
        }

int dbuf_append(struct dbuf *b, const void *data, size_t len); /* 0 or -ENOMEM */
/* Room for len more bytes (and the NUL) without another allocation. */
int dbuf_reserve(struct dbuf *b, size_t len); /* 0 or -ENOMEM */
int dbuf_puts(struct dbuf *b, const char *s);
int dbuf_printf(struct dbuf *b, const char *fmt, ...) _printf_(2, 3);
void dbuf_reset(struct dbuf *b);   /* len = 0, keeps the memory */
void dbuf_release(struct dbuf *b); /* frees; the struct can be reused */
/* A struct dbuf released when it goes out of scope. */
#define _cleanup_dbuf_ __attribute__((cleanup(dbuf_release)))

/* A sticky-error writer over a dbuf: after the first failed append every
 * call is a no-op and err keeps that first error, so a rendering is a plain
 * list of appends with one check at the end instead of a guard on each. */
struct dwriter {
        struct dbuf *b;
        int err; /* 0, or the first -errno */
};

#define DWRITER_INIT(buf)                                                                          \
        {                                                                                          \
                .b = (buf), .err = 0                                                               \
        }

void dw_append(struct dwriter *w, const void *data, size_t len);
void dw_puts(struct dwriter *w, const char *s);
void dw_printf(struct dwriter *w, const char *fmt, ...) _printf_(2, 3);
/* Keep r, the result of any other append to w->b, if it is the first
 * error. Callers skip that append when !dw_ok(w). */
void dw_check(struct dwriter *w, int r);
static inline int dw_ok(const struct dwriter *w)
{
        return w->err >= 0;
}
