/* SPDX-License-Identifier: MIT */
/* The OTLP/HTTP sender (libcurl multi) against a real HTTP server on
 * 127.0.0.1: a forked child of this test, on a port the kernel picked,
 * answering from a script and reporting every request it got (head and
 * body) on a pipe. Checked: what goes on the wire (headers, body, gzip),
 * which answers are retried (429/502/503/504, after Retry-After or the
 * backoff) and which are not (400), a collector that hangs or is not
 * there, the bounded queue, and that driving the sender never blocks. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#define ZLIB_CONST
#include <zlib.h>
#include <cmocka.h>

#include "sinks/otlp-send.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#define OK_200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
#define R503_NOW                                                                                   \
        "HTTP/1.1 503 Busy\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
#define R429_NOW                                                                                   \
        "HTTP/1.1 429 Slow\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
#define R502 "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
#define R400 "HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\nConnection: close\r\n\r\nbad\r\n"
#define HANG "hang"
#define SECRET "Bearer s3cret-value"

struct server {
        pid_t pid;
        int port;
        int report; /* read end: one record per request */
};

/* The head of a request ends at the blank line; the body is
 * Content-Length bytes. Returns 0 or -1 (the client went away). */
static int read_request(int fd, struct dbuf *head, struct dbuf *body)
{
        char buf[8192];
        char *end = NULL;
        size_t want = 0;
        ssize_t n;

        while (!end) {
                n = read(fd, buf, sizeof(buf));
                if (n <= 0)
                        return -1;
                if (dbuf_append(head, buf, (size_t)n) < 0)
                        return -1;
                end = strstr(head->p, "\r\n\r\n");
        }
        for (const char *l = head->p; l && l < end; l = strstr(l, "\r\n"), l = l ? l + 2 : l)
                if (strncasecmp(l, "Content-Length:", 15) == 0)
                        want = strtoul(l + 15, NULL, 10);
        (void)dbuf_append(body, end + 4, head->len - (size_t)(end + 4 - head->p));
        head->len = (size_t)(end - head->p) + 2;
        head->p[head->len] = '\0';
        while (body->len < want) {
                n = read(fd, buf, sizeof(buf));
                if (n <= 0)
                        return -1;
                (void)dbuf_append(body, buf, (size_t)n);
        }
        return 0;
}

_Noreturn static void serve(int lfd, int report, const char *const *answers, size_t n)
{
        alarm(30); /* never outlives a test that failed half-way */
        for (size_t i = 0; i < n; i++) {
                struct dbuf head = DBUF_INIT, body = DBUF_INIT;
                uint32_t len[2];
                int fd = accept(lfd, NULL, NULL);

                if (fd < 0 || read_request(fd, &head, &body) < 0)
                        _exit(2);
                len[0] = (uint32_t)head.len;
                len[1] = (uint32_t)body.len;
                if (write_all(report, len, sizeof(len)) < 0 ||
                    write_all(report, head.p, head.len) < 0 ||
                    write_all(report, body.p ? body.p : "", body.len) < 0)
                        _exit(3);
                if (strcmp(answers[i], HANG) == 0)
                        pause(); /* until the test kills us */
                (void)write_all(fd, answers[i], strlen(answers[i]));
                close(fd);
                dbuf_release(&head);
                dbuf_release(&body);
        }
        _exit(0);
}

/* Listen on 127.0.0.1:0 and fork the server. With n == 0 nothing listens:
 * the port is free and connections are refused. */
static void server_start(struct server *sv, const char *const *answers, size_t n)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t alen = sizeof(a);
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), p[2];

        assert_true(lfd >= 0);
        assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
        sv->port = ntohs(a.sin_port);
        sv->pid = -1;
        sv->report = -1;
        if (n == 0) {
                close(lfd);
                return;
        }
        assert_int_equal(listen(lfd, 16), 0);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
        sv->pid = fork();
        assert_true(sv->pid >= 0);
        if (sv->pid == 0) {
                close(p[0]);
                serve(lfd, p[1], answers, n);
        }
        close(lfd);
        close(p[1]);
        sv->report = p[0];
}

