/* SPDX-License-Identifier: MIT */
#include "render/otlp-trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"
#include "model/spans.h"
#include "model/summary.h"
#include "model/targets.h"
#include "util/macro.h"

#define RUN_ATTRS 12
#define TARGET_ATTRS 5
#define STEP_ATTRS 13 /* name, cached, step_exec_attrs() and critical path */
#define EVENT_ATTRS 3
#define RUN_EVENTS (SUMMARY_OOM_MAX + 2)

/* What one encode needs, allocated once. */
struct enc {
        const struct otlp_trace_input *in;
        struct otlp_span *sp;
        size_t n, cap;
        struct otlp_attr *attrs;
        size_t nattrs;
        struct otlp_event ev[RUN_EVENTS];
        size_t nev;
        char (*names)[TARGET_NAME_MAX + TARGET_STEP_NAME_MAX + 32]; /* one per span */
        char error_type[FIGURE_OUTCOME_LEN], outcome[FIGURE_OUTCOME_LEN];
        char status_msg[2 * FAILURE_TEXT_MAX + FIGURE_OUTCOME_LEN + 16];
};

/* The run span's error.type for a run: the signal's name ("SIGKILL") or
 * the exit code ("1"); NULL on success or unknown. */
static const char *otlp_trace_error_type(const struct run_info *run,
                                         char buf[static FIGURE_OUTCOME_LEN])
{
        if (run->term_signal > 0)
                return figure_outcome(-1, run->term_signal, 0, buf);
        if (run->exit_code > 0) {
                snprintf(buf, FIGURE_OUTCOME_LEN, "%d", run->exit_code);
                return buf;
        }
        return NULL;
}

static uint64_t to_ns(double epoch)
{
        if (!isfinite(epoch) || epoch <= 0)
                return 0;
        return (uint64_t)llround(epoch * 1e9);
}

/* A child's id: splitmix64 of the run span's id and its index, never 0. */
static void child_id(const uint8_t run_id[8], size_t i, uint8_t ret[8])
{
        uint64_t z = 0;

        for (size_t k = 0; k < 8; k++)
                z = z << 8 | run_id[k];
        z += 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        if (!z)
                z = 1;
        for (size_t k = 0; k < 8; k++)
                ret[k] = (uint8_t)(z >> (56 - 8 * k));
}

static void attr_s(struct enc *S, const char *k, const char *v)
{
        S->attrs[S->nattrs++] = (struct otlp_attr){.key = k, .type = OTLP_STRING, .s = v};
}

static void attr_i(struct enc *S, const char *k, int64_t v)
{
        S->attrs[S->nattrs++] = (struct otlp_attr){.key = k, .type = OTLP_INT, .i = v};
}

static void attr_b(struct enc *S, const char *k, bool v)
{
        S->attrs[S->nattrs++] = (struct otlp_attr){.key = k, .type = OTLP_BOOL, .b = v};
}

static void attr_d(struct enc *S, const char *k, double v)
{
        S->attrs[S->nattrs++] = (struct otlp_attr){.key = k, .type = OTLP_DOUBLE, .d = v};
}

static const char *base_name(const char *p)
{
        const char *s = p ? strrchr(p, '/') : NULL;

        return s ? s + 1 : p ? p : "";
}

/* An event at a summary point (epoch), with what it holds. */
static struct otlp_event *event(struct enc *S, const char *name, double epoch)
{
        struct otlp_event *ev = &S->ev[S->nev++];

        *ev = (struct otlp_event){
            .name = name, .time_ns = to_ns(epoch), .attrs = S->attrs + S->nattrs};
        return ev;
}

