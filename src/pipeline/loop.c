/* SPDX-License-Identifier: MIT */
#include "pipeline/loop.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "util/util.h"

#define LOOP_POLLFDS (SOURCE_POLLFDS + 1 + RECORDER_POLLFDS)

static struct timespec to_timespec(double s)
{
        struct timespec ts;

        /* NAN is 0; INFINITY (no deadline: ppoll gets NULL) must not reach
         * the cast, which is undefined (clang's UBSan: float-cast-overflow) */
        if (!(s > 0))
                s = 0;
        if (s > 1e9)
                s = 1e9;
        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        return ts;
}

/* What to wait for next: 1 to poll until *deadline, 0 for another turn at
 * once (a sample was taken), -1 when the loop is over. */
static int schedule(const struct source_ops *ops, void *state, struct recorder *r, bool *final_done,
                    double now, double *deadline)
{
        if (!*final_done && ops->ended(state)) {
                ops->before_tick(state, true, r);
                if (r)
                        (void)recorder_tick(r);
                *final_done = true;
        }
        if (*final_done)
                return !ops->drained || ops->drained(state, now, deadline) ? -1 : 1;
        if (!r)
                return 1;
        if (now >= recorder_next_tick(r)) {
                ops->before_tick(state, false, r);
                /* the source may have found the build gone: no sample then,
                 * the final one comes next */
                if (!ops->ended(state))
                        (void)recorder_tick(r);
                return 0;
        }
        *deadline = recorder_next_tick(r);
        return 1;
}

int loop_run(const struct source_ops *ops, void *state, struct recorder *r, int sfd)
{
        bool final_done = false;

        for (;;) {
                struct pollfd p[LOOP_POLLFDS];
                struct signalfd_siginfo si;
                double now = now_monotonic(), deadline = INFINITY;
                size_t n, nsrc;
                struct timespec ts;
                int k = schedule(ops, state, r, &final_done, now, &deadline);

                if (k < 0)
                        return 0;
                if (k == 0)
                        continue;
                n = nsrc = ops->pollfds(state, p, SOURCE_POLLFDS, &deadline);
                p[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
                /* Network exports: their sockets and timers, never a wait. */
                if (r)
                        n += recorder_pollfds(r, p + n, RECORDER_POLLFDS, &deadline);

                ts = to_timespec(deadline - now);
                if (ppoll(p, (nfds_t)n, isinf(deadline) ? NULL : &ts, NULL) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                while (p[nsrc].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                        ops->signal(state, (int)si.ssi_signo);
                ops->poll(state, p, nsrc, r);
                if (r)
                        recorder_poll(r, p + nsrc + 1, n - nsrc - 1);
        }
}

static void base_mask(sigset_t *mask, bool chld)
{
        sigemptyset(mask);
        if (chld)
                sigaddset(mask, SIGCHLD);
        sigaddset(mask, SIGINT);
        sigaddset(mask, SIGTERM);
        sigaddset(mask, SIGHUP);
        sigaddset(mask, SIGQUIT);
}

int loop_signalfd(bool chld, sigset_t *ret_old)
{
        sigset_t mask;
        int fd;

        base_mask(&mask, chld);
        sigprocmask(SIG_BLOCK, &mask, ret_old);
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0) {
                fd = -errno;
                sigprocmask(SIG_SETMASK, ret_old, NULL);
        }
        return fd;
}

void loop_signalfd_drain(int sfd)
{
        struct signalfd_siginfo si;

        while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                ;
}

int loop_signalfd_add(int sfd, bool chld, const int *sigs, size_t n)
{
        sigset_t mask;

        base_mask(&mask, chld);
        for (size_t i = 0; i < n; i++)
                sigaddset(&mask, sigs[i]);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        return signalfd(sfd, &mask, SFD_CLOEXEC | SFD_NONBLOCK) < 0 ? -errno : 0;
}
