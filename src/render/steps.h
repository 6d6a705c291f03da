/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/targets.h"
#include "util/dbuf.h"

/* What BuildKit's RUN steps used inside the daemon (the step facts'
 * struct step_exec), for the summary files and the terminal. Nothing is
 * appended when no step was measured. 0 or -ENOMEM. */

/* summary.txt: the step that peaked, each OOM kill (victim, step, target,
 * time), and a line per measured step. */
int steps_render_text(const struct targets *ts, struct dbuf *out);
/* The terminal: the step that peaked and the OOM kills only. */
int steps_render_short(const struct targets *ts, struct dbuf *out);
/* The summary JSON (a complete object in js) gets "buildkit_execs": the
 * peak step, the OOM kills, and the measured steps; js is rewritten in the
 * same 2-space form. Unchanged when nothing was measured. */
int steps_merge_json(const struct targets *ts, struct dbuf *js);
