/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/targets.h"
#include "parse/buildkit.h"

/* The build's own output turned into the targets model: BuildKit (plain
 * and rawjson), ninja/make progress, sccache/ccache stats, and at the end
 * the .ninja_log, the bake --metadata-file and buildx history. One object,
 * fed one line at a time by the recorder. */

#define BUILDMETRICS_MAX_MARKERS 32

struct sccache_marker {
        const char *target; /* ends at NUL or '=' ("TARGET=PATH" as given) */
        const char *path;
};

struct buildmetrics_config {
        const char *targets;   /* --targets a,b (NULL: from the stream) */
        const char *ninja_log; /* --ninja-log PATH (NULL: none) */
        bool ninja_log_found;  /* found from the command (ninjaargv): no note when missing */
        struct sccache_marker markers[BUILDMETRICS_MAX_MARKERS]; /* --sccache-marker, added to
                                                                    or overriding the seed's */
        size_t nmarkers;
        bool no_history; /* do not run docker buildx history (ls, inspect, logs) */
        /* rawjson: the plain-text form of its vertex events, for the
         * context (parse/buildkit.h buildkit_ctx_fn); NULL none */
        void (*ctx_line)(void *userdata, const char *line, size_t len);
        void *ctx_userdata;
};

struct buildmetrics;

/* The config's strings must outlive the object. 0 or -ENOMEM. */
int buildmetrics_new(const struct buildmetrics_config *cfg, struct buildmetrics **ret);
void buildmetrics_free(struct buildmetrics *bm);

/* One line of the build's output (no '\n'), bl its bkline_parse(); now:
 * buildtel's clock. Returns true when the line was part of a rawjson
 * object (its context went to cfg.ctx_line), which names nothing itself. */
bool buildmetrics_feed_line_bk(struct buildmetrics *bm, const char *line, size_t len, double now,
                               const struct bkline *bl);

/* The chunk the next lines come from (as logctx_chunk): only the last
 * progress line that parses sets the figures, so a chunk's are parsed
 * from the end when it goes (NULL, 0, or the next chunk) or the model is
 * read. A line outside the chunk is parsed at once. */
void buildmetrics_chunk(struct buildmetrics *bm, const char *buf, size_t len);

/* The build is over: attribute the compiler-cache stats and complete the
 * model. Call once, before the end-of-run inputs below. */
void buildmetrics_finish(struct buildmetrics *bm);

/* The end-of-run inputs, as buffers (the pipeline reads the files and runs
 * the tools: pipeline/recorder.c). */

/* This run's .ninja_log records (ninjalog_window()): the edge function
 * (userdata bm) of their walk, then their edge count and the log's mtime
 * (0 edges, mtime 0: nothing ran). */
void buildmetrics_ninja_edge(void *bm, int64_t start_ms, int64_t end_ms, const char *out,
                             size_t out_len);
void buildmetrics_ninja_done(struct buildmetrics *bm, uint64_t edges, double mtime);
/* The `--metadata-file F` (or `=F`) of the build's argv, borrowed; NULL:
 * none. */
const char *buildmetrics_metadata_file(char *const *argv);
/* That file's bytes (parse/bakemeta.h): 0, -EINVAL (not a JSON object) or
 * -ENOMEM. */
int buildmetrics_metadata(struct buildmetrics *bm, const char *buf, size_t len);
/* `docker buildx history inspect --format json REF` of a target's ref
 * (the model's t[i].ref): 0, or -EINVAL (not the expected JSON). */
int buildmetrics_history(struct buildmetrics *bm, const char *buf, size_t len);
/* `docker buildx history ls --format json`: each target without a ref gets
 * the one record created in [from_s, to_s] (Unix seconds) that names it
 * (any, for a one-target build). Returns the targets given a ref, or
 * -EINVAL (output, but no record); *ret_ambiguous: targets left without
 * one because several records could be theirs. */
int buildmetrics_history_list(struct buildmetrics *bm, const char *buf, size_t len, double from_s,
                              double to_s, uint32_t *ret_ambiguous);
/* `docker buildx history logs ID` of the target whose ref is ref, replayed
 * through a parser of its own (shared steps included): its history steps
 * and cached, and its marker step's sccache stats when the live stream had
 * none. 0, -ENOENT (no target has that ref), -EINVAL (no BuildKit), -ENOMEM. */
int buildmetrics_history_logs(struct buildmetrics *bm, const char *ref, const char *buf,
                              size_t len);
/* After every target's buildmetrics_history_logs(): each record that
 * ended ok gets the steps it lacks (buildkit_complete_steps()). */
void buildmetrics_history_done(struct buildmetrics *bm);

/* A `docker build` whose stream gave us nothing, no target (its TTY
 * progress UI is cursor-addressed, never parsed): its one target,
 * "default", so that its record in the builder's history can be found and
 * replayed. */
void buildmetrics_unseen_build(struct buildmetrics *bm);
/* And when no record of it was found: that target goes again (nothing is
 * shown for a build nothing was read of). */
void buildmetrics_unseen_drop(struct buildmetrics *bm);

/* The model (valid until free; complete after finish). Not const: the
 * progress lines of a chunk are parsed when it is read (buildmetrics_chunk). */
const struct targets *buildmetrics_model(struct buildmetrics *bm);
/* The run's critical path (model/critpath.h), owned from here on. */
void buildmetrics_set_path(struct buildmetrics *bm, struct critpath *p);
