/* SPDX-License-Identifier: MIT */
/* `buildtel export --otlp RUN` from the history database, without the
 * network: the 24-hour run that bench-store leaves in DIR/bench.db (86,400
 * sample rows, every column) read back through store_samples_each(), then
 * read back and encoded in requests of 1000 samples as export does, per
 * protocol. Prints CPU seconds and bytes.
 *   bench-export DIR   (after bench-store DIR) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "render/otlp-metrics.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"

#define BATCH 1000

static double cpu_now(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

struct enc {
        struct otlp_metrics *m;
        struct summary sum;
        bool json;
        size_t bytes, requests;
};

static int count_only(void *userdata, const struct sample *s)
{
        struct summary *sum = userdata;

        summary_add(sum, s);
        return 0;
}

static int flush(struct enc *e, const struct run_model *final)
{
        struct dbuf body = DBUF_INIT;
        int r = otlp_metrics_encode(e->m, final, e->json, &body);

        e->bytes += body.len;
        e->requests++;
        dbuf_release(&body);
        return r;
}

static int encode(void *userdata, const struct sample *s)
{
        struct enc *e = userdata;

        summary_add(&e->sum, s);
        otlp_metrics_add_sample(e->m, s);
        return otlp_metrics_pending(e->m) >= BATCH ? flush(e, NULL) : 0;
}

int main(int argc, char **argv)
{
        char path[4096];
        struct store *st;
        struct store_run run;
        struct run_info *ri = &run.info;
        struct summary sum;
        int64_t id, rows;
        double t0, t1;

        if (argc != 2) {
                fprintf(stderr, "usage: bench-export DIR\n");
                return 2;
        }
        snprintf(path, sizeof(path), "%s/bench.db", argv[1]);
        if (store_open(path, false, 1000, &st) < 0 || store_run_find(st, "bench", &id) < 0 ||
            store_run_get(st, id, &run) < 0) {
                fprintf(stderr, "bench-export: no run 'bench' in %s (run bench-store first)\n",
                        path);
                return 1;
        }
        summary_init(&sum, NULL);
        t0 = cpu_now();
        rows = store_samples_each(st, id, count_only, &sum);
        t1 = cpu_now();
        if (rows <= 0)
                return 1;
        printf("bench-export: read %lld sample rows: %.3f s CPU (%.2f us per row)\n",
               (long long)rows, t1 - t0, (t1 - t0) / (double)rows * 1e6);
        for (int proto = 0; proto < 2; proto++) {
                struct otel_config cfg = {.enabled = true,
                                          .protocol =
                                              proto ? OTEL_PROTOCOL_JSON : OTEL_PROTOCOL_PROTOBUF,
                                          .timeout_ms = 10000,
                                          .interval_ms = 60000};
                struct enc e = {.json = proto == 1};
                static struct run_facts facts;
                struct run_model final = {.run = ri, .summary = &e.sum, .facts = &facts};

                if (otlp_metrics_new(&cfg, ri, &e.m) < 0)
                        return 1;
                summary_init(&e.sum, NULL);
                targets_facts(NULL, ri, &facts);
                t0 = cpu_now();
                rows = store_samples_each(st, id, encode, &e);
                if (rows <= 0 || flush(&e, &final) < 0)
                        return 1;
                t1 = cpu_now();
                printf("bench-export: %s: read + encode %lld rows in %zu requests: %.3f s CPU, "
                       "%.1f MiB (%.0f bytes per sample)\n",
                       proto ? "http/json" : "http/protobuf", (long long)rows, e.requests, t1 - t0,
                       (double)e.bytes / 1048576, (double)e.bytes / (double)rows);
                otlp_metrics_free(e.m);
        }
        store_run_release(&run);
        store_close(st);
        return 0;
}
