/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "model/sample.h"
#include "util/csv.h"
#include "util/macro.h"
#include "runfiles/samplecsv.h"

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
        "top2_proc,top2_proc_mb,top2_pid,top3_proc,top3_proc_mb,top3_pid"                          \
        ",cg_mem_anon_mb,cg_mem_file_mb,running,top_proc_anon_mb,oom_victim,oom_victim_pid"
/* The 31 columns after the seed's, all unknown. */
#define CG_EMPTY ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"

static void parse_one(const char *s, struct csv_record *rec)
{
        size_t consumed;

        assert_true(csv_parse_record(s, strlen(s), rec, &consumed) > 0);
        assert_int_equal(consumed, strlen(s));
}

/* What the CSV does to x: "%.*f", no minus sign on a zero, empty (NAN)
 * past 1e15, and strtod() reading it back. */
static double through_text(double x, int prec)
{
        char tmp[64];
        const char *p = tmp;
        int n;

        if (!isfinite(x) || fabs(x) >= 1e15)
                return NAN;
        n = snprintf(tmp, sizeof(tmp), "%.*f", prec, x);
        assert_true(n > 0 && (size_t)n < sizeof(tmp));
        if (tmp[0] == '-' && strspn(tmp + 1, "0.") == (size_t)(n - 1))
                p++;
        return strtod(p, NULL);
}

/* The text of the last row read_row() gave back: the reader's strings live
 * only for its call. */
static char row_text[SAMPLE_COLUMNS_MAX][SAMPLE_CONTEXT_MAX + 1];

struct read_back {
        struct sample *s;
        int rows; /* good and junk */
};

static void keep_row(void *userdata, const struct sample *smp)
{
        struct read_back *rb = userdata;

        rb->rows++;
        if (!smp)
                return;
        *rb->s = *smp;
        for (size_t i = 0; i < sample_column_count(); i++) {
                size_t len;
                const char *str = sample_column_text(smp, i, &len);

                if (!str)
                        continue;
                memcpy(row_text[i], str, len);
                row_text[i][len] = '\0';
                (void)sample_column_set_text(rb->s, i, row_text[i]);
        }
}

/* hdr and one row read back by samplecsv_read(): 0 with the row in *s,
 * -EINVAL for a junk row (s untouched) or a header that is not buildtel's. */
static int read_row(const char *hdr, const char *row, struct sample *s)
{
        struct dbuf b = DBUF_INIT;
        struct read_back rb = {.s = s};
        int64_t good;

        assert_int_equal(dbuf_puts(&b, hdr), 0);
        assert_int_equal(dbuf_puts(&b, row), 0);
        good = samplecsv_read(b.p, b.len, keep_row, &rb);
        dbuf_release(&b);
        if (good < 0)
                return (int)good;
        assert_int_equal(rb.rows, 1);
        return good == 1 ? 0 : -EINVAL;
}

static bool same_bits(double a, double b)
{
        return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof(a)) == 0;
}

static uint64_t rng_next(uint64_t *x)
{
        /* xorshift64*: reproducible, no libc state */
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        return *x * 2685821657736338717ull;
}

/* The numeric rounding equals the text round trip, bit for bit: on ties
 * (exact and one ulp either side), negative zeros, the 1e15 limit, and a
 * million values of every magnitude the columns see. */
