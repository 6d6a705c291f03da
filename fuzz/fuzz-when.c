/* SPDX-License-Identifier: MIT */
/* --since WHEN is typed by people: "2026-11-29T15:40:20Z", "3d", ... */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        double t = NAN;
        char *z;

        if (size >= 256)
                return 0;
        z = malloc(size + 1);
        if (!z)
                return 0;
        memcpy(z, data, size);
        z[size] = '\0';
        if (history_parse_when(z, 1e9, &t) == 0 && !isfinite(t))
                abort();
        free(z);
        return 0;
}
