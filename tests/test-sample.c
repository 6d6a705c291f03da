/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/sample.h"
#include "util/csv.h"
#include "util/macro.h"

#define HEADER                                                                                     \
        "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,"         \
        "disk_avail_gb,disk_pct,compilers,stage,context" CG_HEADER
#define SEED_HEADER                                                                                \
        "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,"         \
        "disk_avail_gb,disk_pct,compilers,stage,context"
#define CG_HEADER                                                                                  \
        ",cg_mode,cg_cpu_user_s,cg_cpu_sys_s,cg_mem_mb,cg_mem_peak_mb,cg_oom_kills,cg_io_read_mb," \
        "cg_io_write_mb,cg_psi_cpu_some_s,cg_psi_cpu_full_s,cg_psi_mem_some_s,cg_psi_mem_full_s,"  \
        "cg_psi_io_some_s,cg_psi_io_full_s,cg_pids,cg_pids_peak,top_proc,top_proc_mb,top_pid,"     \
        "top2_proc,top2_proc_mb,top2_pid,top3_proc,top3_proc_mb,top3_pid"
/* The 25 columns after the seed's, all unknown. */
#define CG_EMPTY ",,,,,,,,,,,,,,,,,,,,,,,,,"

static void parse_one(const char *s, struct csv_record *rec)
{
        size_t consumed;

        assert_true(csv_parse_record(s, strlen(s), rec, &consumed) > 0);
        assert_int_equal(consumed, strlen(s));
}

static void test_header(void **state)
{
        struct dbuf b = DBUF_INIT;

        (void)state;
        assert_int_equal(sample_csv_header(&b), 0);
        assert_string_equal(b.p, HEADER "\r\n");
        dbuf_release(&b);
}

static struct sample example(void)
{
        struct sample s;

        sample_clear(&s);
        s.epoch = 1764430820.1234;
        s.elapsed_s = 12.3456;
        s.load1 = 3.14159;
        s.cpu_pct = 87.25;
        s.mem_used_mb = 12345.6;
        s.mem_avail_mb = 4000.4;
        s.mem_pct = 75.55;
        s.swap_used_mb = 0;
        s.disk_avail_gb = 123.456;
        s.disk_pct = 45.0;
        s.compilers = 7;
        s.stage = "cmake --build";
        s.context = "CXX a,\"b\".o";
        return s;
}

static void test_format(void **state)
{
        struct sample s = example();
        struct dbuf b = DBUF_INIT;

        (void)state;
        assert_int_equal(sample_csv_format(&s, &b), 0);
        assert_string_equal(
            b.p, "1764430820.123,2025-11-29T15:40:20.123Z,12.346,3.14,87.2,12346,"
                 "4000,75.5,0,123.46,45.0,7,cmake --build,\"CXX a,\"\"b\"\".o\"" CG_EMPTY "\r\n");
        dbuf_release(&b);
}

static void test_format_unknown(void **state)
{
        struct sample s;
        struct dbuf b = DBUF_INIT;

        (void)state;
        sample_clear(&s);
        assert_true(isnan(s.epoch) && isnan(s.compilers));
        assert_string_equal(s.stage, "");
        s.cpu_pct = INFINITY;
        s.load1 = -0.001;      /* rounds to zero: no "-0.00" */
        s.mem_used_mb = 1e300; /* would not read back as a plain decimal */
        assert_int_equal(sample_csv_format(&s, &b), 0);
        assert_string_equal(b.p, ",,,0.00,,,,,,,,,," CG_EMPTY "\r\n");
        dbuf_release(&b);
}

static void test_round_trip(void **state)
{
        struct sample s = example(), t;
        struct dbuf b = DBUF_INIT;
        struct csv_record hdr = CSV_RECORD_INIT, rec = CSV_RECORD_INIT;
        struct sample_colmap m;

        (void)state;
        assert_int_equal(sample_csv_header(&b), 0);
        parse_one(b.p, &hdr);
        assert_int_equal(sample_colmap_init(&m, &hdr), 0);
        assert_int_equal(m.nfields, 39);
        dbuf_reset(&b);
        s.context = "line1\r\nline2 \xff\xfe";
        assert_int_equal(sample_csv_format(&s, &b), 0);
        parse_one(b.p, &rec);
        assert_int_equal(sample_from_record(&m, &rec, &t), 0);
        assert_true(t.epoch == 1764430820.123);
        assert_true(t.elapsed_s == 12.346);
        assert_true(t.load1 == 3.14);
        assert_true(t.cpu_pct == 87.2);
        assert_true(t.mem_used_mb == 12346);
        assert_true(t.mem_avail_mb == 4000);
        assert_true(t.mem_pct == 75.5);
        assert_true(t.swap_used_mb == 0);
        assert_true(t.disk_avail_gb == 123.46);
        assert_true(t.disk_pct == 45.0);
        assert_true(t.compilers == 7);
        assert_string_equal(t.stage, "cmake --build");
        assert_string_equal(t.context, "line1\r\nline2 \xff\xfe");

        csv_record_release(&hdr);
        csv_record_release(&rec);
        dbuf_release(&b);
}