static void test_round_decimals(void **state)
{
        static const double cases[] = {
            0.5,
            1.5,
            2.5,
            0.125,
            0.375,
            1.005,
            2.675,
            0.05,
            -0.05,
            -0.04,
            -0.0,
            0.0,
            1e15,
            -1e15,
            1e15 - 0.5,
            999999999999999.6,
            4503599627370495.5,
            1764430820.1235,
            1764430820.0005,
            12.3456,
            -3.14159,
            1e-300,
            -1e-300,
            0.0049999999999999999,
            87.25,
            87.35,
            123.455,
            123.465,
            NAN,
            INFINITY,
        };
        uint64_t seed = 0x9e3779b97f4a7c15ull;

        (void)state;
        for (int prec = 0; prec <= 3; prec++) {
                for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                        double x = cases[i];
                        double xs[3] = {x, nextafter(x, INFINITY), nextafter(x, -INFINITY)};

                        for (int k = 0; k < 3; k++)
                                if (!same_bits(sample_round_decimals(xs[k], prec),
                                               through_text(xs[k], prec)))
                                        fail_msg("%.17g at %d decimals: %.17g, text %.17g", xs[k],
                                                 prec, sample_round_decimals(xs[k], prec),
                                                 through_text(xs[k], prec));
                }
                for (int i = 0; i < 250000; i++) {
                        uint64_t r = rng_next(&seed);
                        /* a magnitude from 1e-4 to 1e13, or a tie on the grid */
                        double x =
                            (double)(r >> 11) / 9007199254740992.0 * pow(10, (double)(r % 18) - 4);
                        if (r % 5 == 0)
                                x = (floor(x) + 0.5) / pow(10, prec);
                        if (r % 7 == 0)
                                x = -x;
                        if (!same_bits(sample_round_decimals(x, prec), through_text(x, prec)))
                                fail_msg("%.17g at %d decimals: %.17g, text %.17g", x, prec,
                                         sample_round_decimals(x, prec), through_text(x, prec));
                }
        }
}

/* sample_round() is what the row reads back as, for every number column;
 * bytes are whole through the round trip only where the CSV keeps them. */
static void test_round_is_row(void **state)
{
        struct dbuf b = DBUF_INIT;
        uint64_t seed = 42;

        (void)state;
        for (int i = 0; i < 20000; i++) {
                struct sample s, r, back;

                sample_clear(&s);
                for (size_t c = 0; c < sample_column_count(); c++) {
                        uint64_t x = rng_next(&seed);
                        /* bytes up to 1 TiB, percents, seconds, counts, NAN */
                        double v = x % 11 == 0 ? NAN : (double)(x >> 24) / (double)(1u << (x % 20));
                        /* within the column's range: a row out of it is junk (model/ranges.h) */
                        double max = ranges[range_of_column(sample_column_name(c, NULL))].max;

                        (void)sample_column_set_number(&s, c,
                                                       isnan(v) ? v : fmin(v / SAMPLE_MIB, max));
                }
                s.mem_used_bytes = (double)(rng_next(&seed) >> 30) * 1024;   /* kB from meminfo */
                s.disk_avail_bytes = (double)(rng_next(&seed) >> 20) * 4096; /* blocks */
                dbuf_reset(&b);
                assert_int_equal(samplecsv_format(&s, &b), 0);
                assert_int_equal(read_row(HEADER "\r\n", b.p, &back), 0);
                sample_round(&s, &r);
                for (size_t c = 0; c < sample_column_count(); c++) {
                        enum sample_column_type t;
                        const char *name = sample_column_name(c, &t);

                        if (t == SAMPLE_COLUMN_NUMBER &&
                            !same_bits(sample_column_number(&r, c), sample_column_number(&back, c)))
                                fail_msg("%s: rounded %.17g, read back %.17g (row %s)", name,
                                         sample_column_number(&r, c),
                                         sample_column_number(&back, c), b.p);
                }
                /* rounding again changes nothing */
                sample_round(&r, &back);
                assert_memory_equal(&r, &back, sizeof(r));
        }
        dbuf_release(&b);
}

/* The row's numbers are what "%.*f" writes (the fast formatter is the
 * exact rounding's digits): epoch at 3 decimals, load1 at 2, cpu_pct at 1,
 * mem_used_mb at 0, on ties and random values. */
