/* SPDX-License-Identifier: MIT */
#include "render/otlp-encode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#define ZLIB_CONST
#include <zlib.h>

#include "model/run.h"
#include "render/jsonw.h"
#include "util/macro.h"
#include "util/util.h"

/* Both writers keep the first error and do nothing after it, so that the
 * message trees below read as the .proto files do. */
struct enc {
        struct dbuf *out;
        struct dbuf tmp; /* a string made valid UTF-8 */
        int err;
};

static void put(struct enc *E, const void *p, size_t n)
{
        if (E->err >= 0)
                E->err = dbuf_append(E->out, p, n);
}

static void puts_(struct enc *E, const char *s)
{
        put(E, s, strlen(s));
}

/* The encoding's end: its scratch released; on failure out gets its old
 * length back. Returns 0 or the first error. */
static int enc_end(struct enc *E, size_t old)
{
        dbuf_release(&E->tmp);
        if (E->err < 0) {
                E->out->len = old;
                if (E->out->p)
                        E->out->p[old] = '\0';
                return E->err;
        }
        return 0;
}

/* Strings from the environment and the build may hold any bytes; both
 * encodings need UTF-8 (a collector rejects a protobuf string that is
 * not). */
static const char *utf8(struct enc *E, const char *s, size_t *ret_len)
{
        dbuf_reset(&E->tmp);
        if (E->err >= 0)
                E->err = run_append_utf8_lossy(&E->tmp, s, strlen(s), false);
        *ret_len = E->err >= 0 ? E->tmp.len : 0;
        return E->err >= 0 && E->tmp.p ? E->tmp.p : "";
}

/* --- protobuf --------------------------------------------------------- */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static void pb_varint(struct enc *E, uint64_t v)
{
        uint8_t b[10];
        size_t n = 0;

        do {
                b[n] = (uint8_t)(v & 0x7f);
                v >>= 7;
                if (v)
                        b[n] |= 0x80;
                n++;
        } while (v);
        put(E, b, n);
}

static void pb_tag(struct enc *E, unsigned field, unsigned wt)
{
        pb_varint(E, field << 3 | wt);
}

static void pb_uint(struct enc *E, unsigned field, uint64_t v)
{
        pb_tag(E, field, WT_VARINT);
        pb_varint(E, v);
}

static void pb_fixed64(struct enc *E, unsigned field, uint64_t v)
{
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        pb_tag(E, field, WT_I64);
        put(E, b, 8);
}

static void pb_double(struct enc *E, unsigned field, double d)
{
        uint64_t v;

        memcpy(&v, &d, sizeof(v));
        pb_fixed64(E, field, v);
}

static void pb_bytes(struct enc *E, unsigned field, const void *p, size_t n)
{
        pb_tag(E, field, WT_LEN);
        pb_varint(E, n);
        put(E, p, n);
}

static void pb_string(struct enc *E, unsigned field, const char *s)
{
        size_t n;
        const char *u = utf8(E, s, &n);

        pb_bytes(E, field, u, n);
}

/* A nested message: the tag and a one-byte length now, the real length at
 * pb_end. Most messages here are under 128 bytes; the big ones (a metric
 * with many points) move their bytes once per level. */
static size_t pb_begin(struct enc *E, unsigned field)
{
        pb_tag(E, field, WT_LEN);
        put(E, "", 1);
        return E->out->len;
}

static void pb_end(struct enc *E, size_t start)
{
        size_t len, extra = 0;
        uint8_t b[10];

        if (E->err < 0)
                return;
        len = E->out->len - start;
        for (size_t v = len >> 7; v; v >>= 7)
                extra++;
        if (extra) {
                static const char zeros[10];
                put(E, zeros, extra);
                if (E->err < 0)
                        return;
                memmove(E->out->p + start + extra, E->out->p + start, len);
        }
        for (size_t i = 0, v = len; i <= extra; i++, v >>= 7)
                b[i] = (uint8_t)((v & 0x7f) | (i < extra ? 0x80 : 0));
        memcpy(E->out->p + start - 1, b, extra + 1);
}

