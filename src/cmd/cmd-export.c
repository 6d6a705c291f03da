/* SPDX-License-Identifier: MIT */
/* buildtel export --otlp RUN: send a recorded run to an OTLP collector
 * again, later (the collector was down, or a new one wants the history),
 * as the run's own final export would have: every sample, the totals and
 * the per-target metrics.
 *
 * The run comes from the history database (store.h): its facts, every
 * sample row and its targets. Without a database, or for a run that is
 * not in it (--no-db at the time), or given a CSV path, it comes from its
 * files in the log directory: resources-<id>.csv and .run.json (no
 * targets). Either way the summary is recomputed from the samples as
 * summarize does. Samples go in batches of EXPORT_BATCH per request, the
 * totals with the last one.
 *
 * A run that has not finished is refused: a running one would be sent
 * without its end, and exported twice once it ends. --incomplete sends
 * what a run whose buildtel was killed left (samples and the totals they
 * give, no duration, no targets), marked build.run.state=incomplete. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd-recorded.h"
#include "cmd/cmd-trace.h"
#include "cmd/cmd.h"
#include "runfiles/names.h"
#include "runfiles/runjson.h"
#include "render/otlp-metrics.h"
#include "sinks/otlp-send.h"
#include "render/otlp-trace.h"
#include "sinks/sink.h"
#include "pipeline/loop.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/csv.h"
#include "util/libcurl.h"
#include "util/util.h"

#define EXPORT_BATCH 1000
#define EXPORT_MAX_CSV (1ull << 31)
#define EXPORT_BUSY_MS 2000

static const char *env_lookup(void *userdata, const char *name)
{
        return getenv(name);
}

static void export_note(void *userdata, const char *fmt, ...) _printf_(2, 3);
static void export_note(void *userdata, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        common_vprint("buildtel export: note", fmt, ap);
        va_end(ap);
}

/* One export: the metrics, the sender; the samples and the summary come
 * through the pipeline (a replay source -> rec -> export_sink). */
struct exporter {
        struct otel_config *cfg;
        struct otlp_metrics *m;
        struct otlp_sender *s;
        struct recorder *rec;
        /* The run's recorded model, the recorder's at its finish (where its
         * baseline is derived): from the history, its targets' facts, steps
         * (its spans) and units; from its files, none (no targets). */
        struct recorded rc;
        const struct targets *steps; /* the stored run's BuildKit steps, for its spans; NULL none */
        const char *db;              /* the history the baseline reads; row: the run's there */
        int64_t row;
        bool no_db; /* --no-db: a run from its files is in no history */
        struct summary_config sum_cfg;
        uint64_t rows;
        bool send_failed; /* the collector did not take a batch */
};

/* The run's spans, as the live run sends them (new span ids: the
 * history does not keep the live ones). 0 or -ENOMEM. */
static int send_trace(struct exporter *x, const struct run_model *final)
{
        struct otlp_trace_input in = {
            .cfg = x->cfg,
            .run = final->run,
            .facts = final->facts,
            .summary = final->summary,
            .targets = x->steps,
        };

        in.resource = otlp_metrics_resource(x->m, &in.nresource);
        return otlp_trace_submit(x->s, &in, now_monotonic());
}

/* Send what is pending (and with final, the totals and the spans); wait
 * for it. */
static int send_batch(struct exporter *x, const struct run_model *final)
{
        struct dbuf body = DBUF_INIT;
        struct otlp_send_stats st;
        int e;

        e = otlp_metrics_encode(x->m, final, x->cfg->protocol == OTEL_PROTOCOL_JSON, &body);
        if (e >= 0)
                e = otlp_sender_submit(x->s, &body, now_monotonic());
        dbuf_release(&body);
        if (e >= 0 && final)
                e = send_trace(x, final);
        if (e < 0)
                return e;
        (void)otlp_sender_flush(x->s, now_monotonic() + (double)x->cfg->timeout_ms / 1000.0 +
                                          OTLP_SEND_BACKOFF_MAX);
        otlp_sender_stats(x->s, &st);
        return st.failed || st.dropped ? -EIO : 0;
}

static int export_sink_open(const struct sink_ctx *ctx, void **ret_state)
{
        *ret_state = ctx->userdata;
        return 0;
}

/* Each replayed sample, after the recorder's summary took it. */
static void export_sink_sample(void *state, const struct sample *smp, const struct run_model *m)
{
        struct exporter *x = state;

        if (x->send_failed)
                return; /* the collector already refused: no more waiting */
        otlp_metrics_add_sample(x->m, smp);
        x->rows++;
        if (otlp_metrics_pending(x->m) >= EXPORT_BATCH && send_batch(x, NULL) < 0)
                x->send_failed = true;
}

