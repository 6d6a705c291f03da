/* SPDX-License-Identifier: MIT */
/* buildtel report [RUN|FILE.csv]: the HTML report (or the Markdown job
 * summary) of a recorded run, drawn from the same model the live run's
 * sinks get: the samples replayed through the summary code (as
 * `summarize` does), the targets' facts and the compile units. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "runfiles/names.h"
#include "pipeline/replay.h"
#include "sinks/sink.h"
#include "util/outfile.h"
#include "util/util.h"

static const char usage[] = "usage: buildtel report [-o FILE|-] [--format html|markdown] "
                            "[--near-oom-mb N] [--low-disk-gb N] [--db PATH] [RUN|FILE.csv]\n";

/* report-<id>.html beside the CSV, or in the current directory; NULL:
 * out of memory. */
static char *default_out(const struct replay_run *run)
{
        bool oom = false;
        _cleanup_free_ char *dir = run->csv ? runfiles_dir_of(run->csv, &oom) : NULL;

        return oom ? NULL
                   : runfiles_path(dir, run->ri.run_id ? run->ri.run_id : "unknown",
                                   RUNFILE_REPORT);
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

/* The page of the run spec names, through the replay into the report
 * sink, written to out (NULL: report-<id>.html; Markdown: stdout). */
static int report(const struct common_opts *o, const char *spec)
{
        static const struct sink_ops *const sinks[] = {&sink_report_page, NULL};
        struct report_page_job job = {.markdown = o->markdown, .out = DBUF_INIT};
        _cleanup_free_ char *def = NULL;
        struct replay *rp = NULL;
        const struct run_model *m;
        int ret = 1;

        if (common_replay_open(o, "report", spec, false, true, &rp) > 0 ||
            common_replay_through("report", rp, sinks, &job, &m) < 0)
                goto out;
        if (!o->output && !o->markdown && !(def = default_out(replay_run(rp))))
                job.result = -ENOMEM;
        if (job.result < 0)
                fprintf(stderr, "buildtel report: out of memory\n");
        else if (def)
                ret = write_out(def, &job.out, true);
        else
                ret = write_out(o->output ? o->output : "-", &job.out, false);
out:
        replay_free(rp);
        dbuf_release(&job.out);
        return ret;
}

int cmd_report(int argc, char **argv)
{
        struct common_opts o;
        int k, ret = EXIT_BT_USAGE;

        k = cmd_parse_options(CMDS_REPORT, "report", argc, argv, &o);
        if (k == 0)
                ret = 0; /* --help */
        else if (k > 0 && k < argc - 1)
                fputs(usage, stderr);
        else if (k > 0)
                ret = report(&o, k < argc ? argv[k] : NULL);
        common_opts_release(&o);
        return ret;
}
