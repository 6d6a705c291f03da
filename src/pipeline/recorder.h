/* SPDX-License-Identifier: MIT */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/run.h"
#include "model/summary.h"
#include "render/prom.h"
#include "parse/buildmetrics.h"
#include "parse/logctx.h"
#include "util/dbuf.h"
#include "util/macro.h"

struct sink_ops;

/* The middle of the pipeline, shared by `run` and `watch`: it owns the
 * sources that are read per tick (sampler, log classifier), the model (the
 * summary) and the sinks. The caller owns the event loop and the child. */

struct recorder_config {
        const char *log_dir; /* NULL: $XDG_STATE_HOME/buildtel/logs */
        double interval;     /* seconds */
        const char *disk_path;
        const char *const *compilers; /* NULL: defaults */
        struct logctx_config logctx;
        struct summary_config summary;
        bool quiet;
        bool csv_safe; /* --csv-safe: no spreadsheet formulas in the CSV */
        /* The caller's CCACHE_STATSLOG (NULL: none; then recorder_statslog
         * names the run's own, for the build's environment): read at the
         * end from where it stood at the start, each unit marked hit,
         * miss or not cacheable. */
        const char *ccache_statslog;
        note_fn note;        /* one-line notes for the user (fallbacks) */
        note_fn warn;        /* one-line warnings (history database); NULL: note */
        const char *db_path; /* history database; NULL: store_default_path() */
        bool no_db;          /* --no-db */
        bool no_report;      /* --no-report */
        /* --memory-guard[=HEADROOM] (pipeline/guard.h): compiles that would
         * not fit held back; needs the kernel's accounting (acct). */
        bool memory_guard;
        double guard_headroom_mb;
        void *userdata;
        /* The build's own accounting, borrowed (NULL for watch): read every
         * tick into the cg_* and top_* columns; it also limits the
         * compilers count to the build's own processes. An OOM kill in it
         * is reported through warn at once. */
        struct cgroup *cgroup;
        struct buildmetrics_config metrics; /* targets, markers, --ninja-log */
        struct prom_config prom;            /* textfile and Pushgateway */
        const struct otel_config *otlp;     /* OTLP export, borrowed; NULL: off */
        /* The caller's sinks (NULL-terminated; NULL: none): a live run
         * opens them after its own, in its log directory (run
         * --trace-file's trace sink); a replay opens only these. */
        const struct sink_ops *const *sinks;
        void *sink_userdata; /* handed to those sinks' open (sink_ctx) */
        /* Each sample taken (not replayed), after the sinks: run --live's
         * status line. NULL: none. */
        void (*on_sample)(void *userdata, const struct sample *s);
        void *on_sample_userdata;
        /* The run's model at the end of recorder_finish, after every sink
         * (bench takes its facts there); borrowed for the call. NULL: none. */
        void (*on_finish)(void *userdata, const struct run_model *m);
        void *on_finish_userdata;
};

struct recorder;

/* The model and the output's parsers, no sink open yet. run must outlive
 * the recorder; its facts are written at start and finish. Returns 0 or
 * -errno (-ENOMEM, a bad --stage-regex as -EINVAL). */
int recorder_new(const struct recorder_config *cfg, struct run_info *run, struct recorder **ret);
void recorder_free(struct recorder *r);
/* A live run (run, watch): the sampler, BuildKit's execs followed, and the
 * run's files and exports (sinks_all, then cfg->sinks) in its log
 * directory. Never fails for an unwritable directory (falls back, then
 * records nothing, and says so through note). 0 or -errno (the sampler). */
int recorder_open_live(struct recorder *r);
/* A replay: only cfg->sinks, writing no file of the run's. 0 or what a
 * sink's open returned. */
int recorder_open_sinks(struct recorder *r);

/* The stats log ccache is to write for this build (ours in the log
 * directory, or the caller's), or NULL: none. */
const char *recorder_statslog(const struct recorder *r);
/* The log an sccache server started by the build is to write (the build's
 * SCCACHE_ERROR_LOG, with SCCACHE_LOG at debug for the verdicts), or NULL. */
const char *recorder_scclog(const struct recorder *r);

