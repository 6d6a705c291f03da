/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/execs.h"
#include "util/dbuf.h"

/* What the build's own output says it built: per target (a bake/compose
 * target, or the one implicit target of a plain build), the steps, the
 * layer cache, the compiler cache; for the whole invocation, ninja/make
 * progress and the slowest ninja edges. Plain value structs: the parsers
 * fill them, the sinks read them. Every count the build controls is
 * capped. */

#define TARGETS_MAX 256      /* targets tracked; more are folded into the last */
#define TARGET_NAME_MAX 128  /* bytes kept of a target name (cut, never split UTF-8 badly) */
#define TARGET_FIELD_MAX 160 /* builder, node, ref */
#define TARGETS_SLOW_EDGES 10
#define TARGETS_FAILED_MAX 16    /* failing steps named in the summary */
#define TARGET_STEP_NAME_MAX 255 /* bytes kept of a failing step's name */

/* Compiler-cache counters: absent is not zero. */
struct cc_counts {
        bool set;
        uint64_t hits, misses;
};

struct target {
        char name[TARGET_NAME_MAX + 1];
        char builder[TARGET_FIELD_MAX + 1]; /* "" unknown */
        char node[TARGET_FIELD_MAX + 1];
        char ref[TARGET_FIELD_MAX + 1];
        /* buildtel's clock (seconds since the run started), NAN when never seen */
        double first_seen, last_seen;
        uint32_t steps, cached; /* its [... i/n] steps, one per name (README "Steps and
                                 * cached"); cached: every vertex CACHED, or a FROM that
                                 * did nothing */
        uint32_t internal;      /* other vertices of this target */
        uint32_t errors, canceled;
        bool done; /* every step it showed ended (DONE or CACHED) and it exported or ended */
        /* sccache stats from the marker step; guess = taken from the last
         * stats block because no marker step was found */
        struct cc_counts sccache;
        bool sccache_guess;
        struct cc_counts ccache;
        /* buildx history, when imported; steps counted from the replayed
         * record as in the live stream */
        bool history_set;
        double history_duration_s;
        uint32_t history_steps, history_cached;
        bool history_steps_set; /* NumTotalSteps was in the record */
        char history_status[16];
        char history_vcs_revision[80]; /* the build context's, "" unknown */
};

/* The compiler caches whose stats a build log can print. */
enum cc_tool { CC_TOOL_SCCACHE, CC_TOOL_CCACHE, CC_TOOLS };

/* One stats block as the log printed it: the tool's counters at that
 * moment (cumulative: per cache dir, per sccache server). */
struct cc_block {
        double seen; /* buildtel's clock */
        uint64_t hits, misses;
        int64_t size_bytes, max_size_bytes, files; /* -1: not printed */
        char version[32];                          /* "" unknown */
};

/* The first and the last block of one tool in the whole log (the same
 * block when it printed one), for the run history's snapshots. */
struct cc_blocks {
        uint32_t blocks; /* 0: none printed */
        struct cc_block first, last;
};

struct ninja_edge {
        int64_t start_ms, end_ms;
        char output[256];
};

/* A BuildKit vertex that ended in ERROR (not CANCELED), in the order the
 * vertices first appeared. */
struct failed_step {
        char name[TARGET_STEP_NAME_MAX + 1]; /* its last header, "[stage 2/5] RUN ..." */
        int target;                          /* index in t[], -1 none or several */
};

/* One BuildKit vertex as a fact (the model's, derived once in
 * buildkit_finish() or read back from the history): every output formats
 * these and derives none of its own. Times are buildtel's clock (seconds
 * since the run started): end is the line that ended it (DONE, CACHED,
 * ERROR, CANCELED), NAN when it never ended; start is its first line, or,
 * when BuildKit printed its own time (plain "DONE 1.4s", rawjson's
 * completed - started), end minus that time (never before the run). */
#define TARGETS_STEPS_MAX 4096 /* vertices kept as facts; more are counted in steps_dropped */
#define TARGETS_EDGES_MAX 2000 /* ninja edges kept for lanes (the slowest); more are counted */
struct step_fact {
        char name[TARGET_STEP_NAME_MAX + 1]; /* its last header, "[stage 2/5] RUN ..." */
        int target;                          /* index in t[], -1 none or several */
        double start_s, end_s;
        bool step; /* a "[... i/n]" step; false: an internal vertex (load, export, ...) */
        bool cached, error, canceled;
        struct step_exec exec; /* what its RUN exec used (model/execs.h); set false: not measured */
};

/* What failed, from the build's output (parse/failure.h): the target,
 * edge or step, and the first and last error line, cleaned and cut. */
