/* SPDX-License-Identifier: MIT */
/* A targets.json as `report` and `export --trace` read it from beside a
 * CSV (runfiles/targetsjson.h): any bytes. What parses is within its ranges,
 * and written back (targetsjson_format) reads back to the same figures. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "util/dbuf.h"
#include "runfiles/targetsjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct run_facts f, g;
        static struct targets ts, back;
        struct dbuf out = DBUF_INIT;
        int n;

        memset(&f, 0, sizeof(f));
        memset(&g, 0, sizeof(g));
        targets_init(&ts);
        targets_init(&back);
        n = targetsjson_parse((const char *)data, size, &f, &ts);
        if (n < 0 || (size_t)n != f.n || f.n > TARGETS_MAX)
                goto out;
        for (size_t i = 0; i < f.n; i++)
                if (f.t[i].cached > f.t[i].steps ||
                    memchr(f.t[i].name, 0, sizeof(f.t[i].name)) == NULL)
                        abort();
        if (targetsjson_format(&ts, &f, &out) < 0)
                abort();
        if (targetsjson_parse(out.p, out.len, &g, &back) != n)
                abort();
        for (size_t i = 0; i < f.n; i++)
                if (strcmp(f.t[i].name, g.t[i].name) != 0 || f.t[i].steps_set != g.t[i].steps_set ||
                    f.t[i].steps != g.t[i].steps || f.t[i].cached != g.t[i].cached ||
                    f.t[i].success != g.t[i].success)
                        abort();
        if (back.nstepv != ts.nstepv)
                abort();
out:
        dbuf_release(&out);
        targets_release(&ts);
        targets_release(&back);
        return 0;
}
