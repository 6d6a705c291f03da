/* SPDX-License-Identifier: MIT */
/* The build as a child process, on real processes: fork and execvp, the
 * shell-style status (code, or 128 + signal), exec failures reported here
 * with no child left, its own process group, its two pipes, the signal
 * mask it starts with, the pidfd, and joining a real cgroup before exec. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "orphans.h"
#include "platform/cgroup.h"
#include "platform/child.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#define ARGV(...) ((char *const *)(uintptr_t)(const char *const[]){__VA_ARGS__, NULL})

/* Wait for the exit on the pidfd (or by polling), at most 10 s. */
static int wait_exit(struct child *c, int *ret_status, int *ret_signal)
{
        double end = now_monotonic() + 10;
        int r;

        while ((r = child_try_wait(c, ret_status, ret_signal)) == 0 && now_monotonic() < end) {
                struct pollfd p = {.fd = child_pidfd(c), .events = POLLIN};
                (void)poll(&p, p.fd >= 0 ? 1 : 0, 20);
        }
        return r;
}

/* Everything on fd until EOF, into b. */
static void drain(int fd, struct dbuf *b)
{
        char buf[4096];
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) > 0)
                assert_int_equal(dbuf_append(b, buf, (size_t)n), 0);
}

static void test_exit_status(void **state)
{
        char noexec[] = "/tmp/buildtel-test-child.XXXXXX"; /* mode 0600: not executable */
        int tmpfd = mkstemp(noexec);
        const struct {
                const char *what;
                char *const *argv;
                int spawn; /* child_spawn()'s return */
                int status, signal;
        } cases[] = {
            {"exit 0", ARGV("true"), 0, 0, 0},
            {"exit 1", ARGV("false"), 0, 1, 0},
            {"exit 255", ARGV("sh", "-c", "exit 255"), 0, 255, 0},
            {"SIGKILL", ARGV("sh", "-c", "kill -KILL $$"), 0, 128 + SIGKILL, SIGKILL},
            {"SIGSEGV", ARGV("sh", "-c", "kill -SEGV $$"), 0, 128 + SIGSEGV, SIGSEGV},
            /* exec failures come back here; cmd_run turns them into 127 / 126 */
            {"not found", ARGV("buildtel-no-such-command"), -ENOENT, 0, 0},
            {"not found (path)", ARGV("/nonexistent/x"), -ENOENT, 0, 0},
            {"not executable", ARGV(noexec), -EACCES, 0, 0},
            {"a directory", ARGV("/"), -EACCES, 0, 0},
        };

        assert_true(tmpfd >= 0);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct child_config cfg = {.argv = cases[i].argv};
                struct child *c = NULL;
                int e = child_spawn(&cfg, &c), st = -1, sig = -1;

                if (e != cases[i].spawn)
                        fail_msg("%s: child_spawn %d, want %d", cases[i].what, e, cases[i].spawn);
                if (e < 0) {
                        assert_null(c);
                        /* no child is left behind, not even a zombie */
                        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
                        assert_int_equal(errno, ECHILD);
                        continue;
                }
                assert_int_equal(wait_exit(c, &st, &sig), 1);
                if (st != cases[i].status || sig != cases[i].signal)
                        fail_msg("%s: status %d signal %d, want %d %d", cases[i].what, st, sig,
                                 cases[i].status, cases[i].signal);
                /* reaped once */
                assert_int_equal(child_try_wait(c, &st, &sig), -ECHILD);
                assert_int_equal(child_signal(c, SIGTERM), -ESRCH);
                child_free(c);
        }
        close(tmpfd);
        unlink(noexec);
}

