#pragma once
/* The one rule of each derived figure that more than one layer shows: the
 * sinks, the renderers, the store and the commands call these and never
 * divide or subtract by hand. */

#include <stdbool.h>
#include <stdint.h>

struct run_info;

/* Cached BuildKit steps over all steps: NAN when steps is unknown (< 0) or
 * 0, or cached is unknown (< 0). A renderer that needs a number for an
 * unknown ratio (a bar width) chooses it itself. */
double figure_cached_ratio(int64_t steps, int64_t cached);

/* Compiler-cache hits over hits plus misses: NAN when there were none. */
double figure_hit_ratio(uint64_t hits, uint64_t misses);

/* The run's duration in seconds: end minus start when both are known.
 * Otherwise (killed, or still running) as far as the samples go: the last
 * sample's time minus the start when last_epoch is finite, with
 * *ret_to_last set (it may be NULL; false for every other answer); NAN
 * when the start is unknown or nothing else is. The history's SQL calls
 * this very function (store.c registers it as run_duration()). */
double figure_run_duration(double start_epoch, double end_epoch, double last_epoch,
                           bool *ret_to_last);

/* How long after the run's end a .ninja_log may have been written and still
 * be this run's (ninja writes its last line as its last edge ends). */
#define FIGURE_NINJA_SLACK_S 5.0

/* Where ninja started on the run's clock, in seconds from the run's start:
 * ninja's times count from its own start, which no record gives; it appends
 * a line as each edge ends, so the log's mtime is the end of its last edge,
 * and ninja started max_end_ms before it (never before the run: 0 then).
 * Returns 0 and *ret_off, or -ESRCH when the log was written more than a
 * second before the run started (*ret_before true) or more than
 * FIGURE_NINJA_SLACK_S after it ended: its last ninja run is another
 * build's. *ret_before may be NULL. */
int figure_ninja_offset(const struct run_info *ri, double mtime, int64_t max_end_ms,
                        double *ret_off, bool *ret_before);
