/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* From the job's ledger to a plan (issue 37): for a machine's memory and
 * CPUs, the -j whose worst case fits (the j heaviest units at once, with
 * the headroom kept free), the peak and wall at each -j as the units would
 * run in their usual order on j slots (the units alone: dependencies and
 * the build's other steps are not known), and the heavy units (each above
 * its share of the memory) with the depth of a pool that lets the rest run
 * at every CPU. Pure. */

#define PLAN_J_MAX 64
#define PLAN_HEAVY_MAX 32 /* listed; more are counted */

struct ledger;

struct plan_step {
        unsigned j;
        double worst_mb; /* the j heaviest at once */
        double sched_mb; /* the most at once as scheduled */
        double wall_s;   /* as scheduled */
        bool fits;       /* worst + headroom within the memory */
};

struct plan {
        double memory_mb, headroom_mb;
        unsigned cpus;
        size_t units;
        unsigned j_fit; /* the largest -j up to the CPUs that fits; 0: not one unit */
        struct plan_step steps[PLAN_J_MAX]; /* j = 1.. */
        size_t nsteps;
        /* the heavy units: the ledger's first nheavy (ledger_at order) */
        size_t nheavy;
        double light_mb;     /* the heaviest of the rest; 0 none */
        unsigned pool_depth; /* 0: none needed, or none helps; every unit heavy: j_fit */
        unsigned j_pooled;   /* the -j that fits with the pool */
};

/* The headroom kept free of a memory (MiB): a 16th, at least 64 MiB (the
 * plan's and run --memory-guard's default). */
double plan_headroom_mb(double memory_mb);

/* Returns 0, -ENODATA when the ledger has no unit, -ENOMEM. */
int plan_make(struct ledger *l, double memory_mb, unsigned cpus, double headroom_mb,
              struct plan *ret);

/* The CMake target of a unit's output directory ("CMakeFiles/foo.dir/src"
 * is foo), into buf (cap bytes); false when it names none. */
bool plan_cmake_target(const char *dir, char *buf, size_t cap);
