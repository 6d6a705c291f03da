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

/* Both encoders write through a sticky-error writer, so that the message
 * trees below read as the .proto files do. */
struct enc {
        struct dwriter w;
        struct dbuf tmp; /* a string made valid UTF-8 */
};

/* The encoding's end: its scratch released; on failure out gets its old
 * length back. Returns 0 or the first error. */
static int enc_end(struct enc *E, size_t old)
{
        dbuf_release(&E->tmp);
        if (E->w.err < 0) {
                E->w.b->len = old;
                if (E->w.b->p)
                        E->w.b->p[old] = '\0';
                return E->w.err;
        }
        return 0;
}

/* Strings from the environment and the build may hold any bytes; both
 * encodings need UTF-8 (a collector rejects a protobuf string that is
 * not). */
static const char *utf8(struct enc *E, const char *s, size_t *ret_len)
{
        dbuf_reset(&E->tmp);
        if (dw_ok(&E->w))
                dw_check(&E->w, run_append_utf8_lossy(&E->tmp, s, strlen(s), false));
        *ret_len = dw_ok(&E->w) ? E->tmp.len : 0;
        return dw_ok(&E->w) && E->tmp.p ? E->tmp.p : "";
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
        dw_append(&E->w, b, n);
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
        dw_append(&E->w, b, 8);
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
        dw_append(&E->w, p, n);
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
        dw_append(&E->w, "", 1);
        return E->w.b->len;
}

static void pb_end(struct enc *E, size_t start)
{
        size_t len, extra = 0;
        uint8_t b[10];

        if (!dw_ok(&E->w))
                return;
        len = E->w.b->len - start;
        for (size_t v = len >> 7; v; v >>= 7)
                extra++;
        if (extra) {
                static const char zeros[10];
                dw_append(&E->w, zeros, extra);
                if (!dw_ok(&E->w))
                        return;
                memmove(E->w.b->p + start + extra, E->w.b->p + start, len);
        }
        for (size_t i = 0, v = len; i <= extra; i++, v >>= 7)
                b[i] = (uint8_t)((v & 0x7f) | (i < extra ? 0x80 : 0));
        memcpy(E->w.b->p + start - 1, b, extra + 1);
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
        struct enc E = {.w = DWRITER_INIT(out)};
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
        struct enc E = {.w = DWRITER_INIT(out)};
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
        dw_puts(&E->w, key);
        jsonw_put(&E->w, s, strlen(s));
}

/* proto3 JSON: 64-bit integers are strings. */
static void js_u64(struct enc *E, const char *key, uint64_t v)
{
        dw_printf(&E->w, "%s\"%llu\"", key, (unsigned long long)v);
}

static void js_i64(struct enc *E, const char *key, int64_t v)
{
        dw_printf(&E->w, "%s\"%lld\"", key, (long long)v);
}

/* Shortest text that reads back to the same double; proto3 JSON spells
 * the non-finite ones as strings. */
