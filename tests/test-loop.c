/* SPDX-License-Identifier: MIT */
/* The pipeline's event loop (loop_run) driven by a test source on a real
 * pipe and a real signalfd, and the CSV replay (recorder_replay_csv) through a
 * real recorder against the summary of the same file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/summary.h"
#include "runfiles/samplecsv.h"
#include "pipeline/loop.h"
#include "util/util.h"
#include "helpers/parse.h"

/* A live source on the read end of a pipe: ended at EOF or on a signal;
 * once ended, drained only drain_s seconds later. */
struct fake {
        int fd;
        size_t bytes;
        bool eof;
        int sig;
        unsigned ticks, finals;
        double ended_at, drain_s;
};

static size_t fake_pollfds(void *state, struct pollfd *p, size_t cap, double *deadline)
{
        struct fake *f = state;

        if (f->eof || cap < 1)
                return 0;
        p[0] = (struct pollfd){.fd = f->fd, .events = POLLIN};
        return 1;
}

static void fake_poll(void *state, const struct pollfd *p, size_t n, struct recorder *r)
{
        struct fake *f = state;
        char buf[4096];
        ssize_t k;

        if (n < 1 || !p[0].revents)
                return;
        k = read(f->fd, buf, sizeof(buf));
        if (k > 0)
                f->bytes += (size_t)k;
        else if (k == 0)
                f->eof = true;
}

static void fake_signal(void *state, int sig)
{
        struct fake *f = state;

        f->sig = sig;
}

static void fake_before_tick(void *state, bool final, struct recorder *r)
{
        struct fake *f = state;

        f->ticks++;
        if (final) {
                f->finals++;
                f->ended_at = now_monotonic();
        }
}

static bool fake_ended(void *state)
{
        const struct fake *f = state;

        return f->eof || f->sig;
}

static bool fake_drained(void *state, double now, double *deadline)
{
        const struct fake *f = state;

        if (now >= f->ended_at + f->drain_s)
                return true;
        *deadline = f->ended_at + f->drain_s;
        return false;
}

static const struct source_ops fake_ops = {
    .pollfds = fake_pollfds,
    .poll = fake_poll,
    .signal = fake_signal,
    .before_tick = fake_before_tick,
    .ended = fake_ended,
    .drained = fake_drained,
};

static void test_live(void **state)
{
        static const struct {
                const char *name;
                const char *data; /* written before the loop */
                bool close_writer;
                int raise_sig; /* 0: none */
                double drain_s;
        } cases[] = {
            {"data then EOF", "hello, loop", true, 0, 0},
            {"a signal ends it, the writer still open", "x", false, SIGHUP, 0},
            {"SIGTERM with nothing written", "", false, SIGTERM, 0},
            {"EOF, then drained 0.2 s later", "", true, 0, 0.2},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct fake f = {.drain_s = cases[i].drain_s};
                sigset_t old;
                int p[2], sfd;
                double t0;

                print_message("case: %s\n", cases[i].name);
                assert_int_equal(pipe2(p, O_CLOEXEC), 0);
                f.fd = p[0];
                assert_int_equal(write(p[1], cases[i].data, strlen(cases[i].data)),
                                 (ssize_t)strlen(cases[i].data));
                if (cases[i].close_writer)
                        closep(&p[1]);
                sfd = loop_signalfd(false, &old);
                assert_true(sfd >= 0);
                if (cases[i].raise_sig)
                        assert_int_equal(raise(cases[i].raise_sig), 0);
                t0 = now_monotonic();
                assert_int_equal(loop_run(&fake_ops, &f, NULL, sfd), 0);
                /* the final sample's turn comes once, after the end */
                assert_int_equal(f.finals, 1);
                assert_int_equal(f.ticks, 1); /* no recorder: no tick before */
                assert_int_equal(f.sig, cases[i].raise_sig);
                if (!cases[i].raise_sig)
                        assert_int_equal(f.bytes, strlen(cases[i].data));
                assert_true(now_monotonic() - t0 >= cases[i].drain_s);
                assert_true(now_monotonic() - t0 < cases[i].drain_s + 2);
                close(sfd);
                assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
                closep(&p[0]);
                closep(&p[1]);
        }
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

/* A replay through the recorder gives the summary the file gives. */
static void test_replay_csv(void **state)
{
        static const struct {
                const char *file;
                int64_t rows; /* or -errno */
        } cases[] = {
            {"small.csv", -1},
            {"torn-junk.csv", 3},
            {"header-only.csv", 0},
            {"not-buildtel.csv", -EINVAL},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct recorder_config cfg = {.interval = 1,
                                              .summary = {.near_oom_mb = 3000, .low_disk_gb = 18}};
                struct run_info ri = {.exit_code = -1};
                struct summary *want = malloc(sizeof(*want));
                struct dbuf a = DBUF_INIT, b = DBUF_INIT;
                struct recorder *r = NULL;
                int64_t rows, want_rows;
                size_t len;
                char *buf = load(cases[i].file, &len);

                print_message("case: %s\n", cases[i].file);
                assert_non_null(want);
                summary_init(want, &cfg.summary);
                want_rows = samplecsv_summary(buf, len, want);
                if (cases[i].rows != -1)
                        assert_int_equal(want_rows, cases[i].rows);
                assert_int_equal(recorder_new(&cfg, &ri, &r), 0);
                assert_null(recorder_log_dir(r)); /* a replay writes nothing */
                assert_int_equal(recorder_tick(r), -EINVAL);
                rows = recorder_replay_csv(r, buf, len);
                assert_int_equal(rows, want_rows);
                if (rows >= 0) {
                        assert_int_equal(recorder_summary(r)->skipped_rows, want->skipped_rows);
                        assert_int_equal(render_summary_json(want, &ri, &a), 0);
                        assert_int_equal(render_summary_json(recorder_summary(r), &ri, &b), 0);
                        assert_string_equal(a.p, b.p);
                }
                recorder_free(r);
                dbuf_release(&a);
                dbuf_release(&b);
                free(want);
                free(buf);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_live),
            cmocka_unit_test(test_replay_csv),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
