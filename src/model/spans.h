/* SPDX-License-Identifier: MIT */
#pragma once
/* The run's spans: its targets, BuildKit steps, ninja edges and compile
 * units, each with its parent (-1: the run, run_info's), its times on the
 * run's clock and its fact. The Chrome trace, the OTLP spans and the
 * report's lanes encode this array and decide none of it: which spans
 * exist (finite times, end not before start), their parents, their order
 * and the one cap (the first max added; targets, steps, units, edges). */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/run.h"
#include "model/targets.h"
#include "model/units.h"

enum span_kind { SPAN_TARGET, SPAN_STEP, SPAN_EDGE, SPAN_UNIT, SPAN_KINDS };

struct span {
        enum span_kind kind;
        const char *name; /* len bytes: the target's, step's, edge's output, unit's */
        size_t len;
        ssize_t parent;               /* a step's target span; -1: the run */
        double start_s, end_s;        /* seconds on the run's clock, finite, end >= start */
        int group;                    /* a step's model target + 1 (0: none or several) */
        const char *target;           /* a step's target's name ("" none); else NULL */
        const struct target_fact *tf; /* what the encoders show: a target's fact, */
        const struct step_fact *sf;   /* a step's, */
        const struct unit *unit;      /* a unit's; else NULL */
        bool critical;                /* an edge or step on the critical path (ts->path) */
};

struct spans {
        struct span *v;
        size_t n, cap;    /* cap: allocated */
        size_t max;       /* the spans kept; more are counted in dropped */
        uint64_t dropped; /* past max */
};

/* Each adds one span, borrowing its fact and strings (until
 * spans_release()), when its times are finite and in order and fewer
 * than max are kept (else counts it dropped). 0, or -ENOMEM. A step's
 * parent is the first target span named target (NULL or "": none). */
int spans_add_target(struct spans *S, const struct target_fact *f);
int spans_add_step(struct spans *S, const struct step_fact *f, const char *target);
int spans_add_unit(struct spans *S, const struct unit *u);
int spans_add_edge(struct spans *S, double start_s, double end_s, const char *out, size_t len);

/* The model's spans up to S->max: the targets of facts (NULL: none), the
 * steps of ts, then its ninja edges slowest first, placed on the run's
 * clock by targets_ninja_offset() (none when it cannot); those on ts->path
 * marked critical. 0 or -ENOMEM. */
int spans_derive(struct spans *S, const struct run_info *ri, const struct run_facts *facts,
                 const struct targets *ts);

/* Marks critical the spans of ts->path's steps (ts NULL or without one:
 * none), by name and start (ninja's placed on the run's clock, to its
 * millisecond). */
void spans_mark_path(struct spans *S, const struct run_info *ri, const struct targets *ts);

/* Frees the array; S may be reused. NULL is a no-op. */
void spans_release(struct spans *S);
