/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/procfs.h"
#include "util/macro.h"
#include "util/util.h"

#define BASIC FIXTURES "/proc-basic"

/* ---- cpustat ---- */

struct cpustat_case {
        const char *name;
        const char *in;
        int ret;
        struct cpustat want;
};

static const struct cpustat_case cpustat_cases[] = {
    {"modern",
     "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n",
     0,
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
    {"old kernel, 4 fields", "cpu 100 0 50 850\n", 0, {100, 0, 50, 850, 0, 0, 0, 0, 0, 0}},
    {"8 fields", "cpu  1 2 3 4 5 6 7 8\n", 0, {1, 2, 3, 4, 5, 6, 7, 8, 0, 0}},
    {"future kernel, 12 fields",
     "cpu 1 2 3 4 5 6 7 8 9 10 11 12\n",
     0,
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
    {"no trailing newline", "cpu 1 2 3 4", 0, {1, 2, 3, 4, 0, 0, 0, 0, 0, 0}},
    {"aggregate line not first",
     "intr 5 6\nctxt 7\ncpu\t9 8 7 6\n",
     0,
     {9, 8, 7, 6, 0, 0, 0, 0, 0, 0}},
    {"huge", "cpu 18446744073709551615 0 0 1\n", 0, {UINT64_MAX, 0, 0, 1, 0, 0, 0, 0, 0, 0}},
    {.name = "overflow", .in = "cpu 18446744073709551616 0 0 1\n", .ret = -ERANGE},
    {.name = "3 fields", .in = "cpu 1 2 3\n", .ret = -EINVAL},
    {.name = "only per-cpu lines", .in = "cpu0 1 2 3 4\ncpu1 1 2 3 4\n", .ret = -EINVAL},
    {.name = "junk in a field", .in = "cpu 1 2 3x 4\n", .ret = -EINVAL},
    {.name = "negative", .in = "cpu 1 -2 3 4\n", .ret = -EINVAL},
    {.name = "truncated before idle", .in = "cpu 1 2 3 ", .ret = -EINVAL},
    {.name = "cpu without fields", .in = "cpu \n", .ret = -EINVAL},
    {.name = "empty", .in = "", .ret = -EINVAL},
};

static void test_cpustat_parse(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(cpustat_cases); i++) {
                const struct cpustat_case *c = &cpustat_cases[i];
                struct cpustat got;
                int r;

                memset(&got, 0xa5, sizeof(got));
                r = cpustat_parse(c->in, strlen(c->in), &got);
                print_message("cpustat: %s\n", c->name);
                assert_int_equal(r, c->ret);
                if (r == 0)
                        assert_memory_equal(&got, &c->want, sizeof(got));
                else
                        for (size_t b = 0; b < sizeof(got); b++)
                                assert_int_equal(((unsigned char *)&got)[b], 0xa5);
        }
}

static void test_cpustat_not_nul_terminated(void **state)
{
        /* Only the first 11 bytes are the buffer: "cpu 1 2 3 4". */
        const char buf[] = "cpu 1 2 3 4999";
        struct cpustat c;

        assert_int_equal(cpustat_parse(buf, 11, &c), 0);
        assert_int_equal(c.idle, 4);
        assert_int_equal(cpustat_parse(buf, 10, &c), -EINVAL);
}

static void test_cpustat_sums(void **state)
{
        struct cpustat c = {1000, 200, 300, 8000, 100, 50, 25, 25, 40, 2};
        struct cpustat big = {UINT64_MAX, 1, 0, 0, 0, 0, 0, 0, 0, 0};

        assert_int_equal(cpustat_total(&c), 9700);
        assert_int_equal(cpustat_busy(&c), 1600);
        assert_true(cpustat_total(&big) == UINT64_MAX);
}

/* ---- meminfo ---- */

struct meminfo_case {
        const char *name;
        const char *in;
        int ret;
        struct meminfo want;
};

static const struct meminfo_case meminfo_cases[] = {
    {"modern",
     "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nBuffers: 10 kB\n"
     "Cached: 20 kB\nSwapCached: 5 kB\nSwapTotal: 50 kB\nSwapFree: 30 kB\n",
     0,
     {1000, 100, 600, 50, 30}},
    {"no MemAvailable: free + buffers + cached",
     "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 20 kB\n"
     "SwapCached: 5000 kB\nSwapTotal: 50 kB\nSwapFree: 30 kB\n",
     0,
     {1000, 100, 130, 50, 30}},
    {"no MemAvailable, no Buffers/Cached",
     "MemTotal: 1000 kB\nMemFree: 100 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB",
     0,
     {1000, 100, 100, 0, 0}},
    {"any order, unknown lines, no units",
     "SwapFree: 3\nHugePages_Total: 0\nWeird line\n\nMemAvailable: 7\nSwapTotal: 4\n"
     "MemFree: 2\nMemTotal: 9\n",
     0,
     {9, 2, 7, 4, 3}},
    {"largest in range (2^50 KiB, model/ranges.h)",
     "MemTotal: 1125899906842624 kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     0,
     {1125899906842624, 1, 1, 0, 0}},
    {.name = "out of range",
     .in = "MemTotal: 1125899906842625 kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     .ret = -ERANGE},
    {.name = "out of range, a line that is not needed",
     .in = "MemTotal: 1 kB\nMemFree: 18446744073709551615 kB\nBuffers: 1 kB\nSwapTotal: 0 kB\n"
           "SwapFree: 0 kB\n",
     .ret = -ERANGE},
    {.name = "overflow",
     .in = "MemTotal: 18446744073709551616 kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     .ret = -ERANGE},
    {.name = "missing MemTotal",
     .in = "MemFree: 1 kB\nMemAvailable: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     .ret = -EINVAL},
    {.name = "missing SwapFree",
     .in = "MemTotal: 1 kB\nMemFree: 1 kB\nSwapTotal: 0 kB\n",
     .ret = -EINVAL},
    {.name = "junk value",
     .in = "MemTotal: 1x kB\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     .ret = -EINVAL},
    {.name = "empty value",
     .in = "MemTotal:\nMemFree: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
     .ret = -EINVAL},
    {.name = "truncated", .in = "MemTotal: 1000 kB\nMemFr", .ret = -EINVAL},
    {.name = "empty", .in = "", .ret = -EINVAL},
};

static void test_meminfo_parse(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(meminfo_cases); i++) {
                const struct meminfo_case *c = &meminfo_cases[i];
                struct meminfo got;
                int r;

                memset(&got, 0xa5, sizeof(got));
                print_message("meminfo: %s\n", c->name);
                r = meminfo_parse(c->in, strlen(c->in), &got);
                assert_int_equal(r, c->ret);
                if (r == 0)
                        assert_memory_equal(&got, &c->want, sizeof(got));
                else
                        assert_true(got.total_kb == UINT64_C(0xa5a5a5a5a5a5a5a5));
        }
}

/* ---- loadavg ---- */

struct loadavg_case {
        const char *name;
        const char *in;
        int ret;
        struct loadavg want;
};

static const struct loadavg_case loadavg_cases[] = {
    {"normal", "0.29 0.14 0.05 2/84 4502\n", 0, {0.29, 0.14, 0.05, 2, 84}},
    {"busy", "123.45 67.00 8.90 17/1075 99999\n", 0, {123.45, 67.0, 8.9, 17, 1075}},
    {"no last pid, no newline", "1.00 2.00 3.00 1/2", 0, {1.0, 2.0, 3.0, 1, 2}},
    {"extra fields", "1.00 2.00 3.00 1/2 3 4 5\nsecond line\n", 0, {1.0, 2.0, 3.0, 1, 2}},
    {"integers", "1 2 3 4/5 6\n", 0, {1.0, 2.0, 3.0, 4, 5}},
    {.name = "negative", .in = "-1.00 2.00 3.00 1/2 3\n", .ret = -EINVAL},
    {.name = "missing slash", .in = "1.00 2.00 3.00 1 2 3\n", .ret = -EINVAL},
    {.name = "missing total", .in = "1.00 2.00 3.00 1/\n", .ret = -EINVAL},
    {.name = "truncated", .in = "1.00 2.00", .ret = -EINVAL},
    {.name = "junk", .in = "1.00x 2.00 3.00 1/2 3\n", .ret = -EINVAL},
    {.name = "overflow", .in = "1.00 2.00 3.00 18446744073709551616/2 3\n", .ret = -ERANGE},
    {"largest in range", "4194304 0 0 4194304/4194304 1\n", 0, {4194304.0, 0, 0, 4194304, 4194304}},
    {.name = "load out of range", .in = "4194304.01 2.00 3.00 1/2 3\n", .ret = -ERANGE},
    {.name = "load out of range, 62 digits",
     .in = "1.00 2.00 1"
           "0000000000"
           "0000000000"
           "0000000000"
           "0000000000"
           "0000000000"
           " 1/2 3\n",
     .ret = -ERANGE},
    {.name = "tasks out of range", .in = "1.00 2.00 3.00 1/4194305 3\n", .ret = -ERANGE},
    {.name = "empty", .in = "", .ret = -EINVAL},
};

static void test_loadavg_parse(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(loadavg_cases); i++) {
                const struct loadavg_case *c = &loadavg_cases[i];
                struct loadavg got = {-7.0, -7.0, -7.0, 7, 7};
                int r;

                print_message("loadavg: %s\n", c->name);
                r = loadavg_parse(c->in, strlen(c->in), &got);
                assert_int_equal(r, c->ret);
                if (r == 0) {
                        assert_true(got.load1 == c->want.load1);
                        assert_true(got.load5 == c->want.load5);
                        assert_true(got.load15 == c->want.load15);
                        assert_int_equal(got.running, c->want.running);
                        assert_int_equal(got.total, c->want.total);
                } else {
                        assert_true(got.load1 == -7.0);
                        assert_int_equal(got.total, 7);
                }
        }
}

/* ---- pidstat ---- */

#define TAIL                                                                                       \
        " 18446744073709551615 94689710116864 94689710136745 140727837472368 0 0 0 0 0 0 0 0 0 "   \
        "17 "                                                                                      \
        "0 0 0 0 0 0 94689710152752 94689710154368 94690056695808 140727837477309 "                \
        "140727837477329 140727837477329 140727837478891 0\n"

struct pidstat_case {
        const char *name;
        const char *in;
        int ret;
        long pid;
        const char *comm;
        char state;
        long ppid, pgrp;
        uint64_t utime, stime, nthreads, start, vsize, rss;
};

static const struct pidstat_case pidstat_cases[] = {
    {"real",
     "4504 (cat) R 4492 4492 3208 0 -1 4194304 98 0 0 0 11 22 0 0 20 0 1 0 33325 3133440 381" TAIL,
     0, 4504, "cat", 'R', 4492, 4492, 11, 22, 1, 33325, 3133440, 381},
    {"comm with spaces and parens",
     "7 ((a) b)) S 1 7 7 0 -1 0 0 0 0 0 5 6 -3 -4 -20 -5 3 0 100 200 300" TAIL, 0, 7, "(a) b)", 'S',
     1, 7, 5, 6, 3, 100, 200, 300},
    {"comm ') 1 2 3 ('", "8 () 1 2 3 () Z 1 8 8 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 9 0 0\n", 0, 8,
     ") 1 2 3 (", 'Z', 1, 8, 0, 0, 1, 9, 0, 0},
    {"empty comm, exactly 24 fields", "9 () S 0 0 0 0 0 0 0 0 0 0 1 2 0 0 0 0 1 0 3 4 5", 0, 9, "",
     'S', 0, 0, 1, 2, 1, 3, 4, 5},
    {"long comm is cut to 64",
     "10 (kworker/u8:2-events_unbound_with_a_very_long_name_that_goes_past_64_bytes) I 2 0 0 0 "
     "-1 0 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0\n",
     0, 10, "kworker/u8:2-events_unbound_with_a_very_long_name_that_goes_past", 'I', 2, 0, 0, 0, 1,
     3, 0, 0},
    {"huge numbers",
     "2147483647 (x) R 1 1 0 0 0 0 0 0 0 0 18446744073709551615 18446744073709551615 0 0 0 0 "
     "18446744073709551615 0 18446744073709551615 18446744073709551615 18446744073709551615\n",
     0, 2147483647, "x", 'R', 1, 1, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
     UINT64_MAX},
    {.name = "overflow utime",
     .in = "1 (x) R 1 1 0 0 0 0 0 0 0 0 18446744073709551616 0 0 0 0 0 1 0 3 4 5\n",
     .ret = -ERANGE},
    {.name = "pid too big",
     .in = "2147483648 (x) R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4 5\n",
     .ret = -ERANGE},
    {.name = "pid 0", .in = "0 (x) R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4 5\n", .ret = -ERANGE},
    {.name = "negative utime",
     .in = "1 (x) R 1 1 0 0 0 0 0 0 0 0 -1 0 0 0 0 0 1 0 3 4 5\n",
     .ret = -EINVAL},
    {.name = "negative ppid",
     .in = "1 (x) R -1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4 5\n",
     .ret = -ERANGE},
    {.name = "truncated before rss",
     .in = "1 (x) R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4",
     .ret = -EINVAL},
    {.name = "truncated in comm", .in = "1 (abc", .ret = -EINVAL},
    {.name = "no state", .in = "1 (x)", .ret = -EINVAL},
    {.name = "no parens",
     .in = "1 x R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4 5\n",
     .ret = -EINVAL},
    {.name = "junk field",
     .in = "1 (x) R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1x 0 3 4 5\n",
     .ret = -EINVAL},
    {"double space", "1 (x) R 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 1 0 3 4  5\n", 0, 1, "x", 'R', 1, 1,
     1, 0, 1, 3, 4, 5},
    {.name = "empty", .in = "", .ret = -EINVAL},
};

struct zoneinfo_case {
        const char *name;
        const char *in;
        int ret;
        uint64_t want;
};

static const struct zoneinfo_case zoneinfo_cases[] = {
    {"two zones, two cpus",
     "Node 0, zone      DMA\n  pages free     3840\n  pagesets\n    cpu: 0\n"
     "              count: 0\n              high:  0\n    cpu: 1\n              count: 5\n"
     "Node 0, zone   Normal\n  pagesets\n    cpu: 0\n              count: 65175\n"
     "              high:  65331\n    cpu: 1\n              count: 76818\n",
     0, 142000 - 2},
    {"no trailing newline", "    count: 7", 0, 7},
    {"no pagesets at all", "Node 0, zone DMA\n  pages free 1\n", -EINVAL, 0},
    {"count without a number", "  count: x\n", -EINVAL, 0},
    {"overflowing sum", "count: 18446744073709551615\ncount: 1\n", -ERANGE, 0},
    {"a count out of range", "count: 1\ncount: 1125899906842625\n", -ERANGE, 0},
    {"empty", "", -EINVAL, 0},
};

static void test_zoneinfo_pcp_parse(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(zoneinfo_cases); i++) {
                const struct zoneinfo_case *c = &zoneinfo_cases[i];
                uint64_t got = 77;
                int r;

                print_message("zoneinfo: %s\n", c->name);
                r = zoneinfo_pcp_parse(c->in, strlen(c->in), &got);
                assert_int_equal(r, c->ret);
                assert_int_equal(got, r == 0 ? c->want : 77);
        }
}

static void test_pidstat_parse(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(pidstat_cases); i++) {
                const struct pidstat_case *c = &pidstat_cases[i];
                struct pidstat got;
                int r;

                memset(&got, 0x5a, sizeof(got));
                print_message("pidstat: %s\n", c->name);
                r = pidstat_parse(c->in, strlen(c->in), &got);
                assert_int_equal(r, c->ret);
                if (r < 0) {
                        assert_int_equal(got.pid, (long)0x5a5a5a5a5a5a5a5aL);
                        continue;
                }
                assert_int_equal(got.pid, c->pid);
                assert_string_equal(got.comm, c->comm);
                assert_int_equal(got.state, c->state);
                assert_int_equal(got.ppid, c->ppid);
                assert_int_equal(got.pgrp, c->pgrp);
                assert_true(got.utime == c->utime);
                assert_true(got.stime == c->stime);
                assert_true(got.num_threads == c->nthreads);
                assert_true(got.starttime == c->start);
                assert_true(got.vsize == c->vsize);
                assert_true(got.rss_pages == c->rss);
        }
}

/* Every prefix of a valid line either parses (once all 24 fields are in)
 * or fails cleanly; run under ASan this catches reads past the end. The
 * prefixes ending in "3" and "30" are valid lines with a shorter rss. */
static void test_pidstat_every_prefix(void **state)
{
        const char *line = pidstat_cases[1].in;
        size_t full = strlen(line);
        size_t need = strlen("7 ((a) b)) S 1 7 7 0 -1 0 0 0 0 0 5 6 -3 -4 -20 -5 3 0 100 200 300");

        for (size_t n = 0; n <= full; n++) {
                char *copy = malloc(n ? n : 1);
                struct pidstat ps;
                int r;

                assert_non_null(copy);
                memcpy(copy, line, n);
                r = pidstat_parse(copy, n, &ps);
                if (n < need - 2) {
                        assert_true(r < 0);
                } else {
                        assert_int_equal(r, 0);
                        assert_int_equal(ps.rss_pages, n == need - 2   ? 3
                                                       : n == need - 1 ? 30
                                                                       : 300);
                }
                free(copy);
        }
}

/* ---- the fixture tree ---- */

static void test_fixture_hot_files(void **state)
{
        struct procfs *p = NULL;
        struct cpustat c;
        struct meminfo m;
        struct loadavg l;

        assert_int_equal(procfs_new(BASIC, &p), 0);

        assert_int_equal(procfs_cpustat(p, &c), 0);
        assert_int_equal(c.user, 1000);
        assert_int_equal(c.idle, 8000);
        assert_int_equal(cpustat_total(&c), 9700);
        assert_int_equal(cpustat_busy(&c), 1600);

        assert_int_equal(procfs_meminfo(p, &m), 0);
        assert_int_equal(m.total_kb, 16384000);
        assert_int_equal(m.available_kb, 8192000);
        assert_int_equal(m.swap_free_kb, 1048576);

        assert_int_equal(procfs_loadavg(p, &l), 0);
        assert_true(l.load1 == 1.25);
        assert_int_equal(l.total, 412);

        /* Reading again gives the same (pread from 0, not a moving offset). */
        assert_int_equal(procfs_loadavg(p, &l), 0);
        assert_true(l.load15 == 0.50);
        procfs_free(p);
}

static void test_fixture_pidstat(void **state)
{
        struct procfs *p = NULL;
        struct pidstat ps;

        assert_int_equal(procfs_new(BASIC, &p), 0);
        assert_int_equal(procfs_pidstat(p, 1235, &ps), 0);
        assert_string_equal(ps.comm, "(a) b)");
        assert_int_equal(ps.ppid, 1234);
        assert_int_equal(procfs_pidstat(p, 1237, &ps), 0);
        assert_string_equal(ps.comm, "cc1plus");
        assert_int_equal(ps.utime, 1234);
        assert_int_equal(ps.rss_pages, 45678);
        assert_int_equal(procfs_pidstat(p, 999, &ps), -ENOENT);
        assert_int_equal(procfs_pidstat(p, 5, &ps), -ENOENT);
        assert_int_equal(procfs_pidstat(p, 1241, &ps), -EINVAL);
        assert_int_equal(procfs_pidstat(p, -1, &ps), -EINVAL);
        procfs_free(p);
}

struct seen {
        long pids[32];
        size_t n;
        int stop_after;
};

static int collect(const struct pidstat *ps, void *userdata)
{
        struct seen *s = userdata;

        assert_true(s->n < ARRAY_SIZE(s->pids));
        s->pids[s->n++] = ps->pid;
        if (s->stop_after > 0 && (int)s->n == s->stop_after)
                return -ECANCELED;
        return 0;
}

static int cmp_long(const void *a, const void *b)
{
        long x = *(const long *)a, y = *(const long *)b;
        return (x > y) - (x < y);
}

static void test_fixture_foreach(void **state)
{
        static const long want[] = {1, 1234, 1235, 1236, 1237, 1238, 1239, 1240};
        struct procfs *p = NULL;
        struct seen s = {.n = 0};

        assert_int_equal(procfs_new(BASIC, &p), 0);
        /* 999 has no stat, 1241's is garbage, 42 is a file, sys is no pid. */
        for (int round = 0; round < 3; round++) {
                s.n = 0;
                assert_int_equal(procfs_foreach_pid(p, collect, &s), (int)ARRAY_SIZE(want));
                assert_int_equal(s.n, ARRAY_SIZE(want));
                qsort(s.pids, s.n, sizeof(s.pids[0]), cmp_long);
                assert_memory_equal(s.pids, want, sizeof(want));
        }
        assert_int_equal(procfs_foreach_pid(p, NULL, NULL), (int)ARRAY_SIZE(want));

        s = (struct seen){.stop_after = 3};
        assert_int_equal(procfs_foreach_pid(p, collect, &s), -ECANCELED);
        assert_int_equal(s.n, 3);
        procfs_free(p);
}

static void test_fixture_cmdline(void **state)
{
        struct procfs *p = NULL;
        char buf[64];

        assert_int_equal(procfs_new(BASIC, &p), 0);
        assert_int_equal(procfs_cmdline(p, 1234, buf, sizeof(buf)), 9);
        assert_memory_equal(buf, "make\0-j8\0", 9);
        assert_int_equal(procfs_cmdline(p, 1234, buf, 4), 4);
        assert_memory_equal(buf, "make", 4);
        assert_int_equal(procfs_cmdline(p, 999, buf, sizeof(buf)), 0);
        assert_int_equal(procfs_cmdline(p, 1235, buf, sizeof(buf)), -ENOENT);
        procfs_free(p);
}

static void test_new_errors(void **state)
{
        struct procfs *p = (struct procfs *)0x1;

        assert_int_equal(procfs_new(FIXTURES "/does-not-exist", &p), -ENOENT);
        assert_ptr_equal(p, (struct procfs *)0x1);
        /* A root without proc/ is not a procfs root. */
        assert_int_equal(procfs_new(BASIC "/proc/sys", &p), -ENOENT);
        assert_int_equal(procfs_new(BASIC "/proc/stat", &p), -ENOTDIR);
        procfs_free(NULL);
}

/* A hot file bigger than the first buffer is read whole after a retry. */
static void test_big_stat(void **state)
{
        char dir[] = "/tmp/test-procfs-XXXXXX", path[128];
        struct procfs *p = NULL;
        struct cpustat c;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/proc", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/proc/stat", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        /* Per-cpu lines first and the aggregate line last, far past 4 KiB, so
         * a cut-off read would not find it. */
        for (int i = 0; i < 2000; i++)
                fprintf(f, "cpu%d 1 2 3 4 5 6 7 8 0 0\n", i);
        fprintf(f, "cpu  11 22 33 44 55 66 77 88 0 0\n");
        fclose(f);

        assert_int_equal(procfs_new(dir, &p), 0);
        assert_int_equal(procfs_cpustat(p, &c), 0);
        assert_int_equal(c.steal, 88);
        /* No meminfo in this tree: the read fails, the others do not. */
        {
                struct meminfo m;
                assert_int_equal(procfs_meminfo(p, &m), -ENOENT);
        }
        procfs_free(p);
        unlink(path);
        snprintf(path, sizeof(path), "%s/proc", dir);
        rmdir(path);
        rmdir(dir);
}

/* ---- the real /proc ---- */

static int find_pid(const struct pidstat *ps, void *userdata)
{
        long *want = userdata;

        if (ps->pid == *want)
                *want = -*want;
        return 0;
}

static void test_live(void **state)
{
        struct procfs *p = NULL;
        struct cpustat c;
        struct meminfo m;
        struct loadavg l;
        struct pidstat ps;
        char buf[4096];
        long want;
        pid_t child;
        int n0, n1;

        if (access("/proc/self/stat", R_OK) < 0)
                skip();
        assert_int_equal(procfs_new("/", &p), 0);
        assert_int_equal(procfs_cpustat(p, &c), 0);
        assert_true(cpustat_total(&c) > 0);
        assert_int_equal(procfs_meminfo(p, &m), 0);
        assert_true(m.total_kb > 0 && m.available_kb > 0 && m.available_kb <= m.total_kb);
        assert_int_equal(procfs_loadavg(p, &l), 0);
        assert_true(l.load1 >= 0 && l.total >= 1);

        assert_int_equal(procfs_pidstat(p, getpid(), &ps), 0);
        assert_int_equal(ps.pid, getpid());
        assert_int_equal(ps.ppid, getppid());
        assert_int_equal(ps.state, 'R');
        assert_true(procfs_cmdline(p, getpid(), buf, sizeof(buf)) > 0);

        n0 = procfs_foreach_pid(p, NULL, NULL);
        assert_true(n0 >= 1);

        /* A process born after the first walk is seen by the next one
         * (the kept DIR is rewound, not stale). */
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        want = child;
        n1 = procfs_foreach_pid(p, find_pid, &want);
        assert_true(n1 >= 2);
        assert_int_equal(want, -(long)child);

        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, NULL, 0), child);
        assert_int_equal(procfs_pidstat(p, child, &ps), -ENOENT);
        want = child;
        assert_true(procfs_foreach_pid(p, find_pid, &want) >= 1);
        assert_int_equal(want, (long)child);
        procfs_free(p);
}

