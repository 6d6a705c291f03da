/* SPDX-License-Identifier: MIT */
#include "model/critpath.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/units.h"
#include "util/macro.h"
#include "util/util.h"

#define PHONY_DEPTH 8 /* phony edges followed through, nested */
#define RULES_MAX 64  /* distinct rules totalled; edges of more are left out */

struct node {
        const char *name, *rule;
        double start_s, end_s, mem_mb;
};

/* A rule's name less CMake's "__TARGET_CONFIG" ("CXX_COMPILER__app_Release"):
 * one rule for all targets. */
static size_t rule_len(const char *rule)
{
        const char *u = strstr(rule, "__");

        return u && u > rule ? (size_t)(u - rule) : strlen(rule);
}

/* The chain back from the node that ended last through prev(u, i) (the
 * input i waited for, -1 none), into ret from t0 (the start of all). */
static int chain(const struct node *v, size_t n, long (*prev)(void *, size_t), void *u, double t0,
                 struct critpath *ret)
{
        _cleanup_free_ size_t *c = calloc(n, sizeof(*c));
        size_t nc = 0;
        long cur = -1;

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (cur < 0 || v[i].end_s > v[cur].end_s)
                        cur = (long)i;
        ret->wall_s = v[cur].end_s - t0;
        /* a chain never holds more steps than ran */
        for (long p; cur >= 0 && nc < n; cur = p == cur ? -1 : p) {
                c[nc++] = (size_t)cur;
                p = prev(u, (size_t)cur);
        }
        ret->dropped = nc > CRITPATH_MAX ? nc - CRITPATH_MAX : 0;
        for (size_t k = nc; k-- > 0;) {
                const struct node *e = &v[c[k]];
                double from = k + 1 < nc ? v[c[k + 1]].end_s : t0;
                struct critpath_step *s;

                ret->length_s += e->end_s - e->start_s;
                if (k >= CRITPATH_MAX)
                        continue;
                s = &ret->step[ret->n++];
                copy_utf8_str(s->name, sizeof(s->name), e->name);
                copy_utf8(s->rule, sizeof(s->rule), e->rule, rule_len(e->rule));
                s->start_s = e->start_s;
                s->end_s = e->end_s;
                s->slack_s = MAX(e->start_s - from, 0.0);
                s->mem_mb = e->mem_mb;
        }
        return 0;
}

/* ---- ninja ---- */

struct nwalk {
        critpath_inputs_fn inputs;
        const void *g;
        const struct ninja_edge *ev, **by_out; /* ev by output */
        size_t n;
        long best; /* the input edge that ended last; -1 none */
        int depth;
};

static int cmp_out(const void *a, const void *b)
{
        return strcmp((*(const struct ninja_edge *const *)a)->output,
                      (*(const struct ninja_edge *const *)b)->output);
}

static int cmp_key(const void *key, const void *e)
{
        return strcmp(key, (*(const struct ninja_edge *const *)e)->output);
}

static long logged(const struct nwalk *w, const char *path)
{
        const struct ninja_edge *const *hit =
            bsearch(path, w->by_out, w->n, sizeof(*w->by_out), cmp_key);

        return hit ? *hit - w->ev : -1;
}

static void on_input(void *userdata, const char *input)
{
        struct nwalk *w = userdata;
        long e = logged(w, input);
        const char *rule = NULL;

        if (e >= 0) {
                if (w->best < 0 || w->ev[e].end_ms > w->ev[w->best].end_ms)
                        w->best = e;
                return;
        }
        /* not built in this run: a phony stands for its inputs */
        if (w->depth < PHONY_DEPTH && w->inputs(w->g, input, &rule, NULL, NULL) >= 0 && rule &&
            strcmp(rule, "phony") == 0) {
                w->depth++;
                (void)w->inputs(w->g, input, &rule, on_input, w);
                w->depth--;
        }
}

static long ninja_prev(void *u, size_t i)
{
        struct nwalk *w = u;
        const char *rule;

        w->best = -1;
        if (w->g)
                (void)w->inputs(w->g, w->ev[i].output, &rule, on_input, w);
        return w->best;
}

static const char *rule_of(const struct nwalk *w, const char *out)
{
        const char *rule = NULL, *dot = strrchr(out, '.');

        if (w->g && w->inputs(w->g, out, &rule, NULL, NULL) >= 0 && rule)
                return rule;
        return dot && !strchr(dot, '/') ? dot : "";
}

