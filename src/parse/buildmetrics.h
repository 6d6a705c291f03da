/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/targets.h"

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
        struct sccache_marker markers[BUILDMETRICS_MAX_MARKERS]; /* --sccache-marker, added to
                                                                    or overriding the seed's */
        size_t nmarkers;
        bool no_history; /* do not run docker buildx history inspect */
};

/* The seed's default marker table. */
extern const struct sccache_marker buildmetrics_default_markers[];
extern const size_t buildmetrics_default_nmarkers;

struct buildmetrics;

/* Snapshots the size of the ninja log now, so that only this run's records
 * are read at the end. The config's strings must outlive the object.
 * Returns 0 or -ENOMEM. */
int buildmetrics_new(const struct buildmetrics_config *cfg, struct buildmetrics **ret);
void buildmetrics_free(struct buildmetrics *bm);

/* One line of the build's output (no '\n'); now = seconds since the run
 * started, by buildtel's clock. */
void buildmetrics_feed_line(struct buildmetrics *bm, const char *line, size_t len, double now);

typedef void (*buildmetrics_note_fn)(void *userdata, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The build is over: import the ninja log, the metadata file named in argv
 * (--metadata-file F / --metadata-file=F), buildx history for its refs
 * when docker exists, attribute the compiler-cache stats, and complete the
 * model. Problems are one note each. Call once. */
void buildmetrics_finish(struct buildmetrics *bm, char *const *argv, buildmetrics_note_fn note,
                         void *userdata);

/* The model (valid until free; complete after finish). */
const struct targets *buildmetrics_model(const struct buildmetrics *bm);
