/* SPDX-License-Identifier: MIT */
#include "platform/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/child.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

/* Without a pidfd the exit is looked for this often (seconds). */
#define SPAWN_EXIT_POLL 0.02

struct capture {
        int fd; /* -1 once at EOF */
        struct dbuf buf;
        bool truncated;
};

/* One read into c, keeping at most max bytes. */
static void capture_read(struct capture *c, size_t max)
{
        char chunk[65536];
        ssize_t n = read(c->fd, chunk, sizeof(chunk));
        size_t keep;

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (n <= 0) {
                c->fd = -1; /* EOF, or an error that will not pass */
                return;
        }
        keep = MIN((size_t)n, max - MIN(max, c->buf.len));
        if (keep < (size_t)n)
                c->truncated = true;
        if (keep && dbuf_append(&c->buf, chunk, keep) < 0)
                c->truncated = true; /* out of memory: what fits is kept */
}

/* Read both pipes until they close and the child has exited (without
 * reaping it), or the deadline. 0 or -ETIMEDOUT. */
static int pump(struct child *c, struct capture cap[2], size_t max, double deadline)
{
        bool exited = false;

        for (;;) {
                struct pollfd p[3];
                nfds_t n = 0;
                double left, wait;

                if (!exited)
                        exited = child_exited(c) != 0; /* an error: nothing left to wait for */
                if (exited && cap[0].fd < 0 && cap[1].fd < 0)
                        return 0;
                left = deadline - now_monotonic();
                if (left <= 0)
                        return -ETIMEDOUT;
                for (int i = 0; i < 2; i++)
                        if (cap[i].fd >= 0)
                                p[n++] = (struct pollfd){.fd = cap[i].fd, .events = POLLIN};
                wait = left;
                if (!exited && child_pidfd(c) >= 0)
                        p[n++] = (struct pollfd){.fd = child_pidfd(c), .events = POLLIN};
                else if (!exited)
                        wait = MIN(wait, SPAWN_EXIT_POLL);
                if (poll(p, n, (int)ceil(wait * 1000)) < 0 && errno != EINTR)
                        return -errno;
                for (int i = 0; i < 2; i++)
                        for (nfds_t k = 0; k < n; k++)
                                if (cap[i].fd >= 0 && p[k].fd == cap[i].fd && p[k].revents)
                                        capture_read(&cap[i], max);
        }
}

/* The capture as a malloc'd NUL-terminated string (an empty one when
 * nothing came), handed over to *ret. */
static int take(struct capture *c, char **ret, size_t *ret_len)
{
        if (!c->buf.p && dbuf_append(&c->buf, "", 0) < 0)
                return -ENOMEM;
        *ret_len = c->buf.len;
        *ret = TAKE_PTR(c->buf.p);
        c->buf = (struct dbuf)DBUF_INIT;
        return 0;
}

int spawn_capture(const struct spawn_config *cfg, struct spawn_result *ret)
{
        struct child_config cc = {
            .argv = cfg->argv,
            .pipes = true,
            .stdin_null = true,
            .stderr_null = !cfg->capture_stderr,
            .clean = true,
        };
        struct capture cap[2] = {{.fd = -1}, {.fd = -1}};
        struct spawn_result r = {0};
        double deadline = now_monotonic() + cfg->timeout_s;
        struct child *c = NULL;
        int status = 0, e = child_spawn(&cc, &c);

        if (e < 0)
                return e;
        r.pid = child_pid(c);
        cap[0].fd = child_stdout_fd(c);
        cap[1].fd = child_stderr_fd(c);
        e = pump(c, cap, cfg->out_max, deadline);
        /* The leader is not reaped yet, so its pid still names the group:
         * the kill cannot reach a stranger that got the number since. */
        if (e < 0)
                (void)kill(-r.pid, SIGKILL);
        if (child_wait(c, &status, &r.signal) < 0 && e >= 0)
                e = -ECHILD; /* someone else reaped it: its status is lost */
        child_free(c);
        if (e >= 0)
                e = take(&cap[0], &r.out, &r.out_len);
        if (e >= 0 && cfg->capture_stderr)
                e = take(&cap[1], &r.err, &r.err_len);
        r.out_truncated = cap[0].truncated;
        r.err_truncated = cap[1].truncated;
        dbuf_release(&cap[0].buf);
        dbuf_release(&cap[1].buf);
        if (e < 0) {
                spawn_result_release(&r);
                return e;
        }
        *ret = r;
        return status;
}

void spawn_result_release(struct spawn_result *r)
{
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
        r->out_len = r->err_len = 0;
}

int spawn_detached(int (*fn)(void *), void *arg)
{
        int gate[2], status;
        pid_t pid;

        /* the caller's end closes when it ends, wherever it is then */
        if (pipe2(gate, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                closep(&gate[0]);
                closep(&gate[1]);
                return -errno;
        }
        if (pid == 0) {
                /* the first child: a new session, the worker's parent for
                 * as long as it takes to fork it */
                pid_t g;
                int keep, nul;

                if (setsid() < 0)
                        _exit(1);
                g = fork();
                if (g != 0)
                        _exit(g < 0 ? 1 : 0);
                child_reset_signals();
                /* the gate's read end on 3 (above 0-2 first, whatever the
                 * caller had there), every other fd closed: the caller's
                 * write end and any earlier worker's gate too */
                keep = fcntl(gate[0], F_DUPFD, 3);
                nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (keep < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
                        _exit(1);
                if (keep != 3 && dup2(keep, 3) < 0)
                        _exit(1);
                if (close_range(4, ~0U, 0) < 0)
                        for (int fd = 4; fd < 65536; fd++)
                                (void)close(fd);
                (void)setpriority(PRIO_PROCESS, 0, 10);
                for (char c; read_full(3, &c, 1) > 0;)
                        ;
                close(3);
                _exit(fn(arg) < 0 ? 1 : 0);
        }
        close(gate[0]);
        /* gate[1] stays open, close-on-exec, until this process ends */
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}
