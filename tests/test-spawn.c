/* SPDX-License-Identifier: MIT */
/* spawn_capture() on real processes: exit codes and signals, output
 * captured and capped, stdin from /dev/null, no fd and no signal setting
 * of ours inherited, and a deadline that kills the whole process group and
 * leaves no child behind. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "orphans.h"
#include "platform/spawn.h"
#include "util/macro.h"
#include "util/util.h"

#define NOSIG "0000000000000000"

static const struct {
        const char *what;
        const char *argv[6];
        size_t max;
        double timeout_s;
        bool capture_stderr;
        int ret;         /* status, or -errno */
        const char *out; /* NULL: not checked */
        bool truncated;
        int signal;
        const char *err; /* NULL: not captured */
} cases[] = {
    {"exit 0", {"true"}, 100, 10, false, 0, "", false, 0, NULL},
    {"exit 1", {"false"}, 100, 10, false, 1, "", false, 0, NULL},
    {"exit 42", {"sh", "-c", "exit 42"}, 100, 10, false, 42, "", false, 0, NULL},
    {"stdout kept, stderr dropped",
     {"sh", "-c", "printf 'a\\nb'; echo oops >&2"},
     100,
     10,
     false,
     0,
     "a\nb",
     false,
     0,
     NULL},
    {"stderr captured",
     {"sh", "-c", "echo out; echo err >&2; exit 3"},
     100,
     10,
     true,
     3,
     "out\n",
     false,
     0,
     "err\n"},
    {"killed by a signal",
     {"sh", "-c", "kill -TERM $$"},
     100,
     10,
     false,
     128 + SIGTERM,
     "",
     false,
     SIGTERM,
     NULL},
    {"not found (path)", {"/nonexistent/tool"}, 100, 10, false, -ENOENT, NULL, false, 0, NULL},
    {"not found ($PATH)", {"buildtel-no-such-tool"}, 100, 10, false, -ENOENT, NULL, false, 0, NULL},
    {"not executable", {"/etc"}, 100, 10, false, -EACCES, NULL, false, 0, NULL},
    {"stdin is /dev/null",
     {"readlink", "/proc/self/fd/0"},
     100,
     10,
     false,
     0,
     "/dev/null\n",
     false,
     0,
     NULL},
    {"stdin at EOF at once", {"cat"}, 100, 10, false, 0, "", false, 0, NULL},
    {"output capped, the rest read and dropped",
     {"head", "-c", "1000000", "/dev/zero"},
     1000,
     10,
     false,
     0,
     NULL,
     true,
     0,
     NULL},
    /* ls opens the directory itself as fd 3; a leak would be fd 4 or more */
    {"no fd leaked", {"ls", "/proc/self/fd"}, 100, 10, false, 0, "0\n1\n2\n3\n", false, 0, NULL},
    {"signals default, mask empty",
     {"grep", "^Sig[BI]", "/proc/self/status"},
     200,
     10,
     false,
     0,
     "SigBlk:\t" NOSIG "\nSigIgn:\t" NOSIG "\n",
     false,
     0,
     NULL},
    {"closes its output, keeps running",
     {"sh", "-c", "echo hi; exec >&-; sleep 100"},
     100,
     0.3,
     false,
     -ETIMEDOUT,
     NULL,
     false,
     0,
     NULL},
    {"endless output past the cap", {"yes"}, 100, 0.3, false, -ETIMEDOUT, NULL, false, 0, NULL},
};

static void test_cases(void **state)
{
        struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_pipe;
        sigset_t usr1, old_mask;
        int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: a leak to catch */

        /* What the helper must not inherit: ignored and blocked signals. */
        assert_true(leak >= 0);
        assert_int_equal(dup2(leak, 40), 40);
        sigaction(SIGINT, &ign, &old_int);
        sigaction(SIGPIPE, &ign, &old_pipe);
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigaddset(&usr1, SIGCHLD);
        sigprocmask(SIG_BLOCK, &usr1, &old_mask);

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct spawn_config cfg = {.argv = (char *const *)(uintptr_t)cases[i].argv,
                                           .out_max = cases[i].max,
                                           .timeout_s = cases[i].timeout_s,
                                           .capture_stderr = cases[i].capture_stderr};
                struct spawn_result r = {.out = (char *)(uintptr_t) "untouched"};
                double t0 = now_monotonic(), took;
                int ret = spawn_capture(&cfg, &r);

                took = now_monotonic() - t0;
                if (ret != cases[i].ret)
                        fail_msg("%s: returned %d, want %d", cases[i].what, ret, cases[i].ret);
                /* a deadline is kept, give or take a loaded machine */
                if (took > cases[i].timeout_s + 2)
                        fail_msg("%s: took %.2f s", cases[i].what, took);
                if (ret < 0) {
                        assert_string_equal(r.out, "untouched");
                        continue;
                }
                if (cases[i].out && strcmp(r.out, cases[i].out) != 0)
                        fail_msg("%s: output '%s', want '%s'", cases[i].what, r.out, cases[i].out);
                assert_int_equal(r.out[r.out_len], '\0');
                assert_true(r.out_len <= cases[i].max);
                assert_int_equal(r.out_truncated, cases[i].truncated);
                if (cases[i].truncated)
                        assert_int_equal(r.out_len, cases[i].max);
                assert_int_equal(r.signal, cases[i].signal);
                if (cases[i].err)
                        assert_string_equal(r.err, cases[i].err);
                else
                        assert_null(r.err);
                assert_true(r.pid > 0);
                spawn_result_release(&r);
                assert_null(r.out);
        }
        /* every helper was reaped: no child of ours is left, not even a zombie */
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);

        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        close(40);
        close(leak);
}

