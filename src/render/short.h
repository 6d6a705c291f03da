/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/baseline.h"
#include "model/execs.h"
#include "model/run.h"
#include "model/summary.h"
#include "util/dbuf.h"

/* The short text a run says on the terminal, from its model: each function
 * appends to out and returns 0 or -ENOMEM. */

/* At the end of a run: the summary's short lines, the targets', the RUN
 * steps' peak and OOM lines, the run against its job's usual. */
int short_render(const struct run_model *m, struct dbuf *out);
/* The newest OOM kill of b (b->noom > 0), said at once. */
int short_render_oom(const struct summary_build *b, struct dbuf *out);
/* What the build's figures cover when its RUN steps could not all be
 * followed into BuildKit; nothing when they were (or there were none). */
int short_render_execs(const struct exec_cover *c, struct dbuf *out);
/* The stderr lines: "buildtel: slower than usual: 14m02s against 9m10s
 * (+53 %, last 12 runs); layer cache of pytorch 12 % against 91 %\n", or
 * nothing when every figure is within noise or the job has fewer than
 * BASELINE_MIN_RUNS earlier runs. Returns 0 or -ENOMEM. */
int render_baseline_short(const struct baseline *b, struct dbuf *out);
/* The run's own finding of figure fig ("duration_s"), not a target's;
 * NULL when b (may be NULL) has none. */
const struct baseline_finding *render_baseline_run(const struct baseline *b, const char *fig);
/* A finding's value or usual in its unit ("14m02s", "91 %", "1.2 GiB"). */
int render_baseline_value(const struct baseline_finding *f, double v, struct dbuf *out);
