/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "parse/buildkit.h"
#include "parse/buildmetrics.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "parse/outparse.h"

struct outparse {
        struct outparse_config cfg;
        struct linebuf *lines[2]; /* stdout's, stderr's */
        double now;
        unsigned long long nlines;
        char driver[OUTPARSE_DRIVER_MAX + 1];
        char builder[OUTPARSE_DRIVER_MAX + 1];
};

int outparse_new(const struct outparse_config *cfg, struct outparse **ret)
{
        struct outparse *op = calloc(1, sizeof(*op));

        if (!op)
                return -ENOMEM;
        op->cfg = *cfg;
        if (linebuf_new(0, &op->lines[0]) < 0 || linebuf_new(0, &op->lines[1]) < 0) {
                outparse_free(op);
                return -ENOMEM;
        }
        *ret = op;
        return 0;
}

void outparse_free(struct outparse *op)
{
        if (!op)
                return;
        linebuf_free(op->lines[0]);
        linebuf_free(op->lines[1]);
        free(op);
}

static void on_line(void *userdata, const char *line, size_t len, bool truncated)
{
        struct outparse *op = userdata;
        struct bkline bl;

        op->nlines++;
        /* "#N 12.3 ": once for the three parsers that read it. */
        bkline_parse(line, len, &bl);
        if (bkrun_wants(&bl, line, len)) {
                if (op->cfg.on_run)
                        (void)bkrun_feed_line_bk(&bl, line, len, op->cfg.on_run, op->cfg.userdata);
        } else if (bl.ok && bl.n == 0 && !op->driver[0])
                (void)bkrun_driver(line, len, op->driver, sizeof(op->driver), op->builder,
                                   sizeof(op->builder));
        /* A rawjson line names nothing: its vertex events come to logctx
         * through the build metrics' ctx_line. */
        if (!buildmetrics_feed_line_bk(op->cfg.metrics, line, len, op->now, &bl))
                logctx_feed_line_bk(op->cfg.logctx, line, len, op->now, &bl);
}

void outparse_chunk(struct outparse *op, int stream, const char *buf, size_t len, double now)
{
        op->now = now;
        logctx_chunk(op->cfg.logctx, buf, len);
        buildmetrics_chunk(op->cfg.metrics, buf, len);
        linebuf_feed(op->lines[stream == 2], buf, len, on_line, op);
        buildmetrics_chunk(op->cfg.metrics, NULL, 0);
        logctx_chunk(op->cfg.logctx, NULL, 0);
}

void outparse_eof(struct outparse *op, int stream, double now)
{
        op->now = now;
        linebuf_flush(op->lines[stream == 2], on_line, op);
}

void outparse_line(struct outparse *op, const char *line, size_t len, double now)
{
        op->now = now;
        on_line(op, line, len, false);
}

double outparse_now(const struct outparse *op)
{
        return op->now;
}

const char *outparse_driver(const struct outparse *op)
{
        return op->driver;
}

const char *outparse_builder(const struct outparse *op)
{
        return op->builder;
}

unsigned long long outparse_lines(const struct outparse *op)
{
        return op->nlines;
}
