/* SPDX-License-Identifier: MIT */
#include "pipeline/parseq.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

struct slot {
        size_t len;
        double now;
        int stream;
        bool eof;
        int fd; /* >= 0: the chunk is len bytes of fd at off, read here */
        off_t off;
};

struct parseq {
        pthread_t thread;
        pthread_mutex_t mu;
        pthread_cond_t work;  /* a chunk was queued, or stop */
        pthread_cond_t space; /* a slot came free */
        pthread_cond_t idle;  /* the queue drained and the worker is waiting */
        struct slot slot[PARSEQ_SLOTS];
        char buf[PARSEQ_SLOTS][PARSEQ_CHUNK]; /* slot i's bytes (not a file's) */
        size_t head, count;                   /* the oldest queued slot, how many are queued */
        bool busy;                            /* the worker is in fn with slot[head] */
        bool stop;
        parseq_fn fn;
        void *userdata;
};

/* On the worker: a piece of the file slot at the head, read back (a file
 * cut short under us ends it early: the parse sees less, the build
 * nothing). */
static int on_piece(void *userdata, const char *buf, size_t len)
{
        struct parseq *q = userdata;
        const struct slot *s = &q->slot[q->head];

        q->fn(q->userdata, s->stream, buf, len, s->now, false);
        return 0;
}

static void *worker(void *arg)
{
        struct parseq *q = arg;

        pthread_mutex_lock(&q->mu);
        for (;;) {
                struct slot *s;

                while (q->count == 0 && !q->stop) {
                        q->busy = false;
                        pthread_cond_broadcast(&q->idle);
                        pthread_cond_wait(&q->work, &q->mu);
                }
                if (q->count == 0)
                        break; /* stopped, and drained */
                s = &q->slot[q->head];
                q->busy = true;
                pthread_mutex_unlock(&q->mu);
                if (s->fd >= 0) /* a slot of the file: read back in pieces */
                        (void)pread_chunks(s->fd, (uint64_t)s->off, (uint64_t)s->off + s->len,
                                           PARSEQ_READ, on_piece, q);
                else if (s->len > 0 || s->eof)
                        q->fn(q->userdata, s->stream, q->buf[q->head], s->len, s->now, s->eof);
                pthread_mutex_lock(&q->mu);
                q->head = (q->head + 1) % PARSEQ_SLOTS;
                q->count--;
                pthread_cond_signal(&q->space);
        }
        q->busy = false;
        pthread_cond_broadcast(&q->idle);
        pthread_mutex_unlock(&q->mu);
        return NULL;
}

static void release(struct parseq *q)
{
        pthread_cond_destroy(&q->idle);
        pthread_cond_destroy(&q->space);
        pthread_cond_destroy(&q->work);
        pthread_mutex_destroy(&q->mu);
        free(q);
}

int parseq_new(parseq_fn fn, void *userdata, struct parseq **ret)
{
        struct parseq *q = calloc(1, sizeof(*q));
        sigset_t all, old;
        int e;

        if (!q)
                return -ENOMEM;
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->work, NULL);
        pthread_cond_init(&q->space, NULL);
        pthread_cond_init(&q->idle, NULL);
        q->fn = fn;
        q->userdata = userdata;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        e = pthread_create(&q->thread, NULL, worker, q);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0) {
                release(q);
                return -e;
        }
        *ret = q;
        return 0;
}

void parseq_free(struct parseq *q)
{
        if (!q)
                return;
        pthread_mutex_lock(&q->mu);
        q->stop = true;
        pthread_cond_signal(&q->work);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->thread, NULL);
        release(q);
}

/* The next free slot, waited for; the worker does not look at it until
 * commit() counts it. */
static struct slot *reserve(struct parseq *q)
{
        struct slot *s;

        pthread_mutex_lock(&q->mu);
        while (q->count == PARSEQ_SLOTS)
                pthread_cond_wait(&q->space, &q->mu);
        s = &q->slot[(q->head + q->count) % PARSEQ_SLOTS];
        pthread_mutex_unlock(&q->mu);
        return s;
}

static void commit(struct parseq *q)
{
        pthread_mutex_lock(&q->mu);
        q->count++;
        pthread_cond_signal(&q->work);
        pthread_mutex_unlock(&q->mu);
}

void parseq_push(struct parseq *q, int stream, const char *buf, size_t len, double now)
{
        while (len > 0) {
                struct slot *s = reserve(q);
                size_t n = MIN(len, (size_t)PARSEQ_CHUNK);

                memcpy(q->buf[s - q->slot], buf, n);
                *s = (struct slot){.len = n, .now = now, .stream = stream, .fd = -1};
                commit(q);
                buf += n;
                len -= n;
        }
}

void parseq_push_file(struct parseq *q, int stream, int fd, off_t off, size_t len, double now)
{
        while (len > 0) {
                struct slot *s = reserve(q);
                size_t n = MIN(len, (size_t)PARSEQ_FILE_SLOT);

                *s = (struct slot){.len = n, .now = now, .stream = stream, .fd = fd, .off = off};
                commit(q);
                off += (off_t)n;
                len -= n;
        }
}

void parseq_push_eof(struct parseq *q, int stream, double now)
{
        struct slot *s = reserve(q);

        *s = (struct slot){.now = now, .stream = stream, .eof = true, .fd = -1};
        commit(q);
}

void parseq_sync(struct parseq *q)
{
        if (!q)
                return;
        pthread_mutex_lock(&q->mu);
        while (q->count > 0 || q->busy)
                pthread_cond_wait(&q->idle, &q->mu);
        pthread_mutex_unlock(&q->mu);
}
