/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/dbuf.h"

/* Two readings about -j, derived once here from the units table and the
 * summary: the jobs the memory and the CPUs allow against what the run
 * used, and the time with fewer jobs in flight than CPUs. */

struct units;
struct summary;
struct summary_alone;

struct jobs_reading {
        size_t units;          /* how many units the percentile is over */
        double p95_mb;         /* the 95th-percentile unit's peak */
        double mem_total_mb;   /* the host's memory */
        size_t conc_units;     /* most units whose lifetimes overlap */
        double conc_mb;        /* their peaks summed */
        long mem_jobs_conc;    /* jobs of that mix the memory holds */
        long mem_jobs;         /* floor(mem_total_mb / p95_mb), or mem_jobs_conc if smaller */
        unsigned ncpu;         /* 0 unknown */
        long jobs;             /* what to use: the smaller of mem_jobs and ncpu */
        bool cpu_limit;        /* the CPUs are the limit (not the memory) */
        size_t peak_in_flight; /* what this run used */
};

/* Returns 0, -ENODATA when there are fewer than UNITS_JOBS_MIN units or
 * mem_total_mb is unknown, or -ENOMEM. */
int jobs_read(const struct units *u, double mem_total_mb, unsigned ncpu, size_t peak_in_flight,
              struct jobs_reading *ret);
/* The most units whose lifetimes overlap (0 on ENOMEM): the peak in
 * flight of units the kernel accounted, each seen whole. */
size_t jobs_in_flight(const struct units *u);
/* "2 CPUs are the limit: -j 2 (memory, 23.5 GiB, allows -j 461 of the
 * 95th-percentile unit, 52 MiB, ...); this run peaked at 2 in flight"
 * (no newline). Returns 0 or -ENOMEM. */
int jobs_render(const struct jobs_reading *j, struct dbuf *out);

#define PAR_ALONE_SHOWN 3
/* The reading is worth saying from this much time under the CPU count,
 * and this share of the time with work in flight. */
#define PAR_MIN_S 2.0
#define PAR_MIN_FRACTION 0.2

struct par_reading {
        unsigned ncpu;
        double busy_s;  /* seconds with at least one job */
        double under_s; /* of those, with fewer jobs than CPUs */
        double alone_s; /* with exactly one */
        const struct summary_alone *alone[PAR_ALONE_SHOWN]; /* the summary's, longest first */
        size_t nalone;
        bool worth; /* under_s passes PAR_MIN_S and PAR_MIN_FRACTION */
};

/* Returns 0, or -ENODATA when the samples had no jobs figure, the CPU
 * count is under 2, or no job ran. */
int par_read(const struct summary *s, unsigned ncpu, struct par_reading *ret);
/* "fewer jobs than the 4 CPUs for 1m10s of 2m00s with work in flight
 * (58 %); one job alone for 40.0s: ld:app (25.0s from +1m30s), ..." (no
 * newline; the build's bytes as they are). Returns 0 or -ENOMEM. */
int par_render(const struct par_reading *p, struct dbuf *out);
