/* SPDX-License-Identifier: MIT */
#include "model/jobs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/summary.h"
#include "model/units.h"
#include "util/macro.h"
#include "util/util.h"

struct ev {
        double t, mb;
        int d; /* +1 start, -1 end */
};

static int cmp_ev(const void *a, const void *b)
{
        const struct ev *x = a, *y = b;

        if (x->t != y->t)
                return x->t < y->t ? -1 : 1;
        return y->d - x->d; /* starts first: units seen at one scan overlap */
}

/* The most units alive at once (first to last scan) and their peaks
 * summed then: what the machine held at the busiest moment (ccache hits
 * left out unless hits). */
static int concurrent(const struct unit *rows, size_t n, bool hits, size_t *ret_units,
                      double *ret_mb)
{
        _cleanup_free_ struct ev *e = malloc(MAX(2 * n, (size_t)1) * sizeof(*e));
        size_t k = 0, alive = 0, best = 0;
        double mb = 0, best_mb = 0;

        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(rows[i].peak_mb) || rows[i].peak_mb <= 0 ||
                    !isfinite(rows[i].first_s) || !isfinite(rows[i].last_s) ||
                    (!hits && rows[i].cache == UNITS_CACHE_HIT))
                        continue;
                e[k++] = (struct ev){rows[i].first_s, rows[i].peak_mb, 1};
                e[k++] = (struct ev){rows[i].last_s, rows[i].peak_mb, -1};
        }
        qsort(e, k, sizeof(*e), cmp_ev);
        for (size_t i = 0; i < k; i++) {
                alive = e[i].d > 0 ? alive + 1 : alive - 1;
                mb += e[i].d * e[i].mb;
                if (e[i].d > 0 && (alive > best || (alive == best && mb > best_mb))) {
                        best = alive;
                        best_mb = mb;
                }
        }
        *ret_units = best;
        *ret_mb = best_mb;
        return 0;
}

size_t jobs_in_flight(const struct units *u)
{
        size_t n, most = 0;
        const struct unit *rows = units_rows(u, &n);
        double mb;

        return concurrent(rows, n, true, &most, &mb) < 0 ? 0 : most;
}

static int p95_of(const struct unit *rows, size_t n, size_t *ret_n, double *ret_mb)
{
        _cleanup_free_ double *v = malloc(MAX(n, (size_t)1) * sizeof(*v));
        size_t k = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (isfinite(rows[i].peak_mb) && rows[i].peak_mb > 0 &&
                    rows[i].cache != UNITS_CACHE_HIT) /* a hit compiled nothing */
                        v[k++] = rows[i].peak_mb;
        if (k < UNITS_JOBS_MIN)
                return -ENODATA;
        qsort(v, k, sizeof(*v), cmp_double);
        *ret_n = k;
        *ret_mb = v[(size_t)ceil(0.95 * (double)k) - 1]; /* nearest rank, 1-based */
        return 0;
}

static long fit(double mem_mb, double per_mb)
{
        double j = floor(mem_mb / per_mb);

        return j > 1e6 ? 1000000 : (long)j;
}

int jobs_read(const struct units *u, double mem_total_mb, unsigned ncpu, size_t peak_in_flight,
              struct jobs_reading *ret)
{
        struct jobs_reading j = {
            .mem_total_mb = mem_total_mb, .ncpu = ncpu, .peak_in_flight = peak_in_flight};
        const struct unit *rows;
        size_t n;
        int r;

        if (!u || !isfinite(mem_total_mb) || mem_total_mb <= 0)
                return -ENODATA;
        rows = units_rows(u, &n);
        r = p95_of(rows, n, &j.units, &j.p95_mb);
        if (r < 0)
                return r;
        r = concurrent(rows, n, false, &j.conc_units, &j.conc_mb); /* hits compiled nothing */
        if (r < 0)
                return r;
        j.mem_jobs = fit(mem_total_mb, j.p95_mb);
        if (j.conc_units > 0 && j.conc_mb > 0) {
                j.mem_jobs_conc = fit(mem_total_mb, j.conc_mb / (double)j.conc_units);
                j.mem_jobs = MIN(j.mem_jobs, j.mem_jobs_conc);
        }
        j.cpu_limit = ncpu > 0 && (long)ncpu <= j.mem_jobs;
        j.jobs = MAX(j.cpu_limit ? (long)ncpu : j.mem_jobs, 1L);
        *ret = j;
        return 0;
}

