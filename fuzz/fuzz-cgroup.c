/* SPDX-License-Identifier: MIT */
/* Every cgroup file parser (v2, v1, hybrid), /proc/PID/io and the culprit
 * label, on one input each. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ret(int r)
{
        if (r < 0 && r != -EINVAL && r != -ERANGE && r != -ENOENT && r != -ENOMEM)
                abort();
}

/* An exact-size heap copy, so ASan sees any read past len. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct cgroup_mounts m;
        static struct cgroup_self self;
        struct cgroup_pressure p = {7, 7};
        struct pidio io;
        uint64_t a = 7, b = 7;
        long pids[4];
        size_t n = 0;
        char label[PROCTOP_LABEL_MAX + 1];
        char *buf = malloc(size ? size : 1);
        int r;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        check_ret(cgroup_mounts_parse(buf, size, &m));
        for (int h = 0; h < _CG_H_MAX; h++)
                if (!memchr(m.mnt[h], '\0', CG_PATH_MAX) || !memchr(m.root[h], '\0', CG_PATH_MAX))
                        abort();
        check_ret(cgroup_self_parse(buf, size, &self));
        check_ret(cgroup_u64_parse(buf, size, &a));
        check_ret(cgroup_keyed_parse(buf, size, "oom_kill", &a));
        r = cgroup_iostat_parse(buf, size, &a, &b);
        check_ret(r);
        check_ret(cgroup_blkio_parse(buf, size, &a, &b));
        r = cgroup_pressure_parse(buf, size, &p);
        check_ret(r);
        if (r < 0 && (p.some_us != 7 || p.full_us != 7))
                abort(); /* untouched on failure */
        r = cgroup_procs_parse(buf, size, pids, 4, &n);
        check_ret(r);
        if (r == 0)
                for (size_t i = 0; i < n && i < 4; i++)
                        if (pids[i] <= 0)
                                abort();
        check_ret(pidio_parse(buf, size, &io));
        r = proctop_label(size > 0 && buf[0] == 'c' ? "cc1plus" : "make", buf, size, label,
                          sizeof(label));
        if (r < 0 || (size_t)r >= sizeof(label) || strlen(label) != (size_t)r)
                abort();
        for (int i = 0; i < r; i++)
                if ((unsigned char)label[i] < 0x20 || label[i] == 0x7f)
                        abort();
        free(buf);
        return 0;
}
