/* SPDX-License-Identifier: MIT */
/* The end of a run on stderr: GitHub annotations, the short summary, the
 * files written. */
#include "cmd/cmd-common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runfiles/names.h"
#include "render/report.h"
#include "render/short.h"
#include "util/macro.h"
#include "util/dbuf.h"

/* GitHub Actions annotations, after the build's output. */
static void common_gh_warnings(struct recorder *r)
{
        struct dbuf w = DBUF_INIT;

        if (report_gh_warnings(recorder_summary(r), &w) >= 0 && w.len)
                fputs(w.p, stderr);
        dbuf_release(&w);
}

/* "buildtel: what: <dir>/<file><tail>" */
static void common_say_file(const char *what, const char *dir, const char *run_id,
                            enum runfile kind, const char *tail)
{
        _cleanup_free_ char *p = runfiles_path(dir, run_id, kind);

        if (p)
                fprintf(stderr, "buildtel: %s: %s%s\n", what, p, tail);
}

void common_report(const struct common_opts *o, struct recorder *r)
{
        struct dbuf short_sum = DBUF_INIT;
        const char *dir = recorder_log_dir(r);
        const char *gha = getenv("GITHUB_ACTIONS");

        if (gha && strcmp(gha, "true") == 0)
                common_gh_warnings(r);
        if (o->rec.quiet)
                return;
        if (short_render(recorder_model(r), &short_sum) >= 0 && short_sum.len)
                fputs(short_sum.p, stderr);
        dbuf_release(&short_sum);
        /* Only the files that were written (a full disk was said above). */
        if (dir && !recorder_sink_failed(r, "csv"))
                common_say_file("csv", dir, o->run_id, RUNFILE_CSV, "");
        if (dir && !recorder_sink_failed(r, "summary"))
                common_say_file("summary", dir, o->run_id, RUNFILE_SUMMARY_TXT, " (.json)");
        if (dir && !o->rec.no_report && !recorder_sink_failed(r, "report"))
                common_say_file("report", dir, o->run_id, RUNFILE_REPORT, "");
}