/* The next request the server got (0), or -1 when there is none. */
static int server_next(struct server *sv, struct dbuf *head, struct dbuf *body)
{
        uint32_t len[2];
        char buf[65536];

        dbuf_reset(head);
        dbuf_reset(body);
        if (sv->report < 0 || read(sv->report, len, sizeof(len)) != (ssize_t)sizeof(len))
                return -1;
        for (int k = 0; k < 2; k++) {
                struct dbuf *d = k ? body : head;
                size_t left = len[k];
                while (left > 0) {
                        ssize_t n = read(sv->report, buf, MIN(left, sizeof(buf)));
                        assert_true(n > 0);
                        assert_int_equal(dbuf_append(d, buf, (size_t)n), 0);
                        left -= (size_t)n;
                }
                assert_int_equal(dbuf_append(d, "", 0), 0);
        }
        return 0;
}

/* Stop the server (a hanging one too); its reports stay readable. */
static void server_kill(struct server *sv)
{
        if (sv->pid > 0) {
                kill(sv->pid, SIGKILL);
                waitpid(sv->pid, NULL, 0);
                sv->pid = -1;
        }
}

/* With userinfo the URL has a user, a password and a query, none of
 * which may show in an error. */
static void make_config(struct otel_config *cfg, const struct server *sv, bool userinfo, bool gzip,
                        uint64_t timeout_ms)
{
        static char url[256], hkey[] = "authorization", hval[] = SECRET;

        snprintf(url, sizeof(url), "http://%s127.0.0.1:%d/v1/metrics%s", userinfo ? "user:pw@" : "",
                 sv->port, userinfo ? "?key=q" : "");
        *cfg = (struct otel_config){.enabled = true,
                                    .url = url,
                                    .protocol = OTEL_PROTOCOL_PROTOBUF,
                                    .gzip = gzip,
                                    .timeout_ms = timeout_ms};
        cfg->headers.n = 1;
        cfg->headers.p[0].key = hkey;
        cfg->headers.p[0].value = hval;
}

/* Drive the sender as the recorder's loop does (pollfds, poll, run) until
 * done exports are finished or the deadline; returns the longest run()
 * call. */
static double drive(struct otlp_sender *s, double deadline, uint64_t done)
{
        double longest = 0;

        for (;;) {
                struct pollfd p[8];
                struct otlp_send_stats st;
                double now = now_monotonic(), wake = deadline, t0;
                size_t n;

                otlp_sender_stats(s, &st);
                if (st.sent + st.failed + st.dropped >= done || now >= deadline)
                        return longest;
                n = otlp_sender_pollfds(s, p, ARRAY_SIZE(p), &wake);
                (void)poll(p, n, (int)ceil(MAX(0.0, MIN(wake, deadline) - now) * 1000));
                t0 = now_monotonic();
                otlp_sender_run(s, p, n, t0);
                longest = MAX(longest, now_monotonic() - t0);
        }
}

static void submit(struct otlp_sender *s, const char *text)
{
        struct dbuf b = DBUF_INIT;

        assert_int_equal(dbuf_puts(&b, text), 0);
        assert_int_equal(otlp_sender_submit(s, &b, now_monotonic()), 0);
        assert_null(b.p); /* taken */
}

static void inflate_to(const struct dbuf *gz, struct dbuf *out)
{
        z_stream z = {0};
        char buf[4096];
        int r;

        assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
        z.next_in = (const Bytef *)gz->p;
        z.avail_in = (uInt)gz->len;
        do {
                z.next_out = (Bytef *)buf;
                z.avail_out = sizeof(buf);
                r = inflate(&z, Z_NO_FLUSH);
                assert_true(r == Z_OK || r == Z_STREAM_END);
                assert_int_equal(dbuf_append(out, buf, sizeof(buf) - z.avail_out), 0);
        } while (r != Z_STREAM_END);
        inflateEnd(&z);
}

