/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is copied into an exact-size heap buffer so ASan sees any read
 * past len (the parser must not rely on a NUL). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pidstat out, untouched;
        char *buf = malloc(size ? size : 1);
        int r;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        memset(&out, 0x5a, sizeof(out));
        memcpy(&untouched, &out, sizeof(out));
        r = pidstat_parse(buf, size, &out);
        if (r < 0 && (r != -EINVAL && r != -ERANGE))
                abort();
        if (r < 0 && memcmp(&out, &untouched, sizeof(out)) != 0)
                abort(); /* ret must be untouched on failure */
        if (r == 0 && (out.pid <= 0 || memchr(out.comm, '\0', sizeof(out.comm)) == NULL))
                abort();
        free(buf);
        return 0;
}