static void js_double(struct enc *E, const char *key, double d)
{
        char b[40];
        int n;

        dw_puts(&E->w, key);
        if (isnan(d)) {
                dw_puts(&E->w, "\"NaN\"");
                return;
        }
        if (isinf(d)) {
                dw_puts(&E->w, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
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
        dw_append(&E->w, b, (size_t)n);
}

/* A trace or span id (16 or 8 bytes). */
static void js_hex(struct enc *E, const char *key, const uint8_t *p, size_t n)
{
        char b[33];

        hex_encode(b, p, MIN(n, (size_t)16));
        dw_printf(&E->w, "%s\"%s\"", key, b);
}

static void js_attrs(struct enc *E, const char *key, const struct otlp_attr *a, size_t n)
{
        dw_puts(&E->w, key);
        dw_append(&E->w, "[", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        dw_append(&E->w, ",", 1);
                js_string(E, "{\"key\":", a[i].key);
                dw_puts(&E->w, ",\"value\":{");
                switch (a[i].type) {
                case OTLP_STRING:
                        js_string(E, "\"stringValue\":", a[i].s ? a[i].s : "");
                        break;
                case OTLP_BOOL:
                        dw_puts(&E->w, a[i].b ? "\"boolValue\":true" : "\"boolValue\":false");
                        break;
                case OTLP_INT:
                        js_i64(E, "\"intValue\":", a[i].i);
                        break;
                case OTLP_DOUBLE:
                        js_double(E, "\"doubleValue\":", a[i].d);
                        break;
                }
                dw_puts(&E->w, "}}");
        }
        dw_append(&E->w, "]", 1);
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
        dw_append(&E->w, "{", 1);
        js_attrs(E, "\"attributes\":", p->attrs, p->nattrs);
        if (p->start_ns)
                js_u64(E, ",\"startTimeUnixNano\":", p->start_ns);
        js_u64(E, ",\"timeUnixNano\":", p->time_ns);
        dw_append(&E->w, ",", 1);
        js_value(E, p);
        if (rq->has_trace) {
                js_u64(E, ",\"exemplars\":[{\"timeUnixNano\":", p->time_ns);
                dw_append(&E->w, ",", 1);
                js_value(E, p);
                js_hex(E, ",\"spanId\":", rq->span_id, sizeof(rq->span_id));
                js_hex(E, ",\"traceId\":", rq->trace_id, sizeof(rq->trace_id));
                dw_puts(&E->w, "}]");
        }
        dw_append(&E->w, "}", 1);
}

/* The request up to the scope's records: what both signals open with. */
static void js_head(struct enc *E, bool spans, const struct otlp_attr *resource, size_t nresource,
                    const char *scope_name, const char *scope_version)
{
        dw_puts(&E->w, spans ? "{\"resourceSpans\":[{\"resource\":{"
                             : "{\"resourceMetrics\":[{\"resource\":{");
        js_attrs(E, "\"attributes\":", resource, nresource);
        dw_puts(&E->w,
                spans ? "},\"scopeSpans\":[{\"scope\":{" : "},\"scopeMetrics\":[{\"scope\":{");
        if (scope_name)
                js_string(E, "\"name\":", scope_name);
        if (scope_version)
                js_string(E, scope_name ? ",\"version\":" : "\"version\":", scope_version);
        dw_puts(&E->w, "},");
}

static void js_metric(struct enc *E, const struct otlp_request *rq, const struct otlp_metric *m)
{
        js_string(E, "{\"name\":", m->name);
        if (m->description && *m->description)
                js_string(E, ",\"description\":", m->description);
        if (m->unit && *m->unit)
                js_string(E, ",\"unit\":", m->unit);
        dw_puts(&E->w, m->kind == OTLP_SUM ? ",\"sum\":{\"dataPoints\":["
                                           : ",\"gauge\":{\"dataPoints\":[");
        for (size_t i = 0; i < m->npoints; i++) {
                if (i)
                        dw_append(&E->w, ",", 1);
                js_point(E, rq, &m->points[i]);
        }
        dw_append(&E->w, "]", 1);
        if (m->kind == OTLP_SUM) {
                dw_puts(&E->w, ",\"aggregationTemporality\":2");
                if (m->monotonic)
                        dw_puts(&E->w, ",\"isMonotonic\":true");
        }
        dw_puts(&E->w, "}}");
}

/* Close the request. */
static int js_end(struct enc *E, size_t old)
{
        dw_puts(&E->w, "]}]}]}");
        return enc_end(E, old);
}

int otlp_encode_json(const struct otlp_request *rq, struct dbuf *out)
{
        struct enc E = {.w = DWRITER_INIT(out)};
        size_t old = out->len;

        js_head(&E, false, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        dw_puts(&E.w, "\"metrics\":[");
        for (size_t i = 0; i < rq->nmetrics; i++) {
                if (i)
                        dw_append(&E.w, ",", 1);
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
        if (sp->kind)
                dw_printf(&E->w, ",\"kind\":%d", sp->kind);
        js_u64(E, ",\"startTimeUnixNano\":", sp->start_ns);
        js_u64(E, ",\"endTimeUnixNano\":", sp->end_ns);
        js_attrs(E, ",\"attributes\":", sp->attrs, sp->nattrs);
        dw_puts(&E->w, ",\"events\":[");
        for (size_t i = 0; i < sp->nevents; i++) {
                js_u64(E, i ? ",{\"timeUnixNano\":" : "{\"timeUnixNano\":", sp->events[i].time_ns);
                js_string(E, ",\"name\":", sp->events[i].name);
                js_attrs(E, ",\"attributes\":", sp->events[i].attrs, sp->events[i].nattrs);
                dw_append(&E->w, "}", 1);
        }
        dw_puts(&E->w, "],\"status\":{");
        if (sp->status_message && *sp->status_message) {
                js_string(E, "\"message\":", sp->status_message);
                dw_append(&E->w, ",", 1);
        }
        dw_printf(&E->w, "\"code\":%d}}", sp->status);
}

int otlp_encode_trace_json(const struct otlp_trace_request *rq, struct dbuf *out)
{
        struct enc E = {.w = DWRITER_INIT(out)};
        size_t old = out->len;

        js_head(&E, true, rq->resource, rq->nresource, rq->scope_name, rq->scope_version);
        dw_puts(&E.w, "\"spans\":[");
        for (size_t i = 0; i < rq->nspans; i++) {
                if (i)
                        dw_append(&E.w, ",", 1);
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
