/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/units.h"
#include "util/dbuf.h"

/* resources-<id>.units.csv, written once at the end: the compile units of
 * the run's process scans. */

/* The table as CSV (header "kind,tool,name,first_elapsed_s,last_elapsed_s,
 * peak_mb,peak_elapsed_s,cpu_s,path,source,cache,wait_cpu_s,wait_io_s,
 * wait_mem_s", source "taskstats" or "sampled", cache the compiler
 * cache's word (units_cache_name), the waits empty unknown), then one record per unit in order of
 * first sight, figures at full precision), so a summary recomputed from
 * the files says what the run's said. Returns 0 or -ENOMEM. */
int unitscsv_format(const struct units *u, struct dbuf *out);
/* Read such a CSV into u (empty or not); one without the path column
 * (before issue 26) reads with paths unknown, without source sampled. Records that do not parse
 * are skipped and counted in *ret_skipped. Returns the units
 * read, or -EINVAL when the header is not ours. */
int unitscsv_parse(const char *buf, size_t len, struct units *u, size_t *ret_skipped);
