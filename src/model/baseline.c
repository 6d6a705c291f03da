/* SPDX-License-Identifier: MIT */
#include "model/baseline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"
#include "model/summary.h"
#include "model/targets.h"
#include "model/units.h"
#include "util/macro.h"
#include "util/util.h"

size_t baseline_median_mad(const double *v, size_t n, double *scratch, double *ret_median,
                           double *ret_spread)
{
        size_t m = 0;
        double med;

        for (size_t i = 0; i < n; i++)
                if (isfinite(v[i]))
                        scratch[m++] = v[i];
        med = figure_median(scratch, m);
        for (size_t i = 0; i < m; i++)
                scratch[i] = fabs(scratch[i] - med);
        *ret_median = med;
        *ret_spread = BASELINE_MAD_SCALE * figure_median(scratch, m);
        return m;
}

void baseline_judge(double value, const double *window, size_t n, const struct baseline_rule *rule,
                    struct baseline_stat *ret)
{
        struct baseline_stat st = {.usual = NAN, .spread = NAN, .change = NAN};
        double scratch[BASELINE_WINDOW], d;

        st.n = baseline_median_mad(window, n, scratch, &st.usual, &st.spread);
        if (st.n && isfinite(value) && st.usual != 0)
                st.change = (value - st.usual) / fabs(st.usual);
        d = value - st.usual;
        if (isfinite(value) && st.n >= BASELINE_MIN_RUNS)
                st.verdict = BASELINE_NOISE;
        if (st.verdict == BASELINE_NOISE && fabs(d) >= rule->floor_abs &&
            fabs(d) > BASELINE_K * MAX(st.spread, rule->spread_floor) &&
            (st.usual == 0 || fabs(d) >= rule->min_rel * fabs(st.usual)))
                st.verdict = (rule->lower_worse ? d < 0 : d > 0) ? BASELINE_REGRESSION
                                                                 : BASELINE_IMPROVEMENT;
        *ret = st;
}

const char *baseline_verdict_name(int verdict)
{
        static const char *const names[] = {"unknown", "within noise", "regression", "improvement"};

        return (unsigned)verdict < ARRAY_SIZE(names) ? names[verdict] : "unknown";
}

void baseline_run_init(struct baseline_run *r)
{
        *r = (struct baseline_run){.mem_total_mb = NAN, .ncpu = -1, .jobs = -1};
        run_figures_init(&r->fig);
}

static void named_set(struct baseline_named *e, const char *name, const char *tool, double a,
                      double b)
{
        *e = (struct baseline_named){.a = a, .b = b};
        (void)copy_utf8_str(e->name, sizeof(e->name), name);
        (void)copy_utf8_str(e->tool, sizeof(e->tool), tool);
}

void baseline_add_target(struct baseline_run *r, const char *name, double duration_s,
                         double cache_ratio)
{
        if (r->ntargets < BASELINE_TARGETS_MAX)
                named_set(&r->targets[r->ntargets++], name, NULL, duration_s, cache_ratio);
}

void baseline_add_unit(struct baseline_run *r, const char *name, const char *tool, double peak_mb)
{
        if (r->nunits < BASELINE_UNITS_MAX)
                named_set(&r->units[r->nunits++], name, tool, peak_mb, NAN);
}

void baseline_add_step(struct baseline_run *r, const char *name, double duration_s, double mem_mb)
{
        size_t at = r->nsteps, min = 0;

        if (!isfinite(duration_s))
                duration_s = NAN;
        if (at == BASELINE_STEPS_MAX) {
                /* full: replace the fastest when this one is slower */
                for (size_t i = 1; i < at; i++)
                        if (!(r->steps[i].a >= r->steps[min].a))
                                min = i;
                if (!(duration_s > r->steps[min].a) && isfinite(r->steps[min].a))
                        return;
                at = min;
        } else
                r->nsteps++;
        named_set(&r->steps[at], name, NULL, duration_s, mem_mb);
}

long baseline_argv_jobs(char *const *argv)
{
        long jobs = -1;

        for (size_t i = 0; argv && argv[i]; i++) {
                const char *w = argv[i], *v = NULL;
                bool sep = strcmp(w, "--jobs") == 0 || strcmp(w, "-j") == 0; /* "-j 8" */
                uint64_t n;

                if (strncmp(w, "--jobs=", 7) == 0)
                        v = w + 7;
                else if (sep)
                        v = argv[i + 1];
                else if (strncmp(w, "-j", 2) == 0)
                        v = w + 2;
                if (!v || parse_u64_str(v, &n) < 0 || n == 0 || n > 1000000)
                        continue;
                jobs = (long)n;
                i += sep; /* its value taken */
        }
        return jobs;
}

