/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pipeline/parseq.h"
#include "util/dbuf.h"
#include "util/macro.h"

/* What the worker was handed: the bytes of each stream in order, the
 * largest piece, the EOFs, and each piece's instant. */
struct seen {
        struct dbuf out[3];
        size_t max_piece;
        unsigned eofs[3];
        unsigned pieces;
        double last_now;
        bool now_backwards;
};

static void on_chunk(void *userdata, int stream, const char *buf, size_t len, double now, bool eof)
{
        struct seen *s = userdata;

        assert_true(stream == 1 || stream == 2);
        if (now < s->last_now)
                s->now_backwards = true;
        s->last_now = now;
        if (eof) {
                assert_int_equal(len, 0);
                s->eofs[stream]++;
                return;
        }
        assert_true(len > 0);
        s->pieces++;
        s->max_piece = MAX(s->max_piece, len);
        assert_int_equal(dbuf_append(&s->out[stream], buf, len), 0);
}

/* A file of the test's own, never on disk: pread and ftruncate as on the
 * build log. */
static int temp_file(void)
{
        int fd = memfd_create("buildtel-parseq", MFD_CLOEXEC);

        assert_true(fd >= 0);
        return fd;
}

static void fill(char *buf, size_t len, unsigned seed)
{
        for (size_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                buf[i] = (char)(seed >> 16);
        }
}

/* Regions of a file, one push each of up to several MiB (more than a file
 * slot holds, more than the queue's slots hold at once), between copied
 * chunks of the other stream: each stream's bytes come out whole and in
 * order, the file's in pieces no larger than the read buffer. */
static void test_file_and_copies(void **state)
{
        const size_t flen = 5 * PARSEQ_FILE_SLOT + 12345;
        char *file = malloc(flen), copy[3000];
        struct seen s = {.out = {DBUF_INIT, DBUF_INIT, DBUF_INIT}};
        struct parseq *q = NULL;
        size_t off = 0, cut[] = {1, 70000, PARSEQ_FILE_SLOT, 3 * PARSEQ_FILE_SLOT + 7, 0};
        struct dbuf want2 = DBUF_INIT;
        int fd = temp_file();
        double now = 1.0;

        (void)state;
        assert_non_null(file);
        fill(file, flen, 7);
        assert_int_equal(write(fd, file, flen), (ssize_t)flen);
        assert_int_equal(parseq_new(on_chunk, &s, &q), 0);
        for (size_t i = 0; i < ARRAY_SIZE(cut); i++) {
                size_t n = cut[i] ? cut[i] : flen - off;

                parseq_push_file(q, 1, fd, (off_t)off, n, now);
                off += n;
                fill(copy, sizeof(copy), (unsigned)i);
                parseq_push(q, 2, copy, sizeof(copy), now);
                assert_int_equal(dbuf_append(&want2, copy, sizeof(copy)), 0);
                now += 0.5;
        }
        assert_int_equal(off, flen);
        parseq_push_eof(q, 1, now);
        parseq_push_eof(q, 2, now);
        parseq_sync(q);
        assert_int_equal(s.out[1].len, flen);
        assert_memory_equal(s.out[1].p, file, flen);
        assert_int_equal(s.out[2].len, want2.len);
        assert_memory_equal(s.out[2].p, want2.p, want2.len);
        assert_true(s.max_piece <= PARSEQ_READ);
        assert_true(s.pieces >= flen / PARSEQ_READ);
        assert_int_equal(s.eofs[1], 1);
        assert_int_equal(s.eofs[2], 1);
        assert_false(s.now_backwards);
        parseq_free(q);
        close(fd);
        free(file);
        dbuf_release(&want2);
        for (int i = 0; i < 3; i++)
                dbuf_release(&s.out[i]);
}

/* The file cut short under the queue: the worker hands on what is there
 * and no more (the parse sees less; nothing fails), then carries on. */
static void test_file_cut_short(void **state)
{
        const size_t flen = 3 * PARSEQ_FILE_SLOT;
        char *file = malloc(flen);
        struct seen s = {.out = {DBUF_INIT, DBUF_INIT, DBUF_INIT}};
        struct parseq *q = NULL;
        int fd = temp_file();

        (void)state;
        assert_non_null(file);
        fill(file, flen, 3);
        assert_int_equal(write(fd, file, flen), (ssize_t)flen);
        assert_int_equal(ftruncate(fd, (off_t)(PARSEQ_FILE_SLOT + 1000)), 0);
        assert_int_equal(parseq_new(on_chunk, &s, &q), 0);
        parseq_push_file(q, 1, fd, 0, flen, 1.0);
        parseq_push(q, 1, "tail\n", 5, 2.0);
        parseq_push_eof(q, 1, 3.0);
        parseq_sync(q);
        assert_int_equal(s.out[1].len, PARSEQ_FILE_SLOT + 1000 + 5);
        assert_memory_equal(s.out[1].p, file, PARSEQ_FILE_SLOT + 1000);
        assert_memory_equal(s.out[1].p + PARSEQ_FILE_SLOT + 1000, "tail\n", 5);
        assert_int_equal(s.eofs[1], 1);
        parseq_free(q);
        close(fd);
        free(file);
        for (int i = 0; i < 3; i++)
                dbuf_release(&s.out[i]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_file_and_copies),
            cmocka_unit_test(test_file_cut_short),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
