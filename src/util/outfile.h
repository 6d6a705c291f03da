/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The one writer of a file replaced whole (issue 34): a reader sees the old
 * content or the new, never a part, and a failure leaves the old content and
 * no temp file. A temp file in the target's directory (an unnamed O_TMPFILE
 * where the file system has them; else hidden, ".NAME.XXXXXXXX.tmp",
 * O_CREAT|O_EXCL|O_NOFOLLOW), exactly mode whatever the umask, fsync,
 * renamed over the name (a symlink there is replaced, not followed), then
 * the directory fsync'd. */

/* Replace a run file (util.h) whole with buf, mode 0600: the run's files
 * in its log directory (summaries, run facts, the report), and build
 * output holds secrets. runfile_check() comes first and again at the
 * rename, which never replaces what another user put there. Returns 0 or
 * -errno. The .prom file, read by node_exporter, is written 0644 by
 * outfile_write_at(). */
int write_file_atomic(const char *path, const void *buf, size_t len);
/* The same for dirfd/name with mode (the .prom file when it falls back to
 * the log directory). */
int runfile_write_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* Write buf as the whole content of a file the user named (-o FILE,
 * --prom-file in the collector's directory; a file buildtel names in a log
 * directory is a run file, util.h). What is at the path decides:
 * - nothing, a regular file, or a symlink to one (or a dangling one):
 *   replaced whole as above with exactly mode (a
 *   symlink is replaced, not followed);
 * - a FIFO or a character device, directly or behind a symlink: written
 *   through, opened O_WRONLY|O_NONBLOCK|O_NOCTTY and never renamed over
 *   (`-o /dev/null` must not turn the machine's /dev/null into a file);
 *   -ENXIO for a FIFO that nobody reads;
 * - anything else: refused, -EISDIR for a directory, -EEXIST for a block
 *   device, a socket or another special file.
 * Returns 0 or -errno; outfile_strerror() says it in words. */
int outfile_write_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* The same for a path, mode 0600 (the run's files hold build output);
 * "-" is stdout. */
int outfile_write(const char *path, const void *buf, size_t len);

/* The same rules for an output written as it is made (the trace): fd is an
 * unnamed O_TMPFILE in path's directory (else, on a file system without
 * them, a hidden temp file beside path, O_EXCL), exactly mode, renamed over path
 * by outfile_commit(); or, for a FIFO or a character device, path itself
 * opened for writing, never renamed. "-" is not handled here (the caller
 * has stdout). runfile: path is a file buildtel names in a log directory
 * (util.h: a run file), never written through, renamed only over nothing
 * or our own file. Returns 0 or -errno (as outfile_write); on success
 * release o with outfile_commit() or outfile_release(). */
struct outfile {
        int fd, dirfd;
        bool through; /* fd is the FIFO or the device itself */
        bool runfile; /* the rename under runfile_check() */
        bool anon;    /* fd is an O_TMPFILE, linked to tmp at the commit */
        char name[256], tmp[96];
};
int outfile_open(const char *path, mode_t mode, bool runfile, struct outfile *o);
/* A temp file another made where others look for it (the build log's
 * .gz.tmp, a mark that the .gz is on its way), open as fd, named tmp in
 * path's directory: fd is taken and o commits it over path as a run file,
 * or release removes it. Returns 0 or -errno (fd closed, tmp left). */
int outfile_adopt(const char *path, const char *tmp, int fd, struct outfile *o);
/* Sync and rename the temp file over the path (fsync of the directory
 * too); close. Returns 0 or -errno; o is released either way. */
int outfile_commit(struct outfile *o);
/* Close; a temp file not committed is removed. Idempotent. */
void outfile_release(struct outfile *o);

/* A short reason for what outfile_write*() returned (e < 0), for a
 * "cannot write 'PATH': REASON" message. Static; never NULL. */
const char *outfile_strerror(int e);
