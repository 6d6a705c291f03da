/* SPDX-License-Identifier: MIT */
/* Parse a build log as `buildtel run` does while passing it through: read
 * in 64 KiB chunks (as the parse thread reads the build log back,
 * pipeline/parseq.h), each through the recorder's own output parser
 * (parse/outparse.h: the RUN-step scanner, the build-metrics parsers, the
 * stage and context). Prints the time, the throughput and the peak RSS
 * (VmHWM).
 *   bench-parse FILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/buildmetrics.h"
#include "parse/logctx.h"
#include "parse/outparse.h"
#include "util/util.h"

struct ctx {
        struct buildmetrics *bm;
        struct logctx *lc;
        struct outparse *op;
        unsigned long long runs;
};

static void on_run_vertex(void *userdata, const char *cmd, size_t len)
{
        struct ctx *c = userdata;

        (void)cmd;
        (void)len;
        c->runs++;
}

/* As the recorder's: rawjson's vertex lines to logctx. */
static void on_ctx_line(void *userdata, const char *line, size_t len)
{
        struct ctx *c = userdata;

        logctx_feed_line_bk(c->lc, line, len, outparse_now(c->op), NULL);
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
        struct buildmetrics_config cfg = {
            .no_history = true, .ctx_line = on_ctx_line, .ctx_userdata = &c};
        struct logctx_config lcfg = {.hold_s = 1.0};
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
        if (buildmetrics_new(&cfg, &c.bm) < 0 || logctx_new(&lcfg, &c.lc) < 0 ||
            outparse_new(
                &(struct outparse_config){
                    .metrics = c.bm, .logctx = c.lc, .on_run = on_run_vertex, .userdata = &c},
                &c.op) < 0) {
                fprintf(stderr, "bench-parse: out of memory\n");
                return 1;
        }
        t0 = now_monotonic();
        while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
                bytes += (unsigned long long)n;
                /* one clock read per chunk, as the recorder does */
                outparse_chunk(c.op, 1, chunk, (size_t)n, now_monotonic());
        }
        if (n < 0) {
                fprintf(stderr, "bench-parse: read: %s\n", strerror(errno));
                return 1;
        }
        outparse_eof(c.op, 1, now_monotonic());
        buildmetrics_finish(c.bm);
        t1 = now_monotonic();
        printf("bench-parse: %llu bytes, %llu lines in %.3f s: %.0f MiB/s; %u steps, %zu targets, "
               "%llu RUN steps, stage '%s'; peak RSS %ld KiB\n",
               bytes, outparse_lines(c.op), t1 - t0, (double)bytes / (1 << 20) / (t1 - t0),
               buildmetrics_model(c.bm)->steps, buildmetrics_model(c.bm)->n, c.runs,
               logctx_stage(c.lc) ? logctx_stage(c.lc) : "", vm_hwm_kib());
        outparse_free(c.op);
        logctx_free(c.lc);
        buildmetrics_free(c.bm);
        close(fd);
        return 0;
}
