/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Running a helper tool and reading what it prints (`ccache
 * --print-stats`, `docker buildx history inspect`): the one way buildtel
 * runs a process other than the build. */

struct spawn_config {
        char *const *argv;   /* argv[0] looked up in $PATH; execvp, never a shell */
        size_t out_max;      /* bytes of stdout kept (and of stderr when captured) */
        double timeout_s;    /* from the call, on the monotonic clock */
        bool capture_stderr; /* else stderr goes to /dev/null */
};

struct spawn_result {
        char *out; /* stdout, malloc'd, NUL-terminated; at most out_max bytes */
        size_t out_len;
        bool out_truncated; /* it printed more, which was read and dropped */
        char *err;          /* stderr likewise; NULL unless captured */
        size_t err_len;
        bool err_truncated;
        int signal; /* the signal that ended it; 0 when it exited */
        pid_t pid;  /* its pid and process group, gone by now */
};

/* Run cfg->argv in its own process group, stdin from /dev/null, every
 * signal default, an empty signal mask and no fd but 0-2; read its output
 * until both pipes close and it has exited. Past the deadline the whole
 * group gets SIGKILL and the helper is reaped (its own children go to
 * whoever reaps orphans). Returns the status (>= 0: the exit code, or
 * 128 + signal) with *ret filled (release it with spawn_result_release()),
 * or -ENOENT / -EACCES (cannot be executed: no process is left),
 * -ETIMEDOUT, -ENOMEM, another -errno; *ret is untouched on failure. */
int spawn_capture(const struct spawn_config *cfg, struct spawn_result *ret);

/* Work that outlives buildtel (the build log's compression): fn(arg) in a
 * grandchild, in a session of its own, at nice 10, stdin, stdout and
 * stderr on /dev/null and no other fd, every signal default; it is never
 * waited for (init reaps it). fn starts once the calling process has
 * ended (the worker waits for EOF on a pipe whose write end only the
 * caller holds), so nothing the caller does on its way out (its exit
 * handlers, a sanitizer's leak check) overlaps it. Returns 0 once the
 * worker exists, or -errno. */
int spawn_detached(int (*fn)(void *), void *arg);

/* Frees out and err; the struct can be reused. */
void spawn_result_release(struct spawn_result *r);
