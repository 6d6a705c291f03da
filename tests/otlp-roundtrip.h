/* SPDX-License-Identifier: MIT */
/* Random OTLP metric sets from a byte stream, encoded both ways and decoded
 * back (protobuf with tests/otlp-pbdecode.h, JSON with jansson, gzip with
 * zlib's inflate): the values must come back the same. Shared
 * by the fuzz target and the unit test; returns a short reason on a
 * mismatch, NULL when everything matched. */
#pragma once

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ZLIB_CONST
#include <zlib.h>

#include "otlp-pbdecode.h"
#include "render/otlp-encode.h"

struct rt_bytes {
        const uint8_t *p;
        size_t len, pos;
};

static inline uint8_t rt_u8(struct rt_bytes *b)
{
        return b->pos < b->len ? b->p[b->pos++] : 0;
}
static inline uint64_t rt_u64(struct rt_bytes *b)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = v << 8 | rt_u8(b);
        return v;
}

#define RT_STR 24
struct rt_set {
        char names[16][RT_STR], units[16][RT_STR], keys[64][RT_STR], svals[64][RT_STR];
        struct otlp_metric metrics[8];
        struct otlp_point points[48];
        struct otlp_attr attrs[64];
        struct otlp_attr res[4];
        struct otlp_request rq;
};

/* Any ASCII but NUL: quotes, backslashes and controls exercise escaping. */
static inline void rt_str(struct rt_bytes *b, char *out)
{
        size_t n = rt_u8(b) % (RT_STR - 1);
        for (size_t i = 0; i < n; i++)
                out[i] = (char)(1 + rt_u8(b) % 127);
        out[n] = '\0';
}

static inline void rt_attr(struct rt_bytes *b, struct rt_set *s, size_t k, struct otlp_attr *a)
{
        rt_str(b, s->keys[k]);
        a->key = s->keys[k];
        a->type = (enum otlp_value_type)(rt_u8(b) % 4);
        a->s = s->svals[k];
        rt_str(b, s->svals[k]);
        a->b = rt_u8(b) & 1;
        a->i = (int64_t)rt_u64(b);
        {
                uint64_t bits = rt_u64(b);
                memcpy(&a->d, &bits, 8);
        }
}

static inline void rt_build(struct rt_bytes *b, struct rt_set *s)
{
        size_t na = 0, np = 0, nm = 1 + rt_u8(b) % 8;

        memset(&s->rq, 0, sizeof(s->rq));
        s->rq.nresource = rt_u8(b) % 4;
        for (size_t i = 0; i < s->rq.nresource; i++)
                rt_attr(b, s, 60 + i, &s->res[i]);
        s->rq.resource = s->res;
        s->rq.scope_name = "buildtel";
        s->rq.scope_version = "0.1.0";
        s->rq.has_trace = rt_u8(b) & 1;
        for (size_t i = 0; i < 16; i++)
                s->rq.trace_id[i] = rt_u8(b);
        for (size_t i = 0; i < 8; i++)
                s->rq.span_id[i] = rt_u8(b);
        for (size_t m = 0; m < nm; m++) {
                struct otlp_metric *M = &s->metrics[m];
                size_t n = rt_u8(b) % 7;

                rt_str(b, s->names[m]);
                rt_str(b, s->units[m]);
                /* a name and a kind are what a metric needs */
                if (!s->names[m][0])
                        memcpy(s->names[m], "m", 2);
                M->name = s->names[m];
                M->unit = s->units[m];
                M->description = (rt_u8(b) & 1) ? "a description" : NULL;
                M->kind = (rt_u8(b) & 1) ? OTLP_SUM : OTLP_GAUGE;
                M->monotonic = M->kind == OTLP_SUM && (rt_u8(b) & 1);
                M->points = &s->points[np];
                M->npoints = 0;
                for (size_t k = 0; k < n && np < 48; k++) {
                        struct otlp_point *p = &s->points[np++];
                        uint64_t bits;
                        size_t nat = rt_u8(b) % 3;

                        p->start_ns = (rt_u8(b) & 1) ? rt_u64(b) : 0;
                        p->time_ns = rt_u64(b);
                        p->is_int = rt_u8(b) & 1;
                        bits = rt_u64(b);
                        p->i = (int64_t)bits;
                        memcpy(&p->d, &bits, 8);
                        p->attrs = &s->attrs[na];
                        p->nattrs = 0;
                        for (size_t a = 0; a < nat && na < 56; a++, na++, p->nattrs++)
                                rt_attr(b, s, na, &s->attrs[na]);
                        M->npoints++;
                }
        }
        s->rq.metrics = s->metrics;
        s->rq.nmetrics = nm;
}