/* Keep x in the top CRITPATH_TOP of v[*n] by weighted_s. */
static void top_add(struct critpath_weight *v, size_t *n, const char *name, double w, double s)
{
        size_t at = *n;

        while (at > 0 && w > v[at - 1].weighted_s)
                at--;
        if (at >= CRITPATH_TOP)
                return;
        memmove(&v[at + 1], &v[at], (MIN(*n, (size_t)CRITPATH_TOP - 1) - at) * sizeof(*v));
        v[at] = (struct critpath_weight){.weighted_s = w, .s = s};
        copy_utf8_str(v[at].name, sizeof(v[at].name), name);
        *n = MIN(*n + 1, (size_t)CRITPATH_TOP);
}

struct event {
        int64_t t;
        size_t i;
        int start;
};

static int cmp_event(const void *a, const void *b)
{
        const struct event *x = a, *y = b;

        return x->t != y->t ? (x->t > y->t) - (x->t < y->t) : x->start - y->start;
}

/* The edge (on the path if one is) running longest in [a, b). */
static void name_gap(struct critpath *p, const struct ninja_edge *ev, size_t n,
                     struct critpath_gap *gp)
{
        double best = 0;

        for (size_t i = 0; i < p->n; i++) {
                double o = MIN(p->step[i].end_s, gp->end_s) - MAX(p->step[i].start_s, gp->start_s);

                if (o > best) {
                        best = o;
                        copy_utf8_str(gp->waited_for, sizeof(gp->waited_for), p->step[i].name);
                }
        }
        for (size_t i = 0; i < n && best <= 0; i++) {
                double o =
                    MIN(ev[i].end_ms / 1e3, gp->end_s) - MAX(ev[i].start_ms / 1e3, gp->start_s);

                if (o > 0 && o >= best) {
                        best = o;
                        copy_utf8_str(gp->waited_for, sizeof(gp->waited_for), ev[i].output);
                }
        }
}

static void gap_add(struct critpath *p, double a, double b, double area)
{
        size_t at = p->ngap;

        p->under_s += b - a;
        if (b - a < CRITPATH_GAP_MIN_S)
                return;
        while (at > 0 && b - a > p->gap[at - 1].end_s - p->gap[at - 1].start_s)
                at--;
        if (at >= CRITPATH_TOP)
                return;
        memmove(&p->gap[at + 1], &p->gap[at],
                (MIN(p->ngap, (size_t)CRITPATH_TOP - 1) - at) * sizeof(p->gap[0]));
        p->gap[at] = (struct critpath_gap){
            .start_s = a, .end_s = b, .running = round(100 * area / (b - a)) / 100};
        p->ngap = MIN(p->ngap + 1, (size_t)CRITPATH_TOP);
}

/* Weighted time (each moment divided among the edges running then: W(t)
 * summed as the edges start and end) and the stretches under -j. */
static int weigh(const struct nwalk *wk, const struct ninja_edge *ev, size_t n, struct critpath *p)
{
        _cleanup_free_ struct event *e = calloc(2 * n, sizeof(*e));
        _cleanup_free_ double *w0 = calloc(n, sizeof(*w0));
        struct critpath_weight rules[RULES_MAX];
        size_t nrules = 0, k = 0;
        double W = 0, under_from = NAN, area = 0;

        if (!e || !w0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                e[2 * i] = (struct event){ev[i].start_ms, i, 1};
                e[2 * i + 1] = (struct event){ev[i].end_ms, i, 0};
        }
        qsort(e, 2 * n, sizeof(*e), cmp_event);
        for (size_t j = 0; j < 2 * n; j++) {
                double t = e[j].t / 1e3, dt = j ? t - e[j - 1].t / 1e3 : 0;
                const struct ninja_edge *x = &ev[e[j].i];
                const char *rule;
                size_t r;

                W += k ? dt / (double)k : 0;
                area += (double)k * dt;
                if (e[j].start) {
                        w0[e[j].i] = W;
                        k++;
                } else {
                        top_add(p->weight, &p->nweight, x->output, W - w0[e[j].i],
                                (x->end_ms - x->start_ms) / 1e3);
                        rule = rule_of(wk, x->output);
                        for (r = 0; r < nrules && (strlen(rules[r].name) != rule_len(rule) ||
                                                   memcmp(rules[r].name, rule, rule_len(rule)));
                             r++)
                                ;
                        if (r == nrules && nrules < RULES_MAX)
                                rules[nrules++] = (struct critpath_weight){0};
                        if (r < nrules && !rules[r].name[0])
                                copy_utf8(rules[r].name, sizeof(rules[r].name), rule,
                                          rule_len(rule));
                        if (r < nrules) {
                                rules[r].weighted_s += W - w0[e[j].i];
                                rules[r].s += (x->end_ms - x->start_ms) / 1e3;
                        }
                        k -= k > 0;
                }
                /* a stretch under -j: from when fewer ran to when enough did */
                if (j + 1 < 2 * n && e[j + 1].t == e[j].t)
                        continue;
                if (k < p->jobs && j + 1 < 2 * n && isnan(under_from))
                        under_from = t, area = 0;
                else if ((k >= p->jobs || j + 1 == 2 * n) && !isnan(under_from)) {
                        gap_add(p, under_from, t, area);
                        under_from = NAN;
                }
        }
        for (size_t r = 0; r < nrules; r++)
                top_add(p->rule, &p->nrule, rules[r].name, rules[r].weighted_s, rules[r].s);
        for (size_t i = 0; i < p->ngap; i++)
                name_gap(p, ev, n, &p->gap[i]);
        return 0;
}

