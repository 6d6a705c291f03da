/* SPDX-License-Identifier: MIT */
/* The one writer of a file replaced whole (outfile.h): every whole-file
 * write of buildtel comes through here. */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

/* What is at dirfd/name: 0 absent or regular (replace), 1 write through,
 * or -errno. */
static int outfile_kind(int dirfd, const char *name)
{
        struct stat st;

        /* followed: a symlink to /dev/null is /dev/null */
        if (fstatat(dirfd, name, &st, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
                return 1;
        return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

/* The FIFO or device itself, opened O_NONBLOCK (a FIFO with no reader:
 * -ENXIO), then blocking; 1 when it turned out to be a regular file after
 * all (the caller replaces it instead). */
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
                return S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
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

/* Give the temp file a hidden name beside the path, ending in neither the
 * path's name nor its suffix (a textfile collector globbing *.prom never
 * reads one): made O_EXCL (which also refuses a symlink planted there), or
 * (an O_TMPFILE's, at the commit) linked there. -errno, and no name, on
 * failure. */
static int name_temp(struct outfile *o, mode_t mode)
{
        uint32_t rnd = 0;
        int e = -EEXIST;

        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                rnd ^= (uint32_t)getpid() * 2654435761u ^ (uint32_t)(now_monotonic() * 1e9);
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
 * Else the named hidden temp, which such a kill leaves behind. The mode is
 * the one asked for, whatever the umask: a collector reads these. */
static int open_temp(struct outfile *o, mode_t mode)
{
        o->fd = openat(o->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
        o->anon = o->fd >= 0;
        if (!o->anon)
                return name_temp(o, mode);
        return fchmod(o->fd, mode) < 0 ? -errno : 0;
}

/* o's writer for dirfd/name, dirfd taken (closed on failure too): a run
 * file, or one written through when a FIFO or a character device. */
static int open_at(int dirfd, const char *name, mode_t mode, bool runfile, struct outfile *o)
{
        size_t n = strlen(name);
        int k;

        *o = (struct outfile){.fd = -1, .dirfd = dirfd < 0 ? -1 : dirfd, .runfile = runfile};
        if (dirfd < 0)
                return dirfd;
        k = n == 0 || strchr(name, '/') ? -EINVAL : n >= sizeof(o->name) ? -ENAMETOOLONG : 0;
        if (k == 0) {
                memcpy(o->name, name, n + 1);
                k = runfile ? runfile_check(dirfd, name) /* 1: ours, replaced */
                            : outfile_kind(dirfd, name);
        }
        if (k == 1 && !runfile) {
                k = open_through(o);
                if (k == 1) /* a regular file after all */
                        closep(&o->fd);
        }
        if (k >= 0 && !o->through)
                k = open_temp(o, mode);
        if (k < 0)
                outfile_release(o);
        return k < 0 ? k : 0;
}

/* dirfd as our own fd (AT_FDCWD: the working directory), for the
 * directory's fsync. */
static int dup_dir(int dirfd)
{
        int fd = dirfd == AT_FDCWD ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                   : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

        return fd < 0 ? -errno : fd;
}

int outfile_open(const char *path, mode_t mode, bool runfile, struct outfile *o)
{
        const char *name = NULL; /* set whenever open_parent succeeds */
        int dfd = open_parent(path, &name);

        return open_at(dfd, dfd < 0 ? "" : name, mode, runfile, o);
}

int outfile_adopt(const char *path, const char *tmp, int fd, struct outfile *o)
{
        const char *name = NULL; /* set whenever open_parent succeeds */
        int dfd = open_parent(path, &name), n;

        *o = (struct outfile){.fd = fd, .dirfd = dfd < 0 ? -1 : dfd, .runfile = true};
        if (dfd < 0) {
                outfile_release(o);
                return dfd;
        }
        n = snprintf(o->tmp, sizeof(o->tmp), "%s", tmp);
        if (n < 0 || (size_t)n >= sizeof(o->tmp) || strchr(tmp, '/') || !*name ||
            strlen(name) >= sizeof(o->name)) {
                o->tmp[0] = '\0'; /* not ours to remove */
                outfile_release(o);
                return -EINVAL;
        }
        memcpy(o->name, name, strlen(name) + 1);
        return 0;
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
                        /* the rename is durable once the directory is; EINVAL:
                         * a file system that cannot sync a directory */
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

/* buf written whole through o's writer, committed, or nothing. */
static int write_whole(int r, struct outfile *o, const void *buf, size_t len)
{
        if (r >= 0)
                r = write_all(o->fd, buf, len);
        if (r < 0) {
                outfile_release(o);
                return r;
        }
        return outfile_commit(o);
}

int outfile_write_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
        struct outfile o;

        return write_whole(open_at(dup_dir(dirfd), name, mode, false, &o), &o, buf, len);
}

int outfile_write(const char *path, const void *buf, size_t len)
{
        struct outfile o;

        if (strcmp(path, "-") == 0)
                return write_all(STDOUT_FILENO, buf, len);
        return write_whole(outfile_open(path, 0600, false, &o), &o, buf, len);
}

int runfile_write_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
        struct outfile o;

        return write_whole(open_at(dup_dir(dirfd), name, mode, true, &o), &o, buf, len);
}

int write_file_atomic(const char *path, const void *buf, size_t len)
{
        struct outfile o;

        return write_whole(outfile_open(path, 0600, true, &o), &o, buf, len);
}

const char *outfile_strerror(int e)
{
        return e == -ENXIO    ? "a FIFO with no reader (or a device that is not there)"
               : e == -EEXIST ? "not a regular file, a FIFO or a character device: refused"
               : e == -EINVAL ? "not a file name"
                              : strerror(-e);
}
