/* SPDX-License-Identifier: MIT */
/* OTLP spans: the encoder's protobuf read back by an independent strict
 * reader (otlp-pbdecode.h) and its JSON by jansson; the run span from a
 * run's facts (name, CI/CD semconv result, error.type, status); the run
 * span's ids and the TRACEPARENT the build gets; the build's environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "otlp-pbdecode.h"
#include "model/run.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/otlp-encode.h"
#include "render/otlp-trace.h"
#include "parse/otelenv.h"
#include "platform/child.h"
#include "util/macro.h"

#define MAX_SPANS 16

struct dspan {
        uint8_t trace[16], span[8], parent[8];
        bool has_parent;
        char trace_state[PBD_MAX_STR], name[PBD_MAX_STR];
        uint64_t kind, start, end;
        size_t nattrs, nevents;
        struct pbd_attr attrs[PBD_MAX_ATTRS * 2];
        char event_name[4][PBD_MAX_STR];
        uint64_t event_time[4];
        char status_msg[PBD_MAX_STR];
        uint64_t status;
};

struct dtrace {
        size_t nresource, nspans;
        struct pbd_attr resource[4];
        char scope[PBD_MAX_STR];
        struct dspan s[MAX_SPANS];
};

static int d_event(const uint8_t *p, size_t len, struct dspan *d)
{
        struct pbd_field f;
        size_t i = d->nevents++;

        if (i >= 4)
                return -1;
        PBD_EACH(f, p, len)
        {
                if (f.num == 1 && f.wt == 1)
                        d->event_time[i] = f.v;
                else if (f.num == 2 && f.wt == 2)
                        pbd_str(d->event_name[i], &f);
                else if (f.num != 3 || f.wt != 2)
                        return -1;
        }
        return 0;
}

static int d_status(const uint8_t *p, size_t len, struct dspan *d)
{
        struct pbd_field f;

        PBD_EACH(f, p, len)
        {
                if (f.num == 2 && f.wt == 2)
                        pbd_str(d->status_msg, &f);
                else if (f.num == 3 && f.wt == 0)
                        d->status = f.v;
                else
                        return -1;
        }
        return 0;
}

/* Span: fields in ascending order, as the canonical encoding has them. */
static int d_span(const uint8_t *p, size_t len, struct dspan *d)
{
        struct pbd_field f;
        uint32_t last = 0;

        PBD_EACH(f, p, len)
        {
                if (f.num < last)
                        return -1;
                last = f.num;
                if (f.num == 1 && f.wt == 2 && f.len == 16)
                        memcpy(d->trace, f.p, 16);
                else if (f.num == 2 && f.wt == 2 && f.len == 8)
                        memcpy(d->span, f.p, 8);
                else if (f.num == 3 && f.wt == 2)
                        pbd_str(d->trace_state, &f);
                else if (f.num == 4 && f.wt == 2 && f.len == 8) {
                        memcpy(d->parent, f.p, 8);
                        d->has_parent = true;
                } else if (f.num == 5 && f.wt == 2)
                        pbd_str(d->name, &f);
                else if (f.num == 6 && f.wt == 0)
                        d->kind = f.v;
                else if (f.num == 7 && f.wt == 1)
                        d->start = f.v;
                else if (f.num == 8 && f.wt == 1)
                        d->end = f.v;
                else if (f.num == 9 && f.wt == 2 && d->nattrs < ARRAY_SIZE(d->attrs)) {
                        if (pbd_keyvalue(f.p, f.len, &d->attrs[d->nattrs++]) < 0)
                                return -1;
                } else if (f.num == 11 && f.wt == 2) {
                        if (d_event(f.p, f.len, d) < 0)
                                return -1;
                } else if (f.num == 15 && f.wt == 2) {
                        if (d_status(f.p, f.len, d) < 0)
                                return -1;
                } else
                        return -1;
        }
        return 0;
}

static int d_scope_spans(const uint8_t *p, size_t len, struct dtrace *t)
{
        struct pbd_field f, g;

        PBD_EACH(f, p, len)
        {
                if (f.num == 1 && f.wt == 2) {
                        PBD_EACH(g, f.p, f.len)
                        {
                                if (g.num == 1 && g.wt == 2)
                                        pbd_str(t->scope, &g);
                        }
                } else if (f.num == 2 && f.wt == 2 && t->nspans < MAX_SPANS) {
                        if (d_span(f.p, f.len, &t->s[t->nspans++]) < 0)
                                return -1;
                } else
                        return -1;
        }
        return 0;
}