/* The live /proc/self/oom_score_adj, raised (anyone may) and read back;
 * lowering it back needs privilege, so that runs in a child. */
static void test_oom_score_adj(void **state)
{
        pid_t pid = fork();
        int st;

        assert_true(pid >= 0);
        if (pid == 0) {
                char *buf = NULL;
                size_t len = 0;

                if (procfs_set_self_oom_score_adj(1001) != -ERANGE ||
                    procfs_set_self_oom_score_adj(-1001) != -ERANGE)
                        _exit(1);
                if (procfs_set_self_oom_score_adj(999) != 0)
                        _exit(2);
                if (read_file_at(AT_FDCWD, "/proc/self/oom_score_adj", 64, &buf, &len) != 0 ||
                    strcmp(buf, "999\n") != 0)
                        _exit(3);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_oom_score_adj),
            cmocka_unit_test(test_cpustat_parse),
            cmocka_unit_test(test_cpustat_not_nul_terminated),
            cmocka_unit_test(test_cpustat_sums),
            cmocka_unit_test(test_meminfo_parse),
            cmocka_unit_test(test_loadavg_parse),
            cmocka_unit_test(test_zoneinfo_pcp_parse),
            cmocka_unit_test(test_pidstat_parse),
            cmocka_unit_test(test_pidstat_every_prefix),
            cmocka_unit_test(test_fixture_hot_files),
            cmocka_unit_test(test_fixture_pidstat),
            cmocka_unit_test(test_fixture_foreach),
            cmocka_unit_test(test_fixture_cmdline),
            cmocka_unit_test(test_new_errors),
            cmocka_unit_test(test_big_stat),
            cmocka_unit_test(test_live),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
