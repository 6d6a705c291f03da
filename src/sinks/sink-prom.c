/* SPDX-License-Identifier: MIT */
/* The Prometheus textfile for node_exporter's textfile collector, written
 * once at the end, atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/prom.h"
#include "sinks/sink.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

/* ---- location and atomic write ---- */

static bool dir_writable(const char *d)
{
        struct stat st;

        return stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

const char *prom_textfile_where(const char *given)
{
        const char *env = getenv("BUILDTEL_TEXTFILE_DIR");

        if (given)
                return given;
        if (env && *env)
                return env;
        if (dir_writable(PROM_SEED_DIR))
                return PROM_SEED_DIR;
        if (dir_writable(PROM_DEBIAN_DIR))
                return PROM_DEBIAN_DIR;
        return NULL;
}

/* prom_textfile_where(), made when given (option or environment): *ret
 * malloc'd, NULL for none. 0 or -errno. */
static int prom_textfile_dir(const struct prom_config *cfg, char **ret)
{
        const char *d = prom_textfile_where(cfg->textfile_dir);

        *ret = NULL;
        if (!d)
                return 0;
        if (strcmp(d, PROM_SEED_DIR) != 0 && strcmp(d, PROM_DEBIAN_DIR) != 0) {
                int e = mkdir_p(d, 0755);
                if (e < 0)
                        return e;
        }
        *ret = strdup(d);
        return *ret ? 0 : -ENOMEM;
}

/* Write dir/name atomically: a temp file in dir whose name does not end in
 * .prom, mode 0644, fsync, rename, fsync of the directory. A reader sees
 * the old file or the new one, never a part. In the log directory (no
 * collector's) a run file (util.h), never a FIFO written through. 0 or
 * -errno. */
static int prom_write_file(const char *dir, const char *name, const char *buf, size_t len,
                           bool in_log_dir)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return -errno;
        /* The temp file is hidden and not *.prom: the collector never reads a half-written file. */
        return (in_log_dir ? runfile_write_at : outfile_write_at)(dfd, name, buf, len, 0644);
}

/* ---- the sink ---- */

struct prom_state {
        struct prom_config cfg;
        char *dir;       /* NULL: no textfile */
        bool in_log_dir; /* dir is the log directory */
};

static int prom_open(const struct sink_ctx *ctx, void **ret_state)
{
        static const struct prom_config none = {0};
        struct prom_state *st = calloc(1, sizeof(*st));
        int e;

        if (!st)
                return -ENOMEM;
        st->cfg = ctx->prom ? *ctx->prom : none;
        if (!st->cfg.prom_file)
                st->cfg.prom_file = PROM_DEFAULT_FILE;
        e = prom_textfile_dir(&st->cfg, &st->dir);
        if (e < 0) {
                /* The collector's directory is not the run's business: say so, go on. */
                note_to(ctx->warn, ctx->warn_userdata,
                        "textfile directory: %s; writing '%s' to '%s'", strerror(-e),
                        st->cfg.prom_file, ctx->log_dir);
                st->dir = strdup(ctx->log_dir);
                if (!st->dir) {
                        free(st);
                        return -ENOMEM;
                }
        }
        st->in_log_dir = e < 0;
        *ret_state = st;
        return 0;
}

static int prom_finish(void *state, const struct run_model *m)
{
        struct prom_state *st = state;
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        int e;

        if (!st->dir)
                return 0;
        e = prom_render(m, st->cfg.metric_prefix, &out);
        return e < 0 ? e
                     : prom_write_file(st->dir, st->cfg.prom_file, out.p ? out.p : "", out.len,
                                       st->in_log_dir);
}

static void prom_close(void *state)
{
        struct prom_state *st = state;

        free(st->dir);
        free(st);
}

const struct sink_ops sink_prom = {
    .name = "prometheus textfile",
    .open = prom_open,
    .finish = prom_finish,
    .close = prom_close,
};
