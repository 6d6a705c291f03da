/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "out/otlp-encode.h"
#include "parse/otelenv.h"
#include "util/dbuf.h"

/* The run as OTLP spans (OpenTelemetry CI/CD semantic conventions, 1.43):
 * one span for the run, named "buildtel run <argv0>", under the caller's
 * TRACEPARENT when there was one; a child span per target with times, a
 * span per BuildKit step that ended (under its target's), a child per slow
 * ninja edge the model kept; at most cfg->max_spans spans under the run span,
 * in that order of priority; span events for the OOM kills
 * and the first near-OOM and low-disk samples the summary found. Every
 * value is the model's; nothing is derived here but the span ids of the
 * children (from the run span's, so a re-export names them the same). */

struct run_info;
struct run_facts;
struct summary;
struct targets;

/* Ninja edges on the run's clock, slowest first. */
struct otlp_edge {
        double start_s, end_s;
        char output[256];
};
struct otlp_edges {
        struct otlp_edge *v;
        size_t n;
};

/* The slowest max edges of the last ninja run of a .ninja_log (buf, last
 * written at mtime, epoch seconds), on the clock of run: ninja appends a
 * line as each edge ends, so mtime is the end of its last edge and ninja
 * started that long before it. *ret is the caller's (otlp_edges_release).
 * 0, -EINVAL (not a .ninja_log of version 5 to 7), -ESTALE (written
 * before the run, or well after it: another build's), -ENOMEM. */
int otlp_trace_ninja_edges(const char *buf, size_t len, double mtime, const struct run_info *run,
                           size_t max, struct otlp_edges *ret);
void otlp_edges_release(struct otlp_edges *e);
/* The same from the file at path (at most 1 GiB); -errno when unreadable. */
int otlp_trace_read_ninja(const char *path, const struct run_info *run, size_t max,
                          struct otlp_edges *ret);

struct otlp_trace_input {
        const struct otel_config *cfg; /* span, parent, tracestate, CI values */
        const struct run_info *run;
        const struct run_facts *facts;    /* NULL: run span only */
        const struct summary *summary;    /* NULL: no events */
        const struct targets *targets;    /* BuildKit steps; NULL: none */
        const struct otlp_edges *ninja;   /* ninja edges; NULL: none */
        const struct otlp_attr *resource; /* borrowed */
        size_t nresource;
};

/* The run span's error.type for a run: the signal's name ("SIGKILL") or
 * the exit code ("1"); NULL on success or unknown. buf holds 16 bytes. */
const char *otlp_trace_error_type(const struct run_info *run, char *buf, size_t cap);

/* The run span's cicd.pipeline.task.run.result: success, failure,
 * cancellation, or error (the outcome is unknown: buildtel was killed). */
const char *otlp_trace_result(int outcome);

/* Append an ExportTraceServiceRequest to out (JSON with json). 0, -EINVAL
 * (the run span's ids are not set) or -ENOMEM. */
int otlp_trace_encode(const struct otlp_trace_input *in, bool json, struct dbuf *out);

struct otlp_sender;
/* Encode the spans as cfg says (traces_protocol) and queue them on s; 0
 * without a traces URL. 0, -EINVAL or -ENOMEM. */
int otlp_trace_submit(struct otlp_sender *s, const struct otlp_trace_input *in, double now);
/* The same with the edges of cfg->ninja_log (--ninja-log) when it is one of
 * this run's; a log that is not is left out. */
int otlp_trace_submit_run(struct otlp_sender *s, struct otlp_trace_input *in, double now);
