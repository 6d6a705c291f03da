/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"
#include "parse/buildmetrics.h"
#include "parse/ninjalog.h"
#include "util/macro.h"

/* The build-metrics parsers' inputs read once the build is over: this
 * run's records of the --ninja-log, the --metadata-file its command named,
 * and `docker buildx history` for its targets. */

/* The --ninja-log as the run started: which of its records are this
 * run's is decided against it at the end. path NULL or missing: none. */
void endinputs_snapshot(const char *ninja_log, struct ninjalog_file *ret);

/* After the build: bm's parse finished (buildmetrics_finish), then this
 * run's records of cfg->ninja_log (ninjalog_window() with snap),
 * run->argv's --metadata-file, and buildx history (within a budget; not with cfg->no_history). What
 * cannot be read is said through fn, in one line each. */
void endinputs_read(struct buildmetrics *bm, const struct buildmetrics_config *cfg,
                    const struct run_info *run, const struct ninjalog_file *snap, note_fn fn,
                    void *userdata);
/* After execmatch_finish(), when a RUN step was not measured: those steps
 * from BuildKit's own record of each target (its history record's
 * provenance, parse/bkrecord.h: cgroup v2 builders), counted in
 * cover->recorded; one call a target, within HISTORY_TIMEOUT_S in all. A
 * local daemon (cover->driver "docker" or unknown) on a host that is not
 * pure cgroup v2 has sampled nothing: no call. */
void endinputs_record(struct buildmetrics *bm, const struct buildmetrics_config *cfg,
                      struct exec_cover *cover, note_fn fn, void *userdata);

/* The chain of BuildKit steps that set the build's time
 * (critpath_buildkit()), when ninja gave none: after the steps' execs are
 * filled. */
void endinputs_path(struct buildmetrics *bm);