static void test_pipes_and_group(void **state)
{
        struct child_config cfg = {
            .argv = ARGV("sh", "-c", "echo out; echo err >&2"),
            .pipes = true,
        };
        struct dbuf out = DBUF_INIT, err = DBUF_INIT;
        struct child *c = NULL;
        int st, sig;

        assert_int_equal(child_spawn(&cfg, &c), 0);
        /* its own process group, led by itself */
        assert_int_equal(getpgid(child_pid(c)), child_pid(c));
        assert_true(child_pidfd(c) >= 0); /* kernels since 5.3 */
        drain(child_stdout_fd(c), &out);
        drain(child_stderr_fd(c), &err);
        assert_int_equal(wait_exit(c, &st, &sig), 1);
        assert_int_equal(st, 0);
        assert_string_equal(out.p, "out\n");
        assert_string_equal(err.p, "err\n");
        child_close_fd(c, 1);
        assert_int_equal(child_stdout_fd(c), -1);
        child_free(c);
        child_free(NULL);
        dbuf_release(&out);
        dbuf_release(&err);
}

/* child_signal() reaches the whole group: a shell waiting on a sleep
 * that would outlive it. As a child subreaper this process gets the
 * orphaned sleep back and sees how it died. */
static void test_signal_group(void **state)
{
        struct child_config cfg = {.argv = ARGV("sh", "-c", "sleep 100 & echo started; wait"),
                                   .pipes = true};
        char line[16];
        struct child *c = NULL;
        int st, sig;
        pid_t pg;

        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        assert_int_equal(child_spawn(&cfg, &c), 0);
        pg = child_pid(c);
        /* the sleep is forked once the shell says so */
        assert_int_equal(read(child_stdout_fd(c), line, sizeof(line)), 8);
        assert_memory_equal(line, "started\n", 8);
        assert_int_equal(child_signal(c, SIGTERM), 0);
        assert_int_equal(wait_exit(c, &st, &sig), 1);
        assert_int_equal(st, 128 + SIGTERM);
        assert_int_equal(reap_orphans(SIGTERM, 5), 1);
        assert_int_equal(kill(-pg, 0), -1); /* the group is gone */
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
        child_free(c);
}

/* This process's SigIgn (/proc/self/status), ~0 when it cannot be read. */
static unsigned long long own_sigign(void)
{
        char buf[4096], *p;
        FILE *f = fopen("/proc/self/status", "re");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

        if (f)
                fclose(f);
        buf[n] = '\0';
        p = strstr(buf, "\nSigIgn:\t");
        return p ? strtoull(p + 9, NULL, 16) : ~0ULL;
}

/* The signal mask the build starts with is the one given; SIGPIPE is
 * default unless given. */
static void test_sigmask(void **state)
{
        struct sigaction ign = {.sa_handler = SIG_IGN}, old;
        struct child_config cfg = {
            .argv = ARGV("grep", "^Sig[BI]", "/proc/self/status"),
            .pipes = true,
        };
        struct dbuf out = DBUF_INIT;
        struct child *c = NULL;
        sigset_t mask;
        int st, sig;

        unsigned long long inherited = own_sigign();
        char want[64];

        /* What the test was started with ignored (SIGINT and SIGQUIT for a
         * job started with & without job control, SIGHUP under nohup) the
         * child rightly inherits, as exec does: only SIGPIPE's ignoring,
         * this process's own, is left behind. */
        assert_true(inherited != ~0ULL);
        inherited &= ~(1ULL << (SIGPIPE - 1));
        snprintf(want, sizeof(want), "SigBlk:\t0000000000000200\nSigIgn:\t%016llx\n", inherited);
        sigemptyset(&mask);
        sigaddset(&mask, SIGUSR1); /* bit 10, 0x200 */
        cfg.sigmask = &mask;
        sigaction(SIGPIPE, &ign, &old);
        assert_int_equal(child_spawn(&cfg, &c), 0);
        drain(child_stdout_fd(c), &out);
        assert_int_equal(wait_exit(c, &st, &sig), 1);
        assert_string_equal(out.p, want);
        child_free(c);
        sigaction(SIGPIPE, &old, NULL);
        dbuf_release(&out);
}

