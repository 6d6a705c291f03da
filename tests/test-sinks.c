/* SPDX-License-Identifier: MIT */
/* Every sink on one fixed model: a run of three samples, one BuildKit
 * target with two steps, one compile unit, its output on both streams.
 * Each sink is opened in a temp log directory and driven as the recorder
 * drives it (open, output, sample, finish, close); what it wrote is then
 * read back: the file bytes against the model's own renderers (so a sink
 * that writes the wrong figures, the wrong file or half a file fails), the
 * rows of a real SQLite file, the warning of a network sink whose peer is
 * a closed 127.0.0.1 port (failing within its timeout, never blocking). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "model/summary.h"
#include "model/targets.h"
#include "model/units.h"
#include "parse/otelenv.h"
#include "runfiles/names.h"
#include "render/prom.h"
#include "render/report.h"
#include "render/summary.h"
#include "sinks/sink.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/macro.h"
#include "util/util.h"
#include "runfiles/samplecsv.h"
#include "runfiles/runjson.h"
#include "runfiles/targetsjson.h"
#include "runfiles/unitscsv.h"

#define NSAMPLES 3

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

/* The fixed model, and where a sink writes it. */
struct fx {
        char dir[64];
        char *argv[3];
        struct run_info ri;
        struct sample s[NSAMPLES];
        struct summary sum;
        struct targets *ts;
        struct units *units;
        struct run_facts facts;
        struct run_model m;
        struct sink_ctx ctx;
        struct prom_config prom;
        char warned[1024]; /* the last warning of a sink */
        int nwarn;
};

static void on_warn(void *userdata, const char *fmt, ...)
{
        struct fx *x = userdata;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(x->warned, sizeof(x->warned), fmt, ap);
        va_end(ap);
        x->nwarn++;
}

static void fixed_samples(struct fx *x)
{
        static const char *const stages[NSAMPLES] = {"configure", "=compile", "link"};

        for (size_t i = 0; i < NSAMPLES; i++) {
                struct sample *s = &x->s[i];

                sample_clear(s);
                s->epoch = 1767225600.0 + (double)i;
                s->elapsed_s = (double)i;
                s->load1 = 1.5 + (double)i;
                s->cpu_pct = 40 + 10 * (double)i;
                s->mem_used_bytes = (2000 + 500 * (double)i) * SAMPLE_MIB;
                s->mem_avail_bytes = (6000 - 500 * (double)i) * SAMPLE_MIB;
                s->mem_pct = 25 + 6.25 * (double)i;
                s->swap_used_bytes = 0;
                s->disk_avail_bytes = 40 * SAMPLE_GIB;
                s->disk_pct = 60;
                s->compilers = (double)i;
                s->stage = stages[i];
                s->context = i == 1 ? "[ 50%] Building C object a.o" : "";
                summary_add(&x->sum, s);
        }
}

static void fixed_targets(struct fx *x)
{
        static const struct step_fact steps[] = {
            {.name = "[build 1/2] FROM debian",
             .target = 0,
             .start_s = 0.2,
             .end_s = 0.4,
             .step = true,
             .cached = true},
            {.name = "[build 2/2] RUN make",
             .target = 0,
             .start_s = 0.5,
             .end_s = 1.8,
             .step = true},
        };
        struct unit u = {.kind = UNITS_COMPILE,
                         .first_s = 0.5,
                         .last_s = 1.5,
                         .peak_mb = 120,
                         .peak_s = 1,
                         .cpu_s = 0.9};

        x->ts = calloc(1, sizeof(*x->ts));
        assert_non_null(x->ts);
        targets_init(x->ts);
        (void)targets_get(x->ts, "app", 3);
        for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
                assert_int_equal(targets_add_step(x->ts, &steps[i]), 0);
        /* as the BuildKit parser counts them: distinct [i/n] vertices */
        x->ts->buildkit_seen = true;
        x->ts->t[0].steps = x->ts->steps = 2;
        x->ts->t[0].cached = x->ts->cached = 1;
        targets_facts(x->ts, &x->ri, &x->facts);
        assert_int_equal(units_new(&x->units), 0);
        snprintf(u.tool, sizeof(u.tool), "cc1");
        snprintf(u.name, sizeof(u.name), "a.c");
        assert_int_equal(units_put(x->units, &u), 0);
}

