/* SPDX-License-Identifier: MIT */
/* Fuzzes the .ninja_log reader, whole file and last run only: the slowest
 * edges stay sorted, capped and NUL-terminated; streamed in pieces (a line
 * at a time, a byte at a time, cut inside lines) it gives what it gives
 * whole: the runs, where the last starts, the same edges. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/ninjalog.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct targets *ts)
{
        if (ts->nslow > TARGETS_SLOW_EDGES || ts->nslow > ts->ninja_edges)
                abort();
        for (size_t i = 0; i < ts->nslow; i++) {
                const struct ninja_edge *e = &ts->slow[i];

                if (strnlen(e->output, sizeof(e->output)) == sizeof(e->output))
                        abort();
                /* Compare as the parser does; durations may overflow int64 only
                 * by wrapping, which the parser must not produce. */
                if (i > 0 &&
                    (ts->slow[i - 1].end_ms - ts->slow[i - 1].start_ms) < (e->end_ms - e->start_ms))
                        abort();
        }
}

/* The edges of a walk, as a count and an FNV-1a hash of their fields. */
struct digest {
        uint64_t n, h;
};

static void mix(struct digest *d, const void *p, size_t len)
{
        for (size_t i = 0; i < len; i++)
                d->h = (d->h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
}

static void digest_edge(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                        size_t out_len)
{
        struct digest *d = userdata;

        d->n++;
        mix(d, &start_ms, sizeof(start_ms));
        mix(d, &end_ms, sizeof(end_ms));
        mix(d, &out_len, sizeof(out_len));
        mix(d, out, out_len);
}

/* buf[from, len) into s, step bytes at a time (0: a line at a time). */
static int feed_by(struct ninjalog_stream *s, const char *buf, size_t from, size_t len, size_t step)
{
        for (size_t off = from; off < len;) {
                const char *nl = memchr(buf + off, '\n', len - off);
                size_t l = step ? step : nl ? (size_t)(nl - buf) + 1 - off : len - off;

                if (l > len - off)
                        l = len - off;
                if (ninjalog_stream_feed(s, buf + off, l) < 0)
                        abort();
                off += l;
        }
        return ninjalog_stream_finish(s);
}

static bool same_run(const struct ninjalog_run *a, const struct ninjalog_run *b)
{
        return a->begin == b->begin && a->end == b->end && a->max_end_ms == b->max_end_ms &&
               ((isnan(a->start_epoch) && isnan(b->start_epoch)) ||
                a->start_epoch == b->start_epoch);
}

static void check_stream(const char *buf, size_t len, size_t step)
{
        struct ninjalog_run whole[4], streamed[4];
        int nw = ninjalog_runs(buf, len, whole, 4), e;
        struct ninjalog_stream *s = ninjalog_stream_new(0, streamed, 4, NULL, NULL);

        if (!s)
                abort();
        e = feed_by(s, buf, 0, len, step);
        if (e != nw)
                abort();
        ninjalog_stream_free(s);
        for (int i = 0; i < nw; i++)
                if (!same_run(&whole[i], &streamed[i]))
                        abort();
        if (nw < 0 && ninjalog_each(buf, len, digest_edge, NULL) != nw)
                abort();
        /* the walk of the whole log, and of its last run (a log rewritten) */
        for (int last = 0; last < 2 && nw > 0; last++) {
                struct digest dw = {0, 0}, ds = {0, 0};
                size_t from = last ? (size_t)whole[nw - 1].begin : 0;
                int ew = ninjalog_each(buf + from, len - from, digest_edge, &dw), es;

                s = ninjalog_stream_new(from, NULL, 0, digest_edge, &ds);
                if (!s)
                        abort();
                es = feed_by(s, buf, from, len, step);
                ninjalog_stream_free(s);
                if (ew < 0 || es != ew || ds.n != dw.n || ds.h != dw.h)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct targets ts;
        struct ninjalog_run runs[4];
        int n = ninjalog_runs((const char *)data, size, runs, 4);

        for (int i = 0; i < n; i++)
                if (runs[i].begin >= runs[i].end || runs[i].end > size)
                        __builtin_trap();

        check_stream((const char *)data, size, 0);
        check_stream((const char *)data, size, 1);
        check_stream((const char *)data, size, 2 + size % 61);

        targets_init(&ts);
        if (ninjalog_parse((const char *)data, size, &ts) == 0)
                check(&ts);
        targets_release(&ts);
        return 0;
}