static int d_trace(const uint8_t *p, size_t len, struct dtrace *t)
{
        struct pbd_field f, g, h;

        memset(t, 0, sizeof(*t));
        PBD_EACH(f, p, len)
        {
                if (f.num != 1 || f.wt != 2)
                        return -1;
                PBD_EACH(g, f.p, f.len)
                {
                        if (g.num == 1 && g.wt == 2) {
                                PBD_EACH(h, g.p, g.len)
                                {
                                        if (h.num != 1 || h.wt != 2 || t->nresource >= 4 ||
                                            pbd_keyvalue(h.p, h.len, &t->resource[t->nresource++]) <
                                                0)
                                                return -1;
                                }
                        } else if (g.num == 2 && g.wt == 2) {
                                if (d_scope_spans(g.p, g.len, t) < 0)
                                        return -1;
                        } else
                                return -1;
                }
        }
        return 0;
}

static const char *dattr(const struct dspan *d, const char *key)
{
        for (size_t i = 0; i < d->nattrs; i++)
                if (strcmp(d->attrs[i].key, key) == 0)
                        return d->attrs[i].type == 1 ? d->attrs[i].s : "(not a string)";
        return NULL;
}

/* ---- the encoder --------------------------------------------------- */

static const struct otlp_attr res[] = {{.key = "service.name", .type = OTLP_STRING, .s = "bt"}};
static const struct otlp_attr sattrs[] = {
    {.key = "k", .type = OTLP_STRING, .s = "v\"\n\xff"},
    {.key = "n", .type = OTLP_INT, .i = -5},
    {.key = "b", .type = OTLP_BOOL, .b = true},
};
static const struct otlp_attr eattrs[] = {
    {.key = "build.oom.victim", .type = OTLP_STRING, .s = "cc1plus"}};
static const struct otlp_event events[] = {
    {.name = "oom_kill", .time_ns = 1500, .attrs = eattrs, .nattrs = 1},
};

static struct otlp_trace_request two_spans(struct otlp_span sp[2])
{
        struct otlp_trace_request rq = {
            .resource = res,
            .nresource = 1,
            .scope_name = "buildtel",
            .scope_version = "1",
            .trace_id = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d,
                         0x0e, 0x0e, 0x47, 0x36},
            .spans = sp,
            .nspans = 2,
        };

        sp[0] = (struct otlp_span){
            .span_id = {1, 2, 3, 4, 5, 6, 7, 8},
            .has_parent = true,
            .parent_id = {0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
            .trace_state = "congo=t61",
            .name = "buildtel run make",
            .kind = OTLP_SPAN_KIND_INTERNAL,
            .start_ns = 1000,
            .end_ns = 1796088029194468864ULL,
            .attrs = sattrs,
            .nattrs = 3,
            .events = events,
            .nevents = 1,
            .status = OTLP_STATUS_ERROR,
            .status_message = "exited with 2",
        };
        sp[1] = (struct otlp_span){
            .span_id = {9, 9, 9, 9, 9, 9, 9, 9},
            .has_parent = true,
            .parent_id = {1, 2, 3, 4, 5, 6, 7, 8},
            .name = "target lib",
            .kind = OTLP_SPAN_KIND_INTERNAL,
            .start_ns = 1100,
            .end_ns = 1200,
        };
        return rq;
}

