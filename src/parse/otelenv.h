/* SPDX-License-Identifier: MIT */
#pragma once

#include "util/macro.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The OpenTelemetry SDK environment conventions for an OTLP/HTTP metrics
 * exporter, and the W3C TRACEPARENT a CI system hands to a step. Parsers
 * take strings with a length; otelenv_load() reads the variables through a
 * lookup function so tests need no real environment. Header values may be
 * credentials: nothing here ever puts one in an error or a message. */

#define OTELENV_MAX_PAIRS 32  /* entries of a k=v,k2=v2 list */
#define OTELENV_MAX_LIST 8192 /* bytes of a whole k=v list */
#define OTELENV_MAX_URL 2048  /* bytes of an endpoint */

/* One decoded key=value entry; key and value are NUL-terminated copies. */
struct otel_pair {
        char *key, *value;
};

struct otel_pairs {
        size_t n;
        struct otel_pair p[OTELENV_MAX_PAIRS];
};

void otel_pairs_release(struct otel_pairs *ps);

/* "k=v,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): keys
 * and values are trimmed of spaces and tabs, then percent-decoded. An empty
 * list is valid. With http_header, keys must be HTTP tokens and values must
 * hold no control bytes (no header injection). Returns 0, -EINVAL for a
 * malformed list (*ret_bad_entry gets the 1-based entry, never its text),
 * -E2BIG past the caps, -ENOMEM; *ret untouched on failure. */
int otelenv_parse_pairs(const char *s, size_t len, bool http_header, struct otel_pairs *ret,
                        size_t *ret_bad_entry);

/* Percent-decode s[0..len) into a malloc'd NUL-terminated string. "%zz",
 * a truncated escape and a decoded NUL are -EINVAL. */
int otelenv_percent_decode(const char *s, size_t len, char **ret);

/* W3C trace context: "00-<32 hex>-<16 hex>-<2 hex>", lowercase. A future
 * version (not ff) may append "-..." after the flags. All-zero ids are
 * invalid. */
struct traceparent {
        uint8_t version;
        uint8_t trace_id[16];
        uint8_t span_id[8];
        uint8_t flags;
};

int otelenv_parse_traceparent(const char *s, size_t len, struct traceparent *ret);

/* W3C trace context's tracestate: at most 32 comma-separated list-members
 * key=value (empty members and spaces or tabs around them allowed), each
 * key unique, a simple-key (lcalpha then up to 255 of lcalpha, digits,
 * _ - * /) or tenant@system (tenant: lcalpha or digit then up to 240 of
 * those; system: lcalpha then up to 13), each value 1 to 256 of 0x20-0x7E
 * but ',' and '=', not ending in a space. Anything else (a newline, a
 * control, a bad key, a 33rd member) is -EINVAL: W3C says to drop the
 * whole header then. Returns 0 or -EINVAL. */
int otelenv_check_tracestate(const char *s, size_t len);

/* "true"/"false" in any case, with surrounding spaces. -EINVAL otherwise. */
int otelenv_parse_bool(const char *s, size_t len, bool *ret);
/* A whole number of milliseconds, 0..max_ms. */
int otelenv_parse_ms(const char *s, size_t len, uint64_t max_ms, uint64_t *ret);

/* The metrics URL. generic: OTEL_EXPORTER_OTLP_ENDPOINT, a base to which
 * "v1/metrics" is appended with exactly one slash; otherwise the value is
 * used as is. Only http:// and https:// URLs with a host are accepted.
 * Returns 0 with a malloc'd URL, -EINVAL, -E2BIG, -ENOMEM. */
int otelenv_metrics_url(const char *s, size_t len, bool generic, char **ret);

/* The URL without user info, query or fragment: safe to print. Writes at
 * most cap bytes (NUL included). */
void otelenv_url_for_display(const char *url, char *buf, size_t cap);

enum otel_protocol {
        OTEL_PROTOCOL_PROTOBUF, /* http/protobuf */
        OTEL_PROTOCOL_JSON,     /* http/json */
};

/* Everything the exporter needs, from the environment and options. */
struct otel_config {
        bool enabled;
        char *url;
        enum otel_protocol protocol;
        bool gzip;
        uint64_t timeout_ms;  /* per request; also bounds the final export */
        uint64_t interval_ms; /* between periodic exports */
        struct otel_pairs headers;
        struct otel_pairs resource; /* OTEL_RESOURCE_ATTRIBUTES */
        char *service_name;         /* OTEL_SERVICE_NAME, or NULL */
        bool has_trace;
        struct traceparent trace; /* the caller's TRACEPARENT */
        char *tracestate;         /* the caller's TRACESTATE (with has_trace), or NULL */
        char *traces_url;         /* where spans go; NULL: no trace export */
        enum otel_protocol traces_protocol;
        /* The run span: trace id (the caller's, else random), its own span
         * id and flags (the caller's, else sampled). Set by
         * otelenv_set_run_span() before the build starts. */
        bool span_set;
        struct traceparent span;
        uint64_t max_spans; /* spans under the run span at most */
        /* The CI's pipeline name and run id (GitHub Actions'
         * GITHUB_WORKFLOW/GITHUB_RUN_ID, GitLab's CI_PIPELINE_NAME/
         * CI_PIPELINE_ID), and the work tree's git revision (set by the
         * caller). NULL: unknown. */
        char *ci_pipeline_name, *ci_pipeline_run_id, *vcs_rev;
};

#define OTEL_TIMEOUT_MS_DEFAULT 10000
#define OTEL_INTERVAL_MS_DEFAULT 60000
#define OTEL_MAX_SPANS_DEFAULT 2000

typedef const char *(*otelenv_lookup_fn)(void *userdata, const char *name);

/* Options that override the environment (NULL / 0: not given). */
struct otel_options {
        const char *endpoint; /* --otlp-endpoint: a metrics URL used as is */
        uint64_t interval_ms; /* --otlp-interval */
        bool max_spans_set;   /* --trace-max-spans */
        uint64_t max_spans;
};

/* Fill *ret from the variables (through lookup) and opt. A malformed
 * variable is noted once and ignored (its default is used; a malformed
 * endpoint or protocol turns export off): a CI variable must never fail
 * the build. A malformed --otlp-endpoint is -EINVAL (the caller reports a
 * usage error). Returns 0, -EINVAL or -ENOMEM; release *ret with
 * otel_config_release() either way. */
int otelenv_load(otelenv_lookup_fn lookup, void *lookup_data, const struct otel_options *opt,
                 note_fn note, void *note_data, struct otel_config *ret);
void otel_config_release(struct otel_config *c);

/* Choose the run span's ids: the trace id is the caller's when there is a
 * TRACEPARENT, else rnd[0..16); the span id a hash of the trace id and
 * run_id (unique per run, and the same when `export` re-sends the run in
 * the same trace). All-zero ids (invalid) get their last byte set. */
void otelenv_set_run_span(struct otel_config *c, const uint8_t rnd[16], const char *run_id);

/* tp as a W3C traceparent, version 00 (55 bytes and a NUL) into buf.
 * 0, or -EINVAL when cap < 56. */
int otelenv_format_traceparent(const struct traceparent *tp, char *buf, size_t cap);
