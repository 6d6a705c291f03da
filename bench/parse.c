/* SPDX-License-Identifier: MIT */
/* Parse a build log as `buildtel run` does while passing it through: read
 * in 64 KiB chunks, split into lines, every line through what the
 * recorder's on_line runs (src/pipeline/recorder.c): the RUN-step scanner
 * (bkrun) on lines starting with '#' or '{', the build-metrics parsers
 * (BuildKit, ninja/make progress, compiler-cache stats), and the stage and
 * context (logctx) on every line they do not take; the BuildKit prefix
 * parsed once per line for the three (bkline_parse) and each chunk named to
 * logctx and the build metrics (logctx_chunk, buildmetrics_chunk), as the
 * recorder does. Prints
 * the time, the throughput and the peak RSS (VmHWM).
 *   bench-parse FILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/bkrun.h"
#include "parse/buildmetrics.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/util.h"

struct ctx {
        struct buildmetrics *bm;
        struct logctx *lc;
        double now;
        unsigned long long lines, runs;
        char driver[64];
};

static void on_run_vertex(void *userdata, const char *cmd, size_t len)
{
        struct ctx *c = userdata;

        (void)cmd;
        (void)len;
        c->runs++;
}

/* As the recorder's on_line. */
static void on_line(void *userdata, const char *line, size_t len, bool truncated)
{
        struct ctx *c = userdata;
        struct bkline bl;

        (void)truncated;
        c->lines++;
        bkline_parse(line, len, &bl);
        if (len > 2 && (line[0] == '#' || line[0] == '{')) {
                (void)bkrun_feed_line_bk(&bl, line, len, on_run_vertex, c);
                if (!c->driver[0])
                        (void)bkrun_driver(line, len, c->driver, sizeof(c->driver));
        }
        if (!buildmetrics_feed_line_bk(c->bm, line, len, c->now, &bl))
                logctx_feed_line_bk(c->lc, line, len, c->now, &bl);
}

static void on_ctx_line(void *userdata, const char *line, size_t len)
{
        struct ctx *c = userdata;

        logctx_feed_line_at(c->lc, line, len, c->now);
}

/* Peak resident set size, from /proc/self/status. */
static long vm_hwm_kib(void)
{
        char buf[4096];
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        const char *p;

        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strstr(buf, "VmHWM:");
        return p ? strtol(p + 6, NULL, 10) : -1;
}

int main(int argc, char **argv)
{
        static char chunk[65536];
        struct ctx c = {0};
        struct buildmetrics_config cfg = {.no_history = true, .ctx_line = on_ctx_line, .ctx_userdata = &c};
        struct logctx_config lcfg = {.hold_s = 1.0};
        struct linebuf *lb = NULL;
        unsigned long long bytes = 0;
        double t0, t1;
        ssize_t n;
        int fd;

        if (argc != 2) {
                fprintf(stderr, "usage: bench-parse FILE\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "bench-parse: cannot open '%s': %s\n", argv[1], strerror(errno));
                return 1;
        }
        if (buildmetrics_new(&cfg, &c.bm) < 0 || logctx_new(&lcfg, &c.lc) < 0 || linebuf_new(0, &lb) < 0) {
                fprintf(stderr, "bench-parse: out of memory\n");
                return 1;
        }
        t0 = now_monotonic();
        while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
                bytes += (unsigned long long)n;
                c.now = now_monotonic(); /* per chunk, as the recorder does */
                logctx_chunk(c.lc, chunk, (size_t)n); /* as the recorder's on_chunk */
                buildmetrics_chunk(c.bm, chunk, (size_t)n);
                linebuf_feed(lb, chunk, (size_t)n, on_line, &c);
                buildmetrics_chunk(c.bm, NULL, 0);
                logctx_chunk(c.lc, NULL, 0);
        }
        if (n < 0) {
                fprintf(stderr, "bench-parse: read: %s\n", strerror(errno));
                return 1;
        }
        linebuf_flush(lb, on_line, &c);
        buildmetrics_finish(c.bm);
        t1 = now_monotonic();
        printf("bench-parse: %llu bytes, %llu lines in %.3f s: %.0f MiB/s; %u steps, %zu targets, "
               "%llu RUN steps, stage '%s'; peak RSS %ld KiB\n",
               bytes, c.lines, t1 - t0, (double)bytes / (1 << 20) / (t1 - t0),
               buildmetrics_model(c.bm)->steps, buildmetrics_model(c.bm)->n, c.runs,
               logctx_stage(c.lc) ? logctx_stage(c.lc) : "", vm_hwm_kib());
        linebuf_free(lb);
        logctx_free(c.lc);
        buildmetrics_free(c.bm);
        close(fd);
        return 0;
}
