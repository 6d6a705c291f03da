/* SPDX-License-Identifier: MIT */
/* The recorded CSV and run.json are read back from disk by `summarize`:
 * both are input. One target walks the record parser over the bytes, then
 * summarizes them as a CSV and renders the result, then parses them as a
 * run.json. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/summary.h"
#include "render/summary.h"
#include "runfiles/samplecsv.h"
#include "util/csv.h"
#include "runfiles/runjson.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *buf = (const char *)data;
        struct csv_record rec = CSV_RECORD_INIT;
        static struct summary s;
        struct run_info ri;
        struct dbuf out = DBUF_INIT;
        size_t pos = 0, used;

        while (pos < size) {
                int r = csv_parse_record(buf + pos, size - pos, &rec, &used);

                if (r == 0)
                        break;
                if (r == -ENOMEM)
                        abort();
                /* progress is what keeps a reader from looping forever */
                if (used == 0 || used > size - pos)
                        abort();
                if (r > 0 && rec.nfields != (size_t)r)
                        abort();
                for (size_t i = 0; r > 0 && i < rec.nfields; i++)
                        if (csv_field(&rec, i)[rec.len[i]] != '\0')
                                abort();
                pos += used;
        }
        csv_record_release(&rec);

        summary_init(&s, NULL);
        if (samplecsv_summary(buf, size, &s) >= 0) {
                (void)render_summary_json(&s, NULL, &out);
                (void)render_summary_text(&s, NULL, &out);
                (void)render_summary_short(&s, NULL, &out);
        }

        if (runjson_parse(buf, size, &ri) == 0) {
                dbuf_reset(&out);
                (void)render_summary_json(&s, &ri, &out);
                (void)render_summary_text(&s, &ri, &out);
                dbuf_reset(&out);
                if (runjson_format(&ri, &out) < 0)
                        abort();
                run_info_release(&ri);
        }
        dbuf_release(&out);
        return 0;
}
