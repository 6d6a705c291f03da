/* SPDX-License-Identifier: MIT */
/* The run's files beside the CSV that are written whole, each sink's state
 * its file's path: resources-<id>.run.json (the run's facts, when it starts
 * and again when it ends, so that a killed run still names its command and
 * start), .targets.json (the per-target figures of the model
 * (targets_facts()), the run's totals and the slowest ninja edges, at the
 * end when the build showed any) and .units.csv (the compile units, once
 * at the end, so `summarize` of the files lists them as the run's own
 * summary did). */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "runfiles/runjson.h"
#include "runfiles/targetsjson.h"
#include "runfiles/unitscsv.h"
#include "sinks/sink.h"
#include "util/outfile.h"

static int path_state(const struct sink_ctx *ctx, enum runfile kind, void **ret_state)
{
        *ret_state = runfiles_path(ctx->log_dir, ctx->run->run_id, kind);
        return *ret_state ? 0 : -ENOMEM;
}

/* b, as its formatter left it (r: 0 or -errno), into path, whole. */
static int put(const char *path, int r, const struct dbuf *b)
{
        return r < 0 ? r : write_file_atomic(path, b->p, b->len);
}

static int runinfo_write(const char *path, const struct run_info *run)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        return put(path, runjson_format(run, &b), &b);
}

static int runinfo_open(const struct sink_ctx *ctx, void **ret_state)
{
        int r = path_state(ctx, RUNFILE_RUN, ret_state);

        if (r >= 0 && (r = runinfo_write(*ret_state, ctx->run)) < 0)
                free(*ret_state);
        return r;
}

static int runinfo_finish(void *state, const struct run_model *m)
{
        return runinfo_write(state, m->run);
}

const struct sink_ops sink_runinfo = {
    .name = "run facts",
    .open = runinfo_open,
    .finish = runinfo_finish,
    .close = free,
};

static int targets_open(const struct sink_ctx *ctx, void **ret_state)
{
        return path_state(ctx, RUNFILE_TARGETS, ret_state);
}

static int targets_finish(void *state, const struct run_model *m)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        if (!m->targets || !targets_any(m->targets))
                return 0;
        return put(state, targetsjson_format(m->targets, m->facts, &b), &b);
}

const struct sink_ops sink_targets = {
    .name = "targets",
    .open = targets_open,
    .finish = targets_finish,
    .close = free,
};

static int units_open(const struct sink_ctx *ctx, void **ret_state)
{
        return path_state(ctx, RUNFILE_UNITS, ret_state);
}

static int units_finish(void *state, const struct run_model *m)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        if (!m->units)
                return 0; /* no process scans: no file */
        return put(state, unitscsv_format(m->units, &b), &b);
}

const struct sink_ops sink_units = {
    .name = "units",
    .open = units_open,
    .finish = units_finish,
    .close = free,
};
