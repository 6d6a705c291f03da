/* SPDX-License-Identifier: MIT */
/* The OTEL_* environment conventions and TRACEPARENT, table-driven, and
 * otelenv_load over a fake environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sinks/otlp-send.h"
#include "parse/otelenv.h"

static void test_pairs(void **state)
{
        static const struct {
                const char *in;
                bool header;
                int ret;
                size_t n;
                const char *k0, *v0, *k1, *v1;
                size_t bad;
        } cases[] = {
            {"", true, 0, 0, NULL, NULL, NULL, NULL, 0},
            {"a=1", true, 0, 1, "a", "1", NULL, NULL, 0},
            {" api-key = s3%20cr%2Cet , b=x%3Dy ", true, 0, 2, "api-key", "s3 cr,et", "b", "x=y",
             0},
            {"a=1,,b=2,", false, 0, 2, "a", "1", "b", "2", 0},
            {"k=", true, 0, 1, "k", "", NULL, NULL, 0},
            {"deployment.environment=ci%20one", false, 0, 1, "deployment.environment", "ci one",
             NULL, NULL, 0},
            {"novalue", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 1},
            {"a=1,=2", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 2},
            {"a=%zz", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 1},
            {"a=%4", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 1},
            {"a=%00", false, -EINVAL, 0, NULL, NULL, NULL, NULL, 1},
            /* header injection and bad header names */
            {"a=x%0d%0aHost: evil", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 1},
            {"a=1,b c=2", true, -EINVAL, 0, NULL, NULL, NULL, NULL, 2},
            {"b c=2", false, 0, 1, "b c", "2", NULL, NULL, 0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct otel_pairs ps = {0};
                size_t bad = 0;
                int r = otelenv_parse_pairs(cases[i].in, strlen(cases[i].in), cases[i].header, &ps,
                                            &bad);

                if (r != cases[i].ret)
                        fail_msg("case %zu '%s': %d, want %d", i, cases[i].in, r, cases[i].ret);
                if (r < 0) {
                        assert_int_equal(bad, cases[i].bad);
                        continue;
                }
                assert_int_equal(ps.n, cases[i].n);
                if (ps.n > 0) {
                        assert_string_equal(ps.p[0].key, cases[i].k0);
                        assert_string_equal(ps.p[0].value, cases[i].v0);
                }
                if (ps.n > 1) {
                        assert_string_equal(ps.p[1].key, cases[i].k1);
                        assert_string_equal(ps.p[1].value, cases[i].v1);
                }
                otel_pairs_release(&ps);
        }
}

static void test_pairs_caps(void **state)
{
        char buf[OTELENV_MAX_LIST + 2];
        struct otel_pairs ps;
        size_t n = 0, bad;

        for (int i = 0; i <= OTELENV_MAX_PAIRS; i++)
                n += (size_t)snprintf(buf + n, sizeof(buf) - n, "k%d=v,", i);
        assert_int_equal(otelenv_parse_pairs(buf, n, true, &ps, &bad), -E2BIG);
        memset(buf, 'a', sizeof(buf));
        assert_int_equal(otelenv_parse_pairs(buf, sizeof(buf), true, &ps, &bad), -E2BIG);
}

static void test_tracestate(void **state)
{
        static const struct {
                const char *in;
                int ret;
        } cases[] = {
            {"congo=t61rcWkgMzE", 0},
            {"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", 0},
            {" rojo=1 ,\tcongo=2\t", 0},
            {"a=1,,b=2,", 0},
            {"tenant1@sys=v", 0},
            {"k_-*/9=v a l~ue", 0},
            {"", 0},
            {"rojo=1\ncongo=2", -EINVAL},
            {"rojo=1\r", -EINVAL},
            {"Rojo=1", -EINVAL},
            {"9rojo=1", -EINVAL},
            {"rojo", -EINVAL},
            {"rojo=", -EINVAL},
            {"rojo=a=b", -EINVAL},
            {"=v", -EINVAL},
            {"ro jo=1", -EINVAL},
            {"rojo=\x01", -EINVAL},
            {"rojo=caf\xc3\xa9", -EINVAL},
            {"a@=v", -EINVAL},
            {"@b=v", -EINVAL},
            {"a@B=v", -EINVAL},
            {"a@b@c=v", -EINVAL},
            {"a@abcdefghijklmno=v", -EINVAL},
            {"rojo=1,rojo=2", -EINVAL},
        };
        char big[33 * 5 + 1], key[300], val[300];
        size_t n = 0;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int r = otelenv_check_tracestate(cases[i].in, strlen(cases[i].in));
                if (r != cases[i].ret)
                        fail_msg("case %zu '%s': %d", i, cases[i].in, r);
        }
        /* 32 members pass, a 33rd fails */
        for (int i = 0; i < 33; i++) {
                int w = snprintf(big + n, sizeof(big) - n, "%s%c%c=1", i ? "," : "", 'a' + i / 26,
                                 'a' + i % 26);
                assert_true(w > 0 && (size_t)w < sizeof(big) - n);
                if (i == 32)
                        assert_int_equal(otelenv_check_tracestate(big, n), 0);
                n += (size_t)w;
        }
        assert_int_equal(otelenv_check_tracestate(big, n), -EINVAL);
        /* a 256-byte key and value pass, 257 fail */
        memset(key, 'k', 257);
        memset(val, 'v', 257);
        {
                char m[600];
                int w = snprintf(m, sizeof(m), "%.256s=%.256s", key, val);
                assert_int_equal(otelenv_check_tracestate(m, (size_t)w), 0);
                w = snprintf(m, sizeof(m), "%.257s=v", key);
                assert_int_equal(otelenv_check_tracestate(m, (size_t)w), -EINVAL);
                w = snprintf(m, sizeof(m), "k=%.257s", val);
                assert_int_equal(otelenv_check_tracestate(m, (size_t)w), -EINVAL);
        }
}

