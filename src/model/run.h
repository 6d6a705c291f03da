/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dbuf.h"

/* Every process of the build, as the kernel accounted it (pipeline/acct,
 * as root): how many ended, their CPU, what the build waited for (delay
 * accounting), and what ran most (by name: the most CPU, the largest). */
#define RUN_PROCS_TOP 8
#define RUN_PROCS_COMM_MAX 32
struct run_proc_kind {
        char comm[RUN_PROCS_COMM_MAX + 1];
        uint64_t count;
        double cpu_s, peak_mb;
};
struct run_procs {
        uint64_t ended; /* 0: not accounted */
        double cpu_s;
        bool delayacct; /* kernel.task_delayacct was 1: the delays below are measured */
        double delay_cpu_s, delay_io_s, delay_mem_s;
        struct run_proc_kind top[RUN_PROCS_TOP];
        size_t ntop;
        /* what it may miss: compilers gone before their command line could
         * be read (no unit), records the kernel dropped (a full buffer) */
        uint64_t unread, lost;
        /* sccache ran; its server was not the build's (it ran before, or
         * logged elsewhere): which of its compiles hit is unknown */
        bool sccache_ran, sccache_unknown;
};

/* What run --memory-guard did (pipeline/guard.h); on false: not asked. */
#define RUN_GUARD_NAME_MAX 96
struct run_guard {
        bool on;
        double headroom_mb, limit_mb; /* limit 0: the host's available memory */
        uint64_t units;               /* compiles and links seen to start */
        uint64_t from_ledger;         /* of them, with a usual peak in the job's ledger */
        uint64_t held;                /* held back */
        double held_s, longest_s;     /* held in all; the longest hold */
        char longest[RUN_GUARD_NAME_MAX + 1]; /* its unit */
};

/* The facts of one run (or watch) that are not in the time series. They are
 * written next to the CSV as resources-<run-id>.run.json at start and again
 * at the end, so that `summarize` rebuilds the same summary from files. */
struct run_info {
        char *run_id;
        char *kind;  /* "run" or "watch" */
        char **argv; /* NULL-terminated; the command (run) or the watched
                        process's cmdline (watch) */
        char *cwd;
        char *host;
        double start_epoch;
        double end_epoch; /* NAN while running */
        bool finished;    /* false for a run whose buildtel was killed */
        int exit_code;    /* 0..255, as a shell reports it; -1 unknown */
        int term_signal;  /* signal that killed the build, or 0 */
        unsigned ncpu;    /* online CPUs when the run started */
        double interval;  /* seconds between samples */
        long pid;         /* the build's pid (run) or the watched pid */
        char *exit_comm;  /* that process's name as it ended (after any exec,
                             so not always argv[0]'s); NULL unknown */
        /* The git revision of cwd at the start (cmd/: sinks never read the
         * world). vcs_rev NULL: no git checkout; vcs_ref "": detached. Not in
         * run.json (its format is fixed). */
        char *vcs_rev, *vcs_ref;
        /* What repeats (issue 23): --job, BUILDTEL_JOB, the CI's variables,
         * else derived from the command and cwd (model/jobname.h). NULL:
         * unknown (an older run.json, a replay). run.json key "job". */
        char *job;
        /* The build's memory cap (--memory-max), MiB; 0: none. run.json
         * key "memory_max_mb", absent when none: near-OOM is measured
         * against it, in the run and in a replay of its files. */
        double memory_max_mb;
        /* run.json key "processes" (runfiles/runjson.h), absent when none. */
        struct run_procs procs;
        /* run.json key "memory_guard", absent when off. */
        struct run_guard guard;
};

/* Free every owned member and zero the struct; NULL is a no-op. */
void run_info_release(struct run_info *ri);

/* The rule of --run-id: 1 to 64 of [A-Za-z0-9._-], not starting with '.'
 * or '-'. A run id names files (resources-<id>.csv, report-<id>.html). */
bool run_id_is_valid(const char *s);

/* Make *id (malloc'd; NULL left so), read from an edited file maybe,
 * follow that rule: every other byte (a leading '.' or '-' too) becomes
 * '_', cut at 64; "" becomes "unknown". Returns 1 when it changed, 0, or
 * -ENOMEM. */
int run_id_sanitize(char **id);

/* The well-formed UTF-8 sequence at s[0..len) (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF; len >= 1): its length, its code point
 * in *ret_cp. 0 when there is none (*ret_cp then undefined). */
size_t run_utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp);

/* Append s[0..len) to out as valid UTF-8: every byte that does not belong
 * to a well-formed sequence becomes U+FFFD. With no_controls (for text
 * meant for a terminal: every place that prints what the build controls
 * goes through here), such a byte becomes '?' instead, and so does each
 * C0 or C1 control, DEL, and bidi or other invisible format character
 * (U+200E/F, U+202A-E, U+2066-9, U+061C, ...). Returns 0 or -ENOMEM. */
int run_append_utf8_lossy(struct dbuf *out, const char *s, size_t len, bool no_controls);

struct summary;
struct targets;
struct units;
struct run_facts;

/* The model as the sinks see it: with each sample (targets and facts NULL:
 * made at finish) and at the end of a run (complete). The recorder
 * computes the summary once; sinks read it, never recompute it. */
struct run_model {
        const struct run_info *run;
        const struct summary *summary;
        const struct targets *targets; /* from the build's output; NULL: none */
        const struct units *units;     /* compile units from the process scans; NULL: none */
        /* targets_facts(): sinks format these and derive none. Never NULL
         * at finish. */
        const struct run_facts *facts;
};