static const struct sink_ops export_sink = {
    .name = "export",
    .open = export_sink_open,
    .sample = export_sink_sample,
};

/* The samples of a source through the pipeline into x. Returns the number
 * of samples or -errno from the source. */
static int64_t replay(struct exporter *x, const struct source_ops *ops, void *state,
                      struct run_info *ri)
{
        static const struct sink_ops *const sinks[] = {&export_sink, NULL};
        struct recorder_config cfg = {
            .summary = x->sum_cfg,
            .replay = true,
            .sinks = sinks,
            .sink_userdata = x,
            .recorded = &x->rc.m,
            .db_path = x->db,
            .replay_row = x->row,
        };
        int e = recorder_new(&cfg, ri, &x->rec);

        return e < 0 ? e : loop_replay(ops, state, x->rec);
}

/* The run as its files hold it; samples go to x as they are read. Returns
 * 0, -ENOMEM, -EIO (the collector), or 1 after printing why the files are
 * not a run. */
static int export_files(struct exporter *x, const char *csv, bool incomplete, struct run_info *ri)
{
        _cleanup_free_ char *buf = NULL, *json = NULL, *runjson = NULL;
        struct source_csv *src = NULL;
        size_t len, jlen;
        int64_t rows;
        int e;

        e = read_file_at(AT_FDCWD, csv, EXPORT_MAX_CSV, &buf, &len);
        if (e < 0) {
                fprintf(stderr, "buildtel export: cannot read '%s': %s\n", csv, strerror(-e));
                return 1;
        }
        /* the run's facts: resources-<id>.run.json beside the CSV */
        runjson = runfiles_beside(csv, RUNFILE_RUN);
        if (!runjson)
                return -ENOMEM;
        if (read_file_at(AT_FDCWD, runjson, 1 << 20, &json, &jlen) < 0 ||
            runjson_parse(json, jlen, ri) < 0 || !ri->run_id) {
                fprintf(stderr, "buildtel export: '%s' is missing or not a run record\n", runjson);
                return 1;
        }
        if (!ri->finished && !incomplete) {
                fprintf(stderr,
                        "buildtel export: run %s has not finished (still running, or its buildtel "
                        "was killed); --incomplete sends what it has\n",
                        ri->run_id);
                return 1;
        }
        /* its baseline: against the runs recorded before it, when the
         * history holds it (not a --no-db run) */
        if (ri->finished && !x->no_db)
                x->row = recorded_history_row(x->db, ri->run_id);
        e = common_otlp_run_span(x->cfg, ri->run_id);
        if (e >= 0)
                e = otlp_metrics_new(x->cfg, ri, &x->m);
        if (e >= 0)
                e = source_csv_open(buf, len, &src);
        rows = e < 0 ? e : replay(x, &source_csv, src, ri);
        source_csv.close(src);
        if (rows == -EINVAL) {
                fprintf(stderr, "buildtel export: '%s' is not a buildtel CSV\n", csv);
                return 1;
        }
        if (x->send_failed)
                return -EIO;
        return rows < 0 ? (int)rows : 0;
}

/* Where RUN is in the database: 0 with the row id, -ENOENT when the
 * database or the run is not there, 1 after printing why not. */
static int find_in_db(const struct common_opts *o, const char *spec, struct store **ret_st,
                      int64_t *ret_id, char **ret_db)
{
        _cleanup_free_ char *db = o->rec.db_path ? strdup(o->rec.db_path) : store_default_path();
        struct store *st = NULL;
        int e;

        if (!db)
                return -ENOENT;
        e = history_store_open(db, false, EXPORT_BUSY_MS, &st);
        if (e == -ENOENT) {
                *ret_db = TAKE_PTR(db);
                return -ENOENT;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel export: history database '%s': %s\n", db,
                        store_strerror(e));
                return 1;
        }
        e = store_run_find(st, spec, ret_id);
        if (e == -EEXIST) {
                fprintf(stderr,
                        "buildtel export: '%s' names several runs in '%s'; give more of the id\n",
                        spec, db);
                store_close(st);
                return 1;
        }
        if (e < 0 && e != -ENOENT) {
                fprintf(stderr, "buildtel export: history database '%s': %s\n", db,
                        store_strerror(e));
                store_close(st);
                return 1;
        }
        *ret_db = TAKE_PTR(db);
        if (e == -ENOENT) {
                store_close(st);
                return -ENOENT;
        }
        *ret_st = st;
        return 0;
}

/* The run from the database: facts, samples, targets. Same returns as
 * export_files. A finished run's recorded model (x->rc) is read: the
 * figures its sinks stored. */
