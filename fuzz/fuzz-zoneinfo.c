/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An exact-size heap copy, so ASan sees a read past len. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t out = 0x5a5a5a5a;
        char *buf = malloc(size ? size : 1);
        int r;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        r = zoneinfo_pcp_parse(buf, size, &out);
        if (r < 0 && r != -EINVAL && r != -ERANGE)
                abort();
        if (r < 0 && out != 0x5a5a5a5a)
                abort(); /* untouched on failure */
        free(buf);
        return 0;
}
