/* SPDX-License-Identifier: MIT */
/* OTLP/HTTP metrics to a collector: an export every interval from the
 * poll loop (never blocking it), and a final one with the totals and the
 * per-target metrics, which may hold up the exit for at most the timeout.
 * A collector that is down, hangs or rejects is reported once. */
#include <errno.h>
#include <stdlib.h>

#include "render/otlp-metrics.h"
#include "sinks/otlp-send.h"
#include "sinks/sink.h"
#include "util/util.h"

struct otlp_state {
        const struct otel_config *cfg;
        struct otlp_metrics *metrics;
        struct otlp_sender *sender;
        note_fn warn;
        void *warn_userdata;
        double interval, next_export;
};

static int otlp_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct otlp_state *st;
        int e;

        if (!ctx->otlp || !ctx->otlp->enabled) {
                *ret_state = NULL;
                return 0;
        }
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->cfg = ctx->otlp;
        st->warn = ctx->warn;
        st->warn_userdata = ctx->warn_userdata;
        st->interval = (double)ctx->otlp->interval_ms / 1000.0;
        st->next_export = now_monotonic() + st->interval;
        e = otlp_metrics_new(ctx->otlp, ctx->run, &st->metrics);
        if (e >= 0)
                e = otlp_sender_new(ctx->otlp, &st->sender);
        if (e < 0) {
                otlp_metrics_free(st->metrics);
                free(st);
                return e;
        }
        *ret_state = st;
        return 0;
}

/* The first failure, once. */
static void tell(struct otlp_state *st)
{
        char msg[256];

        if (otlp_sender_take_error(st->sender, msg, sizeof(msg)) && st->warn)
                st->warn(st->warn_userdata, "%s", msg);
}

static void export(struct otlp_state *st, const struct run_model *final, double now)
{
        _cleanup_dbuf_ struct dbuf body = DBUF_INIT;

        if (otlp_metrics_encode(st->metrics, final, st->cfg->protocol == OTEL_PROTOCOL_JSON,
                                &body) >= 0)
                (void)otlp_sender_submit(st->sender, &body, now);
}

static void otlp_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct otlp_state *st = state;

        otlp_metrics_add_sample(st->metrics, s);
}

static size_t otlp_pollfds(void *state, struct pollfd *p, size_t cap, double *deadline)
{
        struct otlp_state *st = state;

        if (st->next_export < *deadline)
                *deadline = st->next_export;
        return otlp_sender_pollfds(st->sender, p, cap, deadline);
}

static void otlp_poll(void *state, const struct pollfd *p, size_t n, double now)
{
        struct otlp_state *st = state;

        if (now >= st->next_export) {
                while (st->next_export <= now)
                        st->next_export += st->interval;
                if (otlp_metrics_pending(st->metrics))
                        export(st, NULL, now);
        }
        otlp_sender_run(st->sender, p, n, now);
        tell(st);
}

static int otlp_finish(void *state, const struct run_model *m)
{
        struct otlp_state *st = state;
        double now = now_monotonic();

        export(st, m, now);
        if (st->cfg->span_set) /* the run's spans, once, at the end */
                (void)otlp_trace_submit(st->sender, st->metrics, m, now);
        (void)otlp_sender_flush(st->sender, now + (double)st->cfg->timeout_ms / 1000.0);
        tell(st);
        return 0;
}

static void otlp_close(void *state)
{
        struct otlp_state *st = state;

        otlp_sender_free(st->sender);
        otlp_metrics_free(st->metrics);
        free(st);
}

const struct sink_ops sink_otlp = {
    .name = "otlp",
    .open = otlp_open,
    .sample = otlp_sample,
    .finish = otlp_finish,
    .close = otlp_close,
    .pollfds = otlp_pollfds,
    .poll = otlp_poll,
};
