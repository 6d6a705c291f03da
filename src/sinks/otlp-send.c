/* SPDX-License-Identifier: MIT */
#include "sinks/otlp-send.h"

#include "render/otlp-trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "model/run.h"
#include "render/otlp-encode.h"
#include "render/otlp-metrics.h"
#include "util/macro.h"
#include "util/util.h"
#include "util/libcurl.h"

#define SOCKS_MAX 16

struct job {
        bool used;
        uint64_t seq; /* submission order: the oldest goes first when full */
        bool traces;  /* to the traces URL, with its headers */
        struct dbuf body;
        CURL *easy; /* non-NULL while on the wire */
        unsigned attempts;
        double next_try;    /* monotonic */
        double retry_after; /* from the last response, seconds; < 0 none */
};

struct otlp_sender {
        const struct otel_config *cfg;
        CURLM *multi;
        struct curl_slist *headers, *headers_traces;
        struct job jobs[OTLP_SEND_QUEUE];
        struct {
                curl_socket_t fd;
                short events;
        } socks[SOCKS_MAX];
        size_t nsocks;
        double timer; /* monotonic; INFINITY: none */
        struct otlp_send_stats st;
        uint64_t seq;
        char url_display[256];
        char err[200];
        bool err_set, err_told;
};

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
        struct otlp_sender *s = userp;
        size_t i;

        for (i = 0; i < s->nsocks && s->socks[i].fd != fd; i++)
                ;
        if (what == CURL_POLL_REMOVE) {
                if (i < s->nsocks)
                        s->socks[i] = s->socks[--s->nsocks];
                return 0;
        }
        if (i == s->nsocks) {
                if (s->nsocks == SOCKS_MAX)
                        return 0; /* the timer still drives it, slower */
                s->nsocks++;
        }
        s->socks[i].fd = fd;
        s->socks[i].events =
            (short)((what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0));
        return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
        struct otlp_sender *s = userp;

        s->timer = timeout_ms < 0 ? INFINITY : now_monotonic() + (double)timeout_ms / 1000.0;
        return 0;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        return size * nmemb; /* the response body is not needed */
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
        struct job *j = userdata;
        size_t n = size * nitems;
        const char *p = buf, *end = buf + n;
        double d;

        if (n > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
                p += 12;
                while (end > p && (end[-1] == '\r' || end[-1] == '\n'))
                        end--;
                if (otlp_parse_retry_after(p, (size_t)(end - p), now_realtime(), &d) >= 0)
                        j->retry_after = d;
        }
        return n;
}

/* The list holds the header values: clear them before freeing. */
static void free_headers(struct curl_slist *l)
{
        for (struct curl_slist *h = l; h; h = h->next)
                explicit_bzero(h->data, strlen(h->data));
        sym_curl_slist_free_all(l);
}

static void set_error(struct otlp_sender *s, const char *fmt, ...) _printf_(2, 3);
static void set_error(struct otlp_sender *s, const char *fmt, ...)
{
        va_list ap;

        if (s->err_set)
                return;
        va_start(ap, fmt);
        vsnprintf(s->err, sizeof(s->err), fmt, ap);
        va_end(ap);
        s->err_set = true;
}

/* The request headers for one protocol: NULL when out of memory. */
static struct curl_slist *make_headers(const struct otel_config *cfg, enum otel_protocol proto)
{
        struct curl_slist *h, *l;
        char line[OTELENV_MAX_LIST + 4];

        /* An empty Expect: skips the 100-continue round trip. */
        l = sym_curl_slist_append(NULL, proto == OTEL_PROTOCOL_JSON
                                            ? "Content-Type: application/json"
                                            : "Content-Type: application/x-protobuf");
        h = l ? sym_curl_slist_append(l, "Expect:") : NULL;
        if (h && cfg->gzip)
                h = sym_curl_slist_append(l, "Content-Encoding: gzip");
        for (size_t i = 0; h && i < cfg->headers.n; i++) {
                int n = snprintf(line, sizeof(line), "%s: %s", cfg->headers.p[i].key,
                                 cfg->headers.p[i].value);
                if (n < 0 || (size_t)n >= sizeof(line))
                        continue; /* cannot happen: the list is capped */
                h = sym_curl_slist_append(l, line);
        }
        explicit_bzero(line, sizeof(line));
        if (!h) {
                free_headers(l);
                return NULL;
        }
        return l;
}

