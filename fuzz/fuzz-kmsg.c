/* SPDX-License-Identifier: MIT */
/* Fuzzes the OOM killer's report parser (/dev/kmsg records). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char comm[16];
        long pid = -7;
        /* Half the runs match any memcg, half one path. */
        const char *memcg = size && (data[0] & 1) ? "/buildtel/run-x-1" : NULL;
        int r = cgroup_kmsg_victim_parse((const char *)data, size, memcg, &pid, comm, sizeof(comm));

        if (r < 0 || r > 1)
                abort();
        if (r == 1 && (pid <= 0 || pid > INT32_MAX || strnlen(comm, sizeof(comm)) >= sizeof(comm)))
                abort();
        if (r == 0 && pid != -7)
                abort();
        return 0;
}
