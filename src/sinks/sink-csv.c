/* SPDX-License-Identifier: MIT */
/* resources-<id>.csv: the header, then one record per sample, each written
 * with a single write() as it is taken, so a killed buildtel leaves every
 * finished row readable. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "runfiles/names.h"
#include "sinks/sink.h"
#include "util/util.h"
#include "runfiles/samplecsv.h"

struct csv_state {
        int fd;
        int error;
        bool formula_safe; /* --csv-safe */
        struct dbuf row;   /* reused: no allocation per tick once grown */
};

static int csv_open(const struct sink_ctx *ctx, void **ret_state)
{
        _cleanup_free_ char *path = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_CSV);
        _cleanup_dbuf_ struct dbuf hdr = DBUF_INIT;
        _cleanup_close_ int fd = -1;
        struct csv_state *st;
        int r;

        if (!path)
                return -ENOMEM;
        fd = runfile_create(path, O_WRONLY);
        if (fd < 0)
                return fd;
        r = samplecsv_header(&hdr);
        if (r >= 0)
                r = write_all(fd, hdr.p, hdr.len);
        if (r < 0)
                return r;
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->fd = TAKE_FD(fd);
        st->formula_safe = ctx->csv_safe;
        *ret_state = st;
        return 0;
}

static void csv_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct csv_state *st = state;
        int r;

        if (st->error)
                return;
        dbuf_reset(&st->row);
        r = (st->formula_safe ? samplecsv_format_safe : samplecsv_format)(s, &st->row);
        if (r >= 0)
                r = write_all(st->fd, st->row.p, st->row.len);
        if (r < 0)
                st->error = r;
}

static int csv_finish(void *state, const struct run_model *m)
{
        struct csv_state *st = state;

        if (!st->error && fsync(st->fd) < 0 && errno != EINVAL)
                st->error = -errno;
        return st->error;
}

static void csv_close(void *state)
{
        struct csv_state *st = state;

        closep(&st->fd);
        dbuf_release(&st->row);
        free(st);
}

const struct sink_ops sink_csv = {
    .name = "csv",
    .open = csv_open,
    .sample = csv_sample,
    .finish = csv_finish,
    .close = csv_close,
};