int otlp_sender_new(const struct otel_config *cfg, struct otlp_sender **ret)
{
        struct otlp_sender *s;

        if (libcurl_load() < 0)
                return -ELIBACC; /* libcurl_error() says why */
        if (sym_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return -EIO;
        s = calloc(1, sizeof(*s));
        if (!s) {
                sym_curl_global_cleanup();
                return -ENOMEM;
        }
        s->cfg = cfg;
        s->timer = INFINITY;
        otelenv_url_for_display(cfg->url, s->url_display, sizeof(s->url_display));
        s->multi = sym_curl_multi_init();
        if (!s->multi)
                goto fail;
        sym_curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        sym_curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
        sym_curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, on_timer);
        sym_curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
        s->headers = make_headers(cfg, cfg->protocol);
        if (!s->headers)
                goto fail;
        if (cfg->traces_url) {
                s->headers_traces = make_headers(cfg, cfg->traces_protocol);
                if (!s->headers_traces)
                        goto fail;
        }
        *ret = s;
        return 0;
fail:
        otlp_sender_free(s);
        return -ENOMEM;
}

static void job_stop(struct otlp_sender *s, struct job *j)
{
        if (j->easy) {
                sym_curl_multi_remove_handle(s->multi, j->easy);
                sym_curl_easy_cleanup(j->easy);
                j->easy = NULL;
        }
}

static void job_free(struct otlp_sender *s, struct job *j)
{
        job_stop(s, j);
        dbuf_release(&j->body);
        memset(j, 0, sizeof(*j));
}

void otlp_sender_free(struct otlp_sender *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < OTLP_SEND_QUEUE; i++)
                job_free(s, &s->jobs[i]);
        if (s->multi)
                sym_curl_multi_cleanup(s->multi);
        free_headers(s->headers);
        free_headers(s->headers_traces);
        free(s);
        sym_curl_global_cleanup();
}

static int submit(struct otlp_sender *s, struct dbuf *body, double now, bool traces)
{
        struct job *slot = NULL;
        struct dbuf wire = DBUF_INIT;

        if (s->cfg->gzip) {
                int e = otlp_gzip(body->p, body->len, &wire);
                if (e < 0)
                        return e;
                dbuf_release(body);
        } else {
                wire = *body;
                *body = (struct dbuf)DBUF_INIT;
        }
        for (size_t i = 0; i < OTLP_SEND_QUEUE && !slot; i++)
                if (!s->jobs[i].used)
                        slot = &s->jobs[i];
        if (!slot) {
                /* Full: drop the oldest that is not on the wire. A later
                 * export carries the cumulative values again. */
                for (size_t i = 0; i < OTLP_SEND_QUEUE; i++)
                        if (!s->jobs[i].easy && (!slot || s->jobs[i].seq < slot->seq))
                                slot = &s->jobs[i];
                if (!slot) {
                        s->st.dropped++;
                        dbuf_release(&wire);
                        return 0;
                }
                job_free(s, slot);
                s->st.dropped++;
        }
        slot->used = true;
        slot->traces = traces;
        slot->seq = ++s->seq;
        slot->body = wire;
        slot->next_try = now;
        slot->retry_after = -1;
        return 0;
}

int otlp_sender_submit(struct otlp_sender *s, struct dbuf *body, double now)
{
        return submit(s, body, now, false);
}

