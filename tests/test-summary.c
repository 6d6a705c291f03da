/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "render/summary.h"
#include "sinks/sink.h"
#include "runfiles/samplecsv.h"
#include "util/csv.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"
#include "runfiles/runjson.h"
#include "helpers/parse.h"

/* run_info holds char *; -Wwrite-strings makes literals const */
static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

static char *load(const char *name, size_t *ret_len);

/* A golden file; BUILDTEL_UPDATE_GOLDEN=1 writes got (when given) first. */
static char *golden(const char *name, const char *got, size_t *ret_len)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/csv/%s", FIXTURES, name);
        if (got && getenv("BUILDTEL_UPDATE_GOLDEN"))
                assert_int_equal(write_file_atomic(path, got, strlen(got)), 0);
        return load(name, ret_len);
}

static char *load(const char *name, size_t *ret_len)
{
        char path[512];
        char *buf;
        int n = snprintf(path, sizeof(path), "%s/csv/%s", FIXTURES, name);

        assert_true(n > 0 && (size_t)n < sizeof(path));
        assert_int_equal(read_file_at(AT_FDCWD, path, 1 << 20, &buf, ret_len), 0);
        return buf;
}

static struct sample mk(double epoch, double avail, double used, double swap, double disk,
                        double compilers, const char *stage, const char *context)
{
        struct sample s;

        sample_clear(&s);
        s.epoch = epoch;
        s.elapsed_s = epoch - 1000;
        s.mem_avail_bytes = avail * SAMPLE_MIB;
        s.mem_used_bytes = used * SAMPLE_MIB;
        s.swap_used_bytes = swap * SAMPLE_MIB;
        s.disk_avail_bytes = disk * SAMPLE_GIB;
        s.compilers = compilers;
        s.load1 = 1.0;
        s.cpu_pct = 50.0;
        s.stage = stage;
        s.context = context;
        return s;
}

static void test_accumulate(void **state)
{
        struct summary_config cfg = {.near_oom_mb = 4096, .low_disk_gb = 20};
        struct summary *s = malloc(sizeof(*s));
        struct sample a = mk(1000, 8000, 8000, 0, 30, 4, "st1", "ctx1");
        struct sample b = mk(1001, 3000, 13000, 0, 19, 2, "st2", "ctx2");
        struct sample c = mk(1002, 3000, 13000, 100, 25, NAN, "st3", "ctx3"); /* ties b */
        struct sample d = mk(1003, NAN, NAN, NAN, NAN, NAN, "st4", "ctx4");

        (void)state;
        assert_non_null(s);
        c.cpu_pct = NAN;
        c.load1 = 9.5;
        b.cpu_pct = 90.0;
        summary_init(s, &cfg);
        assert_true(isnan(s->mem_total_mb) && isnan(s->disk_avail_first));
        summary_add(s, &a);
        summary_add(s, &b);
        summary_add(s, &c);
        summary_add(s, &d);

        assert_int_equal(s->samples, 4);
        assert_true(s->first_epoch == 1000 && s->last_epoch == 1003);
        assert_true(s->mem_total_mb == 16000);
        /* ties: the first occurrence wins */
        assert_true(s->mem_used_peak.value == 13000 && s->mem_used_peak.epoch == 1001);
        assert_true(s->mem_used_peak.aux == 3000);
        assert_string_equal(s->mem_used_peak.stage, "st2");
        assert_string_equal(s->mem_used_peak.context, "ctx2");
        assert_true(s->mem_avail_min.value == 3000 && s->mem_avail_min.epoch == 1001);
        assert_true(s->swap_used_peak.value == 100);
        assert_string_equal(s->swap_used_peak.context, "ctx3");
        assert_true(s->disk_avail_min.value == 19 && s->disk_avail_min.epoch == 1001);
        assert_true(s->disk_avail_first == 30 && s->disk_avail_last == 25);
        assert_true(s->load1_peak.value == 9.5);
        /* NAN cpu skipped: (50 + 90 + 50(d)) / 3 */
        assert_int_equal(s->cpu_pct_n, 3);
        assert_true(s->cpu_pct_sum == 190.0);
        assert_true(s->cpu_pct_peak.value == 90.0 && s->cpu_pct_peak.epoch == 1001);
        assert_true(s->compilers_peak.value == 4 && s->compilers_peak.epoch == 1000);
        assert_int_equal(s->near_oom_samples, 2);
        assert_true(s->near_oom_first.epoch == 1001);
        assert_string_equal(s->near_oom_first.context, "ctx2");
        assert_true(s->near_oom_compilers_sum == 2);
        assert_int_equal(s->near_oom_compilers_n, 1);
        assert_int_equal(s->low_disk_samples, 1);
        assert_true(s->low_disk_first.epoch == 1001);
        free(s);
}

