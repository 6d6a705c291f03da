/* SPDX-License-Identifier: MIT */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/prom.h"
#include "render/trace.h"

struct otel_config;
struct store_recorder;

/* Everything a sink may need to know about where and how to write. */
struct sink_ctx {
        const char *log_dir; /* the run's files go here */
        const struct run_info *run;
        bool quiet;
        bool csv_safe;                  /* --csv-safe: no spreadsheet formulas in the CSV */
        const struct prom_config *prom; /* textfile and Pushgateway; NULL: defaults, no push */
        const char *db_path;            /* the history database; NULL: none (--no-db) */
        /* One line for the user from a sink that carries on without its
         * output (the history database when locked, full or corrupt). */
        note_fn warn;
        void *warn_userdata;
        const struct otel_config *otlp; /* OTLP export; NULL or !enabled: off */
        void *userdata;                 /* for a sink a command brings to a replay (recorder.h) */
        bool no_report;                 /* --no-report: no report-<id>.html */
        /* Who records (the history's running row, store.h), read by the
         * pipeline; NULL: unknown (zeros). */
        const struct store_recorder *recorder;
};

/* A sink writes the model to the world. Adding an export means adding one
 * file with one of these and one line in sinks.c. Every callback but open
 * is optional (NULL). Sinks never print: open returns -errno and the caller
 * reports it; later failures are kept and reported by finish. Open may
 * leave *ret_state NULL: the sink is off for the run, and none of its
 * other callbacks is called. */
struct sink_ops {
        const char *name;
        int (*open)(const struct sink_ctx *ctx, void **ret_state);
        /* raw build output; stream 1 stdout, 2 stderr */
        void (*output)(void *state, int stream, const char *buf, size_t len);
        /* The same output moved by the kernel (splice(2)) into the sink's
         * file, not through user space: the file's fd, positioned at its
         * end (no O_APPEND), and that offset in *ret_off; -1 when output
         * cannot go so now (an error is kept). After n bytes were spliced
         * in at that position: output_spliced(n). Both or neither. */
        int (*output_fd)(void *state, off_t *ret_off);
        void (*output_spliced)(void *state, size_t n);
        /* a sample as the platform layer read it (numbers in bytes, not
         * rounded; the CSV sink formats its row); m->summary includes it */
        void (*sample)(void *state, const struct sample *s, const struct run_model *m);
        /* the run is over: run facts final, summary complete; 0 or -errno */
        int (*finish)(void *state, const struct run_model *m);
        void (*close)(void *state);
        /* Network sinks, driven by the caller's poll loop without ever
         * blocking it: the fds to poll (at most cap) and, lowered in
         * *deadline (monotonic seconds), when to call poll regardless; then
         * poll with what ppoll returned (other fds included). */
        size_t (*pollfds)(void *state, struct pollfd *p, size_t cap, double *deadline);
        void (*poll)(void *state, const struct pollfd *p, size_t n, double now);
};

extern const struct sink_ops sink_runinfo;  /* resources-<id>.run.json */
extern const struct sink_ops sink_csv;      /* resources-<id>.csv */
extern const struct sink_ops sink_buildlog; /* build-<id>.log */
extern const struct sink_ops sink_summary;  /* resources-<id>.summary.{txt,json} */
extern const struct sink_ops sink_sqlite;   /* the run history database (store.h) */

extern const struct sink_ops sink_prom;    /* <textfile dir>/buildtel.prom */
/* The textfile's directory: given (--textfile-dir), else
 * $BUILDTEL_TEXTFILE_DIR, else the first writable of PROM_SEED_DIR and
 * PROM_DEBIAN_DIR, else NULL: none (no collector would read it). */
const char *prom_textfile_where(const char *given);
extern const struct sink_ops sink_pushgw;  /* PUT to --pushgateway */
extern const struct sink_ops sink_targets; /* resources-<id>.targets.json */
extern const struct sink_ops sink_otlp;    /* OTLP/HTTP metrics to a collector */
extern const struct sink_ops sink_units;   /* resources-<id>.units.csv */
extern const struct sink_ops sink_report;  /* report-<id>.html, $GITHUB_STEP_SUMMARY */

/* sink_trace (trace-<run-id>.json, render/trace.h) is not in sinks_all:
 * `export --trace` and `run --trace-file` add it, with this as
 * sink_ctx.userdata (borrowed until close). */
struct trace_edge {
        double start_s, end_s; /* on the run's clock */
        const char *out;       /* its output, len bytes, borrowed */
        size_t len;
};
struct trace_sink_job {
        /* written whole: a temp file renamed over it at finish; NULL:
         * trace-<run-id>.json in the log directory */
        const char *path;
        bool path_ours; /* path is export's trace-<id>.json, not the user's -o: a run file */
        int fd;         /* >= 0: written here instead (stdout), path unused */
        struct trace_config cfg;
        const struct trace_edge *edges; /* ninja edges the command read; after the model's */
        size_t nedges;
        /* no edges above: the model's (the slowest the history kept), placed
         * by targets_ninja_offset() */
        bool stored_edges;
        bool round;  /* live samples: as their CSV rows hold them (sample_round) */
        bool cancel; /* set before finish: nothing is written */
        /* finish returns 0 and leaves the error here for the command to
         * report (a live run's trace is no reason to note a sink failure) */
        bool own_errors;
        int result;      /* out: finish's 0 or -errno */
        int64_t samples; /* out: the samples given */
};
extern const struct sink_ops sink_trace;

/* sink_report_page, not in sinks_all: `buildtel report`'s page of a
 * replay, rendered at finish into out (the Markdown job summary with
 * markdown, else the HTML report), with this as sink_ctx.userdata. */
struct report_page_job {
        bool markdown;
        struct dbuf out; /* the caller's to release */
        int result;      /* out: 0 or -ENOMEM (finish returns 0) */
};
extern const struct sink_ops sink_report_page;

/* sink_otlp_batch (sink-otlp-batch.c), not in sinks_all: `export --otlp`
 * of a replay, with this as sink_ctx.userdata. */
struct otlp_metrics;
struct otlp_sender;
struct otlp_batch_job {
        const struct otel_config *cfg;
        struct otlp_metrics *m; /* made for the run, borrowed */
        struct otlp_sender *s;  /* borrowed */
        uint64_t rows;          /* out: the samples taken */
        int result;             /* out: 0, -ENOMEM, or -EIO: the collector did not take one */
};
extern const struct sink_ops sink_otlp_batch;

/* The sinks of a run, in order. NULL-terminated. */
extern const struct sink_ops *const sinks_all[];
