/* SPDX-License-Identifier: MIT */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/otelenv.h"
#include "util/dbuf.h"

/* OTLP/HTTP POSTs through the libcurl multi interface, driven by the
 * caller's poll loop: it never blocks except in otlp_sender_flush(). Only
 * 429, 502, 503 and 504 are retried, after Retry-After or a doubling
 * backoff, a bounded number of times. At most OTLP_SEND_QUEUE exports are
 * kept; a new one beyond that drops the oldest not yet on the wire. */

#define OTLP_SEND_QUEUE 4
#define OTLP_SEND_ATTEMPTS 5       /* a body is sent at most this many times */
#define OTLP_SEND_BACKOFF_MAX 30.0 /* seconds between two attempts, at most */

struct otlp_sender;

/* cfg must outlive the sender (url, headers). Returns 0, -ENOMEM, -ELIBACC
 * when libcurl cannot be loaded (libcurl_error() says why) or -EIO when it
 * cannot start. */
int otlp_sender_new(const struct otel_config *cfg, struct otlp_sender **ret);
void otlp_sender_free(struct otlp_sender *s); /* aborts what is in flight */

/* Queue a body (protobuf or JSON as configured; compressed here when
 * configured). body is taken (left empty). 0 or -ENOMEM. */
int otlp_sender_submit(struct otlp_sender *s, struct dbuf *body, double now);

/* The sockets to poll (at most cap) and, lowered in *deadline, when to
 * call otlp_sender_run() even without events (monotonic seconds). */
size_t otlp_sender_pollfds(struct otlp_sender *s, struct pollfd *p, size_t cap, double *deadline);
/* Drive the transfers: p[0..n) as ppoll() returned them (may hold other
 * fds, which are ignored). Never blocks. */
void otlp_sender_run(struct otlp_sender *s, const struct pollfd *p, size_t n, double now);

/* Block until every queued export is done or deadline (monotonic) has
 * passed; what is left is dropped. Returns the number dropped. */
size_t otlp_sender_flush(struct otlp_sender *s, double deadline);

/* Counts, for the report and tests. */
struct otlp_send_stats {
        uint64_t sent;    /* answered 2xx */
        uint64_t failed;  /* given up: not retryable, attempts or time exhausted */
        uint64_t retried; /* attempts after a 429/502/503/504 */
        uint64_t dropped; /* never sent: queue full or flush deadline */
};
void otlp_sender_stats(const struct otlp_sender *s, struct otlp_send_stats *ret);

/* The first failure as one line (no header value, no URL user info), once:
 * true and buf filled the first time there is one to tell. */
bool otlp_sender_take_error(struct otlp_sender *s, char *buf, size_t cap);

/* Retry-After: delta-seconds or an HTTP-date (RFC 9110), against now
 * (epoch seconds). Returns 0 with the delay in seconds (>= 0), or -EINVAL. */
int otlp_parse_retry_after(const char *s, size_t len, double now_epoch, double *ret);

struct otlp_metrics;
struct run_model;
/* Encode the spans of m (with the resource of metrics) as s's
 * configuration says (traces_protocol) and queue them on s, to its traces
 * URL; 0 without one. 0, -EINVAL or -ENOMEM. */
int otlp_trace_submit(struct otlp_sender *s, const struct otlp_metrics *metrics,
                      const struct run_model *m, double now);
