/* SPDX-License-Identifier: MIT */
#pragma once

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "model/retention.h"
#include "pipeline/recorder.h"
#include "parse/otelenv.h"
#include "platform/cgroup.h"

/* Options are declared once, in the table of cmd-options.c: name, alias,
 * argument, the commands that take it, its --help text and what it sets.
 * The table drives getopt_long (cmd_parse_options), the option lists of
 * `buildtel help CMD`, and `buildtel help --dump-options`, which the
 * e2e-options test holds the man page to. */

/* Every command but help, as a mask: each parses through the table. */
enum {
        CMDS_RUN = 1 << 0,
        CMDS_WATCH = 1 << 1,
        CMDS_SUMMARIZE = 1 << 2,
        CMDS_EXPORT = 1 << 3,
        CMDS_REPORT = 1 << 4,
        CMDS_STATUS = 1 << 5,
        CMDS_TOP = 1 << 6,
        CMDS_INSPECT = 1 << 7,
        CMDS_LAYERS = 1 << 8,
        CMDS_CACHE = 1 << 9,
        CMDS_IMPORT_BUILDX = 1 << 10,
        CMDS_PRUNE = 1 << 11,
        CMDS_COMPARE = 1 << 12,
        CMDS_BENCH = 1 << 13,
        CMDS_PLAN = 1 << 14,
};

/* The mask of the command called name, or 0. */
unsigned cmd_mask(const char *name);

/* The groups of `help CMD`'s option lists. */
enum { OPTG_MAIN, OPTG_METRICS, OPTG_OTLP };

struct common_opts {
        struct recorder_config rec;
        char run_id[80];
        char *compilers_buf; /* owns the strings behind compilers[] */
        const char **compilers;
        bool help;
        struct otel_options otlp_opt; /* --otlp-endpoint, --otlp-interval */
        struct otel_config otlp;      /* loaded by common_otlp_load() */
        /* --job NAME (run, watch: what repeats; status: the filter) */
        const char *job;
        char prom_file_buf[96]; /* the default textfile name, from the job */
        /* run */
        double grace;
        bool off;
        bool trace_file;     /* run --trace-file */
        bool live;           /* run --live (BUILDTEL_LIVE=1) */
        bool no_pty;         /* run --no-pty: the build's output on pipes, always */
        bool kill_leftovers; /* run --kill-leftovers: detached daemons die with the build */
        /* run --keep-runs, --keep-size: applied at the end (cmd-prune) */
        uint64_t keep_runs, keep_size;
        bool keep_runs_given, keep_size_given;
        enum cgroup_mode cgroup_mode;
        uint64_t memory_max, memory_high;
        bool memory_guard;       /* run --memory-guard[=HEADROOM] */
        uint64_t plan_memory, plan_cpus; /* plan --memory, --cpus; 0: this host's */
        double guard_headroom_mb; /* NAN: the default */
        /* watch */
        uint64_t pid;
        const char *stage_log_dir;
        /* summarize */
        bool json;
        /* export */
        bool export_otlp, incomplete;
        bool export_trace; /* export --trace */
        /* export --trace and report: -o FILE ("-": stdout) */
        const char *output;
        /* report */
        bool markdown; /* --format markdown */
        /* the history commands */
        int64_t limit; /* --limit; 0: none */
        double since;  /* --since as epoch; NAN: none */
        bool once;     /* top --once */
        bool last;     /* compare --last */
        bool all;      /* compare --all */
        /* import-buildx */
        const char *json_file;
        /* prune: its limits (any given: prune_given), --dry-run */
        struct retention_policy prune;
        bool prune_given, dry_run;
        /* bench */
        uint64_t bench_runs, bench_warmup; /* --runs (default 10), --warmup */
        const char *prepare, *cleanup;     /* shell commands */
        const char *export_json, *export_markdown;
        bool show_output, ignore_failure;
};

void common_opts_release(struct common_opts *o);

/* Parse argv of cmd (CMDS_*, named name) with the table's options for it
 * into o, set to the defaults first (release it either way). Options may
 * come before and after operands (as git and systemctl take them; "--"
 * ends the options), except for run, whose first operand is the COMMAND:
 * its options stop there. Operands are moved to the end of argv, in order.
 * Returns the index of the first operand; 0 after printing the help for
 * --help (the command exits 0); or -1 after printing why on stderr (a bad
 * value, or an unknown option and the command's usage line). */