static void run_events(struct enc *S)
{
        const struct summary *sm = S->in->summary;
        struct otlp_event *ev;

        if (!sm)
                return;
        for (size_t i = 0; i < MIN(sm->build.noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                const struct summary_oom *o = &sm->build.oom[i];
                ev = event(S, "oom_kill", o->epoch);
                attr_d(S, "build.oom.kills", o->kills);
                if (o->victim.label[0])
                        attr_s(S, "build.oom.victim", o->victim.label);
                if (isfinite(o->victim.pid))
                        attr_i(S, "process.pid", (int64_t)o->victim.pid);
                ev->nattrs = (size_t)(S->attrs + S->nattrs - ev->attrs);
        }
        if (sm->near_oom_first.set) {
                ev = event(S, "near_oom", sm->near_oom_first.epoch);
                attr_d(S, "build.mem.available_mb", sm->near_oom_first.value);
                attr_d(S, "build.near_oom.threshold_mb", sm->cfg.near_oom_mb);
                ev->nattrs = 2;
        }
        if (sm->low_disk_first.set) {
                ev = event(S, "low_disk", sm->low_disk_first.epoch);
                attr_d(S, "build.disk.available_gb", sm->low_disk_first.value);
                attr_d(S, "build.low_disk.threshold_gb", sm->cfg.low_disk_gb);
                ev->nattrs = 2;
        }
}

static void run_span(struct enc *S)
{
        const struct otel_config *c = S->in->cfg;
        const struct run_info *ri = S->in->run;
        int outcome = S->in->facts ? S->in->facts->outcome : RUN_OUTCOME_UNKNOWN;
        struct otlp_span *sp = &S->sp[S->n++];
        const char *et = NULL, *result = targets_outcome_name(outcome);
        double end = ri->end_epoch;

        if (!isfinite(end) && S->in->facts && isfinite(S->in->facts->duration_s))
                end = ri->start_epoch + S->in->facts->duration_s;
        snprintf(S->names[0], sizeof(S->names[0]), "buildtel run %s",
                 base_name(ri->argv ? ri->argv[0] : NULL));
        *sp = (struct otlp_span){
            .has_parent = c->has_trace,
            .trace_state = c->tracestate,
            .name = S->names[0],
            .kind = OTLP_SPAN_KIND_INTERNAL,
            .start_ns = to_ns(ri->start_epoch),
            .end_ns = MAX(to_ns(end), to_ns(ri->start_epoch)),
            .attrs = S->attrs + S->nattrs,
        };
        memcpy(sp->span_id, c->span.span_id, 8);
        memcpy(sp->parent_id, c->trace.span_id, 8);
        attr_s(S, "cicd.pipeline.task.name", base_name(ri->argv ? ri->argv[0] : NULL));
        attr_s(S, "cicd.pipeline.task.run.id", ri->run_id ? ri->run_id : "");
        /* success, failure, cancellation, or error (the outcome is unknown:
         * buildtel was killed) */
        attr_s(S, "cicd.pipeline.task.run.result", result ? result : "error");
        if (outcome != RUN_OUTCOME_SUCCESS) {
                const struct run_failure *fl = S->in->facts ? &S->in->facts->failure : NULL;
                const char *o = figure_outcome(ri->exit_code, ri->term_signal,
                                               S->in->summary ? S->in->summary->build.oom_kills : 0,
                                               S->outcome);

                et = otlp_trace_error_type(ri, S->error_type);
                attr_s(S, "error.type", et ? et : "_OTHER");
                attr_s(S, "build.outcome", o);
                /* "OOM-killed", "exit 2: foo.o (make): foo.c:3:1: error: ..." */
                snprintf(S->status_msg, sizeof(S->status_msg), "%s%s%s%s%s%s", o,
                         fl && fl->target[0] ? ": " : "", fl ? fl->target : "",
                         fl && fl->target[0] ? " failed" : "", fl && fl->first[0] ? ": " : "",
                         fl ? fl->first : "");
                if (fl && fl->target[0])
                        attr_s(S, "build.failed.target", fl->target);
                if (fl && fl->first[0])
                        attr_s(S, "build.error.first", fl->first);
                sp->status = OTLP_STATUS_ERROR;
                sp->status_message = S->status_msg;
        }
        if (c->vcs_rev && *c->vcs_rev)
                attr_s(S, "vcs.ref.head.revision", c->vcs_rev);
        if (c->ci_pipeline_name)
                attr_s(S, "cicd.pipeline.name", c->ci_pipeline_name);
        if (c->ci_pipeline_run_id)
                attr_s(S, "cicd.pipeline.run.id", c->ci_pipeline_run_id);
        sp->nattrs = (size_t)(S->attrs + S->nattrs - sp->attrs);
        run_events(S);
        sp->events = S->ev;
        sp->nevents = S->nev;
}

/* What a RUN step used inside BuildKit, where measured (at most
 * STEP_EXEC_ATTRS). */
static void step_exec_attrs(struct enc *S, const struct step_exec *x)
{
        const struct {
                const char *k;
                double v;
        } d[] = {
            {"build.step.memory.peak_bytes", x->mem_peak_bytes},
            {"build.step.memory.anon_peak_bytes", x->anon_peak_bytes},
            {"build.step.cpu_seconds", x->cpu_s},
            {"build.step.io.read_bytes", x->io_read_bytes},
            {"build.step.io.write_bytes", x->io_write_bytes},
            {"build.step.network.rx_bytes", x->net_rx_bytes},
            {"build.step.network.tx_bytes", x->net_tx_bytes},
            {"build.step.oom_kills", x->oom_kills},
        };

        if (!x->set)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(d); i++)
                if (isfinite(d[i].v))
                        attr_d(S, d[i].k, d[i].v);
        if (x->oom_victim[0])
                attr_s(S, "build.step.oom_victim", x->oom_victim);
        if (x->peak_proc[0])
                attr_s(S, "build.step.memory.peak_process", x->peak_proc);
}

