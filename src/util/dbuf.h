/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdarg.h>
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