static const struct {
        const char *what;
        const char *answers[6];
        bool gzip;
        uint64_t timeout_ms;
        bool use_flush; /* otlp_sender_flush(), else the poll loop */
        struct otlp_send_stats want;
        size_t requests;
        double min_s, max_s; /* how long it took */
        const char *err_has; /* in the error line; NULL: no error */
        bool lost_either;    /* failed or dropped: either is right */
} cases[] = {
    {"200", {OK_200}, false, 5000, true, {.sent = 1}, 1, 0, 3, NULL, false},
    {"200, poll loop", {OK_200}, false, 5000, false, {.sent = 1}, 1, 0, 3, NULL, false},
    {"gzip", {OK_200}, true, 5000, true, {.sent = 1}, 1, 0, 3, NULL, false},
    {"503 with Retry-After: 0, then 200",
     {R503_NOW, OK_200},
     false,
     5000,
     false,
     {.sent = 1, .retried = 1},
     2,
     0,
     3,
     NULL,
     false},
    {"502 without Retry-After: the first backoff is 1 s",
     {R502, OK_200},
     false,
     5000,
     true,
     {.sent = 1, .retried = 1},
     2,
     0.9,
     4,
     NULL,
     false},
    {"400 is never retried", {R400}, false, 5000, true, {.failed = 1}, 1, 0, 3, "HTTP 400", false},
    {"429 five times: given up",
     {R429_NOW, R429_NOW, R429_NOW, R429_NOW, R429_NOW},
     false,
     5000,
     false,
     {.failed = 1, .retried = OTLP_SEND_ATTEMPTS - 1},
     OTLP_SEND_ATTEMPTS,
     0,
     4,
     "HTTP 429 after retries",
     false},
    {"a collector that hangs: the request times out",
     {HANG},
     false,
     300,
     false,
     {.failed = 1},
     1,
     0.25,
     3,
     "failed",
     false},
    {"a collector that hangs: flush stops at its deadline",
     {HANG},
     false,
     10000,
     true,
     {.dropped = 1},
     1,
     0.4,
     3,
     "OTLP export to http://127.0.0.1:",
     true},
    {"nothing listens", {NULL}, false, 5000, true, {.failed = 1}, 0, 0, 3, "failed", false},
};