static int job_start(struct otlp_sender *s, struct job *j, double now, double deadline)
{
        double budget = (double)s->cfg->timeout_ms / 1000.0;
        CURL *e;

        if (deadline - now < budget)
                budget = deadline - now;
        e = sym_curl_easy_init();
        if (!e)
                return -ENOMEM;
        sym_curl_easy_setopt(e, CURLOPT_URL, j->traces ? s->cfg->traces_url : s->cfg->url);
        sym_curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        sym_curl_easy_setopt(e, CURLOPT_POST, 1L);
        sym_curl_easy_setopt(e, CURLOPT_POSTFIELDS, j->body.p ? j->body.p : "");
        sym_curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body.len);
        sym_curl_easy_setopt(e, CURLOPT_HTTPHEADER, j->traces ? s->headers_traces : s->headers);
        sym_curl_easy_setopt(e, CURLOPT_USERAGENT, "buildtel/" BUILDTEL_VERSION);
        sym_curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        sym_curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)MAX(1.0, ceil(budget * 1000)));
        sym_curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)MAX(1.0, ceil(budget * 1000)));
        sym_curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
        sym_curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        sym_curl_easy_setopt(e, CURLOPT_HEADERDATA, j);
        sym_curl_easy_setopt(e, CURLOPT_PRIVATE, j);
        j->retry_after = -1;
        if (sym_curl_multi_add_handle(s->multi, e) != CURLM_OK) {
                sym_curl_easy_cleanup(e);
                return -ENOMEM;
        }
        j->easy = e;
        j->attempts++;
        return 0;
}

static bool retryable(long code)
{
        return code == 429 || code == 502 || code == 503 || code == 504;
}

static void job_done(struct otlp_sender *s, struct job *j, CURLcode res, double now)
{
        long code = 0;

        sym_curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &code);
        job_stop(s, j);
        if (res == CURLE_OK && code >= 200 && code < 300) {
                s->st.sent++;
                job_free(s, j);
                return;
        }
        if (res == CURLE_OK && retryable(code) && j->attempts < OTLP_SEND_ATTEMPTS) {
                double wait =
                    j->retry_after >= 0 ? j->retry_after : pow(2.0, (double)j->attempts - 1);
                j->next_try = now + MIN(wait, OTLP_SEND_BACKOFF_MAX);
                s->st.retried++;
                return;
        }
        s->st.failed++;
        if (res != CURLE_OK)
                set_error(s, "OTLP export to %s failed: %s", s->url_display,
                          sym_curl_easy_strerror(res));
        else
                set_error(s, "OTLP export to %s failed: HTTP %ld%s", s->url_display, code,
                          retryable(code) ? " after retries" : "");
        job_free(s, j);
}