static void test_protobuf_roundtrip(void **state)
{
        struct otlp_span sp[2];
        struct otlp_trace_request rq = two_spans(sp);
        struct dbuf b = DBUF_INIT;
        struct dtrace *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        assert_int_equal(otlp_encode_trace(&rq, false, &b), 0);
        assert_int_equal(d_trace((const uint8_t *)b.p, b.len, t), 0);
        assert_int_equal(t->nresource, 1);
        assert_string_equal(t->resource[0].s, "bt");
        assert_string_equal(t->scope, "buildtel");
        assert_int_equal(t->nspans, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_memory_equal(t->s[i].trace, rq.trace_id, 16);
                assert_memory_equal(t->s[i].span, sp[i].span_id, 8);
                assert_true(t->s[i].has_parent);
                assert_memory_equal(t->s[i].parent, sp[i].parent_id, 8);
                assert_string_equal(t->s[i].name, sp[i].name);
                assert_int_equal(t->s[i].kind, 1);
                assert_true(t->s[i].start == sp[i].start_ns && t->s[i].end == sp[i].end_ns);
        }
        assert_string_equal(t->s[0].trace_state, "congo=t61");
        assert_string_equal(t->s[1].trace_state, "");
        assert_int_equal(t->s[0].nattrs, 3);
        assert_string_equal(t->s[0].attrs[0].s, "v\"\n\xef\xbf\xbd"); /* made UTF-8 */
        assert_int_equal((int64_t)t->s[0].attrs[1].u, -5);
        assert_int_equal(t->s[0].attrs[2].u, 1);
        assert_int_equal(t->s[0].nevents, 1);
        assert_string_equal(t->s[0].event_name[0], "oom_kill");
        assert_int_equal(t->s[0].event_time[0], 1500);
        assert_int_equal(t->s[0].status, 2);
        assert_string_equal(t->s[0].status_msg, "exited with 2");
        assert_int_equal(t->s[1].status, 0);
        dbuf_release(&b);
        free(t);
}

static void test_json(void **state)
{
        struct otlp_span sp[2];
        struct otlp_trace_request rq = two_spans(sp);
        struct dbuf b = DBUF_INIT;
        json_error_t err;
        json_t *root, *spans, *s0;

        assert_int_equal(otlp_encode_trace(&rq, true, &b), 0);
        root = json_loadb(b.p, b.len, 0, &err);
        assert_non_null(root);
        spans = json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(root, "resourceSpans"), 0),
                                "scopeSpans"),
                0),
            "spans");
        assert_int_equal(json_array_size(spans), 2);
        s0 = json_array_get(spans, 0);
        assert_string_equal(json_string_value(json_object_get(s0, "traceId")),
                            "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_string_equal(json_string_value(json_object_get(s0, "spanId")), "0102030405060708");
        assert_string_equal(json_string_value(json_object_get(s0, "parentSpanId")),
                            "00f067aa0ba902b7");
        assert_string_equal(json_string_value(json_object_get(s0, "traceState")), "congo=t61");
        /* 64-bit integers are strings; enums are integers */
        assert_string_equal(json_string_value(json_object_get(s0, "endTimeUnixNano")),
                            "1796088029194468864");
        assert_int_equal(json_integer_value(json_object_get(s0, "kind")), 1);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(s0, "status"), "code")),
                         2);
        assert_string_equal(
            json_string_value(json_object_get(
                json_object_get(json_array_get(json_object_get(s0, "attributes"), 1), "value"),
                "intValue")),
            "-5");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(s0, "events"), 0), "timeUnixNano")),
                            "1500");
        assert_null(json_object_get(json_array_get(spans, 1), "traceState"));
        json_decref(root);
        dbuf_release(&b);
}

/* ---- the run span from a run --------------------------------------- */

struct run_case {
        const char *name;
        int exit_code, term_signal;
        bool finished;
        const char *result, *error_type, *status_msg;
        uint64_t status;
};

static const struct run_case run_cases[] = {
    {"success", 0, 0, true, "success", NULL, "", 0},
    {"exit 2", 2, 0, true, "failure", "2", "exit 2", 2},
    {"killed", 137, 9, true, "cancellation", "SIGKILL", "SIGKILL", 2},
    {"buildtel killed", -1, 0, false, "error", "_OTHER", "unknown", 2},
};

