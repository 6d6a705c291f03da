/* SPDX-License-Identifier: MIT */
/* The live child of `run`: its two output pipes passed through untouched,
 * its exit seen on the pidfd or SIGCHLD, signals forwarded to its group. */
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "platform/child.h"
#include "util/util.h"

#define READ_CHUNK (128 * 1024)

struct source_child {
        struct child *child;
        char *buf;
        bool exited;
        bool final_taken;
        int status, signal;
        double exit_mono;
        double grace;
        int forwarded;                  /* last signal we passed on, for the exit path */
        bool subreaper;                 /* orphans of the build are ours to reap (--cgroup=none) */
        int idx[3];                     /* where pollfds put stdout, stderr, the pidfd; -1 none */
        const struct source_live *live; /* run --live's status line, borrowed; NULL: none */
};

void source_child_set_live(struct source_child *s, const struct source_live *l)
{
        s->live = l;
}

static void live_suspend(const struct source_live *l)
{
        if (l)
                l->suspend(l->userdata);
}

static void live_resume(const struct source_live *l, double now)
{
        if (l)
                l->resume(l->userdata, now);
}

int source_child_open(const struct child_config *cfg, double grace, bool subreaper,
                      struct source_child **ret)
{
        struct source_child *s = calloc(1, sizeof(*s));
        int e;

        if (!s)
                return -ENOMEM;
        s->buf = malloc(READ_CHUNK);
        if (!s->buf) {
                free(s);
                return -ENOMEM;
        }
        e = child_spawn(cfg, &s->child);
        if (e < 0) {
                free(s->buf);
                free(s);
                return e;
        }
        s->grace = grace;
        s->subreaper = subreaper;
        *ret = s;
        return 0;
}

int source_child_join_error(const struct source_child *s)
{
        return child_join_error(s->child);
}

long source_child_pid(const struct source_child *s)
{
        return (long)child_pid(s->child);
}

const char *source_child_exit_comm(const struct source_child *s)
{
        return child_exit_comm(s->child);
}

static void child_close(void *state)
{
        struct source_child *s = state;

        if (!s)
                return;
        child_free(s->child);
        free(s->buf);
        free(s);
}

/* One read from the child's stream, passed on whole before the next read.
 * Returns false at EOF (or when our own end of that stream is gone). */
