/* SPDX-License-Identifier: MIT */
/* The table of field ranges (model/ranges.h), the parsers that check
 * against it, and the formatting that refuses what it cannot show. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "model/run.h"
#include "model/sample.h"
#include "model/targets.h"
#include "parse/ccstats.h"
#include "parse/ninjalog.h"
#include "util/macro.h"
#include "util/util.h"

#include "helpers/test.h"
#include "runfiles/runjson.h"
#include "helpers/parse.h"

TEST(table)
{
        FOREACH_ROW(k, ranges) {
                test_row("%s", ranges[k].name ? ranges[k].name : "(no name)");
                assert_non_null(ranges[k].name);
                assert_true(ranges[k].min < ranges[k].max);
                /* a double counts in ones up to 2^63 at least: int64 conversions are defined */
                assert_true(ranges[k].max <= 9.2e18 && ranges[k].min >= -9.2e18);
                assert_true(range_ok((enum range_kind)k, ranges[k].min));
                assert_true(range_ok((enum range_kind)k, ranges[k].max));
                assert_false(range_ok((enum range_kind)k, NAN));
                assert_false(range_ok((enum range_kind)k, INFINITY));
                assert_false(range_ok((enum range_kind)k, -INFINITY));
                assert_false(range_ok((enum range_kind)k, nextafter(ranges[k].max, INFINITY)));
                assert_false(range_ok((enum range_kind)k, nextafter(ranges[k].min, -INFINITY)));
        }
        assert_true(range_ok_u64(RANGE_BYTES, UINT64_C(1) << 60));
        assert_false(range_ok_u64(RANGE_BYTES, (UINT64_C(1) << 60) + 1024));
        assert_false(range_ok_u64(RANGE_BYTES, UINT64_MAX));
        assert_true(range_ok_i64(RANGE_EXIT_CODE, -1));
        assert_false(range_ok_i64(RANGE_EXIT_CODE, -2));
        assert_false(range_ok_i64(RANGE_MS, INT64_MIN));
}

static const struct {
        const char *column;
        enum range_kind kind;
} column_cases[] = {
    {"epoch", RANGE_EPOCH},
    {"elapsed_s", RANGE_DURATION},
    {"load1", RANGE_LOAD},
    {"cpu_pct", RANGE_PERCENT},
    {"mem_used_mb", RANGE_MIB},
    {"disk_avail_gb", RANGE_GIB},
    {"compilers", RANGE_TASKS},
    {"cg_cpu_user_s", RANGE_CPU_SECONDS},
    {"cg_psi_io_full_s", RANGE_CPU_SECONDS},
    {"cg_oom_kills", RANGE_EVENTS},
    {"cg_pids_peak", RANGE_TASKS},
    {"top3_pid", RANGE_PID},
    {"top_proc_mb", RANGE_MIB},
    {"a_new_column_mb", RANGE_MIB},
    {"something_else", RANGE_ANY},
    {"_s", RANGE_ANY},
    {"", RANGE_ANY},
};

TEST(columns)
{
        FOREACH_ROW(i, column_cases) {
                test_row("column '%s'", column_cases[i].column);
                assert_int_equal(range_of_column(column_cases[i].column), column_cases[i].kind);
        }
}

/* Every number column of the CSV has a range of its own. */
TEST(csv_columns)
{
        FOREACH_ROW_N(i, sample_column_count()) {
                enum sample_column_type t;
                const char *name = sample_column_name(i, &t);

                test_row("CSV column %s", name);
                if (t == SAMPLE_COLUMN_NUMBER)
                        assert_int_not_equal(range_of_column(name), RANGE_ANY);
        }
}

static const struct {
        double epoch;
        int ret;
        const char *want;
} iso_cases[] = {
    {0.0, 0, "1970-01-01T00:00:00.000Z"},
    {1764430820.1234, 0, "2025-11-29T15:40:20.123Z"},
    {1764430820.9996, 0, "2025-11-29T15:40:21.000Z"},
    {253402300799.0, 0, "9999-12-31T23:59:59.000Z"},
    {253402300799.9996, -ERANGE, ""}, /* rounds into year 10000 */
    {253402300800.0, -ERANGE, ""},
    {-62167219200.0, 0, "0000-01-01T00:00:00.000Z"},
    {-62167219200.5, -ERANGE, ""},
    {1.76443e52, -ERANGE, ""}, /* issue 15 */
    {1e300, -ERANGE, ""},
    {-1e300, -ERANGE, ""},
    {NAN, -ERANGE, ""},
    {INFINITY, -ERANGE, ""},
    {-INFINITY, -ERANGE, ""},
};

