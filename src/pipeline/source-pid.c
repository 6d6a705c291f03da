/* SPDX-License-Identifier: MIT */
/* The watched pid of `watch`. A pidfd tells us the moment it exits;
 * without one, the process start time guards against a reused pid. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "parse/linebuf.h"
#include "platform/child.h"
#include "platform/follow.h"
#include "platform/procfs.h"

struct source_pid {
        struct procfs *pfs;
        struct follow *fol;    /* borrowed; NULL: none */
        struct linebuf *lines; /* fol's bytes split into lines */
        struct recorder *r;    /* they go to, during follow_poll */
        long pid;
        uint64_t starttime;
        int pidfd; /* -1: the kernel has none */
        bool gone;
        int got_signal;
};

static void pid_close(void *state)
{
        struct source_pid *s = state;

        if (!s)
                return;
        procfs_free(s->pfs);
        linebuf_free(s->lines);
        closep(&s->pidfd);
        free(s);
}

int source_pid_open(long pid, struct source_pid **ret)
{
        struct source_pid *s = calloc(1, sizeof(*s));
        struct pidstat ps;
        int e;

        if (!s)
                return -ENOMEM;
        s->pid = pid;
        s->pidfd = -1;
        e = procfs_new("/", &s->pfs);
        if (e >= 0) {
                /* Open the pidfd first, then read the start time: if the pid
                 * was reused in between, the start time no longer matches later. */
                s->pidfd = child_pidfd_open((pid_t)pid);
                e = procfs_pidstat(s->pfs, pid, &ps) < 0 || ps.state == 'Z' ? -ESRCH : 0;
        }
        if (e < 0) {
                pid_close(s);
                return e;
        }
        s->starttime = ps.starttime;
        *ret = s;
        return 0;
}

/* Is the pid still the process we attached to? */
static bool same_process(struct source_pid *s)
{
        struct pidstat ps;

        if (procfs_pidstat(s->pfs, s->pid, &ps) < 0)
                return false;
        return ps.starttime == s->starttime && ps.state != 'Z' && ps.state != 'X';
}

char **source_pid_argv(struct source_pid *s)
{
        char buf[8192];
        ssize_t n = procfs_cmdline(s->pfs, s->pid, buf, sizeof(buf) - 1);
        size_t count = 0, k = 0;
        char **argv;

        buf[MAX(n, 0)] = '\0';
        for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
                count++;
        argv = calloc(count + 1, sizeof(char *));
        if (!argv)
                return NULL;
        for (ssize_t i = 0; i < n && k < count; i += (ssize_t)strlen(buf + i) + 1)
                if (!(argv[k++] = strdup(buf + i)))
                        break;
        return argv;
}

int source_pid_follow(struct source_pid *s, struct follow *fol)
{
        int e = s->lines ? 0 : linebuf_new(0, &s->lines);

        if (e < 0)
                return e;
        s->fol = fol;
        return 0;
}

int source_pid_signal(const struct source_pid *s)
{
        return s->got_signal;
}

static size_t pid_pollfds(void *state, struct pollfd *p, size_t cap, double *deadline)
{
        struct source_pid *s = state;

        if (s->pidfd < 0 || cap < 1)
                return 0;
        p[0] = (struct pollfd){.fd = s->pidfd, .events = POLLIN};
        return 1;
}

static void pid_poll(void *state, const struct pollfd *p, size_t n, struct recorder *r)
{
        struct source_pid *s = state;

        if (n > 0 && p[0].revents)
                s->gone = true;
}

static void pid_on_signal(void *state, int sig)
{
        struct source_pid *s = state;

        /* INT, TERM, HUP, QUIT end the watch, with a final sample. */
        if (!s->got_signal)
                s->got_signal = sig;
}

static void on_log_line(void *userdata, const char *line, size_t len, bool truncated)
{
        recorder_log_line(userdata, line, len);
}

static void on_follow(void *userdata, const char *buf, size_t len, unsigned flags)
{
        struct source_pid *s = userdata;

        if (flags & FOLLOW_SWITCH) {
                linebuf_flush(s->lines, on_log_line, s->r);
                if (flags & FOLLOW_MID_FILE)
                        linebuf_skip_line(s->lines);
        }
        linebuf_feed(s->lines, buf, len, on_log_line, s->r);
}

static void pid_before_tick(void *state, bool final, struct recorder *r)
{
        struct source_pid *s = state;

        if (!final && s->pidfd < 0 && !same_process(s)) {
                s->gone = true;
                return; /* the final sample follows, with the last lines */
        }
        if (s->fol && r) {
                s->r = r;
                (void)follow_poll(s->fol, on_follow, s);
        }
}

static bool pid_ended(void *state)
{
        const struct source_pid *s = state;

        return s->gone || s->got_signal;
}

const struct source_ops source_pid = {
    .pollfds = pid_pollfds,
    .poll = pid_poll,
    .signal = pid_on_signal,
    .before_tick = pid_before_tick,
    .ended = pid_ended,
    .close = pid_close,
};
