/* SPDX-License-Identifier: MIT */
/* resources-<id>.targets.json: the per-target figures of the model
 * (targets_facts()), the run's totals and the slowest ninja edges, written
 * at the end when the build showed any. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "runfiles/targetsjson.h"
#include "sinks/sink.h"
#include "util/outfile.h"
#include "util/util.h"

static int targets_open(const struct sink_ctx *ctx, void **ret_state)
{
        char *path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_TARGETS);

        if (!path)
                return -ENOMEM;
        *ret_state = path;
        return 0;
}

static int targets_finish(void *state, const struct run_model *m)
{
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        int e;

        if (!m->targets || !targets_any(m->targets))
                return 0;
        e = targetsjson_format(m->targets, m->facts, &out);
        return e < 0 ? e : write_file_atomic(state, out.p, out.len);
}

const struct sink_ops sink_targets = {
    .name = "targets",
    .open = targets_open,
    .finish = targets_finish,
    .close = free, /* the state is its file's name */
};
