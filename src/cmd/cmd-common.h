/* SPDX-License-Identifier: MIT */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "pipeline/recorder.h"
#include "parse/otelenv.h"

/* Options shared by `run` and `watch`, and the bits of set-up both do. */

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
        OPT_NO_REPORT,
        OPT_COMMON_END,
};

#define COMMON_LONGOPTS                                                                            \
        {"interval", required_argument, NULL, OPT_INTERVAL},                                       \
            {"log-dir", required_argument, NULL, OPT_LOG_DIR},                                     \
            {"out-dir", required_argument, NULL, OPT_LOG_DIR},                                     \
            {"run-id", required_argument, NULL, OPT_RUN_ID},                                       \
            {"disk-path", required_argument, NULL, OPT_DISK_PATH},                                 \
            {"stage", required_argument, NULL, OPT_STAGE},                                         \
            {"stage-regex", required_argument, NULL, OPT_STAGE_REGEX},                             \
            {"near-oom-mb", required_argument, NULL, OPT_NEAR_OOM_MB},                             \
            {"low-disk-gb", required_argument, NULL, OPT_LOW_DISK_GB},                             \
            {"compilers", required_argument, NULL, OPT_COMPILERS},                                 \
            {"quiet", no_argument, NULL, OPT_QUIET}, {"db", required_argument, NULL, OPT_DB},      \
            {"no-db", no_argument, NULL, OPT_NO_DB},                                               \
            {"targets", required_argument, NULL, OPT_TARGETS},                                     \
            {"sccache-marker", required_argument, NULL, OPT_SCCACHE_MARKER},                       \
            {"ninja-log", required_argument, NULL, OPT_NINJA_LOG},                                 \
            {"metric-prefix", required_argument, NULL, OPT_METRIC_PREFIX},                         \
            {"textfile-dir", required_argument, NULL, OPT_TEXTFILE_DIR},                           \
            {"prom-file", required_argument, NULL, OPT_PROM_FILE},                                 \
            {"pushgateway", required_argument, NULL, OPT_PUSHGATEWAY},                             \
            {"push-job", required_argument, NULL, OPT_PUSH_JOB},                                   \
            {"otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT},                         \
            {"otlp-interval", required_argument, NULL, OPT_OTLP_INTERVAL},                         \
            {"no-report", no_argument, NULL, OPT_NO_REPORT},                                       \
        {                                                                                          \
                "help", no_argument, NULL, OPT_HELP                                                \
        }

struct common_opts {
        struct recorder_config rec;
        char run_id[80];
        char *compilers_buf; /* owns the strings behind compilers[] */
        const char **compilers;
        bool help;
        struct otel_options otlp_opt; /* --otlp-endpoint, --otlp-interval */
        struct otel_config otlp;      /* loaded by common_otlp_load() */
};

void common_opts_init(struct common_opts *o);
void common_opts_release(struct common_opts *o);

/* Handle one getopt result. Returns 1 when handled, 0 when not one of ours,
 * -1 after printing an error for a bad value. */
int common_opts_parse(struct common_opts *o, int opt, const char *arg, const char *cmd);

/* Fill the shared run facts: a fresh run id unless one was given, kind,
 * cwd, host, start time, CPUs, interval. Returns 0 or -ENOMEM. */
int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri);

/* Load the OTLP export settings from the OTEL_* environment and the
 * options into o->otlp and point the recorder at them. Returns 0, or -1
 * after printing an error for a bad --otlp-endpoint. */
int common_otlp_load(struct common_opts *o, const char *cmd);

/* Print a note for the user on stderr: "buildtel: note: ...". */
void common_note(void *userdata, const char *fmt, ...) _printf_(2, 3);
/* Print a warning on stderr: "buildtel: warning: ...". */
void common_warn(void *userdata, const char *fmt, ...) _printf_(2, 3);

/* Print the end-of-run lines (short summary, where the files are). */
void common_report(const struct common_opts *o, struct recorder *r, struct dbuf *short_sum);
