/* SPDX-License-Identifier: MIT */
/* The build's processes from taskstats and the process connector, into the
 * units table. */
#include "pipeline/acct.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/compilers.h"
#include "model/unitname.h"
#include "model/run.h"
#include "model/units.h"
#include "pipeline/execmatch.h"
#include "platform/cgroup-top.h"
#include "platform/procfs.h"
#include "pipeline/guard.h"
#include "platform/taskstats.h"
#include "util/macro.h"
#include "util/util.h"

#define CMDLINE_MAX 8192
#define ACCT_KINDS 128
#define ACCT_ENDED 16       /* units' processes ended lately, by pid: an OOM victim's name */
#define ACCT_HELD 8         /* records held per unit whose exec is not decided */
#define ACCT_PENDING_MAX 64 /* such units at once */
#define ACCT_HOLD_S 10.0    /* and how long one is kept after its end */
#define ACCT_BATCH_S 0.01   /* a drain at most this often: a process burst is read in one */

/* A unit in flight: its top process (the one whose exec made it) and what
 * its processes used so far. */
struct xunit {
        struct procunit u;
        long top;
        double start_s;  /* its top's exec */
        double end_s;    /* its top's exit (the connector's word); NAN not yet */
        double wall_s;   /* its top's life, from its record; NAN no record yet */
        unsigned waited; /* drains since its record, its end unheard */
        double cpu_s;
        double wait_s[3]; /* as units.h has it */
        uint64_t peak_kb;
        char tool[TASKEV_COMM_MAX + 1]; /* the process at the peak */
        /* A compiler in a BuildKit exec not known to be ours when it
         * started: the exec's name ("" ours) and its processes' records,
         * counted once it is (past ACCT_HELD: not in the totals). */
        char exec[EXEC_ID_MAX + 1];
        struct taskev held[ACCT_HELD];
        size_t nheld;
};

/* A process of a unit in flight. */
struct xproc {
        long pid;
        size_t unit;
};

struct acct {
        struct tstats *ts;
        struct procfs *proc;
        struct units *units;
        struct guard *guard;  /* NULL: none */
        struct execmatch *em; /* the BuildKit execs followed; NULL none */
        size_t npending;      /* units with exec[0] */
        uint64_t *member;     /* a bit per pid: the build's processes */
        uint64_t *gone;       /* a bit per pid: exec'd, its command line unread */
        long pid_max;
        struct xunit *xu;
        size_t nxu, capxu;
        struct xproc *xp;
        size_t nxp, capxp;
        double mono0;    /* the run's clock's start, CLOCK_MONOTONIC */
        double next_s;   /* CLOCK_MONOTONIC: no drain before (ACCT_BATCH_S) */
        bool held;       /* the fds left out of a poll: drain at next_s */
        bool delayacct;  /* kernel.task_delayacct was 1 at the start */
        uint64_t unread; /* compilers gone before their command line was read */
        struct run_procs procs;
        struct run_proc_kind kinds[ACCT_KINDS]; /* by name; past the cap, uncounted by name */
        size_t nkinds;
        struct {
                long pid;
                char label[TASKEV_COMM_MAX + 1 + PROCUNIT_NAME_MAX + 1];
        } ended[ACCT_ENDED]; /* a ring */
        size_t nended;
        char cmdline[CMDLINE_MAX];
};

static bool bit(const struct acct *a, const uint64_t *set, long pid)
{
        return pid > 0 && pid < a->pid_max && (set[pid / 64] >> (pid % 64)) & 1;
}

static void set_bit(struct acct *a, uint64_t *set, long pid, bool on)
{
        if (pid <= 0 || pid >= a->pid_max)
                return;
        if (on)
                set[pid / 64] |= UINT64_C(1) << (pid % 64);
        else
                set[pid / 64] &= ~(UINT64_C(1) << (pid % 64));
}

int acct_open(struct procfs *p, struct units *units, struct execmatch *em, struct acct **ret)
{
        struct acct *a = calloc(1, sizeof(*a));
        int e;

        if (!a)
                return -ENOMEM;
        a->proc = p;
        a->units = units;
        a->em = em;
        a->pid_max = procfs_pid_max();
        a->delayacct = taskstats_delayacct();
        a->member = calloc((size_t)a->pid_max / 64 + 1, sizeof(*a->member));
        a->gone = calloc((size_t)a->pid_max / 64 + 1, sizeof(*a->gone));
        e = a->member && a->gone ? taskstats_open(&a->ts) : -ENOMEM;
        if (e < 0) {
                acct_free(a);
                return e;
        }
        *ret = a;
        return 0;
}

void acct_free(struct acct *a)
{
        if (!a)
                return;
        taskstats_free(a->ts);
        free(a->member);
        free(a->gone);
        free(a->xu);
        free(a->xp);
        free(a);
}

