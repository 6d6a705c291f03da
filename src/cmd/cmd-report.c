/* SPDX-License-Identifier: MIT */
/* buildtel report [RUN|FILE.csv]: the HTML report (or the Markdown job
 * summary) of a recorded run, drawn from the same model the live run's
 * sinks get: the samples replayed through the summary code (as
 * `summarize` does), the targets' facts and the compile units. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd-recorded.h"
#include "cmd/cmd-runfiles.h"
#include "cmd/cmd.h"
#include "runfiles/names.h"
#include "render/report.h"
#include "sinks/sink.h"
#include "pipeline/loop.h"
#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "util/outfile.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

static const char usage[] = "usage: buildtel report [-o FILE|-] [--format html|markdown] "
                            "[--near-oom-mb N] [--low-disk-gb N] [--db PATH] [RUN|FILE.csv]\n";

#define REPORT_MAX_CSV (4ULL << 30)

struct loaded {
        struct run_info ri;
        struct summary_config thresholds;
        struct report_data d;
        struct recorded rc; /* the recorded model, loaded after the replay */
        char *default_out;  /* report-<id>.html beside the CSV, or in the cwd */
        bool markdown;
        struct dbuf out; /* the page, rendered at the replay's finish */
        int error;       /* the first of the report sink */
        uint64_t skipped_rows;
};

/* The report as a sink of the replay: each sample into the charts' data,
 * then the page from the recorder's model at finish. */
static int rsink_open(const struct sink_ctx *ctx, void **ret_state)
{
        *ret_state = ctx->userdata;
        return 0;
}

static void rsink_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct loaded *l = state;

        if (l->error >= 0)
                l->error = report_data_add(&l->d, s);
}

static int rsink_finish(void *state, const struct run_model *m)
{
        struct loaded *l = state;

        l->skipped_rows = m->summary->skipped_rows;
        if (l->error >= 0)
                l->error = l->markdown ? report_render_markdown(m, NULL, &l->out)
                                       : report_render_html(&l->d, m, &l->out);
        return l->error;
}

static const struct sink_ops report_replay_sink = {
    .name = "report",
    .open = rsink_open,
    .sample = rsink_sample,
    .finish = rsink_finish,
};

/* A replay recorder with the report sink, for l->ri (loaded later is
 * fine: it is read at finish); db and row: the history its baseline reads
 * (row 0: none). */
static int replay_new(struct loaded *l, const char *db, int64_t row, struct recorder **ret)
{
        static const struct sink_ops *const sinks[] = {&report_replay_sink, NULL};
        struct recorder_config cfg = {.replay = true,
                                      .sinks = sinks,
                                      .sink_userdata = l,
                                      .summary = l->thresholds,
                                      .recorded = &l->rc.m,
                                      .db_path = db,
                                      .replay_row = row};

        return recorder_new(&cfg, &l->ri, ret);
}

/* The recorded model loaded, the recorder's finish renders the page. */
static int replay_finish(struct loaded *l, struct recorder *r)
{
        return recorder_finish(r, NULL) < 0 ? -ENOMEM : 0;
}

static int load_csv(const char *path, const char *db, struct loaded *l)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ char *dir = NULL;
        struct source_csv *src = NULL;
        struct recorder *r = NULL;
        bool oom;
        size_t len;
        int64_t rows;
        int e;

        e = read_file_at(AT_FDCWD, path, REPORT_MAX_CSV, &buf, &len);
        if (e < 0) {
                fprintf(stderr, "buildtel report: cannot read '%s': %s\n", path, strerror(-e));
                return 1;
        }
        load_run_info(path, &l->ri);
        rows = source_csv_open(buf, len, &src);
        if (rows >= 0)
                rows = replay_new(l, db, recorded_history_row(db, l->ri.run_id), &r);
        if (rows >= 0)
                rows = loop_replay(&source_csv, src, r);
        source_csv.close(src);
        if (rows < 0) {
                recorder_free(r);
                if (rows == -ENOMEM)
                        return -ENOMEM;
                fprintf(stderr, "buildtel report: '%s' is not a buildtel CSV (%s)\n", path,
                        rows == -EINVAL ? "no buildtel header" : strerror((int)-rows));
                return 1;
        }
        recorded_load_files(&l->rc, path, &l->ri);
        dir = runfiles_dir_of(path, &oom);
        if (oom)
                return -ENOMEM;
        l->default_out =
            runfiles_path(dir, l->ri.run_id ? l->ri.run_id : "unknown", RUNFILE_REPORT);
        e = l->default_out ? replay_finish(l, r) : -ENOMEM;
        recorder_free(r);
        return e;
}

