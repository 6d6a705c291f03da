/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/targets.h"

/* Where the wall time went (issue 38), derived once here. The critical
 * path: from the work that ended last, back through the input each piece
 * waited for longest (of its inputs done in this run, the one that ended
 * last), each with its slack (how long it could have started earlier: its
 * start less that input's end, or less the start of all for the first).
 * For ninja also each edge's weighted time (each moment divided among the
 * edges running then), its totals by rule, and the stretches with fewer
 * edges running than -j, each named by what the rest waited for. Pure. */

#define CRITPATH_MAX 64 /* steps kept, those nearest the end; more are counted */
#define CRITPATH_TOP 8  /* weighted edges, rules and stretches kept */
#define CRITPATH_GAP_MIN_S 1.0

struct units;

/* The build graph's edge of path (parse/ninjagraph.h's ninjagraph_inputs()
 * on graph): its rule, each input to fn; the inputs' count or -ENOENT. */
typedef int (*critpath_inputs_fn)(const void *graph, const char *path, const char **ret_rule,
                                  void (*fn)(void *userdata, const char *input), void *userdata);

struct critpath_step {
        char name[256]; /* the edge's first output; the BuildKit step's name */
        char rule[32];  /* ninja's rule; "" */
        double start_s, end_s, slack_s; /* seconds from the start of the first */
        double mem_mb;                  /* its compile unit's peak (model/units.h); NAN none */
};

struct critpath_weight {
        char name[256]; /* an edge's output, or a rule */
        double weighted_s, s;
};

struct critpath_gap {
        double start_s, end_s;
        double running;      /* edges running, on average over the stretch */
        char waited_for[256]; /* the edge running through it (on the path if one is) */
};

struct critpath {
        size_t n, dropped; /* kept, in order; and the earlier ones left out */
        struct critpath_step step[CRITPATH_MAX];
        double length_s; /* the chain's own time: its steps' durations summed */
        double wall_s;   /* from the start of the first to the end of the last */
        char target[TARGET_FIELD_MAX + 1]; /* BuildKit: the target that set the whole; "" */
        /* ninja only */
        unsigned jobs;   /* -j the stretches are against; 0 none */
        double under_s;  /* time with fewer edges than jobs running */
        size_t nweight, nrule, ngap;
        struct critpath_weight weight[CRITPATH_TOP]; /* most weighted time first */
        struct critpath_weight rule[CRITPATH_TOP];
        struct critpath_gap gap[CRITPATH_TOP]; /* longest first */
};

/* ev[0..n): this run's .ninja_log edges (ms from ninja's start); inputs
 * on g: its graph (NULL: the rules are unknown and the chain is the last
 * edge alone); jobs: ninja's -j. Returns 0, -ENODATA (no edge), -ENOMEM. */
int critpath_ninja(critpath_inputs_fn inputs, const void *g, const struct ninja_edge *ev, size_t n,
                   unsigned jobs, struct critpath *ret);
/* The chain of BuildKit steps that set the build's time: per target, each
 * "[STAGE k/n]" step after step k-1 of its stage, and a COPY/ADD/RUN
 * --from=/--mount=from= STAGE after that stage's last step too; a bake's
 * is the target that ended last. Returns 0 or -ENODATA (no timed step). */
int critpath_buildkit(const struct targets *ts, struct critpath *ret);
/* Each step's peak from the compile unit of that output that ran within
 * it; offset_s: where the path's clock starts on the run's. */
void critpath_units(struct critpath *p, const struct units *u, double offset_s);
/* ninja's -j from a build command's argv (ninja, cmake --build, meson
 * compile), else ninja's default for ncpu. */
unsigned critpath_jobs(char *const *argv, unsigned ncpu);