static void pb_keyvalue(struct enc *E, unsigned field, const struct otlp_attr *a)
{
        size_t kv = pb_begin(E, field), av;

        pb_string(E, 1, a->key);
        av = pb_begin(E, 2);
        switch (a->type) {
        case OTLP_STRING:
                pb_string(E, 1, a->s ? a->s : "");
                break;
        case OTLP_BOOL:
                pb_uint(E, 2, a->b);
                break;
        case OTLP_INT:
                pb_uint(E, 3, (uint64_t)a->i);
                break;
        case OTLP_DOUBLE:
                pb_double(E, 4, a->d);
                break;
        }
        pb_end(E, av);
        pb_end(E, kv);
}

/* The resource and scope: what both signals open with. Returns the
 * offset of the scope's message, to end after its records. */
static size_t pb_head(struct enc *E, const struct otlp_attr *resource, size_t nresource,
                      const char *scope_name, const char *scope_version)
{
        size_t res, sm, sc;

        res = pb_begin(E, 1);
        for (size_t i = 0; i < nresource; i++)
                pb_keyvalue(E, 1, &resource[i]);
        pb_end(E, res);
        sm = pb_begin(E, 2);
        sc = pb_begin(E, 1);
        if (scope_name)
                pb_string(E, 1, scope_name);
        if (scope_version)
                pb_string(E, 2, scope_version);
        pb_end(E, sc);
        return sm;
}

static void pb_point(struct enc *E, const struct otlp_request *rq, const struct otlp_point *p)
{
        size_t dp = pb_begin(E, 1);

        /* ascending field numbers: the canonical order */
        if (p->start_ns)
                pb_fixed64(E, 2, p->start_ns);
        pb_fixed64(E, 3, p->time_ns);
        if (!p->is_int)
                pb_double(E, 4, p->d);
        if (rq->has_trace) {
                size_t ex = pb_begin(E, 5);
                pb_fixed64(E, 2, p->time_ns);
                if (!p->is_int)
                        pb_double(E, 3, p->d);
                pb_bytes(E, 4, rq->span_id, sizeof(rq->span_id));
                pb_bytes(E, 5, rq->trace_id, sizeof(rq->trace_id));
                if (p->is_int)
                        pb_fixed64(E, 6, (uint64_t)p->i);
                pb_end(E, ex);
        }
        if (p->is_int)
                pb_fixed64(E, 6, (uint64_t)p->i);
        for (size_t i = 0; i < p->nattrs; i++)
                pb_keyvalue(E, 7, &p->attrs[i]);
        pb_end(E, dp);
}

static void pb_metric(struct enc *E, const struct otlp_request *rq, const struct otlp_metric *m)
{
        size_t mm = pb_begin(E, 2), body;

        pb_string(E, 1, m->name);
        if (m->description && *m->description)
                pb_string(E, 2, m->description);
        if (m->unit && *m->unit)
                pb_string(E, 3, m->unit);
        body = pb_begin(E, m->kind == OTLP_SUM ? 7 : 5);
        for (size_t i = 0; i < m->npoints; i++)
                pb_point(E, rq, &m->points[i]);
        if (m->kind == OTLP_SUM) {
                pb_uint(E, 2, OTLP_TEMPORALITY_CUMULATIVE);
                if (m->monotonic)
                        pb_uint(E, 3, 1);
        }
        pb_end(E, body);
        pb_end(E, mm);
}

