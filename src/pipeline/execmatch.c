/* SPDX-License-Identifier: MIT */
/* BuildKit's RUN steps followed into the daemon (execmatch.h). */
#include "pipeline/execmatch.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/bkrun.h"
#include "platform/bkexec.h"

#define EXECMATCH_WANT_MAX 1024
#define EXECMATCH_HUNT_S 20.0 /* a RUN step printed this recently and not found: look harder */

/* A RUN command the build's log printed, and when it first did. */
struct bkwant {
        char cmd[BKRUN_CMD_MAX + 1];
        double seen;
        bool matched; /* an exec of it was found */
};

struct execmatch {
        struct bkexec *bk;
        pthread_mutex_t lock; /* want and nwant: the parse worker adds */
        struct bkwant *want;
        size_t nwant;
        long *allpids; /* the client's pids and the execs' */
        size_t capall;
        double mem_peak, pids_peak;
        bool blind; /* BUILDTEL_TEST_NO_EXECS set: none is ours (the tests' builder out of reach) */
};

void victim_report(struct victim *v, enum victim_from from, const char *comm, long pid,
                   struct sample *s)
{
        if (pid > 0 && pid != v->last[from]) {
                v->last[from] = pid;
                snprintf(v->comm, sizeof(v->comm), "%s", comm);
                v->pid = pid;
        }
        if (v->pid > 0) {
                s->oom_victim = v->comm;
                s->oom_victim_pid = (double)v->pid;
        }
}

/* An exec cgroup is this build's when its command is one of the RUN
 * steps this build's log printed (platform/bkexec.h). */
static bool match_exec(void *userdata, const char *raw, size_t len, double first_s, char *ret_cmd,
                       size_t cap)
{
        struct execmatch *em = userdata;
        char cmd[BKRUN_CMD_MAX + 1];
        bool ours = false;

        if (em->blind || bkrun_argv_cmd(raw, len, cmd, sizeof(cmd)) <= 0)
                return false;
        pthread_mutex_lock(&em->lock);
        for (size_t i = 0; i < em->nwant && !ours; i++)
                if (strcmp(em->want[i].cmd, cmd) == 0) {
                        snprintf(ret_cmd, cap, "%s", cmd);
                        em->want[i].matched = ours = true;
                }
        pthread_mutex_unlock(&em->lock);
        return ours;
}

int execmatch_new(const char *root, struct execmatch **ret)
{
        struct execmatch *em = calloc(1, sizeof(*em));
        int e;

        if (!em)
                return -ENOMEM;
        pthread_mutex_init(&em->lock, NULL);
        em->mem_peak = em->pids_peak = NAN;
        em->blind = getenv("BUILDTEL_TEST_NO_EXECS") != NULL;
        em->want = calloc(EXECMATCH_WANT_MAX, sizeof(*em->want));
        e = em->want
                ? bkexec_new(
                      &(struct bkexec_config){.root = root, .match = match_exec, .userdata = em},
                      &em->bk)
                : -ENOMEM;
        if (e < 0) {
                execmatch_free(em);
                return e;
        }
        *ret = em;
        return 0;
}

void execmatch_free(struct execmatch *em)
{
        if (!em)
                return;
        bkexec_free(em->bk);
        free(em->want);
        free(em->allpids);
        pthread_mutex_destroy(&em->lock);
        free(em);
}

void execmatch_want(struct execmatch *em, const char *cmd, size_t len, double now)
{
        size_t i = 0;

        if (!em)
                return; /* not following execs */
        pthread_mutex_lock(&em->lock);
        while (i < em->nwant && strcmp(em->want[i].cmd, cmd) != 0)
                i++;
        if (i == em->nwant && i < EXECMATCH_WANT_MAX) {
                memcpy(em->want[i].cmd, cmd, MIN(len, (size_t)BKRUN_CMD_MAX));
                em->want[em->nwant++].seen = now;
        }
        pthread_mutex_unlock(&em->lock);
}

size_t execmatch_nwant(struct execmatch *em)
{
        size_t n;

        if (!em)
                return 0;
        pthread_mutex_lock(&em->lock);
        n = em->nwant;
        pthread_mutex_unlock(&em->lock);
        return n;
}

/* Is a RUN step printed lately still without its exec? (A cached one
 * never gets one: the hunt ends EXECMATCH_HUNT_S after it was printed.) */
static void update_hunt(struct execmatch *em, double now)
{
        bool hunt = false;

        pthread_mutex_lock(&em->lock);
        for (size_t i = em->nwant; i-- > 0 && !hunt;) {
                if (now - em->want[i].seen > EXECMATCH_HUNT_S)
                        break;
                hunt = !em->want[i].matched;
        }
        pthread_mutex_unlock(&em->lock);
        bkexec_hunt(em->bk, hunt);
}

void execmatch_tick(struct execmatch *em, struct procfs *p, double now, bool discover)
{
        update_hunt(em, now);
        (void)bkexec_tick(em->bk, p, now, discover);
}

void execmatch_consider(struct execmatch *em, const struct pidstat *ps)
{
        bkexec_consider(em->bk, ps);
}

void execmatch_poll(struct execmatch *em, struct procfs *p, double now)
{
        update_hunt(em, now);
        (void)bkexec_poll(em->bk, p, now);
}

int execmatch_exec_of(struct execmatch *em, long pid, char *id)
{
        return em ? bkexec_exec_of(em->bk, pid, id) : -1;
}

