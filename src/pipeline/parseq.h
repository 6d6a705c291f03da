/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The build's output parsed beside its pass-through: a bounded queue of
 * chunks and one worker thread that hands them, in order, to fn.
 *
 * Why a thread: measured on a 280 MiB BuildKit log, the line parsers are a
 * third of buildtel's CPU per byte, on top of the two copies `tee` also
 * pays. Single-threaded, the child waits on a full pipe for every byte we
 * parse, and pass-through can never come near `cat | tee`. With the parse
 * on a second thread the bytes go on to the terminal and the log first;
 * the parse catches up beside them.
 *
 * The worker is the only thread that touches what fn touches while chunks
 * are queued; parseq_sync() waits until it has taken every chunk pushed so
 * far, and until the next push the caller may read that state. Pushing
 * blocks while the queue is full (PARSEQ_SLOTS chunks of at most
 * PARSEQ_CHUNK bytes copied, or PARSEQ_FILE_SLOT bytes of a file named):
 * memory stays bounded, the build waits on its pipe as it would on a slow
 * terminal. */

#define PARSEQ_SLOTS 16
#define PARSEQ_CHUNK (128 * 1024)
#define PARSEQ_READ (64 * 1024) /* a chunk read back from a file, at most */
/* A slot of the file holds no bytes, only where they are: up to 1 MiB (a
 * full pipe's splice) in one slot, read back in PARSEQ_READ pieces, so the
 * pass-through runs up to 16 MiB ahead of the parse with one hand-over per
 * splice, not one per 64 KiB. */
#define PARSEQ_FILE_SLOT (1024 * 1024)

/* A chunk of stream (1 stdout, 2 stderr) that arrived at now; len 0 and
 * eof true: the stream ended. Runs on the worker thread. */
typedef void (*parseq_fn)(void *userdata, int stream, const char *buf, size_t len, double now,
                          bool eof);

struct parseq;

/* Starts the worker, with every signal blocked in it (they are the event
 * loop's, through its signalfd). 0 or -errno (-ENOMEM, -EAGAIN). */
int parseq_new(parseq_fn fn, void *userdata, struct parseq **ret);
/* Waits for the queue to drain, stops and joins the worker. NULL: no-op. */
void parseq_free(struct parseq *q);

/* Copies buf (split into chunks of PARSEQ_CHUNK) onto the queue. */
void parseq_push(struct parseq *q, int stream, const char *buf, size_t len, double now);
/* len bytes of stream that the kernel moved into the file fd at off
 * (splice(2), the build log): queued without a copy, read back (pread)
 * by the worker. fd must stay open until parseq_sync or parseq_free. */
void parseq_push_file(struct parseq *q, int stream, int fd, off_t off, size_t len, double now);
/* The end of stream, after its last chunk. */
void parseq_push_eof(struct parseq *q, int stream, double now);
/* Returns when the worker has handled every chunk pushed before the call.
 * NULL: no-op. */
void parseq_sync(struct parseq *q);
