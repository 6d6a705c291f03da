/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/targets.h"
#include "util/dbuf.h"

/* resources-<id>.targets.json: the figures of f (unknown ones null; success
 * true, false or null), the run's totals, the failing steps, slowest edges,
 * BuildKit steps and kept ninja edges of ts (NULL: none; 2-space indent,
 * trailing newline), appended to out. 0 or -ENOMEM. */
int targetsjson_format(const struct targets *ts, const struct run_facts *f, struct dbuf *out);

/* Such a file read back from buf: its targets appended to f (up to
 * TARGETS_MAX; each one's figures range checked: counts >= 0, cached
 * clamped to steps, ratios derived), and its slowest ninja edges
 * (durations, each from 0), its kept ninja edges with their times and
 * BuildKit steps into ts (an initialized struct targets).
 * Returns the number of targets appended, -EINVAL when buf is not a JSON
 * object, or -ENOMEM. */
int targetsjson_parse(const char *buf, size_t len, struct run_facts *f, struct targets *ts);

/* A step's exec figures as a JSON object (a json_t *, new reference), JSON
 * null when not measured: the form of targets.json and the summary JSON. */
struct json_t;
struct json_t *targetsjson_exec(const struct step_exec *e);

/* The critical path (model/critpath.h) as a JSON object (new reference;
 * null for NULL), and such an object read back into a new *ret (freeing
 * the old): 1, 0 when o is not one (*ret untouched), -ENOMEM. */
struct critpath;
struct json_t *targetsjson_path(const struct critpath *p);
int targetsjson_path_parse(struct json_t *o, struct critpath **ret);
/* The same from its text (NULL: none). */
int targetsjson_path_load(const char *text, struct critpath **ret);