static int export_db(struct exporter *x, struct store *st, int64_t id, const char *db,
                     bool incomplete, struct run_info *ri)
{
        struct source_history *src = NULL;
        int64_t rows;
        int e;

        struct store_run run;

        e = store_run_get(st, id, &run);
        if (e < 0)
                goto fail;
        /* the facts are the caller's from here on */
        *ri = run.info;
        run.info = (struct run_info){0};
        /* the revision the live run's span named */
        free(x->cfg->vcs_rev);
        x->cfg->vcs_rev = run.vcs_rev;
        run.vcs_rev = NULL;
        if (!ri->finished) {
                enum store_run_state state = run.state;

                store_run_release(&run);
                if (state == STORE_RUN_RUNNING) {
                        fprintf(stderr,
                                "buildtel export: run %s is still running; export it once it has "
                                "finished\n",
                                ri->run_id);
                        return 1;
                }
                if (!incomplete) {
                        fprintf(stderr,
                                "buildtel export: run %s is incomplete (its buildtel ended without "
                                "completing it); --incomplete sends what it has\n",
                                ri->run_id);
                        return 1;
                }
        } else {
                /* its baseline: against the runs recorded before it */
                x->db = db;
                x->row = id;
                /* the run's own thresholds, for its near-OOM count */
                e = store_run_thresholds(&run, &x->sum_cfg);
                store_run_release(&run);
                if (e < 0)
                        goto fail;
        }
        e = common_otlp_run_span(x->cfg, ri->run_id);
        if (e >= 0)
                e = otlp_metrics_new(x->cfg, ri, &x->m);
        if (e >= 0)
                e = source_history_open(st, id, &src);
        if (e < 0)
                return e;
        rows = replay(x, &source_history, src, ri);
        source_history.close(src);
        if (x->send_failed)
                return -EIO;
        if (rows < 0) {
                e = (int)rows;
                goto fail;
        }
        if (ri->finished) {
                /* its targets, steps (they become spans; none from a file
                 * before version 6) and units, as the run stored them */
                e = recorded_load_db(&x->rc, st, id, ri,
                                     recorder_summary(x->rec)->build.mode[0] != '\0');
                x->steps = x->rc.targets;
                if (e < 0)
                        goto fail;
        }
        return 0;
fail:
        if (e == -ENOMEM)
                return e;
        fprintf(stderr, "buildtel export: history database '%s': %s\n", db, store_strerror(e));
        return 1;
}

/* The last batch: the run's totals and its targets as the run stored
 * them (from the database), or none (its files), after the recorder's
 * finish (the run's baseline). 0, -ENOMEM, or -EIO when sending failed. */
static int send_final(struct exporter *x, const struct run_info *ri)
{
        struct run_model rm = {.run = ri, .summary = recorder_summary(x->rec)};

        targets_facts_outcome(ri, x->rc.facts);
        rm.facts = x->rc.facts;
        if (recorder_finish(x->rec, NULL) == -ENOMEM)
                return -ENOMEM;
        return send_batch(x, &rm) < 0 ? -EIO : 0;
}

/* "DIR/resources-ID.csv" for a run id, malloc'd; NULL when too long or
 * out of memory. */
static char *csv_of_run(const char *log_dir, const char *run)
{
        _cleanup_free_ char *def = NULL;
        char buf[4096];
        int r;

        if (!log_dir)
                log_dir = def = recorder_default_log_dir();
        if (!log_dir)
                return NULL;
        r = snprintf(buf, sizeof(buf), "%s/resources-%s.csv", log_dir, run);
        if (r < 0 || (size_t)r >= sizeof(buf))
                return NULL;
        return strdup(buf);
}

