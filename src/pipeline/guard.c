/* SPDX-License-Identifier: MIT */
#include "pipeline/guard.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "model/ledger.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "util/macro.h"
#include "util/util.h"

#define GUARD_UNITS 512  /* compiles in flight followed; past it they run unguarded */
#define GUARD_PIDS 8     /* a unit's processes: driver, cc1plus, as, ... */
#define GUARD_LOOK_S 0.1 /* a held compile is looked at again this often */

struct gunit {
        long pid[GUARD_PIDS]; /* [0] its top */
        unsigned npid;
        double need_mb;
        bool held;
        double held_since;
        char name[UNITS_NAME_MAX + 1];
};

struct guard {
        struct guard_config cfg;
        struct gunit u[GUARD_UNITS];
        size_t n;
        double largest_mb; /* the largest unit ended so far */
        struct run_guard acct;
};

int guard_new(const struct guard_config *cfg, struct guard **ret)
{
        struct guard *g = calloc(1, sizeof(*g));

        if (!g)
                return -ENOMEM;
        g->cfg = *cfg;
        g->acct = (struct run_guard){
            .on = true, .headroom_mb = cfg->headroom_mb, .limit_mb = cfg->limit_mb};
        *ret = g;
        return 0;
}

static void signal_unit(const struct gunit *u, int sig)
{
        for (unsigned i = 0; i < u->npid; i++)
                (void)kill((pid_t)u->pid[i], sig);
}

static void release(struct guard *g, struct gunit *u, double now)
{
        double held = MAX(0.0, now - u->held_since);

        signal_unit(u, SIGCONT);
        u->held = false;
        g->acct.held_s += held;
        if (held > g->acct.longest_s) {
                g->acct.longest_s = held;
                copy_utf8_str(g->acct.longest, sizeof(g->acct.longest), u->name);
        }
}

void guard_free(struct guard *g)
{
        if (!g)
                return;
        for (size_t i = 0; i < g->n; i++)
                if (g->u[i].held)
                        release(g, &g->u[i], now_monotonic());
        free(g);
}

/* The memory left for the compiles (MiB): the cap less what the build
 * holds that reclaim cannot free, else the host's available; NAN unread. */
static double left_mb(struct guard *g)
{
        struct meminfo mi;
        double used;

        if (g->cfg.limit_mb > 0)
                return cgroup_mem_used(g->cfg.cg, &used) < 0 ? NAN
                                                             : g->cfg.limit_mb - used / 1048576.0;
        return procfs_meminfo(g->cfg.proc, &mi) < 0 ? NAN : (double)mi.available_kb / 1024.0;
}

/* What the other unheld compiles will still grow by: their need less
 * their RSS. */
static double growth_mb(struct guard *g, const struct gunit *except)
{
        double sum = 0;

        for (size_t i = 0; i < g->n; i++) {
                const struct gunit *u = &g->u[i];
                double rss = 0;
                struct pidmem pm;

                if (u == except || u->held || !(u->need_mb > 0))
                        continue;
                for (unsigned k = 0; k < u->npid; k++)
                        if (procfs_pidmem(g->cfg.proc, u->pid[k], &pm) >= 0)
                                rss += (double)(pm.anon_pages + pm.file_pages) * 4096.0 / 1048576.0;
                sum += MAX(0.0, u->need_mb - rss);
        }
        return sum;
}

/* Whether u's need fits beside the others' growth to come. */
static bool fits(struct guard *g, const struct gunit *u)
{
        double left = left_mb(g);

        /* unread: never hold on a guess */
        return isnan(left) || u->need_mb + growth_mb(g, u) + g->cfg.headroom_mb <= left;
}

static size_t running(const struct guard *g, const struct gunit *except)
{
        size_t n = 0;

        for (size_t i = 0; i < g->n; i++)
                n += &g->u[i] != except && !g->u[i].held;
        return n;
}

void guard_start(struct guard *g, long pid, int kind, const char *name, const char *path,
                 double now)
{
        const struct ledger_unit *l =
            g->cfg.ledger ? ledger_find(g->cfg.ledger, kind, name, path) : NULL;
        struct gunit *u;

        g->acct.units++;
        if (g->n == GUARD_UNITS)
                return;
        u = memset(&g->u[g->n++], 0, sizeof(*u));
        u->pid[u->npid++] = pid;
        u->need_mb = l ? l->peak_mb : g->largest_mb;
        g->acct.from_ledger += l != NULL;
        copy_utf8_str(u->name, sizeof(u->name), name);
        if (u->need_mb > 0 && running(g, u) > 0 && !fits(g, u)) {
                signal_unit(u, SIGSTOP);
                u->held = true;
                u->held_since = now;
                g->acct.held++;
        }
}

static struct gunit *unit_of(struct guard *g, long pid, unsigned *ret_k)
{
        for (size_t i = 0; i < g->n; i++)
                for (unsigned k = 0; k < g->u[i].npid; k++)
                        if (g->u[i].pid[k] == pid) {
                                *ret_k = k;
                                return &g->u[i];
                        }
        return NULL;
}

void guard_fork(struct guard *g, long ppid, long pid)
{
        unsigned k;
        struct gunit *u = unit_of(g, ppid, &k);

        if (!u || u->npid == GUARD_PIDS)
                return;
        u->pid[u->npid++] = pid;
        if (u->held)
                (void)kill((pid_t)pid, SIGSTOP);
}

void guard_exit(struct guard *g, long pid, double peak_mb, double now)
{
        unsigned k;
        struct gunit *u = unit_of(g, pid, &k);

        if (!u)
                return;
        if (k > 0) {
                u->pid[k] = u->pid[--u->npid];
                return;
        }
        if (u->held) /* ended while held: killed from outside */
                release(g, u, now);
        g->largest_mb = MAX(g->largest_mb, peak_mb);
        *u = g->u[--g->n];
        guard_check(g, now, NULL);
}

void guard_check(struct guard *g, double now, double *deadline)
{
        bool held = false;

        for (size_t i = 0; i < g->n && !held; i++)
                held = g->u[i].held;
        if (!held)
                return;
        held = false;
        /* a unit whose end the kernel's reads lost: gone all the same (held
         * ones must never wait on it) */
        for (size_t i = 0; i < g->n;)
                if (kill((pid_t)g->u[i].pid[0], 0) < 0 && errno == ESRCH) {
                        if (g->u[i].held)
                                release(g, &g->u[i], now);
                        g->u[i] = g->u[--g->n];
                } else {
                        i++;
                }

        /* the longest held first: the order they came in */
        for (;;) {
                struct gunit *first = NULL;

                for (size_t i = 0; i < g->n; i++)
                        if (g->u[i].held && (!first || g->u[i].held_since < first->held_since))
                                first = &g->u[i];
                if (!first)
                        break;
                if (running(g, NULL) > 0 && !fits(g, first)) {
                        held = true;
                        break;
                }
                release(g, first, now);
        }
        if (held && deadline && now + GUARD_LOOK_S < *deadline)
                *deadline = now + GUARD_LOOK_S;
}

void guard_account(const struct guard *g, struct run_guard *ret)
{
        *ret = g->acct;
}