static void test_traceparent(void **state)
{
        static const struct {
                const char *in;
                int ret;
        } cases[] = {
            {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", 0},
            {" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 ", 0},
            {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", 0},
            {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", -EINVAL},
            {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", -EINVAL},
            {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", -EINVAL},
            {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", -EINVAL},
            {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", -EINVAL},
            {"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", -EINVAL},
            {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", -EINVAL},
            {"", -EINVAL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct traceparent tp;
                int r = otelenv_parse_traceparent(cases[i].in, strlen(cases[i].in), &tp);
                if (r != cases[i].ret)
                        fail_msg("case %zu '%s': %d", i, cases[i].in, r);
                if (i == 0) {
                        assert_int_equal(tp.trace_id[0], 0x4b);
                        assert_int_equal(tp.trace_id[15], 0x36);
                        assert_int_equal(tp.span_id[7], 0xb7);
                        assert_int_equal(tp.flags, 1);
                }
        }
}

static void test_url(void **state)
{
        static const struct {
                const char *in;
                bool generic;
                const char *want; /* NULL: -EINVAL */
                const char *display;
        } cases[] = {
            {"http://localhost:4318", true, "http://localhost:4318/v1/metrics",
             "http://localhost:4318/v1/metrics"},
            {"http://localhost:4318/", true, "http://localhost:4318/v1/metrics", NULL},
            {"https://c.example/otlp//", true, "https://c.example/otlp/v1/metrics", NULL},
            {"http://c:4318/custom/path", false, "http://c:4318/custom/path", NULL},
            {"https://user:pw@c.example/v1/metrics?token=x", false,
             "https://user:pw@c.example/v1/metrics?token=x", "https://c.example/v1/metrics"},
            {"http://c/?q", true, NULL, NULL},
            {"ftp://c", false, NULL, NULL},
            {"http://", false, NULL, NULL},
            {"http:///x", false, NULL, NULL},
            {"http://a b", false, NULL, NULL},
            {"localhost:4318", true, NULL, NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *u = NULL, disp[256];
                int r = otelenv_metrics_url(cases[i].in, strlen(cases[i].in), cases[i].generic, &u);

                if (!cases[i].want) {
                        if (r != -EINVAL)
                                fail_msg("case %zu '%s': %d", i, cases[i].in, r);
                        continue;
                }
                assert_int_equal(r, 0);
                assert_string_equal(u, cases[i].want);
                if (cases[i].display) {
                        otelenv_url_for_display(u, disp, sizeof(disp));
                        assert_string_equal(disp, cases[i].display);
                }
                free(u);
        }
}

static void test_scalars(void **state)
{
        uint64_t ms;
        bool b;
        double d;

        assert_int_equal(otelenv_parse_bool(" TRUE ", 6, &b), 0);
        assert_true(b);
        assert_int_equal(otelenv_parse_bool("false", 5, &b), 0);
        assert_false(b);
        assert_int_equal(otelenv_parse_bool("1", 1, &b), -EINVAL);
        assert_int_equal(otelenv_parse_ms("1500", 4, 3600000, &ms), 0);
        assert_int_equal(ms, 1500);
        assert_int_equal(otelenv_parse_ms("1.5", 3, 3600000, &ms), -EINVAL);
        assert_int_equal(otelenv_parse_ms("99999999999999999999999", 23, 3600000, &ms), -ERANGE);
        assert_int_equal(otlp_parse_retry_after(" 7 ", 3, 0, &d), 0);
        assert_true(d == 7);
        assert_int_equal(
            otlp_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 29, 784111767.0, &d), 0);
        assert_true(d == 10);
        assert_int_equal(
            otlp_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 29, 784111800.0, &d), 0);
        assert_true(d == 0);
        assert_int_equal(otlp_parse_retry_after("soon", 4, 0, &d), -EINVAL);
        assert_int_equal(otlp_parse_retry_after("-1", 2, 0, &d), -EINVAL);
}

/* A fake environment: NULL-terminated name, value pairs. */
static const char *lookup(void *userdata, const char *name)
{
        const char *const *env = userdata;

        for (; env[0]; env += 2)
                if (strcmp(env[0], name) == 0)
                        return env[1];
        return NULL;
}

static char notes[4096];
static void note(void *userdata, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(void *userdata, const char *fmt, ...)
{
        size_t n = strlen(notes);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(notes + n, sizeof(notes) - n, fmt, ap);
        va_end(ap);
        strncat(notes, "\n", sizeof(notes) - strlen(notes) - 1);
}

static void test_load(void **state)
{
        const char *env1[] = {
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://generic:4318",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            "http://metrics:4318/m",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "http/json",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "http/protobuf",
            "OTEL_EXPORTER_OTLP_COMPRESSION",
            "gzip",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            "2500",
            "OTEL_METRIC_EXPORT_INTERVAL",
            "15000",
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-secret=hunter2",
            "OTEL_SERVICE_NAME",
            "ci",
            "TRACEPARENT",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            NULL,
        };
        const char *env2[] = {
            "OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318", "OTEL_SDK_DISABLED", "true", NULL,
        };
        const char *env3[] = {
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://generic:4318",
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-secret=hunter2,broken",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            "soon",
            "TRACEPARENT",
            "garbage",
            NULL,
        };
        const char *env5[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
                              "http://generic:4318",
                              "TRACEPARENT",
                              "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                              "TRACESTATE",
                              "rojo=1\r\nX-Injected: yes",
                              NULL};
        const char *env6[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
                              "http://generic:4318",
                              "TRACEPARENT",
                              "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                              "TRACESTATE",
                              "rojo=1,congo=2",
                              NULL};
        const char *env4[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://x",
                              "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", NULL};
        struct otel_options opt = {.endpoint = "http://opt:1/v1/metrics", .interval_ms = 500};
        struct otel_config c;

        assert_int_equal(otelenv_load(lookup, env1, NULL, note, NULL, &c), 0);
        assert_true(c.enabled);
        assert_string_equal(c.url, "http://metrics:4318/m");
        assert_int_equal(c.protocol, OTEL_PROTOCOL_PROTOBUF);
        assert_true(c.gzip);
        assert_int_equal(c.timeout_ms, 2500);
        assert_int_equal(c.interval_ms, 15000);
        assert_int_equal(c.headers.n, 1);
        assert_string_equal(c.service_name, "ci");
        assert_true(c.has_trace);
        otel_config_release(&c);

        assert_int_equal(otelenv_load(lookup, env1, &opt, note, NULL, &c), 0);
        assert_string_equal(c.url, "http://opt:1/v1/metrics");
        assert_int_equal(c.interval_ms, 500);
        otel_config_release(&c);

        assert_int_equal(otelenv_load(lookup, env2, NULL, note, NULL, &c), 0);
        assert_false(c.enabled);
        otel_config_release(&c);

        notes[0] = '\0';
        assert_int_equal(otelenv_load(lookup, env3, NULL, note, NULL, &c), 0);
        assert_true(c.enabled);
        assert_int_equal(c.headers.n, 0);
        assert_int_equal(c.timeout_ms, OTEL_TIMEOUT_MS_DEFAULT);
        assert_false(c.has_trace);
        assert_non_null(strstr(notes, "OTEL_EXPORTER_OTLP_HEADERS is malformed (entry 2)"));
        assert_null(strstr(notes, "hunter2")); /* never the value */
        assert_non_null(strstr(notes, "OTEL_EXPORTER_OTLP_TIMEOUT"));
        assert_non_null(strstr(notes, "TRACEPARENT"));
        otel_config_release(&c);

        notes[0] = '\0';
        assert_int_equal(otelenv_load(lookup, env4, NULL, note, NULL, &c), 0);
        assert_false(c.enabled);
        assert_non_null(strstr(notes, "OTEL_EXPORTER_OTLP_ENDPOINT is not an http"));
        otel_config_release(&c);

        /* a malformed TRACESTATE is dropped whole, said once; a good one kept */
        notes[0] = '\0';
        assert_int_equal(otelenv_load(lookup, env5, NULL, note, NULL, &c), 0);
        assert_true(c.has_trace);
        assert_null(c.tracestate);
        assert_non_null(strstr(notes, "TRACESTATE is not a W3C tracestate"));
        otel_config_release(&c);
        assert_int_equal(otelenv_load(lookup, env6, NULL, note, NULL, &c), 0);
        assert_string_equal(c.tracestate, "rojo=1,congo=2");
        otel_config_release(&c);

        opt.endpoint = "nope";
        assert_int_equal(otelenv_load(lookup, env1, &opt, note, NULL, &c), -EINVAL);
        otel_config_release(&c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pairs),       cmocka_unit_test(test_pairs_caps),
            cmocka_unit_test(test_traceparent), cmocka_unit_test(test_url),
            cmocka_unit_test(test_tracestate),  cmocka_unit_test(test_scalars),
            cmocka_unit_test(test_load),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
