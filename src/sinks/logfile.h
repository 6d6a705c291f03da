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
#define LOGFILE_GZ_SUFFIX ".gz"

/* Compress the plain log at path into path + ".gz" (gzip, zlib, streamed
 * in chunks: memory stays small whatever the size), then unlink path. A
 * failure leaves the plain log as it was and no partial .gz, and so does a
 * log that does not shrink by a tenth (-EFBIG: binary output). Returns 0,
 * or -errno. */
int logfile_compress(const char *path);

/* The form of the log at path that exists: path itself, else the other
 * form (path with ".gz" added or removed), malloc'd; NULL when neither
 * exists or on ENOMEM (errno says which). */
char *logfile_current(const char *path);

/* The last at most cap bytes of the log at path (plain or gzip, by its
 * name; the other form when that one is gone) into buf; *ret_cut: the
 * log was longer. A gzip log is decompressed in chunks to its end.
 * Returns the number of bytes, or -errno. */
ssize_t logfile_tail(const char *path, char *buf, size_t cap, bool *ret_cut);
/* The same from an open fd (the caller's, left open), gzip when gz. */
ssize_t logfile_tail_fd(int fd, bool gz, char *buf, size_t cap, bool *ret_cut);
