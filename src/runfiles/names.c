/* SPDX-License-Identifier: MIT */
/* A run's files: their names. */
#include "runfiles/names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const struct {
        const char *prefix, *suffix;
} names[RUNFILE_COUNT_] = {
    [RUNFILE_CSV] = {"resources-", ".csv"},
    [RUNFILE_RUN] = {"resources-", ".run.json"},
    [RUNFILE_SUMMARY_TXT] = {"resources-", ".summary.txt"},
    [RUNFILE_SUMMARY_JSON] = {"resources-", ".summary.json"},
    [RUNFILE_TARGETS] = {"resources-", ".targets.json"},
    [RUNFILE_UNITS] = {"resources-", ".units.csv"},
    [RUNFILE_BUILD_LOG] = {"build-", ".log"},
    [RUNFILE_REPORT] = {"report-", ".html"},
    [RUNFILE_TRACE] = {"trace-", ".json"},
    [RUNFILE_BUILD_LOG_GZ] = {"build-", ".log.gz"},
    [RUNFILE_BUILD_LOG_GZ_TMP] = {"build-", ".log.gz.tmp"},
    [RUNFILE_CCACHE_LOG] = {"resources-", ".ccache.log"},
    [RUNFILE_SCCACHE_LOG] = {"resources-", ".sccache.log"},
};

/* "<dir, dirlen bytes>/<prefix><id, idlen bytes><suffix>" (no dir and no
 * '/' when dir is NULL), malloc'd. */
static char *join(const char *dir, size_t dirlen, const char *id, size_t idlen, enum runfile kind)
{
        char *p;

        if ((unsigned)kind >= RUNFILE_COUNT_)
                return NULL;
        if (asprintf(&p, "%.*s%s%s%.*s%s", (int)dirlen, dir ? dir : "", dir ? "/" : "",
                     names[kind].prefix, (int)idlen, id, names[kind].suffix) < 0)
                return NULL;
        return p;
}

char *runfiles_path(const char *dir, const char *run_id, enum runfile kind)
{
        if (dir && strlen(dir) > INT32_MAX)
                return NULL;
        return join(dir, dir ? strlen(dir) : 0, run_id, strlen(run_id), kind);
}

char *runfiles_dir_of(const char *path, bool *ret_oom)
{
        const char *slash = strrchr(path, '/');
        char *p;

        *ret_oom = false;
        if (!slash)
                return NULL;
        p = strndup(path, (size_t)(slash - path));
        *ret_oom = !p;
        return p;
}

char *runfiles_beside(const char *csv, enum runfile kind)
{
        static const char pre[] = "resources-", suf[] = ".csv";
        const char *slash = strrchr(csv, '/'), *base = slash ? slash + 1 : csv;
        size_t n = strlen(csv), bl = strlen(base), stem;
        bool named = bl > strlen(pre) + strlen(suf) && strncmp(base, pre, strlen(pre)) == 0 &&
                     strcmp(base + bl - strlen(suf), suf) == 0;
        char *p;

        if ((unsigned)kind >= RUNFILE_COUNT_ || n > INT32_MAX)
                return NULL;
        if (named)
                return join(slash ? csv : NULL, slash ? (size_t)(slash - csv) : 0,
                            base + strlen(pre), bl - strlen(pre) - strlen(suf), kind);
        if (strcmp(names[kind].prefix, pre) != 0)
                return NULL;
        /* not resources-<id>.csv: its name with .csv swapped */
        stem = n >= strlen(suf) && strcmp(csv + n - strlen(suf), suf) == 0 ? n - strlen(suf) : n;
        return asprintf(&p, "%.*s%s", (int)stem, csv, names[kind].suffix) < 0 ? NULL : p;
}
