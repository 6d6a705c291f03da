/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/plan.h"
#include "util/dbuf.h"

struct ledger;

/* The plan in words, with the snippets that put the heavy units in a pool
 * (ninja, CMake: per source from 4.2, per target before; make has none),
 * and as JSON (the same figures, the snippets as strings). job and l as
 * plan_make had them. Returns 0 or -ENOMEM. */
int render_plan_text(const char *job, unsigned runs, struct ledger *l, const struct plan *p,
                     struct dbuf *out);
int render_plan_json(const char *job, unsigned runs, struct ledger *l, const struct plan *p,
                     struct dbuf *out);
