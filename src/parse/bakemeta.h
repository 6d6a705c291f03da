/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/targets.h"

/* What buildx writes about a build: the --metadata-file of build and bake,
 * and `docker buildx history inspect --format json REF` (buildx >= 0.21;
 * platform/buildx.h runs it). */

#define BAKEMETA_MAX_FILE (64u << 20)

/* Merge a --metadata-file into ts: per target (bake: each top-level object
 * holding "buildx.build.ref"; build: the flat object, for the only target
 * or "default"), builder, node and ref from "<builder>/<node>/<ref>".
 * Returns the number of metadata entries that gave a ref (names equal in
 * their first TARGET_NAME_MAX bytes share one target), or -EINVAL for a
 * buffer that is not a JSON object. */
int bakemeta_parse(const char *buf, size_t len, struct targets *ts);

struct buildx_history {
        char name[TARGET_NAME_MAX + 1];
        char ref[TARGET_FIELD_MAX + 1];
        char status[16]; /* completed | running | failed | canceled */
        char vcs_revision[80];
        double duration_s; /* Duration is in ns */
        uint32_t total_steps, cached_steps, completed_steps; /* 0 when absent */
};

/* Parse one `history inspect --format json` object. Returns 0, or -EINVAL
 * when it is not an object with a Ref (*ret untouched). */
int buildx_history_parse(const char *buf, size_t len, struct buildx_history *ret);

/* Fill in the target whose ref is h->ref (or, with no such target, the one
 * named h->name): status, duration, revision. Its steps and cached are
 * not NumTotalSteps/NumCachedSteps (those count the internal vertices):
 * they come from the record's replayed log (buildmetrics). Returns the
 * target index or -ENOENT. */
int buildx_history_apply(const struct buildx_history *h, struct targets *ts);

/* One line of `docker buildx history ls --format json`. */
struct buildx_record {
        char name[TARGET_NAME_MAX + 1]; /* "ctx" (build), "ctx (app)" (bake) */
        char ref[TARGET_FIELD_MAX + 1]; /* the bare id (ls prints <builder>/<node>/<id>) */
        double created_s;               /* Unix seconds; NAN unknown */
        double duration_s;              /* completed_at - created_at; NAN unknown */
        char status[16]; /* as inspect spells it: "completed", "failed", "canceled"; "" other */
};
typedef void (*buildx_record_fn)(void *userdata, const struct buildx_record *r);

/* Each record of a `history ls --format json` output (one object per
 * line; lines that are not one are skipped) to fn. Returns the number of
 * records, or -EINVAL when no line was a record. */
int buildx_history_ls_parse(const char *buf, size_t len, buildx_record_fn fn, void *userdata);

/* The bare id of a ref in any form buildx prints ("<builder>/<node>/<id>"
 * or "<id>"); points into ref. */
const char *buildx_bare_id(const char *ref);

/* The bake target a record's name names ("ctx (app)": "app"), cut to
 * TARGET_NAME_MAX, into out (TARGET_NAME_MAX + 1 bytes); false (out "")
 * for a build's record ("ctx"). */
bool buildx_record_target(const char *name, char *out);
