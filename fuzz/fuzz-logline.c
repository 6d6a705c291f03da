/* SPDX-License-Identifier: MIT */
/* Fuzzes the log classifier: logline_clean, logline_classify, and
 * linebuf + logctx with chunk sizes taken from the input, checking the
 * invariants the summary and CSV sinks rely on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n > max || memchr(s, '\x1b', n) || memchr(s, '\r', n))
                abort();
}

static void feed_cb(void *userdata, const char *line, size_t len, bool truncated)
{
        struct logline l;
        char out[SAMPLE_CONTEXT_MAX + 1];
        size_t n;

        (void)truncated;
        n = logline_clean(line, len, out, sizeof(out));
        if (n != strlen(out) && !memchr(out, '\0', n))
                abort();
        check_text(out, SAMPLE_CONTEXT_MAX);
        logline_classify(out, n, &l);
        if (l.stage && (l.stage < out || l.stage + l.stage_len > out + n))
                abort();
        logctx_feed_line(userdata, line, len);
        check_text(logctx_context(userdata), SAMPLE_CONTEXT_MAX);
        check_text(logctx_stage(userdata), SAMPLE_STAGE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct logctx_config cfg = {.stage_regex = "^== ([a-z]+)", .fixed_stage = "fz"};
        struct linebuf *lb = NULL;
        struct logctx *c = NULL;
        size_t off, cap;

        if (size < 2)
                return 0;
        /* The first byte picks the line cap, so truncation gets covered. */
        cap = data[0] & 0x80 ? (size_t)(data[0] & 0x7f) + 1 : 0;
        if (linebuf_new(cap, &lb) < 0)
                return 0;
        if (logctx_new(data[1] & 1 ? &cfg : NULL, &c) < 0) {
                linebuf_free(lb);
                return 0;
        }
        /* The second byte seeds the chunk sizes. */
        off = 2;
        for (unsigned seed = data[1]; off < size;) {
                size_t n;

                seed = seed * 1103515245u + 12345u;
                n = MIN((size_t)((seed >> 16) % 97) + 1, size - off);
                linebuf_feed(lb, (const char *)data + off, n, feed_cb, c);
                off += n;
        }
        linebuf_flush(lb, feed_cb, c);
        logctx_free(c);
        linebuf_free(lb);
        return 0;
}