enum fig { F_DUR, F_CPU, F_ANON, F_MEM, F_OOM, F_CC, F_TDUR, F_TCACHE, F_UNIT, F_SDUR, F_SMEM };

static const struct {
        const char *name;
        struct baseline_rule rule;
} figs[] = {
    [F_DUR] = {"duration_s", {false, BASELINE_MIN_REL, BASELINE_FLOOR_S, 0.5}},
    [F_CPU] = {"cpu_s", {false, BASELINE_MIN_REL, BASELINE_FLOOR_S, 0.5}},
    [F_ANON] = {"mem_anon_peak_mb", {false, BASELINE_MIN_REL, BASELINE_FLOOR_MB, 4.0}},
    [F_MEM] = {"mem_peak_mb", {false, BASELINE_MIN_REL, BASELINE_FLOOR_MB, 4.0}},
    [F_OOM] = {"oom_kills", {false, BASELINE_MIN_REL, 1.0, 0.3}},
    [F_CC] = {"cc_hit_ratio", {true, BASELINE_MIN_REL, 0.05, 0.01}},
    [F_TDUR] = {"target_duration_s", {false, BASELINE_MIN_REL, BASELINE_FLOOR_S, 0.5}},
    [F_TCACHE] = {"target_cache_ratio", {true, BASELINE_MIN_REL, 0.05, 0.01}},
    [F_UNIT] = {"unit_peak_mb", {false, BASELINE_MIN_REL, BASELINE_FLOOR_MB, 4.0}},
    [F_SDUR] = {"step_duration_s", {false, BASELINE_MIN_REL, BASELINE_FLOOR_S, 0.5}},
    [F_SMEM] = {"step_mem_peak_mb", {false, BASELINE_MIN_REL, BASELINE_FLOOR_MB, 4.0}},
};

/* The derivation's state: the window's values of one figure, and the
 * causes found so far. */
struct deriv {
        const struct baseline_run *cur, *win;
        size_t nwin;
        double vals[BASELINE_WINDOW];
        char host[BASELINE_CAUSE_MAX + 1], jobs[BASELINE_CAUSE_MAX + 1];
        char cache[BASELINE_CAUSE_MAX + 1], compiler[BASELINE_CAUSE_MAX + 1];
        char appeared[BASELINE_CAUSE_MAX + 1];
        struct baseline *b;
};

bool baseline_is_flag(int verdict)
{
        return verdict == BASELINE_REGRESSION || verdict == BASELINE_IMPROVEMENT;
}

static const struct baseline_named *find_named(const struct baseline_named *v, size_t n,
                                               const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].name, name) == 0)
                        return &v[i];
        return NULL;
}

/* Add finding fig of target (NULL: the run) with value, judged against the
 * d->vals[0..d->nwin). Returns the finding, or NULL (full, unknown value). */
static struct baseline_finding *add(struct deriv *d, enum fig fig, const char *target, double value)
{
        struct baseline *b = d->b;
        struct baseline_finding *f;

        if (!isfinite(value) || b->n == BASELINE_FINDINGS_MAX)
                return NULL;
        f = memset(&b->f[b->n], 0, sizeof(*f));
        baseline_judge(value, d->vals, d->nwin, &figs[fig].rule, &f->st);
        (void)copy_utf8_str(f->figure, sizeof(f->figure), figs[fig].name);
        (void)copy_utf8_str(f->target, sizeof(f->target), target);
        f->value = value;
        /* d->vals is most recent first */
        for (size_t i = 0; i < d->nwin; i++)
                f->hist[i] = d->vals[d->nwin - 1 - i];
        f->hist[d->nwin] = value;
        f->nhist = d->nwin + 1;
        b->n++;
        return f;
}

static void set_cause(struct baseline_finding *f, const char *c)
{
        if (f && baseline_is_flag(f->st.verdict) && !f->cause[0] && c && c[0])
                (void)copy_utf8_str(f->cause, sizeof(f->cause), c);
}

/* A run's own figure, fig F_DUR to F_CC. */
static double run_fig(const struct baseline_run *r, enum fig fig)
{
        const double v[] = {
            [F_DUR] = r->fig.duration_s,        [F_CPU] = r->fig.cpu_s,
            [F_ANON] = r->fig.mem_anon_peak_mb, [F_MEM] = r->fig.mem_peak_mb,
            [F_OOM] = r->fig.oom_kills,         [F_CC] = run_figures_cc_ratio(&r->fig),
        };

        return v[fig];
}