int cmd_parse_options(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o);

/* cmd_parse_options() without printing the help: --help only sets
 * o->help. */
int cmd_parse_table(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o);

/* The usage line(s) of name on stderr, for a bad command line. */
void cmd_print_short_usage(const char *name);

/* Print the options of cmd in group to f, as `help CMD` lists them. */
void cmd_print_options(FILE *f, unsigned cmd, int group);
/* One line per option and command: "CMD\t--name\tARG\t--alias" (ARG and
 * alias "" when none), for the man page check. */
void cmd_dump_options(FILE *f);
/* The completion script of shell ("bash", "zsh", "fish") from the command
 * and option tables. Returns 0, or -EINVAL for another shell. */
int cmd_print_completion(FILE *f, const char *shell);

/* Fill the shared run facts: a fresh run id unless one was given, kind,
 * cwd, host, start time, CPUs, interval. Returns 0 or -ENOMEM. */
int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri);
/* Then, with ri's argv and cwd set, its job (model/jobname.h: --job,
 * $BUILDTEL_JOB, the CI's, else derived) and, unless --prom-file gave
 * one, the textfile's name from it: buildtel-<job for a file>.prom.
 * Returns 0 or -ENOMEM. */
int common_run_job(struct common_opts *o, struct run_info *ri);
/* The default textfile name of job ("buildtel-<job made safe>.prom") into
 * buf. 0, or -EINVAL (no job, or it does not fit). */
int common_prom_file(const char *job, char *buf, size_t cap);

/* Load the OTLP export settings from the OTEL_* environment and the
 * options into o->otlp and point the recorder at them. Returns 0, or -1
 * after printing an error for a bad --otlp-endpoint. */
int common_otlp_load(struct common_opts *o, const char *cmd);

/* The run span's ids into c when export is on (chosen before the build
 * starts: its TRACEPARENT names the span; otelenv_set_run_span()). The
 * span's git revision comes from common_run_info(), the one read of it.
 * 0 or -ENOMEM. */
int common_otlp_run_span(struct otel_config *c, const char *run_id);

/* The build's environment when spans are exported: ours with TRACEPARENT
 * naming the run span and the caller's TRACESTATE (none when the trace is
 * ours). envp stays NULL when they are not: the build gets exactly our
 * environment. 0 or -ENOMEM; release either way. */
struct otlp_child_env {
        char traceparent[80];
        char *tracestate;
        char **envp;
};
int common_otlp_child_env(const struct common_opts *o, struct otlp_child_env *ret);
void common_otlp_child_env_release(struct otlp_child_env *ce);

/* Print a note for the user on stderr: "buildtel: note: ...". */
void common_note(void *userdata, const char *fmt, ...) _printf_(2, 3);
/* Print a warning on stderr: "buildtel: warning: ...". */
void common_warn(void *userdata, const char *fmt, ...) _printf_(2, 3);
/* Print "buildtel CMD: note: ...", CMD in userdata (a string, as
 * uintptr_t). */
void common_cmd_note(void *userdata, const char *fmt, ...) _printf_(2, 3);
/* getenv(name): the environment lookup of jobname and otelenv. */
const char *common_getenv(void *userdata, const char *name);

/* The run spec names, for a replay (pipeline/replay.h) with o's database,
 * log directory and thresholds (need_record: refuse a CSV without its
 * run record; own_thresholds: a history run's own replace o's); notes
 * "buildtel CMD: note: ...". 0, or 1 after printing
 * "buildtel CMD: why". */
struct replay;
struct sink_ops;
int common_replay_open(const struct common_opts *o, const char *cmd, const char *spec,
                       bool need_record, bool own_thresholds, struct replay **ret);
/* replay_through() into sinks, with the same words, and a note of the
 * rows skipped. The number of samples, or -1 after printing why. */
int64_t common_replay_through(const char *cmd, struct replay *rp,
                              const struct sink_ops *const *sinks, void *userdata,
                              const struct run_model **ret_model);

/* Print the end-of-run lines (short summary, where the files are). */
void common_report(const struct common_opts *o, struct recorder *r);