#define FAILURE_TEXT_MAX 240
struct run_failure {
        char target[FAILURE_TEXT_MAX + 1]; /* "" none seen */
        char tool[12];                     /* who named it: "make", "ninja", "buildkit"; "" */
        char first[FAILURE_TEXT_MAX + 1];  /* the first error line; "" none */
        char last[FAILURE_TEXT_MAX + 1];   /* the last error line; "" none */
        uint64_t errors;                   /* error lines seen */
};

/* Set *f from texts read back (a file's, a history row's; NULL: none),
 * each cut at FAILURE_TEXT_MAX bytes; errors: 1, or 2 for a last that
 * differs from the first. */
void run_failure_set(struct run_failure *f, const char *target, const char *tool, const char *first,
                     const char *last);

struct targets {
        size_t n;
        struct run_failure failure; /* the output's, failed or not */
        struct target t[TARGETS_MAX];
        bool multi;                         /* several targets (prefixes, or --targets a,b) */
        char builder[TARGET_FIELD_MAX + 1]; /* #0 building with "X" instance */
        uint32_t steps, cached, internal, errors, canceled; /* distinct vertices */
        bool buildkit_seen;
        size_t nfailed;
        struct failed_step failed[TARGETS_FAILED_MAX];
        /* ninja [n/m] and make [ nn%] progress, last seen */
        uint64_t ninja_done, ninja_total;
        int make_pct; /* -1 none */
        /* .ninja_log of this run */
        bool ninja_log_set;
        uint64_t ninja_edges;
        size_t nslow;
        struct ninja_edge slow[TARGETS_SLOW_EDGES]; /* slowest first */
        struct cc_blocks cc_log[CC_TOOLS];          /* targets_cc_blocks() */
        /* BuildKit vertices in the order they first appeared, capped at
         * TARGETS_STEPS_MAX (heap: targets_add_step(), targets_release()) */
        struct step_fact *stepv;
        uint32_t nstepv;
        size_t capstepv;
        uint32_t steps_dropped; /* vertices past the cap */
        /* the slowest TARGETS_EDGES_MAX edges (heap, in no order), the
         * latest end of all, and the log's mtime (Unix seconds; 0 unknown):
         * ninja started ninja_max_end_ms before it */
        struct ninja_edge *edgev;
        uint32_t nedgev;
        int64_t ninja_max_end_ms;
        double ninja_mtime;
        struct critpath *path; /* where the wall time went (heap; NULL none) */
};

/* ---- The effective facts: the one value of each figure every output reports ----
 *
 * The raw model above keeps what each source said. targets_facts() turns it
 * into one value per figure, once per run; every sink (textfile, Pushgateway,
 * OTLP, history database, targets.json, the terminal) formats those values
 * and derives none of its own, and the history database stores them so that
 * `inspect` and `export` read back exactly what the live sinks wrote.
 *
 * Which source wins. A target's figures can come from three sources: the
 * build's log (BuildKit progress, by buildtel's clock), the bake/build
 * --metadata-file, and `docker buildx history inspect` (imported for the
 * refs the metadata file names). The rule, per figure:
 *   - buildx history wins for the figures it has (duration, steps and
 *     cached steps, status): it is BuildKit's own record of the build, in
 *     nanoseconds and counting every vertex, where the log is what reached
 *     the terminal and is timed by when its lines arrived;
 *   - the log gives every figure history does not have, and all of them
 *     when history was not imported;
 *   - the metadata file names things and never gives a figure: the
 *     builder, node and ref, over the log's "#0 building with" builder.
 * A figure no source gives is unknown (NAN, or its _set flag false), never
 * zero.
 *
 * Success is a tri-state, decided in this order:
 *   1. buildx history's status when it is final: "completed" built,
 *      "failed" or "canceled" failed;
 *   2. the log: a step of the target ended in ERROR or was CANCELED:
 *      failed; its export step ended (done): built;
 *   3. the run's outcome: the build exited 0: built (the front end reports
 *      success for every target it built); it exited non-zero or was
 *      killed: failed (it ended without the target being seen to finish);
 *   4. otherwise unknown: the run's outcome is unknown (a watched process
 *      whose exit status buildtel cannot see, or a run still going). */

/* A target's tri-state. */
enum target_success {
        TARGET_SUCCESS_UNKNOWN = -1,
        TARGET_FAILED = 0,
        TARGET_BUILT = 1,
};

/* How the run ended. */
enum run_outcome {
        RUN_OUTCOME_UNKNOWN,   /* not finished, or an exit status buildtel cannot see */
        RUN_OUTCOME_SUCCESS,   /* exited 0 */
        RUN_OUTCOME_FAILURE,   /* exited non-zero */
        RUN_OUTCOME_CANCELLED, /* killed by a signal */
};

