/* SPDX-License-Identifier: MIT */
/* Fuzzes the whole build-metrics pipeline as the recorder drives it: every
 * line through BuildKit, ninja/make progress and the stats readers, then
 * the attribution of the compiler-cache stats at finish, and both
 * renderings of the model; and a second one fed in chunks
 * (buildmetrics_chunk, the progress lines batched) says after each chunk,
 * and renders at the end, what the one fed line by line does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/targets.h"
#include "parse/buildmetrics.h"
#include "util/dbuf.h"
#include "runfiles/targetsjson.h"
#include "render/targets.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_progress(struct buildmetrics *a, struct buildmetrics *b)
{
        const struct targets *x = buildmetrics_model(a), *y = buildmetrics_model(b);

        if (x->ninja_done != y->ninja_done || x->ninja_total != y->ninja_total ||
            x->make_pct != y->make_pct)
                abort();
}

static void render(struct buildmetrics *bm, int exit_code, struct dbuf *out)
{
        static struct run_facts facts;
        struct run_info run = {.start_epoch = 1e9, .end_epoch = 1e9 + 60, .finished = true};
        const struct targets *ts = buildmetrics_model(bm);

        run.exit_code = exit_code;
        if (ts->n > TARGETS_MAX)
                abort();
        for (size_t i = 0; i < ts->n; i++)
                if (ts->t[i].sccache_guess && !ts->t[i].sccache.set)
                        abort();
        targets_facts(ts, &run, &facts);
        if (targets_render_text(ts, &facts, out) < 0 || targetsjson_format(ts, &facts, out) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct buildmetrics_config cfg = {.no_history = true};
        struct buildmetrics *bm = NULL, *chunked = NULL;
        struct dbuf out = DBUF_INIT, out2 = DBUF_INIT;
        const char *c, *end, *chunk;
        double now = 0;
        unsigned seed;

        if (size < 1)
                return 0;
        if (data[0] & 1)
                cfg.targets = "app,tools";
        if (data[0] & 2) {
                cfg.markers[0] = (struct sccache_marker){"app=/stats.txt", "/stats.txt"};
                cfg.nmarkers = 1;
        }
        if (buildmetrics_new(&cfg, &bm) < 0)
                return 0;
        if (buildmetrics_new(&cfg, &chunked) < 0) {
                buildmetrics_free(bm);
                return 0;
        }
        c = chunk = (const char *)data + 1;
        end = (const char *)data + size;
        seed = data[0];
        buildmetrics_chunk(chunked, chunk, (size_t)(end - chunk));
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                buildmetrics_feed_line(bm, c, (size_t)(le - c), now);
                buildmetrics_feed_line(chunked, c, (size_t)(le - c), now);
                now += 1;
                c = nl ? nl + 1 : end;
                seed = seed * 1103515245u + 12345u;
                if ((seed >> 16) % 7 == 0) { /* a chunk ends here */
                        buildmetrics_chunk(chunked, NULL, 0);
                        same_progress(bm, chunked);
                        buildmetrics_chunk(chunked, c, (size_t)(end - c));
                }
        }
        buildmetrics_chunk(chunked, NULL, 0);
        same_progress(bm, chunked);
        buildmetrics_finish(bm);
        buildmetrics_finish(chunked);
        render(bm, data[0] & 4 ? 1 : 0, &out);
        render(chunked, data[0] & 4 ? 1 : 0, &out2);
        if (out.len != out2.len || memcmp(out.p, out2.p, out.len) != 0)
                abort();
        dbuf_release(&out);
        dbuf_release(&out2);
        buildmetrics_free(chunked);
        buildmetrics_free(bm);
        return 0;
}