/* `sh -c 'sleep 100 & sleep 100'` past its deadline: the shell and both
 * sleeps die by SIGKILL. This process becomes a child subreaper so the
 * orphaned sleeps come back to it and their deaths can be checked. */
static void test_group_killed(void **state)
{
        char dir[] = "/tmp/buildtel-test-spawn.XXXXXX", pidfile[128], script[256];
        char *buf = NULL;
        size_t len = 0;
        const char *end;
        uint64_t pgid = 0;
        double t0;

        assert_non_null(mkdtemp(dir));
        snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
        snprintf(script, sizeof(script), "sleep 100 & echo $$ >'%s'; sleep 100", pidfile);
        {
                char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c", script, NULL};
                /* time enough to start both sleeps on a loaded machine */
                struct spawn_config cfg = {.argv = argv, .out_max = 100, .timeout_s = 2};
                struct spawn_result r;

                assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
                t0 = now_monotonic();
                assert_int_equal(spawn_capture(&cfg, &r), -ETIMEDOUT);
                assert_true(now_monotonic() - t0 < 4);
        }
        assert_int_equal(read_file_at(AT_FDCWD, pidfile, 64, &buf, &len), 0);
        end = buf + len;
        {
                const char *cur = buf;
                assert_int_equal(parse_u64(&cur, end, &pgid), 0);
        }
        free(buf);
        unlink(pidfile);
        rmdir(dir);
        /* the shell itself was reaped by spawn_capture() */
        assert_int_equal(waitpid((pid_t)pgid, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        /* the sleeps come back to us, killed */
        assert_true(reap_orphans(SIGKILL, 5) >= 1);
        /* nothing of the group is left, not even a zombie */
        assert_int_equal(kill(-(pid_t)pgid, 0), -1);
        assert_int_equal(errno, ESRCH);
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* Started with stdin, stdout and stderr closed, as a daemon may be: the
 * pipes and /dev/null then get fds 0-2 here, and must still end up where
 * they belong in the helper. */
static void test_stdio_closed(void **state)
{
        static const char *const argv[] = {
            "sh", "-c", "readlink /proc/self/fd/0; echo out; echo err >&2", NULL};
        struct spawn_config cfg = {.argv = (char *const *)(uintptr_t)argv,
                                   .out_max = 100,
                                   .timeout_s = 10,
                                   .capture_stderr = true};
        struct spawn_result r;
        int saved[3], ret;

        for (int fd = 0; fd < 3; fd++) {
                saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 10);
                assert_true(saved[fd] >= 0);
                close(fd);
        }
        ret = spawn_capture(&cfg, &r);
        for (int fd = 0; fd < 3; fd++) {
                assert_int_equal(dup2(saved[fd], fd), fd);
                close(saved[fd]);
        }
        assert_int_equal(ret, 0);
        assert_string_equal(r.out, "/dev/null\nout\n");
        assert_string_equal(r.err, "err\n");
        spawn_result_release(&r);
}

/* The detached worker: what it saw when it started, in the file at arg. */
static int detached_job(void *arg)
{
        const char *path = arg;
        char line[64];
        int fd, n, open_fds = 0;

        for (int i = 3; i < 64; i++)
                open_fds += fcntl(i, F_GETFD) >= 0;
        n = snprintf(line, sizeof(line), "%d fds\n", open_fds);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        (void)!write(fd, line, (size_t)n);
        close(fd);
        return 0;
}

/* spawn_detached(): the work starts only once its caller has ended (the
 * caller's way out, a sanitizer's leak check, never overlaps it), with no
 * fd of the caller's open, and it outlives the caller. */
static void test_detached_waits(void **state)
{
        char dir[] = "/tmp/test-spawn.XXXXXX", path[64], buf[64] = "";
        int status, fd;
        ssize_t n;
        pid_t pid;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/started", dir);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* the caller: a pipe of its own the worker must not hold */
                int p[2];
                if (pipe(p) < 0 || spawn_detached(detached_job, path) < 0)
                        _exit(2);
                usleep(300 * 1000); /* the worker waits through this */
                _exit(access(path, F_OK) == 0 ? 3 : 0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0); /* 3: it ran while the caller lived */
        for (int i = 0; i < 500 && access(path, F_OK) != 0; i++)
                usleep(10 * 1000);
        usleep(50 * 1000); /* written whole */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0); /* it ran after the caller ended */
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n > 0);
        assert_string_equal(buf, "0 fds\n"); /* none above 2 */
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_group_killed),
            cmocka_unit_test(test_stdio_closed),
            cmocka_unit_test(test_detached_waits),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
