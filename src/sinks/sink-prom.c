/* SPDX-License-Identifier: MIT */
/* The Prometheus textfile for node_exporter's textfile collector, written
 * once at the end, atomically. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/targets.h"
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

/* Where the textfile goes: --textfile-dir, else $BUILDTEL_TEXTFILE_DIR
 * (both created when missing), else the first writable of
 * PROM_SEED_DIR and PROM_DEBIAN_DIR, else log_dir (*ret_fallback = true).
 * *ret is malloc'd. 0 or -errno. */
static int prom_textfile_dir(const struct prom_config *cfg, const char *log_dir, char **ret,
                             bool *ret_fallback)
{
        const char *d = cfg->textfile_dir, *env = getenv("BUILDTEL_TEXTFILE_DIR");
        bool fb = false;
        char *s;

        if (!d && env && *env)
                d = env;
        if (d) {
                int e = mkdir_p(d, 0755);
                if (e < 0)
                        return e;
        } else if (dir_writable(PROM_SEED_DIR)) {
                d = PROM_SEED_DIR;
        } else if (dir_writable(PROM_DEBIAN_DIR)) {
                d = PROM_DEBIAN_DIR;
        } else {
                d = log_dir;
                fb = true;
        }
        s = strdup(d);
        if (!s)
                return -ENOMEM;
        *ret = s;
        *ret_fallback = fb;
        return 0;
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
        char *dir;
        bool in_log_dir; /* dir is the log directory */
};

static int prom_open(const struct sink_ctx *ctx, void **ret_state)
{
        static const struct prom_config none = {0};
        struct prom_state *st = calloc(1, sizeof(*st));
        bool fb = false;
        int e;

        if (!st)
                return -ENOMEM;
        st->cfg = ctx->prom ? *ctx->prom : none;
        if (!st->cfg.prom_file)
                st->cfg.prom_file = PROM_DEFAULT_FILE;
        e = prom_textfile_dir(&st->cfg, ctx->log_dir, &st->dir, &fb);
        if (e < 0) {
                /* The collector's directory is not the run's business: say so, go on. */
                char msg[512];
                snprintf(msg, sizeof(msg), "textfile directory: %s; writing '%s' to '%s'",
                         strerror(-e), st->cfg.prom_file, ctx->log_dir);
                if (ctx->warn)
                        ctx->warn(ctx->warn_userdata, "%s", msg);
                st->dir = strdup(ctx->log_dir);
                if (!st->dir) {
                        free(st);
                        return -ENOMEM;
                }
        } else if (fb && !ctx->quiet && ctx->warn) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "no node_exporter textfile directory (--textfile-dir); metrics in '%s/%s'",
                         st->dir, st->cfg.prom_file);
                ctx->warn(ctx->warn_userdata, "%s", msg);
        }
        st->in_log_dir = e < 0 || fb;
        *ret_state = st;
        return 0;
}

static int prom_finish(void *state, const struct run_model *m)
{
        struct prom_state *st = state;
        struct dbuf out = DBUF_INIT;
        int e = prom_render(m, st->cfg.metric_prefix, &out);

        if (e >= 0)
                e = prom_write_file(st->dir, st->cfg.prom_file, out.p ? out.p : "", out.len,
                                    st->in_log_dir);
        dbuf_release(&out);
        return e;
}

static void prom_close(void *state)
{
        struct prom_state *st = state;

        if (!st)
                return;
        free(st->dir);
        free(st);
}

const struct sink_ops sink_prom = {
    .name = "prometheus textfile",
    .open = prom_open,
    .finish = prom_finish,
    .close = prom_close,
};