static bool is_file(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The run spec names: a CSV path; else the database; else the run's files.
 * Sets *ret_csv (a file) or *ret_st and *ret_id (the database). Returns 0,
 * 1 after saying why there is none, or -ENOMEM. */
static int resolve_run(struct common_opts *o, const char *spec, char **ret_csv,
                       struct store **ret_st, int64_t *ret_id, char **ret_db)
{
        size_t n = strlen(spec);
        char *csv;
        int e;

        if (n > 4 && strcmp(spec + n - 4, ".csv") == 0 && is_file(spec)) {
                *ret_csv = strdup(spec);
                return *ret_csv ? 0 : -ENOMEM;
        }
        if (!o->rec.no_db) {
                e = find_in_db(o, spec, ret_st, ret_id, ret_db);
                if (e > 0)
                        return 1;
                if (e == 0)
                        return 0;
        }
        csv = csv_of_run(o->rec.log_dir, spec);
        if (csv && is_file(csv)) {
                *ret_csv = csv;
                return 0;
        }
        if (*ret_db)
                fprintf(stderr,
                        "buildtel export: no run '%s' in the history database '%s', nor its "
                        "file '%s'\n",
                        spec, *ret_db, csv ? csv : "resources-RUN.csv");
        else
                fprintf(stderr, "buildtel export: no run '%s': no file '%s'%s\n", spec,
                        csv ? csv : "resources-RUN.csv",
                        o->rec.no_db ? " (--no-db)" : ", and no history database");
        free(csv);
        return 1;
}

/* The sender, the empty recorded model, the history the baseline reads.
 * 0, or 1 after saying why not. */
static int exporter_start(struct exporter *x, const struct common_opts *o)
{
        int e;

        x->sum_cfg = o->rec.summary;
        x->db = o->rec.no_db ? NULL : o->rec.db_path;
        x->no_db = o->rec.no_db;
        e = recorded_init(&x->rc);
        if (e >= 0)
                e = otlp_sender_new(x->cfg, &x->s);
        if (e < 0) {
                fprintf(stderr, "buildtel export: %s\n",
                        e == -ELIBACC ? libcurl_error() : "out of memory");
                return 1;
        }
        return 0;
}

static void exporter_release(struct exporter *x)
{
        recorder_free(x->rec);
        otlp_sender_free(x->s);
        otlp_metrics_free(x->m);
        recorded_release(&x->rc);
}

int cmd_export(int argc, char **argv)
{
        struct common_opts o;
        struct otel_config cfg = {0};
        struct exporter x = {.cfg = &cfg};
        struct run_info ri = {0};
        struct store *st = NULL;
        _cleanup_free_ char *csv = NULL, *db = NULL;
        const char *spec;
        int64_t id = 0;
        int k, e, ret = EXIT_BT_USAGE;
        char msg[256];

        common_opts_init(&o);
        k = cmd_parse_options(CMDS_EXPORT, "export", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (o.export_trace && !o.export_otlp && k >= argc - 1) {
                /* RUN defaults to the latest run in the history */
                spec = k < argc ? argv[k] : "";
                ret = 1;
                goto resolve;
        }
        if (!o.export_otlp || o.export_trace || k != argc - 1 || !*argv[k]) {
                cmd_print_short_usage("export");
                goto out;
        }
        spec = argv[k];
        e = otelenv_load(env_lookup, NULL, &o.otlp_opt, export_note, NULL, &cfg);
        if (e == -EINVAL) {
                fprintf(stderr, "buildtel export: --otlp-endpoint takes an http:// or https:// URL "
                                "with a host\n");
                goto out;
        }
        ret = 1;
        if (e < 0 || !cfg.enabled) {
                fprintf(stderr, "buildtel export: no collector: set OTEL_EXPORTER_OTLP_ENDPOINT or "
                                "--otlp-endpoint\n");
                goto out;
        }
resolve:
        e = resolve_run(&o, spec, &csv, &st, &id, &db);
        if (e == -ENOMEM)
                goto oom;
        if (e != 0)
                goto out;

        if (o.export_trace) {
                struct trace_job tj = {.out_path = o.output,
                                       .ninja_log = o.rec.metrics.ninja_log,
                                       .thresholds = o.rec.summary,
                                       .cmd = "export"};
                ret = !csv ? trace_write_db(&tj, st, id) : trace_write_files(&tj, csv);
                goto out;
        }
        if (exporter_start(&x, &o) > 0)
                goto out;
        e = !csv ? export_db(&x, st, id, db, o.incomplete, &ri)
                 : export_files(&x, csv, o.incomplete, &ri);
        if (e > 0)
                goto out;
        if (e == -EIO)
                goto failed;
        if (e < 0)
                goto oom;
        if (!ri.finished)
                otlp_metrics_set_resource(x.m, "build.run.state", "incomplete");
        e = send_final(&x, &ri);
        if (e == -ENOMEM)
                goto oom;
        if (e < 0)
                goto failed;
        otelenv_url_for_display(cfg.url, msg, sizeof(msg));
        printf("buildtel export: run %s%s: %llu samples%s%s sent to %s%s\n", ri.run_id,
               ri.finished ? "" : " (incomplete)", (unsigned long long)x.rows,
               x.rc.facts->n ? " and the targets" : "",
               !csv ? " from the history" : " from its files", msg,
               recorder_summary(x.rec)->skipped_rows ? " (junk rows skipped)" : "");
        ret = 0;
        goto out;
failed:
        if (!otlp_sender_take_error(x.s, msg, sizeof(msg)))
                snprintf(msg, sizeof(msg), "OTLP export failed");
        fprintf(stderr, "buildtel export: %s\n", msg);
        goto out;
oom:
        fprintf(stderr, "buildtel export: out of memory\n");
out:
        exporter_release(&x);
        store_close(st);
        run_info_release(&ri);
        otel_config_release(&cfg);
        common_opts_release(&o);
        return ret;
}
