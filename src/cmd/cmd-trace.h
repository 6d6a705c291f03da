/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "model/summary.h"
#include "store/store.h"

/* A recorded run as a Chrome trace (out/trace.h): `buildtel export --trace`
 * and `run --trace-file`. These print their own errors. */

struct trace_job {
        const char *out_path;             /* "-": stdout; NULL: out_dir/trace-<run-id>.json */
        const char *out_dir;              /* NULL: the current directory */
        const char *ninja_log;            /* the run's --ninja-log; NULL: no ninja edges */
        struct summary_config thresholds; /* a stored run's own replace these */
        const char *cmd;                  /* "export", "run": for messages */
        bool quiet;                       /* no line saying where it went */
};

/* From a run's files: csv is resources-<id>.csv; .run.json and
 * .targets.json (optional) beside it. Returns 0, or 1 after printing why. */
int trace_write_files(const struct trace_job *j, const char *csv);

/* From the history database: run row id. Same returns. */
int trace_write_db(const struct trace_job *j, struct store *st, int64_t id);

struct recorder;
struct recorder_config;

/* run --trace-file: trace-<run-id>.json beside the finished run's CSV
 * (cfg: its --ninja-log and thresholds). Same returns; nothing when the
 * run wrote no files. */
int trace_write_run(const struct recorder *r, const struct recorder_config *cfg,
                    const char *run_id);
