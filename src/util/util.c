/* SPDX-License-Identifier: MIT */
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/macro.h"

int parse_i64(const char **cur, const char *end, int64_t *ret)
{
        const char *p = *cur;
        bool neg = false;
        uint64_t v;
        int r;

        if (p < end && *p == '-') {
                neg = true;
                p++;
        }
        r = parse_u64(&p, end, &v);
        if (r < 0)
                return r;
        if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
                return -ERANGE;
        *cur = p;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

int parse_double(const char **cur, const char *end, double *ret)
{
        const char *p = *cur;
        char tmp[64];
        size_t n = 0;
        bool dot = false;
        char *e;
        double v;

        if (p < end && *p == '-')
                tmp[n++] = *p++;
        if (p >= end || !is_digit(*p))
                return -EINVAL;
        /* digits, then at most one '.' that a digit follows */
        while (p < end && (is_digit(*p) || (!dot && *p == '.' && p + 1 < end && is_digit(p[1])))) {
                if (n >= sizeof(tmp) - 1)
                        return -ERANGE;
                dot = dot || *p == '.';
                tmp[n++] = *p++;
        }
        tmp[n] = '\0';
        errno = 0;
        v = strtod(tmp, &e);
        if (errno != 0 || *e != '\0' || !isfinite(v))
                return -ERANGE;
        *cur = p;
        *ret = v;
        return 0;
}

void skip_spaces(const char **cur, const char *end)
{
        while (*cur < end && is_blank(**cur))
                (*cur)++;
}

bool skip_prefix(const char **cur, const char *end, const char *s)
{
        size_t n = strlen(s);

        if ((size_t)(end - *cur) < n || memcmp(*cur, s, n) != 0)
                return false;
        *cur += n;
        return true;
}

int parse_double_str(const char *s, double *ret)
{
        const char *p = s, *end = s + strlen(s);
        double v;
        int r = parse_double(&p, end, &v);

        if (r < 0 || p != end)
                return r < 0 ? r : -EINVAL;
        *ret = v;
        return 0;
}

int parse_u64_str(const char *s, uint64_t *ret)
{
        const char *p = s, *end = s + strlen(s);
        uint64_t v;
        int r = parse_u64(&p, end, &v);

        if (r < 0 || p != end)
                return r < 0 ? r : -EINVAL;
        *ret = v;
        return 0;
}

int parse_size_str(const char *s, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                double mult;
        } units[] = {
            {"", 1.0},
            {"B", 1.0},
            {"K", 1024.0},
            {"KiB", 1024.0},
            {"k", 1024.0},
            {"kB", 1000.0},
            {"M", 1048576.0},
            {"MiB", 1048576.0},
            {"MB", 1e6},
            {"G", 1073741824.0},
            {"GiB", 1073741824.0},
            {"GB", 1e9},
            {"T", 1099511627776.0},
            {"TiB", 1099511627776.0},
            {"TB", 1e12},
        };
        const char *p = s, *end = s + strlen(s);
        double v;
        int r = parse_double(&p, end, &v);

        if (r < 0 || v < 0)
                return r < 0 ? r : -ERANGE;
        for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
                if (strcmp(p, units[i].suffix) == 0) {
                        double b = v * units[i].mult;
                        if (b >= 18446744073709551615.0)
                                return -ERANGE;
                        *ret = (uint64_t)b;
                        return 0;
                }
        }
        return -EINVAL;
}

int array_grow(void *p, size_t *cap, size_t n, size_t size, size_t first)
{
        size_t c = *cap ? 2 * *cap : first;
        void *v;

        if (n < *cap)
                return 0;
        memcpy(&v, p, sizeof(v)); /* p is a T **: its pointer, whatever T */
        v = reallocarray(v, c, size);
        if (!v)
                return -ENOMEM;
        memcpy(p, &v, sizeof(v));
        *cap = c;
        return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                (void)poll(&(struct pollfd){.fd = fd, .events = POLLOUT}, 1, -1);
                                continue;
                        }
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

size_t copy_utf8(char *dst, size_t cap, const char *src, size_t len)
{
        if (cap == 0)
                return 0;
        if (!src)
                len = 0;
        if (len >= cap) {
                len = cap - 1;
                /* src[len] is the first byte left out: not inside a character */
                while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
                        len--;
        }
        if (len)
                memcpy(dst, src, len);
        dst[len] = '\0';
        return len;
}

