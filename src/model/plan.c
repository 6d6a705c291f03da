/* SPDX-License-Identifier: MIT */
#include "model/plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ledger.h"
#include "util/macro.h"

double plan_headroom_mb(double memory_mb)
{
        return MAX(64.0, memory_mb / 16);
}

static double finite_or(double v, double d)
{
        return isfinite(v) && v >= 0 ? v : d;
}

static int by_start(const void *a, const void *b)
{
        const struct ledger_unit *x = *(const struct ledger_unit *const *)a;
        const struct ledger_unit *y = *(const struct ledger_unit *const *)b;
        double sx = finite_or(x->start_s, 0), sy = finite_or(y->start_s, 0);

        return (sx > sy) - (sx < sy);
}

/* The units in their usual order on j slots, each the next free one: the
 * most memory at once (each unit at its peak all its life) and the end. */
static void schedule(const struct ledger_unit *const *v, size_t n, unsigned j, struct plan_step *st)
{
        double end[PLAN_J_MAX] = {0}, mb[PLAN_J_MAX] = {0};

        st->sched_mb = st->wall_s = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned k = 0;
                double now, at_once = 0;

                for (unsigned s = 1; s < j; s++)
                        if (end[s] < end[k])
                                k = s;
                now = end[k];
                end[k] = now + finite_or(v[i]->wall_s, 0);
                mb[k] = finite_or(v[i]->peak_mb, 0);
                for (unsigned s = 0; s < j; s++)
                        if (s == k || end[s] > now)
                                at_once += mb[s];
                st->sched_mb = MAX(st->sched_mb, at_once);
                st->wall_s = MAX(st->wall_s, end[k]);
        }
}

int plan_make(struct ledger *l, double memory_mb, unsigned cpus, double headroom_mb,
              struct plan *ret)
{
        size_t n = ledger_count(l);
        const struct ledger_unit **v;
        struct plan p = {.memory_mb = memory_mb, .headroom_mb = headroom_mb, .units = n};
        double budget = memory_mb - headroom_mb, share, worst = 0;

        if (n == 0)
                return -ENODATA;
        if (!(v = calloc(n, sizeof(*v))))
                return -ENOMEM;
        p.cpus = cpus = MIN(MAX(cpus, 1u), PLAN_J_MAX);
        for (size_t i = 0; i < n; i++)
                v[i] = ledger_at(l, i);
        /* worst cases from the heaviest down; the schedule in usual order */
        for (unsigned j = 1; j <= cpus; j++) {
                struct plan_step *st = &p.steps[p.nsteps++];

                worst += j <= n ? finite_or(v[j - 1]->peak_mb, 0) : 0;
                st->j = j;
                st->worst_mb = worst;
                st->fits = worst <= budget;
                if (st->fits)
                        p.j_fit = j;
        }
        qsort(v, n, sizeof(*v), by_start);
        for (size_t i = 0; i < p.nsteps; i++)
                schedule(v, n, p.steps[i].j, &p.steps[i]);
        free(v);

        /* heavy: above its share of the memory at every CPU */
        share = budget / cpus;
        while (p.nheavy < n && finite_or(ledger_at(l, p.nheavy)->peak_mb, 0) > share)
                p.nheavy++;
        p.light_mb = p.nheavy < n ? finite_or(ledger_at(l, p.nheavy)->peak_mb, 0) : 0;
        p.j_pooled = p.j_fit;
        if (p.nheavy == n && p.j_fit < cpus) /* all heavy: the pool is the -j that fits */
                p.pool_depth = p.j_fit;
        if (p.j_fit < cpus && p.nheavy > 0 && p.nheavy < n) { /* a pool needs units outside it */
                /* the deepest pool whose heavy units beside light ones fit at j */
                for (unsigned j = cpus; j > p.j_fit && !p.pool_depth; j--) {
                        double heavy = 0;

                        for (unsigned d = 1; d <= MIN((size_t)j, p.nheavy); d++) {
                                heavy += finite_or(ledger_at(l, d - 1)->peak_mb, 0);
                                if (heavy + (j - d) * p.light_mb > budget)
                                        break;
                                p.pool_depth = d;
                                p.j_pooled = j;
                        }
                }
        }
        *ret = p;
        return 0;
}

bool plan_cmake_target(const char *dir, char *buf, size_t cap)
{
        const char *p = strstr(dir, "CMakeFiles/"), *e;
        size_t n;

        while (p && p != dir && p[-1] != '/') /* a whole component */
                p = strstr(p + 1, "CMakeFiles/");
        if (!p)
                return false;
        p += strlen("CMakeFiles/");
        e = strchr(p, '/');
        n = e ? (size_t)(e - p) : strlen(p);
        if (n <= 4 || memcmp(p + n - 4, ".dir", 4) != 0 || n - 4 >= cap)
                return false;
        memcpy(buf, p, n - 4);
        buf[n - 4] = '\0';
        return true;
}
