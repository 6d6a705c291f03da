/* SPDX-License-Identifier: MIT */
/* For the store tests: this process as a recorder (struct store_recorder),
 * read as sinks/sink-sqlite.c reads it. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "platform/procfs.h"
#include "store/store.h"

static inline int recorder_self(struct store_recorder *ret)
{
        struct procfs_identity me;
        int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        if (root < 0)
                return -errno;
        r = procfs_self_identity(root, &me);
        close(root);
        if (r < 0)
                return r;
        ret->pid = me.pid;
        ret->starttime = me.starttime;
        snprintf(ret->boot_id, sizeof(ret->boot_id), "%s", me.boot_id);
        return 0;
}
