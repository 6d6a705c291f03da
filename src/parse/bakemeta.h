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
        uint32_t total_steps, cached_steps, completed_steps;
        bool steps_set; /* NumTotalSteps was there */
};

/* Parse one `history inspect --format json` object. Returns 0, or -EINVAL
 * when it is not an object with a Ref (*ret untouched). */
int buildx_history_parse(const char *buf, size_t len, struct buildx_history *ret);

/* Fill in the target whose ref is h->ref (or, with no such target, the one
 * named h->name). Returns the target index or -ENOENT. */
int buildx_history_apply(const struct buildx_history *h, struct targets *ts);
