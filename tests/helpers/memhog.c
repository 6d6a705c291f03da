/* SPDX-License-Identifier: MIT */
/* memhog MIB SECONDS [ARG...]: allocate MIB MiB, touch every page, hold it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
        size_t mib, len;
        double secs;
        char *p, *end;
        struct timespec ts;

        if (argc < 3) { /* more: ignored (a name a compiler would be given) */
                fprintf(stderr, "usage: memhog MIB SECONDS [ARG...]\n");
                return 2;
        }
        mib = strtoul(argv[1], &end, 10);
        if (*end)
                return 2;
        secs = strtod(argv[2], &end);
        if (*end)
                return 2;
        len = mib << 20;
        p = malloc(len);
        if (!p)
                return 1;
        for (size_t i = 0; i < len; i += 4096)
                p[i] = (char)((i >> 12) | 1); /* non-zero: no zero-page or calloc shortcut */
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
        printf("touched %zu MiB\n", mib);
        free(p);
        return 0;
}
