/* SPDX-License-Identifier: MIT */
/* Exactness (issue 9): the memory, disk and IO bytes the platform layer
 * reads reach the Prometheus textfile and the OTLP body as those bytes, not
 * as the CSV's MiB and GiB rounded and multiplied back; the summary files
 * keep the CSV's precision. The readings come from a fixture tree
 * (tests/fixtures/proc-exact: meminfo in kB that are not whole MiB, a
 * cgroup's io.stat and memory.peak) and a real statvfs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/otlp-metrics.h"
#include "render/prom.h"
#include "sinks/sink.h"
#include "render/summary.h"
#include "parse/otelenv.h"
#include "platform/cgroup.h"
#include "platform/sampler.h"
#include "util/util.h"

#define ROOT FIXTURES "/proc-exact"

/* What the fixture holds, in bytes. */
#define MEM_USED ((16303148.0 - 9876543.0) * 1024) /* MemTotal - MemAvailable */
#define MEM_AVAIL (9876543.0 * 1024)
#define SWAP_USED ((2097148.0 - 1048573.0) * 1024)
#define IO_READ (1052673.0 + 4096)
#define IO_WRITE 268439552.0
#define CG_MEM_PEAK 1234567891.0

static char *slurp(const char *path, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;

        assert_int_equal(read_file_at(AT_FDCWD, path, 1 << 16, &buf, &len), 0);
        *ret_len = len;
        return buf;
}

/* The build's figures as the recorder takes them from its cgroup: the
 * platform layer's parsers on the cgroup's files. */
static void cgroup_fixture(struct sample *s)
{
        uint64_t rd, wr, peak;
        size_t len;
        char *buf = slurp(ROOT "/cgroup/io.stat", &len);

        assert_int_equal(cgroup_iostat_parse(buf, len, &rd, &wr), 0);
        free(buf);
        buf = slurp(ROOT "/cgroup/memory.peak", &len);
        assert_int_equal(cgroup_u64_parse(buf, len, &peak), 0);
        free(buf);
        s->cg_mode = "v2";
        s->cg_io_read_bytes = (double)rd;
        s->cg_io_write_bytes = (double)wr;
        s->cg_mem_peak_bytes = s->cg_mem_bytes = (double)peak;
}

/* A sample of the fixture tree with the disk of path, taken when statvfs
 * gives the same figure before and after (other writers may be busy). */
static void take(struct sampler *sp, const char *path, struct sample *s, double *ret_disk)
{
        for (int tries = 0; tries < 50; tries++) {
                struct statvfs a, b;

                sample_clear(s);
                s->epoch = 1764430820.25 + tries;
                s->elapsed_s = 0.25;
                assert_int_equal(statvfs(path, &a), 0);
                assert_int_equal(sampler_take(sp, s), 0);
                assert_int_equal(statvfs(path, &b), 0);
                /* held still around the sample, and not moved and moved
                 * back meanwhile (other tests write there: seen once in CI) */
                if (a.f_bavail == b.f_bavail &&
                    (tries == 49 || s->disk_avail_bytes == (double)a.f_bavail * (double)a.f_frsize)) {
                        *ret_disk = (double)a.f_bavail * (double)a.f_frsize;
                        cgroup_fixture(s);
                        return;
                }
        }
        fail_msg("the free space of '%s' never held still", path);
}

/* The value of the sample line "<name> <value>" (no labels but builder). */
static double prom_value(const char *text, const char *name)
{
        char key[128];
        const char *p;

        snprintf(key, sizeof(key), "\n%s{", name);
        p = strstr(text, key);
        if (!p)
                fail_msg("%s not in the textfile:\n%s", name, text);
        p = strchr(p, '}');
        assert_non_null(p);
        return strtod(p + 1, NULL);
}

/* The first point of metric name in an OTLP JSON body. */
static double otlp_value(json_t *body, const char *name)
{
        json_t *ms = json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(body, "resourceMetrics"), 0),
                                "scopeMetrics"),
                0),
            "metrics");
        size_t i;
        json_t *m;

        json_array_foreach(ms, i, m)
        {
                json_t *g = json_object_get(m, "gauge");

                if (strcmp(json_string_value(json_object_get(m, "name")), name) != 0 || !g)
                        continue;
                return json_number_value(json_object_get(
                    json_array_get(json_object_get(g, "dataPoints"), 0), "asDouble"));
        }
        fail_msg("%s not in the OTLP body", name);
        return NAN;
}

