/* SPDX-License-Identifier: MIT */
/* Fuzzes the kernel accounting parsers: a TASKSTATS generic netlink
 * datagram (first byte even) or a process connector one (odd). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/taskstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *userdata, const struct taskev *ev)
{
        (void)userdata;
        if (ev->pid <= 0 || ev->tgid <= 0 || strnlen(ev->comm, sizeof(ev->comm)) >= sizeof(ev->comm))
                abort();
        if (ev->type != TASKEV_FORK && ev->type != TASKEV_EXEC && ev->type != TASKEV_EXIT &&
            ev->type != TASKEV_END)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* the datagram in a buffer of its own size: a read past it is caught */
        uint8_t *p;

        if (size < 1)
                return 0;
        p = malloc(size - 1 ? size - 1 : 1);
        if (!p)
                return 0;
        memcpy(p, data + 1, size - 1);
        if (data[0] & 1)
                taskstats_parse_cn(p, size - 1, check, NULL);
        else
                taskstats_parse(p, size - 1, 0x1c, check, NULL);
        free(p);
        return 0;
}
