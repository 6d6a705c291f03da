/* SPDX-License-Identifier: MIT */
#include "sinks/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct sink_ops *const sinks_all[] = {
    &sink_runinfo, &sink_csv,    &sink_buildlog, &sink_summary, &sink_targets, &sink_prom,
    &sink_pushgw,  &sink_sqlite, &sink_otlp,     &sink_units,   &sink_report,  NULL,
};

char *sink_path(const struct sink_ctx *ctx, const char *prefix, const char *suffix)
{
        size_t n =
            strlen(ctx->log_dir) + strlen(prefix) + strlen(ctx->run->run_id) + strlen(suffix) + 2;
        char *p = malloc(n);
        int r;

        if (!p)
                return NULL;
        r = snprintf(p, n, "%s/%s%s%s", ctx->log_dir, prefix, ctx->run->run_id, suffix);
        if (r < 0 || (size_t)r >= n) {
                free(p);
                return NULL;
        }
        return p;
}
