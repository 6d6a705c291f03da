/* SPDX-License-Identifier: MIT */
/* util/: the cursor parsers, whole-file reads, mkdir -p and the run files'
 * rules, on real files in a temp directory (the atomic replacement of a
 * file is util/outfile's: tests/test-outfile.c). */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

static void test_parse_numbers(void **state)
{
        static const struct {
                const char *in;
                int r_u64, r_i64, r_double;
                uint64_t u;
                int64_t i;
                double d;
                size_t used; /* bytes consumed by parse_u64 (or parse_i64 for "-") */
        } cases[] = {
            {"0", 0, 0, 0, 0, 0, 0, 1},
            {"42 rest", 0, 0, 0, 42, 42, 42, 2},
            {"18446744073709551615", 0, -ERANGE, 0, UINT64_MAX, 0, 18446744073709551615.0, 20},
            {"18446744073709551616", -ERANGE, -ERANGE, 0, 0, 0, 18446744073709551616.0, 0},
            {"9223372036854775807", 0, 0, 0, 9223372036854775807u, INT64_MAX, 9.2e18, 19},
            {"-9223372036854775808", -EINVAL, 0, 0, 0, INT64_MIN, -9.2e18, 20},
            {"-9223372036854775809", -EINVAL, -ERANGE, 0, 0, 0, -9.2e18, 0},
            {"1.5", 0, 0, 0, 1, 1, 1.5, 1},
            {"", -EINVAL, -EINVAL, -EINVAL, 0, 0, 0, 0},
            {"x", -EINVAL, -EINVAL, -EINVAL, 0, 0, 0, 0},
            {"-", -EINVAL, -EINVAL, -EINVAL, 0, 0, 0, 0},
            {"1e5", 0, 0, 0, 1, 1, 1, 1},
        };

        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                const char *s = cases[k].in, *end = s + strlen(s), *p;
                uint64_t u = 7;
                int64_t i = 7;
                double d = 7;

                p = s;
                assert_int_equal(parse_u64(&p, end, &u), cases[k].r_u64);
                if (cases[k].r_u64 == 0) {
                        assert_true(u == cases[k].u);
                        assert_ptr_equal(p, s + cases[k].used);
                } else {
                        assert_ptr_equal(p, s); /* untouched on failure */
                        assert_true(u == 7);
                }
                p = s;
                assert_int_equal(parse_i64(&p, end, &i), cases[k].r_i64);
                if (cases[k].r_i64 == 0)
                        assert_true(i == cases[k].i);
                else
                        assert_true(i == 7 && p == s);
                p = s;
                assert_int_equal(parse_double(&p, end, &d), cases[k].r_double);
                if (cases[k].r_double == 0)
                        assert_true(fabs(d - cases[k].d) <= fabs(cases[k].d) * 1e-2);
                else
                        assert_true(d == 7 && p == s);
        }
}

static void test_parse_size(void **state)
{
        static const struct {
                const char *in;
                int r;
                uint64_t v;
        } cases[] = {
            {"1000000", 0, 1000000},      {"4G", 0, 4294967296u}, {"512M", 0, 536870912},
            {"1.5GiB", 0, 1610612736},    {"2kB", 0, 2000},       {"1TB", 0, 1000000000000u},
            {"4X", -EINVAL, 0},           {"-1", -ERANGE, 0},     {"", -EINVAL, 0},
            {"99999999999T", -ERANGE, 0},
        };

        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                uint64_t v = 0;

                assert_int_equal(parse_size_str(cases[k].in, &v), cases[k].r);
                if (cases[k].r == 0)
                        assert_true(v == cases[k].v);
        }
}

/* A scratch directory, removed (one level deep) at the end. */
struct scratch {
        char dir[64];
        int dfd;
};

static int scratch_setup(void **state)
{
        struct scratch *s = calloc(1, sizeof(*s));

        if (!s)
                return -1;
        snprintf(s->dir, sizeof(s->dir), "/tmp/buildtel-test-util.XXXXXX");
        if (!mkdtemp(s->dir))
                return -1;
        s->dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        *state = s;
        return s->dfd < 0 ? -1 : 0;
}

static int scratch_teardown(void **state)
{
        struct scratch *s = *state;
        DIR *d = opendir_at(s->dfd, ".");
        struct dirent *de;

        while (d && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(s->dfd, de->d_name, 0) < 0)
                        (void)unlinkat(s->dfd, de->d_name, AT_REMOVEDIR);
        }
        if (d)
                closedir(d);
        close(s->dfd);
        rmdir(s->dir);
        free(s);
        return 0;
}

