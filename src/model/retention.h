/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which old runs to remove: a pure decision over the history's runs, so
 * that `buildtel prune` and the limit `run` applies at its end cannot
 * differ, and a table-driven test covers it. No I/O. */

/* The limits; a zero member is no limit of that kind. */
struct retention_policy {
        uint64_t keep;       /* keep at most this many runs, the newest */
        double older_than_s; /* remove runs that ended more than this long ago */
        uint64_t max_bytes;  /* the newest runs' files up to this many bytes in all */
};

/* One run as the policy sees it. */
struct retention_run {
        double start_epoch, end_epoch; /* end NAN: unknown (not finished) */
        uint64_t bytes;                /* its files on disk */
        /* never removed: running (its recorder alive), or the run that asks;
         * it still counts toward keep and max_bytes */
        bool pinned;
};

/* Mark in ret_prune[i] whether runs[i] goes, for runs[0..n) ordered
 * newest first (by start). A run goes when it is not pinned and any limit
 * says so: it is past the keep newest, it ended (or, end unknown, started)
 * more than older_than_s before now, or the runs kept before it and it
 * hold more than max_bytes (then every older run goes too: the oldest go
 * first, as journald's SystemMaxUse). Runs kept count; removed ones do not. Returns the
 * number marked. */
size_t retention_decide(const struct retention_policy *p, const struct retention_run *runs,
                        size_t n, double now, bool *ret_prune);

/* Whether p has any limit at all. */
bool retention_policy_any(const struct retention_policy *p);
