/* SPDX-License-Identifier: MIT */
#include "model/ranges.h"

#include <string.h>

#include "util/macro.h"

/* Wide enough for any real machine and any real build, narrow enough that
 * every later conversion (to time_t, to int64, to a 4-digit year, to a
 * double that still counts in ones) is defined and exact. */
const struct range ranges[RANGE_KINDS] = {
    /* What the CSV writer writes at all: larger reads back as junk. */
    [RANGE_ANY] = {"any", -1e15, 1e15},
    /* 1970-01-01 to 9999-12-31T23:59:59Z: ISO 8601 with a 4-digit year. */
    [RANGE_EPOCH] = {"epoch", 0.0, 253402300799.0},
    /* 100 years: no build, no watch, no sample offset lasts longer. */
    [RANGE_DURATION] = {"duration", 0.0, 3155760000.0},
    /* 100 years on 8,192 CPUs (Linux's NR_CPUS ceiling), a bit over 2.6e13 s. */
    [RANGE_CPU_SECONDS] = {"cpu seconds", 0.0, 2.6e13},
    /* At most a day, as --interval takes it; 0 is "none". */
    [RANGE_INTERVAL] = {"interval", 0.0, 86400.0},
    [RANGE_PERCENT] = {"percent", 0.0, 100.0},
    /* Runnable plus blocked tasks: at most one per pid. */
    [RANGE_LOAD] = {"load", 0.0, 4194304.0},
    /* PID_MAX_LIMIT (4 Mi) tasks at once, the kernel's ceiling. */
    [RANGE_TASKS] = {"tasks", 0.0, 4194304.0},
    /* 0: unknown (a run.json written before the build started). */
    [RANGE_PID] = {"pid", 0.0, 4194304.0},
    /* 0 is "unknown". */
    [RANGE_NCPU] = {"ncpu", 0.0, 8192.0},
    /* 2^53: a double still counts every one. */
    [RANGE_EVENTS] = {"events", 0.0, 9007199254740992.0},
    /* 2^60 bytes (1 EiB): above any RAM, disk or IO total of one build,
     * below where a KiB or MiB figure stops fitting int64 as bytes. */
    [RANGE_BYTES] = {"bytes", 0.0, 1152921504606846976.0},
    [RANGE_KIB] = {"KiB", 0.0, 1125899906842624.0},
    [RANGE_MIB] = {"MiB", 0.0, 1099511627776.0},
    [RANGE_GIB] = {"GiB", 0.0, 1073741824.0},
    /* A .ninja_log start or end, ms from the build's start: 100 years. */
    [RANGE_MS] = {"ms", 0.0, 3155760000000.0},
    [RANGE_EXIT_CODE] = {"exit code", -1.0, 255.0},
    [RANGE_SIGNAL] = {"signal", 0.0, 255.0},
};

/* CSV columns whose name does not end in their unit. */
static const struct {
        const char *name;
        enum range_kind kind;
} named_columns[] = {
    {"epoch", RANGE_EPOCH},         {"elapsed_s", RANGE_DURATION}, {"load1", RANGE_LOAD},
    {"compilers", RANGE_TASKS},     {"cg_pids", RANGE_TASKS},      {"cg_pids_peak", RANGE_TASKS},
    {"cg_oom_kills", RANGE_EVENTS},
};

/* The unit suffixes of the CSV's column names (README, "The CSV"). */
static const struct {
        const char *suffix;
        enum range_kind kind;
} unit_suffixes[] = {
    {"_s", RANGE_CPU_SECONDS}, /* cg_cpu_*_s, cg_psi_*_s: summed over CPUs */
    {"_mb", RANGE_MIB},        {"_gb", RANGE_GIB}, {"_pct", RANGE_PERCENT}, {"_pid", RANGE_PID},
};

enum range_kind range_of_column(const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < ARRAY_SIZE(named_columns); i++)
                if (strcmp(name, named_columns[i].name) == 0)
                        return named_columns[i].kind;
        for (size_t i = 0; i < ARRAY_SIZE(unit_suffixes); i++) {
                size_t k = strlen(unit_suffixes[i].suffix);

                if (n > k && strcmp(name + n - k, unit_suffixes[i].suffix) == 0)
                        return unit_suffixes[i].kind;
        }
        return RANGE_ANY;
}