static int setup(void **state)
{
        struct fx *x = calloc(1, sizeof(*x));

        if (!x)
                return -1;
        snprintf(x->dir, sizeof(x->dir), "/tmp/buildtel-test-sinks.XXXXXX");
        if (!mkdtemp(x->dir))
                return -1;
        x->argv[0] = M("make");
        x->argv[1] = M("-j2");
        x->ri = (struct run_info){.run_id = M("fixed"),
                                  .kind = M("run"),
                                  .argv = x->argv,
                                  .cwd = M("/src"),
                                  .host = M("builder"),
                                  .start_epoch = 1767225600.0,
                                  .end_epoch = 1767225602.5,
                                  .finished = true,
                                  .exit_code = 0,
                                  .ncpu = 4,
                                  .interval = 1,
                                  .pid = 4242};
        summary_init(&x->sum, NULL);
        fixed_samples(x);
        fixed_targets(x);
        x->m = (struct run_model){.run = &x->ri,
                                  .summary = &x->sum,
                                  .targets = x->ts,
                                  .units = x->units,
                                  .facts = &x->facts};
        x->ctx = (struct sink_ctx){.log_dir = x->dir,
                                   .run = &x->ri,
                                   .quiet = true,
                                   .prom = &x->prom,
                                   .warn = on_warn,
                                   .warn_userdata = x};
        *state = x;
        return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path) < 0 ? -1 : 0;
}

