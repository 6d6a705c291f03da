/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "parse/bkrun.h"

/* The build's output through every parser of the live path, as `run` reads
 * it: each chunk named to logctx and the build metrics (logctx_chunk,
 * buildmetrics_chunk), split into lines (linebuf, one per stream), and each
 * line's BuildKit prefix parsed once (bkline_parse) for the RUN-step
 * scanner (bkrun: the headers and rawjson lines), the build-metrics
 * parsers, and the stage and context (logctx: the lines the build metrics
 * do not take). The recorder and bench-parse both run this, so the bench
 * measures the recorder's own path. */

struct buildmetrics;
struct logctx;

#define OUTPARSE_DRIVER_MAX 63 /* bytes kept of the driver's name (outparse_driver) */

struct outparse_config {
        struct buildmetrics *metrics; /* borrowed */
        struct logctx *logctx;        /* borrowed */
        bkrun_fn on_run;              /* each RUN step a line names; NULL: not looked for */
        void *userdata;
};

struct outparse;

/* 0, -ENOMEM. */
int outparse_new(const struct outparse_config *cfg, struct outparse **ret);
void outparse_free(struct outparse *op);

/* A chunk of stream (1 stdout, 2 stderr) that arrived at now (seconds on
 * the run's clock). */
void outparse_chunk(struct outparse *op, int stream, const char *buf, size_t len, double now);
/* The stream ended at now: its partial last line, if any. */
void outparse_eof(struct outparse *op, int stream, double now);
/* One line from elsewhere (watch --stage-log-dir), at now. */
void outparse_line(struct outparse *op, const char *line, size_t len, double now);
/* When the lines being parsed arrived (for the parsers' callbacks). */
double outparse_now(const struct outparse *op);
/* The BuildKit driver the output named first ("#0 building with ...
 * instance using DRIVER driver"), cut at OUTPARSE_DRIVER_MAX bytes, or "". */
const char *outparse_driver(const struct outparse *op);
const char *outparse_builder(const struct outparse *op); /* its name, "" unknown */
/* How many lines were parsed. */
unsigned long long outparse_lines(const struct outparse *op);
