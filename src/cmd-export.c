/* SPDX-License-Identifier: MIT */
/* buildtel export --otlp RUN: send a finished run to an OTLP collector
 * again, later (the collector was down, or a new one wants the history).
 * The run is read from its files in the log directory: resources-<id>.csv
 * (every sample, through the same column table) and resources-<id>.run.json
 * (the facts); the summary is recomputed from the samples as summarize
 * does. Samples go in batches of EXPORT_BATCH per request, the totals with
 * the last one. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd-common.h"
#include "cmd.h"
#include "sinks/otlp-metrics.h"
#include "sinks/otlp-send.h"
#include "util/csv.h"
#include "util/util.h"

#define EXPORT_BATCH 1000
#define EXPORT_MAX_CSV (1ull << 31)

enum { OPT_OTLP = OPT_COMMON_END };

static const char *env_lookup(void *userdata, const char *name)
{
        return getenv(name);
}

static void export_note(void *userdata, const char *fmt, ...) _printf_(2, 3);
static void export_note(void *userdata, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(stderr, "buildtel export: note: %s\n", buf);
}

/* "DIR/resources-ID.csv" for a run id; a path to a .csv as given. */
static char *csv_path_of(const char *log_dir, const char *run)
{
        _cleanup_free_ char *def = NULL;
        struct stat st;
        size_t n = strlen(run);
        char buf[4096];
        int r;

        if (n > 4 && strcmp(run + n - 4, ".csv") == 0 && stat(run, &st) == 0)
                return strdup(run);
        if (!log_dir)
                log_dir = def = recorder_default_log_dir();
        if (!log_dir)
                return NULL;
        r = snprintf(buf, sizeof(buf), "%s/resources-%s.csv", log_dir, run);
        if (r < 0 || (size_t)r >= sizeof(buf))
                return NULL;
        return strdup(buf);
}

/* Send what is pending (and with final, the totals); wait for it. */
static int send_batch(struct otlp_metrics *m, struct otlp_sender *s, const struct otel_config *cfg,
                      const struct run_model *final)
{
        struct dbuf body = DBUF_INIT;
        struct otlp_send_stats st;
        int e;

        e = otlp_metrics_encode(m, final, cfg->protocol == OTEL_PROTOCOL_JSON, &body);
        if (e >= 0)
                e = otlp_sender_submit(s, &body, now_monotonic());
        dbuf_release(&body);
        if (e < 0)
                return e;
        (void)otlp_sender_flush(s, now_monotonic() + (double)cfg->timeout_ms / 1000.0 +
                                           OTLP_SEND_BACKOFF_MAX);
        otlp_sender_stats(s, &st);
        return st.failed || st.dropped ? -EIO : 0;
}

