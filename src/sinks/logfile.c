/* SPDX-License-Identifier: MIT */
#include "sinks/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "platform/spawn.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define CHUNK (128 * 1024)
#define LOGFILE_PROBE (1024 * 1024) /* bytes tried before a log is compressed */

static bool is_gz(const char *path)
{
        size_t n = strlen(path), k = strlen(LOGFILE_GZ_SUFFIX);

        return n > k && strcmp(path + n - k, LOGFILE_GZ_SUFFIX) == 0;
}

/* path + ".gz" + suffix, malloc'd (a plain log's path). */
static char *gz_name(const char *path, const char *suffix)
{
        char *p;

        return asprintf(&p, "%s" LOGFILE_GZ_SUFFIX "%s", path, suffix) < 0 ? NULL : p;
}

/* path with ".gz" added (gz) or removed; malloc'd. */
static char *other_form(const char *path)
{
        if (is_gz(path))
                return strndup(path, strlen(path) - strlen(LOGFILE_GZ_SUFFIX));
        return gz_name(path, "");
}

/* Copy fd into the gzip stream g. 0 or -errno. */
static int pump(int fd, gzFile g)
{
        _cleanup_free_ char *buf = malloc(CHUNK);
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        while ((n = read(fd, buf, CHUNK)) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (gzwrite(g, buf, (unsigned)n) != (int)n)
                        return -EIO;
        }
        return 0;
}

/* Whether the log's first LOGFILE_PROBE bytes shrink by a tenth at level
 * 1: output that does not (binary, already compressed) stays as it is, and
 * that costs one MiB, not a pass over the whole log. 1, 0 or -errno. */
static int compresses(int fd)
{
        _cleanup_free_ char *in = malloc(LOGFILE_PROBE);
        _cleanup_free_ Bytef *out = NULL;
        uLongf outlen;
        ssize_t n;

        if (!in)
                return -ENOMEM;
        n = pread(fd, in, LOGFILE_PROBE, 0);
        if (n < 0)
                return -errno;
        outlen = compressBound((uLong)n);
        out = malloc(outlen);
        if (!out)
                return -ENOMEM;
        if (compress2(out, &outlen, (const Bytef *)in, (uLong)n, 1) != Z_OK)
                return -EIO;
        return outlen <= (uLongf)n / 10 * 9;
}

/* The plain log in (at path) into tmp, open as out (taken): then tmp
 * becomes path + ".gz" through the one atomic writer (fsync, rename,
 * fsync of the directory) and path goes. On failure tmp goes. */
static int compress_into(int in, int out, const char *path, const char *tmp)
{
        _cleanup_free_ char *gz = other_form(path);
        struct outfile o;
        struct stat a, b;
        int r, z, g_fd;
        gzFile g = NULL;

        if (!gz) {
                close(out);
                (void)unlink(tmp);
                return -ENOMEM;
        }
        r = outfile_adopt(gz, strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp, out, &o);
        if (r < 0) {
                (void)unlink(tmp);
                return r;
        }
        /* level 1: on compile logs 58 MB/s for 11x, where 6 gives 12x at
         * 16 MB/s (measured on a 30 MB ninja log) */
        g_fd = fcntl(o.fd, F_DUPFD_CLOEXEC, 3);
        if (g_fd >= 0)
                g = gzdopen(g_fd, "wb1");
        if (!g) {
                if (g_fd >= 0)
                        close(g_fd);
                outfile_release(&o);
                return -ENOMEM;
        }
        (void)gzbuffer(g, CHUNK);
        r = pump(in, g);
        z = gzclose(g); /* closes g_fd */
        if (r >= 0 && z != Z_OK)
                r = z == Z_ERRNO && errno ? -errno : -EIO;
        /* output that does not compress (binary, already compressed)
         * stays as it was */
        if (r >= 0 && (fstat(in, &a) < 0 || fstat(o.fd, &b) < 0 || b.st_size > a.st_size / 10 * 9))
                r = -EFBIG;
        if (r < 0) {
                outfile_release(&o);
                return r;
        }
        r = outfile_commit(&o);
        if (r < 0)
                return r;
        return unlink(path) < 0 ? -errno : 0;
}

/* The log at path open as *ret_in and its .gz.tmp made, open as the
 * returned fd, when the log's first MiB compresses: else -EFBIG, or
 * -errno (nothing is left open or made then). */
static int begin(const char *path, char **ret_tmp, int *ret_in)
{
        _cleanup_free_ char *tmp = gz_name(path, LOGFILE_TMP_SUFFIX);
        _cleanup_close_ int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        int out, c;

        if (!tmp)
                return -ENOMEM;
        if (in < 0)
                return -errno;
        c = compresses(in);
        if (c <= 0)
                return c < 0 ? c : -EFBIG;
        out = runfile_create(tmp, O_WRONLY);
        if (out < 0)
                return out;
        *ret_tmp = TAKE_PTR(tmp);
        *ret_in = TAKE_FD(in);
        return out;
}

