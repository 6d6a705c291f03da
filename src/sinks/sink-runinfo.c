/* SPDX-License-Identifier: MIT */
/* resources-<id>.run.json: the run's facts, written when it starts and again
 * when it ends, so that a killed run still names its command and start. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "runfiles/runjson.h"
#include "sinks/sink.h"
#include "util/outfile.h"
#include "util/util.h"

static int runinfo_write(const char *path, const struct run_info *run)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;
        int r = runjson_format(run, &b);

        return r < 0 ? r : write_file_atomic(path, b.p, b.len);
}

/* The state is the file's path. */
static int runinfo_open(const struct sink_ctx *ctx, void **ret_state)
{
        char *path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_RUN);
        int r;

        if (!path)
                return -ENOMEM;
        r = runinfo_write(path, ctx->run);
        if (r < 0) {
                free(path);
                return r;
        }
        *ret_state = path;
        return 0;
}

static int runinfo_finish(void *state, const struct run_model *m)
{
        return runinfo_write(state, m->run);
}

const struct sink_ops sink_runinfo = {
    .name = "run facts",
    .open = runinfo_open,
    .finish = runinfo_finish,
    .close = free, /* the state is its file's name */
};
