/* SPDX-License-Identifier: MIT */
/* build-<id>.log: both output streams, as they arrive, byte for byte;
 * at the end a log over LOGFILE_COMPRESS_MIN becomes build-<id>.log.gz
 * (one over LOGFILE_COMPRESS_WAIT_MAX after buildtel exits). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "runfiles/names.h"
#include "sinks/logfile.h"
#include "sinks/sink.h"
#include "util/macro.h"
#include "util/util.h"

struct buildlog_state {
        int fd;
        int error;
        off_t size; /* written so far: the fd's position */
        char *path;
};

static int buildlog_open(const struct sink_ctx *ctx, void **ret_state)
{
        _cleanup_free_ char *path =
            runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_BUILD_LOG);
        _cleanup_close_ int fd = -1;
        struct buildlog_state *st;

        if (!path)
                return -ENOMEM;
        /* Read back by the parse (output_fd), and no O_APPEND: splice(2)
         * refuses a file in append mode; we are its only writer. */
        fd = runfile_create(path, O_RDWR);
        if (fd < 0)
                return fd;
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->fd = TAKE_FD(fd);
        st->path = TAKE_PTR(path);
        *ret_state = st;
        return 0;
}

static void buildlog_output(void *state, int stream, const char *buf, size_t len)
{
        struct buildlog_state *st = state;
        int r;

        /* A full disk stops the log, never the build. */
        if (st->error)
                return;
        r = write_all(st->fd, buf, len);
        if (r < 0) {
                /* what went in of it is unknown: the position says */
                off_t at = lseek(st->fd, 0, SEEK_CUR);
                st->error = r;
                st->size = at >= 0 ? at : st->size;
                return;
        }
        st->size += (off_t)len;
}

static int buildlog_output_fd(void *state, off_t *ret_off)
{
        struct buildlog_state *st = state;

        if (st->error)
                return -1;
        *ret_off = st->size;
        return st->fd;
}

static void buildlog_output_spliced(void *state, size_t n)
{
        struct buildlog_state *st = state;

        st->size += (off_t)n;
}

static int buildlog_finish(void *state, const struct run_model *m)
{
        struct buildlog_state *st = state;
        off_t size;

        if (st->error)
                return st->error;
        /* Every byte is in: what is left of the build has been drained. A
         * failed compression keeps the plain log, whole. */
        size = lseek(st->fd, 0, SEEK_END);
        if (size > LOGFILE_COMPRESS_MIN) {
                closep(&st->fd);
                /* a log of hundreds of MiB must not hold the wrapper for
                 * seconds after the build: the build's status comes first */
                if (size > LOGFILE_COMPRESS_WAIT_MAX)
                        (void)logfile_compress_later(st->path);
                else
                        (void)logfile_compress(st->path);
        }
        return 0;
}

static void buildlog_close(void *state)
{
        struct buildlog_state *st = state;

        closep(&st->fd);
        free(st->path);
        free(st);
}

const struct sink_ops sink_buildlog = {
    .name = "build log",
    .open = buildlog_open,
    .output = buildlog_output,
    .output_fd = buildlog_output_fd,
    .output_spliced = buildlog_output_spliced,
    .finish = buildlog_finish,
    .close = buildlog_close,
};
