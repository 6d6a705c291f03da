/* SPDX-License-Identifier: MIT */
/* Fuzzes the .ninja_log finder on argv: the input split at NUL bytes into
 * at most 63 arguments. A found directory is one of them, or ".". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ninjaargv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1), *argv[64];
        size_t n = 0, start = 0;
        enum ninjaargv_need need;
        const char *dir;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        for (size_t i = 0; i <= size && n < 63; i++)
                if (buf[i] == '\0') {
                        argv[n++] = buf + start;
                        start = i + 1;
                }
        argv[n] = NULL;
        if (ninjaargv_dir(argv, &dir, &need) == 1) {
                if (!dir || (need != NINJAARGV_NONE && need != NINJAARGV_BUILD_NINJA))
                        abort();
                if (!(dir >= buf && dir <= buf + size) && strcmp(dir, ".") != 0)
                        abort();
        }
        free(buf);
        return 0;
}