static void test_cases(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct server sv;
                struct otel_config cfg;
                struct otlp_sender *s = NULL;
                struct otlp_send_stats st;
                struct dbuf head = DBUF_INIT, body = DBUF_INIT, plain = DBUF_INIT;
                size_t n = 0, nreq = 0;
                char err[256];
                double t0, took, longest = 0;
                bool has_err;

                while (n < ARRAY_SIZE(cases[i].answers) && cases[i].answers[n])
                        n++;
                server_start(&sv, cases[i].answers, n);
                /* user info and query must never show in the error */
                make_config(&cfg, &sv, true, cases[i].gzip, cases[i].timeout_ms);
                assert_int_equal(otlp_sender_new(&cfg, &s), 0);
                t0 = now_monotonic();
                submit(s, "export body 1");
                if (cases[i].use_flush)
                        (void)otlp_sender_flush(s, t0 + (cases[i].timeout_ms > 5000 ? 0.5 : 8));
                else
                        longest = drive(s, t0 + 8, 1);
                took = now_monotonic() - t0;
                otlp_sender_stats(s, &st);
                /* at the flush deadline curl's own timeout (clamped to it) may
                 * fire first: lost either way, never later */
                if (cases[i].lost_either && st.failed + st.dropped == 1)
                        st.failed = 0, st.dropped = 1;
                if (st.sent != cases[i].want.sent || st.failed != cases[i].want.failed ||
                    st.retried != cases[i].want.retried || st.dropped != cases[i].want.dropped)
                        fail_msg("%s: sent %lu failed %lu retried %lu dropped %lu", cases[i].what,
                                 (unsigned long)st.sent, (unsigned long)st.failed,
                                 (unsigned long)st.retried, (unsigned long)st.dropped);
                if (took < cases[i].min_s || took > cases[i].max_s)
                        fail_msg("%s: took %.2f s", cases[i].what, took);
                /* the poll loop's calls never wait on the network */
                if (longest > 0.1)
                        fail_msg("%s: a run() call took %.3f s", cases[i].what, longest);
                has_err = otlp_sender_take_error(s, err, sizeof(err));
                if (cases[i].err_has) {
                        assert_true(has_err);
                        if (!strstr(err, cases[i].err_has))
                                fail_msg("%s: error '%s'", cases[i].what, err);
                        assert_null(strstr(err, "pw"));
                        assert_null(strstr(err, "key=q"));
                        assert_null(strstr(err, "s3cret"));
                        assert_false(otlp_sender_take_error(s, err, sizeof(err))); /* once */
                } else {
                        assert_false(has_err);
                }
                otlp_sender_free(s);
                /* what it was asked is on the pipe already */
                server_kill(&sv);
                while (server_next(&sv, &head, &body) == 0) {
                        nreq++;
                        assert_non_null(strstr(head.p, "POST /v1/metrics?key=q HTTP/1.1\r\n"));
                        assert_non_null(
                            strstr(head.p, "\r\nContent-Type: application/x-protobuf\r\n"));
                        assert_non_null(strstr(head.p, "\r\nauthorization: " SECRET "\r\n"));
                        assert_null(strstr(head.p, "Expect:"));
                        assert_true(!!strstr(head.p, "\r\nContent-Encoding: gzip\r\n") ==
                                    cases[i].gzip);
                        dbuf_reset(&plain);
                        if (cases[i].gzip)
                                inflate_to(&body, &plain);
                        else
                                assert_int_equal(dbuf_append(&plain, body.p, body.len), 0);
                        assert_int_equal(dbuf_append(&plain, "", 0), 0);
                        assert_string_equal(plain.p, "export body 1");
                }
                if (nreq != cases[i].requests)
                        fail_msg("%s: %zu requests, want %zu", cases[i].what, nreq,
                                 cases[i].requests);
                close(sv.report);
                dbuf_release(&head);
                dbuf_release(&body);
                dbuf_release(&plain);
        }
}

/* Six exports queued before any goes out: the queue keeps four, dropping
 * the oldest, and those four are sent. */
static void test_queue_full(void **state)
{
        static const char *const answers[] = {OK_200, OK_200, OK_200, OK_200};
        struct server sv;
        struct otel_config cfg;
        struct otlp_sender *s = NULL;
        struct otlp_send_stats st;
        struct dbuf head = DBUF_INIT, body = DBUF_INIT;
        bool seen[7] = {false};
        char text[32];

        server_start(&sv, answers, ARRAY_SIZE(answers));
        make_config(&cfg, &sv, false, false, 5000);
        assert_int_equal(otlp_sender_new(&cfg, &s), 0);
        for (int k = 1; k <= 6; k++) {
                snprintf(text, sizeof(text), "export %d", k);
                submit(s, text);
        }
        assert_int_equal(otlp_sender_flush(s, now_monotonic() + 8), 0);
        otlp_sender_stats(s, &st);
        assert_int_equal(st.sent, OTLP_SEND_QUEUE);
        assert_int_equal(st.dropped, 6 - OTLP_SEND_QUEUE);
        otlp_sender_free(s);
        server_kill(&sv);
        while (server_next(&sv, &head, &body) == 0) {
                assert_int_equal(strncmp(body.p, "export ", 7), 0);
                seen[body.p[7] - '0'] = true;
        }
        /* the two oldest went */
        assert_false(seen[1] || seen[2]);
        assert_true(seen[3] && seen[4] && seen[5] && seen[6]);
        close(sv.report);
        dbuf_release(&head);
        dbuf_release(&body);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_queue_full),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
