/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/dbuf.h"

/* The facts of one run (or watch) that are not in the time series. They are
 * written next to the CSV as resources-<run-id>.run.json at start and again
 * at the end, so that `summarize` rebuilds the same summary from files. */
struct run_info {
        char *run_id;
        char *kind; /* "run" or "watch" */
        char **argv; /* NULL-terminated; the command (run) or the watched
                        process's cmdline (watch) */
        char *cwd;
        char *host;
        double start_epoch;
        double end_epoch; /* NAN while running */
        bool finished; /* false for a run whose buildtel was killed */
        int exit_code; /* 0..255, as a shell reports it; -1 unknown */
        int term_signal; /* signal that killed the build, or 0 */
        unsigned ncpu; /* online CPUs when the run started */
        double interval; /* seconds between samples */
        long pid; /* the build's pid (run) or the watched pid */
};

/* Free every owned member and zero the struct; NULL is a no-op. */
void run_info_release(struct run_info *ri);

/* Serialize as a JSON object. Returns 0 or -ENOMEM. */
int run_info_to_json(const struct run_info *ri, struct dbuf *out);

/* Parse what run_info_to_json() wrote. On success *ret owns copies of every
 * string. Returns 0, or -EINVAL for anything else (missing members keep
 * their "unknown" values: NAN times, exit_code -1). */
int run_info_parse_json(const char *buf, size_t len, struct run_info *ret);
