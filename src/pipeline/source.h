/* SPDX-License-Identifier: MIT */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

struct recorder;

/* A live source feeds the recorder, the one pipeline (r: NULL when `run`
 * is not recording): the child of `run`, the pid of `watch`, driven by
 * loop_run(). It names the fds to poll, acts on what ppoll returned and on
 * the signals of the signalfd, says when the build has ended (then the
 * loop takes the final sample) and when nothing is left to pass on. (A
 * replay's samples go in by recorder_replay_csv() or
 * recorder_replay_history().) Each driver has its own typed open function
 * (below), since what it opens differs; its state is then passed with its
 * ops. */
struct source_ops {
        /* live: the fds to poll now (at most cap), *deadline (monotonic
         * seconds) lowered to when the source needs a turn regardless */
        size_t (*pollfds)(void *state, struct pollfd *p, size_t cap, double *deadline);
        /* live: after ppoll, the entries pollfds filled (revents set) */
        void (*poll)(void *state, const struct pollfd *p, size_t n, struct recorder *r);
        /* live: a signal read from the loop's signalfd */
        void (*signal)(void *state, int sig);
        /* live: before a sample (final: the one after the build ended) */
        void (*before_tick)(void *state, bool final, struct recorder *r);
        /* live: the build is over: take the final sample */
        bool (*ended)(void *state);
        /* live, once ended: nothing is left to pass on (else *deadline is
         * lowered to when that is decided). NULL: at once. */
        bool (*drained)(void *state, double now, double *deadline);

        void (*close)(void *state); /* NULL state is a no-op */
};

/* At most this many fds from one source's pollfds. */
#define SOURCE_POLLFDS 4

/* The live child of `run`: spawned here (platform/child.h, the error of
 * child_spawn returned as is) and owned. Its output passes through to our
 * stdout and stderr byte for byte (an EPIPE there closes that pipe, so the
 * build sees a broken pipe too) and goes to the recorder; SIGCHLD reaps it
 * (and, as a subreaper, its orphans); every other signal goes to its
 * process group. The terminal it had goes back to it when it is ours again
 * (`fg` after `bg`), at the next tick or when it stops on reading it. Once
 * it has exited, output still held by what it left behind is passed on for
 * grace seconds (0.5 at most when a signal was forwarded). Returns 0 or
 * -errno. */
struct source_child;
struct child_config;
extern const struct source_ops source_child;
int source_child_open(const struct child_config *cfg, double grace, bool subreaper,
                      struct source_child **ret);
long source_child_pid(const struct source_child *s);
/* 0, or why the build could not join its cgroup (-errno). */
int source_child_join_error(const struct source_child *s);
/* run --live: a status line beside the output, seen only through these
 * (the command puts view/live.h behind them; now is monotonic seconds):
 * it sees the output before it passes through, is redrawn from the loop
 * (update, by deadline), resized on SIGWINCH (add it to the signalfd:
 * loop_signalfd_add) and steps aside while the build is stopped. */
struct live;
struct source_live {
        struct live *live;
        void (*output)(struct live *l, const char *buf, size_t len, double now);
        void (*update)(struct live *l, double now);
        double (*deadline)(const struct live *l);
        void (*resize)(struct live *l, double now);
        void (*suspend)(struct live *l);
        void (*resume)(struct live *l, double now);
};
/* l borrowed; NULL: none. */
void source_child_set_live(struct source_child *s, const struct source_live *l);
/* After loop_run (which returns early only when ppoll itself fails): wait
 * for the child's exit on the signalfd, still forwarding signals, and give
 * the terminal back. Returns its shell-style status (code, or 128+signal)
 * and *ret_signal. */
int source_child_wait(struct source_child *s, int sfd, int *ret_signal);
/* After source_child_wait: whether the signal that killed the build came
 * to it alone, from the keyboard most likely: its group had the terminal
 * when it ended, and the signal was not one we passed on. */
bool source_child_keyboard_signal(const struct source_child *s);
/* After source_child_wait: the build's own process's name as it ended
 * (after any exec), or "" when it could not be read. */
const char *source_child_exit_comm(const struct source_child *s);

/* The watched pid of `watch`: ended when it exits (its pidfd; without one,
 * its start time is checked before each sample), or on a signal. Returns
 * 0, -ESRCH when there is no such process, or -errno (/proc unreadable). */
struct source_pid;
struct follow;
extern const struct source_ops source_pid;
int source_pid_open(long pid, struct source_pid **ret);
/* The lines of fol (borrowed; watch --stage-log-dir) go to the recorder
 * before each sample, as run's output lines do (split into lines here).
 * 0 or -ENOMEM. */
int source_pid_follow(struct source_pid *s, struct follow *fol);
/* The process's argv, malloc'd and NULL-terminated (empty when unknown);
 * NULL only when out of memory. */
char **source_pid_argv(struct source_pid *s);
/* The first signal that ended the watch, or 0. */
int source_pid_signal(const struct source_pid *s);