static void test_strings_capped(void **state)
{
        char big[SAMPLE_CONTEXT_MAX + 100];
        struct sample s;
        struct dbuf b = DBUF_INIT;
        struct csv_record rec = CSV_RECORD_INIT;

        (void)state;
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        sample_clear(&s);
        s.stage = big;
        s.context = big;
        assert_int_equal(sample_csv_format(&s, &b), 0);
        parse_one(b.p, &rec);
        assert_int_equal(rec.len[12], SAMPLE_STAGE_MAX);
        assert_int_equal(rec.len[13], SAMPLE_CONTEXT_MAX);
        csv_record_release(&rec);
        dbuf_release(&b);
}

struct junk_case {
        const char *row;
        int ret;
};

static const struct junk_case junk_cases[] = {
    {"1.5,x,2,0.5,10,100,200,30,0,50,40,1,s,c\r\n", 0},
    {"0,,,,,,,,,,,,,\r\n", 0},
    /* out of a column's range (model/ranges.h) is junk like what does not parse */
    {"-1.5,,,,,,,,,,,,,\r\n", -EINVAL},                     /* before 1970 */
    {"1000000000000000000000,,0,1,,,,,,,,,,\r\n", -EINVAL}, /* issue 15 */
    {"253402300800,,,,,,,,,,,,,\r\n", -EINVAL},             /* year 10000 */
    {"253402300799,,,,,,,,,,,,,\r\n", 0},
    {"1.5,x,-2,0.5,10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},          /* elapsed_s */
    {"1.5,x,2,0.5,100.1,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},        /* cpu_pct */
    {"1.5,x,2,0.5,10,100,200,30,0,50,-0.1,1,s,c\r\n", -EINVAL},         /* disk_pct */
    {"1.5,x,2,0.5,10,1099511627777,200,30,0,50,40,1,s,c\r\n", -EINVAL}, /* MiB */
    {"1.5,x,2,0.5,10,100,200,30,0,1073741825,40,1,s,c\r\n", -EINVAL},   /* GiB */
    {"1.5,x,2,4194305,10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},       /* load1 */
    {"1.5,x,2,0.5,10,100,200,30,0,50,40,4194305,s,c\r\n", -EINVAL},     /* compilers */
    {"1.5,x,2,0.5,10,100,200,30,0,50,40,-1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,10,100,200,30,0,50,40,1,s\r\n", -EINVAL},     /* 13 fields */
    {"1.5,x,2,0.5,10,100,200,30,0,50,40,1,s,c,d\r\n", -EINVAL}, /* 15 fields */
    {"1e5,x,2,0.5,10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,abc,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5, 10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,10 ,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,10.,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,+10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,nan,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,inf,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"1.5,x,2,0.5,0x10,100,200,30,0,50,40,1,s,c\r\n", -EINVAL},
    {"\r\n", -EINVAL},
};

static void test_junk_rows(void **state)
{
        struct csv_record hdr = CSV_RECORD_INIT, rec = CSV_RECORD_INIT;
        struct sample_colmap m;

        (void)state;
        /* A CSV of an older buildtel: the seed's columns only. */
        parse_one(SEED_HEADER "\r\n", &hdr);
        assert_int_equal(sample_colmap_init(&m, &hdr), 0);
        for (size_t i = 0; i < ARRAY_SIZE(junk_cases); i++) {
                struct sample s = {.epoch = 42.0, .stage = "untouched"};

                print_message("row %zu\n", i);
                parse_one(junk_cases[i].row, &rec);
                assert_int_equal(sample_from_record(&m, &rec, &s), junk_cases[i].ret);
                if (junk_cases[i].ret < 0) {
                        assert_true(s.epoch == 42.0);
                        assert_string_equal(s.stage, "untouched");
                }
        }
        /* empty numbers are unknown, iso is ignored */
        parse_one("1.5,not a time,,,,,,,,,,,,\r\n", &rec);
        {
                struct sample s;
                assert_int_equal(sample_from_record(&m, &rec, &s), 0);
                assert_true(s.epoch == 1.5);
                assert_true(isnan(s.elapsed_s) && isnan(s.cpu_pct) && isnan(s.compilers));
                assert_string_equal(s.context, "");
        }
        csv_record_release(&hdr);
        csv_record_release(&rec);
}

struct header_case {
        const char *hdr;
        int ret;
};

static const struct header_case header_cases[] = {
    {HEADER "\r\n", 0},
    {HEADER ",cgroup_mem_mb\r\n", 0}, /* a later column we do not know */
    {"context,stage,compilers,disk_pct,disk_avail_gb,swap_used_mb,mem_pct,mem_avail_mb,"
     "mem_used_mb,cpu_pct,load1,elapsed_s,iso,epoch\r\n",
     0},
    {"epoch,iso,elapsed_s\r\n", -EINVAL},
    {HEADER ",epoch\r\n", -EINVAL},
    {"time,value\r\n", -EINVAL},
};

static void test_headers(void **state)
{
        struct csv_record rec = CSV_RECORD_INIT;
        struct sample_colmap m;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(header_cases); i++) {
                parse_one(header_cases[i].hdr, &rec);
                assert_int_equal(sample_colmap_init(&m, &rec), header_cases[i].ret);
        }

        /* a reversed layout reads each value from its own column */
        parse_one(header_cases[2].hdr, &rec);
        assert_int_equal(sample_colmap_init(&m, &rec), 0);
        parse_one("ctx,stg,3,,,,,,,,,2.5,,100.25\r\n", &rec);
        {
                struct sample s;
                assert_int_equal(sample_from_record(&m, &rec, &s), 0);
                assert_true(s.epoch == 100.25);
                assert_true(s.elapsed_s == 2.5);
                assert_true(s.compilers == 3);
                assert_string_equal(s.stage, "stg");
                assert_string_equal(s.context, "ctx");
        }
        csv_record_release(&rec);
}

/* The build's columns: written, read back, and missing ones read as unknown. */
static void test_cg_columns(void **state)
{
        struct sample s = example(), t;
        struct dbuf b = DBUF_INIT;
        struct csv_record hdr = CSV_RECORD_INIT, rec = CSV_RECORD_INIT;
        struct sample_colmap m;

        (void)state;
        s.cg_mode = "hybrid";
        s.cg_cpu_user_s = 1.23456;
        s.cg_mem_peak_mb = 512.04;
        s.cg_oom_kills = 1;
        s.top_proc = "cc1plus a/b \"c\".cpp";
        s.top_proc_mb = 100.25;
        s.top_pid = 4242;
        assert_int_equal(sample_csv_header(&b), 0);
        parse_one(b.p, &hdr);
        assert_int_equal(sample_colmap_init(&m, &hdr), 0);
        dbuf_reset(&b);
        assert_int_equal(sample_csv_format(&s, &b), 0);
        assert_non_null(strstr(b.p, ",hybrid,1.235,,,512.0,1,"));
        parse_one(b.p, &rec);
        assert_int_equal(sample_from_record(&m, &rec, &t), 0);
        assert_string_equal(t.cg_mode, "hybrid");
        assert_true(t.cg_cpu_user_s == 1.235);
        assert_true(isnan(t.cg_cpu_sys_s));
        assert_true(t.cg_mem_peak_mb == 512.0);
        assert_true(t.cg_oom_kills == 1);
        assert_string_equal(t.top_proc, "cc1plus a/b \"c\".cpp");
        assert_true(t.top_proc_mb == 100.2 || t.top_proc_mb == 100.3);
        assert_true(t.top_pid == 4242);
        assert_string_equal(t.top2_proc, "");

        /* the seed's header alone: the build's columns are unknown */
        parse_one(SEED_HEADER "\r\n", &hdr);
        assert_int_equal(sample_colmap_init(&m, &hdr), 0);
        parse_one("1.5,x,2,0.5,10,100,200,30,0,50,40,1,s,c\r\n", &rec);
        assert_int_equal(sample_from_record(&m, &rec, &t), 0);
        assert_string_equal(t.cg_mode, "");
        assert_true(isnan(t.cg_mem_peak_mb) && isnan(t.top_pid));
        /* but a seed column missing is still not a buildtel CSV */
        parse_one("epoch,iso,elapsed_s\r\n", &hdr);
        assert_int_equal(sample_colmap_init(&m, &hdr), -EINVAL);

        dbuf_release(&b);
        csv_record_release(&hdr);
        csv_record_release(&rec);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_header),         cmocka_unit_test(test_format),
            cmocka_unit_test(test_format_unknown), cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_strings_capped), cmocka_unit_test(test_junk_rows),
            cmocka_unit_test(test_cg_columns),     cmocka_unit_test(test_headers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
