/* SPDX-License-Identifier: MIT */
#include "cachetool.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

extern char **environ;

static void stats_clear(struct cachetool_stats *s)
{
        memset(s, 0, sizeof(*s));
        s->hits = s->misses = s->size_bytes = s->max_size_bytes = s->files = -1;
}

static int64_t add_sat(int64_t a, uint64_t b)
{
        if (a < 0)
                a = 0;
        return b > (uint64_t)(INT64_MAX - a) ? INT64_MAX : a + (int64_t)b;
}

int cachetool_parse_ccache(const char *buf, size_t len, struct cachetool_stats *ret)
{
        static const struct {
                const char *id;
                int field; /* 0 hits, 1 misses, 2 size KiB, 3 max KiB, 4 files */
        } keys[] = {
            {"direct_cache_hit", 0},    {"preprocessed_cache_hit", 0},  {"cache_miss", 1},
            {"cache_size_kibibyte", 2}, {"max_cache_size_kibibyte", 3}, {"files_in_cache", 4},
        };
        const char *p = buf, *end = buf + len;
        struct cachetool_stats s;

        stats_clear(&s);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end, *tab = memchr(p, '\t', (size_t)(le - p));

                if (tab) {
                        size_t klen = (size_t)(tab - p);
                        const char *v = tab + 1, *ve = le;
                        uint64_t n;

                        if (ve > v && ve[-1] == '\r')
                                ve--;
                        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                                int64_t *f;

                                if (strlen(keys[i].id) != klen || memcmp(keys[i].id, p, klen) != 0)
                                        continue;
                                if (parse_u64(&v, ve, &n) < 0 || v != ve)
                                        break;
                                f = keys[i].field == 0   ? &s.hits
                                    : keys[i].field == 1 ? &s.misses
                                    : keys[i].field == 2 ? &s.size_bytes
                                    : keys[i].field == 3 ? &s.max_size_bytes
                                                         : &s.files;
                                if (keys[i].field == 2 || keys[i].field == 3)
                                        n = n > (uint64_t)INT64_MAX / 1024
                                                ? (uint64_t)INT64_MAX / 1024
                                                : n,
                                        n *= 1024;
                                *f = keys[i].field == 0 ? add_sat(*f, n) : add_sat(0, n);
                                break;
                        }
                }
                p = nl ? nl + 1 : end;
        }
        if (s.hits < 0 && s.misses < 0)
                return -EINVAL;
        *ret = s;
        return 0;
}

/* Sum of the per-language counts of {"counts":{"C/C++":5,...}}. */
static int64_t sum_counts(json_t *o)
{
        json_t *counts = json_object_get(o, "counts"), *v;
        const char *k;
        int64_t sum = 0;

        if (!json_is_object(counts))
                return -1;
        json_object_foreach(counts, k, v) if (json_is_integer(v) && json_integer_value(v) > 0) sum =
            add_sat(sum, (uint64_t)json_integer_value(v));
        return sum;
}

static int64_t int_or_unknown(json_t *v)
{
        return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

int cachetool_parse_sccache_json(const char *buf, size_t len, struct cachetool_stats *ret)
{
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL), *stats;
        struct cachetool_stats s;
        const char *ver;

        if (!root)
                return -EINVAL;
        stats_clear(&s);
        stats = json_object_get(root, "stats");
        if (json_is_object(stats)) {
                s.hits = sum_counts(json_object_get(stats, "cache_hits"));
                s.misses = sum_counts(json_object_get(stats, "cache_misses"));
        }
        s.size_bytes = int_or_unknown(json_object_get(root, "cache_size"));
        s.max_size_bytes = int_or_unknown(json_object_get(root, "max_cache_size"));
        ver = json_string_value(json_object_get(root, "version"));
        if (ver)
                snprintf(s.version, sizeof(s.version), "%s", ver);
        json_decref(root);
        if (s.hits < 0 && s.misses < 0)
                return -EINVAL;
        *ret = s;
        return 0;
}

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
        e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
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
