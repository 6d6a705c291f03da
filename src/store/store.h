/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"

/* The run history: one SQLite file (WAL, busy timeout) shared by every
 * buildtel of a user. Writers are the sqlite sink (a run or watch) and
 * `buildtel cache`; readers read it back as structs (history.h for the
 * history commands, history-run.h for a replay). The schema is versioned
 * with PRAGMA user_version and upgraded forward on open.
 *
 * Tables (version 3):
 *   runs             one row per run or watch, inserted at start with state
 *                    'running' and completed at the end ('finished'); a row
 *                    left 'running' whose recorder process is gone reads as
 *                    'incomplete' (see history.h)
 *   samples          every CSV column of every sample, one SQL column per
 *                    CSV column, added on open when the column table grows
 *   targets          per-target figures of a build (steps, cached, node...)
 *   cache_snapshots  compiler-cache counters (`buildtel cache`, and the
 *                    stats blocks a run's log printed)
 *   units            the compile units a run's process scans saw (version 5)
 * runs.job (version 9) names what repeats (run_info.job), indexed with
 * start_epoch for store_job_runs() (history.h). */

#define STORE_SCHEMA_VERSION 15

/* Errors beyond errno: returned as negative values like -errno. */
#define STORE_ENOTDB 4000 /* not an SQLite file, or corrupt */
#define STORE_ENEWER 4001 /* written by a newer buildtel (unknown schema) */

/* The database, opaque: no SQLite handle leaves src/store/. */
struct store;

/* $XDG_STATE_HOME/buildtel/history.db or ~/.local/state/buildtel/
 * history.db, malloc'd; NULL without either variable or on ENOMEM. */
char *store_default_path(void);

/* Open path. With create, the file and its parent directories are made
 * when missing; without, a missing file is -ENOENT. Sets WAL mode and a
 * busy timeout of busy_ms, then upgrades the schema (one transaction).
 * Returns 0, -ENOENT, -EBUSY (locked past the timeout), -ENOSPC, -EACCES,
 * -EROFS, -STORE_ENOTDB, -STORE_ENEWER, -ENOMEM or another -errno. */
int store_open(const char *path, bool create, int busy_ms, struct store **ret);
void store_close(struct store *st); /* NULL is a no-op */

/* A short text for an error of this module (strerror for errno values). */
const char *store_strerror(int e);

void store_set_busy_timeout(struct store *st, int ms);

/* Transactions: BEGIN IMMEDIATE / COMMIT / ROLLBACK. 0 or -errno. */
int store_begin(struct store *st);
int store_commit(struct store *st);
void store_rollback(struct store *st);

/* Run rows. ----------------------------------------------------------- */

/* Who writes a running row, to tell a live run from one whose buildtel
 * was killed: pid, its start time in clock ticks after boot, and the boot
 * id of the kernel (the caller reads them: platform/procfs.h). */
struct store_recorder {
        long pid;
        uint64_t starttime;
        char boot_id[40];
};

/* How a reader tells a live recorder from a gone one (history.h's running
 * and incomplete), in plain values the caller reads (platform/procfs.h):
 * this machine's host name and boot id (NULL: unknown, so every running
 * row of this host reads as incomplete), and whether a pid with that start
 * time runs here. Copied. Without it a running row reads as running, as
 * one of another host does. */
struct store_liveness {
        const char *host;
        const char *boot_id;
        bool (*alive)(void *userdata, long pid, uint64_t starttime);
        void *userdata;
};
int store_set_liveness(struct store *st, const struct store_liveness *lv); /* 0 or -ENOMEM */

/* Extra facts of a run that are not in run_info. NULL strings are NULL
 * in the database. */
struct store_run_extra {
        const char *builder;     /* the build tool ("make", "docker buildx bake") */
        const char *cgroup_mode; /* "v2", "v1", "none"; NULL: unknown */
        const char *vcs_rev;     /* hex object name of HEAD */
        const char *vcs_ref;     /* "refs/heads/main"; NULL or "" when detached */
        const char *build_log;   /* the path of its build log file; NULL: none */
};

/* Insert the row of a starting run (state 'running'); an older row with
 * the same run id (a rewritten run, as its files are) is deleted with its
 * samples and targets. In its own transaction. Returns 0 with the row id
 * in *ret_id, or -errno. */
int store_run_begin(struct store *st, const struct run_info *ri, const struct store_run_extra *x,
                    const struct store_recorder *rec, int64_t *ret_id);

/* Update the row's summary figures (inside a transaction the caller
 * holds, or alone). With ri, the run is over: complete the row too: end,
 * exit status, state 'finished', the build's pid (the row is written
 * before the build starts) and the summary JSON (may be NULL). */
int store_run_update(struct store *st, int64_t id, const struct run_info *ri,
                     const struct summary *sum, const char *summary_json, uint64_t dropped);