int cmd_export(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "otlp", no_argument, NULL, OPT_OTLP },
                { "log-dir", required_argument, NULL, OPT_LOG_DIR },
                { "otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT },
                { "help", no_argument, NULL, OPT_HELP },
                { 0 },
        };
        static const char usage[] = "usage: buildtel export --otlp [--log-dir DIR] [--otlp-endpoint URL] RUN|FILE.csv\n";
        struct common_opts o;
        struct otel_config cfg = { 0 };
        struct otlp_metrics *m = NULL;
        struct otlp_sender *s = NULL;
        struct run_info ri = { 0 };
        struct summary sum;
        struct csv_record rec = CSV_RECORD_INIT;
        struct sample_colmap map;
        _cleanup_free_ char *csv = NULL, *buf = NULL, *json = NULL, *runjson = NULL;
        size_t len, pos = 0, used, jlen;
        uint64_t rows = 0, skipped = 0;
        bool otlp = false;
        int c, e, ret = EXIT_BT_USAGE;
        char msg[256];

        common_opts_init(&o);
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                int h = c == OPT_OTLP ? 0 : common_opts_parse(&o, c, optarg, "export");
                if (h < 0)
                        goto out;
                if (h > 0)
                        continue;
                if (c == OPT_OTLP)
                        otlp = true;
                else if (c == 'h')
                        o.help = true;
                else {
                        fputs(usage, stderr);
                        goto out;
                }
        }
        if (o.help) {
                cmd_print_usage("export");
                ret = 0;
                goto out;
        }
        if (!otlp || optind != argc - 1) {
                fputs(usage, stderr);
                goto out;
        }
        e = otelenv_load(env_lookup, NULL, &o.otlp_opt, export_note, NULL, &cfg);
        if (e == -EINVAL) {
                fprintf(stderr, "buildtel export: --otlp-endpoint takes an http:// or https:// URL with a host\n");
                goto out;
        }
        ret = 1;
        if (e < 0 || !cfg.enabled) {
                fprintf(stderr, "buildtel export: no collector: set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint\n");
                goto out;
        }
        csv = csv_path_of(o.rec.log_dir, argv[optind]);
        if (!csv) {
                fprintf(stderr, "buildtel export: cannot name the files of '%s'\n", argv[optind]);
                goto out;
        }
        e = read_file_at(AT_FDCWD, csv, EXPORT_MAX_CSV, &buf, &len);
        if (e < 0) {
                fprintf(stderr, "buildtel export: cannot read '%s': %s\n", csv, strerror(-e));
                goto out;
        }
        /* the run's facts: resources-<id>.run.json beside the CSV */
        runjson = malloc(strlen(csv) + sizeof(".run.json"));
        if (!runjson)
                goto oom;
        memcpy(runjson, csv, strlen(csv) - 4);
        memcpy(runjson + strlen(csv) - 4, ".run.json", sizeof(".run.json"));
        if (read_file_at(AT_FDCWD, runjson, 1 << 20, &json, &jlen) < 0 ||
            run_info_parse_json(json, jlen, &ri) < 0 || !ri.run_id) {
                fprintf(stderr, "buildtel export: '%s' is missing or not a run record\n", runjson);
                goto out;
        }
        summary_init(&sum, &o.rec.summary);
        e = csv_parse_record(buf, len, &rec, &used);
        if (e <= 0 || sample_colmap_init(&map, &rec) < 0) {
                fprintf(stderr, "buildtel export: '%s' is not a buildtel CSV\n", csv);
                goto out;
        }
        pos = used;
        if (otlp_metrics_new(&cfg, &ri, &m) < 0 || otlp_sender_new(&cfg, &s) < 0)
                goto oom;
        while (pos < len) {
                struct sample smp;

                e = csv_parse_record(buf + pos, len - pos, &rec, &used);
                if (e == 0)
                        break;
                if (e == -ENOMEM)
                        goto oom;
                pos += used;
                if (e < 0 || sample_from_record(&map, &rec, &smp) < 0) {
                        skipped++;
                        continue;
                }
                summary_add(&sum, &smp);
                otlp_metrics_add_sample(m, &smp);
                rows++;
                if (otlp_metrics_pending(m) >= EXPORT_BATCH && send_batch(m, s, &cfg, NULL) < 0)
                        goto failed;
        }
        {
                struct run_model rm = { .run = &ri, .summary = &sum, .targets = NULL };
                if (send_batch(m, s, &cfg, &rm) < 0)
                        goto failed;
        }
        otelenv_url_for_display(cfg.url, msg, sizeof(msg));
        printf("buildtel export: run %s: %llu samples sent to %s%s\n", ri.run_id,
               (unsigned long long)rows, msg, skipped ? " (junk rows skipped)" : "");
        ret = 0;
        goto out;
failed:
        if (!otlp_sender_take_error(s, msg, sizeof(msg)))
                snprintf(msg, sizeof(msg), "OTLP export failed");
        fprintf(stderr, "buildtel export: %s\n", msg);
        goto out;
oom:
        fprintf(stderr, "buildtel export: out of memory\n");
out:
        otlp_sender_free(s);
        otlp_metrics_free(m);
        csv_record_release(&rec);
        run_info_release(&ri);
        otel_config_release(&cfg);
        common_opts_release(&o);
        return ret;
}
