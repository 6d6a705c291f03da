/* SPDX-License-Identifier: MIT */
/* The live child of `run`: its two output pipes passed through untouched,
 * its exit seen on the pidfd or SIGCHLD, signals forwarded to its group. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "platform/child.h"
#include "util/util.h"

#define READ_CHUNK (128 * 1024)
#define SPLICE_CHUNK CHILD_PIPE_SIZE /* the child's pipe, full */

/* Where our stdout or stderr goes, for the kernel's copy (pump_splice). */
enum out_kind {
        OUT_COPY, /* a terminal, a file, a socket: read and write */
        OUT_PIPE, /* tee(2) to it */
        OUT_NULL, /* /dev/null: nothing to write */
};

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
        enum out_kind out[3];           /* of our fds 1 and 2 */
        const struct source_live *live; /* run --live's status line, borrowed; NULL: none */
};

void source_child_set_live(struct source_child *s, const struct source_live *l)
{
        s->live = l;
}

/* Our output pipe made as large as the child's (SPLICE_CHUNK), never
 * smaller than it is: with the 64 KiB a shell gives a pipe, every full
 * pipe of the build's waits on the reader 16 times (the text to `| cat`
 * took 0.272 s, with 1 MiB 0.214 s, median of 11 interleaved pairs). The
 * bytes are the same; the kernel may refuse (a user over its pipe pages:
 * then it stays as it was). */
static void widen_pipe(int fd)
{
        int sz = fcntl(fd, F_GETPIPE_SZ);

        if (sz >= 0 && sz < SPLICE_CHUNK)
                (void)fcntl(fd, F_SETPIPE_SZ, SPLICE_CHUNK);
}

/* The build's output bypasses user space (pump_splice) when it comes on
 * a pipe and our own fd goes to a pipe or /dev/null; a terminal, a file
 * or a socket gets it by write(2). */
static enum out_kind out_kind(int fd, const struct child_config *cfg)
{
        struct stat st;

        if (!cfg->pipes || cfg->pty || fstat(fd, &st) < 0)
                return OUT_COPY;
        if (S_ISFIFO(st.st_mode))
                return OUT_PIPE;
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
                return OUT_NULL;
        return OUT_COPY;
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

int source_child_open(const struct child_config *cfg, double grace, bool subreaper,
                      struct source_child **ret)
{
        struct source_child *s = calloc(1, sizeof(*s));
        int e;

