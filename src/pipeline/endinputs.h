/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "model/run.h"
#include "parse/buildmetrics.h"
#include "util/macro.h"

/* The build-metrics parsers' inputs read once the build is over: this
 * run's records of the --ninja-log, the --metadata-file its command named,
 * and `docker buildx history` for its targets. */

/* The --ninja-log as the run started: which of its records are this
 * run's is decided against it at the end. */
struct ninja_snapshot {
        bool existed;
        off_t size;
        ino_t ino;
};
/* path NULL or missing: none existed. */
void endinputs_snapshot(const char *ninja_log, struct ninja_snapshot *ret);

/* After the build: bm's parse finished (buildmetrics_finish), then this
 * run's records of cfg->ninja_log (the tail appended since snap, or the
 * last run of a log rewritten), run->argv's --metadata-file, and buildx
 * history (within a budget; not with cfg->no_history). What cannot be read
 * is said through fn, in one line each. */
void endinputs_read(struct buildmetrics *bm, const struct buildmetrics_config *cfg,
                    const struct run_info *run, const struct ninja_snapshot *snap, note_fn fn,
                    void *userdata);