static void test_format_is_printf(void **state)
{
        struct csv_record rec = CSV_RECORD_INIT;
        struct dbuf b = DBUF_INIT;
        uint64_t seed = 7;
        size_t used;

        (void)state;
        for (int i = 0; i < 200000; i++) {
                uint64_t r = rng_next(&seed);
                double x = (double)(r >> 11) / 9007199254740992.0 * pow(10, (double)(r % 17) - 3);
                static const int field[4] = {0, 3, 4, 5}; /* epoch load1 cpu_pct mem_used_mb */
                static const int prec[4] = {3, 2, 1, 0};
                struct sample s;

                if (r % 3 == 0)
                        x = (floor(x) + 0.5) / pow(10, (double)(r % 4)); /* ties */
                if (r % 5 == 0)
                        x = -x;
                sample_clear(&s);
                s.epoch = x;
                s.load1 = x;
                s.cpu_pct = x;
                s.mem_used_bytes = x * SAMPLE_MIB;
                dbuf_reset(&b);
                assert_int_equal(samplecsv_format(&s, &b), 0);
                assert_true(csv_parse_record(b.p, b.len, &rec, &used) > 0);
                for (int k = 0; k < 4; k++) {
                        char want[64];
                        const char *w = want;
                        int n = snprintf(want, sizeof(want), "%.*f", prec[k], x);

                        if (fabs(x) >= 1e15)
                                w = "";
                        else if (want[0] == '-' && strspn(want + 1, "0.") == (size_t)(n - 1))
                                w++;
                        if (rec.len[field[k]] != strlen(w) ||
                            memcmp(csv_field(&rec, (size_t)field[k]), w, strlen(w)) != 0)
                                fail_msg("%.17g at %d decimals: wrote '%.*s', printf '%s'", x,
                                         prec[k], (int)rec.len[field[k]],
                                         csv_field(&rec, (size_t)field[k]), w);
                }
        }
        csv_record_release(&rec);
        dbuf_release(&b);
}

static void test_header(void **state)
{
        struct dbuf b = DBUF_INIT;

        (void)state;
        assert_int_equal(samplecsv_header(&b), 0);
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
        s.mem_used_bytes = 12345.6 * SAMPLE_MIB;
        s.mem_avail_bytes = 4000.4 * SAMPLE_MIB;
        s.mem_pct = 75.55;
        s.swap_used_bytes = 0;
        s.disk_avail_bytes = 123.456 * SAMPLE_GIB;
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
        assert_int_equal(samplecsv_format(&s, &b), 0);
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
        s.load1 = -0.001;                      /* rounds to zero: no "-0.00" */
        s.mem_used_bytes = 1e300 * SAMPLE_MIB; /* would not read back as a plain decimal */
        assert_int_equal(samplecsv_format(&s, &b), 0);
        assert_string_equal(b.p, ",,,0.00,,,,,,,,,," CG_EMPTY "\r\n");
        dbuf_release(&b);
}

static void test_round_trip(void **state)
{
        struct sample s = example(), t;
        struct dbuf b = DBUF_INIT;
        struct csv_record hdr = CSV_RECORD_INIT;

        (void)state;
        assert_int_equal(samplecsv_header(&b), 0);
        parse_one(b.p, &hdr);
        assert_int_equal(hdr.nfields, 45);
        dbuf_reset(&b);
        s.context = "line1\r\nline2 \xff\xfe";
        assert_int_equal(samplecsv_format(&s, &b), 0);
        assert_int_equal(read_row(HEADER "\r\n", b.p, &t), 0);
        assert_true(t.epoch == 1764430820.123);
        assert_true(t.elapsed_s == 12.346);
        assert_true(t.load1 == 3.14);
        assert_true(t.cpu_pct == 87.2);
        assert_true((t.mem_used_bytes / SAMPLE_MIB) == 12346);
        assert_true((t.mem_avail_bytes / SAMPLE_MIB) == 4000);
        assert_true(t.mem_pct == 75.5);
        assert_true((t.swap_used_bytes / SAMPLE_MIB) == 0);
        assert_true((t.disk_avail_bytes / SAMPLE_GIB) == 123.46);
        assert_true(t.disk_pct == 45.0);
        assert_true(t.compilers == 7);
        assert_string_equal(t.stage, "cmake --build");
        assert_string_equal(t.context, "line1\r\nline2 \xff\xfe");

        csv_record_release(&hdr);
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
        assert_int_equal(samplecsv_format(&s, &b), 0);
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
        (void)state;
        /* A CSV of an older buildtel: the seed's columns only. */
        for (size_t i = 0; i < ARRAY_SIZE(junk_cases); i++) {
                struct sample s = {.epoch = 42.0, .stage = "untouched"};

                print_message("row %zu\n", i);
                assert_int_equal(read_row(SEED_HEADER "\r\n", junk_cases[i].row, &s),
                                 junk_cases[i].ret);
                if (junk_cases[i].ret < 0) {
                        assert_true(s.epoch == 42.0);
                        assert_string_equal(s.stage, "untouched");
                }
        }
        /* empty numbers are unknown, iso is ignored */
        {
                struct sample s;
                assert_int_equal(read_row(SEED_HEADER "\r\n", "1.5,not a time,,,,,,,,,,,,\r\n", &s),
                                 0);
                assert_true(s.epoch == 1.5);
                assert_true(isnan(s.elapsed_s) && isnan(s.cpu_pct) && isnan(s.compilers));
                assert_string_equal(s.context, "");
        }
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
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(header_cases); i++) {
                const char *h = header_cases[i].hdr;

                assert_int_equal(samplecsv_read(h, strlen(h), keep_row, NULL), header_cases[i].ret);
        }

        /* a reversed layout reads each value from its own column */
        {
                struct sample s;
                assert_int_equal(
                    read_row(header_cases[2].hdr, "ctx,stg,3,,,,,,,,,2.5,,100.25\r\n", &s), 0);
                assert_true(s.epoch == 100.25);
                assert_true(s.elapsed_s == 2.5);
                assert_true(s.compilers == 3);
                assert_string_equal(s.stage, "stg");
                assert_string_equal(s.context, "ctx");
        }
}