int critpath_ninja(critpath_inputs_fn inputs, const void *g, const struct ninja_edge *ev, size_t n,
                   unsigned jobs, struct critpath *ret)
{
        _cleanup_free_ struct node *v = calloc(n ? n : 1, sizeof(*v));
        _cleanup_free_ const struct ninja_edge **by_out = calloc(n ? n : 1, sizeof(*by_out));
        struct nwalk w = {.inputs = inputs, .g = g, .ev = ev, .n = n};
        int r;

        if (n == 0)
                return -ENODATA;
        if (!v || !by_out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                by_out[i] = &ev[i];
                v[i] = (struct node){ev[i].output, rule_of(&w, ev[i].output), ev[i].start_ms / 1e3,
                                     ev[i].end_ms / 1e3, NAN};
                if (!g)
                        v[i].rule = "";
        }
        qsort(by_out, n, sizeof(*by_out), cmp_out);
        w.by_out = by_out;
        *ret = (struct critpath){.jobs = jobs};
        r = chain(v, n, ninja_prev, &w, 0, ret);
        return r < 0 ? r : weigh(&w, ev, n, ret);
}

/* ---- BuildKit ---- */

/* A timed step of the target: "[TARGET STAGE k/n] REST" (TARGET, STAGE
 * optional; st "" for a single stage's "[k/n]"); k 0: not a step. */
struct bstep {
        const char *st, *rest;
        size_t len;
        long k, n;
        double end_s;
};

static void stage_of(const char *name, struct bstep *b)
{
        const char *sl = strchr(name, '/'), *close = strchr(name, ']'), *d, *st;
        char *e;

        if (name[0] != '[' || !sl || !close || sl > close)
                return;
        for (d = sl; d > name + 1 && d[-1] != ' ' && d[-1] != '['; d--)
                ;
        for (st = d - 1; d[-1] == ' ' && st > name + 1 && st[-1] != ' ' && st[-1] != '[';)
                st--;
        b->k = strtol(d, &e, 10);
        b->n = e == sl && b->k > 0 ? strtol(sl + 1, NULL, 10) : (b->k = 0);
        b->st = d[-1] == ' ' ? st : d;
        b->len = d[-1] == ' ' ? (size_t)(d - 1 - st) : 0;
        b->rest = close[1] ? close + 2 : close + 1;
}

struct bwalk {
        const struct bstep *v;
        size_t n;
};

static bool same_stage(const struct bstep *a, const char *st, size_t len)
{
        return a->k > 0 && a->len == len && memcmp(a->st, st, len) == 0;
}

static long bk_prev(void *u, size_t i)
{
        const struct bwalk *w = u;
        const struct bstep *x = &w->v[i];
        long best = -1;

        for (size_t j = 0; x->k > 0 && j < w->n; j++) {
                const struct bstep *y = &w->v[j];
                const char *from;
                size_t l;

                /* step k-1 of its stage; for a first step that is no FROM
                 * ("FROM stage" is no vertex), the stage that ended last */
                bool input = same_stage(y, x->st, x->len)
                                 ? y->k == x->k - 1
                                 : x->k == 1 && strncmp(x->rest, "FROM ", 5) && y->k == y->n &&
                                       y->end_s <= x->end_s;

                /* --from=X (COPY, ADD) or --mount=...from=X (RUN): X's last
                 * step; X a number: "stage-X" */
                for (from = x->rest; y->k > 0 && y->k == y->n && (from = strstr(from, "from="));
                     from += 5 + l) {
                        char num[32];
                        int m;

                        l = strcspn(from + 5, " ,");
                        m = l > 0 && strspn(from + 5, "0123456789") == l
                                ? snprintf(num, sizeof(num), "stage-%.*s", (int)MIN(l, (size_t)20),
                                           from + 5)
                                : 0;
                        input |= m > 0 ? same_stage(y, num, (size_t)m) : same_stage(y, from + 5, l);
                }
                if (input && (best < 0 || y->end_s > w->v[best].end_s))
                        best = (long)j; /* the input that ended last */
        }
        return best;
}

