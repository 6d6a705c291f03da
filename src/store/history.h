/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "model/run.h"
#include "model/summary.h"
#include "store/store.h"

/* The run history as a source: what status, inspect, layers, cache and
 * summarize read back from the database (store.h). Results are jansson
 * values (json_t *, owned by the caller) with stable keys: the commands
 * print them as --json directly and render their tables from them.
 *
 * A run's state: "finished"; "running" while its recorder is alive (same
 * host and boot, and the recorder's pid has the start time it recorded);
 * "incomplete" when the row was never completed and its recorder is gone
 * (buildtel was SIGKILLed, the machine rebooted). A running row of another
 * host cannot be checked and reads as "running". */

struct json_t;

/* Recent runs, newest first: start at or after since (NAN: any), at most
 * limit (<= 0: no limit). Returns 0 or -errno. */
int history_runs(struct store *st, double since, int64_t limit, struct json_t **ret);

/* The row id of spec: NULL or "" the latest run; else an exact run id, or
 * a prefix of exactly one. -ENOENT none, -EEXIST ambiguous prefix. */
int history_find_run(struct store *st, const char *spec, int64_t *ret_id);

/* One run with its figures, targets, and compiler-cache snapshots. */
int history_run_detail(struct store *st, int64_t id, struct json_t **ret);

/* The run's facts as the files hold them (for summarize). */
int history_run_info(struct store *st, int64_t id, struct run_info *ret);

/* Feed every sample of the run to summary_add(), in order. Returns the
 * number of samples or -errno. */
int64_t history_replay(struct store *st, int64_t id, struct summary *sum);

/* Layer reuse per target (image): the most recent build of each target,
 * with the node of its previous build. */
int history_layers(struct store *st, double since, int64_t limit, struct json_t **ret);

/* The latest `buildtel cache` snapshot of tool taken before the snapshot
 * with row id before_id (0: the latest of all). *ret is NULL when none. */
int history_cache_previous(struct store *st, const char *tool, int64_t before_id,
                           struct json_t **ret);

/* What the runs started at or after since (epoch seconds) saw of tool in
 * their logs: {"runs": runs whose log printed its stats, "hits", "misses":
 * the sum of last minus first block over the runs that printed two or
 * more with counters that did not go down (null when none did)}. */
int history_cache_runs_since(struct store *st, const char *tool, double since, struct json_t **ret);

/* "2026-11-29T15:40:20Z", "2026-11-29 15:40", "2026-11-29" (local time
 * unless it ends in Z), or a span back from now: "90s", "30m", "2h",
 * "3d", "1w". Returns 0 with epoch seconds, or -EINVAL. */
int history_parse_when(const char *s, double now, double *ret);
