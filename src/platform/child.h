/* SPDX-License-Identifier: MIT */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The build as a child process in its own process group, its stdout and
 * stderr on pipes or inherited. */

struct child;

/* F_SETPIPE_SZ of the output pipes: what one splice of a full pipe moves. */
#define CHILD_PIPE_SIZE (1024 * 1024)

/* The descriptors buildtel was given, taken first thing: which of 0-2 were
 * closed (now /dev/null, so nothing of ours lands there), and the inherited
 * ones above 2 (not close-on-exec: a make jobserver's, say). */
#define CHILD_KEEP_FDS_MAX 1024
struct child_fds {
        bool closed[3];
        size_t nkeep;
        bool overflow; /* more than CHILD_KEEP_FDS_MAX: pass every fd on */
        int keep[CHILD_KEEP_FDS_MAX];
};

struct child_config {
        char *const *argv;
        bool pipes; /* capture stdout/stderr */
        /* With pipes: stdout and stderr on one pseudo-terminal, read as
         * stdout, so a build whose output goes to our terminal sees one (a
         * progress UI, colours); output processing off. */
        bool pty;
        bool foreground;                 /* make its process group the terminal's foreground */
        const sigset_t *sigmask;         /* the mask the build starts with */
        const struct sigaction *sigpipe; /* its SIGPIPE disposition; NULL = default */
        const struct sigaction *sigchld; /* its SIGCHLD disposition; NULL = default */
        /* cgroup.procs fds the child writes "0" to before exec, so it and
         * all it forks are in the build's cgroup from the start. */
        const int *cgroup_procs_fds;
        size_t n_cgroup_procs_fds;
        /* When set, the build gets exactly these descriptors, not what
         * buildtel opened since (a libcurl socketpair without CLOEXEC). */
        const struct child_fds *fds;
        /* For helpers (platform/spawn.h): stdin from /dev/null; with
         * pipes, stderr to /dev/null; clean: default signals, an empty
         * mask (sigmask and sigpipe ignored), no fd but 0-2. */
        bool stdin_null;
        bool stderr_null;
        bool clean;
        /* The build's environment; NULL: exactly ours (child_env_with()). */
        char *const *envp;
};

/* Whether execvp(argv0) could start, looked up as execvp does in path
 * (NULL: "/bin:/usr/bin"): 0, -ENOENT (nowhere), -EACCES (found, but a
 * directory or not executable). A command that cannot start is no run. */
int child_exec_check(const char *argv0, const char *path);

/* Fork and execvp. When exec fails the error comes back here (via a
 * CLOEXEC pipe) as -ENOENT, -EACCES, ... and no child is left. */
int child_spawn(const struct child_config *cfg, struct child **ret);
/* Every signal default, the mask empty (async-signal-safe): a helper must
 * not inherit what buildtel ignores or blocks. */
void child_reset_signals(void);
/* Closes the pipes; does not kill or wait. NULL is a no-op. */
void child_free(struct child *c);

pid_t child_pid(const struct child *c);
/* 0, or the -errno of the child's first failed cgroup.procs write. */
int child_join_error(const struct child *c);
int child_stdout_fd(const struct child *c); /* -1 once closed */
int child_stderr_fd(const struct child *c);
int child_pidfd(const struct child *c); /* -1 when the kernel lacks pidfd */
/* A pidfd of any pid (close-on-exec), or -1 when the kernel lacks pidfd
 * or the pid is gone; the caller closes it. */
int child_pidfd_open(pid_t pid);
void child_close_fd(struct child *c, int stream); /* 1 or 2 */

int child_signal(struct child *c, int sig);

/* Whether the child has exited, without reaping it (its pid, and so its
 * process group id, stays taken until child_wait()). 1 exited, 0 running,
 * -errno. */
int child_exited(struct child *c);
/* Reap, blocking. The shell-style status and the signal as below. 0 or
 * -errno (-ECHILD: already reaped). */
int child_wait(struct child *c, int *ret_status, int *ret_signal);

/* Reap without blocking. Returns 1 and the shell-style status (code, or
 * 128+signal) once the child has exited, 0 while it runs, -errno. */
int child_try_wait(struct child *c, int *ret_status, int *ret_signal);

/* With cfg.pty: pass a new size of our terminal on, with SIGWINCH to the
 * build's group (the terminal signals only its foreground group). 1
 * changed, 0. */
int child_pty_sync_size(struct child *c);

/* The child's comm as it ended (after any exec), read from its zombie; ""
 * before it was reaped or when unreadable. */
const char *child_exit_comm(const struct child *c);

/* Our environment with each "NAME=value" of set[0..n) in place of any
 * NAME= entry (set[i] with no '=' removes NAME). *ret is a malloc'd
 * NULL-terminated vector of borrowed strings (ours and set's): free() it
 * only. 0 or -ENOMEM. */
int child_env_with(char *const *set, size_t n, char ***ret);

/* Give the terminal back to our process group if we handed it out and
 * the build's group still has it (not after `bg`). NULL is a no-op. */
void child_restore_terminal(struct child *c);
/* Hand the terminal to the build again when we handed it out before and
 * our group has it now: after `fg`, not after `bg`. */
void child_give_terminal(struct child *c);
/* Whether the build's group had the terminal when child_restore_terminal
 * last ran: Ctrl-C and Ctrl-\ then went to it alone, not to us. */
bool child_had_terminal(const struct child *c);

/* Take *ret (see struct child_fds) and fill closed 0-2 with /dev/null.
 * Returns 0 or -errno. */
int child_fds_take(struct child_fds *ret);
/* Close the 0-2 child_fds_take filled: for a bare exec of the command. */
void child_fds_unreserve(const struct child_fds *fds);