        if (!s)
                return -ENOMEM;
        s->buf = malloc(READ_CHUNK);
        e = s->buf ? child_spawn(cfg, &s->child) : -ENOMEM;
        if (e < 0) {
                child_close(s);
                return e;
        }
        s->grace = grace;
        s->subreaper = subreaper;
        for (int fd = 1; fd <= 2; fd++)
                if ((s->out[fd] = out_kind(fd, cfg)) == OUT_PIPE)
                        widen_pipe(fd);
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

static void pump_eof(struct source_child *s, int stream, struct recorder *r)
{
        if (r)
                recorder_output_eof(r, stream);
        child_close_fd(s->child, stream);
}

/* The chunk at the head of the child's pipe passed on by the kernel, with
 * no copy through user space: duplicated onto our stdout or stderr with
 * tee(2) when that is a pipe (nothing when /dev/null), then moved into the
 * build log with splice(2); the parse reads it back from the log on its
 * own thread. The same bytes in the same order as pump's read and write.
 * Returns 1: passed on; 0: EOF or our end gone (closed); -1: take the
 * read path for this chunk (what this call passed on is accounted). */
static int pump_splice(struct source_child *s, int stream, int fd, struct recorder *r)
{
        size_t want = SPLICE_CHUNK, moved = 0;
        bool teed = s->out[stream] == OUT_PIPE;
        off_t off;
        int lfd = recorder_output_fd(r, &off), err = 0;
        ssize_t n = 0;

        if (lfd < 0)
                return -1;
        if (teed) {
                do {
                        n = tee(fd, stream, want, 0);
                        /* a non-blocking stdout fills as a blocking one would block */
                        if (n < 0 && errno == EAGAIN)
                                (void)poll(&(struct pollfd){.fd = stream, .events = POLLOUT}, 1,
                                           -1);
                } while (n < 0 && (errno == EINTR || errno == EAGAIN));
                if (n < 0 && errno == EPIPE) {
                        /* as pump: the reader of our output is gone */
                        child_close_fd(s->child, stream);
                        return 0;
                }
                if (n < 0) {
                        s->out[stream] = OUT_COPY; /* no tee here: write(2) */
                        return -1;
                }
                if (n == 0) {
                        pump_eof(s, stream, r);
                        return 0;
                }
                want = (size_t)n;
        }
        /* Into the log: all that was teed, else what the pipe holds. */
        while (moved < want) {
                n = splice(fd, NULL, lfd, NULL, want - moved, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        err = n < 0 ? errno : 0;
                        break;
                }
                moved += (size_t)n;
                if (!teed)
                        break;
        }
        if (moved > 0)
                recorder_output_spliced(r, stream, lfd, off, moved);
        if (err == EINVAL)
                s->out[1] = s->out[2] = OUT_COPY; /* the log's file system has no splice */
        if (!teed) {
                if (moved > 0)
                        return 1;
                if (!err) {
                        pump_eof(s, stream, r);
                        return 0;
                }
                return -1; /* a full disk, say: write(2) keeps the error */
        }
        /* Teed out but not all into the log: read past what our output
         * already has, and give it to the log (which keeps the error) and
         * the parse. */
        while (moved < want) {
                n = read(fd, s->buf, MIN(want - moved, (size_t)READ_CHUNK));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                recorder_output(r, stream, s->buf, (size_t)n);
                moved += (size_t)n;
        }
        return 1;
}

/* One read from the child's stream, passed on whole before the next read.
 * Returns false at EOF (or when our own end of that stream is gone). */
static bool pump(struct source_child *s, int stream, struct recorder *r)
{
        int fd = stream == 1 ? child_stdout_fd(s->child) : child_stderr_fd(s->child);
        ssize_t n;
        int e;

        if (r && !s->live && s->out[stream] != OUT_COPY) {
                int k = pump_splice(s, stream, fd, r);
                if (k >= 0)
                        return k > 0;
        }

        do
                n = read(fd, s->buf, READ_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return true;
        if (n <= 0) {
                pump_eof(s, stream, r);
                return false;
        }
        if (s->live)
                s->live->output(s->live->live, s->buf, (size_t)n, now_monotonic());
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
                s->live->suspend(s->live->live);
        e = child_try_wait(s->child, &s->status, &s->signal);
        if (stopped)
                s->live->resume(s->live->live, now_monotonic());

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

        if (s->live)
                s->live->suspend(s->live->live);
        if (!s->exited)
                (void)child_signal(s->child, SIGTSTP);
        sigemptyset(&tstp);
        sigaddset(&tstp, SIGTSTP);
        (void)raise(SIGTSTP); /* pending while blocked: delivered on unblock */
        sigprocmask(SIG_UNBLOCK, &tstp, NULL);
        sigprocmask(SIG_BLOCK, &tstp, NULL); /* continued: the signalfd's again */
        if (!s->exited)
                (void)child_signal(s->child, SIGCONT);
        if (s->live)
                s->live->resume(s->live->live, now_monotonic());
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
                        s->live->resize(s->live->live, now_monotonic());
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
                *deadline = MIN(*deadline, s->live->deadline(s->live->live));
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
                s->live->update(s->live->live, now_monotonic());
        /* Interrupted: do not wait out the grace period for helpers that
         * ignore the signal. */
        if (s->exited && s->forwarded && !s->final_taken)
                s->grace = MIN(s->grace, 0.5);
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
                 * size, and that is the build's: look each tick. Nor does
                 * anything tell of `fg` on a job that runs (after `bg`):
                 * look whether the terminal is ours to hand back. */
                (void)child_pty_sync_size(s->child);
                if (!s->exited)
                        child_give_terminal(s->child);
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

bool source_child_keyboard_signal(const struct source_child *s)
{
        return s->signal && s->signal != s->forwarded && child_had_terminal(s->child);
}

const struct source_ops source_child = {
    .pollfds = child_pollfds,
    .poll = child_poll,
    .signal = child_on_signal,
    .before_tick = child_before_tick,
    .ended = child_ended,
    .drained = child_drained,
    .close = child_close,
};