struct target_fact {
        char name[TARGET_NAME_MAX + 1];
        char builder[TARGET_FIELD_MAX + 1]; /* the target's, else the run's; "" unknown */
        char node[TARGET_FIELD_MAX + 1];
        char ref[TARGET_FIELD_MAX + 1];
        double start_s, end_s;  /* first and last line seen, buildtel's clock; NAN unknown */
        double duration_s;      /* NAN unknown */
        bool steps_set;         /* steps and cached are known */
        uint32_t steps, cached; /* BuildKit steps of the target, and those from the layer cache */
        double cache_ratio;     /* cached / steps; NAN when unknown or no steps */
        int success;            /* enum target_success */
        uint32_t failed;        /* its steps that ended in ERROR (the log) */
        struct cc_counts sccache, ccache;
        bool sccache_guess;  /* sccache: the log's last stats block, no marker step */
        struct cc_counts cc; /* the compiler cache: sccache's when set, else ccache's */
        double sccache_ratio, ccache_ratio; /* hits / (hits + misses); NAN unknown */
};

struct run_facts {
        int outcome;       /* enum run_outcome */
        int exit_code;     /* 0..255; -1 unknown */
        int term_signal;   /* 0: none */
        double duration_s; /* end - start; NAN while unknown */
        /* the distinct BuildKit steps of the whole log (a step shared by
         * targets counts once); when the log showed no BuildKit, the sum of
         * the targets' steps from buildx history; else unknown */
        bool steps_set;
        uint32_t steps, cached;
        char builder[TARGET_FIELD_MAX + 1]; /* the log's, else the first target's, else a
                                             * container front end (targets_guess_builder) */
        struct run_failure failure;         /* a failed build's (the output's); else empty */
        size_t n;
        struct target_fact t[TARGETS_MAX];
};

struct run_info;

/* The facts of run and of ts (NULL: no targets) into *ret, by the rule
 * above. Never fails. */
void targets_facts(const struct targets *ts, const struct run_info *run, struct run_facts *ret);
/* The front end when no source names a builder ("make", "docker buildx
 * bake") into buf (NUL-terminated; "" none). Returns true for a container
 * front end: the run facts' builder falls back to it then, so the labels
 * and `inspect` say the same. */
bool targets_guess_builder(const struct run_info *run, char *buf, size_t len);
/* "success", "failure", "cancellation" (the cicd.pipeline.result values);
 * NULL for unknown. */
const char *targets_outcome_name(int outcome);
/* The derived ratios of a fact whose counts are set (history readback). */
void targets_fact_ratios(struct target_fact *t);

/* Empty model: no targets, unknown progress. */
void targets_init(struct targets *ts);
/* The same for a calloc'd model: the 220 KB stay untouched, so only the
 * pages in use are faulted in. */
void targets_init_zeroed(struct targets *ts);

/* The index of the target called name[0..len) (cut to TARGET_NAME_MAX),
 * adding it when new. When the table is full the last slot is returned.
 * Never fails. */
size_t targets_get(struct targets *ts, const char *name, size_t len);
/* The index, or -1 when no such target. */
int targets_find(const struct targets *ts, const char *name);

/* Note that target i was seen at time now (buildtel's clock). */
void targets_touch(struct targets *ts, size_t i, double now);

/* Offer an edge of this run to the slowest-edges table (kept slowest
 * first; an edge already present with the same times is a second output of
 * the same edge and is skipped). */
void targets_offer_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                        size_t out_len);

/* Keep an edge of this run in edgev (the slowest TARGETS_EDGES_MAX, every
 * output) and its end in ninja_max_end_ms. */
void targets_keep_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                       size_t out_len);

/* A stats block of tool in the log: a new one (is_new), or more figures
 * of the last one (a size printed after its counters). */
void targets_note_cc_block(struct targets *ts, enum cc_tool tool, const struct cc_block *b,
                           bool is_new);
/* The blocks of tool the log printed, or NULL when none. */
const struct cc_blocks *targets_cc_blocks(const struct targets *ts, enum cc_tool tool);
/* "sccache", "ccache". */
const char *targets_cc_tool_name(enum cc_tool tool);

/* Append a copy of s to the steps; past TARGETS_STEPS_MAX, or on -ENOMEM,
 * it is counted in steps_dropped. 0 or -ENOMEM. */
int targets_add_step(struct targets *ts, const struct step_fact *s);
/* Free the steps and edgev, leaving both empty. */
void targets_release(struct targets *ts);
/* A step's duration in seconds, NAN when its start or end is unknown. */
double targets_step_duration(const struct step_fact *s);

/* Anything worth reporting at all. */
bool targets_any(const struct targets *ts);
/* The commands the build ran, where its log tells: the .ninja_log's edges
 * of this run, or ninja's last [n/m]. 0: unknown (make, BuildKit, none). */
uint64_t targets_commands_ran(const struct targets *ts);

/* The .ninja_log's clock on the run's, by figure_ninja_offset(): 0 and
 * *ret_off, or -ENODATA (no edges, mtime or start; another build's log). */
int targets_ninja_offset(const struct targets *ts, const struct run_info *ri, double *ret_off);