int otlp_encode_protobuf(const struct otlp_request *rq, struct dbuf *out)
{
        struct enc E = {.out = out};
        size_t old = out->len, rm, sm;

        rm = pb_begin(&E, 1);
        sm = pb_head(&E, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        for (size_t i = 0; i < rq->nmetrics; i++)
                pb_metric(&E, rq, &rq->metrics[i]);
        pb_end(&E, sm);
        pb_end(&E, rm);
        return enc_end(&E, old);
}

/* Span (trace.proto): ascending field numbers. */
static void pb_span(struct enc *E, const struct otlp_trace_request *rq, const struct otlp_span *sp)
{
        size_t m = pb_begin(E, 2);

        pb_bytes(E, 1, rq->trace_id, sizeof(rq->trace_id));
        pb_bytes(E, 2, sp->span_id, sizeof(sp->span_id));
        if (sp->trace_state && *sp->trace_state)
                pb_string(E, 3, sp->trace_state);
        if (sp->has_parent)
                pb_bytes(E, 4, sp->parent_id, sizeof(sp->parent_id));
        pb_string(E, 5, sp->name);
        if (sp->kind)
                pb_uint(E, 6, (uint64_t)sp->kind);
        pb_fixed64(E, 7, sp->start_ns);
        pb_fixed64(E, 8, sp->end_ns);
        for (size_t i = 0; i < sp->nattrs; i++)
                pb_keyvalue(E, 9, &sp->attrs[i]);
        for (size_t i = 0; i < sp->nevents; i++) {
                const struct otlp_event *ev = &sp->events[i];
                size_t em = pb_begin(E, 11);
                pb_fixed64(E, 1, ev->time_ns);
                pb_string(E, 2, ev->name);
                for (size_t k = 0; k < ev->nattrs; k++)
                        pb_keyvalue(E, 3, &ev->attrs[k]);
                pb_end(E, em);
        }
        if (sp->status || sp->status_message) {
                size_t st = pb_begin(E, 15);
                if (sp->status_message && *sp->status_message)
                        pb_string(E, 2, sp->status_message);
                if (sp->status)
                        pb_uint(E, 3, (uint64_t)sp->status);
                pb_end(E, st);
        }
        pb_end(E, m);
}

int otlp_encode_trace_protobuf(const struct otlp_trace_request *rq, struct dbuf *out)
{
        struct enc E = {.out = out};
        size_t old = out->len, rs, ss;

        rs = pb_begin(&E, 1);
        ss = pb_head(&E, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        for (size_t i = 0; i < rq->nspans; i++)
                pb_span(&E, rq, &rq->spans[i]);
        pb_end(&E, ss);
        pb_end(&E, rs);
        return enc_end(&E, old);
}

/* --- JSON ------------------------------------------------------------- */

/* Each js_ value writer puts its key (the '"name":' text before it) first. */
static void js_string(struct enc *E, const char *key, const char *s)
{
        puts_(E, key);
        if (E->err >= 0)
                E->err = jsonw_string(E->out, s, strlen(s));
}

/* proto3 JSON: 64-bit integers are strings. */
static void js_u64(struct enc *E, const char *key, uint64_t v)
{
        if (E->err >= 0)
                E->err = dbuf_printf(E->out, "%s\"%llu\"", key, (unsigned long long)v);
}

static void js_i64(struct enc *E, const char *key, int64_t v)
{
        if (E->err >= 0)
                E->err = dbuf_printf(E->out, "%s\"%lld\"", key, (long long)v);
}

/* Shortest text that reads back to the same double; proto3 JSON spells
 * the non-finite ones as strings. */
static void js_double(struct enc *E, const char *key, double d)
{
        char b[40];
        int n;

        puts_(E, key);
        if (isnan(d)) {
                puts_(E, "\"NaN\"");
                return;
        }
        if (isinf(d)) {
                puts_(E, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
                return;
        }
        for (int prec = 15; prec <= 17; prec++) {
                n = snprintf(b, sizeof(b), "%.*g", prec, d);
                if (strtod(b, NULL) == d)
                        break;
        }
        /* "-0" and "3" read back as integers in some parsers (jansson):
         * -0.0 would lose its sign. A fraction keeps them doubles. */
        if (!strpbrk(b, ".e") && (size_t)n + 2 < sizeof(b)) {
                memcpy(b + n, ".0", 3);
                n += 2;
        }
        put(E, b, (size_t)n);
}

static void js_hex(struct enc *E, const char *key, const uint8_t *p, size_t n)
{
        char b[3];

        puts_(E, key);
        put(E, "\"", 1);
        for (size_t i = 0; i < n; i++) {
                hex_encode(b, &p[i], 1);
                put(E, b, 2);
        }
        put(E, "\"", 1);
}

static void js_attrs(struct enc *E, const char *key, const struct otlp_attr *a, size_t n)
{
        puts_(E, key);
        put(E, "[", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        put(E, ",", 1);
                js_string(E, "{\"key\":", a[i].key);
                puts_(E, ",\"value\":{");
                switch (a[i].type) {
                case OTLP_STRING:
                        js_string(E, "\"stringValue\":", a[i].s ? a[i].s : "");
                        break;
                case OTLP_BOOL:
                        puts_(E, a[i].b ? "\"boolValue\":true" : "\"boolValue\":false");
                        break;
                case OTLP_INT:
                        js_i64(E, "\"intValue\":", a[i].i);
                        break;
                case OTLP_DOUBLE:
                        js_double(E, "\"doubleValue\":", a[i].d);
                        break;
                }
                puts_(E, "}}");
        }
        put(E, "]", 1);
}

static void js_value(struct enc *E, const struct otlp_point *p)
{
        if (p->is_int)
                js_i64(E, "\"asInt\":", p->i);
        else
                js_double(E, "\"asDouble\":", p->d);
}

static void js_point(struct enc *E, const struct otlp_request *rq, const struct otlp_point *p)
{
        put(E, "{", 1);
        js_attrs(E, "\"attributes\":", p->attrs, p->nattrs);
        if (p->start_ns)
                js_u64(E, ",\"startTimeUnixNano\":", p->start_ns);
        js_u64(E, ",\"timeUnixNano\":", p->time_ns);
        put(E, ",", 1);
        js_value(E, p);
        if (rq->has_trace) {
                js_u64(E, ",\"exemplars\":[{\"timeUnixNano\":", p->time_ns);
                put(E, ",", 1);
                js_value(E, p);
                js_hex(E, ",\"spanId\":", rq->span_id, sizeof(rq->span_id));
                js_hex(E, ",\"traceId\":", rq->trace_id, sizeof(rq->trace_id));
                puts_(E, "}]");
        }
        put(E, "}", 1);
}

/* The request up to the scope's records: what both signals open with. */
static void js_head(struct enc *E, bool spans, const struct otlp_attr *resource, size_t nresource,
                    const char *scope_name, const char *scope_version)
{
        puts_(E, spans ? "{\"resourceSpans\":[{\"resource\":{"
                       : "{\"resourceMetrics\":[{\"resource\":{");
        js_attrs(E, "\"attributes\":", resource, nresource);
        puts_(E, spans ? "},\"scopeSpans\":[{\"scope\":{" : "},\"scopeMetrics\":[{\"scope\":{");
        if (scope_name)
                js_string(E, "\"name\":", scope_name);
        if (scope_version)
                js_string(E, scope_name ? ",\"version\":" : "\"version\":", scope_version);
        puts_(E, "},");
}

static void js_metric(struct enc *E, const struct otlp_request *rq, const struct otlp_metric *m)
{
        js_string(E, "{\"name\":", m->name);
        if (m->description && *m->description)
                js_string(E, ",\"description\":", m->description);
        if (m->unit && *m->unit)
                js_string(E, ",\"unit\":", m->unit);
        puts_(E,
              m->kind == OTLP_SUM ? ",\"sum\":{\"dataPoints\":[" : ",\"gauge\":{\"dataPoints\":[");
        for (size_t i = 0; i < m->npoints; i++) {
                if (i)
                        put(E, ",", 1);
                js_point(E, rq, &m->points[i]);
        }
        put(E, "]", 1);
        if (m->kind == OTLP_SUM) {
                puts_(E, ",\"aggregationTemporality\":2");
                if (m->monotonic)
                        puts_(E, ",\"isMonotonic\":true");
        }
        puts_(E, "}}");
}

/* Close the request. */
static int js_end(struct enc *E, size_t old)
{
        puts_(E, "]}]}]}");
        return enc_end(E, old);
}

int otlp_encode_json(const struct otlp_request *rq, struct dbuf *out)
{
        struct enc E = {.out = out};
        size_t old = out->len;

        js_head(&E, false, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        puts_(&E, "\"metrics\":[");
        for (size_t i = 0; i < rq->nmetrics; i++) {
                if (i)
                        put(&E, ",", 1);
                js_metric(&E, rq, &rq->metrics[i]);
        }
        return js_end(&E, old);
}

static void js_span(struct enc *E, const struct otlp_trace_request *rq, const struct otlp_span *sp)
{
        js_hex(E, "{\"traceId\":", rq->trace_id, sizeof(rq->trace_id));
        js_hex(E, ",\"spanId\":", sp->span_id, sizeof(sp->span_id));
        if (sp->trace_state && *sp->trace_state)
                js_string(E, ",\"traceState\":", sp->trace_state);
        if (sp->has_parent)
                js_hex(E, ",\"parentSpanId\":", sp->parent_id, sizeof(sp->parent_id));
        js_string(E, ",\"name\":", sp->name);
        if (sp->kind && E->err >= 0)
                E->err = dbuf_printf(E->out, ",\"kind\":%d", sp->kind);
        js_u64(E, ",\"startTimeUnixNano\":", sp->start_ns);
        js_u64(E, ",\"endTimeUnixNano\":", sp->end_ns);
        js_attrs(E, ",\"attributes\":", sp->attrs, sp->nattrs);
        puts_(E, ",\"events\":[");
        for (size_t i = 0; i < sp->nevents; i++) {
                js_u64(E, i ? ",{\"timeUnixNano\":" : "{\"timeUnixNano\":", sp->events[i].time_ns);
                js_string(E, ",\"name\":", sp->events[i].name);
                js_attrs(E, ",\"attributes\":", sp->events[i].attrs, sp->events[i].nattrs);
                put(E, "}", 1);
        }
        puts_(E, "],\"status\":{");
        if (sp->status_message && *sp->status_message) {
                js_string(E, "\"message\":", sp->status_message);
                put(E, ",", 1);
        }
        if (E->err >= 0)
                E->err = dbuf_printf(E->out, "\"code\":%d}}", sp->status);
}

int otlp_encode_trace_json(const struct otlp_trace_request *rq, struct dbuf *out)
{
        struct enc E = {.out = out};
        size_t old = out->len;

        js_head(&E, true, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        puts_(&E, "\"spans\":[");
        for (size_t i = 0; i < rq->nspans; i++) {
                if (i)
                        put(&E, ",", 1);
                js_span(&E, rq, &rq->spans[i]);
        }
        return js_end(&E, old);
}

/* --- gzip --------------------------------------------------------------- */

int otlp_gzip(const void *in, size_t len, struct dbuf *out)
{
        z_stream z = {0};
        size_t room;
        int r, e;

        if (len > UINT_MAX / 2)
                return -E2BIG; /* far past any export: the sampler caps them */
        /* windowBits 16 + 15: a gzip wrapper; level 1, the cheapest. */
        if (deflateInit2(&z, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        /* With deflateBound() bytes of room one Z_FINISH call completes. */
        room = deflateBound(&z, (uLong)len);
        e = dbuf_reserve(out, room);
        if (e >= 0) {
                z.next_in = in;
                z.avail_in = (uInt)len;
                z.next_out = (Bytef *)out->p + out->len;
                z.avail_out = (uInt)room;
                r = deflate(&z, Z_FINISH);
                if (r == Z_STREAM_END) {
                        out->len += room - z.avail_out;
                        out->p[out->len] = '\0';
                } else {
                        e = -ENOMEM;
                }
        }
        deflateEnd(&z);
        return e;
}