static void rm_tree(const char *dir)
{
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int teardown(void **state)
{
        struct fx *x = *state;

        rm_tree(x->dir);
        targets_release(x->ts);
        free(x->ts);
        units_free(x->units);
        free(x);
        return 0;
}

/* The sink driven as the recorder drives it; finish's result. */
static int drive(const struct sink_ops *ops, struct fx *x)
{
        struct run_model during = {.run = &x->ri, .summary = &x->sum};
        void *st = NULL;
        int e = ops->open(&x->ctx, &st);

        assert_int_equal(e, 0);
        if (!st)
                return 0; /* off: the recorder calls nothing more */
        if (ops->output) {
                ops->output(st, 1, "compiling a.c\n", 14);
                ops->output(st, 2, "warning: \x01 odd\n", 15);
                ops->output(st, 1, "linking", 7);
        }
        for (size_t i = 0; i < NSAMPLES && ops->sample; i++)
                ops->sample(st, &x->s[i], &during);
        e = ops->finish ? ops->finish(st, &x->m) : 0;
        if (ops->close)
                ops->close(st);
        return e;
}

/* The bytes of a file of the log directory ("" and -errno when missing). */
static int slurp(const struct fx *x, const char *name, struct dbuf *out)
{
        char path[256];
        char *p = NULL;
        size_t n = 0;
        int e;

        assert_true(snprintf(path, sizeof(path), "%s/%s", x->dir, name) < (int)sizeof(path));
        e = read_regular_file(path, 0, 64 << 20, &p, &n);
        dbuf_reset(out);
        (void)dbuf_append(out, "", 0);
        if (e < 0)
                return e;
        (void)dbuf_append(out, p, n);
        free(p);
        return 0;
}

static bool exists(const struct fx *x, const char *name)
{
        char path[256];
        struct stat st;

        assert_true(snprintf(path, sizeof(path), "%s/%s", x->dir, name) < (int)sizeof(path));
        return stat(path, &st) == 0;
}

static void assert_bytes(const struct dbuf *got, const struct dbuf *want)
{
        assert_true(want->len > 0);
        assert_int_equal(got->len, want->len);
        assert_memory_equal(got->p, want->p, want->len);
}

/* ---- the file sinks, each against the renderer of its format ---- */

static void want_runinfo(struct fx *x, struct dbuf *w)
{
        assert_int_equal(runjson_format(&x->ri, w), 0);
}

static void want_csv(struct fx *x, struct dbuf *w)
{
        assert_int_equal(samplecsv_header(w), 0);
        for (size_t i = 0; i < NSAMPLES; i++)
                assert_int_equal(
                    (x->ctx.csv_safe ? samplecsv_format_safe : samplecsv_format)(&x->s[i], w), 0);
}

static void want_buildlog(struct fx *x, struct dbuf *w)
{
        assert_int_equal(dbuf_puts(w, "compiling a.c\nwarning: \x01 odd\nlinking"), 0);
}

static void want_summary_txt(struct fx *x, struct dbuf *w)
{
        assert_int_equal(render_summary_text(&x->sum, &x->ri, w), 0);
}

static void want_summary_json(struct fx *x, struct dbuf *w)
{
        assert_int_equal(render_summary_json(&x->sum, &x->ri, w), 0);
}

static void want_targets(struct fx *x, struct dbuf *w)
{
        assert_int_equal(targetsjson_format(x->ts, &x->facts, w), 0);
}

static void want_units(struct fx *x, struct dbuf *w)
{
        assert_int_equal(unitscsv_format(x->units, w), 0);
}

static void want_report(struct fx *x, struct dbuf *w)
{
        struct report_data d;

        report_data_init(&d);
        for (size_t i = 0; i < NSAMPLES; i++)
                assert_int_equal(report_data_add(&d, &x->s[i]), 0);
        assert_int_equal(report_render_html(&d, &x->m, w), 0);
        report_data_release(&d);
}

static void want_prom(struct fx *x, struct dbuf *w)
{
        assert_int_equal(prom_render(&x->m, x->prom.metric_prefix, w), 0);
}

static void test_file_sinks(void **state)
{
        struct fx *x = *state;
        static const struct {
                const struct sink_ops *ops;
                bool csv_safe;
                const char *file; /* in the log directory */
                void (*want)(struct fx *x, struct dbuf *w);
                const char *file2; /* a second file, or NULL */
                void (*want2)(struct fx *x, struct dbuf *w);
                const char *has; /* a literal the file holds */
        } cases[] = {
            {&sink_runinfo, false, "resources-fixed.run.json", want_runinfo, NULL, NULL,
             "\"run_id\": \"fixed\""},
            {&sink_csv, false, "resources-fixed.csv", want_csv, NULL, NULL, ",=compile,"},
            /* --csv-safe: the stage that starts with '=' is defused */
            {&sink_csv, true, "resources-fixed.csv", want_csv, NULL, NULL, "'=compile"},
            {&sink_buildlog, false, "build-fixed.log", want_buildlog, NULL, NULL,
             "warning: \x01 odd\nlinking"},
            {&sink_summary, false, "resources-fixed.summary.txt", want_summary_txt,
             "resources-fixed.summary.json", want_summary_json, "make -j2"},
            {&sink_targets, false, "resources-fixed.targets.json", want_targets, NULL, NULL,
             "\"app\""},
            {&sink_units, false, "resources-fixed.units.csv", want_units, NULL, NULL, "a.c"},
            {&sink_report, false, "report-fixed.html", want_report, NULL, NULL, "builder"},
        };
        struct dbuf got = DBUF_INIT, want = DBUF_INIT;

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                x->ctx.csv_safe = cases[i].csv_safe;
                assert_int_equal(drive(cases[i].ops, x), 0);
                assert_int_equal(slurp(x, cases[i].file, &got), 0);
                dbuf_reset(&want);
                cases[i].want(x, &want);
                assert_bytes(&got, &want);
                assert_non_null(memmem(got.p, got.len, cases[i].has, strlen(cases[i].has)));
                if (cases[i].file2) {
                        assert_int_equal(slurp(x, cases[i].file2, &got), 0);
                        dbuf_reset(&want);
                        cases[i].want2(x, &want);
                        assert_bytes(&got, &want);
                }
        }
        x->ctx.csv_safe = false;
        assert_int_equal(x->nwarn, 0);
        dbuf_release(&got);
        dbuf_release(&want);
}

/* A build that showed no targets and no compile units: no file, no error.
 * --no-report: no page. */
