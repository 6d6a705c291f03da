/* SPDX-License-Identifier: MIT */
/* resources-<id>.summary.{txt,json}, written once at the end. */
#include <errno.h>
#include <stdlib.h>

#include "parse/runfiles.h"
#include "sinks/sink.h"
#include "render/summary.h"

struct summary_state {
        char *txt, *json;
};

static int summary_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct summary_state *st = calloc(1, sizeof(*st));

        if (!st)
                return -ENOMEM;
        st->txt = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_SUMMARY_TXT);
        st->json = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_SUMMARY_JSON);
        if (!st->txt || !st->json) {
                free(st->txt);
                free(st->json);
                free(st);
                return -ENOMEM;
        }
        *ret_state = st;
        return 0;
}

static int summary_finish(void *state, const struct run_model *m)
{
        struct summary_state *st = state;

        return summary_write_files(m->summary, m->run, st->txt, st->json);
}

static void summary_close(void *state)
{
        struct summary_state *st = state;

        if (!st)
                return;
        free(st->txt);
        free(st->json);
        free(st);
}

const struct sink_ops sink_summary = {
    .name = "summary",
    .open = summary_open,
    .finish = summary_finish,
    .close = summary_close,
};
