/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/run.h"
#include "model/summary.h"
#include "store/history.h"
#include "util/macro.h"

struct sink_ops;

/* A recorded run replayed through the one pipeline: its samples (a CSV,
 * pipeline/source-replay.c, or its rows in the history) into a recorder
 * with the caller's sinks, its recorded model (targets and their facts,
 * BuildKit steps, ninja edges, cache blocks, compile units: from its rows,
 * or its files beside the CSV) handed to them at the end, with its
 * baseline against the runs recorded before it. `summarize`, `report`,
 * `export` and `export --trace` are this and their sinks. */

struct replay_ref {
        /* A path that exists (or ends in ".csv", or has a '/'): a recorded
         * CSV; else a run id (or the start of one) in the history, else
         * (not found, or no_db) resources-RUN.csv in log_dir; NULL or "":
         * the history's latest run. */
        const char *run;
        const char *db_path; /* NULL: the default one */
        const char *log_dir; /* NULL: the default one */
        bool no_db;
        /* A CSV's facts come from the resources-<id>.run.json beside it:
         * with need_record, a CSV without one is refused; else its facts
         * are then unknown. */
        bool need_record;
        struct summary_config thresholds;
        /* A run of the history counts near-OOM and low-disk samples as it
         * did: its own thresholds replace those above (report, export);
         * else these count (summarize, which recomputes with the user's). */
        bool own_thresholds;
        note_fn note; /* one line each: what of the run's files was left out */
        void *userdata;
};

/* What the replay knows of the run before its samples. */
struct replay_run {
        struct run_info ri;
        struct summary_config thresholds;
        enum store_run_state state; /* a CSV: finished, or incomplete */
        const char *csv;            /* the CSV replayed; NULL: the history's rows */
        const char *db_path;        /* the history read (or the one looked in); NULL: none */
        int64_t row;                /* the run's row in it; 0: in none */
        char *vcs_rev;              /* the revision the history holds; NULL: none */
};

struct replay;

/* Find the run ref names and read its facts. 0; -ENOMEM; or -ENOENT,
 * -EEXIST, -EINVAL, -errno with why (one line, no prefix) in why. */
int replay_open(const struct replay_ref *ref, struct replay **ret, char *why, size_t cap);
void replay_free(struct replay *rp); /* NULL is a no-op */
/* The run's facts (what is there to say before the replay); owned by rp. */
const struct replay_run *replay_run(const struct replay *rp);

/* The samples through a recorder opening sinks (NULL-terminated; NULL:
 * none; sink_ctx.userdata: userdata), the recorded model loaded, the
 * recorder finished. *ret_model: the run's model, owned by rp (the
 * summary complete, skipped_rows counted). Returns the number of samples;
 * -ENOMEM; -EINVAL (not a buildtel CSV) or -errno with why in why; or the
 * first sink error of the finish (samples and model there). */
int64_t replay_through(struct replay *rp, const struct sink_ops *const *sinks, void *userdata,
                       const struct run_model **ret_model, char *why, size_t cap);
