/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/run.h"
#include "model/targets.h"
#include "model/units.h"

/* A recorded run's model for a replay (summarize, report, export): the
 * facts of its targets, its BuildKit steps, slowest ninja edges and
 * compiler-cache blocks, and its compile units, as its history rows or its
 * files beside the CSV hold them. A replay recorder borrows m (its
 * recorded model, recorder_config.recorded) and at finish hands it to its
 * sinks and derives the run's baseline from it as the live run did. */
struct recorded {
        struct run_facts *facts; /* never NULL after recorded_init() */
        struct targets *targets; /* NULL: none */
        struct units *units;     /* NULL: none */
        struct run_model m;      /* targets, facts and units above */
};

/* An empty model (no targets, no units, facts of no run). 0 or -ENOMEM. */
int recorded_init(struct recorded *rc);
void recorded_release(struct recorded *rc);

/* Run row id of st into rc (ri: the run's facts, for its outcome and
 * clock); its units only with_units (the run had process scans: its
 * summary's build mode). A part that cannot be read is left out: returns
 * 0, or the first read's -errno (the rest still read). */
struct store;
int recorded_load_db(struct recorded *rc, struct store *st, int64_t id, const struct run_info *ri,
                     bool with_units);
/* The same from the run's files beside csv (.targets.json, .units.csv). */
void recorded_load_files(struct recorded *rc, const char *csv, const struct run_info *ri);

/* The row id of the run run_id in the history database db (NULL: the
 * default one), for a replay of its files: 0 when there is no database,
 * no such run (one recorded with --no-db), or it cannot be read. */
int64_t recorded_history_row(const char *db, const char *run_id);