static void drive(struct otlp_sender *s, const struct pollfd *p, size_t n, double now,
                  double deadline)
{
        int running = 0;
        CURLMsg *msg;
        int left;

        for (size_t i = 0; i < n; i++) {
                int ev = 0;
                bool ours = false;

                if (!p[i].revents)
                        continue;
                for (size_t k = 0; k < s->nsocks && !ours; k++)
                        ours = s->socks[k].fd == p[i].fd;
                if (!ours)
                        continue;
                if (p[i].revents & (POLLIN | POLLHUP))
                        ev |= CURL_CSELECT_IN;
                if (p[i].revents & POLLOUT)
                        ev |= CURL_CSELECT_OUT;
                if (p[i].revents & (POLLERR | POLLNVAL))
                        ev |= CURL_CSELECT_ERR;
                sym_curl_multi_socket_action(s->multi, p[i].fd, ev, &running);
        }
        if (now >= s->timer) {
                s->timer = INFINITY;
                sym_curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        for (size_t i = 0; i < OTLP_SEND_QUEUE; i++) {
                struct job *j = &s->jobs[i];
                if (j->used && !j->easy && j->next_try <= now &&
                    job_start(s, j, now, deadline) >= 0)
                        sym_curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        while ((msg = sym_curl_multi_info_read(s->multi, &left))) {
                struct job *j = NULL;
                if (msg->msg != CURLMSG_DONE)
                        continue;
                sym_curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
                if (j)
                        job_done(s, j, msg->data.result, now);
        }
}

void otlp_sender_run(struct otlp_sender *s, const struct pollfd *p, size_t n, double now)
{
        drive(s, p, n, now, INFINITY);
}

size_t otlp_sender_pollfds(struct otlp_sender *s, struct pollfd *p, size_t cap, double *deadline)
{
        size_t n = 0;

        for (size_t i = 0; i < s->nsocks && n < cap; i++)
                p[n++] = (struct pollfd){.fd = s->socks[i].fd, .events = s->socks[i].events};
        if (s->timer < *deadline)
                *deadline = s->timer;
        for (size_t i = 0; i < OTLP_SEND_QUEUE; i++)
                if (s->jobs[i].used && !s->jobs[i].easy && s->jobs[i].next_try < *deadline)
                        *deadline = s->jobs[i].next_try;
        return n;
}

static bool busy(const struct otlp_sender *s)
{
        for (size_t i = 0; i < OTLP_SEND_QUEUE; i++)
                if (s->jobs[i].used)
                        return true;
        return false;
}

size_t otlp_sender_flush(struct otlp_sender *s, double deadline)
{
        size_t dropped = 0;

        for (;;) {
                struct pollfd p[SOCKS_MAX];
                double now = now_monotonic(), wake = deadline;
                size_t n;
                int ms;

                /* Interrupted (SIGTERM while we wait): give up now. */
                if (stop_signal_pending())
                        deadline = now;
                /* a retry due after the deadline will not happen */
                for (size_t i = 0; i < OTLP_SEND_QUEUE; i++) {
                        struct job *j = &s->jobs[i];
                        if (j->used && (now >= deadline || (!j->easy && j->next_try >= deadline))) {
                                if (!s->err_set)
                                        set_error(s, "OTLP export to %s %s", s->url_display,
                                                  j->easy ? "timed out" : "gave up retrying");
                                job_free(s, j);
                                dropped++;
                        }
                }
                if (!busy(s))
                        break;
                drive(s, NULL, 0, now, deadline);
                if (!busy(s))
                        break;
                n = otlp_sender_pollfds(s, p, SOCKS_MAX, &wake);
                ms = (int)ceil(MAX(0.0, MIN(wake, deadline) - now_monotonic()) * 1000);
                ms = MIN(ms, 100); /* to see a signal */
                if (poll(p, (nfds_t)n, ms) > 0)
                        drive(s, p, n, now_monotonic(), deadline);
        }
        s->st.dropped += dropped;
        return dropped;
}

void otlp_sender_stats(const struct otlp_sender *s, struct otlp_send_stats *ret)
{
        *ret = s->st;
}

bool otlp_sender_take_error(struct otlp_sender *s, char *buf, size_t cap)
{
        if (!s->err_set || s->err_told)
                return false;
        s->err_told = true;
        snprintf(buf, cap, "%s", s->err);
        return true;
}

int otlp_parse_retry_after(const char *s, size_t len, double now_epoch, double *ret)
{
        char tmp[64];
        const char *b = s, *e = s + len, *end;
        struct tm tm = {0};
        uint64_t v;

        while (b < e && (*b == ' ' || *b == '\t'))
                b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
        if (b == e || (size_t)(e - b) >= sizeof(tmp))
                return -EINVAL;
        end = b;
        if (parse_u64(&end, e, &v) == 0) {
                if (end != e)
                        return -EINVAL;
                *ret = v > 86400 ? 86400.0 : (double)v;
                return 0;
        }
        memcpy(tmp, b, (size_t)(e - b));
        tmp[e - b] = '\0';
        end = strptime(tmp, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        if (!end || *end)
                return -EINVAL;
        *ret = MAX(0.0, (double)timegm(&tm) - now_epoch);
        return 0;
}

int otlp_trace_submit(struct otlp_sender *s, const struct otlp_metrics *metrics,
                      const struct run_model *m, double now)
{
        const struct otel_config *cfg = s->cfg;
        struct otlp_trace_input in = {
            .cfg = cfg,
            .run = m->run,
            .facts = m->facts,
            .summary = m->summary,
            .targets = m->targets,
        };
        _cleanup_dbuf_ struct dbuf body = DBUF_INIT;
        int e;

        if (!cfg->traces_url)
                return 0;
        in.resource = otlp_metrics_resource(metrics, &in.nresource);
        e = otlp_trace_encode(&in, cfg->traces_protocol == OTEL_PROTOCOL_JSON, &body);
        if (e >= 0)
                e = submit(s, &body, now, true);
        return e;
}
