/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The range every number read from a file can have (a recorded CSV, a
 * run.json, a history row, stats output, a log, /proc, a cgroup file), one
 * line each in the table in ranges.c with why it ends where it does. A
 * parser checks a number once, where it parses it, and treats a number out
 * of its range as one that does not parse: the row is skipped and counted,
 * or the figure is absent. Everything after the parsers may then convert
 * and format without overflow. */
enum range_kind {
        RANGE_ANY,         /* finite, |v| < 1e15: what the CSV writer can write back */
        RANGE_EPOCH,       /* a wall-clock time, seconds since 1970 */
        RANGE_DURATION,    /* a wall-clock duration or offset, seconds */
        RANGE_CPU_SECONDS, /* CPU or stall time summed over CPUs, seconds */
        RANGE_INTERVAL,    /* the sampling interval, seconds */
        RANGE_PERCENT,     /* a share of a whole, % */
        RANGE_LOAD,        /* a load average */
        RANGE_TASKS,       /* processes or threads counted at once */
        RANGE_PID,         /* a process id */
        RANGE_NCPU,        /* online CPUs */
        RANGE_EVENTS,      /* a counter of events (OOM kills, cache hits, steps) */
        RANGE_BYTES,       /* an amount of memory, disk or IO, bytes */
        RANGE_KIB,         /* the same in KiB */
        RANGE_MIB,         /* the same in MiB */
        RANGE_GIB,         /* the same in GiB */
        RANGE_MS,          /* a time in ms relative to a start (.ninja_log) */
        RANGE_EXIT_CODE,   /* an exit status as a shell shows it; -1 unknown */
        RANGE_SIGNAL,      /* a signal number; 0 none */
        RANGE_KINDS
};

struct range {
        const char *name;
        double min, max; /* both included */
};

/* Indexed by enum range_kind. */
extern const struct range ranges[RANGE_KINDS];

/* Whether v is in the range of kind k (never for NAN or an infinity). */
static inline bool range_ok(enum range_kind k, double v)
{
        return v >= ranges[k].min && v <= ranges[k].max;
}

static inline bool range_ok_u64(enum range_kind k, uint64_t v)
{
        return (double)v >= ranges[k].min && (double)v <= ranges[k].max;
}

static inline bool range_ok_i64(enum range_kind k, int64_t v)
{
        return (double)v >= ranges[k].min && (double)v <= ranges[k].max;
}

/* The range of a CSV column (and history column) by its name: a few by
 * name, the rest by the unit the name ends in (_s, _mb, _gb, _pct, _pid),
 * RANGE_ANY for a name it does not know. */
enum range_kind range_of_column(const char *name);
