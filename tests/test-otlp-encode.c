/* SPDX-License-Identifier: MIT */
/* The OTLP encoders: exact bytes of a small request in protobuf and JSON,
 * gzip (inflated back with zlib), and random metric sets decoded back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "otlp-roundtrip.h"
#include "util/macro.h"

static const struct otlp_attr res[] = {
    {.key = "service.name", .type = OTLP_STRING, .s = "buildtel"},
};
static const struct otlp_attr pattrs[] = {
    {.key = "cpu.mode", .type = OTLP_STRING, .s = "user"},
};
static const struct otlp_point gauge_pts[] = {
    {.time_ns = 1, .d = 1.5},
};
static const struct otlp_point sum_pts[] = {
    {.start_ns = 2, .time_ns = 3, .is_int = true, .i = -1, .attrs = pattrs, .nattrs = 1},
};
static const struct otlp_metric metrics[] = {
    {.name = "g", .unit = "By", .kind = OTLP_GAUGE, .points = gauge_pts, .npoints = 1},
    {.name = "s",
     .unit = "s",
     .kind = OTLP_SUM,
     .monotonic = true,
     .points = sum_pts,
     .npoints = 1},
};

static struct otlp_request small(void)
{
        struct otlp_request rq = {
            .resource = res,
            .nresource = 1,
            .scope_name = "buildtel",
            .scope_version = "1",
            .metrics = metrics,
            .nmetrics = 2,
        };
        return rq;
}

static void test_protobuf_bytes(void **state)
{
        /* From opentelemetry-proto's field numbers; checked with the
         * otlp-transformer decoder, which re-encodes it byte for byte. */
        static const uint8_t want[] = {
            0x0a, 0x8d, 0x01, /* resource_metrics, 141 bytes */
            0x0a, 0x1c,       /* resource */
            0x0a, 0x1a, 0x0a, 0x0c, 's',  'e',  'r',  'v',  'i',  'c',  'e', '.',
            'n',  'a',  'm',  'e',  0x12, 0x0a, 0x0a, 0x08, 'b',  'u',  'i', 'l',
            'd',  't',  'e',  'l',  0x12, 0x6d, /* scope_metrics */
            0x0a, 0x0d, 0x0a, 0x08, 'b',  'u',  'i',  'l',  'd',  't',  'e', 'l',
            0x12, 0x01, '1',  0x12, 0x1d, 0x0a, 0x01, 'g',  0x1a, 0x02, 'B', 'y', /* metric g */
            0x2a, 0x14, 0x0a, 0x12,                               /* gauge, data point */
            0x19, 1,    0,    0,    0,    0,    0,    0,    0,    /* time 1 */
            0x21, 0,    0,    0,    0,    0,    0,    0xf8, 0x3f, /* as_double 1.5 */
            0x12, 0x3d, 0x0a, 0x01, 's',  0x1a, 0x01, 's',        /* metric s */
            0x3a, 0x35, 0x0a, 0x2f,                               /* sum, data point */
            0x11, 2,    0,    0,    0,    0,    0,    0,    0,    /* start 2 */
            0x19, 3,    0,    0,    0,    0,    0,    0,    0,    /* time 3 */
            0x31, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* as_int -1 */
            0x3a, 0x12, 0x0a, 0x08, 'c',  'p',  'u',  '.',  'm',  'o',  'd', 'e',
            0x12, 0x06, 0x0a, 0x04, 'u',  's',  'e',  'r', /* attribute */
            0x10, 0x02, 0x18, 0x01,                        /* cumulative, monotonic */
        };
        struct otlp_request rq = small();
        struct dbuf b = DBUF_INIT;

        assert_int_equal(otlp_encode(&rq, false, &b), 0);
        assert_int_equal(b.len, sizeof(want));
        assert_memory_equal(b.p, want, sizeof(want));
        dbuf_release(&b);
}

static void test_json_text(void **state)
{
        struct otlp_request rq = small();
        struct dbuf b = DBUF_INIT;

        rq.has_trace = true;
        memset(rq.trace_id, 0xab, 16);
        memset(rq.span_id, 0x01, 8);
        assert_int_equal(otlp_encode(&rq, true, &b), 0);
        assert_string_equal(
            b.p,
            "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
            "\"value\":{\"stringValue\":\"buildtel\"}}]},"
            "\"scopeMetrics\":[{\"scope\":{\"name\":\"buildtel\",\"version\":\"1\"},\"metrics\":["
            "{\"name\":\"g\",\"unit\":\"By\",\"gauge\":{\"dataPoints\":[{"
            "\"timeUnixNano\":\"1\",\"asDouble\":1.5,"
            "\"exemplars\":[{\"timeUnixNano\":\"1\",\"asDouble\":1.5,\"spanId\":"
            "\"0101010101010101\",\"traceId\":\"abababababababababababababababab\"}],"
            "\"attributes\":[]}]}},"
            "{\"name\":\"s\",\"unit\":\"s\",\"sum\":{\"dataPoints\":[{"
            "\"startTimeUnixNano\":\"2\",\"timeUnixNano\":\"3\","
            "\"exemplars\":[{\"timeUnixNano\":\"3\",\"spanId\":"
            "\"0101010101010101\",\"traceId\":\"abababababababababababababababab\","
            "\"asInt\":\"-1\"}],\"asInt\":\"-1\",\"attributes\":[{\"key\":\"cpu.mode\","
            "\"value\":{\"stringValue\":\"user\"}}]}],"
            "\"aggregationTemporality\":2,\"isMonotonic\":true}}]}]}]}");
        dbuf_release(&b);
}