static void test_strings_cut(void **state)
{
        char big[SAMPLE_CONTEXT_MAX * 2];
        struct summary *s = malloc(sizeof(*s));
        struct sample a;

        (void)state;
        assert_non_null(s);
        memset(big, 'y', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        a = mk(1000, 8000, 8000, 0, 30, 4, big, big);
        summary_init(s, NULL);
        assert_true(s->cfg.near_oom_mb == 4096 && s->cfg.low_disk_gb == 20);
        summary_add(s, &a);
        assert_int_equal(strlen(s->mem_used_peak.stage), SAMPLE_STAGE_MAX);
        assert_int_equal(strlen(s->mem_used_peak.context), SAMPLE_CONTEXT_MAX);
        free(s);
}

/* The property the design rests on: the live path (format, parse back,
 * add) and `summarize FILE.csv` give the same bytes. */
static void test_live_equals_file(void **state)
{
        static const char *const contexts[] = {
            "",
            "CXX a,b.o",
            "say \"hi\"",
            "line1\nline2",
            "cr\r\nlf",
            "\xff\xfe not utf-8 \xc0\xaf",
            "\x1b[31mred\x1b[0m",
            "\",\"\",",
        };
        char *argv[] = {M("make"), M("-j16"), M("CFLAGS=-O2 -g"), M("it's \xff"), NULL};
        struct run_info ri = {
            .run_id = M("r1"),
            .kind = M("run"),
            .argv = argv,
            .cwd = M("/w"),
            .host = M("h"),
            .start_epoch = 1764430819.987654321,
            .end_epoch = 1764430900.5,
            .finished = true,
            .exit_code = 0,
            .ncpu = 16,
            .interval = 0.5,
            .pid = 77,
        };
        struct run_info ri_file;
        struct summary *live = malloc(sizeof(*live)), *file = malloc(sizeof(*file));
        struct dbuf csv = DBUF_INIT, row = DBUF_INIT, rj = DBUF_INIT;
        struct dbuf out_live = DBUF_INIT, out_file = DBUF_INIT;
        struct csv_record rec = CSV_RECORD_INIT;
        size_t consumed;
        const int n = 200;

        (void)state;
        assert_non_null(live);
        assert_non_null(file);
        summary_init(live, NULL);
        summary_init(file, NULL);
        assert_int_equal(samplecsv_header(&csv), 0);

        for (int i = 0; i < n; i++) {
                struct sample s;

                sample_clear(&s);
                s.epoch = 1764430820.0 + i * 0.4999 + 0.00049;
                s.elapsed_s = i * 0.4999 + 0.0125;
                s.load1 = 1.005 + i * 0.0333;
                s.cpu_pct = (i % 7 == 0) ? NAN : 33.35 + (i % 13) * 4.44;
                s.mem_used_bytes = (20000.5 + (i % 17) * 777.77) * SAMPLE_MIB;
                s.mem_avail_bytes =
                    ((i % 11 == 0) ? NAN : 6000.49 - (i % 23) * 250.25) * SAMPLE_MIB;
                s.mem_pct = 66.65 + (i % 5) * 0.05;
                s.swap_used_bytes = (i > 150 ? (i - 150) * 1.5 : 0) * SAMPLE_MIB;
                s.disk_avail_bytes = (40.005 - i * 0.1 + (i % 3) * 0.015) * SAMPLE_GIB;
                s.disk_pct = 80.05;
                s.compilers = (i % 9 == 0) ? NAN : (double)(i % 6);
                s.stage = (i % 2) ? "build" : "link, \"final\"";
                s.context = contexts[i % ARRAY_SIZE(contexts)];
                /* the build's figures, in bytes as a cgroup gives them */
                s.cg_mode = "v2";
                s.cg_cpu_user_s = i * 0.01234567;
                s.cg_mem_bytes = 1000003.0 * (i % 37) + 4095;
                s.cg_mem_peak_bytes = 1000003.0 * MIN(i, 36) + 4095;
                s.cg_oom_kills = i / 60;
                s.cg_io_read_bytes = 123457.0 * i;
                s.cg_psi.some_s[PSI_MEM] = i * 0.0004999;
                s.cg_pids = i % 5;
                s.top_proc = (i % 3) ? "cc1plus big.cpp" : "";
                s.top_proc_bytes = (i % 3) ? 4096.0 * (1000 + i * 37) : NAN;
                s.top_pid = (i % 3) ? 1000 + i / 10 : NAN;

                dbuf_reset(&row);
                assert_int_equal(samplecsv_format(&s, &row), 0);
                assert_int_equal(dbuf_append(&csv, row.p, row.len), 0);
                assert_true(csv_parse_record(row.p, row.len, &rec, &consumed) > 0);
                assert_int_equal(consumed, row.len);
                /* the live path: the sample as read, no text read back */
                summary_add(live, &s);
        }
        /* the header is buildtel's and every row reads back */
        assert_int_equal(samplecsv_summary(csv.p, csv.len, file), n);
        assert_int_equal(file->skipped_rows, 0);

        /* the file path also reads its run facts back from run.json */
        assert_int_equal(runjson_format(&ri, &rj), 0);
        assert_int_equal(runjson_parse(rj.p, rj.len, &ri_file), 0);

        assert_int_equal(render_summary_json(live, &ri, &out_live), 0);
        assert_int_equal(render_summary_json(file, &ri_file, &out_file), 0);
        assert_int_equal(out_live.len, out_file.len);
        assert_memory_equal(out_live.p, out_file.p, out_live.len);
        /* the figures are there, rounded as recorded, and readings fired */
        assert_non_null(strstr(out_live.p, "\"samples\": 200"));
        assert_non_null(strstr(out_live.p, "\"id\": \"oom_edge\""));
        assert_non_null(strstr(out_live.p, "\"id\": \"disk_falling\""));
        assert_non_null(strstr(out_live.p, "\"id\": \"ram_bound\""));
        assert_non_null(strstr(out_live.p, "\"command\": [\n      \"make\""));
        assert_null(strstr(out_live.p, "0000000"));
        assert_null(strstr(out_live.p, "9999999"));
        /* the exact figures are the bytes as read, the replay's the CSV's */
        assert_true(live->exact.cg_io_read_bytes == 123457.0 * (n - 1));
        assert_true(file->exact.cg_io_read_bytes ==
                    round(123457.0 * (n - 1) / SAMPLE_MIB * 10) / 10 * SAMPLE_MIB);
        assert_true(live->exact.cg_mem_peak_bytes == 1000003.0 * 36 + 4095);
        assert_true(fabs(live->exact.disk_avail_min_bytes / SAMPLE_GIB -
                         live->disk_avail_min.value) <= 0.005 + 1e-12);

        dbuf_reset(&out_live);
        dbuf_reset(&out_file);
        assert_int_equal(render_summary_text(live, &ri, &out_live), 0);
        assert_int_equal(render_summary_text(file, &ri_file, &out_file), 0);
        assert_string_equal(out_live.p, out_file.p);
        /* and a second rendering is the same again */
        dbuf_reset(&out_file);
        assert_int_equal(render_summary_text(live, &ri, &out_file), 0);
        assert_string_equal(out_live.p, out_file.p);

        run_info_release(&ri_file);
        csv_record_release(&rec);
        dbuf_release(&csv);
        dbuf_release(&row);
        dbuf_release(&rj);
        dbuf_release(&out_live);
        dbuf_release(&out_file);
        free(live);
        free(file);
}

static void test_skipped_rows(void **state)
{
        struct summary *s = malloc(sizeof(*s));
        size_t len;
        char *buf;

        (void)state;
        assert_non_null(s);
        summary_init(s, NULL);
        buf = load("torn-junk.csv", &len);
        /* good: 100, 104 (quoted newline), 105; skipped: wrong count, "ten",
         * stray quote, empty line, torn last row */
        assert_int_equal(samplecsv_summary(buf, len, s), 3);
        assert_int_equal(s->skipped_rows, 5);
        assert_int_equal(s->samples, 3);
        assert_true(s->first_epoch == 100 && s->last_epoch == 105);
        assert_true(s->mem_used_peak.value == 1200);
        assert_string_equal(s->load1_peak.context, "c3");
        assert_true(s->mem_avail_min.value == 2800);
        assert_int_equal(s->near_oom_samples, 3);
        assert_int_equal(s->low_disk_samples, 3);
        assert_string_equal(s->low_disk_first.context, "c1");
        assert_true(s->cpu_pct_peak.value == 30.0 && s->cpu_pct_peak.epoch == 105);
        assert_true(s->compilers_peak.value == 4);
        /* row 104's context spans two lines */
        summary_init(s, &(struct summary_config){.near_oom_mb = 2950, .low_disk_gb = 20});
        assert_int_equal(samplecsv_summary(buf, len, s), 3);
        assert_string_equal(s->near_oom_first.context, "multi\nline, context");
        free(buf);

        summary_init(s, NULL);
        buf = load("not-buildtel.csv", &len);
        assert_int_equal(samplecsv_summary(buf, len, s), -EINVAL);
        free(buf);
        assert_int_equal(samplecsv_summary("", 0, s), -EINVAL);
        assert_int_equal(samplecsv_summary("epoch,iso", 9, s), -EINVAL);

        buf = load("header-only.csv", &len);
        assert_int_equal(samplecsv_summary(buf, len, s), 0);
        assert_int_equal(s->skipped_rows, 0);
        free(buf);
        free(s);
}

/* A golden file: the whole JSON of a small recorded run, as reviewed. */
static void test_golden(void **state)
{
        char *argv[] = {M("make"), M("-j8"), M("it's"), NULL};
        struct run_info ri = {
            .run_id = M("20251129-154020-ab12"),
            .kind = M("run"),
            .argv = argv,
            .cwd = M("/src"),
            .host = M("box"),
            .start_epoch = 1764430819.5,
            .end_epoch = NAN,
            .finished = false,
            .exit_code = -1,
            .term_signal = 9,
            .ncpu = 8,
            .interval = 1.0,
            .pid = 4242,
        };
        struct summary *s = malloc(sizeof(*s));
        struct dbuf out = DBUF_INIT;
        char *buf, *want;
        size_t len, wlen;

        (void)state;
        assert_non_null(s);
        summary_init(s, NULL);
        buf = load("small.csv", &len);
        assert_int_equal(samplecsv_summary(buf, len, s), 4);
        assert_int_equal(render_summary_json(s, &ri, &out), 0);
        want = golden("small.summary.json", out.p, &wlen);
        assert_string_equal(out.p, want);
        free(want);

        dbuf_reset(&out);
        assert_int_equal(render_summary_text(s, &ri, &out), 0);
        want = golden("small.summary.txt", out.p, &wlen);
        assert_string_equal(out.p, want);
        free(want);

        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        want = golden("small.short.txt", out.p, &wlen);
        assert_string_equal(out.p, want);
        free(want);

        free(buf);
        dbuf_release(&out);
        free(s);
}

struct reading_case {
        const char *name;
        double avail[3], used, swap, disk[3], compilers;
        unsigned ncpu;
        bool oom_edge, disk_falling, ram_bound;
};

static const struct reading_case reading_cases[] = {
    /* name         avail                used    swap disk               comp ncpu */
    {"quiet", {30000, 29000, 28000}, 4000, 0, {100, 100, 100}, 8, 16, false, false, false},
    {"swap", {30000, 29000, 28000}, 4000, 1, {100, 100, 100}, 8, 16, true, false, false},
    {"avail<512", {30000, 511, 28000}, 4000, 0, {100, 100, 100}, 8, 16, true, false, false},
    /* total is 34000 MiB: 5% is 1700 */
    {"avail<5%", {30000, 1699, 28000}, 4000, 0, {100, 100, 100}, 8, 16, true, false, false},
    {"avail>5%", {30000, 1701, 28000}, 4000, 0, {100, 100, 100}, 8, 16, false, false, false},
    {"disk falls to 29", {30000, 29000, 28000}, 4000, 0, {40, 35, 29}, 8, 16, false, true, false},
    {"disk falls to 31", {30000, 29000, 28000}, 4000, 0, {40, 35, 31}, 8, 16, false, false, false},
    {"disk low but rising",
     {30000, 29000, 28000},
     4000,
     0,
     {10, 12, 15},
     8,
     16,
     false,
     false,
     false},
    {"disk below, falling",
     {30000, 29000, 28000},
     4000,
     0,
     {19, 15, 12},
     8,
     16,
     false,
     true,
     false},
    {"ram bound", {30000, 4000, 3000}, 4000, 0, {100, 100, 100}, 7, 16, false, false, true},
    {"busy, not ram bound",
     {30000, 4000, 3000},
     4000,
     0,
     {100, 100, 100},
     8,
     16,
     false,
     false,
     false},
    {"ncpu unknown", {30000, 4000, 3000}, 4000, 0, {100, 100, 100}, 1, 0, false, false, false},
    {"no near-oom", {30000, 5000, 4100}, 4000, 0, {100, 100, 100}, 1, 16, false, false, false},
};

static void test_readings(void **state)
{
        struct summary *s = malloc(sizeof(*s));

        (void)state;
        assert_non_null(s);
        for (size_t i = 0; i < ARRAY_SIZE(reading_cases); i++) {
                const struct reading_case *c = &reading_cases[i];
                struct run_info ri = {.exit_code = 0,
                                      .ncpu = c->ncpu,
                                      .finished = true,
                                      .start_epoch = 1000,
                                      .end_epoch = 1003};
                struct dbuf out = DBUF_INIT, txt = DBUF_INIT;

                print_message("case %s\n", c->name);
                summary_init(s, NULL);
                for (int k = 0; k < 3; k++) {
                        struct sample smp = mk(1000 + k, c->avail[k], c->used, c->swap, c->disk[k],
                                               c->compilers, "st", "ctx");
                        summary_add(s, &smp);
                }
                assert_int_equal(render_summary_json(s, &ri, &out), 0);
                assert_int_equal(strstr(out.p, "\"id\": \"oom_edge\"") != NULL, c->oom_edge);
                assert_int_equal(strstr(out.p, "\"id\": \"disk_falling\"") != NULL,
                                 c->disk_falling);
                assert_int_equal(strstr(out.p, "\"id\": \"ram_bound\"") != NULL, c->ram_bound);
                assert_int_equal(render_summary_text(s, &ri, &txt), 0);
                assert_int_equal(strstr(txt.p, "OOM edge: ") != NULL, c->oom_edge);
                assert_int_equal(strstr(txt.p, "disk falling toward the threshold") != NULL,
                                 c->disk_falling);
                assert_int_equal(strstr(txt.p, "the stage is RAM-bound") != NULL, c->ram_bound);
                dbuf_release(&out);
                dbuf_release(&txt);
        }
        free(s);
}

static size_t count_lines(const char *p)
{
        size_t n = 0;

        for (; *p; p++)
                n += *p == '\n';
        return n;
}

static void set_cg(struct sample *x, double mb, double peak_mb, double anon_mb, double file_mb)
{
        x->cg_mem_bytes = mb * SAMPLE_MIB;
        x->cg_mem_peak_bytes = peak_mb * SAMPLE_MIB;
        x->cg_mem_anon_bytes = anon_mb * SAMPLE_MIB;
        x->cg_mem_file_bytes = file_mb * SAMPLE_MIB;
}

static void test_short_lines(void **state)
{
        struct summary *s = malloc(sizeof(*s));
        struct run_info ri = {
            .exit_code = 2, .ncpu = 64, .finished = true, .start_epoch = 1000, .end_epoch = 4723.4};
        struct dbuf out = DBUF_INIT;
        struct sample a = mk(1000, 100, 60000, 50, 30, 1, "st", "evil\x1b]0;title\x07\nline");
        struct sample b = mk(1001, 200, 50000, 10, 10, 1, "st", "ctx");

        (void)state;
        assert_non_null(s);
        /* no samples at all: still three lines */
        summary_init(s, NULL);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        assert_int_equal(count_lines(out.p), 3);
        assert_string_equal(out.p, "buildtel: 1h02m03s, exit 2\n"
                                   "buildtel: peak memory unknown\n"
                                   "buildtel: minimum disk unknown\n");

        /* everything fires: 3 + 3 readings, warnings folded into their lines */
        summary_add(s, &a);
        summary_add(s, &b);
        ri.term_signal = 9;
        ri.finished = false;
        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        assert_int_equal(count_lines(out.p), 6);
        assert_null(strchr(out.p, '\x1b'));
        assert_null(strchr(out.p, '\x07'));
        assert_non_null(strstr(out.p, "buildtel: 1h02m03s, killed by SIGKILL, incomplete\n"));
        assert_non_null(strstr(out.p, "buildtel: peak memory 58.6 GiB used (100 MiB available) "
                                      "at +0.0s, stage st, while evil?]0;title??line; "
                                      "2 near-OOM samples (available < 4.00 GiB)\n"));
        assert_non_null(strstr(out.p, "buildtel: minimum disk 10.0 GiB available at +1.0s; "
                                      "1 low-disk samples (available < 20.0 GiB)\n"));

        /* What was running leads, the printed line second (issue 21: on ninja
         * builds the context named an edge that had ended 15-19 s before). */
        a.running = "heavy.c s5.c";
        a.context = "[105/168] Linking CXX executable done-long-ago";
        summary_init(s, NULL);
        summary_add(s, &a);
        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        print_message("%s", out.p);
        assert_non_null(strstr(out.p, "at +0.0s, stage st, running heavy.c s5.c (last printed: "
                                      "[105/168] Linking CXX executable done-long-ago)"));
        a.running = "";

        /* The build's peak and its anon peak. Seen on a real redis build: the
         * kernel's 682 MiB was 385 MiB page cache, and the line named only it. */
        a.cg_mode = b.cg_mode = "hybrid";
        set_cg(&a, 681.5, 681.5, 286.1, 384.6);
        set_cg(&b, 568.5, 682.0, 176.4, 381.8);
        summary_init(s, NULL);
        summary_add(s, &a);
        summary_add(s, &b);
        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        /* 681.5 then 682.0: within a charge batch, the peak's moment is
         * the first row's */
        print_message("%s", out.p);
        /* the working memory first, the kernel's peak with its page cache
         * said in words (issue 35) */
        assert_non_null(strstr(out.p, "buildtel: working memory (anon) peak 286 MiB at +0.0s; the "
                                      "kernel's peak 682 MiB, 385 MiB of it page cache, by +0.0s, stage st; cpu "));

        /* Memory that adds up (issue 21): the demo's cc1 had 49.0 MiB RSS in
         * a build whose anon peaked at 44.5 MiB; its own anon is said beside
         * its RSS, and why its RSS is larger. */
        set_cg(&a, 60.0, 60.0, 44.5, 15.5);
        set_cg(&b, 50.0, 60.0, 40.0, 10.0);
        a.top_proc = "cc1 demo.c";
        a.top_proc_bytes = 49.0 * SAMPLE_MIB;
        a.top_proc_anon_bytes = 38.5 * SAMPLE_MIB;
        a.top_pid = 9;
        summary_init(s, NULL);
        summary_add(s, &a);
        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        print_message("%s", out.p);
        assert_non_null(strstr(out.p, ", largest process cc1 demo.c 49.0 MiB (anon 38.5 MiB, pid 9) (its RSS is "
                                      "above the build's anon peak: RSS counts the file pages "
                                      "it maps, the compiler and its libraries, shared)"));
        /* below the anon peak: no word needed */
        a.top_proc_bytes = 30.0 * SAMPLE_MIB;
        summary_init(s, NULL);
        summary_add(s, &a);
        dbuf_reset(&out);
        assert_int_equal(render_summary_short(s, &ri, &out), 0);
        assert_non_null(strstr(out.p, ", largest process cc1 demo.c 30.0 MiB (anon 38.5 MiB, pid 9)"));
        assert_null(strstr(out.p, "above the build's anon peak"));
        dbuf_release(&out);
        free(s);
}

/* The summary sink (sinks/sink-summary.c) writes what the renderers give. */
static void test_write_files(void **state)
{
        char dir[] = "/tmp/test-summary-XXXXXX", txt[96], json[96], id[] = "s1";
        struct summary *s = malloc(sizeof(*s));
        struct run_info ri = {.run_id = id, .start_epoch = NAN, .end_epoch = NAN, .exit_code = -1};
        struct run_model m = {.run = &ri};
        struct sink_ctx ctx = {.run = &ri};
        struct dbuf want = DBUF_INIT;
        void *st = NULL;
        char *got;
        size_t len;

        (void)state;
        assert_non_null(s);
        assert_non_null(mkdtemp(dir));
        assert_true(snprintf(txt, sizeof(txt), "%s/resources-s1.summary.txt", dir) <
                    (int)sizeof(txt));
        assert_true(snprintf(json, sizeof(json), "%s/resources-s1.summary.json", dir) <
                    (int)sizeof(json));
        summary_init(s, NULL);
        m.summary = s;
        ctx.log_dir = dir;
        assert_int_equal(sink_summary.open(&ctx, &st), 0);
        assert_int_equal(sink_summary.finish(st, &m), 0);
        sink_summary.close(st);
        assert_int_equal(read_file_at(AT_FDCWD, json, 1 << 20, &got, &len), 0);
        assert_int_equal(render_summary_json(s, &ri, &want), 0);
        assert_string_equal(got, want.p);
        free(got);
        assert_int_equal(read_file_at(AT_FDCWD, txt, 1 << 20, &got, &len), 0);
        assert_non_null(strstr(got, "samples: 0 (skipped rows: 0)\n"));
        free(got);
        /* a directory that is not there: the error comes back */
        ctx.log_dir = "/nonexistent";
        assert_int_equal(sink_summary.open(&ctx, &st), 0);
        assert_int_equal(sink_summary.finish(st, &m), -ENOENT);
        sink_summary.close(st);
        unlink(txt);
        unlink(json);
        rmdir(dir);
        dbuf_release(&want);
        free(s);
}

/* The OOM victim: the kernel's report when a row has one, else the process
 * that vanished, else the last one sampled; a build killed before the
 * first tick (baseline row, final row) still gets the kernel's. */
static void test_oom_victim(void **state)
{
        static const struct {
                const char *name;
                /* rows: oom count, top process (label, pid; NULL none), kernel victim */
                struct {
                        double kills;
                        const char *top;
                        double top_pid;
                        const char *kvictim;
                        double kpid;
                } rows[4];
                size_t n;
                const char *want, *source;
                double want_pid;
                int term_signal; /* the build's end (summary_end_run), 0: exited */
        } cases[] = {
            {"before the first tick: the kernel's",
             {{0, NULL, NAN, "", NAN}, {1, NULL, NAN, "cgload", 42}},
             2,
             "cgload",
             "kernel",
             42,
             0},
            {"before the first tick, no report: unknown",
             {{0, NULL, NAN, "", NAN}, {1, NULL, NAN, "", NAN}},
             2,
             "",
             "",
             NAN,
             0},
            {"the kernel's beats the vanished one, and takes its label",
             {{0, "cc1plus big.cpp", 7, "", NAN}, {1, NULL, NAN, "cc1plus", 7}},
             2,
             "cc1plus big.cpp",
             "kernel",
             7,
             0},
            {"no report: the one that vanished",
             {{0, "ld app", 9, "", NAN}, {0, "ld app", 9, "", NAN}, {1, "make", 3, "", NAN}},
             3,
             "ld app",
             "last seen",
             9,
             0},
            {"a stale report (the last kill's) is not this kill's victim",
             {{0, "b x", 6, "", NAN}, {1, NULL, NAN, "a", 5}, {2, NULL, NAN, "a", 5}},
             3,
             "b x",
             "last seen",
             6,
             0},
            {"no report, never sampled, the build SIGKILLed: the build's process",
             {{0, NULL, NAN, "", NAN}, {1, NULL, NAN, "", NAN}},
             2,
             "memhog",
             "the build",
             4242,
             9},
            {"no report, never sampled, the build exited 1: unknown",
             {{0, NULL, NAN, "", NAN}, {1, NULL, NAN, "", NAN}},
             2,
             "",
             "",
             NAN,
             0},
            {"the kernel's stays the kernel's when the build was SIGKILLed",
             {{0, NULL, NAN, "", NAN}, {1, NULL, NAN, "cc1", 77}},
             2,
             "cc1",
             "kernel",
             77,
             9},
            {"no report, the last row saw the kill as the build died of SIGKILL: the build's, "
             "not the one that vanished (tests/vm/hog's cat)",
             {{0, "cat /proc/self/cgroup", 5, "", NAN}, {1, NULL, NAN, "", NAN}},
             2,
             "memhog",
             "the build",
             4242,
             9},
            {"no report, a kill before the last row, the build SIGKILLed later: the vanished one",
             {{0, "ld app", 9, "", NAN}, {1, "make", 3, "", NAN}, {1, "make", 3, "", NAN}},
             3,
             "ld app",
             "last seen",
             9,
             9},
            {"the kernel's pid ran another program when sampled: its name, not that label",
             {{0, "cat /proc/self/cgroup", 5, "", NAN}, {1, NULL, NAN, "memhog", 5}},
             2,
             "memhog",
             "kernel",
             5,
             0},
        };
        char a0[] = "/usr/local/bin/memhog", a1[] = "300";
        char *argv[] = {a0, a1, NULL};
        struct summary *s = malloc(sizeof(*s));

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct summary_oom *e;

                print_message("%s\n", cases[i].name);
                summary_init(s, NULL);
                for (size_t k = 0; k < cases[i].n; k++) {
                        struct sample smp = mk(1000 + (double)k, 1000, 1000, 0, 10, 1, "", "");

                        smp.cg_mode = "v2";
                        smp.cg_oom_kills = cases[i].rows[k].kills;
                        if (cases[i].rows[k].top) {
                                smp.top_proc = cases[i].rows[k].top;
                                smp.top_pid = cases[i].rows[k].top_pid;
                                smp.top_proc_bytes = 100 * SAMPLE_MIB;
                        }
                        smp.oom_victim = cases[i].rows[k].kvictim;
                        smp.oom_victim_pid = cases[i].rows[k].kpid;
                        summary_add(s, &smp);
                }
                {
                        struct run_info ri = {
                            .argv = argv, .pid = 4242, .term_signal = cases[i].term_signal};

                        summary_end_run(s, &ri);
                }
                assert_true(s->build.noom >= 1);
                e = &s->build.oom[s->build.noom - 1];
                assert_string_equal(e->victim.label, cases[i].want);
                assert_string_equal(e->victim_source, cases[i].source);
                if (cases[i].want[0])
                        assert_true(e->victim.pid == cases[i].want_pid);
        }

        /* The build was a script that exec'd memhog (tests/vm/hog): the
         * name it died under, not argv[0]'s (vm-check named "hog"). */
        {
                char h0[] = "/usr/local/bin/hog", comm[] = "memhog";
                char *hargv[] = {h0, a1, NULL};
                struct run_info ri = {
                    .argv = hargv, .pid = 351, .term_signal = 9, .exit_comm = comm};
                struct sample smp = mk(1000, 1000, 1000, 0, 10, 1, "", "");

                summary_init(s, NULL);
                smp.cg_mode = "v2";
                smp.cg_oom_kills = 0;
                summary_add(s, &smp);
                smp = mk(1001, 1000, 1000, 0, 10, 1, "", "");
                smp.cg_mode = "v2";
                smp.cg_oom_kills = 1;
                summary_add(s, &smp);
                summary_end_run(s, &ri);
                assert_int_equal(s->build.noom, 1);
                assert_string_equal(s->build.oom[0].victim.label, "memhog");
                assert_string_equal(s->build.oom[0].victim_source, "the build");
                assert_true(s->build.oom[0].victim.pid == 351);
                /* without it, argv[0]'s last part */
                ri.exit_comm = NULL;
                s->build.oom[0].victim.label[0] = '\0';
                summary_end_run(s, &ri);
                assert_string_equal(s->build.oom[0].victim.label, "hog");
        }
        free(s);
}