static void assert_content(int dfd, const char *name, const char *want)
{
        char *buf = NULL;
        size_t len = 0;

        assert_int_equal(read_file_at(dfd, name, 1 << 20, &buf, &len), 0);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(buf, want, len);
        free(buf);
}

/* A run file (issue 33): only nothing or our own regular file is made
 * anew, in a directory others cannot write unless it is sticky; what is
 * planted there stays as it was. */
static void test_runfile(void **state)
{
        struct scratch *s = *state;
        static const struct {
                const char *name;
                int check; /* runfile_check() */
        } names[] = {
            {"absent", 0},     {"ours", 1},      {"fifo", -EEXIST},
            {"link", -EEXIST}, {"dir", -EEXIST}, {"theirs", -EEXIST},
        };
        /* a group-writable directory of ours is shared unless its group is
         * our user private group (gid = uid) */
        int upg = geteuid() == (uid_t)getegid() ? 1 : -EPERM;
        const struct {
                mode_t mode;
                bool other_group; /* the directory's group another's (as root) */
                int want;         /* runfile_check() of "ours" */
        } dirs[] = {{0700, false, 1},     {0755, false, 1},      {0777, false, -EPERM},
                    {0770, false, upg},   {0770, true, -EPERM},  {01777, true, 1},
                    {01770, true, 1},     {0750, true, 1}};
        char path[256], from[256];
        struct stat st;
        int fd;

        assert_int_equal(outfile_write_at(s->dfd, "ours", "old", 3, 0600), 0);
        assert_int_equal(outfile_write_at(s->dfd, "theirs", "old", 3, 0644), 0);
        assert_int_equal(mkfifoat(s->dfd, "fifo", 0666), 0);
        assert_int_equal(symlinkat("ours", s->dfd, "link"), 0);
        assert_int_equal(mkdirat(s->dfd, "dir", 0700), 0);
        if (geteuid() != 0 || fchownat(s->dfd, "theirs", 65534, 65534, 0) < 0)
                assert_int_equal(unlinkat(s->dfd, "theirs", 0), 0); /* cannot give it away */
        for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                bool gone = strcmp(names[k].name, "theirs") == 0 &&
                            fstatat(s->dfd, "theirs", &st, AT_SYMLINK_NOFOLLOW) < 0;

                assert_int_equal(runfile_check(s->dfd, names[k].name), gone ? 0 : names[k].check);
                if (names[k].check >= 0 || gone)
                        continue;
                /* neither opened (a FIFO would block) nor replaced */
                snprintf(path, sizeof(path), "%s/%s", s->dir, names[k].name);
                assert_int_equal(runfile_create(path, O_WRONLY), -EEXIST);
                assert_int_equal(write_file_atomic(path, "new", 3), -EEXIST);
                snprintf(from, sizeof(from), "%s/from", s->dir);
                assert_int_equal(write_file_atomic(from, "x", 1), 0);
                assert_int_equal(runfile_renameat(s->dfd, "from", s->dfd, names[k].name), -EEXIST);
                assert_int_equal(unlinkat(s->dfd, "from", 0), 0);
        }
        assert_content(s->dfd, "ours", "old");
        for (size_t k = 0; k < ARRAY_SIZE(dirs); k++) {
                if (dirs[k].other_group && (geteuid() != 0 || fchown(s->dfd, -1, 65534) < 0))
                        continue; /* cannot give the group away */
                assert_int_equal(fchmod(s->dfd, dirs[k].mode), 0);
                assert_int_equal(runfile_check(s->dfd, "ours"), dirs[k].want);
                assert_int_equal(fchown(s->dfd, -1, getegid()), 0);
        }
        assert_int_equal(fchmod(s->dfd, 0700), 0);
        /* our own file from an earlier run: a new one, empty, 0600 */
        snprintf(path, sizeof(path), "%s/ours", s->dir);
        fd = runfile_create(path, O_RDWR);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        close(fd);
        assert_int_equal(write_file_atomic(path, "new", 3), 0);
        assert_content(s->dfd, "ours", "new");
        snprintf(from, sizeof(from), "%s/from", s->dir);
        assert_int_equal(write_file_atomic(from, "moved", 5), 0);
        assert_int_equal(runfile_renameat(s->dfd, "from", s->dfd, "ours"), 0);
        assert_content(s->dfd, "ours", "moved");
        assert_string_equal(
            runfile_strerror(-EEXIST),
            "its name is held by a file not ours (another user's, a symlink, a FIFO)");
}

