/* SPDX-License-Identifier: MIT */
/* resources-<id>.units.csv, written once at the end: the compile units of
 * the run's process scans, so `summarize` of the files lists them as the
 * run's own summary did. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "runfiles/unitscsv.h"
#include "sinks/sink.h"
#include "util/outfile.h"
#include "util/util.h"

static int units_open(const struct sink_ctx *ctx, void **ret_state)
{
        char *path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_UNITS);

        if (!path)
                return -ENOMEM;
        *ret_state = path;
        return 0;
}

static int units_finish(void *state, const struct run_model *m)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;
        int r;

        if (!m->units)
                return 0; /* no process scans: no file */
        r = unitscsv_format(m->units, &b);
        return r < 0 ? r : write_file_atomic(state, b.p, b.len);
}

const struct sink_ops sink_units = {
    .name = "units",
    .open = units_open,
    .finish = units_finish,
    .close = free, /* the state is its file's name */
};
