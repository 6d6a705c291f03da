/* SPDX-License-Identifier: MIT */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
