/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/execs.h"
#include "parse/bkrun.h"

/* BuildKit's own record of what each RUN step used: the provenance of a
 * build's history record (`docker buildx history inspect attachment
 * --type provenance REF`; SLSA v0.2 or v1), whose LLB steps carry the
 * samples of BuildKit's cgroup v2 sampler (moby/buildkit#3860; none on a
 * cgroup v1 or hybrid host). */

/* One exec step of the record: its command as bkrun_argv_cmd() makes it,
 * as written (cmd) and with the step's environment expanded (xcmd, the
 * form the progress output prints a build argument in), and its usage
 * (u.set false: the record has no samples for it). */
struct bkrecord_step {
        char cmd[BKRUN_CMD_MAX + 1], xcmd[BKRUN_CMD_MAX + 1];
        struct step_exec u;
};

typedef void (*bkrecord_fn)(void *userdata, const struct bkrecord_step *st);

/* cb gets each exec step in the record's order. Returns how many had
 * samples, -EINVAL when buf is not a provenance predicate (or an in-toto
 * statement holding one). */
int bkrecord_parse(const char *buf, size_t len, bkrecord_fn cb, void *userdata);
