/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dbuf.h"

/* An OTLP metrics export (one resource, one scope) as plain values, all
 * borrowed, and its encodings: protobuf by hand (only varint, fixed64 and
 * length-delimited fields are needed) and the OTLP JSON mapping. */

enum otlp_value_type {
        OTLP_STRING,
        OTLP_BOOL,
        OTLP_INT,
        OTLP_DOUBLE,
};

struct otlp_attr {
        const char *key;
        enum otlp_value_type type;
        const char *s; /* OTLP_STRING: NUL-terminated UTF-8 */
        bool b;
        int64_t i;
        double d;
};

struct otlp_point {
        uint64_t start_ns; /* 0: not sent (gauges) */
        uint64_t time_ns;
        bool is_int;
        int64_t i;
        double d;
        const struct otlp_attr *attrs;
        size_t nattrs;
};

enum otlp_kind {
        OTLP_GAUGE,
        OTLP_SUM, /* cumulative; monotonic as the metric says */
};

struct otlp_metric {
        const char *name, *description, *unit;
        enum otlp_kind kind;
        bool monotonic;
        const struct otlp_point *points;
        size_t npoints;
};

struct otlp_request {
        const struct otlp_attr *resource;
        size_t nresource;
        const char *scope_name, *scope_version;
        const struct otlp_metric *metrics;
        size_t nmetrics;
        /* With a trace context every data point carries one exemplar: its
         * own time and value, with these ids. */
        bool has_trace;
        uint8_t trace_id[16];
        uint8_t span_id[8];
};

/* OTLP enum values. */
#define OTLP_TEMPORALITY_CUMULATIVE 2

/* Append the encoding of rq to out: protobuf, or proto3 JSON. Return 0 or
 * -ENOMEM (out keeps its length then). */
int otlp_encode(const struct otlp_request *rq, bool json, struct dbuf *out);

/* An OTLP traces export (ExportTraceServiceRequest, one resource, one
 * scope, one trace), borrowed like the metrics one. */
struct otlp_event {
        const char *name;
        uint64_t time_ns;
        const struct otlp_attr *attrs;
        size_t nattrs;
};

enum { OTLP_SPAN_KIND_INTERNAL = 1 };
enum { OTLP_STATUS_UNSET = 0, OTLP_STATUS_OK = 1, OTLP_STATUS_ERROR = 2 };

struct otlp_span {
        uint8_t span_id[8];
        bool has_parent;
        uint8_t parent_id[8];
        const char *trace_state; /* NULL: none */
        const char *name;
        int kind;
        uint64_t start_ns, end_ns;
        const struct otlp_attr *attrs;
        size_t nattrs;
        const struct otlp_event *events;
        size_t nevents;
        int status;                 /* OTLP_STATUS_* */
        const char *status_message; /* NULL: none */
};

struct otlp_trace_request {
        const struct otlp_attr *resource;
        size_t nresource;
        const char *scope_name, *scope_version;
        uint8_t trace_id[16];
        const struct otlp_span *spans;
        size_t nspans;
};

/* The same for a traces export. */
int otlp_encode_trace(const struct otlp_trace_request *rq, bool json, struct dbuf *out);

/* Append a gzip member (RFC 1952) holding in[0..len) to out: zlib's
 * deflate at level 1. 0, -E2BIG (over 2 GiB) or -ENOMEM (out keeps its
 * length then). */
int otlp_gzip(const void *in, size_t len, struct dbuf *out);
