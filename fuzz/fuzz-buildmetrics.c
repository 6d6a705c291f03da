/* SPDX-License-Identifier: MIT */
/* Fuzzes the whole build-metrics pipeline as the recorder drives it: every
 * line through BuildKit, ninja/make progress and the stats readers, then
 * the attribution of the compiler-cache stats at finish, and both
 * renderings of the model. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/targets.h"
#include "parse/buildmetrics.h"
#include "util/dbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct buildmetrics_config cfg = {.no_history = true};
        struct buildmetrics *bm = NULL;
        const struct targets *ts;
        static struct run_facts facts;
        struct run_info run = {.start_epoch = 1e9, .end_epoch = 1e9 + 60, .finished = true};
        struct dbuf out = DBUF_INIT;
        const char *c, *end;
        double now = 0;

        if (size < 1)
                return 0;
        if (data[0] & 1)
                cfg.targets = "app,tools";
        run.exit_code = data[0] & 4 ? 1 : 0;
        if (data[0] & 2) {
                cfg.markers[0] = (struct sccache_marker){"app=/stats.txt", "/stats.txt"};
                cfg.nmarkers = 1;
        }
        if (buildmetrics_new(&cfg, &bm) < 0)
                return 0;
        c = (const char *)data + 1;
        end = (const char *)data + size;
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                buildmetrics_feed_line(bm, c, (size_t)(le - c), now);
                now += 1;
                c = nl ? nl + 1 : end;
        }
        buildmetrics_finish(bm);
        ts = buildmetrics_model(bm);
        if (ts->n > TARGETS_MAX)
                abort();
        for (size_t i = 0; i < ts->n; i++)
                if (ts->t[i].sccache_guess && !ts->t[i].sccache.set)
                        abort();
        targets_facts(ts, &run, &facts);
        if (targets_render_text(ts, &facts, &out) < 0 || targets_render_json(ts, &facts, &out) < 0)
                abort();
        dbuf_release(&out);
        buildmetrics_free(bm);
        return 0;
}