/* The edges running at a peak, from .ninja_log (issue 21): placed only
 * where the row named nothing running, on the run's clock, ".o" dropped,
 * "+N" for what does not fit. */
static void test_place_edges(void **state)
{
        struct ninja_edge ev[3] = {{.start_ms = 0, .end_ms = 500, .output = "obj/a.cpp.o"},
                                   {.start_ms = 400, .end_ms = 3000, .output = "obj/big.cpp.o"},
                                   {.start_ms = 2500, .end_ms = 2600, .output = "lib.so"}};
        struct ninja_edge many[80];
        struct summary *s = malloc(sizeof(*s));

        (void)state;
        assert_non_null(s);
        summary_init(s, NULL);
        s->build.mem_peak = (struct summary_point){.set = true, .elapsed_s = 2.55};
        s->mem_used_peak = (struct summary_point){.set = true, .elapsed_s = 1.2};
        s->disk_avail_min = (struct summary_point){.set = true, .elapsed_s = 0.1};
        copy_utf8_str(s->disk_avail_min.running, sizeof(s->disk_avail_min.running), "x.c");
        s->cpu_pct_peak = (struct summary_point){.set = true, .elapsed_s = 9};
        /* ninja's 0 is 1.0 s into the run */
        summary_place_edges(s, ev, 3, 1.0);
        assert_string_equal(s->build.mem_peak.running, "big.cpp");     /* 1.4..4.0 */
        assert_string_equal(s->mem_used_peak.running, "a.cpp");        /* 1.0..1.5 */
        assert_string_equal(s->disk_avail_min.running, "x.c");         /* its own stays */
        assert_string_equal(s->cpu_pct_peak.running, "");              /* after every edge */
        assert_string_equal(s->low_disk_first.running, "");            /* not set */
        s->build.mem_peak.running[0] = '\0';
        summary_place_edges(s, ev, 3, 0.0); /* 2.55: big.cpp and lib.so */
        assert_string_equal(s->build.mem_peak.running, "big.cpp lib.so");
        /* no offset, no edges: nothing */
        s->build.mem_peak.running[0] = '\0';
        summary_place_edges(s, ev, 3, NAN);
        summary_place_edges(s, NULL, 0, 0.0);
        assert_string_equal(s->build.mem_peak.running, "");
        /* more than fit: cut with a count, within the column's size */
        for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
                many[i] = (struct ninja_edge){.start_ms = 0, .end_ms = 10000};
                snprintf(many[i].output, sizeof(many[i].output), "dir/unit%02zu.c.o", i);
        }
        summary_place_edges(s, many, ARRAY_SIZE(many), 0.0);
        assert_true(strlen(s->build.mem_peak.running) <= SAMPLE_RUNNING_MAX);
        assert_true(strncmp(s->build.mem_peak.running, "unit00.c unit01.c", 17) == 0);
        assert_non_null(strstr(s->build.mem_peak.running, " +"));
        free(s);
}

