/* SPDX-License-Identifier: MIT */
/* The history database as its readers open it (history-open.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "pipeline/history-open.h"
#include "platform/procfs.h"
#include "store/store.h"

/* Does pid, with this start time, run on this machine? */
static bool pid_alive_here(void *userdata, long pid, uint64_t starttime)
{
        _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return root >= 0 && procfs_pid_alive(root, pid, starttime) > 0;
}

int history_store_open(const char *path, bool create, int busy_ms, struct store **ret)
{
        _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct procfs_identity me;
        char host[256] = "";
        bool known = root >= 0 && procfs_self_identity(root, &me) >= 0;
        struct store_liveness lv = {
            .host = host, .boot_id = known ? me.boot_id : NULL, .alive = pid_alive_here};
        struct store *st = NULL;
        int e;

        (void)gethostname(host, sizeof(host) - 1);
        e = store_open(path, create, busy_ms, &st);
        if (e < 0)
                return e;
        e = store_set_liveness(st, &lv);
        if (e < 0) {
                store_close(st);
                return e;
        }
        *ret = st;
        return 0;
}
