/* SPDX-License-Identifier: MIT */
/* The Chrome trace of a run (render/trace.h): each sample's counters as
 * it comes, the model's targets, BuildKit steps, compile units and the
 * command's ninja edges at the end. Written to a temp file renamed over
 * the path when complete (or to the fd the command gives). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "runfiles/names.h"
#include "render/trace.h"
#include "sinks/sink.h"
#include "util/outfile.h"
#include "util/util.h"

#define TRACE_DRAIN_AT (1u << 16)

struct trace_state {
        struct trace_sink_job *job;
        struct trace *t;
        int fd;
        struct outfile out; /* the file's writer; out.fd < 0: none (job->fd or stdout) */
        int error;          /* the first one */
        char *path;         /* job->path or the log directory's */
};

static void drain(struct trace_state *st, bool force)
{
        struct dbuf *b = trace_output(st->t);
        int e;

        if (b->len == 0 || (!force && b->len < TRACE_DRAIN_AT))
                return;
        e = st->error ? 0 : write_all(st->fd, b->p, b->len);
        if (e < 0 && !st->error)
                st->error = -EIO;
        dbuf_reset(b);
}

static void trace_close(void *state)
{
        struct trace_state *st = state;

        outfile_release(&st->out); /* a no-op once committed */
        free(st->path);
        trace_free(st->t);
        free(st);
}

static int trace_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct trace_sink_job *j = ctx->userdata;
        struct trace_state *st = calloc(1, sizeof(*st));
        int e = 0;

        if (!st)
                return -ENOMEM;
        st->job = j;
        st->fd = j->fd;
        st->out = (struct outfile){.dirfd = -1, .fd = -1};
        if (j->fd < 0) {
                st->path = j->path ? strdup(j->path)
                                   : runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_TRACE);
                /* A path the user gave (export -o) is written through a FIFO
                 * or a device; one named here (the log directory's, export's
                 * own) never: a run file. */
                e = st->path ? outfile_open(st->path, 0600, !j->path || j->path_ours, &st->out)
                             : -ENOMEM;
                if (e >= 0)
                        st->fd = st->out.fd;
                /* a live run's files matter more than its trace */
                if (e < 0 && e != -ENOMEM && j->own_errors) {
                        st->error = e;
                        e = 0;
                }
        }
        if (e >= 0)
                e = trace_new(&j->cfg, ctx->run, &st->t);
        if (e < 0) {
                trace_close(st);
                return e;
        }
        drain(st, false);
        *ret_state = st;
        return 0;
}

static void trace_on_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct trace_state *st = state;
        struct sample r;

        st->job->samples++;
        if (!st->error && st->job->round)
                sample_round(s, &r);
        if (!st->error) /* 0 or -errno */
                st->error = trace_sample(st->t, st->job->round ? &r : s);
        drain(st, false);
}

/* The model's slices, then the command's edges. */
static int add_model(struct trace_state *st, const struct run_model *m)
{
        const struct targets *ts = m->targets;
        size_t nu = 0;
        double off;
        const struct unit *units = m->units ? units_rows(m->units, &nu) : NULL;
        int e = 0;

        for (size_t i = 0; m->facts && e >= 0 && i < m->facts->n; i++)
                e = spans_add_target(trace_spans(st->t), &m->facts->t[i]);
        if (e >= 0 && ts)
                trace_set_steps_dropped(st->t, ts->steps_dropped);
        for (uint32_t i = 0; ts && e >= 0 && i < ts->nstepv; i++) {
                const struct step_fact *sf = &ts->stepv[i];

                e = spans_add_step(
                    trace_spans(st->t), sf,
                    sf->target >= 0 && (size_t)sf->target < ts->n ? ts->t[sf->target].name : NULL);
        }
        for (size_t i = 0; e >= 0 && i < nu; i++)
                e = spans_add_unit(trace_spans(st->t), &units[i]);
        for (size_t i = 0; e >= 0 && i < st->job->nedges; i++) {
                const struct trace_edge *x = &st->job->edges[i];

                e = spans_add_edge(trace_spans(st->t), x->start_s, x->end_s, x->out, x->len);
        }
        if (!st->job->nedges && st->job->stored_edges && ts &&
            targets_ninja_offset(ts, m->run, &off) == 0)
                for (uint32_t i = 0; e >= 0 && i < ts->nedgev; i++)
                        e = spans_add_edge(trace_spans(st->t),
                                           off + (double)ts->edgev[i].start_ms / 1000.0,
                                           off + (double)ts->edgev[i].end_ms / 1000.0,
                                           ts->edgev[i].output, strlen(ts->edgev[i].output));
        spans_mark_path(trace_spans(st->t), m->run, ts);
        return e;
}

static int trace_on_finish(void *state, const struct run_model *m)
{
        struct trace_state *st = state;
        int e = st->error;

        if (st->job->cancel)
                return 0;
        /* a live run's end is known only now */
        if (isfinite(m->run->end_epoch))
                trace_set_end(
                    st->t, figure_run_duration(m->run->start_epoch, m->run->end_epoch, NAN, NULL));
        if (e >= 0)
                e = add_model(st, m);
        if (e >= 0)
                e = trace_finish(st->t);
        if (e >= 0) {
                drain(st, true);
                e = st->error;
        }
        if (st->out.fd >= 0 && e >= 0) {
                /* fsync'd, renamed over the path, the directory fsync'd */
                e = outfile_commit(&st->out);
                st->fd = -1;
        }
        st->error = e;
        st->job->result = e;
        return st->job->own_errors ? 0 : e;
}

const struct sink_ops sink_trace = {
    .name = "trace",
    .open = trace_open,
    .sample = trace_on_sample,
    .finish = trace_on_finish,
    .close = trace_close,
};