/* The window's usual host CPUs (0), host memory (1) or -j (2). */
static double usual_of(struct deriv *d, int which)
{
        double scratch[BASELINE_WINDOW], med, spread;

        for (size_t i = 0; i < d->nwin; i++) {
                long k = which == 0 ? d->win[i].ncpu : d->win[i].jobs;

                d->vals[i] = which == 1 ? d->win[i].mem_total_mb : k > 0 ? (double)k : NAN;
        }
        (void)baseline_median_mad(d->vals, d->nwin, scratch, &med, &spread);
        return med;
}

/* Host, memory and -j against the window's usual ones. */
static void context_causes(struct deriv *d)
{
        const struct baseline_run *c = d->cur;
        double u = usual_of(d, 0);

        if (c->ncpu > 0 && isfinite(u) && fabs((double)c->ncpu - u) >= 1)
                (void)snprintf(d->host, sizeof(d->host), "%ld CPUs, usually %.0f", c->ncpu, u);
        u = usual_of(d, 1);
        if (!d->host[0] && isfinite(c->mem_total_mb) && isfinite(u) &&
            fabs(c->mem_total_mb - u) > 0.1 * u) {
                char now[32], usual[32];

                fmt_size_mib(c->mem_total_mb, now, sizeof(now));
                fmt_size_mib(u, usual, sizeof(usual));
                (void)snprintf(d->host, sizeof(d->host), "host memory %s, usually %s", now, usual);
        }
        u = usual_of(d, 2);
        if (c->jobs > 0 && isfinite(u) && fabs((double)c->jobs - u) >= 1)
                (void)snprintf(d->jobs, sizeof(d->jobs), "-j %ld, usually -j %.0f", c->jobs, u);
}

/* A target or unit of cur that no run of the window had; a compiler
 * (a unit's tool) none of the window's units ran. */
static void appeared_causes(struct deriv *d)
{
        const struct baseline_run *c = d->cur;
        bool win_units = false;

        for (size_t i = 0; i < d->nwin; i++)
                win_units = win_units || d->win[i].nunits > 0;
        for (size_t t = 0; t < c->ntargets && !d->appeared[0]; t++) {
                bool seen = false;

                for (size_t i = 0; i < d->nwin && !seen; i++)
                        seen = find_named(d->win[i].targets, d->win[i].ntargets,
                                          c->targets[t].name) != NULL;
                if (!seen && d->nwin)
                        (void)snprintf(d->appeared, sizeof(d->appeared), "new target %s",
                                       c->targets[t].name);
        }
        for (size_t u = 0; u < c->nunits && win_units && !d->compiler[0]; u++) {
                bool seen = !c->units[u].tool[0];

                for (size_t i = 0; i < d->nwin && !seen; i++)
                        for (size_t j = 0; j < d->win[i].nunits && !seen; j++)
                                seen = strcmp(d->win[i].units[j].tool, c->units[u].tool) == 0;
                if (!seen)
                        (void)snprintf(d->compiler, sizeof(d->compiler), "new compiler %s",
                                       c->units[u].tool);
        }
}

static void run_figures(struct deriv *d)
{
        struct baseline_finding *f;

        for (enum fig g = F_DUR; g <= F_CC; g++) {
                for (size_t i = 0; i < d->nwin; i++)
                        d->vals[i] = run_fig(&d->win[i], g);
                f = add(d, g, NULL, run_fig(d->cur, g));
                if (f && g == F_CC && f->st.verdict == BASELINE_REGRESSION && !d->cache[0])
                        (void)snprintf(d->cache, sizeof(d->cache),
                                       "compiler-cache hits %.0f %%, usually %.0f %%",
                                       f->value * 100, f->st.usual * 100);
        }
}

/* kind 0 targets, 1 units, 2 steps: each named figure of cur against the
 * same name in the window (NAN where a run lacks it). */
static const struct baseline_named *list_of(const struct baseline_run *r, int kind, size_t *ret_n)
{
        *ret_n = kind == 0 ? r->ntargets : kind == 1 ? r->nunits : r->nsteps;
        return kind == 0 ? r->targets : kind == 1 ? r->units : r->steps;
}

static struct baseline_finding *named_figure(struct deriv *d, int kind, const char *name, bool b,
                                             enum fig g, double value)
{
        for (size_t i = 0; i < d->nwin; i++) {
                size_t n;
                const struct baseline_named *v = list_of(&d->win[i], kind, &n);
                const struct baseline_named *e = find_named(v, n, name);

                d->vals[i] = e ? (b ? e->b : e->a) : NAN;
        }
        return add(d, g, name, value);
}