static inline uint64_t rt_dbits(double d)
{
        uint64_t v;
        memcpy(&v, &d, 8);
        return v;
}

static inline bool rt_attr_eq(const struct otlp_attr *a, const struct pbd_attr *d)
{
        if (strcmp(a->key, d->key) != 0)
                return false;
        switch (a->type) {
        case OTLP_STRING:
                return d->type == 1 && strcmp(a->s, d->s) == 0;
        case OTLP_BOOL:
                return d->type == 2 && d->u == (uint64_t)a->b;
        case OTLP_INT:
                return d->type == 3 && d->u == (uint64_t)a->i;
        case OTLP_DOUBLE:
                return d->type == 4 && d->u == rt_dbits(a->d);
        }
        return false;
}

static inline const char *rt_check_pb(const struct otlp_request *rq, const uint8_t *p, size_t len)
{
        static struct pbd_request d;
        size_t pi = 0;

        if (pbd_request(p, len, &d) < 0)
                return "protobuf does not decode";
        if (d.nresource != rq->nresource || d.nmetrics != rq->nmetrics)
                return "protobuf: counts differ";
        if (strcmp(d.scope_name, rq->scope_name) != 0 ||
            strcmp(d.scope_version, rq->scope_version) != 0)
                return "protobuf: scope differs";
        for (size_t i = 0; i < rq->nresource; i++)
                if (!rt_attr_eq(&rq->resource[i], &d.resource[i]))
                        return "protobuf: resource attribute differs";
        for (size_t m = 0; m < rq->nmetrics; m++) {
                const struct otlp_metric *M = &rq->metrics[m];
                const struct pbd_metric *D = &d.metrics[m];

                if (strcmp(M->name, D->name) != 0 || strcmp(M->unit, D->unit) != 0 ||
                    strcmp(M->description ? M->description : "", D->desc) != 0)
                        return "protobuf: metric name, unit or description differs";
                if (D->kind != (M->kind == OTLP_SUM ? 7 : 5) || D->npoints != M->npoints)
                        return "protobuf: metric kind or point count differs";
                if (M->kind == OTLP_SUM && (D->temporality != 2 || D->monotonic != M->monotonic))
                        return "protobuf: sum temporality or monotonic differs";
                for (size_t k = 0; k < M->npoints; k++, pi++) {
                        const struct otlp_point *P = &M->points[k];
                        const struct pbd_point *Q = &d.points[D->first + k];
                        uint64_t bits = P->is_int ? (uint64_t)P->i : rt_dbits(P->d);

                        if (Q->start_ns != P->start_ns || Q->time_ns != P->time_ns ||
                            Q->is_int != P->is_int || !Q->has_value || Q->bits != bits)
                                return "protobuf: point time or value differs";
                        if (Q->nattrs != P->nattrs)
                                return "protobuf: point attribute count differs";
                        for (size_t a = 0; a < P->nattrs; a++)
                                if (!rt_attr_eq(&P->attrs[a], &Q->attrs[a]))
                                        return "protobuf: point attribute differs";
                        if (Q->nexemplars != (rq->has_trace ? 1 : 0))
                                return "protobuf: exemplar count differs";
                        if (rq->has_trace &&
                            (Q->ex_time != P->time_ns || Q->ex_bits != bits ||
                             Q->ex_is_int != P->is_int || memcmp(Q->trace, rq->trace_id, 16) != 0 ||
                             memcmp(Q->span, rq->span_id, 8) != 0))
                                return "protobuf: exemplar differs";
                }
        }
        return NULL;
}