/* Facts learned only at the end (the builder the build's log named, a
 * revision from buildx history): the non-NULL members of x replace the
 * row's (build_log too: a compressed log's new path). Not a transaction
 * of its own. Returns 0 or -errno. */
int store_run_set_extra(struct store *st, int64_t id, const struct store_run_extra *x);

/* The database failed under a running row: mark it 'disk-full' (full:
 * SQLITE_FULL, the file system's room) or 'failed-to-record', so that it
 * never reads as 'incomplete' (buildtel killed). One small update outside
 * any transaction (the failed one is rolled back first). Returns 0 or
 * -errno. */
int store_run_mark_unrecorded(struct store *st, int64_t id, bool full);

/* Remove run row id and every row of it in the other tables (samples,
 * targets, units, steps, ninja edges, the cache snapshots its log printed;
 * a `buildtel cache` snapshot stays, unlinked; a newer table with a
 * foreign key to runs is found in the schema), in one transaction of its
 * own. Its files are the caller's. Returns 0, -ENOENT (no such row), or
 * -errno (nothing removed). */
int store_run_delete(struct store *st, int64_t id);

/* Samples. ------------------------------------------------------------ */

/* Insert one sample (seq counts from 0 per run). Call between begin and
 * commit. Every column of the sample column table is stored. */
int store_sample_insert(struct store *st, int64_t run, uint64_t seq, const struct sample *s);

/* Targets. ------------------------------------------------------------ */

/* A target (image) of a build, the model's fact (targets_facts()) as it
 * is, so `inspect` and `export` read back what the live sinks wrote;
 * read back by store_targets_each() (history.h). */
struct target_fact;
int store_target_insert(struct store *st, int64_t run, const struct target_fact *t);
/* A fact's figure as its row holds it, -1 when unknown: its steps, or
 * cached steps (cached); a count of c, hits or misses. */
int64_t store_fact_steps(const struct target_fact *t, bool cached);
struct cc_counts;
int64_t store_cc_count(const struct cc_counts *c, bool hits);
/* The run's distinct BuildKit steps and cached steps (-1: unknown). Call
 * between begin and commit. */
int store_run_set_steps(struct store *st, int64_t id, int64_t steps, int64_t cached);

/* The BuildKit steps of the model (its step facts, in order, capped at
 * TARGETS_STEPS_MAX; the count past the cap on the run). Call between
 * begin and commit. 0 or -errno. */
struct targets;
int store_steps_insert(struct store *st, int64_t run, const struct targets *ts);
/* The steps of run row id back into ts: each step's target by name
 * (targets_get() adds it to ts when new), the count past the cap into
 * ts->steps_dropped. None for a run of a file older than version 6.
 * Returns the number of steps, or -errno. The caller releases ts
 * (targets_release()). */
int store_steps_get(struct store *st, int64_t run, struct targets *ts);

/* The ninja edges of the model: its slowest-edges table (ts->slow) and
 * edgev (the slowest TARGETS_EDGES_MAX, for lanes), times from ninja's
 * start; the count of all its .ninja_log's edges, the latest end and the
 * log's mtime (which place ninja's start on the run's clock); nothing when
 * the run read no .ninja_log. Call between begin and commit. 0 or -errno. */
int store_edges_insert(struct store *st, int64_t run, const struct targets *ts);
/* The same back into ts (slow, edgev, the counts, the mtime); none for a
 * run without them or of a file older than version 6. Returns the number
 * of edgev's edges, or -errno. */
int store_edges_get(struct store *st, int64_t run, struct targets *ts);
/* The critical path of run row run as its summary's JSON object stored it
 * (runfiles/targetsjson.h reads it): 1 with *ret_json (malloc'd), 0 none,
 * -errno. */
int store_path_get(struct store *st, int64_t run, char **ret_json);

/* Compiler-cache snapshots. -------------------------------------------- */

/* Written by store_cache_snapshot_insert(); read back by the functions of
 * history.h, which say which strings they fill. */
struct store_cache_snapshot {
        double taken_epoch;
        const char *tool; /* "ccache" or "sccache" */
        /* "cache" (buildtel cache); "log-first", "log-last": the first and
         * the last stats block of a run's log ("log-last" alone when it
         * printed one) */
        const char *origin;
        int64_t run;                                             /* a runs.id, or 0 for none */
        int64_t hits, misses, size_bytes, max_size_bytes, files; /* -1: unknown */
        const char *version;                                     /* NULL: unknown */
        const char *raw; /* the tool's output, as text (NULL: none) */
};

int store_cache_snapshot_insert(struct store *st, const struct store_cache_snapshot *c);

struct unit;

/* A run's compile units (model/units.h), all in one prepared statement;
 * call inside a transaction. Returns 0 or -errno. */
int store_units_insert(struct store *st, int64_t run, const struct unit *rows, size_t n);
struct units;
/* Read them back into u, in the order they were stored. Returns the number
 * read or -errno. */
int store_units_read(struct store *st, int64_t run, struct units *u);
