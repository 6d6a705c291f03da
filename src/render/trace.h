/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/spans.h"
#include "model/summary.h"
#include "model/targets.h"
#include "model/units.h"
#include "util/dbuf.h"

/* A recorded run as a Chrome Trace Event Format file (Perfetto UI,
 * chrome://tracing). Each sample's counters (C) and instants (i) go out
 * through trace_output() as they come, so a 24-hour run is never held in
 * memory; the slices (X: the run, model/spans.h's spans) are kept (capped)
 * and written with their lanes and metadata (M) at the end. Times are
 * microseconds from the run's start.
 *
 * Processes: 1 "build" (the run slice, the counters), 2 "targets", 3
 * "ninja", 4 "compile units", 5 "BuildKit steps" (lanes per target, named
 * after it); one thread per lane. */

#define TRACE_SLICES_MAX 1000000 /* slices kept; more are counted in a note event */

struct trace_config {
        struct summary_config thresholds; /* near-OOM and low-disk, the run's own */
        size_t max_slices;                /* 0: TRACE_SLICES_MAX */
};

struct trace;

/* A formatter (no I/O). ri must outlive it. The header is appended to
 * trace_output() here. Returns 0 or -ENOMEM. */
int trace_new(const struct trace_config *cfg, const struct run_info *ri, struct trace **ret);
/* The bytes formatted so far and not yet taken, owned by t: the caller
 * writes them and may dbuf_reset() the buffer at any time. */
struct dbuf *trace_output(struct trace *t);
/* NULL is a no-op. */
void trace_free(struct trace *t);

/* One sample, in order: its counters and any instant it starts. */
int trace_sample(struct trace *t, const struct sample *s);
/* The slices, which the caller adds with spans_add_*() of model/spans.h
 * (their facts and strings borrowed until trace_finish()). A step's target
 * is named target (NULL or "": none or several); its lanes are its
 * target's own. Owned by t. */
struct spans *trace_spans(struct trace *t);
/* How many BuildKit steps the model left out past its cap (an instant
 * says so at the end when any). */
void trace_set_steps_dropped(struct trace *t, uint32_t n);
/* The run's end (seconds on its clock) when run_info does not give it. */
void trace_set_end(struct trace *t, double end_s);
/* Append the slices, their lanes and the metadata; close the JSON.
 * Returns 0 or -ENOMEM. */
int trace_finish(struct trace *t);
