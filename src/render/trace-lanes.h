/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Lanes for concurrent slices, as ninjatracing assigns them: walking the
 * slices by start time, each goes to the lowest-numbered lane that is free
 * at its start (its last slice ended at or before it), else to a new lane.
 * No two slices of one lane overlap, so they nest trivially per lane. */

struct trace_span {
        int64_t start, end; /* microseconds; end >= start */
};

/* Lanes for spans[0..n), which must be sorted by start: lane[i] (from 0)
 * per span. Returns the number of lanes used, or -ENOMEM. */
int64_t trace_lanes_assign(const struct trace_span *spans, size_t n, uint32_t *lane);
