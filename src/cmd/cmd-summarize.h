/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"
#include "model/units.h"

/* The run's files beside its CSV, as `summarize` reads them (shared with
 * `report`, which draws the same run). */

/* "x/resources-ID.csv" -> "x/resources-ID<suffix>", malloc'd; NULL: ENOMEM. */
char *beside_path(const char *csv, const char *suffix);
/* The units of resources-<id>.units.csv beside csv; NULL when none. */
struct units *load_units_file(const char *csv);
/* The facts of resources-<id>.run.json beside csv into *ri (unknown when
 * missing). */
void load_run_info(const char *csv, struct run_info *ri);