TEST(format_iso8601)
{
        FOREACH_ROW(i, iso_cases) {
                char buf[64];

                memcpy(buf, "junk", 5);
                test_row("epoch %.17g", iso_cases[i].epoch);
                assert_int_equal(format_iso8601(iso_cases[i].epoch, buf), iso_cases[i].ret);
                assert_string_equal(buf, iso_cases[i].want);
        }
}

static const struct {
        const char *json;
        int ret;
} run_json_cases[] = {
    {"{\"start_epoch\":1e300}", -EINVAL}, /* issue 15 */
    {"{\"start_epoch\":-1}", -EINVAL},
    {"{\"start_epoch\":253402300800}", -EINVAL},
    {"{\"start_epoch\":253402300799}", 0},
    {"{\"end_epoch\":1e20}", -EINVAL},
    {"{\"interval\":-0.5}", -EINVAL},
    {"{\"interval\":86401}", -EINVAL},
    {"{\"interval\":2}", 0},
    {"{\"exit_code\":256}", -EINVAL},
    {"{\"exit_code\":-2}", -EINVAL},
    {"{\"term_signal\":-1}", -EINVAL},
    {"{\"ncpu\":8193}", -EINVAL},
    {"{\"ncpu\":8192}", 0},
    {"{\"pid\":4194305}", -EINVAL},
    {"{\"pid\":9223372036854775807}", -EINVAL},
    {"{\"pid\":4194304}", 0},
};

TEST(run_json)
{
        FOREACH_ROW(i, run_json_cases) {
                struct run_info ri;
                const char *j = run_json_cases[i].json;

                test_row("%s", j);
                assert_int_equal(runjson_parse(j, strlen(j), &ri), run_json_cases[i].ret);
                if (run_json_cases[i].ret == 0)
                        run_info_release(&ri);
        }
}

TEST(ninjalog)
{
        /* the middle record's times are out of range: skipped, not an overflow of end - start */
        static const char log[] = "# ninja log v5\n"
                                  "0\t10\t0\ta.o\t0123abcd\n"
                                  "-9223372036854775808\t9223372036854775807\t0\tb.o\t0123abce\n"
                                  "10\t3155760000001\t0\tc.o\t0123abcf\n"
                                  "10\t30\t0\td.o\t0123abd0\n";
        struct targets *ts = malloc(sizeof(*ts));

        assert_non_null(ts);
        targets_init(ts);
        assert_int_equal(ninjalog_parse(log, sizeof(log) - 1, ts), 0);
        assert_int_equal(ts->ninja_edges, 2);
        assert_int_equal(ts->nslow, 2);
        assert_string_equal(ts->slow[0].output, "d.o");
        assert_string_equal(ts->slow[1].output, "a.o");
        free(ts);
}

static const struct {
        const char *text;
        int64_t size_bytes;
        uint64_t hits;
} ccache_cases[] = {
    /* ccache 4.x --print-stats: KiB beyond 2^50 (1 EiB in bytes) is unknown */
    {"cache_miss\t2\ncache_size_kibibyte\t1125899906842624\ndirect_cache_hit\t5\n"
     "preprocessed_cache_hit\t0\n",
     INT64_C(1) << 60, 5},
    {"cache_miss\t2\ncache_size_kibibyte\t1125899906842625\ndirect_cache_hit\t5\n"
     "preprocessed_cache_hit\t0\n",
     -1, 5},
    {"cache_miss\t2\ncache_size_kibibyte\t18446744073709551615\ndirect_cache_hit\t5\n"
     "preprocessed_cache_hit\t0\n",
     -1, 5},
};

TEST(ccstats)
{
        FOREACH_ROW(i, ccache_cases) {
                struct ccstats st;

                assert_int_equal(
                    ccstats_parse(ccache_cases[i].text, strlen(ccache_cases[i].text), &st), 0);
                assert_int_equal(st.size_bytes, ccache_cases[i].size_bytes);
                assert_int_equal(st.hits, ccache_cases[i].hits);
        }
}

RUN_TESTS()
