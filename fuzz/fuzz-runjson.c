/* SPDX-License-Identifier: MIT */
/* A run.json as `summarize` reads it from beside a CSV: any bytes. What
 * parses is written back and must parse again to the same facts, and is
 * rendered in both summaries (an empty run: every figure unknown). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/summary.h"
#include "render/summary.h"
#include "util/dbuf.h"
#include "runfiles/runjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_double(double a, double b)
{
        return (isnan(a) && isnan(b)) || a == b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct summary s;
        static struct dbuf out = DBUF_INIT;
        struct run_info ri, back;

        if (runjson_parse((const char *)data, size, &ri) != 0)
                return 0;
        dbuf_reset(&out);
        if (runjson_format(&ri, &out) < 0)
                abort();
        /* what was written reads back: the same times, codes and counts */
        if (runjson_parse(out.p, out.len, &back) != 0)
                abort();
        if (!same_double(ri.start_epoch, back.start_epoch) ||
            !same_double(ri.end_epoch, back.end_epoch) ||
            !same_double(ri.interval, back.interval) || ri.exit_code != back.exit_code ||
            ri.term_signal != back.term_signal || ri.ncpu != back.ncpu || ri.pid != back.pid ||
            ri.finished != back.finished)
                abort();
        run_info_release(&back);

        summary_init(&s, NULL);
        dbuf_reset(&out);
        if (render_summary_json(&s, &ri, &out) < 0 || render_summary_text(&s, &ri, &out) < 0 ||
            render_summary_short(&s, &ri, &out) < 0)
                abort();
        run_info_release(&ri);
        return 0;
}