static void test_file_sinks_nothing(void **state)
{
        struct fx *x = *state;
        const struct targets *ts = x->m.targets;

        x->m.targets = NULL;
        x->m.units = NULL;
        x->ctx.no_report = true;
        assert_int_equal(drive(&sink_targets, x), 0);
        assert_int_equal(drive(&sink_units, x), 0);
        assert_int_equal(drive(&sink_report, x), 0);
        assert_false(exists(x, "resources-fixed.targets.json"));
        assert_false(exists(x, "resources-fixed.units.csv"));
        assert_false(exists(x, "report-fixed.html"));
        x->m.targets = ts;
        x->m.units = x->units;
        x->ctx.no_report = false;
}

/* An unwritable log directory: open (or finish) says so with -errno. */
static void test_file_sinks_unwritable(void **state)
{
        struct fx *x = *state;
        static const struct sink_ops *const ops[] = {&sink_runinfo, &sink_csv, &sink_buildlog};
        void *st = NULL;

        x->ctx.log_dir = "/nonexistent/buildtel";
        for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
                assert_int_equal(ops[i]->open(&x->ctx, &st), -ENOENT);
        assert_int_equal(sink_summary.open(&x->ctx, &st), 0);
        assert_int_equal(sink_summary.finish(st, &x->m), -ENOENT);
        sink_summary.close(st);
        x->ctx.log_dir = x->dir;
}

/* The GitHub step summary: the Markdown appended, once per run. */
static void test_report_step_summary(void **state)
{
        struct fx *x = *state;
        char path[128];
        struct dbuf got = DBUF_INIT, one = DBUF_INIT;
        static const char *const files[] = {"resources-fixed.csv",
                                            "resources-fixed.summary.txt",
                                            "resources-fixed.summary.json",
                                            "resources-fixed.targets.json",
                                            "build-fixed.log",
                                            "report-fixed.html",
                                            NULL};

        snprintf(path, sizeof(path), "%s/step-summary.md", x->dir);
        assert_int_equal(setenv("GITHUB_STEP_SUMMARY", path, 1), 0);
        assert_int_equal(drive(&sink_report, x), 0);
        assert_int_equal(drive(&sink_report, x), 0);
        unsetenv("GITHUB_STEP_SUMMARY");
        assert_int_equal(report_render_markdown(&x->m, files, &one), 0);
        assert_int_equal(slurp(x, "step-summary.md", &got), 0);
        assert_int_equal(got.len, 2 * one.len);
        assert_memory_equal(got.p, one.p, one.len);
        assert_memory_equal(got.p + one.len, one.p, one.len);
        dbuf_release(&got);
        dbuf_release(&one);
}

/* The Prometheus textfile: in --textfile-dir under --prom-file, with the
 * prefix; without a directory (none of the collector's exists here) in
 * the log directory, said once. */
static void test_prom(void **state)
{
        struct fx *x = *state;
        char dir[128];
        struct dbuf got = DBUF_INIT, want = DBUF_INIT;

        snprintf(dir, sizeof(dir), "%s/textfile", x->dir);
        x->prom = (struct prom_config){
            .textfile_dir = dir, .prom_file = "ci.prom", .metric_prefix = "ci_"};
        assert_int_equal(drive(&sink_prom, x), 0);
        assert_int_equal(slurp(x, "textfile/ci.prom", &got), 0);
        want_prom(x, &want);
        assert_bytes(&got, &want);
        assert_non_null(strstr(got.p, "ci_"));
        assert_int_equal(x->nwarn, 0);
        x->prom = (struct prom_config){0};
        x->ctx.quiet = false;
        if (getenv("BUILDTEL_TEXTFILE_DIR") || access(PROM_SEED_DIR, F_OK) == 0 ||
            access(PROM_DEBIAN_DIR, F_OK) == 0) {
                x->ctx.quiet = true;
                dbuf_release(&got);
                dbuf_release(&want);
                return; /* a collector's directory on this machine: not ours to write */
        }
        /* no collector's directory and none given: no file, and not a word */
        assert_int_equal(drive(&sink_prom, x), 0);
        assert_int_equal(slurp(x, "buildtel.prom", &got), -ENOENT);
        assert_int_equal(x->nwarn, 0);
        x->ctx.quiet = true;
        x->nwarn = 0;
        dbuf_release(&got);
        dbuf_release(&want);
}

