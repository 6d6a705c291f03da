/* SPDX-License-Identifier: MIT */
#include "model/ledger.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "util/util.h"

/* A unit and its figures, one a run that measured it. */
struct entry {
        struct ledger_unit u;
        float peak[LEDGER_RUNS], cpu[LEDGER_RUNS], wall[LEDGER_RUNS], start[LEDGER_RUNS];
        unsigned last; /* the run that measured it last, from 1 */
};

struct ledger {
        struct entry *v;
        size_t n, cap;
        size_t nsorted;  /* v[0, nsorted) by key; the run being added appends */
        size_t *by_peak; /* indexes of v, the heaviest first; NULL: not made */
        unsigned runs;
};

int ledger_new(struct ledger **ret)
{
        struct ledger *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        *ret = l;
        return 0;
}

void ledger_free(struct ledger *l)
{
        if (!l)
                return;
        free(l->v);
        free(l->by_peak);
        free(l);
}

static int cmp_key(const void *a, const void *b)
{
        const struct ledger_unit *x = a, *y = b;
        int c = x->kind - y->kind;

        if (c == 0)
                c = strcmp(x->name, y->name);
        return c ? c : strcmp(x->path, y->path);
}

static double median(const float *v, unsigned n)
{
        double s[LEDGER_RUNS];
        size_t k = 0;

        for (unsigned i = 0; i < n; i++)
                if (isfinite(v[i]))
                        s[k++] = v[i];
        return figure_median(s, k);
}

static void by_key(struct ledger *l)
{
        if (l->nsorted != l->n) {
                qsort(l->v, l->n, sizeof(*l->v), cmp_key);
                l->nsorted = l->n;
                free(l->by_peak);
                l->by_peak = NULL;
        }
}

static struct entry *find(struct ledger *l, const struct ledger_unit *key)
{
        /* none yet: no bsearch of a NULL array (undefined, even of 0) */
        struct entry *e = l->nsorted ? bsearch(key, l->v, l->nsorted, sizeof(*l->v), cmp_key) : NULL;

        for (size_t i = l->nsorted; !e && i < l->n; i++) /* this run's new ones */
                if (cmp_key(key, &l->v[i].u) == 0)
                        e = &l->v[i];
        return e;
}

int ledger_add_run(struct ledger *l, const struct unit *rows, size_t n)
{
        if (l->runs >= LEDGER_RUNS)
                return 0;
        by_key(l);
        for (size_t i = 0; i < n; i++) {
                const struct unit *r = &rows[i];
                struct ledger_unit key = {.kind = r->kind};
                struct entry *e;

                if (r->cache == UNITS_CACHE_HIT || !(r->peak_mb > 0))
                        continue;
                copy_utf8_str(key.name, sizeof(key.name), r->name);
                copy_utf8_str(key.path, sizeof(key.path), r->path);
                if (!(e = find(l, &key))) {
                        if (array_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 64) < 0)
                                return -ENOMEM;
                        e = memset(&l->v[l->n++], 0, sizeof(*e));
                        e->u = key;
                        copy_utf8_str(e->u.dir, sizeof(e->u.dir), r->dir);
                }
                if (e->last == l->runs + 1)
                        continue; /* twice in one run: the first row */
                e->last = l->runs + 1;
                e->peak[e->u.runs] = (float)r->peak_mb;
                e->cpu[e->u.runs] = (float)r->cpu_s;
                e->wall[e->u.runs] = (float)(r->last_s - r->first_s);
                e->start[e->u.runs] = (float)r->first_s;
                e->u.runs++;
                e->u.peak_mb = median(e->peak, e->u.runs);
                e->u.cpu_s = median(e->cpu, e->u.runs);
                e->u.wall_s = median(e->wall, e->u.runs);
                e->u.start_s = median(e->start, e->u.runs);
        }
        l->runs++;
        return 0;
}

static int cmp_peak(const void *a, const void *b, void *entries)
{
        const struct entry *v = entries;
        const struct ledger_unit *x = &v[*(const size_t *)a].u;
        const struct ledger_unit *y = &v[*(const size_t *)b].u;

        if (x->peak_mb != y->peak_mb)
                return x->peak_mb < y->peak_mb ? 1 : -1;
        return cmp_key(x, y);
}

size_t ledger_count(const struct ledger *l)
{
        return l->n;
}

const struct ledger_unit *ledger_at(struct ledger *l, size_t i)
{
        if (i >= l->n)
                return NULL;
        by_key(l);
        if (!l->by_peak) {
                if (!(l->by_peak = reallocarray(NULL, l->n, sizeof(*l->by_peak))))
                        return NULL;
                for (size_t k = 0; k < l->n; k++)
                        l->by_peak[k] = k;
                qsort_r(l->by_peak, l->n, sizeof(*l->by_peak), cmp_peak, l->v);
        }
        return &l->v[l->by_peak[i]].u;
}

/* name as the units table has it: itself, or "name [tag]" */
static bool same_name(const char *row, const char *name)
{
        size_t n = strlen(name);

        return strncmp(row, name, n) == 0 && (row[n] == '\0' || strncmp(row + n, " [", 2) == 0);
}

const struct ledger_unit *ledger_find(struct ledger *l, int kind, const char *name,
                                      const char *path)
{
        const struct entry *e = NULL;
        bool by_path = path && path[0];

        for (size_t i = 0; i < l->n; i++) {
                const struct ledger_unit *u = &l->v[i].u;

                if (u->kind == kind &&
                    (by_path ? strcmp(u->path, path) == 0 : same_name(u->name, name)) &&
                    (!e || u->peak_mb > e->u.peak_mb))
                        e = &l->v[i];
        }
        return e ? &e->u : NULL;
}