/* A JSON double: a number, or "NaN"/"Infinity"/"-Infinity". */
static inline bool rt_json_double_eq(json_t *v, double d)
{
        if (json_is_string(v)) {
                const char *s = json_string_value(v);
                if (isnan(d))
                        return strcmp(s, "NaN") == 0;
                return isinf(d) && strcmp(s, d > 0 ? "Infinity" : "-Infinity") == 0;
        }
        return json_is_number(v) && rt_dbits(json_number_value(v)) == rt_dbits(d);
}

static inline bool rt_json_i64_eq(json_t *v, int64_t i, bool is_unsigned)
{
        char want[32];

        if (is_unsigned)
                snprintf(want, sizeof(want), "%llu", (unsigned long long)(uint64_t)i);
        else
                snprintf(want, sizeof(want), "%lld", (long long)i);
        return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static inline bool rt_json_attrs_eq(json_t *arr, const struct otlp_attr *a, size_t n)
{
        if (!json_is_array(arr) || json_array_size(arr) != n)
                return false;
        for (size_t i = 0; i < n; i++) {
                json_t *kv = json_array_get(arr, i), *v = json_object_get(kv, "value");
                if (!json_is_string(json_object_get(kv, "key")) ||
                    strcmp(json_string_value(json_object_get(kv, "key")), a[i].key) != 0 ||
                    json_object_size(v) != 1)
                        return false;
                switch (a[i].type) {
                case OTLP_STRING:
                        if (!json_is_string(json_object_get(v, "stringValue")) ||
                            strcmp(json_string_value(json_object_get(v, "stringValue")), a[i].s) !=
                                0)
                                return false;
                        break;
                case OTLP_BOOL:
                        if (json_object_get(v, "boolValue") !=
                            (a[i].b ? json_true() : json_false()))
                                return false;
                        break;
                case OTLP_INT:
                        if (!rt_json_i64_eq(json_object_get(v, "intValue"), a[i].i, false))
                                return false;
                        break;
                case OTLP_DOUBLE:
                        if (!rt_json_double_eq(json_object_get(v, "doubleValue"), a[i].d))
                                return false;
                        break;
                }
        }
        return true;
}

/* jansson's allocations while the JSON is checked come from one arena,
 * emptied per check: jansson is not the code under test, and a malloc per
 * JSON value (each one a fresh, poisoned chunk under ASan) was the largest
 * cost of an iteration of the fuzz target. Past the arena, malloc. */
static _Alignas(16) unsigned char rt_arena[1 << 20];
static size_t rt_arena_used;

static inline void *rt_arena_alloc(size_t n)
{
        n = (n + 15) & ~(size_t)15;
        if (n > sizeof(rt_arena) - rt_arena_used)
                return malloc(n);
        rt_arena_used += n;
        return rt_arena + rt_arena_used - n;
}

static inline void rt_arena_free(void *p)
{
        if ((unsigned char *)p < rt_arena || (unsigned char *)p >= rt_arena + sizeof(rt_arena))
                free(p);
}

static inline const char *rt_check_json(const struct otlp_request *rq, const char *p, size_t len)
{
        json_error_t err;
        json_t *root, *rm, *sm, *metrics;
        const char *why = NULL;

        rt_arena_used = 0;
        json_set_alloc_funcs(rt_arena_alloc, rt_arena_free);
        root = json_loadb(p, len, 0, &err);
        if (!root) {
                json_set_alloc_funcs(malloc, free);
                return "JSON does not parse";
        }
        rm = json_array_get(json_object_get(root, "resourceMetrics"), 0);
        sm = json_array_get(json_object_get(rm, "scopeMetrics"), 0);
        metrics = json_object_get(sm, "metrics");
        if (!rt_json_attrs_eq(json_object_get(json_object_get(rm, "resource"), "attributes"),
                              rq->resource, rq->nresource))
                why = "JSON: resource differs";
        else if (json_array_size(metrics) != rq->nmetrics)
                why = "JSON: metric count differs";
        for (size_t m = 0; !why && m < rq->nmetrics; m++) {
                const struct otlp_metric *M = &rq->metrics[m];
                json_t *jm = json_array_get(metrics, m);
                json_t *body = json_object_get(jm, M->kind == OTLP_SUM ? "sum" : "gauge");
                json_t *dps = json_object_get(body, "dataPoints");

                if (strcmp(json_string_value(json_object_get(jm, "name")), M->name) != 0 ||
                    (M->unit[0] &&
                     strcmp(json_string_value(json_object_get(jm, "unit")), M->unit) != 0))
                        why = "JSON: metric name or unit differs";
                else if (json_array_size(dps) != M->npoints)
                        why = "JSON: point count differs";
                else if (M->kind == OTLP_SUM &&
                         (json_integer_value(json_object_get(body, "aggregationTemporality")) !=
                              2 ||
                          (json_object_get(body, "isMonotonic") == json_true()) != M->monotonic))
                        why = "JSON: sum temporality or monotonic differs";
                for (size_t k = 0; !why && k < M->npoints; k++) {
                        const struct otlp_point *P = &M->points[k];
                        json_t *dp = json_array_get(dps, k);
                        bool val = P->is_int
                                       ? rt_json_i64_eq(json_object_get(dp, "asInt"), P->i, false)
                                       : rt_json_double_eq(json_object_get(dp, "asDouble"), P->d);

                        if (!val ||
                            !rt_json_i64_eq(json_object_get(dp, "timeUnixNano"),
                                            (int64_t)P->time_ns, true) ||
                            (P->start_ns &&
                             !rt_json_i64_eq(json_object_get(dp, "startTimeUnixNano"),
                                             (int64_t)P->start_ns, true)))
                                why = "JSON: point time or value differs";
                        else if (!rt_json_attrs_eq(json_object_get(dp, "attributes"), P->attrs,
                                                   P->nattrs))
                                why = "JSON: point attributes differ";
                        else if (json_array_size(json_object_get(dp, "exemplars")) !=
                                 (rq->has_trace ? 1u : 0u))
                                why = "JSON: exemplar count differs";
                }
        }
        json_decref(root);
        json_set_alloc_funcs(malloc, free);
        return why;
}

/* Inflate a gzip member with zlib (which checks the CRC-32 and ISIZE of
 * the trailer) and compare it with what went in. */
static inline const char *rt_check_gzip(const uint8_t *g, size_t glen, const uint8_t *want,
                                        size_t wlen)
{
        z_stream z = {0};
        uint8_t *got;
        const char *why = NULL;
        int r;

        if (glen < 18 || g[0] != 0x1f || g[1] != 0x8b || g[2] != 8)
                return "gzip: bad header";
        got = malloc(wlen + 1);
        if (!got)
                return "out of memory";
        if (inflateInit2(&z, 16 + 15) != Z_OK) {
                free(got);
                return "out of memory";
        }
        z.next_in = g;
        z.avail_in = (uInt)glen;
        z.next_out = got;
        z.avail_out = (uInt)wlen + 1;
        r = inflate(&z, Z_FINISH);
        if (r != Z_STREAM_END)
                why = "gzip: zlib cannot inflate it (or its CRC or ISIZE differs)";
        else if (z.avail_in != 0)
                why = "gzip: bytes after the member";
        else if (z.total_out != wlen || memcmp(got, want, wlen) != 0)
                why = "gzip: inflated data differs";
        inflateEnd(&z);
        free(got);
        return why;
}

/* The whole round trip for one byte stream. */
static inline const char *rt_run(const uint8_t *data, size_t size)
{
        static struct rt_set s;
        /* Kept between calls (reset, not freed): growing three buffers from
         * nothing in every fuzz iteration was a good part of its cost. */
        static struct dbuf pb = DBUF_INIT, js = DBUF_INIT, gz = DBUF_INIT;
        struct rt_bytes b = {data, size, 0};
        const char *why;

        dbuf_reset(&pb);
        dbuf_reset(&js);
        dbuf_reset(&gz);
        rt_build(&b, &s);
        if (otlp_encode(&s.rq, false, &pb) < 0 || otlp_encode(&s.rq, true, &js) < 0 ||
            otlp_gzip(pb.p, pb.len, &gz) < 0)
                why = "out of memory";
        else if (!(why = rt_check_pb(&s.rq, (const uint8_t *)pb.p, pb.len)) &&
                 !(why = rt_check_json(&s.rq, js.p, js.len)))
                why = rt_check_gzip((const uint8_t *)gz.p, gz.len, (const uint8_t *)pb.p, pb.len);
        return why;
}