/* Where the files go, or NULL when nothing is written. */
const char *recorder_log_dir(const struct recorder *r);
/* The --ninja-log as the run started (ninjalog_window()'s snap). */
struct ninjalog_file;
const struct ninjalog_file *recorder_ninja_snapshot(const struct recorder *r);
/* The monotonic time of the next tick. */
double recorder_next_tick(const struct recorder *r);

/* Build output: to the sinks, and line by line to the classifier. */
void recorder_output(struct recorder *r, int stream, const char *buf, size_t len);
/* The same output without passing through user space: the file it may be
 * spliced into (the build log, when it is the output's only sink and the
 * parse has its own thread), positioned at *ret_off; -1: none now, use
 * recorder_output. After n bytes of stream went into fd at off:
 * recorder_output_spliced (the parse reads them back from the file). */
int recorder_output_fd(struct recorder *r, off_t *ret_off);
void recorder_output_spliced(struct recorder *r, int stream, int fd, off_t off, size_t n);
/* A line from elsewhere (watch --stage-log-dir): to the classifier and the
 * build-metrics parsers, as run's lines go; not to the sinks. */
void recorder_log_line(struct recorder *r, const char *line, size_t len);
/* Flush partial lines of the build's streams (at EOF). */
void recorder_output_eof(struct recorder *r, int stream);

/* Take a sample now and schedule the next one. Returns 0 or -errno
 * (-EINVAL without recorder_open_live: nothing to sample with). */
int recorder_tick(struct recorder *r);

/* A replay's samples, in order, to the model and the sinks as
 * recorder_tick hands them its own: a recorded CSV's rows in buf
 * (runfiles/samplecsv.c; torn or junk ones skipped, counted in the
 * summary), or run row id's of the history (store/; an older file's
 * missing columns stay unknown). Returns the number of samples, or -errno
 * (-EINVAL: not a recording). */
int64_t recorder_replay_csv(struct recorder *r, const char *buf, size_t len);
struct store;
int64_t recorder_replay_history(struct recorder *r, struct store *st, int64_t id);
/* The summary so far (complete after the last sample); borrowed. */
const struct summary *recorder_summary(const struct recorder *r);

/* The run is over (facts in run final): the model made from the parsers
 * (and the end-of-run inputs, pipeline/endinputs.h; the execs,
 * pipeline/execmatch.h), the run against its job's usual, every sink
 * finished; a line per sink failure through note. Returns 0 or the first
 * sink error. */
int recorder_finish(struct recorder *r);
/* The same for a replay, whose model is recorded (its targets, their facts
 * and units, as its files or rows hold them; borrowed until the recorder
 * is freed) in place of the parsers'; row: its row in the history (the
 * baseline is then derived against the job's runs of smaller row id), 0:
 * in none (no baseline, as it had none). */
int recorder_finish_recorded(struct recorder *r, const struct run_model *recorded, int64_t row);
/* After a finish: the run's model (render/short.h makes the terminal's
 * text of it); owned by r. */
const struct run_model *recorder_model(const struct recorder *r);
/* After recorder_finish: did sink `name` ("csv", "summary") fail, or was it
 * never open? Its path is then not worth printing. */
bool recorder_sink_failed(const struct recorder *r, const char *name);

/* Network sinks (OTLP) in the caller's poll loop: the fds to add (at most
 * cap; RECORDER_POLLFDS is enough) with *deadline lowered to when they
 * need a turn; after ppoll, recorder_poll with what it returned. Neither
 * blocks. */
#define RECORDER_POLLFDS 16
size_t recorder_pollfds(struct recorder *r, struct pollfd *p, size_t cap, double *deadline);
void recorder_poll(struct recorder *r, const struct pollfd *p, size_t n);

/* This process as the history sees a recorder (store.h: pid, start time,
 * boot id, from /proc), for the sqlite sink's running row. 0 or -errno,
 * with *ret zeroed. */
struct store_recorder;
int recorder_self(struct store_recorder *ret);

/* The default log directory (malloc'd), from XDG_STATE_HOME or HOME. */
char *recorder_default_log_dir(void);
/* A log directory the user named: made when missing, and writable. 0 or
 * -errno (the run then refuses to start: only the default falls back). */
int recorder_log_dir_usable(const char *dir);
