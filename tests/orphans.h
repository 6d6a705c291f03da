/* SPDX-License-Identifier: MIT */
/* For tests that check a whole process group died: this process becomes a
 * child subreaper, so the orphans of the group come back to it. */
#pragma once

#include <errno.h>
#include <poll.h>
#include <sys/wait.h>

#include "util/util.h"

/* Reap every child left (orphans included) for at most timeout_s. Returns
 * how many there were, or -1 when one did not die of sig or some were
 * still alive at the end. */
static inline int reap_orphans(int sig, double timeout_s)
{
        double end = now_monotonic() + timeout_s;
        int n = 0, st;

        while (now_monotonic() < end) {
                pid_t p = waitpid(-1, &st, WNOHANG);

                if (p < 0)
                        return errno == ECHILD ? n : -1;
                if (p == 0) {
                        (void)poll(NULL, 0, 10);
                        continue;
                }
                if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
                        return -1;
                n++;
        }
        return -1;
}
