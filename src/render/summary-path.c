/* SPDX-License-Identifier: MIT */
/* The summary's critical path (model/critpath.h): its reading, one line,
 * and its section, the chain in order with its times (issue 38). */
#include <math.h>

#include "model/critpath.h"
#include "render/summary-int.h"

/* "the critical path, 3 edges and 43.2s, set the 45.0s wall: it ends at
 * app (18.0s); the longest stretch under -j 4, 20.0s, waited for b.o" */
bool summary_path_reading(const struct critpath *p, struct dwriter *w)
{
        const struct critpath_step *last = p && p->n ? &p->step[p->n - 1] : NULL;

        if (!last)
                return false;
        dw_printf(w, "the critical path, %zu %s", p->n + p->dropped, p->jobs ? "edges" : "steps");
        if (p->target[0]) {
                dw_puts(w, " of target ");
                summary_put_text(w, p->target);
        }
        dw_printf(w, " and %s, set the %s wall: it ends at ", DURATION_STR(p->length_s),
                  DURATION_STR(p->wall_s));
        summary_put_text(w, last->name);
        dw_printf(w, " (%s)", DURATION_STR(last->end_s - last->start_s));
        if (p->ngap) {
                dw_printf(w, "; the longest stretch under -j %u, %s, waited for ", p->jobs,
                          DURATION_STR(p->gap[0].end_s - p->gap[0].start_s));
                summary_put_text(w, p->gap[0].waited_for);
        }
        return true;
}

static void put_weights(struct dwriter *w, const char *lead, const struct critpath_weight *v,
                        size_t n)
{
        for (size_t i = 0; i < n; i++) {
                dw_puts(w, i ? ", " : lead);
                summary_put_text(w, v[i].name);
                dw_printf(w, " %s (of %s)", DURATION_STR(v[i].weighted_s), DURATION_STR(v[i].s));
        }
}

void summary_path_text(const struct critpath *p, struct dwriter *w)
{
        dw_puts(w, "\n\ncritical path\n");
        if (!p) {
                dw_puts(w, "  none: make gives no build graph; see the parallelism reading");
                return;
        }
        dw_printf(w, "  %zu %s, %s of the %s wall", p->n + p->dropped, p->jobs ? "edges" : "steps",
                  DURATION_STR(p->length_s), DURATION_STR(p->wall_s));
        if (p->target[0]) {
                dw_puts(w, ", target ");
                summary_put_text(w, p->target);
        }
        if (p->dropped)
                dw_printf(w, " (the first %zu left out)", p->dropped);
        dw_puts(w, "\n      start        end      slack     memory  name\n");
        for (size_t i = 0; i < p->n; i++) {
                const struct critpath_step *s = &p->step[i];

                dw_printf(w, "  %9.3f  %9.3f  %9.3f  %9s  ", s->start_s, s->end_s, s->slack_s,
                          isfinite(s->mem_mb) ? SIZE_STR(s->mem_mb) : "-");
                summary_put_text(w, s->name);
                if (s->rule[0]) {
                        dw_puts(w, " (");
                        summary_put_text(w, s->rule);
                        dw_puts(w, ")");
                }
                dw_puts(w, "\n");
        }
        put_weights(w, "  weighted time: ", p->weight, p->nweight);
        put_weights(w, "\n  by rule: ", p->rule, p->nrule);
        if (p->jobs)
                dw_printf(w, "\n  under -j %u: %s", p->jobs, DURATION_STR(p->under_s));
        for (size_t i = 0; i < p->ngap; i++) {
                const struct critpath_gap *g = &p->gap[i];

                dw_printf(w, "\n    %.3f-%.3f, %.1f running, waiting for ", g->start_s, g->end_s,
                          g->running);
                summary_put_text(w, g->waited_for);
        }
}