/* A real cgroup: the child writes itself into cgroup.procs before exec. */
static void test_cgroup_join(void **state)
{
        struct cgroup_config cgcfg = {
            .mode = CGROUP_MODE_AUTO, .root = "/", .run_id = "test-child"};
        struct child_config cfg = {.argv = ARGV("sleep", "10")};
        struct cgroup *cg = NULL;
        struct child *c = NULL;
        const long *pids;
        size_t n;
        int fds[8], e, st, sig;

        e = cgroup_new(&cgcfg, &cg);
        if (e < 0) {
                print_message("cgroup join not tested: no cgroup for us here (%s)\n", strerror(-e));
                skip();
        }
        cfg.cgroup_procs_fds = fds;
        cfg.n_cgroup_procs_fds = cgroup_procs_fds(cg, fds, ARRAY_SIZE(fds));
        assert_true(cfg.n_cgroup_procs_fds > 0);
        assert_int_equal(child_spawn(&cfg, &c), 0);
        assert_int_equal(cgroup_pids(cg, &pids, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(pids[0], (long)child_pid(c));
        assert_int_equal(child_signal(c, SIGKILL), 0);
        assert_int_equal(wait_exit(c, &st, &sig), 1);
        assert_int_equal(sig, SIGKILL);
        child_free(c);
        cgroup_free(cg);
}

/* child_exec_check() against execvp's own answer, on real files: for each
 * case the check's verdict, and a real fork + execvp with the same PATH
 * must agree (0: it ran; else its errno). Runs in a tmp dir with an
 * executable, a plain file, a directory and a PATH of them. */
static void test_exec_check(void **state)
{
        char dir[] = "/tmp/test-child-exec.XXXXXX", old[4096];
        static const struct {
                const char *argv0, *path;
                int want;
        } cases[] = {
            {"sh", "/usr/bin:/bin", 0},
            {"sh", NULL, 0},                 /* glibc's default PATH */
            {"no-such-cmd-x", "/usr/bin:/bin", -ENOENT},
            {"", "/usr/bin", -ENOENT},
            {"./run", NULL, 0},              /* a '/': as it is */
            {"./plain", NULL, -EACCES},      /* not executable */
            {"./sub", NULL, -EACCES},        /* a directory */
            {"./none", NULL, -ENOENT},
            {"run", "", 0},                  /* an empty entry: the cwd */
            {"run", "/nonexistent:", 0},
            {"plain", ".", -EACCES},
            {"plain", ".:/nonexistent", -EACCES}, /* EACCES wins over ENOENT */
            {"sub", "/usr/bin:.", -EACCES},
            {"run", "/nonexistent", -ENOENT},
        };
        int fd;

        assert_non_null(getcwd(old, sizeof(old)));
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chdir(dir), 0);
        fd = open("run", O_WRONLY | O_CREAT | O_EXCL, 0755);
        assert_true(fd >= 0 && write(fd, "#!/bin/sh\nexit 0\n", 17) == 17);
        close(fd);
        fd = open("plain", O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0 && write(fd, "exit 0\n", 7) == 7);
        close(fd);
        assert_int_equal(mkdir("sub", 0755), 0);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int got = child_exec_check(cases[i].argv0, cases[i].path), status, real;
                pid_t pid = fork();

                assert_true(pid >= 0);
                if (pid == 0) {
                        char *const argv[] = {(char *)(uintptr_t)cases[i].argv0, NULL};
                        if (cases[i].path)
                                setenv("PATH", cases[i].path, 1);
                        else
                                unsetenv("PATH");
                        execvp(argv[0], argv);
                        _exit(errno == ENOENT ? 127 : errno == EACCES ? 126 : 125);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                real = WEXITSTATUS(status) == 127 ? -ENOENT : WEXITSTATUS(status) == 126 ? -EACCES : 0;
                if (got != cases[i].want || real != cases[i].want)
                        fail_msg("case %zu: '%s' in PATH '%s': check %d, execvp %d, want %d", i,
                                 cases[i].argv0, cases[i].path ? cases[i].path : "(unset)", got,
                                 real, cases[i].want);
        }
        (void)unlink("run");
        (void)unlink("plain");
        (void)rmdir("sub");
        assert_int_equal(chdir(old), 0);
        (void)rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exit_status),  cmocka_unit_test(test_pipes_and_group),
            cmocka_unit_test(test_signal_group), cmocka_unit_test(test_sigmask),
            cmocka_unit_test(test_cgroup_join),  cmocka_unit_test(test_exec_check),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
