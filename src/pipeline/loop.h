/* SPDX-License-Identifier: MIT */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "pipeline/recorder.h"
#include "pipeline/source.h"

/* The one event loop of `run` and `watch`: a single-threaded ppoll() over
 * the live source's fds (pipes, pidfd), the signalfd sfd, the network
 * sinks' fds (recorder_pollfds), against the monotonic deadline of the
 * next tick. No sleep, no thread. r may be NULL (run without recording).
 * Ends once the source has ended, the final sample is taken and the
 * source is drained. Returns 0, or -errno when ppoll itself fails. */
int loop_run(const struct source_ops *ops, void *state, struct recorder *r, int sfd);

/* Block SIGINT, SIGTERM, SIGHUP, SIGQUIT (and SIGCHLD with chld) and
 * return a non-blocking signalfd for them; *ret_old gets the previous
 * mask, to restore and to hand to a child. Returns the fd or -errno (the
 * mask is restored then). */
int loop_signalfd(bool chld, sigset_t *ret_old);
/* sfd of loop_signalfd(chld) also takes sigs[0..n) (run --live: SIGWINCH,
 * SIGTSTP); the mask from before loop_signalfd still restores. Returns 0
 * or -errno. */
int loop_signalfd_add(int sfd, bool chld, const int *sigs, size_t n);
/* Read and drop what waits on sfd (signals that came while the run was
 * being finished: they were the build's, not ours). */
void loop_signalfd_drain(int sfd);
