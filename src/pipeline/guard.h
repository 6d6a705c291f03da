/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"

/* run --memory-guard (issue 37): a compile that starts when the memory it
 * will need does not fit in what is left is stopped (SIGSTOP) before it
 * grows, and continued (SIGCONT) once it fits, or once no other compile of
 * the build runs: one always runs, so the build never stalls. What a unit
 * needs is its usual peak in the job's ledger, else the largest unit this
 * run has ended so far (none yet: it runs). What is left is the build's
 * cap less its memory in use (page cache aside), else the host's
 * available memory, less the growth still to come of the compiles running
 * (their need less their RSS now) and the headroom. Only the build's own
 * compile processes, as pipeline/acct tells them, are ever stopped; nothing
 * is killed. */

struct cgroup;
struct ledger;
struct procfs;

struct guard_config {
        double headroom_mb;
        double limit_mb;       /* the build's cap; 0: none, the host's available memory */
        struct cgroup *cg;     /* the build's, for its memory in use (a cap); not owned */
        struct procfs *proc;   /* not owned */
        struct ledger *ledger; /* the job's usual; NULL: none. Not owned */
};

struct guard;

/* Returns 0 or -ENOMEM. */
int guard_new(const struct guard_config *cfg, struct guard **ret);
/* Continues whatever is still held. NULL is a no-op. */
void guard_free(struct guard *g);

/* A compile or link started: pid its top process, kind a units kind, name
 * and path (resolved; "" unknown) its ledger key. */
void guard_start(struct guard *g, long pid, int kind, const char *name, const char *path,
                 double now);
/* A process of the build forked: a unit's child joins it (and is stopped
 * too when the unit is held: it forked before the stop). */
void guard_fork(struct guard *g, long ppid, long pid);
/* A process ended; a unit's top with its peak (MiB, 0 unknown). Whatever
 * fits now continues. */
void guard_exit(struct guard *g, long pid, double peak_mb, double now);
/* Continue what fits now; when something is held, *deadline is lowered to
 * the next look. */
void guard_check(struct guard *g, double now, double *deadline);

/* The guard's account of the run, into ret (model/run.h). */
void guard_account(const struct guard *g, struct run_guard *ret);