/* ---- the network sinks against a closed port ---- */

/* A 127.0.0.1 port nothing listens on: bound, then closed. */
static int closed_port(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        close(fd);
        return ntohs(a.sin_port);
}

static void test_pushgw_down(void **state)
{
        struct fx *x = *state;
        char url[64];
        double t0;

        /* no --pushgateway: nothing to do */
        x->prom = (struct prom_config){0};
        assert_int_equal(drive(&sink_pushgw, x), 0);
        assert_int_equal(x->nwarn, 0);

        snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
        x->prom.pushgateway = url;
        x->prom.push_timeout_s = 2;
        t0 = now_monotonic();
        assert_int_equal(drive(&sink_pushgw, x), 0); /* the build's status is not its to change */
        assert_true(now_monotonic() - t0 < 2.5);
        assert_int_equal(x->nwarn, 1);
        assert_non_null(strstr(x->warned, "push to http://127.0.0.1:"));
        assert_non_null(strstr(x->warned, "failed"));
        x->prom = (struct prom_config){0};
        x->nwarn = 0;
}

static void test_otlp_down(void **state)
{
        struct fx *x = *state;
        char url[96];
        struct otel_config cfg;
        double t0;

        /* not enabled: nothing to do */
        cfg = (struct otel_config){0};
        x->ctx.otlp = &cfg;
        assert_int_equal(drive(&sink_otlp, x), 0);
        assert_int_equal(x->nwarn, 0);

        snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/metrics", closed_port());
        cfg = (struct otel_config){.enabled = true,
                                   .url = url,
                                   .protocol = OTEL_PROTOCOL_PROTOBUF,
                                   .timeout_ms = 1000,
                                   .interval_ms = 60000};
        t0 = now_monotonic();
        assert_int_equal(drive(&sink_otlp, x), 0);
        assert_true(now_monotonic() - t0 < 2.0); /* bounded by its timeout */
        assert_int_equal(x->nwarn, 1);
        assert_non_null(strstr(x->warned, "127.0.0.1"));
        x->ctx.otlp = NULL;
        x->nwarn = 0;
}

/* ---- the history database: a real SQLite file, read back ---- */

struct rows {
        size_t n;
        double mem_used[NSAMPLES + 1], elapsed[NSAMPLES + 1];
        char stage[NSAMPLES + 1][32];
};

static int see_sample(void *userdata, const struct sample *s)
{
        struct rows *r = userdata;

        if (r->n < ARRAY_SIZE(r->mem_used)) {
                r->mem_used[r->n] = s->mem_used_bytes;
                r->elapsed[r->n] = s->elapsed_s;
                snprintf(r->stage[r->n], sizeof(r->stage[0]), "%s", s->stage);
        }
        r->n++;
        return 0;
}

static void test_sqlite(void **state)
{
        struct fx *x = *state;
        char db[128];
        struct store *st = NULL;
        struct store_run run;
        struct rows rows = {0};
        int64_t id;

        snprintf(db, sizeof(db), "%s/history.db", x->dir);
        /* --no-db: nothing */
        assert_int_equal(drive(&sink_sqlite, x), 0);
        assert_false(exists(x, "history.db"));
        x->ctx.db_path = db;
        assert_int_equal(drive(&sink_sqlite, x), 0);
        x->ctx.db_path = NULL;
        assert_int_equal(x->nwarn, 0);

        assert_int_equal(store_open(db, false, 1000, &st), 0);
        assert_int_equal(store_run_find(st, "fixed", &id), 0);
        assert_int_equal(store_run_get(st, id, &run), 0);
        assert_string_equal(run.info.run_id, "fixed");
        assert_string_equal(run.info.host, "builder");
        assert_string_equal(run.info.argv[0], "make");
        assert_int_equal(run.info.exit_code, 0);
        assert_int_equal(run.state, STORE_RUN_FINISHED);
        assert_int_equal(run.samples, NSAMPLES);
        assert_true(fabs(run.mem_used_peak_mb - 3000) < 1e-6);
        assert_int_equal(run.steps, 2);
        assert_int_equal(run.cached_steps, 1);
        assert_non_null(strstr(run.build_log, "build-fixed.log"));
        store_run_release(&run);
        assert_int_equal(store_samples_each(st, id, see_sample, &rows), NSAMPLES);
        assert_int_equal(rows.n, NSAMPLES);
        for (size_t i = 0; i < NSAMPLES; i++) {
                assert_true(rows.mem_used[i] == x->s[i].mem_used_bytes);
                assert_true(rows.elapsed[i] == x->s[i].elapsed_s);
                assert_string_equal(rows.stage[i], x->s[i].stage);
        }
        store_close(st);
}