const long *execmatch_pids(struct execmatch *em, const long *pids, size_t n, size_t *ret_n)
{
        const long *ep;
        size_t en = 0;

        *ret_n = n;
        bkexec_pids(em->bk, &ep, &en);
        if (en && n + en > em->capall) {
                long *nv = realloc(em->allpids, (n + en) * sizeof(*nv));

                if (nv) {
                        em->allpids = nv;
                        em->capall = n + en;
                }
        }
        if (!en || n + en > em->capall)
                return pids;
        memcpy(em->allpids, pids, n * sizeof(*pids));
        memcpy(em->allpids + n, ep, en * sizeof(*ep));
        *ret_n = n + en;
        return em->allpids;
}

/* Counters over every exec (gone ones at their last read), levels over
 * those alive, and as the peak the largest of the client's own kernel
 * peak, one exec's kernel peak, and the sampled sum. */
void execmatch_fold(struct execmatch *em, struct procfs *p, struct sample *s, struct victim *v,
                    bool host_psi)
{
        struct bkexec_totals t;

        if (!em)
                return;
        bkexec_end(em->bk, p);
        bkexec_totals(em->bk, &t);
        if (!t.ours)
                return;
        s->cg_cpu_user_s = execs_sum(s->cg_cpu_user_s, t.cpu_user_s);
        s->cg_cpu_sys_s = execs_sum(s->cg_cpu_sys_s, t.cpu_sys_s);
        s->cg_io_read_bytes = execs_sum(s->cg_io_read_bytes, t.io_read_bytes);
        s->cg_io_write_bytes = execs_sum(s->cg_io_write_bytes, t.io_write_bytes);
        s->cg_oom_kills = execs_sum(s->cg_oom_kills, t.oom_kills);
        s->cg_mem_bytes = execs_sum(s->cg_mem_bytes, t.mem_bytes);
        s->cg_mem_anon_bytes = execs_sum(s->cg_mem_anon_bytes, t.anon_bytes);
        s->cg_mem_file_bytes = execs_sum(s->cg_mem_file_bytes, t.file_bytes);
        s->cg_pids = execs_sum(s->cg_pids, t.pids);
        em->mem_peak = execs_max(em->mem_peak, execs_max(s->cg_mem_bytes, t.max_peak_bytes));
        s->cg_mem_peak_bytes = execs_max(s->cg_mem_peak_bytes, em->mem_peak);
        em->pids_peak = execs_max(em->pids_peak, s->cg_pids);
        s->cg_pids_peak = execs_max(s->cg_pids_peak, em->pids_peak);
        victim_report(v, VICTIM_EXEC, t.oom_victim, t.oom_victim_pid, s);
        if (host_psi)
                return; /* host-wide already: the execs are in it */
        psi_sum(&s->cg_psi, &t.psi);
}

/* The exec's best step of ts: the step with its command whose time it
 * fell in (ties: the nearest start, a step not yet given one first); -1
 * none. */
static int best_step(const struct targets *ts, const char (*cmd)[BKRUN_CMD_MAX + 1],
                     const bool *taken, const struct exec_fact *f, double slack)
{
        double best_d = INFINITY;
        int best = -1;

        for (uint32_t j = 0; j < ts->nstepv; j++) {
                const struct step_fact *st = &ts->stepv[j];
                double lo = isnan(st->start_s) ? -INFINITY : st->start_s - slack;
                double hi = isnan(st->end_s) ? INFINITY : st->end_s + slack, d;

                if (!cmd[j][0] || strcmp(cmd[j], f->cmd) != 0)
                        continue;
                d = isnan(st->start_s) ? 0 : fabs(f->first_s - st->start_s);
                if (f->first_s < lo || f->first_s > hi)
                        d += 1e6;
                if (taken[j])
                        d += 1e9;
                if (d < best_d) {
                        best_d = d;
                        best = (int)j;
                }
        }
        return best;
}

/* Each exec of this build to the RUN step it ran. */
static void attach_execs(struct execmatch *em, const struct targets *ts, double slack)
{
        const struct exec_fact *f;
        _cleanup_free_ char(*cmd)[BKRUN_CMD_MAX + 1] = NULL;
        _cleanup_free_ bool *taken = NULL;
        size_t n;

        f = ts ? bkexec_facts(em->bk, &n) : NULL;
        if (!f || !n || !ts->nstepv)
                return;
        cmd = calloc(ts->nstepv, sizeof(*cmd));
        taken = calloc(ts->nstepv, sizeof(*taken));
        if (!cmd || !taken)
                return;
        for (uint32_t j = 0; j < ts->nstepv; j++)
                (void)bkrun_vertex_cmd(ts->stepv[j].name, strlen(ts->stepv[j].name), cmd[j],
                                       sizeof(cmd[j]));
        for (size_t i = 0; i < n; i++) {
                int best =
                    best_step(ts, (const char(*)[BKRUN_CMD_MAX + 1]) cmd, taken, &f[i], slack);

                if (best < 0)
                        continue;
                step_exec_add(&ts->stepv[best].exec, &f[i].u);
                taken[best] = true;
        }
}

void execmatch_finish(struct execmatch *em, double now, const struct targets *ts, double slack,
                      struct exec_cover *ret)
{
        char c[BKRUN_CMD_MAX + 1];

        *ret = (struct exec_cover){.poll_s = BKEXEC_WALK_S};
        if (!em)
                return; /* not following execs: nothing to say of them */
        bkexec_finish(em->bk, now);
        attach_execs(em, ts, slack);
        for (uint32_t j = 0; ts && j < ts->nstepv; j++) {
                const struct step_fact *st = &ts->stepv[j];

                if (st->cached || bkrun_vertex_cmd(st->name, strlen(st->name), c, sizeof(c)) <= 0)
                        continue;
                ret->runs++;
                ret->measured += st->exec.set;
        }
}