static bool pump(struct source_child *s, int stream, struct recorder *r)
{
        int fd = stream == 1 ? child_stdout_fd(s->child) : child_stderr_fd(s->child);
        ssize_t n;
        int e;

        do
                n = read(fd, s->buf, READ_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return true;
        if (n <= 0) {
                if (r)
                        recorder_output_eof(r, stream);
                child_close_fd(s->child, stream);
                return false;
        }
        if (s->live)
                s->live->output(s->live->userdata, s->buf, (size_t)n, now_monotonic());
        e = write_all(stream, s->buf, (size_t)n);
        if (r)
                recorder_output(r, stream, s->buf, (size_t)n);
        if (e == -EPIPE) {
                /* Whoever read our output is gone: let the build see a broken
                 * pipe too, as it would without us. */
                child_close_fd(s->child, stream);
                return false;
        }
        return true;
}

/* The build stopped (Ctrl-Z)? Asked without reaping, so the status line
 * can step aside before child_try_wait stops us with it. */
static bool child_stopped(const struct source_child *s)
{
        siginfo_t si = {0};

        return waitid(P_PID, (id_t)child_pid(s->child), &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
               si.si_pid != 0 && si.si_code == CLD_STOPPED;
}

static void reap(struct source_child *s)
{
        bool stopped;
        int e;

        if (s->exited)
                return;
        stopped = s->live && child_stopped(s);
        if (stopped)
                live_suspend(s->live);
        e = child_try_wait(s->child, &s->status, &s->signal);
        if (stopped)
                live_resume(s->live, now_monotonic());

        if (e == -ECHILD) {
                /* Reaped by someone else: gone, its status unknown. */
                fprintf(
                    stderr,
                    "buildtel: warning: the build was reaped elsewhere; its exit status is lost\n");
                s->status = 1;
                s->signal = 0;
        }
        if (e > 0 || e == -ECHILD) {
                s->exited = true;
                s->exit_mono = now_monotonic();
        }
}

/* As a subreaper we inherit the build's orphans: reap them (their rusage
 * lands in our RUSAGE_CHILDREN, which --cgroup=none adds up), but leave the
 * build itself to child_try_wait. */
static void reap_orphans(struct source_child *s)
{
        for (int i = 0; s->subreaper && i < 4096; i++) {
                siginfo_t si = {0};

                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0 ||
                    si.si_pid == child_pid(s->child))
                        return;
                (void)waitpid(si.si_pid, NULL, WNOHANG);
        }
}

/* Ctrl-Z reached us, not the build: the terminal is ours (the build's
 * stdin or stdout is elsewhere), so the build is in a process group the
 * terminal does not stop. Take the status line down, stop the build as the
 * terminal would have, stop ourselves the default way (the shell sees the
 * job stop), and on `fg` carry on together with the line back. */
static void suspend(struct source_child *s)
{
        sigset_t tstp;

        live_suspend(s->live);
        if (!s->exited)
                (void)child_signal(s->child, SIGTSTP);
        sigemptyset(&tstp);
        sigaddset(&tstp, SIGTSTP);
        (void)raise(SIGTSTP); /* pending while blocked: delivered on unblock */
        sigprocmask(SIG_UNBLOCK, &tstp, NULL);
        sigprocmask(SIG_BLOCK, &tstp, NULL); /* continued: the signalfd's again */
        if (!s->exited)
                (void)child_signal(s->child, SIGCONT);
        live_resume(s->live, now_monotonic());
}

static void child_on_signal(void *state, int sig)
{
        struct source_child *s = state;

        if (sig == SIGCHLD) {
                reap(s);
                reap_orphans(s);
                return;
        }
        if (sig == SIGWINCH) {
                /* The build's own pty follows our terminal; else the
                 * build's terminal told it itself. */
                (void)child_pty_sync_size(s->child);
                if (s->live)
                        s->live->resize(s->live->userdata, now_monotonic());
                return;
        }
        if (sig == SIGTSTP) {
                suspend(s);
                return;
        }
        /* INT, TERM, HUP, QUIT: the build decides what they mean. */
        s->forwarded = sig;
        (void)child_signal(s->child, sig);
}

static size_t child_pollfds(void *state, struct pollfd *p, size_t cap, double *deadline)
{
        struct source_child *s = state;
        int fds[3] = {child_stdout_fd(s->child), child_stderr_fd(s->child),
                      s->exited ? -1 : child_pidfd(s->child)};
        size_t n = 0;

        for (int i = 0; i < 3; i++) {
                s->idx[i] = -1;
                if (fds[i] >= 0 && n < cap) {
                        s->idx[i] = (int)n;
                        p[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
                }
        }
        if (s->live && !s->exited)
                *deadline = MIN(*deadline, s->live->deadline(s->live->userdata));
        return n;
}

static void child_poll(void *state, const struct pollfd *p, size_t n, struct recorder *r)
{
        struct source_child *s = state;

        for (int i = 0; i < 2; i++)
                if (s->idx[i] >= 0 && p[s->idx[i]].revents)
                        (void)pump(s, i + 1, r);
        if (s->idx[2] >= 0 && p[s->idx[2]].revents)
                reap(s);
        if (s->live && !s->exited)
                s->live->update(s->live->userdata, now_monotonic());
        if (s->exited && s->forwarded && !s->final_taken) {
                /* Interrupted: do not wait out the grace period for helpers
                 * that ignore the signal. */
                s->grace = MIN(s->grace, 0.5);
        }
}

/* Read what is already in the pipes, without waiting. */
static void drain_ready(struct source_child *s, struct recorder *r)
{
        for (int rounds = 0; rounds < 1024; rounds++) {
                struct pollfd p[2] = {
                    {.fd = child_stdout_fd(s->child), .events = POLLIN},
                    {.fd = child_stderr_fd(s->child), .events = POLLIN},
                };
                bool any = false;

                if (poll(p, 2, 0) <= 0)
                        return;
                for (int i = 0; i < 2; i++)
                        if (p[i].revents) {
                                (void)pump(s, i + 1, r);
                                any = true;
                        }
                if (!any)
                        return;
        }
}

static void child_before_tick(void *state, bool final, struct recorder *r)
{
        struct source_child *s = state;

        if (!final) {
                /* The terminal tells only its foreground group of a new
                 * size, and that is the build's: look each tick. */
                (void)child_pty_sync_size(s->child);
                return;
        }
        /* The final sample sees all the output the build wrote. */
        drain_ready(s, r);
        s->final_taken = true;
}

static bool child_ended(void *state)
{
        const struct source_child *s = state;

        return s->exited;
}

static bool child_drained(void *state, double now, double *deadline)
{
        const struct source_child *s = state;

        if (child_stdout_fd(s->child) < 0 && child_stderr_fd(s->child) < 0)
                return true;
        /* Something the build left behind holds its pipes. */
        if (now >= s->exit_mono + s->grace)
                return true;
        *deadline = s->exit_mono + s->grace;
        return false;
}

int source_child_wait(struct source_child *s, int sfd, int *ret_signal)
{
        while (!s->exited) {
                struct pollfd p = {.fd = sfd, .events = POLLIN};
                struct signalfd_siginfo si;

                (void)poll(&p, 1, 100);
                while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                        child_on_signal(s, (int)si.ssi_signo);
                reap(s);
        }
        child_restore_terminal(s->child);
        *ret_signal = s->signal;
        return s->status;
}

const struct source_ops source_child = {
    .name = "child",
    .pollfds = child_pollfds,
    .poll = child_poll,
    .signal = child_on_signal,
    .before_tick = child_before_tick,
    .ended = child_ended,
    .drained = child_drained,
    .close = child_close,
};
