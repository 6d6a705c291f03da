/* SPDX-License-Identifier: MIT */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

/* Write through to the FIFO or device at dirfd/name; 1 when it turned out
 * to be a regular file after all (the caller replaces it instead). */
static int write_through(int dirfd, const char *name, const void *buf, size_t len)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        int fl;

        fd = openat(dirfd, name, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode))
                return 1;
        if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
        /* O_NONBLOCK was for the open (a FIFO with no reader): block now */
        fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
                (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        return write_all(fd, buf, len);
}

int outfile_write_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
        struct stat st;

        if (!*name || strchr(name, '/'))
                return -EINVAL;
        /* followed: a symlink to /dev/null is /dev/null */
        if (fstatat(dirfd, name, &st, 0) < 0) {
                if (errno != ENOENT)
                        return -errno;
        } else if (S_ISDIR(st.st_mode)) {
                return -EISDIR;
        } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
                int r = write_through(dirfd, name, buf, len);

                if (r <= 0)
                        return r;
        } else if (!S_ISREG(st.st_mode)) {
                return -EEXIST;
        }
        return write_file_atomic_at(dirfd, name, buf, len, mode);
}

int outfile_write(const char *path, const void *buf, size_t len)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -1;
        const char *slash = strrchr(path, '/');

        if (strcmp(path, "-") == 0)
                return write_all(STDOUT_FILENO, buf, len);
        /* "/x" lives in "/"; "x/" names no file */
        dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        if (!dir)
                return -ENOMEM;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        return outfile_write_at(dfd, slash ? slash + 1 : path, buf, len, 0600);
}

/* What is at dirfd/name: 0 absent or regular (replace), 1 write through,
 * or -errno. */
