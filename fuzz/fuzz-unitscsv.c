/* SPDX-License-Identifier: MIT */
/* A units.csv as `summarize`, `report` and `export --trace` read it from
 * beside a CSV (unitscsv_parse, named by runfiles/names.h): any bytes.
 * the rows read and skipped are no more than its lines, and what it holds
 * written back (unitscsv_format) reads back whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/units.h"
#include "util/dbuf.h"
#include "runfiles/unitscsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct units *u = NULL, *back = NULL;
        struct dbuf out = DBUF_INIT;
        size_t skipped = 0, lines = 1, n = 0, m = 0;
        int r;

        if (units_new(&u) < 0 || units_new(&back) < 0)
                abort();
        r = unitscsv_parse((const char *)data, size, u, &skipped);
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';
        (void)units_rows(u, &n);
        if (r >= 0 && (n > (size_t)r || (size_t)r + skipped > lines))
                abort();
        if (r >= 0 && unitscsv_format(u, &out) >= 0) {
                skipped = 0;
                if (unitscsv_parse(out.p, out.len, back, &skipped) < 0 || skipped)
                        abort();
                (void)units_rows(back, &m);
                if (m != n)
                        abort();
        }
        dbuf_release(&out);
        units_free(back);
        units_free(u);
        return 0;
}
