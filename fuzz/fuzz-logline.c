/* SPDX-License-Identifier: MIT */
/* Fuzzes the log classifier: logline_clean, logline_classify, and
 * linebuf + logctx with chunk sizes taken from the input, checking the
 * invariants the summary and CSV sinks rely on; and that a logctx fed as the
 * recorder feeds it (logctx_chunk, the BuildKit prefix parsed once, the
 * lines of a chunk batched) says after every line, or every chunk, what one
 * fed the plain lines one at a time says, with the clock moving on by
 * steps around the hold between chunks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/buildkit.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/macro.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n > max || memchr(s, '\x1b', n) || memchr(s, '\r', n))
                abort();
}

struct pair {
        struct logctx *c, *fast;
        bool per_line; /* else compared once per chunk: the context copied late */
        double now;
        bool per_line_clock; /* the clock also moves on between lines of a chunk */
        unsigned nlines;
};

static void same(struct pair *pr)
{
        if (strcmp(logctx_context(pr->c), logctx_context(pr->fast)) != 0 ||
            strcmp(logctx_stage(pr->c), logctx_stage(pr->fast)) != 0)
                abort();
}

static void feed_cb(void *userdata, const char *line, size_t len, bool truncated)
{
        struct pair *pr = userdata;
        struct bkline bl;
        struct logline l;
        char out[SAMPLE_CONTEXT_MAX + 1];
        size_t n;

        (void)truncated;
        if (pr->per_line_clock)
                pr->now += (double)(pr->nlines++ % 3) * 0.5;
        n = logline_clean(line, len, out, sizeof(out));
        if (n != strlen(out) && !memchr(out, '\0', n))
                abort();
        check_text(out, SAMPLE_CONTEXT_MAX);
        logline_classify(out, n, &l);
        if (l.stage && (l.stage < out || l.stage + l.stage_len > out + n))
                abort();
        logctx_feed_line_bk(pr->c, line, len, pr->now, NULL);
        check_text(logctx_context(pr->c), SAMPLE_CONTEXT_MAX);
        check_text(logctx_stage(pr->c), SAMPLE_STAGE_MAX);
        bkline_parse(line, len, &bl);
        logctx_feed_line_bk(pr->fast, line, len, pr->now, &bl);
        if (pr->per_line)
                same(pr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct logctx_config cfg = {.stage_regex = "^== ([a-z]+)", .fixed_stage = "fz", .hold_s = 1.0};
        struct logctx_config plain = {.hold_s = 1.0};
        struct linebuf *lb = NULL;
        struct pair pr = {.per_line = false};
        size_t off, cap;

        if (size < 2)
                return 0;
        /* The first byte picks the line cap, so truncation gets covered. */
        cap = data[0] & 0x80 ? (size_t)(data[0] & 0x7f) + 1 : 0;
        if (linebuf_new(cap, &lb) < 0)
                return 0;
        if (logctx_new(data[1] & 1 ? &cfg : data[1] & 4 ? &plain : NULL, &pr.c) < 0 ||
            logctx_new(data[1] & 1 ? &cfg : data[1] & 4 ? &plain : NULL, &pr.fast) < 0) {
                logctx_free(pr.c);
                linebuf_free(lb);
                return 0;
        }
        pr.per_line = data[1] & 2;
        pr.per_line_clock = data[1] & 8;
        /* The second byte seeds the chunk sizes. */
        off = 2;
        for (unsigned seed = data[1]; off < size;) {
                size_t n;

                seed = seed * 1103515245u + 12345u;
                n = MIN((size_t)((seed >> 16) % 97) + 1, size - off);
                pr.now += (double)((seed >> 8) % 4) * 0.5; /* 0 to 1.5 s: around the hold */
                logctx_chunk(pr.fast, (const char *)data + off, n);
                linebuf_feed(lb, (const char *)data + off, n, feed_cb, &pr);
                logctx_chunk(pr.fast, NULL, 0);
                same(&pr);
                off += n;
        }
        linebuf_flush(lb, feed_cb, &pr);
        same(&pr);
        logctx_free(pr.fast);
        logctx_free(pr.c);
        linebuf_free(lb);
        return 0;
}
