/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "store/store.h"

/* A stored run read back whole, as the model structs the sinks take
 * (`buildtel export` sends it to a collector again): every sample, and
 * the targets. The run's facts come from history_run_info() (history.h). */

/* Called with each sample of the run, in order. The sample's strings are
 * borrowed for the duration of the call. A negative return stops the
 * walk and is returned. */
typedef int (*history_sample_fn)(void *userdata, const struct sample *s);

/* Walk every sample of run row id. Columns the file lacks (an older
 * buildtel wrote it) read as unknown. Returns the number of samples, or
 * -errno (-STORE_ENOTDB for a corrupt file), or what fn returned. */
int64_t history_run_samples(struct store *st, int64_t id, history_sample_fn fn, void *userdata);

/* The targets of run row id as the run stored them: the facts its sinks
 * reported (targets_facts()), in the order the run stored them (at most
 * TARGETS_MAX; names and fields cut as targets.h cuts them), and the run's
 * step totals, into *ret (caller-owned). Unknown stays unknown: a NULL
 * duration is NAN, NULL counts are absent, a NULL success unknown. The
 * run's outcome and duration are not touched (targets_facts_outcome() on
 * history_run_info()'s facts gives them). Returns the number of targets or
 * -errno; *ret is untouched on failure. */
int history_run_targets(struct store *st, int64_t id, struct run_facts *ret);

/* The thresholds the run's summary was made with (its stored summary),
 * so a replay counts near-OOM and low-disk samples as the run did. Only
 * the ones found replace the values in *ret. Returns how many were found
 * (0: a running run, or an older file) or -errno. */
int history_run_thresholds(struct store *st, int64_t id, struct summary_config *ret);
