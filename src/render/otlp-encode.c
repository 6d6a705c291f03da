/* SPDX-License-Identifier: MIT */
#include "render/otlp-encode.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <string.h>
#define ZLIB_CONST
#include <zlib.h>

#include "model/run.h"
#include "render/jsonw.h"
#include "render/prom.h"
#include "util/macro.h"
#include "util/util.h"

/* Both encoders write through a sticky-error writer, so that the message
 * trees below read as the .proto files do. */
struct enc {
        struct dwriter w;
        struct dbuf tmp; /* a string made valid UTF-8 */
        bool json;       /* proto3 JSON, else protobuf */
        bool first;      /* JSON: no comma before the next member */
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

static void pb_fixed64(struct enc *E, unsigned field, uint64_t v)
{
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        pb_tag(E, field, WT_I64);
        dw_append(&E->w, b, 8);
}

static void pb_bytes(struct enc *E, unsigned field, const void *p, size_t n)
{
        pb_tag(E, field, WT_LEN);
        pb_varint(E, n);
        dw_append(&E->w, p, n);
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

/* --- JSON ------------------------------------------------------------- */

/* The comma before a member or an element but the first, and the member's
 * key (NULL: an array's element). */
static void js_key(struct enc *E, const char *key)
{
        if (!E->first)
                dw_append(&E->w, ",", 1);
        E->first = false;
        if (key)
                dw_printf(&E->w, "\"%s\":", key);
}

static void js_open(struct enc *E, const char *key, const char *bracket)
{
        js_key(E, key);
        dw_puts(&E->w, bracket);
        E->first = true;
}

static void js_close(struct enc *E, const char *bracket)
{
        dw_puts(&E->w, bracket);
        E->first = false;
}

/* --- the messages, once for both encodings ---------------------------- */

/* Each field by its number (protobuf) and its key (proto3 JSON), in
 * ascending field numbers, protobuf's canonical order. */

/* A message: field n, or in JSON member key (NULL: an array's element).
 * Returns what f_end takes. */
static size_t f_begin(struct enc *E, unsigned n, const char *key)
{
        if (!E->json)
                return pb_begin(E, n);
        js_open(E, key, "{");
        return 0;
}

static void f_end(struct enc *E, size_t start)
{
        if (E->json)
                js_close(E, "}");
        else
                pb_end(E, start);
}

/* A repeated field's elements: a JSON array (protobuf repeats the field). */
static void f_list(struct enc *E, const char *key)
{
        if (E->json)
                js_open(E, key, "[");
}

static void f_list_end(struct enc *E)
{
        if (E->json)
                js_close(E, "]");
}

static void f_string(struct enc *E, unsigned n, const char *key, const char *s)
{
        size_t len;

        if (!E->json) {
                s = utf8(E, s, &len);
                pb_bytes(E, n, s, len);
                return;
        }
        js_key(E, key);
        jsonw_put(&E->w, s, strlen(s));
}

/* A varint: an enum or bool, a JSON number or true/false (bool set). */
static void f_enum(struct enc *E, unsigned n, const char *key, int v, bool is_bool)
{
        if (!E->json) {
                pb_tag(E, n, WT_VARINT);
                pb_varint(E, (uint64_t)v);
                return;
        }
        js_key(E, key);
        if (is_bool)
                dw_puts(&E->w, v ? "true" : "false");
        else
                dw_printf(&E->w, "%d", v);
}

/* A 64-bit integer (proto3 JSON: a string): a varint, or with fixed a
 * fixed64 (the times, asInt). */
static void f_int64(struct enc *E, unsigned n, const char *key, uint64_t v, bool is_signed,
                    bool fixed)
{
        if (!E->json && fixed) {
                pb_fixed64(E, n, v);
                return;
        }
        if (!E->json) {
                pb_tag(E, n, WT_VARINT);
                pb_varint(E, v);
                return;
        }
        js_key(E, key);
        if (is_signed)
                dw_printf(&E->w, "\"%lld\"", (long long)v);
        else
                dw_printf(&E->w, "\"%llu\"", (unsigned long long)v);
}

static void f_double(struct enc *E, unsigned n, const char *key, double d)
{
        uint64_t bits;
        char b[32];

        if (!E->json) {
                memcpy(&bits, &d, sizeof(bits));
                pb_fixed64(E, n, bits);
                return;
        }
        js_key(E, key);
        /* proto3 JSON spells the non-finite ones as strings */
        if (!isfinite(d)) {
                dw_puts(&E->w, isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
                return;
        }
        /* The shortest text that reads back (prom.h's). "-0" and "3" read
         * back as integers in some parsers (jansson): -0.0 would lose its
         * sign. A fraction keeps them doubles. */
        prom_format_value(d, b);
        dw_printf(&E->w, "%s%s", b, strpbrk(b, ".e") ? "" : ".0");
}

/* A trace or span id (16 or 8 bytes): bytes, in JSON hex. */
static void f_id(struct enc *E, unsigned n, const char *key, const uint8_t *p, size_t len)
{
        char b[33];

        if (!E->json) {
                pb_bytes(E, n, p, len);
                return;
        }
        hex_encode(b, p, MIN(len, (size_t)16));
        js_key(E, key);
        dw_printf(&E->w, "\"%s\"", b);
}

/* KeyValue n times (common.proto): "attributes" in every message here. */
static void f_attrs(struct enc *E, unsigned n, const struct otlp_attr *a, size_t count)
{
        f_list(E, "attributes");
        for (size_t i = 0; i < count; i++) {
                size_t kv = f_begin(E, n, NULL), av;

                f_string(E, 1, "key", a[i].key);
                av = f_begin(E, 2, "value");
                switch (a[i].type) {
                case OTLP_STRING:
                        f_string(E, 1, "stringValue", a[i].s ? a[i].s : "");
                        break;
                case OTLP_BOOL:
                        f_enum(E, 2, "boolValue", a[i].b, true);
                        break;
                case OTLP_INT:
                        f_int64(E, 3, "intValue", (uint64_t)a[i].i, true, false);
                        break;
                case OTLP_DOUBLE:
                        f_double(E, 4, "doubleValue", a[i].d);
                        break;
                }
                f_end(E, av);
                f_end(E, kv);
        }
        f_list_end(E);
}

/* The request up to its scope's records (metrics or spans): the messages
 * f_tail ends in open. */
static void f_head(struct enc *E, bool spans, const struct otlp_attr *resource, size_t nresource,
                   const char *scope_name, const char *scope_version, size_t open[2])
{
        size_t res, sc;

        if (E->json)
                js_open(E, NULL, "{");
        f_list(E, spans ? "resourceSpans" : "resourceMetrics");
        open[0] = f_begin(E, 1, NULL);
        res = f_begin(E, 1, "resource");
        f_attrs(E, 1, resource, nresource);
        f_end(E, res);
        f_list(E, spans ? "scopeSpans" : "scopeMetrics");
        open[1] = f_begin(E, 2, NULL);
        sc = f_begin(E, 1, "scope");
        if (scope_name)
                f_string(E, 1, "name", scope_name);
        if (scope_version)
                f_string(E, 2, "version", scope_version);
        f_end(E, sc);
        f_list(E, spans ? "spans" : "metrics");
}

static int f_tail(struct enc *E, const size_t open[2], size_t old)
{
        for (int i = 1; i >= 0; i--) {
                f_list_end(E);
                f_end(E, open[i]);
        }
        f_list_end(E);
        if (E->json)
                js_close(E, "}");
        return enc_end(E, old);
}

/* NumberDataPoint (metrics.proto), with an exemplar tying it to the run's
 * span when the request has one. */
static void f_point(struct enc *E, const struct otlp_request *rq, const struct otlp_point *p)
{
        size_t dp = f_begin(E, 1, NULL), ex;

        if (p->start_ns)
                f_int64(E, 2, "startTimeUnixNano", p->start_ns, false, true);
        f_int64(E, 3, "timeUnixNano", p->time_ns, false, true);
        if (!p->is_int)
                f_double(E, 4, "asDouble", p->d);
        if (rq->has_trace) {
                f_list(E, "exemplars");
                ex = f_begin(E, 5, NULL);
                f_int64(E, 2, "timeUnixNano", p->time_ns, false, true);
                if (!p->is_int)
                        f_double(E, 3, "asDouble", p->d);
                f_id(E, 4, "spanId", rq->span_id, sizeof(rq->span_id));
                f_id(E, 5, "traceId", rq->trace_id, sizeof(rq->trace_id));
                if (p->is_int)
                        f_int64(E, 6, "asInt", (uint64_t)p->i, true, true);
                f_end(E, ex);
                f_list_end(E);
        }
        if (p->is_int)
                f_int64(E, 6, "asInt", (uint64_t)p->i, true, true);
        f_attrs(E, 7, p->attrs, p->nattrs);
        f_end(E, dp);
}

static void f_metric(struct enc *E, const struct otlp_request *rq, const struct otlp_metric *m)
{
        bool sum = m->kind == OTLP_SUM;
        size_t mm = f_begin(E, 2, NULL), body;

        f_string(E, 1, "name", m->name);
        if (m->description && *m->description)
                f_string(E, 2, "description", m->description);
        if (m->unit && *m->unit)
                f_string(E, 3, "unit", m->unit);
        body = f_begin(E, sum ? 7 : 5, sum ? "sum" : "gauge");
        f_list(E, "dataPoints");
        for (size_t i = 0; i < m->npoints; i++)
                f_point(E, rq, &m->points[i]);
        f_list_end(E);
        if (sum) {
                f_enum(E, 2, "aggregationTemporality", OTLP_TEMPORALITY_CUMULATIVE, false);
                if (m->monotonic)
                        f_enum(E, 3, "isMonotonic", 1, true);
        }
        f_end(E, body);
        f_end(E, mm);
}

int otlp_encode(const struct otlp_request *rq, bool json, struct dbuf *out)
{
        struct enc E = {.w = DWRITER_INIT(out), .json = json, .first = true};
        size_t old = out->len, open[2];

        f_head(&E, false, rq->resource, rq->nresource, rq->scope_name, rq->scope_version, open);
        for (size_t i = 0; i < rq->nmetrics; i++)
                f_metric(&E, rq, &rq->metrics[i]);
        return f_tail(&E, open, old);
}

/* Span (trace.proto). */
static void f_span(struct enc *E, const struct otlp_trace_request *rq, const struct otlp_span *sp)
{
        size_t m = f_begin(E, 2, NULL), st;

        f_id(E, 1, "traceId", rq->trace_id, sizeof(rq->trace_id));
        f_id(E, 2, "spanId", sp->span_id, sizeof(sp->span_id));
        if (sp->trace_state && *sp->trace_state)
                f_string(E, 3, "traceState", sp->trace_state);
        if (sp->has_parent)
                f_id(E, 4, "parentSpanId", sp->parent_id, sizeof(sp->parent_id));
        f_string(E, 5, "name", sp->name);
        if (sp->kind)
                f_enum(E, 6, "kind", sp->kind, false);
        f_int64(E, 7, "startTimeUnixNano", sp->start_ns, false, true);
        f_int64(E, 8, "endTimeUnixNano", sp->end_ns, false, true);
        f_attrs(E, 9, sp->attrs, sp->nattrs);
        f_list(E, "events");
        for (size_t i = 0; i < sp->nevents; i++) {
                const struct otlp_event *ev = &sp->events[i];
                size_t em = f_begin(E, 11, NULL);

                f_int64(E, 1, "timeUnixNano", ev->time_ns, false, true);
                f_string(E, 2, "name", ev->name);
                f_attrs(E, 3, ev->attrs, ev->nattrs);
                f_end(E, em);
        }
        f_list_end(E);
        if (sp->status || sp->status_message) {
                st = f_begin(E, 15, "status");
                if (sp->status_message && *sp->status_message)
                        f_string(E, 2, "message", sp->status_message);
                if (sp->status)
                        f_enum(E, 3, "code", sp->status, false);
                f_end(E, st);
        }
        f_end(E, m);
}

int otlp_encode_trace(const struct otlp_trace_request *rq, bool json, struct dbuf *out)
{
        struct enc E = {.w = DWRITER_INIT(out), .json = json, .first = true};
        size_t old = out->len, open[2];

        f_head(&E, true, rq->resource, rq->nresource, rq->scope_name, rq->scope_version, open);
        for (size_t i = 0; i < rq->nspans; i++)
                f_span(&E, rq, &rq->spans[i]);
        return f_tail(&E, open, old);
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
