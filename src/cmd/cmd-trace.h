/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "model/summary.h"
#include "sinks/sink.h"
#include "store/store.h"

/* A recorded run as a Chrome trace (out/trace.h): `buildtel export --trace`
 * and `run --trace-file`. These print their own errors. */

struct trace_job {
        const char *out_path;             /* "-": stdout; NULL: out_dir/trace-<run-id>.json */
        const char *out_dir;              /* NULL: the current directory */
        const char *ninja_log;            /* the run's --ninja-log; NULL: no ninja edges */
        const char *cmd;                  /* "export", "run": for messages */
        bool quiet;                       /* no line saying where it went */
};

/* The trace of the run rp replays (pipeline/replay.h; replay_through()
 * is called here). Returns 0, or 1 after printing why. */
struct replay;
int trace_write(const struct trace_job *j, struct replay *rp);

struct recorder;
struct recorder_config;

/* The ninja edges of a trace, on the run's clock (sink_trace's). */
struct trace_edges {
        struct trace_edge *v;
        size_t n, cap;
        struct trace_names *names; /* the --ninja-log's names, which v[].out point into */
};

/* run --trace-file: the trace sink among the live run's sinks,
 * trace-<run-id>.json in its log directory. */
struct trace_run {
        struct trace_sink_job job;
        struct trace_edges edges;
        const char *ninja_log;
        bool quiet;
};

/* Before recorder_new: the sink added to cfg's (cfg->sinks and
 * sink_userdata then point into tr, which must outlive the recorder). */
void trace_run_init(struct trace_run *tr, struct recorder_config *cfg);
/* After the build, before recorder_finish: the ninja edges of its
 * --ninja-log (those r's end counts: notes printed), or cancel: no trace
 * (the build never ran). */
void trace_run_edges(struct trace_run *tr, const struct recorder *r, const struct run_info *ri,
                     bool cancel);
/* After recorder_finish: where it went, or why not. Returns 0, or 1 after
 * printing why. */
int trace_run_report(const struct trace_run *tr, const struct recorder *r, const char *run_id);
void trace_run_release(struct trace_run *tr);
