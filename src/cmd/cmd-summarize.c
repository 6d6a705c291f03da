/* SPDX-License-Identifier: MIT */
/* buildtel summarize FILE.csv|RUN: the same summary a run writes,
 * recomputed from its CSV or its rows in the history through the same
 * pipeline (pipeline/replay.h: no sink, the model handed back). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "pipeline/replay.h"
#include "render/summary.h"
#include "util/util.h"

static int summarize(const struct common_opts *o, const char *spec)
{
        struct replay *rp = NULL;
        const struct run_model *m;
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        int ret = 1;

        if (common_replay_open(o, "summarize", spec, false, false, &rp) > 0 ||
            common_replay_through("summarize", rp, NULL, NULL, &m) < 0)
                goto out;
        if (o->json ? render_summary_json(m->summary, m->run, &out) < 0
                    : render_summary_text(m->summary, m->run, &out) < 0)
                fprintf(stderr, "buildtel summarize: out of memory\n");
        else if (write_all(STDOUT_FILENO, out.p, out.len) < 0)
                fprintf(stderr, "buildtel summarize: cannot write: %s\n", strerror(errno));
        else
                ret = 0;
out:
        replay_free(rp);
        return ret;
}

int cmd_summarize(int argc, char **argv)
{
        struct common_opts o;
        int k, ret = EXIT_BT_USAGE;

        k = cmd_parse_options(CMDS_SUMMARIZE, "summarize", argc, argv, &o);
        if (k == 0)
                ret = 0; /* --help */
        else if (k > 0 && k != argc - 1)
                cmd_print_short_usage("summarize");
        else if (k > 0)
                ret = summarize(&o, argv[k]);
        common_opts_release(&o);
        return ret;
}
