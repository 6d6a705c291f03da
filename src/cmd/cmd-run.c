/* SPDX-License-Identifier: MIT */
/* buildtel run: the build as a child, its output passed through untouched,
 * sampled on a monotonic grid, one final sample after it exits. One
 * single-threaded ppoll() loop over the two output pipes, a signalfd and the
 * child's pidfd. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-trace.h"
#include "cmd/cmd.h"
#include "platform/cgroup.h"
#include "platform/child.h"
#include "platform/procfs.h"
#include "util/util.h"

#define READ_CHUNK (128 * 1024)

enum {
        OPT_GRACE = OPT_COMMON_END,
        OPT_OFF,
        OPT_CGROUP,
        OPT_MEMORY_MAX,
        OPT_MEMORY_HIGH,
        OPT_TRACE_FILE,
};

struct run_loop {
        struct child *child;
        struct recorder *rec;
        int sfd;
        char *buf;
        bool exited;
        int status, signal;
        double exit_mono;
        int forwarded;  /* last signal we passed on, for the exit path */
        bool subreaper; /* orphans of the build are ours to reap (--cgroup=none) */
};

static int exec_bare(char **argv)
{
        execvp(argv[0], argv);
        int e = errno;

        fprintf(stderr, "buildtel: cannot run '%s': %s\n", argv[0], strerror(e));
        return e == ENOENT ? EXIT_BT_NOTFOUND : EXIT_BT_NOEXEC;
}

/* One read from the child's stream, passed on whole before the next read.
 * Returns false at EOF (or when our own end of that stream is gone). */
static bool pump(struct run_loop *L, int stream)
{
        int fd = stream == 1 ? child_stdout_fd(L->child) : child_stderr_fd(L->child);
        ssize_t n;
        int e;

        do
                n = read(fd, L->buf, READ_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return true;
        if (n <= 0) {
                if (L->rec)
                        recorder_output_eof(L->rec, stream);
                child_close_fd(L->child, stream);
                return false;
        }
        e = write_all(stream, L->buf, (size_t)n);
        if (L->rec)
                recorder_output(L->rec, stream, L->buf, (size_t)n);
        if (e == -EPIPE) {
                /* Whoever read our output is gone: let the build see a broken
                 * pipe too, as it would without us. */
                child_close_fd(L->child, stream);
                return false;
        }
        return true;
}

static void reap(struct run_loop *L)
{
        if (L->exited)
                return;
        if (child_try_wait(L->child, &L->status, &L->signal) > 0) {
                L->exited = true;
                L->exit_mono = now_monotonic();
        }
}

/* As a subreaper we inherit the build's orphans: reap them (their rusage
 * lands in our RUSAGE_CHILDREN, which --cgroup=none adds up), but leave the
 * build itself to child_try_wait. */
static void reap_orphans(struct run_loop *L)
{
        for (int i = 0; L->subreaper && i < 4096; i++) {
                siginfo_t si = {0};

                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0 ||
                    si.si_pid == child_pid(L->child))
                        return;
                (void)waitpid(si.si_pid, NULL, WNOHANG);
        }
}

