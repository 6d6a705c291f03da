/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* .ninja_log v5, v6 and v7: "# ninja log vN" headers and records
 * "start_ms<TAB>end_ms<TAB>mtime<TAB>output<TAB>hash". A line longer than
 * NINJALOG_LINE_MAX (without its newline) is junk, whole or streamed. */

#define NINJALOG_LINE_MAX (64u << 10)

/* One distinct edge of a .ninja_log (the lines of a multi-output edge give
 * one call, with the first output; malformed lines are skipped): times in
 * ms from ninja's start. */
typedef void (*ninjalog_edge_fn)(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                                 size_t out_len);

/* One ninja run of a .ninja_log (one starts at a header or where the end
 * times drop: ninja appends a line per finished edge, so the end times of
 * one run never go down): its bytes, buf[begin, end); the latest end of its
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

/* A .ninja_log read in successive buffers cut anywhere (a line across two
 * feeds is joined, in a buffer of at most NINJALOG_LINE_MAX), so a log of
 * any size. base: the file offset of the first byte fed (the offsets of
 * runs are the file's). With runs (cap of them): its runs, oldest first,
 * the last cap of them; with fn: its edges, as they are read (walk [from,
 * to) of a file: feed it only those bytes). NULL when out of memory. */
struct ninjalog_stream;
struct ninjalog_stream *ninjalog_stream_new(uint64_t base, struct ninjalog_run *runs, size_t cap,
                                            ninjalog_edge_fn fn, void *userdata);
/* 0, or -ENOMEM (sticky: finish says it too). */
int ninjalog_stream_feed(struct ninjalog_stream *s, const char *buf, size_t len);
/* After the last feed: with runs, how many were written into them; else
 * the number of edges given to fn (capped at INT32_MAX); or -EINVAL (a
 * header of an unknown version anywhere, or not a single record), or
 * -ENOMEM. */
int ninjalog_stream_finish(struct ninjalog_stream *s);
void ninjalog_stream_free(struct ninjalog_stream *s);

/* Which records of a .ninja_log are a run's: the one rule (issue 34) of a
 * live run's end (its counts, its trace) and of a recorded run's export.
 * With snap, the file as the run started (a live run): the bytes appended
 * since (every ninja run in them); all of it when there was none; its last
 * ninja run when replaced or cut (another inode, a smaller size); none when
 * unchanged. Without (an export, the log maybe appended or rewritten
 * since): the newest ninja run whose records' mtimes date its start in
 * [start - 2 s, end + 1 s] (whole-second mtimes read up to 1 s early; a
 * build started after the run is another's, however soon after), else,
 * with no dated record, the last run if the file was last written in
 * figure_ninja_offset()'s window; only edges ending by end +
 * FIGURE_NINJA_SLACK_S. */
struct ninjalog_file {
        bool exists;
        uint64_t size, ino;
        double mtime; /* epoch seconds */
};
enum ninjalog_why {
        NINJALOG_TAIL,      /* appended since snap */
        NINJALOG_NEW,       /* none at snap */
        NINJALOG_REPLACED,  /* replaced or cut since snap */
        NINJALOG_WINDOW,    /* no snap: the run started in the run's window */
        NINJALOG_UNDATED,   /* no snap, no dated record: the last run, by the file's mtime */
        NINJALOG_UNCHANGED, /* from here on, none: not written since snap */
        NINJALOG_BEFORE,    /* undated, the file last written before the run */
        NINJALOG_AFTER,     /* undated, the file last written after it */
        NINJALOG_NOT_IN,    /* dated, no ninja run started in the run's window */
};
struct ninjalog_pick {
        enum ninjalog_why why;
        uint64_t from, to; /* the run's bytes; empty: none */
        size_t first, n;   /* runs[first, first + n) are the run's */
        double until_s;    /* on the run's clock: an edge ending later is another build's */
};

#define NINJALOG_RUNS_MAX 64 /* the runs a reader keeps, the last ones */

void ninjalog_file_of(const struct stat *st, struct ninjalog_file *ret);
/* The rule, on the runs (n, the last NINJALOG_RUNS_MAX) of the file's
 * bytes from ninjalog_window_scan() on; snap NULL for none; the run from
 * start to end (epoch seconds; end NAN while unknown). */
uint64_t ninjalog_window_scan(const struct ninjalog_file *snap, const struct ninjalog_file *now);
void ninjalog_window(const struct ninjalog_file *snap, const struct ninjalog_file *now,
                     const struct ninjalog_run *runs, size_t n, double start, double end,
                     struct ninjalog_pick *ret);
/* Where runs[i] starts on the run's clock (seconds): the last run by the
 * file's mtime when that is in the run's window (figure_ninja_offset()),
 * else by its records' mtimes (never before the run); NAN when neither. */
double ninjalog_run_offset(const struct ninjalog_run *runs, size_t n, size_t i, double mtime,
                           double start, double end);

/* [from, to) of the .ninja_log open at fd, a chunk at a time (memory flat
 * however big): its last cap runs into runs, or its edges to fn. Returns
 * the runs written (with runs), else the edges, or -EINVAL (not a
 * .ninja_log), -errno. */
int ninjalog_read_range(int fd, uint64_t from, uint64_t to, struct ninjalog_run *runs, size_t cap,
                        ninjalog_edge_fn fn, void *userdata);
/* ninjalog_window() on the log at fd, as now: its runs read into runs
 * (NINJALOG_RUNS_MAX), the pick into *ret. Returns the runs read (0:
 * unchanged), or -EINVAL, -errno as above. */
int ninjalog_window_read(int fd, const struct ninjalog_file *snap, const struct ninjalog_file *now,
                         double start, double end, struct ninjalog_run *runs,
                         struct ninjalog_pick *ret);
