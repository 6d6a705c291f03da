/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "store/history.h"
#include "store/store.h"

/* A stored run read back whole, as the model structs the pipeline and the
 * sinks take: what a replay of a stored run (summarize RUN, export RUN)
 * needs. A replay is
 *
 *     store_run_find(st, spec, &id);      which run
 *     store_run_get(st, id, &run);        its facts (run.info), state, thresholds
 *     store_run_thresholds(&run, &cfg);   the summary config it was made with
 *     store_samples_each(st, id, fn, p);  every sample, in time order
 *     store_targets_get(st, id, facts);   its targets, as the facts its sinks sent
 *
 * with no SQL and no database handle in the caller. */

/* Called with each sample of the run, in order of time (its sequence
 * number). The sample's strings are borrowed for the duration of the call.
 * A negative return stops the walk and is returned. */
typedef int (*store_sample_fn)(void *userdata, const struct sample *s);

/* Walk every sample of run row id. Columns the file lacks (an older
 * buildtel wrote it) read as unknown (NAN, ""). Returns the number of
 * samples, or -errno (-STORE_ENOTDB for a corrupt file, -EBUSY locked), or
 * what fn returned. */
int64_t store_samples_each(struct store *st, int64_t id, store_sample_fn fn, void *userdata);

/* The targets of run row id as the run stored them: the facts its sinks
 * reported (targets_facts()), in the order the run stored them (at most
 * TARGETS_MAX; names and fields cut as targets.h cuts them), and the run's
 * step totals, into *ret (caller-owned). Unknown stays unknown: a NULL
 * duration is NAN, NULL counts are absent, a NULL success unknown. The
 * run's outcome and duration are not touched (targets_facts(NULL, ...) on
 * store_run_get()'s facts gives them). Returns the number of targets or
 * -errno; *ret is untouched on failure. */
int store_targets_get(struct store *st, int64_t id, struct run_facts *ret);

/* The compiler-cache stats blocks the run's log printed (its "log-first"
 * and "log-last" snapshots) back into ts->cc_log, seen on the run's clock
 * (start_epoch: the run's). blocks reads 2 when a first and a last were
 * stored (the log may have printed more between them), 1 for a last only.
 * 0 or -errno. */
int store_cc_log_get(struct store *st, int64_t run, double start_epoch, struct targets *ts);

/* The thresholds the run's summary was made with (its stored summary), so
 * a replay counts near-OOM and low-disk samples as the run did: the ones
 * the row holds replace those in *cfg. Returns how many did (0: a running
 * run, or an older file). */
int store_run_thresholds(const struct store_run *r, struct summary_config *cfg);
