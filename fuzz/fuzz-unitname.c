/* SPDX-License-Identifier: MIT */
/* A compiler's cwd and sources, as the process scan reads them from the
 * build (any bytes): NUL-separated, the first the cwd, the second the
 * project root, the rest sources. Each resolves (unitname_resolve) to an
 * absolute path with no empty, "." or ".." component, or fails; each row's
 * short name (unitnames_short) fits its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/unitname.h"
#include "model/units.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROWS 8

static void check_path(const char *p, int n)
{
        if (n < 1 || p[0] != '/' || (size_t)n != strlen(p) || (n > 1 && p[n - 1] == '/'))
                abort();
        if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
            (n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1), *part[ROWS + 2];
        struct unit rows[ROWS];
        struct unitnames un;
        size_t np = 0, nr = 0;

        if (!buf)
                abort();
        memcpy(buf, data, size);
        buf[size] = '\0';
        for (char *p = buf; np < ROWS + 2 && p <= buf + size; p += strlen(p) + 1)
                part[np++] = p;
        memset(rows, 0, sizeof(rows));
        for (size_t i = 2; i < np; i++) {
                struct unit *r = &rows[nr++];
                int n;

                copy_utf8_str(r->name, sizeof(r->name), part[i]); /* cut, as units.c keeps it */
                n = unitname_resolve(part[0], part[i], r->path, sizeof(r->path));
                if (n >= 0)
                        check_path(r->path, n);
                else
                        r->path[0] = '\0';
        }
        unitnames_init(&un, rows, nr, np > 1 ? part[1] : NULL);
        for (size_t i = 0; i < nr; i++) {
                char shown[UNITNAME_SHORT_MAX + 1], small[8];

                if (strlen(unitnames_short(&un, &rows[i], shown, sizeof(shown))) >= sizeof(shown) ||
                    strlen(unitnames_short(&un, &rows[i], small, sizeof(small))) >= sizeof(small))
                        abort();
        }
        free(buf);
        return 0;
}
