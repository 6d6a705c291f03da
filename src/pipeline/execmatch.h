/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/execs.h"
#include "model/sample.h"
#include "platform/cgroup-top.h"

/* BuildKit's RUN steps followed into the daemon: the commands this
 * build's log printed (added by the parse worker, read by the ticks and
 * polls under one lock), the exec cgroups found for them
 * (platform/bkexec), their figures folded into the build's, and at the
 * end each exec given to the step it ran. */

#define EXECMATCH_POLL_S 0.1 /* an exec's OOM count and peak, between ticks */

/* The kernel's last OOM victim for the sample: in the build's cgroup or in
 * an exec of ours, whichever report is the newest (a report is new when
 * its pid is not the one its source gave before). */
enum victim_from { VICTIM_OWN, VICTIM_EXEC, VICTIM_FROM_ };
struct victim {
        char comm[PROCTOP_LABEL_MAX + 1]; /* its comm, or its label (pipeline/acct.h) */
        long pid;
        long last[VICTIM_FROM_];
};
/* A report from one source (pid <= 0: none); s then names the newest. */
void victim_report(struct victim *v, enum victim_from from, const char *comm, long pid,
                   struct sample *s);

struct execmatch;
struct targets;

/* root: "/" in production. 0 or -errno. */
int execmatch_new(const char *root, struct execmatch **ret);
void execmatch_free(struct execmatch *em); /* NULL is a no-op */

/* Any thread: a RUN step the log printed (cmd, len bytes), at now. */
void execmatch_want(struct execmatch *em, const char *cmd, size_t len, double now);
/* Any thread: how many RUN steps the log printed so far (NULL: 0). */
size_t execmatch_nwant(struct execmatch *em);

/* A tick at now (buildtel's clock): the hunt for a step printed lately
 * and not found, then the exec cgroups read (found anew with discover). */
void execmatch_tick(struct execmatch *em, struct procfs *p, double now, bool discover);
/* A process of the walk; after it, execmatch_fold. */
void execmatch_consider(struct execmatch *em, const struct pidstat *ps);
/* pids[0..n) and the execs' pids, in a list em owns until the next call;
 * *ret_n its length. pids itself when there is no exec or no memory. */
const long *execmatch_pids(struct execmatch *em, const long *pids, size_t n, size_t *ret_n);
/* Is pid (or, pid 0, the exec named id) in an exec of ours: 1 yes, 0 not
 * decided yet, -1 no (platform/bkexec.h bkexec_exec_of; em NULL: -1). id
 * holds EXEC_ID_MAX + 1 bytes. */
int execmatch_exec_of(struct execmatch *em, long pid, char *id);
/* Between ticks: an exec's OOM count and peak before it goes. */
void execmatch_poll(struct execmatch *em, struct procfs *p, double now);
/* The walk over (p its /proc): the build's figures are the client's
 * cgroup and this invocation's execs summed (host_psi: the pressure is the
 * host's, execs in it already); an exec's OOM report goes to v. */
void execmatch_fold(struct execmatch *em, struct procfs *p, struct sample *s, struct victim *v,
                    bool host_psi);
/* The build is over at now: each exec to the RUN step of ts it ran (within
 * slack seconds of the step's times), and *ret what the steps' figures
 * cover. */
void execmatch_finish(struct execmatch *em, double now, const struct targets *ts, double slack,
                      struct exec_cover *ret);