size_t copy_utf8_str(char *dst, size_t cap, const char *src)
{
        return copy_utf8(dst, cap, src, src ? strnlen(src, cap) : 0);
}

int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

void hex_encode(char *out, const uint8_t *p, size_t n)
{
        static const char h[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = h[p[i] >> 4];
                out[2 * i + 1] = h[p[i] & 15];
        }
        out[2 * n] = '\0';
}

ssize_t read_full(int fd, void *buf, size_t len)
{
        size_t got = 0;

        while (got < len) {
                ssize_t n = read(fd, (char *)buf + got, len - got);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}

ssize_t pread_whole(int fd, char **buf, size_t *cap, size_t max)
{
        for (;;) {
                ssize_t n = pread(fd, *buf, *cap, 0);
                char *nb;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if ((size_t)n < *cap)
                        return n;
                if (*cap >= max)
                        return -EFBIG;
                nb = realloc(*buf, MIN(*cap * 2, max));
                if (!nb)
                        return -ENOMEM;
                *buf = nb;
                *cap = MIN(*cap * 2, max);
        }
}

/* Read fd to its end, at most max bytes (-EFBIG beyond). */
static int read_fd_all(int fd, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        /* room for one byte past max: exactly max bytes is fine, more is too big */
        size_t len = 0, cap = MIN((size_t)4096, max + 1);

        for (;;) {
                char *nb = realloc(buf, cap + 1);
                ssize_t n;

                if (!nb)
                        return -ENOMEM;
                buf = nb;
                n = read_full(fd, buf + len, cap - len);
                if (n < 0)
                        return (int)n;
                len += (size_t)n;
                if (len > max)
                        return -EFBIG;
                if (len < cap)
                        break; /* end of file */
                cap = MIN(cap * 2, max + 1);
        }
        buf[len] = '\0';
        *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        /* a FIFO planted as a run's side file must not hang a replay */
        return S_ISREG(st.st_mode) ? read_fd_all(fd, max, ret, ret_len) : -EINVAL;
}

DIR *opendir_at(int dirfd, const char *path)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        if (d)
                fd = -1; /* the stream's now; else closep keeps errno */
        return d;
}

