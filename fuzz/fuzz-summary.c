/* SPDX-License-Identifier: MIT */
/* The summary of any replayed CSV, as `summarize` computes it: the input
 * is the rows, after a header the fuzzer need not find (the first byte
 * picks every column of today's CSV, or only the seed's 14 a CSV of an
 * older buildtel has). The rows go through the CSV reader into the
 * summary, which is rendered as JSON and as text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/sample.h"
#include "model/summary.h"
#include "render/summary.h"
#include "runfiles/samplecsv.h"
#include "util/dbuf.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char seed_header[] = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,"
                                  "mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,"
                                  "context\r\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct summary s;
        static struct dbuf csv = DBUF_INIT, out = DBUF_INIT;
        struct summary_config cfg = {.near_oom_mb = 4096, .low_disk_gb = 20};

        if (size < 1)
                return 0;
        dbuf_reset(&csv);
        if ((data[0] & 1 ? dbuf_puts(&csv, seed_header) : samplecsv_header(&csv)) < 0 ||
            dbuf_append(&csv, data + 1, size - 1) < 0)
                abort();
        /* the thresholds too come from the command line of summarize */
        if (data[0] & 2)
                cfg = (struct summary_config){.near_oom_mb = 1e9, .low_disk_gb = 0};
        summary_init(&s, &cfg);
        if (samplecsv_summary(csv.p, csv.len, &s) < 0)
                abort(); /* the header is good: only memory could fail */
        dbuf_reset(&out);
        if (render_summary_json(&s, NULL, &out) < 0 || render_summary_text(&s, NULL, &out) < 0 ||
            render_summary_short(&s, NULL, &out) < 0)
                abort();
        return 0;
}