void acct_set_guard(struct acct *a, struct guard *g)
{
        a->guard = g;
}

void acct_member(struct acct *a, long pid)
{
        if (a)
                set_bit(a, a->member, pid, true);
}

static struct xproc *find_proc(struct acct *a, long pid)
{
        for (size_t i = 0; i < a->nxp; i++)
                if (a->xp[i].pid == pid)
                        return &a->xp[i];
        return NULL;
}

static int add_proc(struct acct *a, long pid, size_t unit)
{
        if (array_grow(&a->xp, &a->capxp, a->nxp, sizeof(*a->xp), 64) < 0)
                return -ENOMEM;
        a->xp[a->nxp++] = (struct xproc){.pid = pid, .unit = unit};
        return 0;
}

/* A unit's slot: a free one (top 0) or a new one. */
static struct xunit *new_unit(struct acct *a, size_t *ret_i)
{
        for (size_t i = 0; i < a->nxu; i++)
                if (a->xu[i].top == 0)
                        return memset(&a->xu[*ret_i = i], 0, sizeof(*a->xu));
        if (array_grow(&a->xu, &a->capxu, a->nxu, sizeof(*a->xu), 32) < 0)
                return NULL;
        *ret_i = a->nxu;
        return memset(&a->xu[a->nxu++], 0, sizeof(*a->xu));
}

/* A process exec'd: one of the build's, or one in a BuildKit exec that
 * may be ours (it ran before the exec was found): a compile or link not
 * already inside one becomes a unit. Its command line is read now, while
 * it lives; one of the build's gone first (a cache hit lives a few ms) is
 * told by its record's name, at its exit. */
static void on_exec(struct acct *a, long pid, double at_s)
{
        char exec[EXEC_ID_MAX + 1] = "";
        bool member = bit(a, a->member, pid);
        struct pidstat ps;
        int ours;
        struct xunit *x;
        ssize_t n;
        size_t i;

        if (find_proc(a, pid))
                return;
        set_bit(a, a->gone, pid, false);
        if (procfs_pidstat(a->proc, pid, &ps) < 0) {
                set_bit(a, a->gone, pid, member);
                return;
        }
        /* most of a build's processes are no unit by their name alone
         * (sh, make, sleep): their command lines are not read */
        if (!procunit_maybe(ps.comm))
                return;
        ours = member ? 1 : execmatch_exec_of(a->em, pid, exec);
        if (ours < 0 || (ours == 0 && a->npending >= ACCT_PENDING_MAX))
                return;
        if (ours > 0)
                exec[0] = '\0';
        set_bit(a, a->member, pid, member = ours > 0);
        n = procfs_cmdline(a->proc, pid, a->cmdline, sizeof(a->cmdline));
        if (n <= 0) {
                set_bit(a, a->gone, pid, member);
                return;
        }
        if (!(x = new_unit(a, &i)))
                return;
        procunit_classify(ps.comm, a->cmdline, (size_t)n, &x->u);
        if (x->u.kind == PROCUNIT_NONE || add_proc(a, pid, i) < 0)
                return; /* the slot stays free (top 0) */
        if (x->u.kind == PROCUNIT_COMPILE && x->u.src[0] && x->u.src[0] != '/' &&
            procfs_cwd(a->proc, pid, x->u.cwd, sizeof(x->u.cwd)) < 0)
                x->u.cwd[0] = '\0';
        x->top = pid;
        x->start_s = at_s - a->mono0;
        x->end_s = x->wall_s = NAN;
        memcpy(x->exec, exec, sizeof(exec));
        a->npending += exec[0] != '\0';
        set_bit(a, a->member, pid, true);
        if (a->guard && !exec[0]) {
                char path[UNITS_PATH_MAX + 1];

                if (unitname_resolve(x->u.cwd, x->u.src, path, sizeof(path)) < 0)
                        path[0] = '\0';
                guard_start(a->guard, pid, x->u.kind == PROCUNIT_LINK ? UNITS_LINK : UNITS_COMPILE,
                            x->u.name, path, at_s);
        }
}

/* The build's totals and its processes by name. */
static void count(struct acct *a, const struct taskev *ev)
{
        struct run_proc_kind *k = NULL;

        a->procs.ended += ev->last;
        a->procs.cpu_s += ev->cpu_s;
        a->procs.delay_cpu_s += ev->delay_cpu_s;
        a->procs.delay_io_s += ev->delay_io_s;
        a->procs.delay_mem_s += ev->delay_mem_s;
        for (size_t i = 0; i < a->nkinds && !k; i++)
                if (strcmp(a->kinds[i].comm, ev->comm) == 0)
                        k = &a->kinds[i];
        if (!k && a->nkinds < ACCT_KINDS) {
                k = &a->kinds[a->nkinds++];
                memcpy(k->comm, ev->comm, sizeof(ev->comm));
        }
        if (!k)
                return;
        k->count += ev->last;
        k->cpu_s += ev->cpu_s;
        k->peak_mb = MAX(k->peak_mb, (double)ev->rss_peak_kb / 1024.0);
}

