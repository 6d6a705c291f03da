/* SPDX-License-Identifier: MIT */
/* `export --otlp`: a recorded run's samples to a collector in batches of
 * OTLP_BATCH_SAMPLES, each waited for; at finish the totals, the targets
 * and the spans, as the run's own final export would have sent them. */
#include <errno.h>

#include "render/otlp-metrics.h"
#include "sinks/otlp-send.h"
#include "sinks/sink.h"
#include "util/util.h"

#define OTLP_BATCH_SAMPLES 1000

static int batch_open(const struct sink_ctx *ctx, void **ret_state)
{
        *ret_state = ctx->userdata;
        return 0;
}

/* Send what is pending (and with final, the totals and the spans, these
 * with new span ids: the history does not keep the live ones); wait for
 * it. 0, -ENOMEM or -EIO. */
static int send_batch(struct otlp_batch_job *j, const struct run_model *final)
{
        _cleanup_dbuf_ struct dbuf body = DBUF_INIT;
        struct otlp_send_stats st;
        int e;

        e = otlp_metrics_encode(j->m, final, j->cfg->protocol == OTEL_PROTOCOL_JSON, &body);
        if (e >= 0)
                e = otlp_sender_submit(j->s, &body, now_monotonic());
        if (e >= 0 && final)
                e = otlp_trace_submit(j->s, j->m, final, now_monotonic());
        if (e < 0)
                return e;
        (void)otlp_sender_flush(j->s, now_monotonic() + (double)j->cfg->timeout_ms / 1000.0 +
                                          OTLP_SEND_BACKOFF_MAX);
        otlp_sender_stats(j->s, &st);
        return st.failed || st.dropped ? -EIO : 0;
}

static void batch_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct otlp_batch_job *j = state;

        if (j->result < 0)
                return; /* the collector already refused: no more waiting */
        otlp_metrics_add_sample(j->m, s);
        j->rows++;
        if (otlp_metrics_pending(j->m) >= OTLP_BATCH_SAMPLES)
                j->result = send_batch(j, NULL);
}

static int batch_finish(void *state, const struct run_model *m)
{
        struct otlp_batch_job *j = state;

        if (j->result >= 0)
                j->result = send_batch(j, m);
        return 0;
}

const struct sink_ops sink_otlp_batch = {
    .name = "export",
    .open = batch_open,
    .sample = batch_sample,
    .finish = batch_finish,
};
