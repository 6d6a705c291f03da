/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Running a helper tool and reading what it prints (`ccache --print-stats`):
 * the one way buildtel runs a process other than the build. */

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

/* Run cfg->argv in its own process group (a clean start, stdin
 * /dev/null) and read its output until both pipes close and it has exited;
 * past the deadline the group gets SIGKILL. Returns the status (the exit
 * code, or 128 + signal) with *ret filled (spawn_result_release()), or
 * -ENOENT / -EACCES (cannot be executed), -ETIMEDOUT, -ENOMEM, another
 * -errno; *ret is untouched on failure. */
int spawn_capture(const struct spawn_config *cfg, struct spawn_result *ret);

/* Work that outlives buildtel (the build log's compression): fn(arg) in a
 * grandchild in a session of its own, at nice 10, 0-2 on /dev/null and no
 * other fd, never waited for. fn starts once the caller has ended (EOF on
 * a pipe only the caller holds), so nothing on its way out (exit
 * handlers, a leak check) overlaps it. 0 once the worker exists, or
 * -errno. */
int spawn_detached(int (*fn)(void *), void *arg);

/* Frees out and err; the struct can be reused. */
void spawn_result_release(struct spawn_result *r);
