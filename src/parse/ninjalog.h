/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/targets.h"

/* .ninja_log v5, v6 and v7: "# ninja log vN" headers and records
 * "start_ms<TAB>end_ms<TAB>mtime<TAB>output<TAB>hash". A line longer than
 * NINJALOG_LINE_MAX (without its newline) is junk, whole or streamed. */

#define NINJALOG_LINE_MAX (64u << 10)

/* Account the records of buf into ts: the number of edges (the lines of a
 * multi-output edge count once) and the slowest edges. With last_run_only,
 * only the last run of the file is taken: a run starts at a header or where
 * the end times drop (ninja appends one line per finished edge, so the end
 * times of one run never go down). Without it, buf must hold only this
 * run's bytes (what was appended since the build started). Malformed
 * lines are skipped. Returns 0, or -EINVAL when buf holds a header of an
 * unknown version or not a single record. */
int ninjalog_parse(const char *buf, size_t len, bool last_run_only, struct targets *ts);

/* One distinct edge of a .ninja_log (the lines of a multi-output edge give
 * one call, with the first output): times in ms from ninja's start. */
typedef void (*ninjalog_edge_fn)(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                                 size_t out_len);

/* Walk the edges of buf as ninjalog_parse() counts them (same
 * last_run_only rule), calling fn with each. Returns the number of edges
 * (capped at INT32_MAX), or -EINVAL as ninjalog_parse(). */
int ninjalog_each(const char *buf, size_t len, bool last_run_only, ninjalog_edge_fn fn,
                  void *userdata);

/* One ninja run of a .ninja_log (split as above): its bytes, buf[begin,
 * end), which ninjalog_each(..., false, ...) walks; the latest end of its
 * edges; and when ninja started, in epoch seconds, from its records' mtime
 * field (an output's mtime, nanoseconds or seconds by its size): the
 * latest mtime - end of an edge (an output written as its edge ends; a
 * restat one is older and counts less). NAN when no record has a
 * plausible mtime. */
struct ninjalog_run {
        uint64_t begin, end;
        int64_t max_end_ms;
        double start_epoch;
};

/* The runs of buf, oldest first, the last cap of them into runs. Returns
 * how many were written, or -EINVAL as ninjalog_parse(). */
int ninjalog_runs(const char *buf, size_t len, struct ninjalog_run *runs, size_t cap);

/* The same in successive buffers cut anywhere, for a log too big to hold
 * (a line across two feeds is joined, in a buffer of at most
 * NINJALOG_LINE_MAX). base: the file offset of the first byte fed (the
 * offsets of runs and of the last run's start are the file's). With runs
 * (cap of them), ninjalog_runs(); with fn, ninjalog_each(..., false, ...)
 * (walk [from, to) of a file: feed it only those bytes). NULL when out of
 * memory. */
struct ninjalog_stream;
struct ninjalog_stream *ninjalog_stream_new(uint64_t base, struct ninjalog_run *runs, size_t cap,
                                            ninjalog_edge_fn fn, void *userdata);
/* 0, or -ENOMEM (sticky: finish says it too). */
int ninjalog_stream_feed(struct ninjalog_stream *s, const char *buf, size_t len);
/* After the last feed: the number of edges given to fn (capped at
 * INT32_MAX), or -EINVAL as ninjalog_parse() (a bad header anywhere, not a
 * single record), or -ENOMEM. */
int ninjalog_stream_finish(struct ninjalog_stream *s);
/* After finish: where the last run of what was fed starts (file offset),
 * and how many runs were written into runs. */
uint64_t ninjalog_stream_last_start(const struct ninjalog_stream *s);
size_t ninjalog_stream_nruns(const struct ninjalog_stream *s);
void ninjalog_stream_free(struct ninjalog_stream *s);
