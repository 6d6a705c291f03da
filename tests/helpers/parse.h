/* SPDX-License-Identifier: MIT */
/* The short forms the tests and fuzzers feed the parsers with, a line or a
 * whole buffer at a time. buildtel itself parses a line's BuildKit prefix
 * once for every parser (the recorder's on_line: the _bk forms) and
 * streams a .ninja_log (ninjalog_read_range()); these are the same calls
 * for one line or one buffer, kept out of src/ because nothing there
 * needs them. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/summary.h"
#include "model/targets.h"
#include "parse/bkrun.h"
#include "parse/buildkit.h"
#include "parse/buildmetrics.h"
#include "parse/logctx.h"
#include "parse/logline-int.h"
#include "parse/ninjalog.h"
#include "runfiles/samplecsv.h"
#include "util/macro.h"

static inline bool buildmetrics_feed_line(struct buildmetrics *bm, const char *line, size_t len,
                                          double now)
{
        struct bkline bl;

        bkline_parse(line, len, &bl);
        return buildmetrics_feed_line_bk(bm, line, len, now, &bl);
}

static inline size_t bkrun_feed_line(const char *line, size_t len, bkrun_fn cb, void *userdata)
{
        struct bkline bl;

        bkline_parse(line, len, &bl);
        return bkrun_feed_line_bk(&bl, line, len, cb, userdata);
}

/* Every line at time 0, as if they all came at once. */
static inline void logctx_feed_line(struct logctx *c, const char *line, size_t len)
{
        logctx_feed_line_bk(c, line, len, 0.0, NULL);
}

static inline void logline_classify(const char *line, size_t len, struct logline *ret)
{
        logline_classify_bk(line, len, NULL, ret);
}

/* What a terminal shows of a line, trimmed and cut at SAMPLE_CONTEXT_MAX
 * bytes on a UTF-8 boundary (the context's cleaning): at most cap-1 bytes
 * and a NUL into out; returns the length. */
static inline size_t logline_clean(const char *in, size_t len, char *out, size_t cap)
{
        char tmp[SAMPLE_CONTEXT_MAX + 4]; /* past the cap: utf8_cut sees what it cuts */
        size_t m;

        if (cap == 0)
                return 0;
        m = logline_visible(in, len, tmp, sizeof(tmp));
        m = logline_utf8_cut(tmp, m, MIN(cap - 1, (size_t)SAMPLE_CONTEXT_MAX));
        while (m > 0 && is_space(tmp[m - 1]))
                m--;
        memcpy(out, tmp, m);
        out[m] = '\0';
        return m;
}

/* buf fed to one stream at once: as ninjalog_stream_finish(). */
static inline int ninjalog_whole(const char *buf, size_t len, struct ninjalog_run *runs, size_t cap,
                                 ninjalog_edge_fn fn, void *userdata)
{
        struct ninjalog_stream *s = ninjalog_stream_new(0, runs, cap, fn, userdata);
        int e;

        if (!s)
                return runs && cap == 0 ? -EINVAL : -ENOMEM;
        e = ninjalog_stream_feed(s, buf, len);
        if (e >= 0)
                e = ninjalog_stream_finish(s);
        ninjalog_stream_free(s);
        return e;
}

/* The runs of buf, oldest first, the last cap of them into runs. Returns
 * how many, or -EINVAL (not a .ninja_log, or cap 0). */
static inline int ninjalog_runs(const char *buf, size_t len, struct ninjalog_run *runs, size_t cap)
{
        return ninjalog_whole(buf, len, runs, cap, NULL, NULL);
}

/* The edges of buf to fn. Returns how many, or -EINVAL before any is
 * given when buf is not a .ninja_log. */
static inline int ninjalog_each(const char *buf, size_t len, ninjalog_edge_fn fn, void *userdata)
{
        int e = ninjalog_whole(buf, len, NULL, 0, NULL, NULL);

        return e < 0 ? e : ninjalog_whole(buf, len, NULL, 0, fn, userdata);
}

static inline void ninjalog_offer_edge(void *userdata, int64_t start_ms, int64_t end_ms,
                                       const char *out, size_t out_len)
{
        targets_offer_edge(userdata, start_ms, end_ms, out, out_len);
}

/* The edges of buf, a run's, counted into ts (the slowest kept). 0, or
 * -EINVAL (not a .ninja_log). */
static inline int ninjalog_parse(const char *buf, size_t len, struct targets *ts)
{
        int e = ninjalog_each(buf, len, ninjalog_offer_edge, ts);

        if (e < 0)
                return e;
        ts->ninja_log_set = true;
        ts->ninja_edges = (uint64_t)e;
        return 0;
}

static inline void samplecsv_to_summary(void *userdata, const struct sample *smp)
{
        struct summary *s = userdata;

        if (smp)
                summary_add(s, smp);
        else
                s->skipped_rows++;
}

/* samplecsv_read() into summary_add(); torn or junk rows are counted in
 * s->skipped_rows. */
static inline int64_t samplecsv_summary(const char *buf, size_t len, struct summary *s)
{
        return samplecsv_read(buf, len, samplecsv_to_summary, s);
}