/* The kernel's peak at a row's own sample names that row; between two
 * rows (the row's sample below it), both rows' units, and the larger of
 * their largest processes (a -j2 build whose largest unit ended between
 * two rows). */
static void test_peak_running(void **state)
{
        /* rows: top process and its MiB, running, the kernel's peak and the
         * sampled memory (0: not read) */
        static const struct {
                const char *name;
                struct {
                        const char *top, *running;
                        double top_mb, peak_mb, cur_mb;
                } rows[3];
                const char *want_proc, *want_running;
        } cases[] = {
            {"the peak is the row's own sample: that row's culprit and units",
             {{"cc1 a.c", "a.c", 50, 60, 60},
              {"cc1 heavy.c", "heavy.c s5.c", 250, 260, 259.5},
              {NULL, NULL, 0, 0, 0}},
             "cc1 heavy.c",
             "heavy.c s5.c"},
            {"between the rows, the culprit ended before the row: both rows' units, the "
             "earlier first",
             {{"cc1 heavy.c", "heavy.c s4.c", 250, 100, 100},
              {"cc1 s5.c", "s5.c s4.c", 40, 270, 45},
              {NULL, NULL, 0, 0, 0}},
             "cc1 heavy.c",
             "heavy.c s4.c s5.c"},
            {"between the rows, the culprit still running (zstd at -j2): both rows' units",
             {{"cc1 zstd_lazy.c", "zstd_lazy.c huf_decompress.c", 158.5, 222.9, 222.9},
              {"cc1 zstd_lazy.c", "zstd_lazy.c zstd_ddict.c", 170.7, 249.8, 185.7},
              {NULL, NULL, 0, 0, 0}},
             "cc1 zstd_lazy.c",
             "zstd_lazy.c huf_decompress.c zstd_ddict.c"},
            {"the sample not read: between the rows",
             {{"cc1 heavy.c", "heavy.c", 250, 100, 0},
              {"cc1 s5.c", "s5.c", 40, 270, 0},
              {NULL, NULL, 0, 0, 0}},
             "cc1 heavy.c",
             "heavy.c s5.c"},
            {"a count stays with its unit",
             {{"rustc big", "big x2 a.c", 300, 100, 100},
              {"cc1 b.c", "big b.c a.c x3", 20, 400, 30},
              {NULL, NULL, 0, 0, 0}},
             "rustc big",
             "big x2 a.c b.c"},
            {"the earlier row named nothing running",
             {{"cc1 heavy.c", "", 250, 100, 100},
              {"ld", "prog", 20, 300, 25},
              {NULL, NULL, 0, 0, 0}},
             "cc1 heavy.c",
             "prog"},
            {"a rise within the kernel's charge batch: the value, not the moment",
             {{"memhog", "", 300, 300, 300}, {"ninja", "", 2, 300.5, 3}, {NULL, NULL, 0, 0, 0}},
             "memhog",
             ""},
            {"a later row without a new peak changes nothing",
             {{"cc1 heavy.c", "heavy.c", 250, 100, 100},
              {"cc1 s5.c", "s5.c", 40, 270, 45},
              {"ld", "prog", 300, 270, 270}},
             "cc1 heavy.c",
             "heavy.c s5.c"},
        };
        struct summary *s = malloc(sizeof(*s));
        char long_a[SAMPLE_RUNNING_MAX + 1], long_b[64];

        (void)state;
        assert_non_null(s);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                summary_init(s, NULL);
                for (size_t k = 0; k < 3 && cases[i].rows[k].top; k++) {
                        struct sample smp = mk(1000 + (double)k, 8000, 4000, 0, 50, 1, "", "");

                        smp.cg_mode = "v2";
                        smp.top_proc = cases[i].rows[k].top;
                        smp.top_proc_bytes = cases[i].rows[k].top_mb * SAMPLE_MIB;
                        smp.running = cases[i].rows[k].running;
                        smp.cg_mem_peak_bytes = cases[i].rows[k].peak_mb * SAMPLE_MIB;
                        smp.cg_mem_bytes = cases[i].rows[k].cur_mb > 0
                                               ? cases[i].rows[k].cur_mb * SAMPLE_MIB
                                               : NAN;
                        summary_add(s, &smp);
                }
                print_message("%s\n", cases[i].name);
                assert_true(s->build.mem_peak.value ==
                            MAX(cases[i].rows[0].peak_mb, cases[i].rows[1].peak_mb));
                assert_string_equal(s->build.mem_peak_proc.label, cases[i].want_proc);
                assert_string_equal(s->build.mem_peak.running, cases[i].want_running);
        }

        /* the batch case's moment is the first row's; a rise past the batch
         * moves it */
        for (int past = 0; past < 2; past++) {
                struct sample a = mk(1000, 8000, 4000, 0, 50, 1, "", ""), b = a;

                a.cg_mode = b.cg_mode = "v2";
                a.cg_mem_peak_bytes = 300 * SAMPLE_MIB;
                b.cg_mem_peak_bytes = (past ? 301.5 : 301.0) * SAMPLE_MIB;
                b.epoch = 1001;
                b.elapsed_s = 1;
                summary_init(s, NULL);
                summary_add(s, &a);
                summary_add(s, &b);
                assert_true(s->build.mem_peak.value == (past ? 301.5 : 301.0));
                assert_true(s->build.mem_peak.elapsed_s == (past ? 1.0 : 0.0));
        }

        /* what does not fit whole is left out, within the column's size */
        memset(long_a, 'a', sizeof(long_a) - 1);
        long_a[SAMPLE_RUNNING_MAX - 10] = ' ';
        long_a[SAMPLE_RUNNING_MAX - 5] = '\0';
        snprintf(long_b, sizeof(long_b), "b.c %s c.c", "x.c");
        summary_init(s, NULL);
        {
                struct sample a = mk(1000, 8000, 4000, 0, 50, 1, "", ""), b = a;

                a.top_proc = "cc1 big";
                a.top_proc_bytes = 300 * SAMPLE_MIB;
                a.running = long_a;
                a.cg_mem_peak_bytes = 100 * SAMPLE_MIB;
                b.epoch = 1001;
                b.top_proc = "cc1 b.c";
                b.top_proc_bytes = 10 * SAMPLE_MIB;
                b.running = long_b;
                b.cg_mem_peak_bytes = 400 * SAMPLE_MIB;
                summary_add(s, &a);
                summary_add(s, &b);
        }
        assert_true(strlen(s->build.mem_peak.running) <= SAMPLE_RUNNING_MAX);
        assert_true(strncmp(s->build.mem_peak.running, long_a, strlen(long_a)) == 0);
        assert_string_equal(s->build.mem_peak.running + strlen(long_a), " b.c");
        free(s);
}

/* The -j reading's memory, one rule for the summary and the report: the
 * cap when there is one below the host's RAM, else the RAM. */
static void test_jobs_mem(void **state)
{
        struct summary s;

        (void)state;
        summary_init(&s, &(struct summary_config){.mem_cap_mb = 2048});
        s.mem_total_mb = 8192;
        assert_float_equal(summary_jobs_mem_mb(&s), 2048, 0);
        s.mem_total_mb = 1024; /* a cap above the RAM does not bind */
        assert_float_equal(summary_jobs_mem_mb(&s), 1024, 0);
        summary_init(&s, &(struct summary_config){0});
        s.mem_total_mb = 8192;
        assert_float_equal(summary_jobs_mem_mb(&s), 8192, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_accumulate),       cmocka_unit_test(test_strings_cut),
            cmocka_unit_test(test_live_equals_file), cmocka_unit_test(test_skipped_rows),
            cmocka_unit_test(test_golden),           cmocka_unit_test(test_readings),
            cmocka_unit_test(test_short_lines),      cmocka_unit_test(test_write_files),
            cmocka_unit_test(test_oom_victim),       cmocka_unit_test(test_place_edges),
            cmocka_unit_test(test_peak_running),     cmocka_unit_test(test_jobs_mem),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
