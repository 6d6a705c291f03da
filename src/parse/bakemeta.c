/* SPDX-License-Identifier: MIT */
#include "parse/bakemeta.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

#define FETCH_MAX (4u << 20)

extern char **environ;

static void copy_str(char *dst, size_t cap, const char *s)
{
        targets_copy_field(dst, cap, s, strlen(s));
}

/* "<builder>/<node>/<ref>" into t. */
static void apply_ref(struct target *t, const char *s)
{
        const char *a = strchr(s, '/'), *b2 = a ? strchr(a + 1, '/') : NULL;

        if (!a || !b2) {
                copy_str(t->ref, sizeof(t->ref), s);
                return;
        }
        targets_copy_field(t->builder, sizeof(t->builder), s, (size_t)(a - s));
        targets_copy_field(t->node, sizeof(t->node), a + 1, (size_t)(b2 - a - 1));
        copy_str(t->ref, sizeof(t->ref), b2 + 1);
}

int bakemeta_parse(const char *buf, size_t len, struct targets *ts)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *v;
        const char *k, *ref;
        int n = 0;

        if (!json_is_object(root)) {
                json_decref(root);
                return -EINVAL;
        }
        ref = json_string_value(json_object_get(root, "buildx.build.ref"));
        if (ref) {
                /* buildx build: one flat object. */
                const char *nm = ts->n == 1 ? ts->t[0].name : "default";
                apply_ref(&ts->t[targets_get(ts, nm, strlen(nm))], ref);
                n = 1;
        } else {
                json_object_foreach(root, k, v)
                {
                        ref = json_string_value(json_object_get(v, "buildx.build.ref"));
                        if (!json_is_object(v) || !ref)
                                continue;
                        apply_ref(&ts->t[targets_get(ts, k, strlen(k))], ref);
                        n++;
                }
        }
        json_decref(root);
        return n;
}

int buildx_history_parse(const char *buf, size_t len, struct buildx_history *ret)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *d;
        struct buildx_history h = {0};
        const char *s;

        s = json_string_value(json_object_get(root, "Ref"));
        if (!json_is_object(root) || !s) {
                json_decref(root);
                return -EINVAL;
        }
        copy_str(h.ref, sizeof(h.ref), s);
        if ((s = json_string_value(json_object_get(root, "Name"))))
                copy_str(h.name, sizeof(h.name), s);
        if ((s = json_string_value(json_object_get(root, "Status"))))
                copy_str(h.status, sizeof(h.status), s);
        if ((s = json_string_value(json_object_get(root, "VCSRevision"))))
                copy_str(h.vcs_revision, sizeof(h.vcs_revision), s);
        d = json_object_get(root, "Duration");
        h.duration_s = json_is_integer(d) && json_integer_value(d) >= 0
                           ? (double)json_integer_value(d) / 1e9
                           : NAN;
#define U32(key, field)                                                                            \
        do {                                                                                       \
                json_t *x = json_object_get(root, key);                                            \
                if (json_is_integer(x) && json_integer_value(x) >= 0 &&                            \
                    json_integer_value(x) <= UINT32_MAX)                                           \
                        h.field = (uint32_t)json_integer_value(x);                                 \
        } while (0)
        U32("NumTotalSteps", total_steps);
        d = json_object_get(root, "NumTotalSteps");
        h.steps_set =
            json_is_integer(d) && json_integer_value(d) >= 0 && json_integer_value(d) <= UINT32_MAX;
        U32("NumCachedSteps", cached_steps);
        U32("NumCompletedSteps", completed_steps);
#undef U32
        json_decref(root);
        *ret = h;
        return 0;
}

