/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/dbuf.h"

/* The Prometheus text format (0.0.4) of a run, for the node_exporter
 * textfile collector (sink-prom.c) and the Pushgateway (sink-pushgw.c). */

struct prom_config {
        const char *textfile_dir;  /* --textfile-dir (NULL: $BUILDTEL_TEXTFILE_DIR, ...) */
        const char *prom_file;     /* --prom-file NAME.prom (NULL: buildtel.prom; run and
                                      watch default to buildtel-JOB.prom, cmd/cmd-common.c) */
        const char *metric_prefix; /* --metric-prefix P (NULL: none) */
        const char *pushgateway;   /* --pushgateway URL (NULL: no push) */
        const char *push_job;      /* --push-job NAME (NULL: buildtel) */
        double push_timeout_s;     /* 0: 5 s */
};

#define PROM_DEFAULT_FILE "buildtel.prom"
#define PROM_SEED_DIR "/var/lib/node_exporter/textfile_collector"
#define PROM_DEBIAN_DIR "/var/lib/prometheus/node-exporter"

struct run_model;
struct target_fact;

/* The whole exposition: HELP and TYPE only for names with samples, label
 * values escaped (backslash, double quote, newline; invalid UTF-8 as
 * U+FFFD, other control bytes '?'), NaN/+Inf/-Inf, no timestamps, a
 * final newline. prefix NULL or "" gives build_...; "rocm" gives
 * rocm_build_.... Returns 0 or -ENOMEM. */
int prom_render(const struct run_model *m, const char *prefix, struct dbuf *out);

/* The per-target figures, as both exports send them (here and
 * otlp-metrics.c). */
enum prom_tval {
        TV_DURATION,
        TV_STEPS,
        TV_CACHED,
        TV_CACHE_RATIO,
        TV_SUCCESS,
        TV_SC_HITS,
        TV_SC_MISSES,
        TV_SC_RATIO,
        TV_SC_GUESS,
        TV_CC_HITS,
        TV_CC_MISSES,
        TV_CC_RATIO,
        TV_EXEC_MEM_PEAK, /* prom.c's own: the target's RUN steps (model/execs.h) */
        TV_EXEC_OOM,
        TV_EXEC_CPU,
};
/* Figure v of t, or NAN when absent (no sample). Every figure is the
 * model's (targets_facts()); here it is only picked. */
double prom_target_value(const struct target_fact *t, enum prom_tval v);

/* A sample value the way Prometheus spells it: NaN, +Inf, -Inf, or the
 * shortest decimal that reads back to v. */
void prom_format_value(double v, char buf[static 32]);

/* Whether s is a valid metric name prefix ([a-zA-Z_][a-zA-Z0-9_]*). */
bool prom_prefix_valid(const char *s);
/* Whether s is a valid file name for the collector: no '/', ends in .prom. */
bool prom_file_valid(const char *s);

/* The Pushgateway URL for a push: base + /metrics/job/JOB/instance/HOST,
 * then /buildtel_job/BUILD_JOB when buildtel_job (the run's job, the label of
 * every series: two jobs of one host are two groups, not one the other
 * replaces) is not NULL; each value as is when it is made of
 * [A-Za-z0-9._~-], else in the "label@base64/<urlsafe base64>" form.
 * 0 or -ENOMEM. */
int prom_push_url(const char *base, const char *job, const char *instance, const char *buildtel_job,
                  struct dbuf *out);