static int load_db(const struct common_opts *o, const char *spec, struct loaded *l)
{
        _cleanup_free_ char *def = NULL;
        const char *db = o->rec.db_path;
        struct store *st = NULL;
        struct source_history *src = NULL;
        struct recorder *r = NULL;
        int64_t id, rows;
        int e, ret = 1;

        if (!db)
                db = def = store_default_path();
        e = db ? history_store_open(db, false, 2000, &st) : -ENOENT;
        if (e < 0) {
                fprintf(stderr,
                        "buildtel report: '%s' is neither a file nor a run (history "
                        "database '%s': %s)\n",
                        spec ? spec : "latest", db ? db : "none", store_strerror(e));
                return 1;
        }
        e = store_run_find(st, spec ? spec : "", &id);
        if (e >= 0) {
                struct store_run run;

                e = store_run_get(st, id, &run);
                if (e >= 0) {
                        l->ri = run.info;
                        run.info = (struct run_info){0};
                        (void)store_run_thresholds(&run, &l->thresholds);
                        store_run_release(&run);
                }
        }
        if (e >= 0)
                e = source_history_open(st, id, &src);
        if (e >= 0)
                e = replay_new(l, db, id, &r);
        rows = e >= 0 ? loop_replay(&source_history, src, r) : e;
        source_history.close(src);
        if (rows < 0) {
                fprintf(stderr, "buildtel report: '%s' in '%s': %s\n", spec ? spec : "latest", db,
                        rows == -ENOENT ? "no such run" : store_strerror((int)rows));
                goto out;
        }
        (void)recorded_load_db(&l->rc, st, id, &l->ri, recorder_summary(r)->build.mode[0] != '\0');
        l->default_out =
            runfiles_path(NULL, l->ri.run_id ? l->ri.run_id : "unknown", RUNFILE_REPORT);
        ret = l->default_out ? replay_finish(l, r) : -ENOMEM;
out:
        recorder_free(r);
        store_close(st);
        return ret;
}

/* -o PATH as the user gave it (outfile.h: a FIFO or a device written
 * through); the name chosen here (ours: report-<id>.html beside the CSV or
 * in the current directory) a run file (util.h), made new. */
static int write_out(const char *out, const struct dbuf *b, bool ours)
{
        int e = ours ? write_file_atomic(out, b->p, b->len) : outfile_write(out, b->p, b->len);

        if (e < 0) {
                fprintf(stderr, "buildtel report: cannot write '%s': %s\n", out,
                        ours ? runfile_strerror(e) : outfile_strerror(e));
                return 1;
        }
        if (strcmp(out, "-") != 0)
                fprintf(stderr, "buildtel: report: %s\n", out);
        return 0;
}

static int render(struct loaded *l, const char *out)
{
        if (l->error < 0) {
                fprintf(stderr, "buildtel report: out of memory\n");
                return 1;
        }
        if (out || l->markdown)
                return write_out(out ? out : "-", &l->out, false);
        return write_out(l->default_out, &l->out, true);
}

static int parse_args(int argc, char **argv, struct common_opts *o)
{
        int k = cmd_parse_table(CMDS_REPORT, "report", argc, argv, o);

        if (k < 0)
                return -1;
        if (!o->help && k < argc - 1) {
                fputs(usage, stderr);
                return -1;
        }
        return k;
}

int cmd_report(int argc, char **argv)
{
        struct common_opts o;
        struct loaded l = {.ri = {0}};
        const char *spec;
        struct stat sb;
        int k, ret = EXIT_BT_USAGE;

        common_opts_init(&o);
        report_data_init(&l.d);
        k = parse_args(argc, argv, &o);
        if (k < 0)
                goto out;
        if (o.help) {
                cmd_print_usage("report");
                ret = 0;
                goto out;
        }
        spec = k < argc ? argv[k] : NULL;
        l.thresholds = o.rec.summary;
        l.markdown = o.markdown;
        l.ri.end_epoch = l.ri.start_epoch = NAN;
        l.ri.exit_code = -1;
        if (recorded_init(&l.rc) < 0) {
                ret = 1;
                goto out;
        }
        if (spec && stat(spec, &sb) == 0)
                ret = load_csv(spec, o.rec.db_path, &l);
        else
                ret = load_db(&o, spec, &l);
        if (ret < 0)
                fprintf(stderr, "buildtel report: out of memory\n");
        if (ret == 0)
                ret = render(&l, o.output);
        else
                ret = 1;
out:
        recorded_release(&l.rc);
        free(l.default_out);
        report_data_release(&l.d);
        dbuf_release(&l.out);
        run_info_release(&l.ri);
        common_opts_release(&o);
        return ret;
}