static void test_run_span(void **state)
{
        for (size_t c = 0; c < ARRAY_SIZE(run_cases); c++) {
                const struct run_case *rc = &run_cases[c];
                char a0[] = "/usr/bin/make", a1[] = "-j8", rid[] = "r-1";
                char *argv[] = {a0, a1, NULL};
                struct run_info ri = {.run_id = rid,
                                      .argv = argv,
                                      .start_epoch = 1000.5,
                                      .end_epoch = rc->finished ? 1010.25 : NAN,
                                      .finished = rc->finished,
                                      .exit_code = rc->exit_code,
                                      .term_signal = rc->term_signal};
                struct otel_config cfg = {.enabled = true, .has_trace = true, .max_spans = 10};
                struct run_facts *f = calloc(1, sizeof(*f));
                struct dtrace *t = calloc(1, sizeof(*t));
                struct dbuf b = DBUF_INIT;
                uint8_t rnd[16] = {0};
                struct otlp_trace_input in = {.cfg = &cfg, .run = &ri, .facts = f};

                assert_non_null(f);
                assert_non_null(t);
                memset(cfg.trace.trace_id, 0xab, 16);
                memset(cfg.trace.span_id, 0xcd, 8);
                targets_facts(NULL, &ri, f);
                /* the ids are chosen first: without them there is no span */
                assert_int_equal(otlp_trace_encode(&in, false, &b), -EINVAL);
                otelenv_set_run_span(&cfg, rnd, ri.run_id);
                f->n = 1;
                snprintf(f->t[0].name, sizeof(f->t[0].name), "lib");
                f->t[0].start_s = 1.0;
                f->t[0].end_s = 2.0;
                f->t[0].success = TARGET_FAILED;
                assert_int_equal(otlp_trace_encode(&in, false, &b), 0);
                assert_int_equal(d_trace((const uint8_t *)b.p, b.len, t), 0);
                assert_int_equal(t->nspans, 2);
                assert_string_equal(t->s[0].name, "buildtel run make");
                assert_memory_equal(t->s[0].parent, cfg.trace.span_id, 8);
                assert_memory_equal(t->s[0].trace, cfg.trace.trace_id, 16);
                assert_string_equal(dattr(&t->s[0], "cicd.pipeline.task.name"), "make");
                assert_string_equal(dattr(&t->s[0], "cicd.pipeline.task.run.id"), "r-1");
                assert_string_equal(dattr(&t->s[0], "cicd.pipeline.task.run.result"), rc->result);
                if (rc->error_type)
                        assert_string_equal(dattr(&t->s[0], "error.type"), rc->error_type);
                else
                        assert_null(dattr(&t->s[0], "error.type"));
                assert_int_equal(t->s[0].status, rc->status);
                assert_string_equal(t->s[0].status_msg, rc->status_msg);
                assert_int_equal(t->s[0].start, 1000500000000ULL);
                if (rc->finished)
                        assert_int_equal(t->s[0].end, 1010250000000ULL);
                /* the target: a child, in run seconds from the start */
                assert_memory_equal(t->s[1].parent, t->s[0].span, 8);
                assert_int_equal(t->s[1].start, 1001500000000ULL);
                assert_int_equal(t->s[1].end, 1002500000000ULL);
                assert_int_equal(t->s[1].status, 2);
                assert_memory_not_equal(t->s[1].span, t->s[0].span, 8);
                /* --trace-max-spans 0: the run span alone */
                cfg.max_spans = 0;
                dbuf_reset(&b);
                assert_int_equal(otlp_trace_encode(&in, false, &b), 0);
                assert_int_equal(d_trace((const uint8_t *)b.p, b.len, t), 0);
                assert_int_equal(t->nspans, 1);
                dbuf_release(&b);
                free(f);
                free(t);
        }
}

/* The summary's OOM kills and first near-OOM and low-disk samples become
 * events of the run span, at their instants. */
static void test_events(void **state)
{
        char rid[] = "r-2";
        struct run_info ri = {.run_id = rid,
                              .start_epoch = 1000,
                              .end_epoch = 1100,
                              .finished = true,
                              .exit_code = 137,
                              .term_signal = 9};
        struct otel_config cfg = {.enabled = true, .max_spans = 10};
        struct summary *sm = calloc(1, sizeof(*sm));
        struct dtrace *t = calloc(1, sizeof(*t));
        struct dbuf b = DBUF_INIT;
        uint8_t rnd[16] = {1};
        struct otlp_trace_input in = {.cfg = &cfg, .run = &ri, .summary = sm};

        assert_non_null(sm);
        assert_non_null(t);
        summary_init(sm, NULL);
        otelenv_set_run_span(&cfg, rnd, rid);
        sm->build.noom = 1;
        sm->build.oom[0] = (struct summary_oom){
            .epoch = 1050, .kills = 1, .victim = {.pid = 42, .label = "cc1plus"}};
        sm->near_oom_first = (struct summary_point){.set = true, .value = 100, .epoch = 1040};
        sm->low_disk_first = (struct summary_point){.set = true, .value = 3, .epoch = 1060.5};
        assert_int_equal(otlp_trace_encode(&in, false, &b), 0);
        assert_int_equal(d_trace((const uint8_t *)b.p, b.len, t), 0);
        assert_int_equal(t->nspans, 1);
        assert_false(t->s[0].has_parent); /* no TRACEPARENT: a root */
        assert_int_equal(t->s[0].nevents, 3);
        assert_string_equal(t->s[0].event_name[0], "oom_kill");
        assert_int_equal(t->s[0].event_time[0], 1050000000000ULL);
        assert_string_equal(t->s[0].event_name[1], "near_oom");
        assert_int_equal(t->s[0].event_time[1], 1040000000000ULL);
        assert_string_equal(t->s[0].event_name[2], "low_disk");
        assert_int_equal(t->s[0].event_time[2], 1060500000000ULL);
        dbuf_release(&b);
        free(sm);
        free(t);
}

