/* SPDX-License-Identifier: MIT */
#include "platform/follow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

#define FOLLOW_TAIL_START (1 << 20) /* read at most the last MiB of a new file */
#define FOLLOW_MAX_PER_POLL (4 << 20)

struct follow {
        int dirfd;
        int fd;
        uid_t dir_uid;
        dev_t dev;
        ino_t ino;
        off_t pos;
        char buf[65536];
};

int follow_new(const char *dir, struct follow **ret)
{
        _cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct follow *f;
        struct stat st;

        if (dirfd < 0 || fstat(dirfd, &st) < 0)
                return -errno;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->fd = -1;
        f->dirfd = TAKE_FD(dirfd);
        f->dir_uid = st.st_uid;
        *ret = f;
        return 0;
}

void follow_free(struct follow *f)
{
        if (!f)
                return;
        closep(&f->fd);
        closep(&f->dirfd);
        free(f);
}

/* A regular file of the directory's owner, or of ours with no other link:
 * as root in a user's directory, a link they made to a file only root
 * reads must not bring that file into the run. */
static bool followable(const struct follow *f, const struct stat *st)
{
        return S_ISREG(st->st_mode) &&
               (st->st_uid == f->dir_uid || (st->st_uid == geteuid() && st->st_nlink == 1));
}

/* The newest followable, non-hidden file; 0 and its name, or -ENOENT. */
static int newest(struct follow *f, char *name, size_t cap, struct stat *ret_st)
{
        struct timespec best = {0, 0};
        bool found = false;
        struct dirent *de;
        DIR *d = opendir_at(f->dirfd, ".");

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                struct stat st;
                size_t n = strlen(de->d_name);

                if (de->d_name[0] == '.' || n >= cap)
                        continue;
                if (fstatat(f->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !followable(f, &st))
                        continue;
                if (!found || st.st_mtim.tv_sec > best.tv_sec ||
                    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
                        best = st.st_mtim;
                        memcpy(name, de->d_name, n + 1);
                        *ret_st = st;
                        found = true;
                }
        }
        closedir(d);
        return found ? 0 : -ENOENT;
}

long follow_poll(struct follow *f, follow_fn cb, void *userdata)
{
        char name[256];
        struct stat st;
        long total = 0;

        if (newest(f, name, sizeof(name), &st) == 0 &&
            (st.st_dev != f->dev || st.st_ino != f->ino)) {
                /* O_NONBLOCK: a FIFO swapped in after the stat must not hang the loop */
                int fd = openat(f->dirfd, name,
                                O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
                struct stat now;

                if (fd >= 0 && (fstat(fd, &now) < 0 || now.st_dev != st.st_dev ||
                                now.st_ino != st.st_ino || !followable(f, &now)))
                        closep(&fd);
                if (fd >= 0) {
                        closep(&f->fd);
                        f->fd = fd;
                        f->dev = st.st_dev;
                        f->ino = st.st_ino;
                        f->pos =
                            st.st_size > FOLLOW_TAIL_START ? st.st_size - FOLLOW_TAIL_START : 0;
                        /* A new file: the old one's partial line ends. */
                        cb(userdata, "", 0, FOLLOW_SWITCH | (f->pos > 0 ? FOLLOW_MID_FILE : 0));
                }
        }
        if (f->fd < 0)
                return 0;
        if (fstat(f->fd, &st) == 0 && st.st_size < f->pos)
                f->pos = 0; /* truncated and rewritten */
        while (total < FOLLOW_MAX_PER_POLL) {
                ssize_t n = pread(f->fd, f->buf, sizeof(f->buf), f->pos);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : total;
                f->pos += n;
                total += n;
                cb(userdata, f->buf, (size_t)n, 0);
        }
        return total;
}
