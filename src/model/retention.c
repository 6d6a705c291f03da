/* SPDX-License-Identifier: MIT */
#include "model/retention.h"

#include <math.h>

bool retention_policy_any(const struct retention_policy *p)
{
        return p->keep > 0 || p->older_than_s > 0 || p->max_bytes > 0;
}

/* Whether r is past the age limit. */
static bool too_old(const struct retention_policy *p, const struct retention_run *r, double now)
{
        double t = isfinite(r->end_epoch) ? r->end_epoch : r->start_epoch;

        return p->older_than_s > 0 && isfinite(t) && now - t > p->older_than_s;
}

size_t retention_decide(const struct retention_policy *p, const struct retention_run *runs,
                        size_t n, double now, bool *ret_prune)
{
        uint64_t kept = 0, bytes = 0;
        size_t marked = 0;
        bool full = false; /* a newer run filled max_bytes: the older ones go */

        for (size_t i = 0; i < n; i++) {
                const struct retention_run *r = &runs[i];
                bool go = false;

                if (!r->pinned) {
                        full = full || (p->max_bytes > 0 &&
                                        (bytes > p->max_bytes || r->bytes > p->max_bytes - bytes));
                        go = full || (p->keep > 0 && kept >= p->keep) || too_old(p, r, now);
                }
                ret_prune[i] = go;
                if (go) {
                        marked++;
                        continue;
                }
                kept++;
                bytes = r->bytes > UINT64_MAX - bytes ? UINT64_MAX : bytes + r->bytes;
        }
        return marked;
}
