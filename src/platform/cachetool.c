/* SPDX-License-Identifier: MIT */
#include "platform/cachetool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/child.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

extern char **environ;

int cachetool_on_path(const char *name)
{
        const char *path = getenv("PATH");
        char buf[4096];

        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        while (*path) {
                const char *c = strchr(path, ':');
                size_t n = c ? (size_t)(c - path) : strlen(path);
                int k = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);

                if (k > 0 && (size_t)k < sizeof(buf) && access(buf, X_OK) == 0)
                        return 1;
                path += n + (c ? 1 : 0);
        }
        return 0;
}

int cachetool_run(char *const argv[], size_t max, double timeout_s, char **ret, size_t *ret_len)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        _cleanup_close_ int rd = -1;
        int p[2], status, e;
        pid_t pid;
        struct dbuf out = DBUF_INIT;
        double deadline = now_monotonic() + timeout_s;
        bool timed_out = false;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        rd = p[0];
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        e = child_helper_spawn_init(&attr, &fa, 0);
        if (e == 0) {
                e = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
                posix_spawnattr_destroy(&attr);
        }
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        if (e != 0)
                return -e;
        for (;;) {
                char chunk[4096];
                struct pollfd pfd = {.fd = rd, .events = POLLIN};
                double left = deadline - now_monotonic();
                ssize_t n;

                if (left <= 0) {
                        timed_out = true;
                        break;
                }
                if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (!pfd.revents)
                        continue;
                n = read(rd, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                if (out.len + (size_t)n > max)
                        n = (ssize_t)(max - out.len);
                if (n > 0 && dbuf_append(&out, chunk, (size_t)n) < 0)
                        break;
        }
        if (timed_out)
                kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (timed_out) {
                dbuf_release(&out);
                return -ETIMEDOUT;
        }
        if (dbuf_append(&out, "", 0) < 0) {
                dbuf_release(&out);
                return -ENOMEM;
        }
        *ret = out.p ? out.p : strdup("");
        *ret_len = out.len;
        if (!*ret)
                return -ENOMEM;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