int buildx_history_apply(const struct buildx_history *h, struct targets *ts)
{
        int i = -1;
        struct target *t;

        for (size_t k = 0; k < ts->n && i < 0; k++)
                if (ts->t[k].ref[0] && strcmp(ts->t[k].ref, h->ref) == 0)
                        i = (int)k;
        if (i < 0 && h->name[0])
                i = targets_find(ts, h->name);
        if (i < 0)
                return -ENOENT;
        t = &ts->t[i];
        t->history_set = true;
        t->history_duration_s = h->duration_s;
        t->history_steps = h->total_steps;
        t->history_cached = h->cached_steps;
        t->history_steps_set = h->steps_set;
        memcpy(t->history_status, h->status, sizeof(t->history_status));
        _Static_assert(sizeof(t->history_vcs_revision) == sizeof(h->vcs_revision), "same size");
        memcpy(t->history_vcs_revision, h->vcs_revision, sizeof(t->history_vcs_revision));
        return i;
}

/* Reap pid if it exits before deadline: 0 and *status, or -ETIMEDOUT. A
 * pidfd when the kernel has one, else short polls. */
static int wait_until(pid_t pid, double deadline, int *status)
{
        int pfd = -1;

#ifdef SYS_pidfd_open
        pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
        for (;;) {
                double left = deadline - now_monotonic();
                pid_t r = waitpid(pid, status, WNOHANG);

                if (r == pid || (r < 0 && errno != EINTR)) {
                        if (pfd >= 0)
                                close(pfd);
                        return r == pid ? 0 : -errno;
                }
                if (left <= 0)
                        break;
                if (pfd >= 0) {
                        struct pollfd p = {.fd = pfd, .events = POLLIN};
                        (void)poll(&p, 1, (int)(left * 1000) + 1);
                } else {
                        (void)poll(NULL, 0, (int)MIN(left * 1000 + 1, 20.0));
                }
        }
        if (pfd >= 0)
                close(pfd);
        return -ETIMEDOUT;
}

int buildx_history_fetch(const char *ref, double timeout_s, char **ret, size_t *ret_len)
{
        char a0[] = "docker", a1[] = "buildx", a2[] = "history", a3[] = "inspect",
             a4[] = "--format", a5[] = "json";
        _cleanup_free_ char *a6 = strdup(ref);
        char *const argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        struct dbuf out = DBUF_INIT;
        double deadline = now_monotonic() + timeout_s;
        int pfd[2], e, status = 0;
        pid_t pid;
        char buf[65536];

        if (!a6)
                return -ENOMEM;
        if (ref[0] == '-')
                return -EINVAL; /* never an option to docker */
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        /* Its own process group: docker runs buildx as a plugin child, and
         * a kill past the deadline must reach both. */
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        e = posix_spawnp(&pid, "docker", &fa, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        close(pfd[1]);
        if (e != 0) {
                close(pfd[0]);
                return -e;
        }
        e = 0;
        for (;;) {
                struct pollfd p = {.fd = pfd[0], .events = POLLIN};
                double left = deadline - now_monotonic();
                ssize_t n;

                if (left <= 0) {
                        e = -ETIMEDOUT;
                        break;
                }
                if (poll(&p, 1, (int)(left * 1000) + 1) < 0) {
                        if (errno == EINTR)
                                continue;
                        e = -errno;
                        break;
                }
                if (!p.revents)
                        continue;
                n = read(pfd[0], buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                if (out.len + (size_t)n > FETCH_MAX || dbuf_append(&out, buf, (size_t)n) < 0) {
                        e = -EFBIG;
                        break;
                }
        }
        close(pfd[0]);
        /* Closing its output is not exiting: wait for the exit only until
         * the deadline, then kill the group and reap it. */
        if (e == 0) {
                e = wait_until(pid, deadline, &status);
                if (e < 0 && e != -ETIMEDOUT) {
                        dbuf_release(&out);
                        return e; /* already reaped elsewhere: nothing to kill */
                }
        }
        if (e < 0) {
                (void)kill(-pid, SIGKILL);
                (void)kill(pid, SIGKILL);
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
        }
        if (e == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
                e = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
        if (e == 0 && !out.p)
                e = dbuf_append(&out, "", 0);
        if (e < 0) {
                dbuf_release(&out);
                return e;
        }
        *ret = out.p;
        *ret_len = out.len;
        return 0;
}