/* The unit's top process ended, its record read: to the units table,
 * exact. Its end is the connector's, else (that word lost) its record's.
 * One in an exec not decided waits (all: the run is over) till the exec is
 * ours, or is dropped ACCT_HOLD_S after its end: another build's. */
static void unit_done(struct acct *a, size_t i, bool all)
{
        struct xunit *x = &a->xu[i];
        int ours = x->exec[0] ? execmatch_exec_of(a->em, 0, x->exec) : 1;
        struct units_seen s = {
            .kind = x->u.kind == PROCUNIT_LINK ? UNITS_LINK : UNITS_COMPILE,
            .tool = x->tool[0] ? x->tool : x->u.tool,
            .name = x->u.name,
            .std = x->u.std,
            .dir = x->u.dir,
            .src = x->u.src,
            .cwd = x->u.cwd,
            .key = x->u.key,
            .elapsed_s = isnan(x->end_s) ? x->start_s + x->wall_s : x->end_s,
            .rss_mb = (double)x->peak_kb / 1024.0,
            .cpu_s = x->cpu_s,
            .exact = true,
        };

        if (ours == 0 && !all && now_monotonic() - a->mono0 - s.elapsed_s < ACCT_HOLD_S)
                return;
        a->npending -= x->exec[0] != '\0';
        for (size_t k = 0; ours > 0 && k < x->nheld; k++)
                count(a, &x->held[k]);
        for (size_t k = 0; k < 3; k++)
                s.wait_s[k] = a->delayacct ? x->wait_s[k] : NAN;
        if (ours > 0)
                (void)units_done(a->units, &s, MAX(0.0, x->start_s));
        x->top = 0;
        for (size_t k = 0; k < a->nxp;) /* its processes left behind leave it */
                if (a->xp[k].unit == i) {
                        if (ours <= 0)
                                set_bit(a, a->member, a->xp[k].pid, false);
                        a->xp[k] = a->xp[--a->nxp];
                } else {
                        k++;
                }
}

static void on_exit_task(struct acct *a, const struct taskev *ev)
{
        struct xproc *p;
        struct xunit *x;
        size_t unit, i;

        if (!bit(a, a->member, ev->tgid))
                return;
        p = find_proc(a, ev->tgid);
        x = p ? &a->xu[p->unit] : NULL;
        if (x && x->exec[0] && x->nheld < ACCT_HELD)
                x->held[x->nheld++] = *ev;
        else if (!x || !x->exec[0])
                count(a, ev);
        if (a->guard && ev->last)
                guard_exit(a->guard, ev->tgid,
                           p ? (double)MAX(a->xu[p->unit].peak_kb, ev->rss_peak_kb) / 1024.0 : 0,
                           now_monotonic());
        if (ev->last && bit(a, a->gone, ev->tgid)) {
                set_bit(a, a->gone, ev->tgid, false);
                a->unread += compilers_has(ev->comm, strnlen(ev->comm, sizeof(ev->comm)),
                                           TOOL_COMPILER | TOOL_DRIVER | TOOL_LINKER);
        }
        if (ev->last)
                set_bit(a, a->member, ev->tgid, false);
        if (!p)
                return;
        unit = p->unit;
        x->cpu_s += ev->cpu_s;
        x->wait_s[0] += ev->delay_cpu_s;
        x->wait_s[1] += ev->delay_io_s;
        x->wait_s[2] += ev->delay_mem_s;
        if (ev->rss_peak_kb > x->peak_kb) {
                x->peak_kb = ev->rss_peak_kb;
                memcpy(x->tool, ev->comm, sizeof(x->tool));
        }
        if (!ev->last)
                return;
        i = a->nended++ % ACCT_ENDED;
        a->ended[i].pid = ev->tgid;
        snprintf(a->ended[i].label, sizeof(a->ended[i].label), "%s %s", ev->comm, x->u.name);
        if (x->top != ev->tgid) {
                *p = a->xp[--a->nxp]; /* one of its processes, not its top */
                return;
        }
        x->wall_s = ev->wall_s;
        if (!isnan(x->end_s))
                unit_done(a, unit, false);
}

/* The connector's word that a unit's top exited: its exact end. */
static void on_end(struct acct *a, const struct taskev *ev)
{
        struct xproc *p = ev->pid == ev->tgid ? find_proc(a, ev->tgid) : NULL;

        if (!p || a->xu[p->unit].top != ev->tgid)
                return;
        a->xu[p->unit].end_s = ev->at_s - a->mono0;
        if (!isnan(a->xu[p->unit].wall_s))
                unit_done(a, p->unit, false);
}