static void target_figures(struct deriv *d)
{
        for (size_t t = 0; t < d->cur->ntargets; t++) {
                const struct baseline_named *e = &d->cur->targets[t];
                struct baseline_finding *c = named_figure(d, 0, e->name, true, F_TCACHE, e->b);
                char why[BASELINE_CAUSE_MAX + 1] = "";

                if (c && c->st.verdict == BASELINE_REGRESSION) {
                        (void)snprintf(why, sizeof(why),
                                       "layer cache of %s %.0f %%, usually %.0f %%", e->name,
                                       c->value * 100, c->st.usual * 100);
                        if (!d->cache[0])
                                memcpy(d->cache, why, sizeof(why));
                        if (e->tool[0]) {
                                char at[BASELINE_CAUSE_MAX + 1];

                                (void)snprintf(at, sizeof(at), "not cached from %s on", e->tool);
                                set_cause(c, at);
                        }
                }
                set_cause(c, d->host);
                set_cause(named_figure(d, 0, e->name, false, F_TDUR, e->a), why);
        }
}

static void unit_step_figures(struct deriv *d)
{
        const struct baseline_run *c = d->cur;

        for (size_t u = 0; u < c->nunits; u++)
                set_cause(named_figure(d, 1, c->units[u].name, false, F_UNIT, c->units[u].a),
                          d->compiler);
        for (size_t s = 0; s < c->nsteps; s++) {
                set_cause(named_figure(d, 2, c->steps[s].name, false, F_SDUR, c->steps[s].a),
                          d->host);
                set_cause(named_figure(d, 2, c->steps[s].name, true, F_SMEM, c->steps[s].b),
                          d->host);
        }
}

void baseline_derive(const char *job, const struct baseline_run *cur,
                     const struct baseline_run *win, size_t nwin, struct baseline *ret)
{
        struct deriv d = {.cur = cur, .win = win, .nwin = MIN(nwin, (size_t)BASELINE_WINDOW)};
        const char *causes[] = {d.cache, d.compiler, d.jobs, d.host, d.appeared};

        memset(ret, 0, sizeof(*ret));
        d.b = ret;
        (void)copy_utf8_str(ret->job, sizeof(ret->job), job);
        ret->runs = d.nwin;
        context_causes(&d);
        appeared_causes(&d);
        run_figures(&d);
        target_figures(&d);
        unit_step_figures(&d);
        /* the run's own figures: the first cause the data names */
        for (size_t i = 0; i < ret->n; i++)
                for (size_t k = 0; k < ARRAY_SIZE(causes) && !ret->f[i].target[0]; k++)
                        set_cause(&ret->f[i], causes[k]);
}

size_t baseline_flagged(const struct baseline *b)
{
        size_t n = 0;

        for (size_t i = 0; i < b->n; i++)
                n += baseline_is_flag(b->f[i].st.verdict);
        return n;
}

/* The first step of target name that was not from the layer cache, into
 * the last target added. */
static void first_miss(const struct targets *ts, const char *name, struct baseline_run *r)
{
        int t = ts ? targets_find(ts, name) : -1;

        for (uint32_t i = 0; t >= 0 && i < ts->nstepv; i++) {
                const struct step_fact *sf = &ts->stepv[i];

                if (sf->step && !sf->cached && sf->target == t) {
                        (void)copy_utf8_str(r->targets[r->ntargets - 1].tool,
                                            sizeof(r->targets[0].tool), sf->name);
                        return;
                }
        }
}

void baseline_run_of(const struct summary *s, const struct run_info *ri, const struct run_facts *f,
                     const struct targets *ts, const struct units *u, struct baseline_run *ret)
{
        const struct run_model m = {.run = ri, .summary = s, .targets = ts, .units = u, .facts = f};
        struct unit top[BASELINE_UNITS_MAX];
        size_t n;

        baseline_run_init(ret);
        run_figures_of(&m, &ret->fig);
        ret->ncpu = ri && ri->ncpu ? (long)ri->ncpu : -1;
        ret->mem_total_mb = s->mem_total_mb;
        ret->jobs = ri ? baseline_argv_jobs(ri->argv) : -1;
        for (size_t i = 0; f && i < f->n; i++) {
                const struct target_fact *t = &f->t[i];
                size_t before = ret->ntargets;

                baseline_add_target(ret, t->name, t->duration_s,
                                    t->steps_set ? figure_cached_ratio(t->steps, t->cached) : NAN);
                if (ret->ntargets > before)
                        first_miss(ts, t->name, ret);
        }
        n = u ? units_top(u, top, ARRAY_SIZE(top)) : 0;
        for (size_t i = 0; i < n; i++)
                baseline_add_unit(ret, top[i].name, top[i].tool, top[i].peak_mb);
        for (uint32_t i = 0; ts && i < ts->nstepv; i++) {
                const struct step_fact *sf = &ts->stepv[i];

                if (sf->step)
                        baseline_add_step(ret, sf->name, targets_step_duration(sf),
                                          sf->exec.set ? sf->exec.mem_peak_bytes / 1048576.0 : NAN);
        }
}
