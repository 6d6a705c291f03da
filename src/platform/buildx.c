/* SPDX-License-Identifier: MIT */
#include "platform/buildx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/spawn.h"
#include "util/macro.h"

/* docker buildx history WORDS [ID] (WORDS split at blanks): its stdout
 * (logs: its stderr, where buildx prints the replay). */
static int history_run(const char *words, const char *ref, double timeout_s, char **ret,
                       size_t *ret_len)
{
        char line[96], *argv[12];
        _cleanup_free_ char *id = NULL;
        bool logs = strcmp(words, "logs") == 0;
        struct spawn_result r;
        size_t n = 0;
        int st;

        if (ref) {
                /* inspect and logs take the bare id: "<builder>/<node>/<id>" or "<id>"
                 * (parse/bakemeta.h's buildx_bare_id(), out of this layer's reach) */
                const char *slash = strrchr(ref, '/');

                ref = slash ? slash + 1 : ref;
                if (!ref[0] || ref[0] == '-')
                        return -EINVAL; /* never an option to docker */
                id = strdup(ref);
                if (!id)
                        return -ENOMEM;
        }
        if (snprintf(line, sizeof(line), "docker buildx history %s", words) >= (int)sizeof(line))
                return -EINVAL;
        for (char *p = line; p && n < 10;)
                argv[n++] = strsep(&p, " ");
        if (id)
                argv[n++] = id;
        argv[n] = NULL;
        struct spawn_config cfg = {.argv = argv,
                                   .out_max = BUILDX_FETCH_MAX,
                                   .timeout_s = timeout_s,
                                   .capture_stderr = logs};

        st = spawn_capture(&cfg, &r);
        if (st < 0)
                return st;
        if (st != 0 || (logs ? r.err_truncated : r.out_truncated)) {
                spawn_result_release(&r);
                return st == 127 ? -ENOENT : st != 0 ? -EIO : -EFBIG;
        }
        /* captured stderr is never NULL (spawn.h) */
        free(logs ? r.out : r.err);
        *ret = logs ? r.err : r.out;
        *ret_len = logs ? r.err_len : r.out_len;
        return 0;
}

int buildx_history_fetch(const char *ref, double timeout_s, char **ret, size_t *ret_len)
{
        return history_run("inspect --format json", ref, timeout_s, ret, ret_len);
}

int buildx_history_logs(const char *ref, double timeout_s, char **ret, size_t *ret_len)
{
        return history_run("logs", ref, timeout_s, ret, ret_len);
}

int buildx_history_provenance(const char *ref, double timeout_s, char **ret, size_t *ret_len)
{
        return history_run("inspect attachment --type provenance", ref, timeout_s, ret, ret_len);
}

int buildx_history_list(double timeout_s, char **ret, size_t *ret_len)
{
        return history_run("ls --format json", NULL, timeout_s, ret, ret_len);
}

bool buildx_host_v2(void)
{
        return access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
}
