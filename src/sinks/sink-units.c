/* SPDX-License-Identifier: MIT */
/* resources-<id>.units.csv, written once at the end: the compile units of
 * the run's process scans, so `summarize` of the files lists them as the
 * run's own summary did. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "model/units.h"
#include "sinks/sink.h"
#include "util/util.h"
#include "runfiles/unitscsv.h"

struct units_state {
        char *path;
};

static int units_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct units_state *st = calloc(1, sizeof(*st));

        if (!st)
                return -ENOMEM;
        st->path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_UNITS);
        if (!st->path) {
                free(st);
                return -ENOMEM;
        }
        *ret_state = st;
        return 0;
}

static int units_finish(void *state, const struct run_model *m)
{
        struct units_state *st = state;
        struct dbuf b = DBUF_INIT;
        int r;

        if (!m->units)
                return 0; /* no process scans: no file */
        r = unitscsv_format(m->units, &b);
        if (r >= 0)
                r = write_file_atomic(st->path, b.p, b.len);
        dbuf_release(&b);
        return r;
}

static void units_close(void *state)
{
        struct units_state *st = state;

        if (!st)
                return;
        free(st->path);
        free(st);
}

const struct sink_ops sink_units = {
    .name = "units",
    .open = units_open,
    .finish = units_finish,
    .close = units_close,
};
