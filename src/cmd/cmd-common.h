/* SPDX-License-Identifier: MIT */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "pipeline/recorder.h"
#include "parse/otelenv.h"
#include "platform/cgroup.h"

/* Options are declared once, in the table of cmd-common.c: name, alias,
 * argument, the commands that take it, its --help text and what it sets.
 * The table drives getopt_long (cmd_parse_options), the option lists of
 * `buildtel help CMD`, and `buildtel help --dump-options`, which the
 * e2e-options test holds the man page to. The ids below only key the
 * rows. */
enum {
        OPT_INTERVAL = 0x100,
        OPT_LOG_DIR,
        OPT_RUN_ID,
        OPT_DISK_PATH,
        OPT_STAGE,
        OPT_STAGE_REGEX,
        OPT_NEAR_OOM_MB,
        OPT_LOW_DISK_GB,
        OPT_COMPILERS,
        OPT_QUIET,
        OPT_HELP,
        OPT_TARGETS,
        OPT_SCCACHE_MARKER,
        OPT_NINJA_LOG,
        OPT_METRIC_PREFIX,
        OPT_TEXTFILE_DIR,
        OPT_PROM_FILE,
        OPT_PUSHGATEWAY,
        OPT_PUSH_JOB,
        OPT_DB,
        OPT_NO_DB,
        OPT_OTLP_ENDPOINT,
        OPT_OTLP_INTERVAL,
        OPT_TRACE_MAX_SPANS,
        OPT_GRACE,
        OPT_OFF,
        OPT_CGROUP,
        OPT_MEMORY_MAX,
        OPT_MEMORY_HIGH,
        OPT_KILL_LEFTOVERS,
        OPT_PID,
        OPT_STAGE_LOG_DIR,
        OPT_JSON,
        OPT_OTLP,
        OPT_INCOMPLETE,
        OPT_CSV_SAFE,
        OPT_TRACE_FILE,
        OPT_TRACE,
        OPT_OUTPUT,
        OPT_NO_REPORT,
        OPT_LIVE,
        OPT_COMMON_END,
};

/* The commands that parse through the table, as a mask. */
enum {
        CMDS_RUN = 1 << 0,
        CMDS_WATCH = 1 << 1,
        CMDS_SUMMARIZE = 1 << 2,
        CMDS_EXPORT = 1 << 3,
};

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
        /* run */
        double grace;
        bool off;
        bool trace_file; /* run --trace-file */
        bool live;       /* run --live (BUILDTEL_LIVE=1) */
        bool kill_leftovers; /* run --kill-leftovers: detached daemons die with the build */
        enum cgroup_mode cgroup_mode;
        uint64_t memory_max, memory_high;
        /* watch */
        uint64_t pid;
        const char *stage_log_dir;
        /* summarize */
        bool json;
        /* export */
        bool export_otlp, incomplete;
        bool export_trace;      /* export --trace */
        const char *trace_out;  /* export --trace -o FILE ("-": stdout) */
};

void common_opts_init(struct common_opts *o);
void common_opts_release(struct common_opts *o);

/* Handle one getopt result of a table row's id. Returns 1 when handled, 0
 * when not one of ours, -1 after printing an error for a bad value. */
int common_opts_parse(struct common_opts *o, int opt, const char *arg, const char *cmd);

/* Parse argv of cmd (CMDS_*, named name) with the table's options for it,
 * stopping at the first operand. Returns the index of the first operand;
 * 0 after printing the help for --help (the command exits 0); or -1 after
 * printing why on stderr (a bad value, or an unknown option and the
 * command's usage line). */
int cmd_parse_options(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o);

/* The usage line(s) of name on stderr, for a bad command line. */
void cmd_print_short_usage(const char *name);

/* Print the options of cmd in group to f, as `help CMD` lists them. */
void cmd_print_options(FILE *f, unsigned cmd, int group);
/* One line per option and command: "CMD\t--name\tARG\t--alias" (ARG and
 * alias "" when none), for the man page check. */
void cmd_dump_options(FILE *f);

/* Fill the shared run facts: a fresh run id unless one was given, kind,
 * cwd, host, start time, CPUs, interval. Returns 0 or -ENOMEM. */
int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri);

/* Load the OTLP export settings from the OTEL_* environment and the
 * options into o->otlp and point the recorder at them. Returns 0, or -1
 * after printing an error for a bad --otlp-endpoint. */
int common_otlp_load(struct common_opts *o, const char *cmd);

/* The run span's ids into c when export is on (chosen before the build
 * starts: its TRACEPARENT names the span; otelenv_set_run_span()), and
 * with vcs_of_cwd the git revision of the current directory. 0 or
 * -ENOMEM. */
int common_otlp_run_span(struct otel_config *c, const char *run_id, bool vcs_of_cwd);

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

/* Print the end-of-run lines (short summary, where the files are). */
void common_report(const struct common_opts *o, struct recorder *r, struct dbuf *short_sum);
