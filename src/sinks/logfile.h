/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The build log on disk, in either of its forms: build-<id>.log while the
 * build runs, build-<id>.log.gz once a finished log over
 * LOGFILE_COMPRESS_MIN was compressed (sink-buildlog does it at the end of
 * the run). Every reader of a build log goes through here. */

#define LOGFILE_COMPRESS_MIN (1024 * 1024) /* bytes: smaller logs stay plain */
/* bytes: a larger log is compressed after buildtel exits, not before (at
 * level 1, 32 MiB of a compile log take about half a second here) */
#define LOGFILE_COMPRESS_WAIT_MAX (32 * 1024 * 1024)
#define LOGFILE_GZ_SUFFIX ".gz"
#define LOGFILE_TMP_SUFFIX ".tmp" /* build-<id>.log.gz.tmp: the .gz being written */

/* Compress the plain log at path into path + ".gz" (gzip level 1, zlib,
 * streamed in chunks: memory stays small whatever the size; written as
 * path.gz.tmp, renamed when whole), then unlink path. A failure leaves the
 * plain log as it was and no .gz, and so does a log whose first MiB, or
 * whole, does not shrink by a tenth (-EFBIG: binary output; then only that
 * MiB was compressed). Returns 0, or -errno. */
int logfile_compress(const char *path);

/* The same in a detached process at nice 10 (platform/spawn.h), started
 * when this process exits (atexit: the wrapper's last exports and its exit
 * status come first, not beside zlib); at most LOGFILE_PENDING_MAX wait,
 * one more starts at once. Returns once path.gz.tmp exists, which says
 * the .gz is on its way; the plain log stays readable until the .gz is
 * whole. -EFBIG (the first MiB does not compress: nothing started), or
 * -errno. */
#define LOGFILE_PENDING_MAX 8
int logfile_compress_later(const char *path);

/* The name the log at path has once a compression under way has ended:
 * path + ".gz" while its .gz.tmp exists, else logfile_current(path). What
 * the run's records name; NULL as logfile_current. */
char *logfile_settled(const char *path);

/* The form of the log at path that exists: path itself, else the other
 * form (path with ".gz" added or removed), malloc'd; NULL when neither
 * exists or on ENOMEM (errno says which). */
char *logfile_current(const char *path);

/* The last at most cap bytes of the log open at fd (the caller's, left
 * open; gzip when gz) into buf; *ret_cut: the log was longer. A gzip log
 * is decompressed in chunks to its end. Returns the number of bytes, or
 * -errno (-EIO: a damaged or cut .gz). */
ssize_t logfile_tail_fd(int fd, bool gz, char *buf, size_t cap, bool *ret_cut);