/* ---- ids and the build's TRACEPARENT -------------------------------- */

static void test_ids(void **state)
{
        struct otel_config a = {.has_trace = true, .trace = {.flags = 0}}, b = {0}, c = {0};
        uint8_t r1[16], r2[16];
        char tp[56];

        memset(r1, 0x11, sizeof(r1));
        memset(r2, 0x22, sizeof(r2));
        memset(a.trace.trace_id, 0x4b, 16);
        memset(a.trace.span_id, 0x07, 8);
        otelenv_set_run_span(&a, r1, "run-1");
        assert_memory_equal(a.span.trace_id, a.trace.trace_id, 16); /* the caller's trace */
        assert_memory_not_equal(a.span.span_id, a.trace.span_id, 8);
        assert_int_equal(a.span.flags, 0); /* the caller's flags: not sampled */
        otelenv_set_run_span(&b, r1, "run-1");
        assert_memory_equal(b.span.trace_id, r1, 16);
        assert_int_equal(b.span.flags, 1);
        /* a re-export of the same run in the same trace names the same span */
        otelenv_set_run_span(&c, r1, "run-1");
        assert_memory_equal(b.span.span_id, c.span.span_id, 8);
        otelenv_set_run_span(&c, r1, "run-2");
        assert_memory_not_equal(b.span.span_id, c.span.span_id, 8);
        otelenv_set_run_span(&c, r2, "run-1");
        assert_memory_not_equal(b.span.span_id, c.span.span_id, 8);
        /* all-zero ids are invalid: never chosen */
        memset(r1, 0, sizeof(r1));
        otelenv_set_run_span(&c, r1, "");
        assert_memory_not_equal(c.span.trace_id, r1, 16);

        assert_int_equal(otelenv_format_traceparent(&a.span, tp, sizeof(tp)), 0);
        assert_int_equal(strlen(tp), 55);
        assert_memory_equal(tp, "00-4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b-", 36);
        assert_string_equal(tp + 52, "-00");
        assert_int_equal(otelenv_format_traceparent(&a.span, tp, 55), -EINVAL);
        {
                struct traceparent back;
                assert_int_equal(otelenv_parse_traceparent(tp, 55, &back), 0);
                assert_memory_equal(back.span_id, a.span.span_id, 8);
        }
}

static void test_child_env(void **state)
{
        char set1[] = "TRACEPARENT=00-x", set2[] = "TRACESTATE";
        char *set[] = {set1, set2};
        char **env = NULL;
        size_t n = 0, ours = 0;
        bool tp = false, ts = false, keep = false;

        assert_int_equal(setenv("TRACEPARENT", "old", 1), 0);
        assert_int_equal(setenv("TRACESTATE", "old", 1), 0);
        assert_int_equal(setenv("BT_TEST_KEEP", "1", 1), 0);
        while (environ[ours])
                ours++;
        assert_int_equal(child_env_with(set, 2, &env), 0);
        for (; env[n]; n++) {
                tp |= strcmp(env[n], "TRACEPARENT=00-x") == 0;
                ts |= strncmp(env[n], "TRACESTATE=", 11) == 0;
                keep |= strcmp(env[n], "BT_TEST_KEEP=1") == 0;
                assert_string_not_equal(env[n], "TRACEPARENT=old");
        }
        assert_true(tp && !ts && keep);
        assert_int_equal(n, ours - 1); /* one replaced, one removed */
        free(env);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_protobuf_roundtrip),
            cmocka_unit_test(test_json),
            cmocka_unit_test(test_run_span),
            cmocka_unit_test(test_events),
            cmocka_unit_test(test_ids),
            cmocka_unit_test(test_child_env),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
