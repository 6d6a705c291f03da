/* SPDX-License-Identifier: MIT */
#include "platform/cachetool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/spawn.h"

int cachetool_on_path(const char *name)
{
        const char *path = getenv("PATH");
        char buf[4096];

        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        while (*path) {
                const char *c = strchr(path, ':');
                size_t n = c ? (size_t)(c - path) : strlen(path);
                int k = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);

                if (k > 0 && (size_t)k < sizeof(buf) && access(buf, X_OK) == 0)
                        return 1;
                path += n + (c ? 1 : 0);
        }
        return 0;
}

int cachetool_run(char *const argv[], size_t max, double timeout_s, char **ret, size_t *ret_len)
{
        struct spawn_config cfg = {.argv = argv, .out_max = max, .timeout_s = timeout_s};
        struct spawn_result r;
        int st = spawn_capture(&cfg, &r);

        if (st < 0)
                return st;
        *ret = r.out;
        *ret_len = r.out_len;
        return st;
}
