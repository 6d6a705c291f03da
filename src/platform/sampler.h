/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/sample.h"

struct procfs;
struct pidstat;

/* Host-wide sampling: one tick reads /proc/stat, meminfo, loadavg, statvfs
 * of the disk path, and walks /proc once for the compiler count. */

struct sampler_config {
        const char *root;             /* "/" in production; a fixture tree in tests */
        const char *disk_path;        /* statvfs() target, relative to the cwd */
        const char *const *compilers; /* NULL-terminated; NULL: TOOL_COUNTED; copied */
};

struct sampler;

/* Takes the /proc/stat baseline for the first cpu_pct. Returns 0 or -errno
 * (an unreadable disk_path or proc/stat is not one: those columns stay NAN
 * until they can be read). */
int sampler_new(const struct sampler_config *cfg, struct sampler **ret);
void sampler_free(struct sampler *s); /* NULL is a no-op */

/* Fill load1, cpu_pct, mem_*, swap_used_bytes, disk_* and compilers of *ret,
 * no other field. cpu_pct covers the time since the previous take, NAN
 * when no tick passed or the counters went backwards. A source that cannot
 * be read sets its fields to NAN; returns 0, or the first -errno when
 * nothing could be read. */
int sampler_take(struct sampler *s, struct sample *ret);

/* Called for every process the per-process walk sees. */
typedef void (*sampler_proc_fn)(void *userdata, const struct pidstat *ps);

/* Limit the compilers count of the following takes to these pids (the
 * build's own), each also to cb when set; pids is borrowed until the next
 * call. pids NULL: every process in /proc again. */
void sampler_set_pids(struct sampler *s, const long *pids, size_t n, sampler_proc_fn cb,
                      void *userdata);

/* The procfs the sampler reads through, owned by s. */
struct procfs *sampler_procfs(struct sampler *s);
