/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/targets.h"

/* The chain of ninja edges that set the build's wall time (issue 38): from
 * the edge that ended last, back through the input each one waited for
 * longest (of its inputs built in this run, the one that ended last; a
 * phony input stands for what it names), each with its slack (how long it
 * could have started earlier: its start less that input's end, or less
 * ninja's start for the first). Pure. */

#define CRITPATH_MAX 64 /* steps kept, those nearest the end; more are counted */

struct ninjagraph;

struct critpath_step {
        char name[256]; /* the edge's first output */
        char rule[32];
        double start_s, end_s, slack_s; /* seconds from ninja's start */
};

struct critpath {
        size_t n, dropped; /* kept, in order; and the earlier ones left out */
        struct critpath_step step[CRITPATH_MAX];
        double length_s; /* the chain's own time: its edges' durations summed */
        double wall_s;   /* ninja's: the last edge's end */
};

/* ev[0..n): this run's .ninja_log edges (times in ms from ninja's start).
 * Returns 0, -ENODATA (no edge), -ENOMEM. */
int critpath_find(const struct ninjagraph *g, const struct ninja_edge *ev, size_t n,
                  struct critpath *ret);