int jobs_render(const struct jobs_reading *j, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        char mem[32];

        fmt_size_mib(j->mem_total_mb, mem, sizeof(mem));
        /* how much more memory would allow changes nothing: not said */
        if (j->cpu_limit)
                dw_printf(&w, "the %u CPUs are the limit: -j %ld", j->ncpu, j->jobs);
        else if (j->ncpu)
                dw_printf(&w, "memory is the limit: %s allows -j %ld of the %u CPUs", mem, j->jobs,
                          j->ncpu);
        else
                dw_printf(&w, "memory allows -j %ld in %s, the CPU count unknown", j->jobs, mem);
        fmt_size_mib(j->p95_mb, mem, sizeof(mem));
        dw_printf(&w, " (the 95th-percentile unit needs %s", mem);
        fmt_size_mib(j->conc_mb, mem, sizeof(mem));
        if (j->conc_units > 0)
                dw_printf(&w, "; at the busiest, %zu unit%s held %s together", j->conc_units,
                          j->conc_units == 1 ? "" : "s", mem);
        dw_printf(&w, "); this run peaked at %zu in flight", j->peak_in_flight);
        if (!j->cpu_limit) /* the next step: the plan (issue 37) */
                dw_puts(&w, "; `buildtel plan` pools the heavy units so more run");
        return w.err;
}

int par_read(const struct summary *s, unsigned ncpu, struct par_reading *ret)
{
        const struct summary_par *p = &s->par;
        struct par_reading r = {.ncpu = ncpu};

        if (!p->seen || ncpu < 2)
                return -ENODATA;
        for (size_t k = 1; k <= SUMMARY_PAR_JOBS; k++) {
                r.busy_s += p->by_jobs_s[k];
                if (k < ncpu)
                        r.under_s += p->by_jobs_s[k];
        }
        r.alone_s = p->by_jobs_s[1];
        if (!(r.busy_s > 0))
                return -ENODATA;
        r.worth = r.under_s >= PAR_MIN_S && r.under_s >= PAR_MIN_FRACTION * r.busy_s;
        for (size_t i = 0; i < p->nalone; i++) {
                size_t at = r.nalone;

                while (at > 0 && p->alone[i].s > r.alone[at - 1]->s)
                        at--;
                if (at >= PAR_ALONE_SHOWN)
                        continue;
                memmove(&r.alone[at + 1], &r.alone[at],
                        (MIN(r.nalone, (size_t)PAR_ALONE_SHOWN - 1) - at) * sizeof(r.alone[0]));
                r.alone[at] = &p->alone[i];
                r.nalone = MIN(r.nalone + 1, (size_t)PAR_ALONE_SHOWN);
        }
        *ret = r;
        return 0;
}

static void put_dur(struct dwriter *w, double s)
{
        char b[FMT_DURATION_LEN];

        dw_puts(w, fmt_duration(s, FMT_DURATION_EXACT, b));
}

int par_render(const struct par_reading *p, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);

        dw_printf(&w, "fewer jobs than the %u CPUs for ", p->ncpu);
        put_dur(&w, p->under_s);
        dw_puts(&w, " of ");
        put_dur(&w, p->busy_s);
        dw_printf(&w, " with work in flight (%.0f %%)", 100.0 * p->under_s / p->busy_s);
        if (p->alone_s > 0) {
                dw_puts(&w, "; one job alone for ");
                put_dur(&w, p->alone_s);
        }
        for (size_t i = 0; i < p->nalone; i++) {
                dw_puts(&w, i ? ", " : ": ");
                dw_puts(&w, p->alone[i]->name);
                dw_puts(&w, " (");
                put_dur(&w, p->alone[i]->s);
                dw_puts(&w, " from +");
                put_dur(&w, p->alone[i]->first_s);
                dw_puts(&w, ")");
        }
        return w.err;
}