int mkdir_p(const char *path, mode_t mode)
{
        _cleanup_free_ char *p = strdup(path);
        size_t n;

        if (!p)
                return -ENOMEM;
        n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
                p[--n] = '\0';
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* A group-writable directory of ours whose group is our user private
 * group (gid = uid, the user's alone: what umask 002 makes on RHEL and
 * Fedora) is not shared. */
static bool upg(const struct stat *d)
{
        return d->st_uid == geteuid() && d->st_gid == getegid() && (uid_t)getegid() == geteuid();
}

int runfile_check(int dirfd, const char *name)
{
        struct stat d, st;

        if (fstatat(dirfd, ".", &d, 0) < 0)
                return -errno;
        if (!(d.st_mode & S_ISVTX) &&
            ((d.st_mode & S_IWOTH) || ((d.st_mode & S_IWGRP) && !upg(&d))))
                return -EPERM;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISREG(st.st_mode) && st.st_uid == geteuid() ? 1 : -EEXIST;
}

int runfile_renameat(int fromfd, const char *from, int dirfd, const char *to)
{
        int r = runfile_check(dirfd, to);

        if (r < 0)
                return r;
        if (r == 0 && renameat2(fromfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
                return 0;
        /* EINVAL: a file system without RENAME_NOREPLACE */
        if (r == 0 && errno != EINVAL)
                return -errno;
        return renameat(fromfd, from, dirfd, to) < 0 ? -errno : 0;
}

int open_parent(const char *path, const char **ret_name)
{
        const char *slash = strrchr(path, '/');
        /* "/x" lives in "/" */
        _cleanup_free_ char *dir =
            slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        int dfd;

        if (!dir)
                return -ENOMEM;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        *ret_name = slash ? slash + 1 : path;
        return dfd;
}

int runfile_create(const char *path, int flags)
{
        const char *name = NULL;
        _cleanup_close_ int dfd = open_parent(path, &name);
        int r = dfd < 0 ? dfd : runfile_check(dfd, name);

        /* ours, from an earlier run of the id: in a sticky directory no
         * other user can swap it before the unlink */
        if (r == 1 && unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                r = -errno;
        if (r < 0)
                return r;
        r = openat(dfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        return r < 0 ? -errno : r;
}

const char *runfile_strerror(int e)
{
        return e == -EEXIST
                   ? "its name is held by a file not ours (another user's, a symlink, a FIFO)"
               : e == -EPERM ? "its directory is writable by others and not sticky"
                             : strerror(-e);
}

static double now_of(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double now_realtime(void)
{
        return now_of(CLOCK_REALTIME);
}

double now_monotonic(void)
{
        return now_of(CLOCK_MONOTONIC);
}

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: a 4-digit year. */
#define ISO8601_MIN_EPOCH -62167219200.0
#define ISO8601_MAX_EPOCH 253402300799.0

char *state_path(const char *name)
{
        const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        char buf[PATH_MAX];
        int n;

        if (state && state[0] == '/')
                n = snprintf(buf, sizeof(buf), "%s/buildtel/%s", state, name);
        else if (home && home[0] == '/')
                n = snprintf(buf, sizeof(buf), "%s/.local/state/buildtel/%s", home, name);
        else
                return NULL;
        if (n < 0 || (size_t)n >= sizeof(buf))
                return NULL;
        return strdup(buf);
}

char *tmp_state_path(const char *name)
{
        const char *tmp = getenv("TMPDIR");
        char *p;

        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        return asprintf(&p, "%s/buildtel-%u/%s", tmp, (unsigned)getuid(), name) < 0 ? NULL : p;
}

char *state_read_path(const char *name)
{
        _cleanup_free_ char *fb = NULL;
        char *p = state_path(name);
        struct stat st;
        char *slash;

        if (p && access(p, F_OK) == 0)
                return p;
        fb = tmp_state_path(name);
        slash = fb ? strrchr(fb, '/') : NULL;
        if (!slash || access(fb, F_OK) < 0)
                return p;
        /* only from a directory of ours no one else may write (fallback_path) */
        *slash = '\0';
        if (stat(fb, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 077))
                return p;
        *slash = '/';
        free(p);
        return TAKE_PTR(fb);
}

void fmt_size(double bytes, char *buf, size_t len)
{
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        size_t u = 0;
        double v = bytes;
        int prec;

        if (!isfinite(v) || v < 0) {
                snprintf(buf, len, "-");
                return;
        }
        /* 999.5 and up would print four digits: the next unit's 0.98 */
        while (v >= (u ? 999.5 : 1023.5) && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        prec = u == 0 || v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
        snprintf(buf, len, "%.*f %s", prec, v, units[u]);
}

void fmt_size_mib(double mib, char *buf, size_t len)
{
        fmt_size(mib * 1048576.0, buf, len);
}

const char *fmt_duration(double s, enum fmt_duration_style style, char buf[static FMT_DURATION_LEN])
{
        unsigned long long x;

        if (!isfinite(s) || s < 0 || s >= 1e12) {
                snprintf(buf, FMT_DURATION_LEN, "%s", style == FMT_DURATION_EXACT ? "?" : "-");
                return buf;
        }
        if (s < 60) {
                /* "%.1f" of 59.96 is "60.0s": shown as it is, like before */
                snprintf(buf, FMT_DURATION_LEN, "%.1fs", s);
                return buf;
        }
        x = style == FMT_DURATION_EXACT ? (unsigned long long)llround(s) : (unsigned long long)s;
        if (x < 3600)
                snprintf(buf, FMT_DURATION_LEN, "%llum%02llus", x / 60, x % 60);
        else if (style == FMT_DURATION_EXACT)
                snprintf(buf, FMT_DURATION_LEN, "%lluh%02llum%02llus", x / 3600, x / 60 % 60,
                         x % 60);
        else
                snprintf(buf, FMT_DURATION_LEN, "%lluh%02llum", x / 3600, x / 60 % 60);
        return buf;
}

int format_iso8601(double epoch, char buf[static 64])
{
        double whole = floor(epoch);
        time_t t;
        long ms;
        struct tm tm;

        buf[0] = '\0';
        /* also false for NAN: the casts below are defined only in range */
        if (!(whole >= ISO8601_MIN_EPOCH && whole <= ISO8601_MAX_EPOCH))
                return -ERANGE;
        t = (time_t)whole;
        ms = lround((epoch - whole) * 1000.0);
        if (ms >= 1000) {
                if (whole == ISO8601_MAX_EPOCH)
                        return -ERANGE;
                t++;
                ms -= 1000;
        }
        if (!gmtime_r(&t, &tm))
                return -ERANGE;
        snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
        return 0;
}

int mkdir_private(const char *path)
{
        struct stat st;

        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -EPERM;
        return 0;
}

int read_regular_file(const char *path, uint64_t offset, size_t max, char **ret, size_t *ret_len)
{
        struct stat st;
        _cleanup_close_ int fd = open_regular_file(path, &st);

        if (fd < 0)
                return fd;
        if (offset > (uint64_t)st.st_size)
                offset = (uint64_t)st.st_size;
        if ((uint64_t)st.st_size - offset > max)
                return -EFBIG;
        if (offset && lseek(fd, (off_t)offset, SEEK_SET) < 0)
                return -errno;
        return read_fd_all(fd, max, ret, ret_len);
}

int open_regular_file(const char *path, struct stat *ret_st)
{
        _cleanup_close_ int fd = -1;

        /* O_NONBLOCK: opening a FIFO with no writer must not wait. */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, ret_st) < 0)
                return -errno;
        if (S_ISDIR(ret_st->st_mode))
                return -EISDIR;
        if (!S_ISREG(ret_st->st_mode))
                return -ESPIPE;
        return TAKE_FD(fd);
}

int pread_chunks(int fd, uint64_t from, uint64_t to, size_t chunk,
                 int (*fn)(void *userdata, const char *buf, size_t len), void *userdata)
{
        _cleanup_free_ char *buf = chunk ? malloc(chunk) : NULL;

        if (!buf)
                return -ENOMEM;
        while (from < to) {
                ssize_t n = pread(fd, buf, (size_t)MIN((uint64_t)chunk, to - from), (off_t)from);
                int e;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                e = fn(userdata, buf, (size_t)n);
                if (e < 0)
                        return e;
                from += (uint64_t)n;
        }
        return 0;
}

bool stop_signal_pending(void)
{
        sigset_t p;

        if (sigpending(&p) < 0)
                return false;
        return sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1 ||
               sigismember(&p, SIGHUP) == 1 || sigismember(&p, SIGQUIT) == 1;
}

static void put(char *out, size_t cap, size_t *n, char c)
{
        if (*n + 1 < cap)
                out[(*n)++] = c;
}

/* The value of NAME (len bytes) in an OCI env array ("NAME=value"), or
 * NULL. */
static const char *env_value(const struct json_t *env, const char *name, size_t len)
{
        size_t i;
        json_t *v;

        json_array_foreach(env, i, v)
        {
                const char *kv = json_string_value(v);

                if (kv && strncmp(kv, name, len) == 0 && kv[len] == '=')
                        return kv + len + 1;
        }
        return NULL;
}

/* One argument appended to out, its variables replaced from env as
 * json_argv() says (an unset one by nothing); env NULL: as
 * it is. */
static void put_arg(const char *s, const struct json_t *env, char *out, size_t cap, size_t *n)
{
        bool quoted = false, dquoted = false;

        for (; *s; s++) {
                bool brace = s[1] == '{';
                const char *name = s + 1 + brace, *v;
                size_t len = 0;

                if (env && *s == '\\' && s[1]) {
                        put(out, cap, n, *s++);
                } else if (env && *s == '"' && !quoted) {
                        dquoted = !dquoted;
                } else if (env && *s == '\'' && !dquoted) {
                        quoted = !quoted;
                } else if (env && !quoted && *s == '$') {
                        while (name[len] == '_' || isalpha((unsigned char)name[len]) ||
                               (len && isdigit((unsigned char)name[len])))
                                len++;
                        if (len && (!brace || name[len] == '}')) {
                                for (v = env_value(env, name, len); v && *v; v++)
                                        put(out, cap, n, *v);
                                s = name + len - 1 + brace;
                                continue;
                        }
                }
                put(out, cap, n, *s);
        }
        if (*n < cap)
                out[(*n)++] = '\0';
}

int json_argv(const struct json_t *args, const struct json_t *env, char *out, size_t cap)
{
        size_t n = 0, i;
        json_t *a;

        if (!json_is_array(env))
                env = NULL;
        json_array_foreach(args, i, a)
        {
                if (!json_is_string(a) || cap == 0)
                        break;
                /* a NUL inside would end the argument: cut there */
                put_arg(json_string_value(a), env, out, cap, &n);
        }
        return n && i == json_array_size(args) ? (int)n : -EINVAL;
}