int logfile_compress(const char *path)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int in = -1;
        int out = begin(path, &tmp, &in);

        return out < 0 ? out : compress_into(in, out, path, tmp);
}

/* In the detached worker: the log and the .gz.tmp its parent made. */
static int compress_job(void *arg)
{
        const char *path = arg;
        _cleanup_free_ char *tmp = gz_name(path, LOGFILE_TMP_SUFFIX);
        _cleanup_close_ int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        struct stat st;
        int out;

        (void)prctl(PR_SET_NAME, "buildtel-gzip"); /* in ps, and for pgrep -x */
        if (!tmp || in < 0)
                return -EIO;
        /* gone: pruned meanwhile, nothing to do; the one its parent made,
         * never another's (O_NONBLOCK: a FIFO does not wait) */
        out = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (out < 0)
                return -errno;
        if (fstat(out, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
                close(out);
                return -EEXIST;
        }
        return compress_into(in, out, path, tmp);
}

/* The logs whose compression starts when this process exits. */
static char *pending[LOGFILE_PENDING_MAX];
static size_t npending;

static int start_one(char *path)
{
        int e = spawn_detached(compress_job, path);

        if (e < 0) {
                _cleanup_free_ char *tmp = gz_name(path, LOGFILE_TMP_SUFFIX);
                if (tmp)
                        (void)unlink(tmp);
        }
        return e;
}

static void start_pending(void)
{
        for (size_t i = 0; i < npending; i++) {
                (void)start_one(pending[i]);
                free(pending[i]);
        }
        npending = 0;
}

int logfile_compress_later(const char *path)
{
        static bool registered;
        _cleanup_free_ char *tmp = NULL, *copy = NULL;
        _cleanup_close_ int in = -1;
        int out = begin(path, &tmp, &in);

        if (out < 0)
                return out;
        /* the .gz.tmp says a .gz is on its way (logfile_settled) */
        close(out);
        copy = strdup(path);
        if (!copy) {
                (void)unlink(tmp);
                return -ENOMEM;
        }
        if (!registered && atexit(start_pending) == 0)
                registered = true;
        if (registered && npending < LOGFILE_PENDING_MAX) {
                pending[npending++] = TAKE_PTR(copy);
                return 0;
        }
        return start_one(copy); /* no room to wait: now */
}

char *logfile_settled(const char *path)
{
        _cleanup_free_ char *plain = is_gz(path) ? other_form(path) : strdup(path);
        _cleanup_free_ char *tmp = plain ? gz_name(plain, LOGFILE_TMP_SUFFIX) : NULL;

        if (!tmp)
                return NULL;
        if (access(tmp, F_OK) == 0)
                return gz_name(plain, "");
        return logfile_current(path);
}

char *logfile_current(const char *path)
{
        char *o;

        if (access(path, F_OK) == 0)
                return strdup(path);
        o = other_form(path);
        if (o && access(o, F_OK) == 0)
                return o;
        free(o);
        return NULL;
}

static ssize_t tail_plain(int fd, char *buf, size_t cap, bool *ret_cut)
{
        off_t size = lseek(fd, 0, SEEK_END);
        ssize_t got;

        if (size < 0)
                return -errno;
        got = pread(fd, buf, cap, size > (off_t)cap ? size - (off_t)cap : 0);
        if (got < 0)
                return -errno;
        *ret_cut = size > (off_t)cap;
        return got;
}

/* Decompress to the end, keeping the last cap bytes in a 2 * cap window. */
static ssize_t tail_gz(int fd, char *buf, size_t cap, bool *ret_cut)
{
        _cleanup_free_ char *win = malloc(2 * cap);
        gzFile g;
        size_t len = 0;
        bool cut = false;
        int n = 0;

        g = win ? gzdopen(fd, "rb") : NULL;
        if (!g) {
                close(fd);
                return -ENOMEM;
        }
        while ((n = gzread(g, win + len, (unsigned)cap)) > 0) {
                len += (size_t)n;
                if (len > cap) {
                        memmove(win, win + len - cap, cap);
                        len = cap;
                        cut = true;
                }
        }
        /* a damaged or cut .gz: no tail at all, never bytes that are not
         * its end (a stream cut short is said only by gzclose) */
        if (gzclose(g) != Z_OK || n < 0)
                return -EIO;
        memcpy(buf, win, len);
        *ret_cut = cut;
        return (ssize_t)len;
}

ssize_t logfile_tail_fd(int fd, bool gz, char *buf, size_t cap, bool *ret_cut)
{
        int d;

        if (cap == 0 || cap > SSIZE_MAX / 2)
                return -EINVAL;
        if (!gz)
                return tail_plain(fd, buf, cap, ret_cut);
        d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (d < 0 || lseek(d, 0, SEEK_SET) < 0) {
                if (d >= 0)
                        close(d);
                return -errno;
        }
        return tail_gz(d, buf, cap, ret_cut); /* closes d */
}
