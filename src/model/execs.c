/* SPDX-License-Identifier: MIT */
#include "model/execs.h"

#include <math.h>
#include <string.h>

#include "model/targets.h"

double execs_sum(double a, double b)
{
        return isnan(a) ? b : isnan(b) ? a : a + b;
}

double execs_max(double a, double b)
{
        return isnan(a) ? b : isnan(b) || a >= b ? a : b;
}

double execs_min(double a, double b)
{
        return isnan(a) ? b : isnan(b) || a <= b ? a : b;
}

void psi_clear(struct psi *p)
{
        for (int i = 0; i < 3; i++)
                p->some_s[i] = p->full_s[i] = NAN;
}

void psi_sum(struct psi *to, const struct psi *from)
{
        for (int i = 0; i < 3; i++) {
                to->some_s[i] = execs_sum(to->some_s[i], from->some_s[i]);
                to->full_s[i] = execs_sum(to->full_s[i], from->full_s[i]);
        }
}

void step_exec_clear(struct step_exec *e)
{
        memset(e, 0, sizeof(*e));
        e->cpu_s = e->mem_peak_bytes = e->anon_peak_bytes = NAN;
        e->io_read_bytes = e->io_write_bytes = e->net_rx_bytes = e->net_tx_bytes = NAN;
        e->oom_kills = e->oom_at_s = e->peak_proc_bytes = NAN;
}

void step_exec_add(struct step_exec *to, const struct step_exec *e)
{
        if (!to->set)
                step_exec_clear(to);
        to->set = true;
        to->execs += e->execs ? e->execs : 1;
        to->cpu_s = execs_sum(to->cpu_s, e->cpu_s);
        to->mem_peak_bytes = execs_max(to->mem_peak_bytes, e->mem_peak_bytes);
        to->anon_peak_bytes = execs_max(to->anon_peak_bytes, e->anon_peak_bytes);
        to->io_read_bytes = execs_sum(to->io_read_bytes, e->io_read_bytes);
        to->io_write_bytes = execs_sum(to->io_write_bytes, e->io_write_bytes);
        to->net_rx_bytes = execs_sum(to->net_rx_bytes, e->net_rx_bytes);
        to->net_tx_bytes = execs_sum(to->net_tx_bytes, e->net_tx_bytes);
        to->oom_kills = execs_sum(to->oom_kills, e->oom_kills);
        /* the first kill's victim, of the execs that know theirs */
        if (e->oom_victim[0] &&
            (!to->oom_victim[0] || isnan(to->oom_at_s) || e->oom_at_s < to->oom_at_s))
                memcpy(to->oom_victim, e->oom_victim, sizeof(to->oom_victim));
        to->oom_at_s = execs_min(to->oom_at_s, e->oom_at_s);
        if (e->peak_proc[0] &&
            (isnan(to->peak_proc_bytes) || e->peak_proc_bytes > to->peak_proc_bytes)) {
                to->peak_proc_bytes = e->peak_proc_bytes;
                memcpy(to->peak_proc, e->peak_proc, sizeof(to->peak_proc));
        }
}

void execs_target(const struct step_fact *v, uint32_t n, int target, struct target_exec *ret)
{
        struct target_exec t = {
            .mem_peak_bytes = NAN, .oom_kills = NAN, .cpu_s = NAN, .peak_step = -1};

        for (uint32_t i = 0; v && i < n; i++) {
                const struct step_exec *e = &v[i].exec;

                if (!e->set || (target >= 0 && v[i].target != target))
                        continue;
                t.measured++;
                if (!isnan(e->mem_peak_bytes) &&
                    (isnan(t.mem_peak_bytes) || e->mem_peak_bytes > t.mem_peak_bytes)) {
                        t.mem_peak_bytes = e->mem_peak_bytes;
                        t.peak_step = (int)i;
                }
                t.oom_kills = execs_sum(t.oom_kills, e->oom_kills);
                t.cpu_s = execs_sum(t.cpu_s, e->cpu_s);
        }
        *ret = t;
}
