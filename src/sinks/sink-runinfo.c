/* SPDX-License-Identifier: MIT */
/* resources-<id>.run.json: the run's facts, written when it starts and again
 * when it ends, so that a killed run still names its command and start. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "sinks/sink.h"
#include "util/util.h"
#include "runfiles/runjson.h"

struct runinfo_state {
        char *path;
};

static int runinfo_write(const char *path, const struct run_info *run)
{
        struct dbuf b = DBUF_INIT;
        int r = runjson_format(run, &b);

        if (r >= 0)
                r = write_file_atomic(path, b.p, b.len);
        dbuf_release(&b);
        return r;
}

static int runinfo_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct runinfo_state *st;
        char *path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_RUN);
        int r;

        if (!path)
                return -ENOMEM;
        r = runinfo_write(path, ctx->run);
        if (r < 0) {
                free(path);
                return r;
        }
        st = calloc(1, sizeof(*st));
        if (!st) {
                free(path);
                return -ENOMEM;
        }
        st->path = path;
        *ret_state = st;
        return 0;
}

static int runinfo_finish(void *state, const struct run_model *m)
{
        struct runinfo_state *st = state;

        return runinfo_write(st->path, m->run);
}

static void runinfo_close(void *state)
{
        struct runinfo_state *st = state;

        if (!st)
                return;
        free(st->path);
        free(st);
}

const struct sink_ops sink_runinfo = {
    .name = "run facts",
    .open = runinfo_open,
    .finish = runinfo_finish,
    .close = runinfo_close,
};