/* The build's columns: written, read back, and missing ones read as unknown. */
static void test_cg_columns(void **state)
{
        struct sample s = example(), t;
        struct dbuf b = DBUF_INIT;
        (void)state;
        s.cg_mode = "hybrid";
        s.cg_cpu_user_s = 1.23456;
        s.cg_mem_peak_bytes = 512.04 * SAMPLE_MIB;
        s.cg_oom_kills = 1;
        s.top_proc = "cc1plus a/b \"c\".cpp";
        s.top_proc_bytes = 100.25 * SAMPLE_MIB;
        s.top_pid = 4242;
        assert_int_equal(samplecsv_format(&s, &b), 0);
        assert_non_null(strstr(b.p, ",hybrid,1.235,,,512.0,1,"));
        assert_int_equal(read_row(HEADER "\r\n", b.p, &t), 0);
        assert_string_equal(t.cg_mode, "hybrid");
        assert_true(t.cg_cpu_user_s == 1.235);
        assert_true(isnan(t.cg_cpu_sys_s));
        assert_true((t.cg_mem_peak_bytes / SAMPLE_MIB) == 512.0);
        assert_true(t.cg_oom_kills == 1);
        assert_string_equal(t.top_proc, "cc1plus a/b \"c\".cpp");
        assert_true((t.top_proc_bytes / SAMPLE_MIB) == 100.2 ||
                    (t.top_proc_bytes / SAMPLE_MIB) == 100.3);
        assert_true(t.top_pid == 4242);
        assert_string_equal(t.top2_proc, "");

        /* the seed's header alone: the build's columns are unknown */
        assert_int_equal(
            read_row(SEED_HEADER "\r\n", "1.5,x,2,0.5,10,100,200,30,0,50,40,1,s,c\r\n", &t), 0);
        assert_string_equal(t.cg_mode, "");
        assert_true(isnan((t.cg_mem_peak_bytes / SAMPLE_MIB)) && isnan(t.top_pid));
        /* but a seed column missing is still not a buildtel CSV */
        assert_int_equal(read_row("epoch,iso,elapsed_s\r\n", "", &t), -EINVAL);

        dbuf_release(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_header),           cmocka_unit_test(test_format),
            cmocka_unit_test(test_format_unknown),   cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_strings_capped),   cmocka_unit_test(test_junk_rows),
            cmocka_unit_test(test_cg_columns),       cmocka_unit_test(test_headers),
            cmocka_unit_test(test_round_decimals),   cmocka_unit_test(test_round_is_row),
            cmocka_unit_test(test_format_is_printf),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
