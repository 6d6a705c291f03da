/* SPDX-License-Identifier: MIT */
/* follow: real files in a temp directory, appended to, switched to a newer
 * one (the old one's partial line finished first), truncated and
 * rewritten, picked up late (only the last MiB), and read at most a few
 * MiB per call. */
#include <errno.h>
#include <fcntl.h>
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

#include "parse/linebuf.h"
#include "platform/follow.h"
#include "util/dbuf.h"
#include "util/macro.h"

struct fx {
        char dir[64];
        int dfd;
        struct follow *f;
        struct linebuf *lb; /* the bytes split as watch splits them (source-pid.c) */
        struct dbuf got;    /* lines delivered, each followed by '|' ('!' when truncated) */
        size_t nlines;
};

static void on_line(void *userdata, const char *line, size_t len, bool truncated)
{
        struct fx *x = userdata;

        x->nlines++;
        if (x->got.len < 4096)
                (void)dbuf_append(&x->got, line, MIN(len, (size_t)64));
        (void)dbuf_append(&x->got, truncated ? "!" : "|", 1);
}

static void on_bytes(void *userdata, const char *buf, size_t len, unsigned flags)
{
        struct fx *x = userdata;

        if (flags & FOLLOW_SWITCH) {
                linebuf_flush(x->lb, on_line, x);
                if (flags & FOLLOW_MID_FILE)
                        linebuf_skip_line(x->lb);
        }
        linebuf_feed(x->lb, buf, len, on_line, x);
}

static int setup(void **state)
{
        struct fx *x = calloc(1, sizeof(*x));

        if (!x)
                return -1;
        snprintf(x->dir, sizeof(x->dir), "/tmp/buildtel-test-follow.XXXXXX");
        if (!mkdtemp(x->dir))
                return -1;
        x->dfd = open(x->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (x->dfd < 0 || follow_new(x->dir, &x->f) < 0 || linebuf_new(0, &x->lb) < 0)
                return -1;
        *state = x;
        return 0;
}

static int teardown(void **state)
{
        struct fx *x = *state;
        static const char *const names[] = {"a.log", "b.log", "c.log", ".hidden", "big.log", "sub"};

        follow_free(x->f);
        linebuf_free(x->lb);
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (unlinkat(x->dfd, names[i], 0) < 0)
                        (void)unlinkat(x->dfd, names[i], AT_REMOVEDIR);
        close(x->dfd);
        rmdir(x->dir);
        dbuf_release(&x->got);
        free(x);
        return 0;
}

/* Append s to name (created if needed) and give it the mtime sec, so
 * "newest" does not depend on the clock's resolution. */
static void append(struct fx *x, const char *name, const char *s, size_t len, time_t sec)
{
        int fd = openat(x->dfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        struct timespec ts[2] = {{sec, 0}, {sec, 0}};

        assert_true(fd >= 0);
        assert_int_equal(write(fd, s, len), (ssize_t)len);
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
}

/* One poll; what it delivered must be want. */
static long poll_expect(struct fx *x, const char *want)
{
        long n;

        dbuf_reset(&x->got);
        (void)dbuf_append(&x->got, "", 0);
        n = follow_poll(x->f, on_bytes, x);
        assert_true(n >= 0);
        assert_string_equal(x->got.p, want);
        return n;
}

static void test_append_and_switch(void **state)
{
        struct fx *x = *state;
        static const struct {
                const char *file; /* NULL: no write before the poll */
                const char *text;
                time_t mtime;
                const char *want;
        } steps[] = {
            {NULL, NULL, 0, ""}, /* an empty directory */
            {"a.log", "l1\nl2\npart", 1000, "l1|l2|"},
            {NULL, NULL, 0, ""},
            {"a.log", "ial\n", 1001, "partial|"},
            /* a hidden file or a directory is never followed */
            {".hidden", "no\n", 5000, ""},
            {"a.log", "no newline yet", 1002, ""},
            /* a newer file: the old one's partial line first, then the new */
            {"b.log", "b1\n", 2000, "no newline yet|b1|"},
            /* the older file growing is not followed any more */
            {"a.log", "ignored\n", 1003, ""},
            {"b.log", "b2\nb3\n", 2001, "b2|b3|"},
        };

        assert_int_equal(mkdirat(x->dfd, "sub", 0755), 0);
        for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
                if (steps[i].file)
                        append(x, steps[i].file, steps[i].text, strlen(steps[i].text),
                               steps[i].mtime);
                poll_expect(x, steps[i].want);
        }
}

static void test_truncate_rewrite(void **state)
{
        struct fx *x = *state;
        int fd;

        append(x, "c.log", "one\ntwo\nthree\n", 14, 1000);
        poll_expect(x, "one|two|three|");
        /* truncated and rewritten shorter: read again from the start */
        fd = openat(x->dfd, "c.log", O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        close(fd);
        append(x, "c.log", "new\n", 4, 1001);
        poll_expect(x, "new|");
}

/* A file first seen with 3 MiB in it: only the last MiB is read, and the
 * line cut by that start is dropped. Then 5 MiB more arrive at once: one
 * call reads at most 4 MiB, the next one the rest. */
static void test_late_and_large(void **state)
{
        struct fx *x = *state;
        static char line[1024];
        char *chunk = malloc(5u << 20);
        long n1, n2;

        assert_non_null(chunk);
        memset(line, 'x', sizeof(line) - 1);
        line[sizeof(line) - 1] = '\n';
        for (size_t o = 0; o < (5u << 20); o += sizeof(line))
                memcpy(chunk + o, line, sizeof(line));
        /* 3 MiB + 100 bytes: the tail start falls mid-line */
        append(x, "big.log", chunk, (3u << 20) + 100, 1000);
        x->nlines = 0;
        assert_int_equal(follow_poll(x->f, on_bytes, x), 1 << 20);
        /* 1 MiB from (2 MiB + 100): the first, partial, line is dropped */
        assert_int_equal(x->nlines, (1 << 20) / sizeof(line) - 1);

        append(x, "big.log", chunk, 5u << 20, 1001);
        n1 = follow_poll(x->f, on_bytes, x);
        n2 = follow_poll(x->f, on_bytes, x);
        assert_true(n1 >= 4 << 20 && n1 < (4 << 20) + 65536);
        assert_int_equal(n1 + n2, 5 << 20);
        assert_int_equal(follow_poll(x->f, on_bytes, x), 0);
        free(chunk);
}

static void test_errors(void **state)
{
        struct follow *f = NULL;

        assert_int_equal(follow_new("/nonexistent/buildtel", &f), -ENOENT);
        assert_int_equal(follow_new("/etc/passwd", &f), -ENOTDIR);
        assert_null(f);
        follow_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_append_and_switch, setup, teardown),
            cmocka_unit_test_setup_teardown(test_truncate_rewrite, setup, teardown),
            cmocka_unit_test_setup_teardown(test_late_and_large, setup, teardown),
            cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
