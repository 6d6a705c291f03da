/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "render/otlp-encode.h"
#include "parse/otelenv.h"
#include "util/dbuf.h"

/* The run as OTLP spans (OpenTelemetry CI/CD semantic conventions, 1.43):
 * one span for the run, named "buildtel run <argv0>", under the caller's
 * TRACEPARENT when there was one; under it the spans of model/spans.h
 * (spans_derive(): targets, BuildKit steps under their target's, ninja
 * edges slowest first; at most cfg->max_spans); span events for the OOM kills
 * and the first near-OOM and low-disk samples the summary found. Every
 * value is the model's; nothing is derived here but the span ids of the
 * children (from the run span's, so a re-export names them the same). */

struct run_info;
struct run_facts;
struct summary;
struct targets;

struct otlp_trace_input {
        const struct otel_config *cfg; /* span, parent, tracestate, CI values */
        const struct run_info *run;
        const struct run_facts *facts;    /* NULL: run span only */
        const struct summary *summary;    /* NULL: no events */
        const struct targets *targets;    /* BuildKit steps, ninja edges; NULL: none */
        const struct otlp_attr *resource; /* borrowed */
        size_t nresource;
};

/* Append an ExportTraceServiceRequest to out (JSON with json). 0, -EINVAL
 * (the run span's ids are not set) or -ENOMEM. */
int otlp_trace_encode(const struct otlp_trace_input *in, bool json, struct dbuf *out);