/* A database that is not one: a warning, the run goes on (finish 0). */
static void test_sqlite_corrupt(void **state)
{
        struct fx *x = *state;
        char db[128];
        int fd;

        snprintf(db, sizeof(db), "%s/junk.db", x->dir);
        fd = open(db, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        for (int i = 0; i < 64; i++)
                assert_int_equal(write_all(fd, "this is not an SQLite file. ", 28), 0);
        close(fd);
        x->ctx.db_path = db;
        (void)drive(&sink_sqlite, x);
        x->ctx.db_path = NULL;
        assert_int_equal(x->nwarn, 1);
        x->nwarn = 0;
}

/* ---- the trace sink ---- */

static void test_trace(void **state)
{
        struct fx *x = *state;
        char path[128];
        struct trace_sink_job job = {.fd = -1};
        struct dbuf got = DBUF_INIT;
        json_error_t err;
        json_t *root, *ev;
        size_t counters = 0;

        snprintf(path, sizeof(path), "%s/t.json", x->dir);
        job.path = path;
        x->ctx.userdata = &job;
        assert_int_equal(drive(&sink_trace, x), 0);
        assert_int_equal(job.result, 0);
        assert_int_equal(job.samples, NSAMPLES);
        assert_int_equal(slurp(x, "t.json", &got), 0);
        root = json_loadb(got.p, got.len, 0, &err);
        assert_non_null(root);
        ev = json_object_get(root, "traceEvents");
        assert_true(json_is_array(ev) && json_array_size(ev) > 0);
        for (size_t i = 0; i < json_array_size(ev); i++) {
                const char *ph = json_string_value(json_object_get(json_array_get(ev, i), "ph"));

                counters += ph && strcmp(ph, "C") == 0;
        }
        assert_true(counters >= NSAMPLES);
        assert_non_null(strstr(got.p, "[build 2/2] RUN make"));
        json_decref(root);

        /* cancelled before finish: nothing written */
        snprintf(path, sizeof(path), "%s/t2.json", x->dir);
        job = (struct trace_sink_job){.fd = -1, .path = path, .cancel = true};
        assert_int_equal(drive(&sink_trace, x), 0);
        assert_false(exists(x, "t2.json"));
        x->ctx.userdata = NULL;
        dbuf_release(&got);
}

/* The run's table: every sink named once, the trace sink not in it. */
static void test_table(void **state)
{
        size_t n = 0;

        (void)state;
        for (size_t i = 0; sinks_all[i]; i++, n++) {
                assert_non_null(sinks_all[i]->name);
                assert_non_null(sinks_all[i]->open);
                assert_ptr_not_equal(sinks_all[i], &sink_trace);
                for (size_t k = 0; k < i; k++)
                        assert_string_not_equal(sinks_all[i]->name, sinks_all[k]->name);
        }
        assert_int_equal(n, 11);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),
            cmocka_unit_test_setup_teardown(test_file_sinks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_file_sinks_nothing, setup, teardown),
            cmocka_unit_test_setup_teardown(test_file_sinks_unwritable, setup, teardown),
            cmocka_unit_test_setup_teardown(test_report_step_summary, setup, teardown),
            cmocka_unit_test_setup_teardown(test_prom, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pushgw_down, setup, teardown),
            cmocka_unit_test_setup_teardown(test_otlp_down, setup, teardown),
            cmocka_unit_test_setup_teardown(test_sqlite, setup, teardown),
            cmocka_unit_test_setup_teardown(test_sqlite_corrupt, setup, teardown),
            cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
        };

        unsetenv("GITHUB_STEP_SUMMARY");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
