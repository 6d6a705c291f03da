/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/sample.h"

/* Host-wide sampling: one tick reads /proc/stat, meminfo, loadavg, statvfs
 * of the disk path, and walks /proc once for the compiler count. No fork,
 * no exec. */

/* The default names counted in the `compilers` column. NULL-terminated. */
extern const char *const sampler_default_compilers[];

struct sampler_config {
        const char *root; /* "/" in production; a fixture tree in tests */
        const char *disk_path; /* statvfs() target, relative to the cwd */
        const char *const *compilers; /* NULL-terminated; NULL = defaults */
};

struct sampler;

/* Takes the /proc/stat baseline for the first cpu_pct. Returns 0 or -errno
 * (an unreadable disk_path is not an error: disk columns stay NAN). */
int sampler_new(const struct sampler_config *cfg, struct sampler **ret);
void sampler_free(struct sampler *s); /* NULL is a no-op */

/* Fill load1, cpu_pct, mem_*, swap_used_mb, disk_* and compilers of *ret.
 * Time, stage and context are the caller's. A source that cannot be read
 * leaves its fields NAN; returns 0, or -errno when nothing could be read. */
int sampler_take(struct sampler *s, struct sample *ret);