static int bk_target(const struct targets *ts, int t, struct critpath *ret)
{
        _cleanup_free_ struct bstep *v = calloc(ts->nstepv + 1, sizeof(*v));
        _cleanup_free_ struct node *nv = calloc(ts->nstepv + 1, sizeof(*nv));
        struct bwalk w = {.v = v};
        double t0 = INFINITY;

        if (!v || !nv)
                return -ENOMEM;
        for (uint32_t i = 0; i < ts->nstepv; i++) {
                const struct step_fact *f = &ts->stepv[i];

                if (f->step && (ts->n < 2 || f->target == t) && isfinite(f->start_s) &&
                    isfinite(f->end_s) && f->end_s >= f->start_s) {
                        nv[w.n] =
                            (struct node){f->name, "", f->start_s, f->end_s,
                                          f->exec.set ? f->exec.mem_peak_bytes / 1048576.0 : NAN};
                        v[w.n] = (struct bstep){.end_s = f->end_s};
                        stage_of(f->name, &v[w.n++]);
                        t0 = MIN(t0, f->start_s);
                }
        }
        if (w.n == 0)
                return -ENODATA;
        *ret = (struct critpath){0};
        if (t >= 0 && (size_t)t < ts->n && ts->n > 1)
                copy_utf8_str(ret->target, sizeof(ret->target), ts->t[t].name);
        return chain(nv, w.n, bk_prev, &w, t0, ret);
}

int critpath_buildkit(const struct targets *ts, struct critpath *ret)
{
        struct critpath c;
        double end = -INFINITY;
        int r = -ENODATA;

        for (size_t t = 0; t < MAX(ts->n, (size_t)1); t++) {
                int e = bk_target(ts, (int)t, &c);

                if (e == -ENOMEM)
                        return e;
                if (e >= 0 && c.n && c.step[c.n - 1].end_s > end) {
                        end = c.step[c.n - 1].end_s;
                        *ret = c;
                        r = 0;
                }
        }
        return r;
}

/* ---- memory, -j ---- */

void critpath_units(struct critpath *p, const struct units *u, double offset_s)
{
        size_t nu = 0;
        const struct unit *rows = units_rows(u, &nu);

        for (size_t i = 0; i < p->n; i++) {
                struct critpath_step *s = &p->step[i];
                const char *base = strrchr(s->name, '/') ? strrchr(s->name, '/') + 1 : s->name;
                size_t bl = strlen(base);

                /* a.cc.o, src_a.c.o, app: the unit a.cc, a.c, app */
                if (bl > 2 && strcmp(base + bl - 2, ".o") == 0)
                        bl -= 2;
                for (size_t j = 0; j < nu; j++) {
                        size_t l = strlen(rows[j].name);

                        if (l && l <= bl && memcmp(base + bl - l, rows[j].name, l) == 0 &&
                            rows[j].first_s < s->end_s + offset_s + 1 &&
                            rows[j].last_s > s->start_s + offset_s - 1 &&
                            !(rows[j].peak_mb <= s->mem_mb))
                                s->mem_mb = rows[j].peak_mb;
                }
        }
}

unsigned critpath_jobs(char *const *argv, unsigned ncpu)
{
        for (size_t i = 0; argv && argv[i]; i++) {
                const char *a = argv[i], *v = NULL;
                char *e;
                unsigned long j;

                if (strcmp(a, "-j") == 0 || strcmp(a, "--parallel") == 0)
                        v = argv[i + 1];
                else if (strncmp(a, "-j", 2) == 0)
                        v = a + 2;
                else if (strncmp(a, "--parallel=", 11) == 0)
                        v = a + 11;
                /* 0: no digits; ULONG_MAX on ERANGE: out of range */
                if (v && (j = strtoul(v, &e, 10)) > 0 && !*e && j < 65536)
                        return (unsigned)j;
        }
        /* ninja's own default */
        return ncpu <= 1 ? 2 : ncpu == 2 ? 3 : ncpu + 2;
}
