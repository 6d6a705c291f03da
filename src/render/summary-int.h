/* SPDX-License-Identifier: MIT */
#pragma once
/* Shared by the summary's two files: summary.c (the text and JSON as a
 * whole) and summary-units.c (the units and the processes, their section
 * of both). Not for other modules: render/summary.h is the interface. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/run.h"
#include "model/summary.h"
#include "render/summary.h"
#include "util/dbuf.h"

/* The JSON's figure: rounded to decimals (null unknown). */
json_t *summary_jnum(double v, int decimals);

/* The units, the 20 largest, as the JSON's "units" (null: none). */
json_t *summary_junits(const struct summary *s, const char *root);
/* The unit a process label is, as the units table shows it (summary-units.c). */
bool summary_unit_of(const struct summary *s, const char *root, const char *label, double at_s,
                     bool ended, char *buf, size_t cap);
/* The text's units section, and the processes line's tail. */
void summary_units_text(const struct summary *s, const char *root, struct dwriter *w);
void summary_procs_text(const struct run_procs *p, struct dwriter *w);
void summary_guard_text(const struct run_guard *g, struct dwriter *w);
/* The critical path's reading (false: none, p NULL or empty) and its
 * section (summary-path.c). */
struct critpath;
bool summary_path_reading(const struct critpath *p, struct dwriter *w);
void summary_path_text(const struct critpath *p, struct dwriter *w);
