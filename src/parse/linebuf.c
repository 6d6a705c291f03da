/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

void linebuf_feed(struct linebuf *lb, const char *buf, size_t len, linebuf_cb cb, void *userdata)
{
        while (len > 0) {
                const char *nl = memchr(buf, '\n', len);
                size_t n;

                if (!nl) {
                        accumulate(lb, buf, len);
                        return;
                }
                n = (size_t)(nl - buf);
                if (lb->len == 0 && !lb->truncated) {
                        /* The whole line is in this chunk: hand it out in place. */
                        if (n > lb->cap)
                                emit(lb, cb, userdata, buf, lb->cap, true);
                        else
                                emit(lb, cb, userdata, buf, n, false);
                } else {
                        accumulate(lb, buf, n);
                        emit(lb, cb, userdata, lb->buf, lb->len, lb->truncated);
                        lb->len = 0;
                        lb->truncated = false;
                }
                buf = nl + 1;
                len -= n + 1;
        }
}

void linebuf_flush(struct linebuf *lb, linebuf_cb cb, void *userdata)
{
        if (lb->len == 0 && !lb->truncated)
                return;
        emit(lb, cb, userdata, lb->buf, lb->len, lb->truncated);
        lb->len = 0;
        lb->truncated = false;
}
