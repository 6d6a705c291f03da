/* SPDX-License-Identifier: MIT */
/* Encoding cost of one OTLP export: a 60 s interval of samples (30 at 2 s,
 * every column) plus the final totals and the per-target metrics of a
 * 100-target build (the targets model keeps TARGETS_MAX of them), with a
 * TRACEPARENT (an exemplar and two attributes on every point). Prints
 * microseconds of CPU per export and bytes per export, per protocol. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/otlp-encode.h"
#include "render/otlp-metrics.h"

static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        static struct targets ts;
        static struct run_facts facts;
        static char id[] = "bench", kind[] = "run", host[] = "host";
        struct run_info ri = {.run_id = id,
                              .kind = kind,
                              .host = host,
                              .start_epoch = 1795968800.0,
                              .end_epoch = 1795968860.0};
        struct summary sum;
        struct run_model final = {.run = &ri, .summary = &sum, .targets = &ts, .facts = &facts};
        int iters = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 2000;
        int ntargets = 100;

        if (iters < 1)
                iters = 1;

        targets_init(&ts);
        ts.buildkit_seen = true;
        for (int i = 0; i < ntargets; i++) {
                char name[32];
                int n = snprintf(name, sizeof(name), "service-%03d/builder", i);
                size_t k = targets_get(&ts, name, (size_t)n);
                ts.t[k].first_seen = i;
                ts.t[k].last_seen = i + 30.5;
                ts.t[k].steps += 12;
                ts.t[k].cached += 7;
                ts.t[k].sccache = (struct cc_counts){true, 100 + (uint64_t)i, 20};
                snprintf(ts.t[k].builder, sizeof(ts.t[k].builder), "ci-builder");
        }
        summary_init(&sum, NULL);
        targets_facts(&ts, &ri, &facts);
        for (int proto = 0; proto < 2; proto++) {
                struct otel_config cfg = {.enabled = true,
                                          .protocol =
                                              proto ? OTEL_PROTOCOL_JSON : OTEL_PROTOCOL_PROTOBUF,
                                          .has_trace = true,
                                          .timeout_ms = 10000,
                                          .interval_ms = 60000};
                struct otlp_metrics *m;
                struct dbuf out = DBUF_INIT, gz = DBUF_INIT;
                double cpu = 0, cpu_gz = 0;
                size_t bytes = 0, npoints = 0;

                memset(cfg.trace.trace_id, 0x4b, 16);
                memset(cfg.trace.span_id, 0x07, 8);
                if (otlp_metrics_new(&cfg, &ri, &m) < 0)
                        return 1;
                for (int it = 0; it < iters; it++) {
                        double t0;
                        for (int k = 0; k < 30; k++) {
                                struct sample s;
                                sample_clear(&s);
                                for (size_t c = 0; c < sample_column_count(); c++)
                                        (void)sample_column_set_number(&s, c,
                                                                       1000.0 + k + c * 0.25);
                                s.epoch = ri.start_epoch + 2.0 * k;
                                otlp_metrics_add_sample(m, &s);
                                if (it == 0)
                                        summary_add(&sum, &s);
                        }
                        dbuf_reset(&out);
                        t0 = cpu_now();
                        if (otlp_metrics_encode(m, &final, proto == 1, &out) < 0)
                                return 1;
                        cpu += cpu_now() - t0;
                        dbuf_reset(&gz);
                        t0 = cpu_now();
                        (void)otlp_gzip(out.p, out.len, &gz);
                        cpu_gz += cpu_now() - t0;
                        bytes = out.len;
                }
                (void)npoints;
                printf("otlp %-8s 100-target final export (30 samples, %zu targets kept): %7.1f us "
                       "encode, %7zu bytes; gzip (zlib -1) +%.1f us, %zu bytes\n",
                       proto ? "json" : "protobuf", ts.n, cpu / iters * 1e6, bytes,
                       cpu_gz / iters * 1e6, gz.len);
                otlp_metrics_free(m);
                dbuf_release(&out);
                dbuf_release(&gz);
        }
        return 0;
}