/* A span of the model (model/spans.h) under the run span, or under its
 * parent's: element i of the array is span 1 + i. */
static void child(struct enc *S, const struct span *m)
{
        double t0 = S->in->run->start_epoch;
        struct otlp_span *sp = &S->sp[S->n];
        static const char *const prefix[SPAN_KINDS] = {
            [SPAN_TARGET] = "target ", [SPAN_STEP] = "", [SPAN_EDGE] = "ninja "};

        snprintf(S->names[S->n], sizeof(S->names[0]), "%s%.*s", prefix[m->kind], (int)m->len,
                 m->name);
        *sp = (struct otlp_span){
            .has_parent = true,
            .name = S->names[S->n],
            .kind = OTLP_SPAN_KIND_INTERNAL,
            .start_ns = to_ns(t0 + m->start_s),
            .end_ns = MAX(to_ns(t0 + m->end_s), to_ns(t0 + m->start_s)),
            .attrs = S->attrs + S->nattrs,
        };
        child_id(S->sp[0].span_id, S->n, sp->span_id);
        memcpy(sp->parent_id, S->sp[m->parent >= 0 ? 1 + m->parent : 0].span_id, 8);
        S->n++;
        if (m->kind == SPAN_TARGET) {
                attr_s(S, "build.target.name", m->name);
                if (m->tf->steps_set) {
                        attr_i(S, "build.target.steps", m->tf->steps);
                        attr_i(S, "build.target.steps.cached", m->tf->cached);
                        attr_b(S, "build.target.cached",
                               m->tf->steps > 0 && m->tf->cached == m->tf->steps);
                }
                if (m->tf->success == TARGET_FAILED) {
                        sp->status = OTLP_STATUS_ERROR;
                        sp->status_message = "target failed";
                } else if (m->tf->success == TARGET_BUILT) {
                        sp->status = OTLP_STATUS_OK;
                }
        } else if (m->kind == SPAN_STEP) {
                attr_s(S, "build.step.name", m->name);
                attr_b(S, "build.step.cached", m->sf->cached);
                if (m->sf->error || m->sf->canceled) {
                        sp->status = OTLP_STATUS_ERROR;
                        sp->status_message = m->sf->error ? "step failed" : "step canceled";
                }
                step_exec_attrs(S, &m->sf->exec);
        } else { /* an edge: spans_derive() adds no units */
                attr_s(S, "build.ninja.output", m->name);
        }
        if (m->critical)
                attr_b(S, "build.critical_path", true);
        sp->nattrs = (size_t)(S->attrs + S->nattrs - sp->attrs);
}

int otlp_trace_encode(const struct otlp_trace_input *in, bool json, struct dbuf *out)
{
        struct spans M = {.max = (size_t)in->cfg->max_spans};
        struct enc S = {.in = in};
        struct otlp_trace_request rq = {
            .resource = in->resource,
            .nresource = in->nresource,
            .scope_name = "buildtel",
            .scope_version = BUILDTEL_VERSION,
        };
        int e;

        if (!in->cfg->span_set)
                return -EINVAL;
        e = spans_derive(&M, in->run, in->facts, in->targets);
        S.cap = 1 + M.n;
        S.sp = calloc(S.cap, sizeof(*S.sp));
        S.names = calloc(S.cap, sizeof(*S.names));
        S.attrs =
            calloc(RUN_ATTRS + RUN_EVENTS * EVENT_ATTRS + S.cap * MAX(TARGET_ATTRS, STEP_ATTRS),
                   sizeof(*S.attrs));
        if (e >= 0 && S.sp && S.names && S.attrs) {
                memcpy(rq.trace_id, in->cfg->span.trace_id, 16);
                run_span(&S);
                for (size_t i = 0; i < M.n; i++)
                        child(&S, &M.v[i]);
                rq.spans = S.sp;
                rq.nspans = S.n;
                e = otlp_encode_trace(&rq, json, out);
        } else {
                e = -ENOMEM;
        }
        spans_release(&M);
        free(S.sp);
        free(S.names);
        free(S.attrs);
        return e;
}
