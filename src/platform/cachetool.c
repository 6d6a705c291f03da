/* SPDX-License-Identifier: MIT */
#include "platform/cachetool.h"

#include <stdlib.h>

#include "platform/child.h"
#include "platform/spawn.h"

int cachetool_on_path(const char *name)
{
        const char *path = getenv("PATH");

        return child_exec_check(name, path && *path ? path : "/usr/local/bin:/usr/bin:/bin") == 0;
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
