/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "parse/otelenv.h"
#include "util/dbuf.h"

/* The model as OTLP metrics: which metric each figure becomes (one table
 * line each in otlp-metrics.c), the resource, the trace correlation. It
 * keeps the samples recorded since the last export (at most
 * OTLP_MAX_PENDING; older ones are dropped) and encodes an
 * export body on demand. */

#define OTLP_MAX_PENDING 4096

struct otlp_metrics;

/* cfg and run must outlive the object. Returns 0 or -ENOMEM. */
int otlp_metrics_new(const struct otel_config *cfg, const struct run_info *run,
                     struct otlp_metrics **ret);
void otlp_metrics_free(struct otlp_metrics *m);

/* Set a resource attribute (over ours and OTEL_RESOURCE_ATTRIBUTES; the
 * run id stays ours). key and val are borrowed: they must outlive m. */
void otlp_metrics_set_resource(struct otlp_metrics *m, const char *key, const char *val);

/* A sample as recorded (its numbers are copied). */
void otlp_metrics_add_sample(struct otlp_metrics *m, const struct sample *s);
/* Samples waiting for the next export. */
size_t otlp_metrics_pending(const struct otlp_metrics *m);

/* Append an export body to out: the gauges of every pending sample, the
 * cumulative sums of the latest sample, and with final (non-NULL) the
 * totals of the run and the per-target metrics. json selects the OTLP JSON
 * encoding. Pending samples are taken only on success. 0 or -ENOMEM. */
int otlp_metrics_encode(struct otlp_metrics *m, const struct run_model *final, bool json,
                        struct dbuf *out);

/* The resource attributes (borrowed from m): the spans share them. */
struct otlp_attr;
const struct otlp_attr *otlp_metrics_resource(const struct otlp_metrics *m, size_t *ret_n);
