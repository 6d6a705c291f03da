#include "model/figures.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "model/summary.h"
#include "model/targets.h"
#include "model/units.h"
#include "util/macro.h"
#include "util/util.h"

double figure_cached_ratio(int64_t steps, int64_t cached)
{
        return steps <= 0 || cached < 0 ? NAN : (double)cached / (double)steps;
}

double figure_median(double *v, size_t n)
{
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double figure_hit_ratio(uint64_t hits, uint64_t misses)
{
        double tot = (double)hits + (double)misses;

        return tot > 0 ? (double)hits / tot : NAN;
}

const char *figure_outcome(int exit_code, int term_signal, double oom_kills,
                           char buf[static FIGURE_OUTCOME_LEN])
{
        const char *abbr = term_signal > 0 ? sigabbrev_np(term_signal) : NULL;

        if ((term_signal > 0 || exit_code > 0) && oom_kills > 0)
                snprintf(buf, FIGURE_OUTCOME_LEN, "OOM-killed");
        else if (abbr)
                snprintf(buf, FIGURE_OUTCOME_LEN, "SIG%s", abbr);
        else if (term_signal > 0)
                snprintf(buf, FIGURE_OUTCOME_LEN, "signal %d", term_signal);
        else if (exit_code > 0)
                snprintf(buf, FIGURE_OUTCOME_LEN, "exit %d", exit_code);
        else
                snprintf(buf, FIGURE_OUTCOME_LEN, "%s", exit_code == 0 ? "ok" : "unknown");
        return buf;
}

double figure_run_duration(double start_epoch, double end_epoch, double last_epoch,
                           bool *ret_to_last)
{
        bool known = isfinite(start_epoch) && isfinite(end_epoch);
        /* killed or still running: as far as the samples go */
        bool to_last = !known && isfinite(start_epoch) && isfinite(last_epoch);

        if (ret_to_last)
                *ret_to_last = to_last;
        return known ? end_epoch - start_epoch : to_last ? last_epoch - start_epoch : NAN;
}

int figure_ninja_offset(const struct run_info *ri, double mtime, int64_t max_end_ms,
                        double *ret_off, bool *ret_before)
{
        double off;

        if (mtime < ri->start_epoch - 1 ||
            (isfinite(ri->end_epoch) && mtime > ri->end_epoch + FIGURE_NINJA_SLACK_S)) {
                if (ret_before)
                        *ret_before = mtime < ri->start_epoch;
                return -ESRCH;
        }
        off = mtime - ri->start_epoch - (double)max_end_ms / 1000.0;
        *ret_off = isfinite(off) && off >= 0 ? off : 0;
        return 0;
}

bool figure_cc_delta(uint64_t first_hits, uint64_t first_misses, uint64_t last_hits,
                     uint64_t last_misses, uint64_t *ret_hits, uint64_t *ret_misses)
{
        bool reset = last_hits < first_hits || last_misses < first_misses;

        *ret_hits = reset ? last_hits : last_hits - first_hits;
        *ret_misses = reset ? last_misses : last_misses - first_misses;
        return reset;
}

void run_figures_init(struct run_figures *f)
{
        *f = (struct run_figures){.exit_code = -1};
        f->duration_s = f->user_s = f->sys_s = f->cpu_s = NAN;
        f->mem_peak_mb = f->mem_sampled_peak_mb = f->mem_anon_peak_mb = f->oom_kills = NAN;
        f->host_mem_used_peak_mb = f->cpu_avg_pct = NAN;
}

void run_figures_of(const struct run_model *m, struct run_figures *ret)
{
        const struct summary *s = m->summary;
        const struct summary_build *b = s ? &s->build : NULL;
        const struct run_facts *f = m->facts;

        run_figures_init(ret);
        if (s) {
                ret->host_mem_used_peak_mb = s->mem_used_peak.set ? s->mem_used_peak.value : NAN;
                ret->cpu_avg_pct = s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN;
        }
        if (b && b->mode[0]) {
                ret->user_s = b->cpu_user_s;
                ret->sys_s = b->cpu_sys_s;
                ret->cpu_s = b->cpu_user_s + b->cpu_sys_s;
                ret->mem_peak_mb = b->mem_peak.set ? b->mem_peak.value : NAN;
                ret->mem_sampled_peak_mb = b->mem_cur_peak.set ? b->mem_cur_peak.value : NAN;
                ret->mem_anon_peak_mb = b->mem_anon_peak.set ? b->mem_anon_peak.value : NAN;
                ret->oom_kills = b->oom_kills;
        }
        if (f) {
                ret->duration_s = f->duration_s;
                ret->exit_code = f->exit_code;
                ret->steps_set = f->steps_set;
                ret->steps = f->steps;
                ret->cached = f->cached;
                for (size_t i = 0; i < f->n && i < TARGETS_MAX; i++)
                        if (f->t[i].cc.set)
                                run_figures_cc_add(
                                    ret, (int64_t)MIN(f->t[i].cc.hits, (uint64_t)INT64_MAX),
                                    (int64_t)MIN(f->t[i].cc.misses, (uint64_t)INT64_MAX));
        }
        if (m->units) {
                size_t n;
                const struct unit *u = units_rows(m->units, &n);

                for (size_t i = 0; i < n; i++)
                        ret->compile_units += u[i].kind == UNITS_COMPILE;
        }
}

void run_figures_cc_add(struct run_figures *f, int64_t hits, int64_t misses)
{
        if (hits < 0 || misses < 0)
                return;
        f->cc_set = true;
        f->cc_hits += (uint64_t)hits;
        f->cc_misses += (uint64_t)misses;
}

double run_figures_cc_ratio(const struct run_figures *f)
{
        return f->cc_set ? figure_hit_ratio(f->cc_hits, f->cc_misses) : NAN;
}

double run_figures_mem_peak(const struct run_figures *f)
{
        return isfinite(f->mem_peak_mb) ? f->mem_peak_mb : f->mem_sampled_peak_mb;
}
