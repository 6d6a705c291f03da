/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"
#include "model/targets.h"
#include "model/units.h"

/* The run's files beside its CSV, read as `summarize`, `report` and
 * `export --trace` read them (names and parsers: runfiles/names.h). */

/* The units of resources-<id>.units.csv beside csv; NULL when none. */
struct units *load_units_file(const char *csv);
/* The facts of resources-<id>.run.json beside csv into *ri (unknown when
 * missing). */
void load_run_info(const char *csv, struct run_info *ri);
/* The targets of resources-<id>.targets.json beside csv appended to f,
 * and *ret_ts (malloc'd, targets_release() and free()) its steps and
 * slowest edges; *ret_ts NULL when there is no readable file. */
void load_targets_file(const char *csv, struct run_facts *f, struct targets **ret_ts);
