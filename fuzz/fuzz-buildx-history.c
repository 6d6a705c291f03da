/* SPDX-License-Identifier: MIT */
/* Fuzzes the `docker buildx history inspect --format json` reader and
 * its merge into the targets model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/bakemeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct targets ts;
        struct buildx_history h;
        int t;

        if (buildx_history_parse((const char *)data, size, &h) < 0)
                return 0;
        if (strnlen(h.ref, sizeof(h.ref)) == sizeof(h.ref) ||
            strnlen(h.name, sizeof(h.name)) == sizeof(h.name) ||
            strnlen(h.status, sizeof(h.status)) == sizeof(h.status) ||
            strnlen(h.vcs_revision, sizeof(h.vcs_revision)) == sizeof(h.vcs_revision) ||
            (!isnan(h.duration_s) && !(h.duration_s >= 0)) || isinf(h.duration_s))
                abort();
        targets_init(&ts);
        (void)targets_get(&ts, "app", 3);
        t = buildx_history_apply(&h, &ts);
        if (t >= (int)ts.n)
                abort();
        return 0;
}
