/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
/* A per-line parser's rare path, out of line: the common one then saves
 * no registers it does not use. */
#define _noinline_ __attribute__((noinline))

/* The one note callback of every layer: one line for the user (no
 * newline), printf-style; userdata is the caller's. Only cmd/ prints it. */
typedef void (*note_fn)(void *userdata, const char *fmt, ...) _printf_(2, 3);

/* A layer's own note(...) passed on to fn (NULL: none), cut at 1 KiB. */
static inline void note_to(note_fn fn, void *userdata, const char *fmt, ...) _printf_(3, 4);
static inline void note_to(note_fn fn, void *userdata, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        if (!fn)
                return;
        va_start(ap, fmt);
        (void)vsnprintf(buf, sizeof(buf), fmt, ap); /* a cut note is still a note */
        va_end(ap);
        fn(userdata, "%s", buf);
}

static inline void freep(void *p)
{
        free(*(void **)p);
}
/* Closes *fd and sets it to -1: a number kept after its close names
 * whatever is opened next (the build's output pipe, once: issue 33). */
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                \
        __extension__({                                                                            \
                __typeof__(p) _p = (p);                                                            \
                (p) = NULL;                                                                        \
                _p;                                                                                \
        })
#define TAKE_FD(fd)                                                                                \
        __extension__({                                                                            \
                int _fd = (fd);                                                                    \
                (fd) = -1;                                                                         \
                _fd;                                                                               \
        })

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