static void test_read_file_at(void **state)
{
        struct scratch *s = *state;
        static char big[10000];
        char *buf = NULL;
        size_t len = 0;

        memset(big, 'x', sizeof(big));
        assert_int_equal(outfile_write_at(s->dfd, "big", big, sizeof(big), 0644), 0);
        assert_int_equal(read_file_at(s->dfd, "big", sizeof(big), &buf, &len), 0);
        assert_int_equal(len, sizeof(big));
        assert_int_equal(buf[len], '\0');
        free(buf);
        buf = NULL;
        assert_int_equal(read_file_at(s->dfd, "big", sizeof(big) - 1, &buf, &len), -EFBIG);
        assert_null(buf);
        /* a cap under the first read's size holds too */
        assert_int_equal(read_file_at(s->dfd, "big", 100, &buf, &len), -EFBIG);
        assert_int_equal(read_file_at(s->dfd, "big", 0, &buf, &len), -EFBIG);
        assert_null(buf);
        assert_int_equal(outfile_write_at(s->dfd, "small", "12345", 5, 0644), 0);
        assert_int_equal(read_file_at(s->dfd, "small", 5, &buf, &len), 0);
        assert_int_equal(len, 5);
        free(buf);
        assert_int_equal(read_file_at(s->dfd, "none", 100, &buf, &len), -ENOENT);
}

static void test_mkdir_p(void **state)
{
        struct scratch *s = *state;
        char path[256];
        struct stat st;

        snprintf(path, sizeof(path), "%s/p/q/r//", s->dir);
        assert_int_equal(mkdir_p(path, 0700), 0);
        assert_int_equal(mkdir_p(path, 0700), 0); /* exists: fine */
        assert_int_equal(fstatat(s->dfd, "p/q/r", &st, 0), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(outfile_write_at(s->dfd, "f", "", 0, 0644), 0);
        snprintf(path, sizeof(path), "%s/f/sub", s->dir);
        assert_int_equal(mkdir_p(path, 0700), -ENOTDIR);
        (void)unlinkat(s->dfd, "p/q/r", AT_REMOVEDIR);
        (void)unlinkat(s->dfd, "p/q", AT_REMOVEDIR);
}

static void test_iso8601(void **state)
{
        static const struct {
                double epoch;
                const char *want;
        } cases[] = {
            {0, "1970-01-01T00:00:00.000Z"},
            {1795968800.1234, "2026-11-29T16:13:20.123Z"},
            {1795968800.9996, "2026-11-29T16:13:21.000Z"}, /* rounds into the next second */
        };
        char buf[64];

        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                format_iso8601(cases[k].epoch, buf);
                assert_string_equal(buf, cases[k].want);
        }
}

/* One rule per purpose: exact (rounded, seconds kept) for summaries and
 * reports, compact (truncated, no seconds from an hour on) for columns. */
static void test_fmt_duration(void **state)
{
        static const struct {
                double s;
                const char *exact, *compact;
        } cases[] = {
            {0, "0.0s", "0.0s"},
            {12.34, "12.3s", "12.3s"},
            {59.9, "59.9s", "59.9s"},
            {60, "1m00s", "1m00s"},
            {245, "4m05s", "4m05s"},
            {245.6, "4m06s", "4m05s"},
            {3599.6, "1h00m00s", "59m59s"},
            {3723.4, "1h02m03s", "1h02m"},
            {3779.9, "1h03m00s", "1h02m"},
            {360000, "100h00m00s", "100h00m"},
            {-1, "?", "-"},
            {NAN, "?", "-"},
            {INFINITY, "?", "-"},
            {1e12, "?", "-"},
        };
        char buf[FMT_DURATION_LEN];

        (void)state;
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                assert_string_equal(fmt_duration(cases[k].s, FMT_DURATION_EXACT, buf),
                                    cases[k].exact);
                assert_string_equal(fmt_duration(cases[k].s, FMT_DURATION_COMPACT, buf),
                                    cases[k].compact);
        }
}

/* One spelling of a size (issue 35): binary units, three significant
 * digits, never four digits in one unit. */