static void handle_signals(struct run_loop *L)
{
        struct signalfd_siginfo si;

        while (read(L->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                int sig = (int)si.ssi_signo;

                if (sig == SIGCHLD) {
                        reap(L);
                        reap_orphans(L);
                        continue;
                }
                /* INT, TERM, HUP, QUIT: the build decides what they mean. */
                L->forwarded = sig;
                (void)child_signal(L->child, sig);
        }
}

/* Read what is already in the pipes, without waiting. */
static void drain_ready(struct run_loop *L)
{
        for (int rounds = 0; rounds < 1024; rounds++) {
                struct pollfd p[2] = {
                    {.fd = child_stdout_fd(L->child), .events = POLLIN},
                    {.fd = child_stderr_fd(L->child), .events = POLLIN},
                };
                bool any = false;

                if (poll(p, 2, 0) <= 0)
                        return;
                for (int i = 0; i < 2; i++)
                        if (p[i].revents) {
                                (void)pump(L, i + 1);
                                any = true;
                        }
                if (!any)
                        return;
        }
}

static struct timespec to_timespec(double s)
{
        struct timespec ts;

        if (s < 0)
                s = 0;
        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        return ts;
}

static int run_loop(struct run_loop *L, double grace)
{
        bool final_done = false;

        for (;;) {
                struct pollfd p[4 + RECORDER_POLLFDS];
                int n = 0, out_i = -1, err_i = -1, sig_i, pid_i = -1, rec_i;
                double now = now_monotonic(), deadline = INFINITY;
                struct timespec ts;

                if (L->exited && !final_done) {
                        drain_ready(L);
                        if (L->rec)
                                (void)recorder_tick(L->rec);
                        final_done = true;
                }
                if (L->exited) {
                        if (child_stdout_fd(L->child) < 0 && child_stderr_fd(L->child) < 0)
                                return 0;
                        /* Something the build left behind holds its pipes. */
                        if (now >= L->exit_mono + grace)
                                return 0;
                        deadline = L->exit_mono + grace;
                } else if (L->rec) {
                        if (now >= recorder_next_tick(L->rec)) {
                                (void)recorder_tick(L->rec);
                                continue;
                        }
                        deadline = recorder_next_tick(L->rec);
                }

                if (child_stdout_fd(L->child) >= 0) {
                        out_i = n;
                        p[n++] = (struct pollfd){.fd = child_stdout_fd(L->child), .events = POLLIN};
                }
                if (child_stderr_fd(L->child) >= 0) {
                        err_i = n;
                        p[n++] = (struct pollfd){.fd = child_stderr_fd(L->child), .events = POLLIN};
                }
                sig_i = n;
                p[n++] = (struct pollfd){.fd = L->sfd, .events = POLLIN};
                if (!L->exited && child_pidfd(L->child) >= 0) {
                        pid_i = n;
                        p[n++] = (struct pollfd){.fd = child_pidfd(L->child), .events = POLLIN};
                }
                /* Network exports: their sockets and timers, never a wait. */
                rec_i = n;
                if (L->rec)
                        n += (int)recorder_pollfds(L->rec, p + n, RECORDER_POLLFDS, &deadline);

                ts = to_timespec(deadline - now);
                if (ppoll(p, (nfds_t)n, isinf(deadline) ? NULL : &ts, NULL) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (out_i >= 0 && p[out_i].revents)
                        (void)pump(L, 1);
                if (err_i >= 0 && p[err_i].revents)
                        (void)pump(L, 2);
                if (p[sig_i].revents)
                        handle_signals(L);
                if (pid_i >= 0 && p[pid_i].revents)
                        reap(L);
                if (L->rec)
                        recorder_poll(L->rec, p + rec_i, (size_t)(n - rec_i));
                if (L->exited && L->forwarded && !final_done) {
                        /* Interrupted: do not wait out the grace period for
                         * helpers that ignore the signal. */
                        grace = MIN(grace, 0.5);
                }
        }
}

static void print_run_usage(FILE *f)
{
        fputs("usage: buildtel run [OPTIONS] -- COMMAND [ARG...]\n"
              "Run COMMAND, pass its output through untouched, and record the machine's\n"
              "resources while it runs. Exits with COMMAND's status. See `buildtel help run`.\n",
              f);
}

int cmd_run(int argc, char **argv)
{
        static const struct option longopts[] = {
            COMMON_LONGOPTS,
            {"grace", required_argument, NULL, OPT_GRACE},
            {"off", no_argument, NULL, OPT_OFF},
            {"cgroup", required_argument, NULL, OPT_CGROUP},
            {"memory-max", required_argument, NULL, OPT_MEMORY_MAX},
            {"memory-high", required_argument, NULL, OPT_MEMORY_HIGH},
            {"trace-file", no_argument, NULL, OPT_TRACE_FILE},
            {0},
        };
        struct common_opts o;
        struct run_info ri = {0};
        struct run_loop L = {.sfd = -1};
        struct child_config ccfg = {0};
        struct cgroup_config cgcfg = {.mode = CGROUP_MODE_AUTO, .root = "/"};
        struct cgroup *cg = NULL;
        int cg_fds[_CG_H_MAX];
        struct dbuf short_sum = DBUF_INIT;
        struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
        sigset_t mask, old_mask;
        const char *env;
        double grace = 2.0;
        bool off = false, trace_file = false;
        int c, e, ret = EXIT_BT_INTERNAL;

        common_opts_init(&o);
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                int h = common_opts_parse(&o, c, optarg, "run");
                if (h < 0)
                        goto out;
                if (h > 0)
                        continue;
                switch (c) {
                case OPT_GRACE:
                        if (parse_double_str(optarg, &grace) < 0 || grace < 0 || grace > 3600) {
                                fprintf(stderr,
                                        "buildtel run: --grace takes seconds from 0 to 3600, not "
                                        "'%s'\n",
                                        optarg);
                                goto out;
                        }
                        break;
                case OPT_OFF:
                        off = true;
                        break;
                case OPT_TRACE_FILE:
                        trace_file = true;
                        break;
                case OPT_CGROUP:
                        if (cgroup_mode_parse(optarg, &cgcfg.mode) < 0) {
                                fprintf(stderr,
                                        "buildtel run: --cgroup takes auto, v2, hybrid, v1 or "
                                        "none, not '%s'\n",
                                        optarg);
                                goto out;
                        }
                        break;
                case OPT_MEMORY_MAX:
                case OPT_MEMORY_HIGH:
                        if (parse_size_str(optarg, c == OPT_MEMORY_MAX ? &cgcfg.memory_max
                                                                       : &cgcfg.memory_high) < 0 ||
                            (c == OPT_MEMORY_MAX ? cgcfg.memory_max : cgcfg.memory_high) < 4096) {
                                fprintf(stderr,
                                        "buildtel run: %s takes a size of at least 4K (512M, 4G, "
                                        "...), not '%s'\n",
                                        c == OPT_MEMORY_MAX ? "--memory-max" : "--memory-high",
                                        optarg);
                                goto out;
                        }
                        break;
                case 'h':
                        o.help = true;
                        break;
                default:
                        print_run_usage(stderr);
                        goto out;
                }
        }
        if (o.help) {
                cmd_print_usage("run");
                ret = 0;
                goto out;
        }
        if (optind >= argc) {
                fprintf(stderr, "buildtel run: no command given\n");
                print_run_usage(stderr);
                goto out;
        }
        argv += optind;

        env = getenv("BUILDTEL");
        if (off || (env && strcmp(env, "0") == 0)) {
                ret = exec_bare(argv);
                goto out;
        }
        if (common_otlp_load(&o, "run") < 0)
                goto out;

        /* Signals arrive on the signalfd; the build gets the old mask. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigprocmask(SIG_BLOCK, &mask, &old_mask);
        sigaction(SIGPIPE, &ign, &old_pipe);
        L.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (L.sfd < 0) {
                fprintf(stderr, "buildtel: signalfd: %s\n", strerror(errno));
                goto out_sig;
        }
        L.buf = malloc(READ_CHUNK);
        if (!L.buf || common_run_info(&o, "run", &ri) < 0) {
                fprintf(stderr, "buildtel: out of memory\n");
                goto out_sig;
        }
        {
                size_t n = (size_t)(argc - optind);
                ri.argv = calloc(n + 1, sizeof(char *));
                for (size_t i = 0; ri.argv && i < n; i++)
                        if (!(ri.argv[i] = strdup(argv[i])))
                                break;
        }

        /* The build's cgroup exists before the build does. */
        cgcfg.run_id = ri.run_id;
        cgcfg.note = common_note;
        if (cgcfg.mode == CGROUP_MODE_NONE && (cgcfg.memory_max || cgcfg.memory_high)) {
                fprintf(stderr, "buildtel run: --memory-max and --memory-high need a cgroup, not "
                                "--cgroup=none\n");
                goto out_sig;
        }
        e = cgroup_new(&cgcfg, &cg);
        if (e < 0 && cgcfg.mode == CGROUP_MODE_AUTO && !cgcfg.memory_max && !cgcfg.memory_high) {
                fprintf(stderr,
                        "buildtel: note: no cgroup for the build (%s): --cgroup=none, its figures "
                        "are estimates from /proc\n",
                        e == -ENOENT ? "none mounted" : strerror(-e));
                cgcfg.mode = CGROUP_MODE_NONE;
                e = cgroup_new(&cgcfg, &cg);
        }
        if (e < 0) {
                fprintf(stderr, "buildtel run: cannot make the build's cgroup (--cgroup=%s): %s\n",
                        cgroup_mode_name(cgcfg.mode),
                        e == -ENOENT       ? "its hierarchies are not mounted here"
                        : e == -EOPNOTSUPP ? "the memory limit did not hold"
                                           : strerror(-e));
                goto out_sig;
        }
        if (cgroup_mode(cg) == CGROUP_MODE_NONE) {
                /* Orphans of the build come to us, so the tree stays whole
                 * and their CPU is counted when we reap them. */
                L.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
        }
        o.rec.cgroup = cg;
        ccfg.cgroup_procs_fds = cg_fds;
        ccfg.n_cgroup_procs_fds = cgroup_procs_fds(cg, cg_fds, ARRAY_SIZE(cg_fds));

        ccfg.argv = argv;
        ccfg.pipes = true;
        ccfg.foreground = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
        ccfg.sigmask = &old_mask;
        ccfg.sigpipe = &old_pipe;
        /* The recorder's clock starts, and the baseline sample is taken,
         * before the build exists: nothing it does can precede them. */
        e = recorder_new(&o.rec, &ri, &L.rec);
        if (e < 0) {
                fprintf(stderr, "buildtel: warning: not recording: %s\n", strerror(-e));
                L.rec = NULL;
        } else {
                (void)recorder_tick(L.rec);
        }

        e = child_spawn(&ccfg, &L.child);
        if (e < 0) {
                fprintf(stderr, "buildtel: cannot run '%s': %s\n", argv[0], strerror(-e));
                ret = e == -ENOENT ? EXIT_BT_NOTFOUND : EXIT_BT_NOEXEC;
                /* The attempt is on record, with the status a shell gives. */
                ri.end_epoch = now_realtime();
                ri.finished = true;
                ri.exit_code = ret;
                if (L.rec)
                        (void)recorder_finish(L.rec, NULL);
                goto out_sig;
        }
        ri.pid = child_pid(L.child);
        /* The OOM killer should take the build's process, not the recorder;
         * the build forked before this and keeps its own value. Lowering
         * needs privilege; without it this simply fails. */
        (void)procfs_set_self_oom_score_adj(-500);

        e = run_loop(&L, grace);
        if (e < 0) {
                /* The loop only fails if poll itself does; keep the build's
                 * status anyway. */
                fprintf(stderr, "buildtel: warning: %s\n", strerror(-e));
        }
        while (!L.exited) {
                struct pollfd p = {.fd = L.sfd, .events = POLLIN};
                (void)poll(&p, 1, 100);
                handle_signals(&L);
                reap(&L);
        }
        child_restore_terminal(L.child);
        /* After the final sample: what the build left running goes with
         * its cgroup. */
        cgroup_free(cg);
        cg = NULL;

        ri.end_epoch = now_realtime();
        ri.finished = true;
        ri.exit_code = L.status;
        ri.term_signal = L.signal;
        if (L.rec) {
                (void)recorder_finish(L.rec, &short_sum);
                common_report(&o, L.rec, &short_sum);
                if (trace_file)
                        (void)trace_write_run(L.rec, &o.rec, ri.run_id);
        }
        ret = L.status;

out_sig:
        sigaction(SIGPIPE, &old_pipe, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
out:
        recorder_free(L.rec);
        cgroup_free(cg);
        child_free(L.child);
        closep(&L.sfd);
        free(L.buf);
        dbuf_release(&short_sum);
        run_info_release(&ri);
        common_opts_release(&o);
        return ret;
}
