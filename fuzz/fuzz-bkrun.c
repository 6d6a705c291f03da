/* SPDX-License-Identifier: MIT */
/* The RUN-step parsers on arbitrary bytes: a progress line (plain and
 * rawjson), a vertex name, a process's cmdline, the driver line, and the
 * exec cgroups' parsers (net/dev, an OCI bundle's process.args, a kernel
 * oom-kill record). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/bkrun.h"
#include "platform/bkexec.h"
#include "platform/kmsg.h"
#include "../tests/helpers/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *userdata, const char *cmd, size_t len)
{
        (void)userdata;
        if (len == 0 || len > BKRUN_CMD_MAX || strlen(cmd) != len)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        char out[BKRUN_CMD_MAX + 1], small[5], small2[5], args[1024];
        struct kmsg_oom o;
        uint64_t rx, tx;
        int n;

        (void)bkrun_feed_line(s, size, check, NULL);
        n = bkrun_vertex_cmd(s, size, out, sizeof(out));
        if (n < 0 || (size_t)n != strlen(out))
                abort();
        n = bkrun_vertex_cmd(s, size, small, sizeof(small));
        if (n < 0 || n > 4)
                abort();
        n = bkrun_argv_cmd(s, size, out, sizeof(out));
        if (n < 0 || (size_t)n != strlen(out))
                abort();
        n = bkrun_driver(s, size, small, sizeof(small), small2, sizeof(small2));
        if (n < 0 || n > 4 || strlen(small2) > 4)
                abort();
        (void)bkexec_netdev_parse(s, size, &rx, &tx);
        n = bkexec_bundle_args_parse(s, size, size & 1, args, sizeof(args));
        if (n > (int)sizeof(args))
                abort();
        if (kmsg_oom_parse(s, size, &o) == 1 &&
            (strlen(o.memcg) >= sizeof(o.memcg) || strlen(o.task) >= sizeof(o.task)))
                abort();
        return 0;
}
