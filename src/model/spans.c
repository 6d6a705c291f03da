/* SPDX-License-Identifier: MIT */
#include "model/spans.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/critpath.h"
#include "util/util.h"

/* The one rule of which spans exist and how many are kept. */
static int add(struct spans *S, struct span sp)
{
        if (!isfinite(sp.start_s) || !isfinite(sp.end_s) || sp.end_s < sp.start_s)
                return 0;
        if (S->n >= S->max) {
                S->dropped++;
                return 0;
        }
        if (array_grow(&S->v, &S->cap, S->n, sizeof(*S->v), 256) < 0)
                return -ENOMEM;
        S->v[S->n++] = sp;
        return 0;
}

int spans_add_target(struct spans *S, const struct target_fact *f)
{
        return add(S, (struct span){SPAN_TARGET, f->name, strlen(f->name), -1, f->start_s, f->end_s,
                                    .tf = f});
}

int spans_add_step(struct spans *S, const struct step_fact *f, const char *target)
{
        ssize_t parent = -1;

        target = target ? target : "";
        /* the targets come first; their names end in NUL */
        for (size_t i = 0; *target && parent < 0 && i < S->n && S->v[i].kind == SPAN_TARGET; i++)
                if (strcmp(S->v[i].name, target) == 0)
                        parent = (ssize_t)i;
        return add(S, (struct span){SPAN_STEP, f->name, strlen(f->name), parent, f->start_s,
                                    f->end_s, f->target >= 0 ? f->target + 1 : 0, target, .sf = f});
}

int spans_add_unit(struct spans *S, const struct unit *u)
{
        return add(S, (struct span){SPAN_UNIT, u->name, strlen(u->name), -1, u->first_s, u->last_s,
                                    .unit = u});
}

int spans_add_edge(struct spans *S, double start_s, double end_s, const char *out, size_t len)
{
        return add(S, (struct span){SPAN_EDGE, out, len, -1, start_s, end_s, 0, NULL, NULL, NULL,
                                    NULL, false});
}

static int slower_first(const void *x, const void *y)
{
        const struct ninja_edge *a = *(const struct ninja_edge *const *)x,
                                *b = *(const struct ninja_edge *const *)y;
        int64_t da = a->end_ms - a->start_ms, db = b->end_ms - b->start_ms;

        return da > db   ? -1
               : da < db ? 1
                         : (a->start_ms > b->start_ms) - (a->start_ms < b->start_ms);
}

/* The model's ninja edges (the slowest of the .ninja_log), slowest first,
 * so the cap keeps the slowest. */
static int add_edges(struct spans *S, const struct run_info *ri, const struct targets *ts)
{
        const struct ninja_edge **v;
        double off;
        int e = 0;

        if (targets_ninja_offset(ts, ri, &off) < 0)
                return 0;
        v = calloc(ts->nedgev, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (uint32_t i = 0; i < ts->nedgev; i++)
                v[i] = &ts->edgev[i];
        qsort(v, ts->nedgev, sizeof(*v), slower_first);
        for (uint32_t i = 0; i < ts->nedgev && e >= 0; i++)
                e = spans_add_edge(S, off + (double)v[i]->start_ms / 1000.0,
                                   off + (double)v[i]->end_ms / 1000.0, v[i]->output,
                                   strlen(v[i]->output));
        free(v);
        return e;
}

void spans_mark_path(struct spans *S, const struct run_info *ri, const struct targets *ts)
{
        const struct critpath *p = ts ? ts->path : NULL;
        double off = 0;

        if (!p || (p->jobs && targets_ninja_offset(ts, ri, &off) < 0))
                return;
        for (size_t i = 0; i < S->n; i++)
                for (size_t k = 0; k < p->n && !S->v[i].critical; k++)
                        S->v[i].critical =
                            S->v[i].kind == (p->jobs ? SPAN_EDGE : SPAN_STEP) &&
                            fabs(S->v[i].start_s - off - p->step[k].start_s) < 2e-3 &&
                            strlen(p->step[k].name) == S->v[i].len &&
                            memcmp(p->step[k].name, S->v[i].name, S->v[i].len) == 0;
}

int spans_derive(struct spans *S, const struct run_info *ri, const struct run_facts *facts,
                 const struct targets *ts)
{
        int e = 0;

        for (size_t i = 0; facts && i < facts->n && e >= 0; i++)
                e = spans_add_target(S, &facts->t[i]);
        for (uint32_t i = 0; ts && i < ts->nstepv && e >= 0; i++) {
                const struct step_fact *f = &ts->stepv[i];
                e = spans_add_step(
                    S, f,
                    f->target >= 0 && (size_t)f->target < ts->n ? ts->t[f->target].name : NULL);
        }
        if (e >= 0 && ts)
                e = add_edges(S, ri, ts);
        if (e >= 0)
                spans_mark_path(S, ri, ts);
        return e;
}

void spans_release(struct spans *S)
{
        if (S) {
                free(S->v);
                *S = (struct spans){.max = S->max};
        }
}
