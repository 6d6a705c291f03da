/* SPDX-License-Identifier: MIT */
/* `buildtel cache` reads what ccache and sccache print, and --since is
 * typed by people: the snapshot parsers and the WHEN parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/cachetool.h"
#include "sources/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *buf = (const char *)data;
        struct cachetool_stats s;
        double t;
        char *z;

        (void)cachetool_parse_ccache(buf, size, &s);
        (void)cachetool_parse_sccache_json(buf, size, &s);
        if (size < 256) {
                z = malloc(size + 1);
                if (!z)
                        return 0;
                memcpy(z, data, size);
                z[size] = '\0';
                (void)history_parse_when(z, 1e9, &t);
                free(z);
        }
        return 0;
}
