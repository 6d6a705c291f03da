/* SPDX-License-Identifier: MIT */
/* The summary's critical path (model/critpath.h): its reading, one line,
 * and its section, the chain in order with its times (issue 38). */
#include <math.h>

#include "model/critpath.h"
#include "render/summary-int.h"

static void put_s(struct dwriter *w, const char *lead, double s)
{
        dw_puts(w, lead);
        summary_put_duration(w, s);
}

/* "the critical path, 3 steps of 43.2s, set the 45.0s wall: it ends at
 * app (18.0s); 20.0s under -j 3" */
void summary_path_reading(const struct critpath *p, struct dwriter *w)
{
        const struct critpath_step *last = &p->step[p->n - 1];

        dw_printf(w, "the critical path, %zu %s", p->n + p->dropped, p->jobs ? "edges" : "steps");
        if (p->target[0]) {
                dw_puts(w, " of target ");
                summary_put_text(w, p->target);
        }
        put_s(w, " and ", p->length_s);
        put_s(w, ", set the ", p->wall_s);
        dw_puts(w, " wall: it ends at ");
        summary_put_text(w, last->name);
        put_s(w, " (", last->end_s - last->start_s);
        dw_puts(w, ")");
        if (p->ngap) {
                dw_printf(w, "; the longest stretch under -j %u, ", p->jobs);
                summary_put_duration(w, p->gap[0].end_s - p->gap[0].start_s);
                dw_puts(w, ", waited for ");
                summary_put_text(w, p->gap[0].waited_for);
        }
}

static void put_weights(struct dwriter *w, const char *lead, const struct critpath_weight *v,
                        size_t n)
{
        for (size_t i = 0; i < n; i++) {
                dw_puts(w, i ? ", " : lead);
                summary_put_text(w, v[i].name);
                put_s(w, " ", v[i].weighted_s);
                put_s(w, " (of ", v[i].s);
                dw_puts(w, ")");
        }
}

void summary_path_text(const struct critpath *p, struct dwriter *w)
{
        dw_puts(w, "\n\ncritical path\n");
        if (!p) {
                dw_puts(w, "  none: make gives no build graph; see the parallelism reading");
                return;
        }
        dw_printf(w, "  %zu %s", p->n + p->dropped, p->jobs ? "edges" : "steps");
        put_s(w, ", ", p->length_s);
        put_s(w, " of the ", p->wall_s);
        dw_puts(w, " wall");
        if (p->target[0]) {
                dw_puts(w, ", target ");
                summary_put_text(w, p->target);
        }
        if (p->dropped)
                dw_printf(w, " (the first %zu left out)", p->dropped);
        dw_puts(w, "\n      start        end      slack     memory  name\n");
        for (size_t i = 0; i < p->n; i++) {
                const struct critpath_step *s = &p->step[i];

                dw_printf(w, "  %9.3f  %9.3f  %9.3f  ", s->start_s, s->end_s, s->slack_s);
                if (isfinite(s->mem_mb))
                        dw_printf(w, "%5.0f MiB  ", s->mem_mb);
                else
                        dw_puts(w, "        -  ");
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
        if (p->jobs) {
                dw_printf(w, "\n  under -j %u: ", p->jobs);
                summary_put_duration(w, p->under_s);
        }
        for (size_t i = 0; i < p->ngap; i++) {
                const struct critpath_gap *g = &p->gap[i];

                dw_printf(w, "\n    %.3f-%.3f, %.1f running, waiting for ", g->start_s, g->end_s,
                          g->running);
                summary_put_text(w, g->waited_for);
        }
}