static void test_exact_bytes_reach_exporters(void **state)
{
        static const char *const cases[] = {".", "/"}; /* two file systems, usually */
        struct sampler_config cfg = {.root = ROOT};
        char *argv[] = {(char *)(uintptr_t) "make", NULL};
        struct run_info ri = {
            .run_id = (char *)(uintptr_t) "x1",
            .kind = (char *)(uintptr_t) "run",
            .argv = argv,
            .start_epoch = 1764430820.0,
            .end_epoch = 1764430830.0,
            .finished = true,
        };
        struct otel_config oc = {.enabled = true, .protocol = OTEL_PROTOCOL_JSON};
        static struct run_facts facts; /* large: not on the stack */

        (void)state;
        targets_facts(NULL, &ri, &facts);
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                struct summary sum;
                struct run_model m = {.run = &ri, .summary = &sum, .facts = &facts};
                struct sampler *sp;
                struct otlp_metrics *om;
                struct dbuf prom = DBUF_INIT, otlp = DBUF_INIT, js = DBUF_INIT;
                struct sample s;
                json_error_t jerr;
                json_t *body;
                double disk;

                cfg.disk_path = cases[c];
                assert_int_equal(sampler_new(&cfg, &sp), 0);
                take(sp, cases[c], &s, &disk);
                /* the model holds the bytes as read */
                assert_true(s.mem_used_bytes == MEM_USED);
                assert_true(s.mem_avail_bytes == MEM_AVAIL);
                assert_true(s.swap_used_bytes == SWAP_USED);
                assert_true(s.disk_avail_bytes == disk);

                summary_init(&sum, NULL);
                summary_add(&sum, &s);
                assert_int_equal(prom_render(&m, NULL, &prom), 0);
                assert_true(prom_value(prom.p, "build_memory_peak_used_bytes") == MEM_USED);
                assert_true(prom_value(prom.p, "build_memory_min_available_bytes") == MEM_AVAIL);
                assert_true(prom_value(prom.p, "build_swap_max_used_bytes") == SWAP_USED);
                assert_true(prom_value(prom.p, "build_disk_min_available_bytes") == disk);
                assert_true(prom_value(prom.p, "build_io_read_bytes") == IO_READ);
                assert_true(prom_value(prom.p, "build_io_write_bytes") == IO_WRITE);

                assert_int_equal(otlp_metrics_new(&oc, &ri, &om), 0);
                otlp_metrics_add_sample(om, &s);
                assert_int_equal(otlp_metrics_encode(om, &m, true, &otlp), 0);
                body = json_loadb(otlp.p, otlp.len, 0, &jerr);
                assert_non_null(body);
                assert_true(otlp_value(body, "build.host.memory.usage") == MEM_USED);
                assert_true(otlp_value(body, "build.host.memory.available") == MEM_AVAIL);
                assert_true(otlp_value(body, "build.host.swap.usage") == SWAP_USED);
                assert_true(otlp_value(body, "build.host.disk.available") == disk);
                assert_true(otlp_value(body, "container.memory.usage") == CG_MEM_PEAK);
                assert_true(otlp_value(body, "build.host.memory.usage.max") == MEM_USED);
                assert_true(otlp_value(body, "build.host.memory.available.min") == MEM_AVAIL);
                assert_true(otlp_value(body, "build.host.disk.available.min") == disk);

                /* the summary keeps the CSV's precision: whole MiB, 0.01 GiB */
                assert_true(sum.mem_used_peak.value == round(MEM_USED / SAMPLE_MIB));
                assert_true(sum.build.io_read_mb == round(IO_READ / SAMPLE_MIB * 10) / 10);
                assert_true(fabs(sum.disk_avail_min.value - disk / SAMPLE_GIB) <= 0.005);
                assert_int_equal(render_summary_json(&sum, &ri, &js), 0);
                assert_non_null(strstr(js.p, "\"value\": 6276"));

                json_decref(body);
                otlp_metrics_free(om);
                sampler_free(sp);
                dbuf_release(&prom);
                dbuf_release(&otlp);
                dbuf_release(&js);
        }
}

/* The fixture's figures are not whole MiB: the old path (the CSV's value
 * multiplied back) would have missed them. */
static void test_fixture_is_not_round(void **state)
{
        (void)state;
        assert_true(MEM_USED != round(MEM_USED / SAMPLE_MIB) * SAMPLE_MIB);
        assert_true(IO_READ != round(IO_READ / SAMPLE_MIB * 10) / 10 * SAMPLE_MIB);
        assert_true(SWAP_USED != round(SWAP_USED / SAMPLE_MIB) * SAMPLE_MIB);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fixture_is_not_round),
            cmocka_unit_test(test_exact_bytes_reach_exporters),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
