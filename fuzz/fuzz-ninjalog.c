/* SPDX-License-Identifier: MIT */
/* Fuzzes the .ninja_log reader, whole file and last run only: the slowest
 * edges stay sorted, capped and NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/ninjalog.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct targets ts;
        struct ninjalog_run runs[4];
        int n = ninjalog_runs((const char *)data, size, runs, 4);

        for (int i = 0; i < n; i++)
                if (runs[i].begin >= runs[i].end || runs[i].end > size)
                        __builtin_trap();

        for (int last = 0; last < 2; last++) {
                targets_init(&ts);
                if (ninjalog_parse((const char *)data, size, last, &ts) == 0)
                        check(&ts);
                targets_release(&ts);
        }
        return 0;
}
