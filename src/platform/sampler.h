/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/sample.h"

struct procfs;
struct pidstat;

/* Host-wide sampling: one tick reads /proc/stat, meminfo, loadavg, statvfs
 * of the disk path, and walks /proc once for the compiler count. No fork,
 * no exec. */

/* The names counted in the `compilers` column by default are the
 * TOOL_COUNTED ones of model/compilers.h. */

struct sampler_config {
        const char *root;             /* "/" in production; a fixture tree in tests */
        const char *disk_path;        /* statvfs() target, relative to the cwd */
        const char *const *compilers; /* NULL-terminated; NULL = defaults; copied */
};

struct sampler;

/* Opens cfg->root through procfs_new() and takes the /proc/stat baseline
 * for the first cpu_pct. cfg's strings are copied. Returns 0 or -errno (an
 * unreadable disk_path or proc/stat is not an error: those columns stay NAN
 * until they can be read). */
int sampler_new(const struct sampler_config *cfg, struct sampler **ret);
void sampler_free(struct sampler *s); /* NULL is a no-op */

/* Fill load1, cpu_pct, mem_*, swap_used_bytes, disk_* and compilers of *ret;
 * no other field is touched (time, stage and context are the caller's).
 * cpu_pct covers the time since the previous take (or sampler_new) and is
 * NAN when no tick passed or the counters went backwards. A source that
 * cannot be read sets its fields to NAN; returns 0, or the first -errno
 * when nothing could be read. */
int sampler_take(struct sampler *s, struct sample *ret);

/* Called for every process the per-process walk sees. */
typedef void (*sampler_proc_fn)(void *userdata, const struct pidstat *ps);

/* Limit the per-process part of the following takes (the compilers count)
 * to these pids, the build's own (from its cgroup), instead of every
 * process in /proc; cb, when not NULL, sees each of them. pids is borrowed
 * and must stay valid until the next call; pids NULL restores the walk of
 * the whole /proc (cb then sees every process). */
void sampler_set_pids(struct sampler *s, const long *pids, size_t n, sampler_proc_fn cb,
                      void *userdata);

/* The procfs the sampler reads through, owned by s (for other readers of the
 * same root, e.g. a per-process walk). */
struct procfs *sampler_procfs(struct sampler *s);
