/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/units.h"

/* The job's unit ledger (issue 37): each unit's usual over the job's
 * recent runs, from their stored units tables. A unit a compiler cache
 * served compiled nothing: no measure of its memory, left out. Units are
 * the table's key (kind, name, path). Pure: the runs are read elsewhere. */

#define LEDGER_RUNS 10 /* the job's runs read, newest first */

struct ledger_unit {
        int kind; /* enum units_kind */
        char name[UNITS_NAME_MAX + 1];
        char path[UNITS_PATH_MAX + 1]; /* "" unknown */
        char dir[UNITS_NAME_MAX + 1];  /* its output's directory (its first run's); "" */
        double peak_mb, cpu_s, wall_s; /* the medians of its runs */
        double start_s;                /* and of when it started in them */
        unsigned runs;                 /* how many measured it */
};

struct ledger;

/* Returns 0 or -ENOMEM. */
int ledger_new(struct ledger **ret);
void ledger_free(struct ledger *l); /* NULL is a no-op */

/* One run's units; at most LEDGER_RUNS runs count (later calls: ignored).
 * Returns 0 or -ENOMEM. */
int ledger_add_run(struct ledger *l, const struct unit *rows, size_t n);

/* How many units; the i-th heaviest by its usual peak (i < count). */
size_t ledger_count(const struct ledger *l);
const struct ledger_unit *ledger_at(struct ledger *l, size_t i);

/* The heaviest unit of kind and path, every name of it ("a.cpp" and
 * "a.cpp [c++17]"); path "" or NULL: of kind and name (or "name [tag]").
 * NULL when the ledger has none. */
const struct ledger_unit *ledger_find(struct ledger *l, int kind, const char *name,
                                      const char *path);
