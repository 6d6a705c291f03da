/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/retention.h"

struct common_opts;

/* The limit `run` and `watch` apply at their end, and `prune` without
 * limits: the newest PRUNE_KEEP_RUNS runs, at most PRUNE_KEEP_BYTES of run
 * files (as journald's SystemMaxUse). */
#define PRUNE_KEEP_RUNS 200
#define PRUNE_KEEP_BYTES (2ULL << 30)

/* The limit of `run`: PRUNE_KEEP_* replaced by $BUILDTEL_KEEP_RUNS and
 * $BUILDTEL_KEEP_SIZE, then by o's --keep-runs and --keep-size when given
 * (0 keeps all). Returns 0, or -1 after printing why a variable is bad. */
int prune_limit_of(const char *cmd, const struct common_opts *o, struct retention_policy *ret);

/* What a prune did. */
struct prune_result {
        uint64_t runs, files, bytes;    /* removed (or, dry, to remove) */
        uint64_t kept_runs, kept_bytes; /* left */
        uint64_t failed;                /* runs that could not be removed */
};

/* Apply p to the history at db_path (log_dir: where the runs whose rows
 * do not name their build log wrote their files; NULL the default):
 * remove the runs it selects, their files (only the names buildtel gives
 * a run's files, in its log directory, regular files only) and then their
 * rows; a job left with no run loses its default textfile in textfile_dir
 * (NULL: where the sink would write it). Never a running run, nor the run with run id self (NULL: none).
 * verbose: one line per run on stdout ("would remove" when dry). Returns
 * 0 or -errno (the history could not be read); per-run failures are
 * counted in ret->failed and said on stderr. */
int prune_apply(const char *db_path, const char *log_dir, const char *textfile_dir,
                const struct retention_policy *p, const char *self, bool dry, bool verbose,
                struct prune_result *ret);
