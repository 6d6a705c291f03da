/* SPDX-License-Identifier: MIT */
/* resources-<id>.summary.{txt,json}, written once at the end. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "sinks/sink.h"
#include "render/steps.h"
#include "render/summary.h"
#include "util/outfile.h"

struct summary_state {
        char *txt, *json;
};

static void summary_close(void *state)
{
        struct summary_state *st = state;

        free(st->txt);
        free(st->json);
        free(st);
}

static int summary_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct summary_state *st = calloc(1, sizeof(*st));

        if (!st)
                return -ENOMEM;
        st->txt = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_SUMMARY_TXT);
        st->json = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_SUMMARY_JSON);
        if (!st->txt || !st->json) {
                summary_close(st);
                return -ENOMEM;
        }
        *ret_state = st;
        return 0;
}

/* Both files, each atomically. Returns 0 or -errno of the first failure. */
static int summary_finish(void *state, const struct run_model *m)
{
        struct summary_state *st = state;
        _cleanup_dbuf_ struct dbuf txt = DBUF_INIT;
        _cleanup_dbuf_ struct dbuf json = DBUF_INIT;
        int r, r2;

        r = render_summary_text(m->summary, m->run, &txt);
        if (r >= 0 && m->targets)
                r = steps_render_text(m->targets, &txt);
        if (r >= 0)
                r = write_file_atomic(st->txt, txt.p, txt.len);
        /* one file failing is no reason to lose the other */
        r2 = render_summary_json(m->summary, m->run, &json);
        if (r2 >= 0 && m->targets)
                r2 = steps_merge_json(m->targets, &json);
        if (r2 >= 0)
                r2 = write_file_atomic(st->json, json.p, json.len);
        return r < 0 ? r : r2;
}

const struct sink_ops sink_summary = {
    .name = "summary",
    .open = summary_open,
    .finish = summary_finish,
    .close = summary_close,
};