static void on_event(void *userdata, const struct taskev *ev)
{
        struct acct *a = userdata;
        struct xproc *p;

        switch (ev->type) {
        case TASKEV_FORK:
                if (ev->pid != ev->tgid || !bit(a, a->member, ev->ppid))
                        return;
                set_bit(a, a->member, ev->pid, true);
                if ((p = find_proc(a, ev->ppid)))
                        (void)add_proc(a, ev->pid, p->unit);
                if (a->guard)
                        guard_fork(a->guard, ev->ppid, ev->pid);
                return;
        case TASKEV_EXEC:
                if (bit(a, a->member, ev->tgid) || a->em)
                        on_exec(a, ev->tgid, ev->at_s);
                return;
        case TASKEV_EXIT:
                on_exit_task(a, ev);
                return;
        case TASKEV_END:
                on_end(a, ev);
                return;
        }
}

size_t acct_pollfds(struct acct *a, struct pollfd *p, size_t cap, double now, double *deadline)
{
        int fds[2];

        if (!a || cap < 2)
                return 0;
        if (now < a->next_s) {
                a->held = true;
                *deadline = MIN(*deadline, a->next_s);
                return 0;
        }
        taskstats_fds(a->ts, fds);
        p[0] = (struct pollfd){.fd = fds[0], .events = POLLIN};
        p[1] = (struct pollfd){.fd = fds[1], .events = POLLIN};
        return 2;
}

/* Units whose record came but whose end was never heard (a connector
 * read dropped) end by their record after a drain more, or now (all). */
static void end_waiting(struct acct *a, bool all)
{
        for (size_t i = 0; i < a->nxu; i++)
                if (a->xu[i].top && !isnan(a->xu[i].wall_s) && (all || a->xu[i].waited++ > 0))
                        unit_done(a, i, all);
}

void acct_poll(struct acct *a, const struct pollfd *p, size_t n, double mono0)
{
        int fds[2];
        bool ready = n == 0;

        if (!a)
                return;
        taskstats_fds(a->ts, fds);
        for (size_t i = 0; i < n; i++)
                ready = ready || ((p[i].fd == fds[0] || p[i].fd == fds[1]) && p[i].revents);
        if (!ready && !(a->held && now_monotonic() >= a->next_s))
                return;
        a->held = false;
        a->next_s = now_monotonic() + ACCT_BATCH_S;
        a->mono0 = mono0;
        taskstats_drain(a->ts, on_event, a);
        end_waiting(a, false);
}

const char *acct_label(const struct acct *a, long pid, const char *comm, char *buf, size_t cap)
{
        for (size_t i = 0; a && pid > 0 && i < a->nxp; i++)
                if (a->xp[i].pid == pid) {
                        snprintf(buf, cap, "%s %s", comm, a->xu[a->xp[i].unit].u.name);
                        return buf;
                }
        for (size_t i = 0; a && pid > 0 && i < MIN(a->nended, (size_t)ACCT_ENDED); i++)
                if (a->ended[i].pid == pid)
                        return a->ended[i].label;
        return comm;
}

static int cmp_cpu(const void *x, const void *y)
{
        const struct run_proc_kind *a = x, *b = y;

        return (a->cpu_s < b->cpu_s) - (a->cpu_s > b->cpu_s);
}

static int cmp_peak(const void *x, const void *y)
{
        const struct run_proc_kind *a = x, *b = y;

        return (a->peak_mb < b->peak_mb) - (a->peak_mb > b->peak_mb);
}

void acct_procs(struct acct *a, double mono0, struct run_procs *ret)
{
        size_t half = RUN_PROCS_TOP / 2;

        *ret = (struct run_procs){0};
        if (!a)
                return;
        acct_poll(a, NULL, 0, mono0);
        end_waiting(a, true);
        *ret = a->procs;
        ret->delayacct = taskstats_delayacct();
        ret->unread = a->unread;
        ret->lost = taskstats_lost(a->ts);
        for (size_t i = 0; i < a->nkinds; i++)
                ret->sccache_ran = ret->sccache_ran || strcmp(a->kinds[i].comm, "sccache") == 0;
        /* the largest by peak, then the most CPU of the rest: by CPU */
        qsort(a->kinds, a->nkinds, sizeof(*a->kinds), cmp_peak);
        ret->ntop = MIN(half, a->nkinds);
        memcpy(ret->top, a->kinds, ret->ntop * sizeof(*a->kinds));
        qsort(a->kinds + ret->ntop, a->nkinds - ret->ntop, sizeof(*a->kinds), cmp_cpu);
        for (size_t i = ret->ntop; i < a->nkinds && ret->ntop < RUN_PROCS_TOP; i++)
                ret->top[ret->ntop++] = a->kinds[i];
        qsort(ret->top, ret->ntop, sizeof(*ret->top), cmp_cpu);
}