static void test_fmt_size(void **state)
{
        static const struct {
                double mib;
                const char *want;
        } cases[] = {
            {0, "0 B"},
            {512.0 / 1048576, "512 B"},
            {1.5 / 1024, "1.50 KiB"},
            {0.5, "512 KiB"},
            {1.0, "1.00 MiB"},
            {9.996, "10.0 MiB"},
            {23.1, "23.1 MiB"},
            {99.96, "100 MiB"},
            {488.2, "488 MiB"},
            {999.4, "999 MiB"},
            {999.5, "0.98 GiB"},
            {1023.9, "1.00 GiB"},
            {1024, "1.00 GiB"},
            {1352.6, "1.32 GiB"},
            {23618, "23.1 GiB"},
            {2.0 * 1024 * 1024, "2.00 TiB"},
            {-1, "-"},
            {NAN, "-"},
            {INFINITY, "-"},
        };
        char buf[16];

        (void)state;
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                fmt_size_mib(cases[k].mib, buf, sizeof(buf));
                assert_string_equal(buf, cases[k].want);
        }
        fmt_size(1023, buf, sizeof(buf));
        assert_string_equal(buf, "1023 B");
        fmt_size(1e20, buf, sizeof(buf)); /* the last unit */
        assert_string_equal(buf, "86.7 EiB");
}

/* One truncation rule: cut to cap - 1, then back to a character start. */
static void test_copy_utf8(void **state)
{
        static const struct {
                const char *src;
                size_t cap;
                const char *want;
        } cases[] = {
            {"abc", 8, "abc"},
            {"abcdef", 4, "abc"},
            {"abc", 4, "abc"},
            {"ab\xc3\xa9", 4, "ab"},         /* é would end past cap - 1 */
            {"ab\xc3\xa9", 5, "ab\xc3\xa9"}, /* fits */
            {"a\xe2\x82\xac", 5, "a\xe2\x82\xac"},
            {"a\xe2\x82\xac", 4, "a"}, /* the euro sign does not fit with the NUL */
            {"a\xe2\x82\xacz", 4, "a"},
            {"", 1, ""},
            {NULL, 4, ""},
        };
        char buf[16];

        (void)state;
        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                memset(buf, 'x', sizeof(buf));
                assert_int_equal(copy_utf8_str(buf, cases[k].cap, cases[k].src),
                                 strlen(cases[k].want));
                assert_string_equal(buf, cases[k].want);
        }
        assert_int_equal(copy_utf8(buf, 0, "abc", 3), 0);
        assert_int_equal(copy_utf8(buf, sizeof(buf), "ab\0cd", 5), 5); /* len, not NUL */
}

static void test_state_path(void **state)
{
        static const struct {
                const char *xdg, *home, *want;
        } cases[] = {
            {"/x/state", "/home/u", "/x/state/buildtel/logs"},
            {"rel/state", "/home/u", "/home/u/.local/state/buildtel/logs"},
            {NULL, "/home/u", "/home/u/.local/state/buildtel/logs"},
            {"", "rel", NULL},
            {NULL, NULL, NULL},
        };

        (void)state;
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                char *p;

                if (cases[k].xdg)
                        setenv("XDG_STATE_HOME", cases[k].xdg, 1);
                else
                        unsetenv("XDG_STATE_HOME");
                if (cases[k].home)
                        setenv("HOME", cases[k].home, 1);
                else
                        unsetenv("HOME");
                p = state_path("logs");
                if (cases[k].want)
                        assert_string_equal(p, cases[k].want);
                else
                        assert_null(p);
                free(p);
        }
}

/* closep() forgets the number it closed: a second closep() (or a close of
 * the field at exit) must not close what took the number since (issue 33:
 * the build's output pipe). */
static void test_closep(void **state)
{
        int p[2], fd, again;

        (void)state;
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        closep(&fd);
        assert_int_equal(fd, -1);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        again = p[0];
        closep(&fd); /* a no-op: the pipe stays open */
        assert_true(fcntl(again, F_GETFD) >= 0);
        closep(&p[0]);
        closep(&p[1]);
        assert_int_equal(p[0], -1);
        assert_int_equal(p[1], -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_closep),
            cmocka_unit_test(test_parse_numbers),
            cmocka_unit_test(test_parse_size),
            cmocka_unit_test(test_iso8601),
            cmocka_unit_test(test_fmt_duration),
            cmocka_unit_test(test_fmt_size),
            cmocka_unit_test(test_state_path),
            cmocka_unit_test(test_copy_utf8),
            cmocka_unit_test_setup_teardown(test_runfile, scratch_setup, scratch_teardown),
            cmocka_unit_test_setup_teardown(test_read_file_at, scratch_setup, scratch_teardown),
            cmocka_unit_test_setup_teardown(test_mkdir_p, scratch_setup, scratch_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