static void test_strings_made_valid(void **state)
{
        /* invalid UTF-8 and controls in a name: U+FFFD and \u escapes */
        struct otlp_metric m = {.name = "a\xff\"\\\n\x7f", .kind = OTLP_GAUGE};
        struct otlp_request rq = {.metrics = &m, .nmetrics = 1};
        struct dbuf b = DBUF_INIT;

        assert_int_equal(otlp_encode(&rq, true, &b), 0);
        assert_non_null(strstr(b.p, "\"name\":\"a\xef\xbf\xbd\\\"\\\\\\n\\u007f\""));
        dbuf_reset(&b);
        assert_int_equal(otlp_encode(&rq, false, &b), 0);
        assert_non_null(memmem(b.p, b.len,
                               "\x0a\x08"
                               "a\xef\xbf\xbd\"\\\n\x7f",
                               10));
        dbuf_release(&b);
}

static void test_doubles_json(void **state)
{
        static const struct {
                double d;
                const char *text;
        } cases[] = {
            {0.1, "0.1"},
            {1e300, "1e+300"},
            {-0.0, "-0.0"},
            {3.0, "3.0"},
            {123456789.125, "123456789.125"},
            {NAN, "\"NaN\""},
            {INFINITY, "\"Infinity\""},
            {-INFINITY, "\"-Infinity\""},
            {5e-324, "4.94065645841247e-324"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct otlp_point p = {.time_ns = 1, .d = cases[i].d};
                struct otlp_metric m = {
                    .name = "x", .kind = OTLP_GAUGE, .points = &p, .npoints = 1};
                struct otlp_request rq = {.metrics = &m, .nmetrics = 1};
                struct dbuf b = DBUF_INIT;
                char want[80];

                snprintf(want, sizeof(want), "\"asDouble\":%s,", cases[i].text);
                assert_int_equal(otlp_encode(&rq, true, &b), 0);
                if (!strstr(b.p, want))
                        fail_msg("%s not in %s", want, b.p);
                dbuf_release(&b);
        }
}

static void test_long_message_lengths(void **state)
{
        /* 300 points: lengths need 2 and 3 varint bytes, moved in place */
        static struct otlp_point pts[3000];
        struct otlp_metric m = {.name = "x", .kind = OTLP_GAUGE, .points = pts, .npoints = 3000};
        struct otlp_request rq = {.metrics = &m, .nmetrics = 1};
        static struct pbd_request d;
        struct dbuf b = DBUF_INIT;

        for (size_t i = 0; i < 3000; i++)
                pts[i] = (struct otlp_point){.time_ns = i + 1, .d = (double)i};
        assert_int_equal(otlp_encode(&rq, false, &b), 0);
        /* the reader caps points: read the first 256 through a cut copy */
        assert_true(b.len > 3000 * 20);
        assert_int_equal(b.p[0], 0x0a);
        {
                const uint8_t *c = (const uint8_t *)b.p + 1;
                uint64_t len;
                assert_int_equal(pbd_varint(&c, (const uint8_t *)b.p + b.len, &len), 0);
                assert_int_equal(len, b.len - (size_t)(c - (const uint8_t *)b.p));
        }
        m.npoints = 200;
        dbuf_reset(&b);
        assert_int_equal(otlp_encode(&rq, false, &b), 0);
        assert_int_equal(pbd_request((const uint8_t *)b.p, b.len, &d), 0);
        assert_int_equal(d.npoints, 200);
        assert_int_equal(d.points[199].time_ns, 200);
        dbuf_release(&b);
}

static void test_gzip(void **state)
{
        static uint8_t big[150000], noise[70000];
        static const struct {
                const uint8_t *p;
                size_t len;
                size_t max_out; /* the member, at most */
        } cases[] = {
            {(const uint8_t *)"", 0, 20},
            {big, 1000, 1000},
            /* repetitive, like an export: much smaller */
            {big, sizeof(big), sizeof(big) / 20},
            /* incompressible: stored blocks, a few bytes each */
            {noise, sizeof(noise), sizeof(noise) + 64},
        };
        struct dbuf g = DBUF_INIT;
        uint32_t x = 2463534242u;

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (uint8_t)(i * 7);
        for (size_t i = 0; i < sizeof(noise); i++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                noise[i] = (uint8_t)x;
        }
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *why;

                /* appended after what out already holds */
                dbuf_reset(&g);
                assert_int_equal(dbuf_puts(&g, "pre"), 0);
                assert_int_equal(otlp_gzip(cases[i].p, cases[i].len, &g), 0);
                assert_memory_equal(g.p, "pre", 3);
                assert_int_equal(g.p[g.len], '\0');
                why = rt_check_gzip((const uint8_t *)g.p + 3, g.len - 3, cases[i].p, cases[i].len);
                if (why)
                        fail_msg("case %zu: %s", i, why);
                if (g.len - 3 > cases[i].max_out)
                        fail_msg("case %zu: %zu bytes for %zu in", i, g.len - 3, cases[i].len);
        }
        dbuf_release(&g);
}

static void test_random_round_trips(void **state)
{
        uint8_t buf[2048];
        uint64_t x = 0x9e3779b97f4a7c15u;

        for (int iter = 0; iter < 2000; iter++) {
                const char *why;
                size_t n = 64 + (size_t)(x % (sizeof(buf) - 64));

                for (size_t i = 0; i < n; i++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        buf[i] = (uint8_t)x;
                }
                why = rt_run(buf, n);
                if (why)
                        fail_msg("iteration %d: %s", iter, why);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_protobuf_bytes),       cmocka_unit_test(test_json_text),
            cmocka_unit_test(test_strings_made_valid),   cmocka_unit_test(test_doubles_json),
            cmocka_unit_test(test_long_message_lengths), cmocka_unit_test(test_gzip),
            cmocka_unit_test(test_random_round_trips),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
