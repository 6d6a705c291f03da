/* SPDX-License-Identifier: MIT */
/* Fuzzes the failure reader: the input's lines, one by one; what it keeps
 * is bounded and NUL-terminated whatever comes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/failure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *c = (const char *)data, *end = c + size;
        struct failure f = {0};

        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                failure_line(&f, c, (size_t)(le - c));
                c = le + 1;
        }
        if (strlen(f.r.target) > FAILURE_TEXT_MAX || strlen(f.r.first) > FAILURE_TEXT_MAX ||
            strlen(f.r.last) > FAILURE_TEXT_MAX || (f.r.errors && !f.r.first[0] && f.r.last[0]))
                abort();
        return 0;
}
