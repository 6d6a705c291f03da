/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/targets.h"
#include "util/dbuf.h"

/* Human-readable lines about the targets (for the terminal and the
 * summary text): the figures of f, the rest of ts (NULL: none); appended
 * to out. Returns 0 or -ENOMEM. Nothing is appended when nothing was seen. */
int targets_render_text(const struct targets *ts, const struct run_facts *f, struct dbuf *out);