static int outfile_kind(int dirfd, const char *name)
{
        struct stat st;

        if (fstatat(dirfd, name, &st, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
                return 1;
        return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

static int open_through(struct outfile *o)
{
        struct stat st;
        int fl;

        o->fd = openat(o->dirfd, o->name, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (o->fd < 0)
                return -errno;
        if (fstat(o->fd, &st) < 0)
                return -errno;
        if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
                return S_ISREG(st.st_mode) ? 1 : -EEXIST;
        fl = fcntl(o->fd, F_GETFL);
        if (fl >= 0)
                (void)fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK);
        o->through = true;
        return 0;
}

static int name_temp(struct outfile *o, mode_t mode);

/* An O_TMPFILE is linked by AT_EMPTY_PATH, which wants CAP_DAC_READ_SEARCH
 * before Linux 6.10 (else only through /proc, which platform/ alone reads):
 * without it, its bytes go to a named temp. -errno on failure. */
static int named_copy(struct outfile *o)
{
        int anon = o->fd, e;
        struct stat st;

        o->anon = false;
        e = fstat(anon, &st) < 0 ? -errno : name_temp(o, st.st_mode & 07777);
        for (loff_t in = 0; e >= 0 && in < st.st_size;) {
                ssize_t n = copy_file_range(anon, &in, o->fd, NULL, (size_t)(st.st_size - in), 0);

                if (n <= 0)
                        e = n < 0 ? -errno : -EIO;
        }
        if (e >= 0 && fsync(o->fd) < 0)
                e = -errno;
        close(anon);
        return e;
}

/* Give the temp file a hidden name beside the path: made O_EXCL, or (an
 * O_TMPFILE's, at the commit) linked there. -errno, and no name, on
 * failure. */
static int name_temp(struct outfile *o, mode_t mode)
{
        uint32_t rnd = 0;
        int e = -EEXIST;

        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                rnd ^= (uint32_t)getpid() * 2654435761u;
        for (unsigned tries = 0; tries < 100 && e == -EEXIST; tries++) {
                int n = snprintf(o->tmp, sizeof(o->tmp), ".%.64s.%08x.tmp", o->name,
                                 rnd + tries * 0x9e3779b9u);

                if (n < 0 || (size_t)n >= sizeof(o->tmp)) {
                        e = -ENAMETOOLONG;
                        break;
                }
                if (o->anon) {
                        if (linkat(o->fd, "", o->dirfd, o->tmp, AT_EMPTY_PATH) == 0)
                                return 0;
                        if (errno == ENOENT || errno == EPERM)
                                return named_copy(o);
                } else {
                        o->fd = openat(o->dirfd, o->tmp,
                                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                        if (o->fd >= 0)
                                return fchmod(o->fd, mode) < 0 ? -errno : 0;
                }
                e = -errno;
        }
        o->tmp[0] = '\0'; /* the last name tried may be another's */
        return e;
}

/* An unnamed O_TMPFILE where the file system has them: a buildtel killed
 * before the commit (SIGKILL, a power cut) leaves nothing to clean up.
 * Else the named hidden temp, which such a kill leaves behind. */
static int open_temp(struct outfile *o, mode_t mode)
{
        o->fd = openat(o->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
        o->anon = o->fd >= 0;
        if (!o->anon)
                return name_temp(o, mode);
        return fchmod(o->fd, mode) < 0 ? -errno : 0;
}

int outfile_open(const char *path, mode_t mode, bool runfile, struct outfile *o)
{
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
        char dir[4096];
        int n, k;

        *o = (struct outfile){.fd = -1, .dirfd = -1, .runfile = runfile};
        n = slash
                ? snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path)
                : snprintf(dir, sizeof(dir), ".");
        if (n < 0 || (size_t)n >= sizeof(dir) || !*name || strlen(name) >= sizeof(o->name))
                return n < 0 || (size_t)n >= sizeof(dir) ? -ENAMETOOLONG : -EINVAL;
        memcpy(o->name, name, strlen(name) + 1);
        o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        k = o->dirfd < 0 ? -errno
            : runfile    ? runfile_check(o->dirfd, o->name) /* 1: ours, replaced */
                         : outfile_kind(o->dirfd, o->name);
        if (k == 1 && !runfile) {
                k = open_through(o);
                if (k == 1) { /* a regular file after all */
                        closep(&o->fd);
                        k = 0;
                }
        }
        if (k >= 0 && !o->through)
                k = open_temp(o, mode);
        if (k < 0)
                outfile_release(o);
        return k < 0 ? k : 0;
}

int outfile_commit(struct outfile *o)
{
        int r = 0;

        if (!o->through && o->fd >= 0) {
                r = fsync(o->fd) < 0 ? -errno : o->anon ? name_temp(o, 0) : 0;
                if (r == 0 && o->runfile)
                        r = runfile_renameat(o->dirfd, o->tmp, o->dirfd, o->name);
                else if (r == 0 && renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0)
                        r = -errno;
                if (r == 0) {
                        o->tmp[0] = '\0';
                        /* EINVAL: a file system that cannot sync a directory */
                        if (fsync(o->dirfd) < 0 && errno != EINVAL)
                                r = -errno;
                }
        }
        if (o->fd >= 0 && close(o->fd) < 0 && r == 0)
                r = -EIO;
        o->fd = -1;
        outfile_release(o);
        return r;
}

void outfile_release(struct outfile *o)
{
        if (o->fd >= 0)
                close(o->fd);
        o->fd = -1;
        if (o->tmp[0] && o->dirfd >= 0)
                (void)unlinkat(o->dirfd, o->tmp, 0);
        o->tmp[0] = '\0';
        if (o->dirfd >= 0)
                close(o->dirfd);
        o->dirfd = -1;
}

const char *outfile_strerror(int e)
{
        switch (e) {
        case -ENXIO:
                return "a FIFO with no reader (or a device that is not there)";
        case -EEXIST:
                return "not a regular file, a FIFO or a character device: refused";
        case -EINVAL:
                return "not a file name";
        default:
                return strerror(-e);
        }
}
