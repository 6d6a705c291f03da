/* SPDX-License-Identifier: MIT */
#include "platform/buildx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform/spawn.h"
#include "util/macro.h"

int buildx_history_fetch(const char *ref, double timeout_s, char **ret, size_t *ret_len)
{
        char a0[] = "docker", a1[] = "buildx", a2[] = "history", a3[] = "inspect",
             a4[] = "--format", a5[] = "json";
        _cleanup_free_ char *a6 = NULL;
        struct spawn_result r;
        int st;

        if (ref[0] == '-')
                return -EINVAL; /* never an option to docker */
        a6 = strdup(ref);
        if (!a6)
                return -ENOMEM;
        char *const argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
        struct spawn_config cfg = {
            .argv = argv, .out_max = BUILDX_FETCH_MAX, .timeout_s = timeout_s};

        st = spawn_capture(&cfg, &r);
        if (st < 0)
                return st;
        if (st != 0 || r.out_truncated) {
                spawn_result_release(&r);
                return st == 127 ? -ENOENT : st != 0 ? -EIO : -EFBIG;
        }
        *ret = r.out;
        *ret_len = r.out_len;
        return 0;
}
