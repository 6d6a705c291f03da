/* SPDX-License-Identifier: MIT */
#include "summary.h"

#include <math.h>
#include <string.h>

static void copy_str(char *dst, size_t size, const char *src)
{
        size_t n = src ? strnlen(src, size - 1) : 0;

        if (n)
                memcpy(dst, src, n);
        dst[n] = '\0';
}

static void point_set(struct summary_point *p, double value, double aux, const struct sample *smp)
{
        p->set = true;
        p->value = value;
        p->aux = aux;
        p->epoch = smp->epoch;
        p->elapsed_s = smp->elapsed_s;
        copy_str(p->stage, sizeof(p->stage), smp->stage);
        copy_str(p->context, sizeof(p->context), smp->context);
}

/* Strict comparisons: on ties the first occurrence stays. */
static void point_max(struct summary_point *p, double value, double aux, const struct sample *smp)
{
        if (isnan(value))
                return;
        if (!p->set || value > p->value)
                point_set(p, value, aux, smp);
}

static void point_min(struct summary_point *p, double value, double aux, const struct sample *smp)
{
        if (isnan(value))
                return;
        if (!p->set || value < p->value)
                point_set(p, value, aux, smp);
}

void summary_init(struct summary *s, const struct summary_config *cfg)
{
        memset(s, 0, sizeof(*s));
        if (cfg) {
                s->cfg = *cfg;
        } else {
                s->cfg.near_oom_mb = SUMMARY_NEAR_OOM_MB_DEFAULT;
                s->cfg.low_disk_gb = SUMMARY_LOW_DISK_GB_DEFAULT;
        }
        s->first_epoch = s->last_epoch = s->last_elapsed_s = NAN;
        s->disk_avail_first = s->disk_avail_last = NAN;
        s->mem_total_mb = NAN;
}

void summary_add(struct summary *s, const struct sample *smp)
{
        s->samples++;
        if (!isnan(smp->epoch)) {
                if (isnan(s->first_epoch))
                        s->first_epoch = smp->epoch;
                s->last_epoch = smp->epoch;
        }
        if (!isnan(smp->elapsed_s))
                s->last_elapsed_s = smp->elapsed_s;

        point_max(&s->mem_used_peak, smp->mem_used_mb, smp->mem_avail_mb, smp);
        point_min(&s->mem_avail_min, smp->mem_avail_mb, smp->mem_used_mb, smp);
        point_max(&s->swap_used_peak, smp->swap_used_mb, NAN, smp);
        if (isnan(s->mem_total_mb) && !isnan(smp->mem_used_mb) && !isnan(smp->mem_avail_mb))
                s->mem_total_mb = smp->mem_used_mb + smp->mem_avail_mb;

        point_min(&s->disk_avail_min, smp->disk_avail_gb, smp->disk_pct, smp);
        if (!isnan(smp->disk_avail_gb)) {
                if (isnan(s->disk_avail_first))
                        s->disk_avail_first = smp->disk_avail_gb;
                s->disk_avail_last = smp->disk_avail_gb;
        }

        point_max(&s->load1_peak, smp->load1, NAN, smp);
        point_max(&s->cpu_pct_peak, smp->cpu_pct, NAN, smp);
        if (!isnan(smp->cpu_pct)) {
                s->cpu_pct_sum += smp->cpu_pct;
                s->cpu_pct_n++;
        }
        point_max(&s->compilers_peak, smp->compilers, NAN, smp);

        if (!isnan(smp->mem_avail_mb) && smp->mem_avail_mb < s->cfg.near_oom_mb) {
                s->near_oom_samples++;
                if (!s->near_oom_first.set)
                        point_set(&s->near_oom_first, smp->mem_avail_mb, smp->compilers, smp);
                if (!isnan(smp->compilers)) {
                        s->near_oom_compilers_sum += smp->compilers;
                        s->near_oom_compilers_n++;
                }
        }
        if (!isnan(smp->disk_avail_gb) && smp->disk_avail_gb < s->cfg.low_disk_gb) {
                s->low_disk_samples++;
                if (!s->low_disk_first.set)
                        point_set(&s->low_disk_first, smp->disk_avail_gb, NAN, smp);
        }
}
