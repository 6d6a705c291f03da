/* SPDX-License-Identifier: MIT */
#include "model/summary.h"
#include "model/execs.h"
#include "model/run.h"
#include "model/targets.h"

#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

/* The summary's figures are in the CSV's units. Dividing by a power of two
 * is exact: these are the CSV's values to the bit. */
#define MB(bytes) ((bytes) / SAMPLE_MIB)
#define GB(bytes) ((bytes) / SAMPLE_GIB)

static void point_set(struct summary_point *p, double value, double aux, const struct sample *smp)
{
        p->set = true;
        p->value = value;
        p->aux = aux;
        p->epoch = smp->epoch;
        p->elapsed_s = smp->elapsed_s;
        copy_utf8_str(p->stage, sizeof(p->stage), smp->stage);
        copy_utf8_str(p->context, sizeof(p->context), smp->context);
        copy_utf8_str(p->running, sizeof(p->running), smp->running);
}

/* Strict comparisons: on ties the first occurrence stays. */
static void point_best(struct summary_point *p, bool max, double value, double aux,
                       const struct sample *smp)
{
        if (!isnan(value) && (!p->set || (max ? value > p->value : value < p->value)))
                point_set(p, value, aux, smp);
}

static void proc_clear(struct summary_proc *p)
{
        p->pid = p->mb = p->anon_mb = NAN;
        p->label[0] = '\0';
}

/* Two labels' first words (their comm) are the same. */
static bool same_comm(const char *a, const char *b)
{
        size_t n = strcspn(a, " ");

        return n == strcspn(b, " ") && strncmp(a, b, n) == 0;
}

/* The victim of the last rise: the kernel's own report when the row has a
 * new one; else the largest of the previous row's top processes that is
 * gone now, or whose memory is (a process being killed may still be
 * listed), which may take a row or two; until then the largest process
 * last seen (a build killed before the first tick has no other). */
static void find_victim(struct summary_build *b, const struct sample *smp,
                        const struct summary_proc top[static 3])
{
        struct summary_oom *e = &b->oom[b->noom - 1];

        if (smp->oom_victim && smp->oom_victim[0] && isfinite(smp->oom_victim_pid) &&
            !(smp->oom_victim_pid == b->kernel_victim_pid)) {
                proc_clear(&e->victim);
                copy_utf8_str(e->victim.label, sizeof(e->victim.label), smp->oom_victim);
                e->victim.pid = smp->oom_victim_pid;
                /* its label and size, unless the pid ran another program then */
                for (size_t i = 0; i < 3; i++)
                        if (b->prev_top[i].label[0] && b->prev_top[i].pid == smp->oom_victim_pid &&
                            same_comm(b->prev_top[i].label, smp->oom_victim))
                                e->victim = b->prev_top[i];
                copy_utf8_str(e->victim_source, sizeof(e->victim_source), "kernel");
                b->kernel_victim_pid = smp->oom_victim_pid;
                b->victim_pending = 0;
                return;
        }
        for (size_t i = 0; i < 3; i++) {
                bool still = !b->prev_top[i].label[0]; /* no process: none gone */

                for (size_t k = 0; k < 3; k++)
                        if (top[k].label[0] && top[k].pid == b->prev_top[i].pid &&
                            !(top[k].mb < 0.5 * b->prev_top[i].mb))
                                still = true;
                if (!still) {
                        e->victim = b->prev_top[i];
                        copy_utf8_str(e->victim_source, sizeof(e->victim_source), "last seen");
                        b->victim_pending = 0;
                        return;
                }
        }
        if (!e->victim.label[0] && b->last_seen.label[0]) {
                e->victim = b->last_seen;
                copy_utf8_str(e->victim_source, sizeof(e->victim_source), "last seen");
        }
        b->victim_pending--;
}

void summary_end_run(struct summary *s, const struct run_info *ri)
{
        struct summary_build *b = &s->build;
        const char *name, *slash;

        if (!ri || ri->term_signal != SIGKILL)
                return;
        if (ri->exit_comm && ri->exit_comm[0]) {
                name = ri->exit_comm; /* the name it died under */
        } else {
                if (!ri->argv || !ri->argv[0] || !ri->argv[0][0])
                        return;
                slash = strrchr(ri->argv[0], '/');
                name = slash && slash[1] ? slash + 1 : ri->argv[0];
        }
        for (size_t i = 0; i < MIN(b->noom, (size_t)SUMMARY_OOM_MAX); i++) {
                struct summary_oom *e = &b->oom[i];

                /* a kill the last row saw, as the build's own process died
                 * of SIGKILL: that death, not a guess at what vanished */
                if (e->victim.label[0] && !(strcmp(e->victim_source, "last seen") == 0 &&
                                            i + 1 == b->noom && e->elapsed_s >= s->last_elapsed_s))
                        continue;
                proc_clear(&e->victim);
                copy_utf8_str(e->victim.label, sizeof(e->victim.label), name);
                e->victim.pid = ri->pid > 0 ? (double)ri->pid : NAN;
                copy_utf8_str(e->victim_source, sizeof(e->victim_source), "the build");
        }
}

/* The row's top processes, largest first; unset ones have no label. */
static void row_top(const struct sample *smp, struct summary_proc top[static 3])
{
        const char *label[3] = {smp->top_proc, smp->top2_proc, smp->top3_proc};
        double mb[3] = {MB(smp->top_proc_bytes), MB(smp->top2_proc_bytes),
                        MB(smp->top3_proc_bytes)};
        double pid[3] = {smp->top_pid, smp->top2_pid, smp->top3_pid};

        for (size_t i = 0; i < 3; i++) {
                copy_utf8_str(top[i].label, sizeof(top[i].label), label[i]);
                top[i].mb = mb[i];
                top[i].pid = pid[i];
                top[i].anon_mb = i == 0 ? MB(smp->top_proc_anon_bytes) : NAN;
        }
}

/* Counters keep their last known value: a row that could not read one
 * (empty) does not erase it. */
static void last(double *dst, double v)
{
        if (!isnan(v))
                *dst = v;
}

/* The next entry of a running column at *r: a unit and its " xN" when
 * several run at once. Its length, 0 at the end; *r moves past it. */
static size_t running_entry(const char **r, const char **ret_start)
{
        const char *p = *r, *e;

        while (*p == ' ')
                p++;
        *ret_start = p;
        e = p;
        while (*e && *e != ' ')
                e++;
        if (e[0] == ' ' && e[1] == 'x' && e[2] >= '0' && e[2] <= '9') {
                const char *m = e + 2;

                while (*m >= '0' && *m <= '9')
                        m++;
                if (*m == ' ' || *m == '\0')
                        e = m;
        }
        *r = e;
        return (size_t)(e - p);
}

/* The unit of an entry: up to its " xN". */
static size_t entry_unit_len(const char *entry, size_t n)
{
        const char *sp = memchr(entry, ' ', n);

        return sp ? (size_t)(sp - entry) : n;
}

static bool running_has_unit(const char *r, const char *unit, size_t n)
{
        const char *start;
        size_t k;

        while ((k = running_entry(&r, &start)) > 0)
                if (entry_unit_len(start, k) == n && memcmp(start, unit, n) == 0)
                        return true;
        return false;
}

/* dst = a's entries, then b's whose unit a does not name, as many as fit
 * whole. */
static void running_union(char *dst, size_t cap, const char *a, const char *b)
{
        char out[SAMPLE_RUNNING_MAX + 1];
        const char *r, *start;
        size_t len, k;

        copy_utf8_str(out, sizeof(out), a);
        len = strlen(out);
        for (r = b ? b : ""; (k = running_entry(&r, &start)) > 0;) {
                if (running_has_unit(out, start, entry_unit_len(start, k)))
                        continue;
                if (len + (len > 0) + k > SAMPLE_RUNNING_MAX)
                        break;
                if (len > 0)
                        out[len++] = ' ';
                memcpy(out + len, start, k);
                len += k;
                out[len] = '\0';
        }
        copy_utf8_str(dst, cap, out);
}

static void build_add(struct summary_build *b, const struct sample *smp)
{
        struct summary_proc top[3];

        row_top(smp, top);
        if (smp->cg_mode && smp->cg_mode[0]) {
                copy_utf8_str(b->mode, sizeof(b->mode), smp->cg_mode);
                b->estimates = strcmp(b->mode, "none") == 0;
        }
        last(&b->cpu_user_s, smp->cg_cpu_user_s);
        last(&b->cpu_sys_s, smp->cg_cpu_sys_s);
        last(&b->io_read_mb, MB(smp->cg_io_read_bytes));
        last(&b->io_write_mb, MB(smp->cg_io_write_bytes));
        for (int i = 0; i < 3; i++) {
                last(&b->psi.some_s[i], smp->cg_psi.some_s[i]);
                last(&b->psi.full_s[i], smp->cg_psi.full_s[i]);
        }
        b->pids_peak = execs_max(execs_max(b->pids_peak, smp->cg_pids_peak), smp->cg_pids);
        point_best(&b->mem_cur_peak, true, MB(smp->cg_mem_bytes), NAN, smp);
        point_best(&b->mem_anon_peak, true, MB(smp->cg_mem_anon_bytes), MB(smp->cg_mem_file_bytes),
                   smp);

        /* The kernel's peak happened at the first row that shows it (the
         * row's own sample is the peak, within a charge batch) or between
         * that row and the previous one. Between: its culprit is the
         * largest process of either row (by the row's time it may have
         * exited, or be dying with its memory freed), and the units in
         * flight are both rows' (what ran at the previous row was still
         * running at the peak or ended after it; what runs now may have
         * started before it). */
        if (!isnan(smp->cg_mem_peak_bytes) && b->mem_peak.set &&
            MB(smp->cg_mem_peak_bytes) > b->mem_peak.value &&
            MB(smp->cg_mem_peak_bytes) - b->mem_peak.value <= SUMMARY_PEAK_BATCH_MB) {
                /* The same peak, lifted by a late charge batch
                 * (SUMMARY_PEAK_BATCH_MB): its moment, culprit and units stay. */
                b->mem_peak.value = MB(smp->cg_mem_peak_bytes);
        } else if (!isnan(smp->cg_mem_peak_bytes) &&
                   (!b->mem_peak.set || MB(smp->cg_mem_peak_bytes) > b->mem_peak.value)) {
                bool at_row =
                    !isnan(smp->cg_mem_bytes) && smp->cg_mem_peak_bytes - smp->cg_mem_bytes <=
                                                     SUMMARY_PEAK_BATCH_MB * SAMPLE_MIB;

                /* aux: the page cache then (the kernel's peak counts it) */
                point_set(&b->mem_peak, MB(smp->cg_mem_peak_bytes), MB(smp->cg_mem_file_bytes),
                          smp);
                b->mem_peak_proc = top[0];
                if (!at_row) {
                        if (b->prev_top[0].label[0] &&
                            (!top[0].label[0] || b->prev_top[0].mb > top[0].mb))
                                b->mem_peak_proc = b->prev_top[0];
                        running_union(b->mem_peak.running, sizeof(b->mem_peak.running),
                                      b->prev_running, smp->running);
                }
        }

        if (!isnan(smp->cg_oom_kills)) {
                if (!isnan(b->prev_oom_kills) && smp->cg_oom_kills > b->prev_oom_kills) {
                        if (b->noom < SUMMARY_OOM_MAX) {
                                struct summary_oom *e = &b->oom[b->noom];

                                *e = (struct summary_oom){.epoch = smp->epoch,
                                                          .elapsed_s = smp->elapsed_s,
                                                          .kills = smp->cg_oom_kills};
                                copy_utf8_str(e->stage, sizeof(e->stage), smp->stage);
                                proc_clear(&e->victim);
                                b->victim_pending = 3;
                        }
                        b->noom++;
                }
                b->prev_oom_kills = smp->cg_oom_kills;
                b->oom_kills = smp->cg_oom_kills;
        }
        if (b->victim_pending > 0 && b->noom > 0 && b->noom <= SUMMARY_OOM_MAX)
                find_victim(b, smp, top);
        if (top[0].label[0])
                b->last_seen = top[0];
        memcpy(b->prev_top, top, sizeof(top));
        copy_utf8_str(b->prev_running, sizeof(b->prev_running), smp->running);
}

double summary_cap_near_mb(const struct summary_config *c)
{
        return c->mem_cap_mb > 0 ? MIN(c->mem_cap_mb / 10, c->near_oom_mb) : 0;
}

double summary_jobs_mem_mb(const struct summary *s)
{
        return s->cfg.mem_cap_mb > 0 && !(s->mem_total_mb < s->cfg.mem_cap_mb) ? s->cfg.mem_cap_mb
                                                                               : s->mem_total_mb;
}

void summary_init(struct summary *s, const struct summary_config *cfg)
{
        struct summary_build *b = &s->build;

        memset(s, 0, sizeof(*s));
        s->cfg = cfg ? *cfg
                     : (struct summary_config){.near_oom_mb = SUMMARY_NEAR_OOM_MB_DEFAULT,
                                               .low_disk_gb = SUMMARY_LOW_DISK_GB_DEFAULT};
        s->first_epoch = s->last_epoch = s->last_elapsed_s = s->mem_total_mb = NAN;
        s->disk_avail_first = s->disk_avail_last = s->par.prev_elapsed_s = NAN;
        b->cpu_user_s = b->cpu_sys_s = b->oom_kills = b->io_read_mb = b->io_write_mb = NAN;
        b->pids_peak = b->prev_oom_kills = b->kernel_victim_pid = NAN;
        psi_clear(&b->psi);
        proc_clear(&b->mem_peak_proc);
        proc_clear(&b->last_seen);
        for (size_t i = 0; i < 3; i++)
                proc_clear(&b->prev_top[i]);
        s->exact.mem_used_peak_bytes = s->exact.mem_avail_min_bytes = NAN;
        s->exact.swap_used_peak_bytes = s->exact.disk_avail_min_bytes = NAN;
        s->exact.cg_mem_peak_bytes = s->exact.cg_io_read_bytes = s->exact.cg_io_write_bytes = NAN;
}

/* Units in flight as the running column names them, space-separated. */
static uint64_t running_count(const char *r)
{
        uint64_t n = 0;

        for (; r && *r; r++)
                if (*r != ' ' && (r[1] == ' ' || r[1] == '\0'))
                        n++;
        return n;
}

static void exact_add(struct summary_exact *x, const struct sample *smp)
{
        x->mem_used_peak_bytes = execs_max(x->mem_used_peak_bytes, smp->mem_used_bytes);
        x->mem_avail_min_bytes = execs_min(x->mem_avail_min_bytes, smp->mem_avail_bytes);
        x->swap_used_peak_bytes = execs_max(x->swap_used_peak_bytes, smp->swap_used_bytes);
        x->disk_avail_min_bytes = execs_min(x->disk_avail_min_bytes, smp->disk_avail_bytes);
        x->cg_mem_peak_bytes = execs_max(x->cg_mem_peak_bytes, smp->cg_mem_peak_bytes);
        last(&x->cg_io_read_bytes, smp->cg_io_read_bytes);
        last(&x->cg_io_write_bytes, smp->cg_io_write_bytes);
}

/* The interval since the previous sample, for this one's jobs; a unit
 * alone is named by the running column. */
static void par_add(struct summary_par *p, const struct sample *smp, uint64_t running)
{
        double dt = smp->elapsed_s - p->prev_elapsed_s, jobs = (double)running;
        size_t k, i;

        if (isnan(smp->elapsed_s))
                return;
        p->prev_elapsed_s = smp->elapsed_s;
        if (!isnan(smp->compilers) && smp->compilers > jobs)
                jobs = smp->compilers;
        if (isnan(smp->compilers) && !running)
                return;
        p->seen = true;
        if (!(dt > 0) || dt > 3600)
                return;
        k = (size_t)MIN(jobs, (double)SUMMARY_PAR_JOBS);
        p->by_jobs_s[k] += dt;
        if (k != 1 || running != 1)
                return;
        for (i = 0; i < p->nalone; i++)
                if (strcmp(p->alone[i].name, smp->running) == 0)
                        break;
        if (i == p->nalone && p->nalone == SUMMARY_ALONE_MAX) {
                /* full: the shortest gives its place, so a long unit alone
                 * late in the build still gets in */
                size_t m = 0;

                for (size_t q = 1; q < p->nalone; q++)
                        if (p->alone[q].s < p->alone[m].s)
                                m = q;
                p->alone[m] = p->alone[--p->nalone];
                i = p->nalone;
        }
        if (i == p->nalone) {
                p->alone[p->nalone++] = (struct summary_alone){.first_s = smp->elapsed_s};
                copy_utf8_str(p->alone[i].name, sizeof(p->alone[i].name), smp->running);
        }
        p->alone[i].s += dt;
}

/* One recorded sample (already rounded as the CSV holds it). */
static void recorded_add(struct summary *s, const struct sample *smp)
{
        double used = MB(smp->mem_used_bytes), avail = MB(smp->mem_avail_bytes);
        double disk = GB(smp->disk_avail_bytes);
        uint64_t running = running_count(smp->running);

        s->running_peak = MAX(s->running_peak, running);
        par_add(&s->par, smp, running);
        s->samples++;
        if (isnan(s->first_epoch))
                s->first_epoch = smp->epoch;
        last(&s->last_epoch, smp->epoch);
        last(&s->last_elapsed_s, smp->elapsed_s);

        point_best(&s->mem_used_peak, true, used, avail, smp);
        point_best(&s->mem_avail_min, false, avail, used, smp);
        point_best(&s->swap_used_peak, true, MB(smp->swap_used_bytes), NAN, smp);
        if (isnan(s->mem_total_mb) && !isnan(used) && !isnan(avail))
                s->mem_total_mb = used + avail;

        point_best(&s->disk_avail_min, false, disk, smp->disk_pct, smp);
        if (isnan(s->disk_avail_first))
                s->disk_avail_first = disk;
        last(&s->disk_avail_last, disk);

        point_best(&s->load1_peak, true, smp->load1, NAN, smp);
        point_best(&s->cpu_pct_peak, true, smp->cpu_pct, NAN, smp);
        if (!isnan(smp->cpu_pct)) {
                s->cpu_pct_sum += smp->cpu_pct;
                s->cpu_pct_n++;
        }
        point_best(&s->compilers_peak, true, smp->compilers, NAN, smp);

        /* the headroom: the host's, or the cap's when that is less */
        double build =
            MB(isnan(smp->cg_mem_anon_bytes) ? smp->cg_mem_bytes : smp->cg_mem_anon_bytes);
        double head = s->cfg.mem_cap_mb > 0 && !isnan(build) ? s->cfg.mem_cap_mb - build : NAN;
        bool kill = smp->cg_oom_kills > s->build.prev_oom_kills; /* false with a NAN */

        if ((!isnan(avail) && avail < s->cfg.near_oom_mb) ||
            (!isnan(head) && head < summary_cap_near_mb(&s->cfg)) || kill) {
                s->near_oom_samples++;
                if (!s->near_oom_first.set)
                        point_set(&s->near_oom_first,
                                  isnan(head) || avail < head ? avail : MAX(head, 0),
                                  smp->compilers, smp);
                if (!isnan(smp->compilers)) {
                        s->near_oom_compilers_sum += smp->compilers;
                        s->near_oom_compilers_n++;
                }
        }
        if (!isnan(disk) && disk < s->cfg.low_disk_gb) {
                s->low_disk_samples++;
                if (!s->low_disk_first.set)
                        point_set(&s->low_disk_first, disk, NAN, smp);
        }
        build_add(&s->build, smp);
}

void summary_add(struct summary *s, const struct sample *smp)
{
        struct sample rec;

        sample_round(smp, &rec);
        recorded_add(s, &rec);
        exact_add(&s->exact, smp);
}

/* Below either of these, available memory counts as "near zero". */
#define OOM_EDGE_AVAIL_MB 512.0
#define OOM_EDGE_AVAIL_FRACTION 0.05
/* A falling disk is worth a reading once its minimum came this close. */
#define DISK_FALLING_FACTOR 1.5

void summary_readings(const struct summary *s, unsigned ncpu, struct summary_readings *ret)
{
        const struct summary_point *avail = &s->mem_avail_min;

        *ret = (struct summary_readings){.ram_bound_compilers = NAN};
        ret->oom_zero = avail->set && (avail->value < OOM_EDGE_AVAIL_MB ||
                                       (isfinite(s->mem_total_mb) &&
                                        avail->value < OOM_EDGE_AVAIL_FRACTION * s->mem_total_mb));
        ret->oom_swap = s->swap_used_peak.set && s->swap_used_peak.value > 0;
        ret->oom_edge = ret->oom_zero || ret->oom_swap;
        ret->oom_at = ret->oom_zero ? &s->mem_avail_min : &s->swap_used_peak;
        ret->disk_falling = s->disk_avail_min.set && isfinite(s->disk_avail_first) &&
                            isfinite(s->disk_avail_last) &&
                            s->disk_avail_last < s->disk_avail_first &&
                            s->disk_avail_min.value < DISK_FALLING_FACTOR * s->cfg.low_disk_gb;
        ret->cpu_wait =
            (strcmp(s->build.mode, "v2") == 0 || strcmp(s->build.mode, "hybrid") == 0) &&
                    s->last_elapsed_s > 0
                ? s->build.psi.some_s[PSI_CPU] / s->last_elapsed_s
                : NAN;
        ret->cap_limit =
            s->cfg.mem_cap_mb > 0 &&
            ((isfinite(s->build.oom_kills) && s->build.oom_kills > 0) ||
             (s->build.mem_anon_peak.set &&
              s->build.mem_anon_peak.value >= s->cfg.mem_cap_mb - summary_cap_near_mb(&s->cfg)));
        if (!ret->cap_limit && s->near_oom_samples > 0 && s->near_oom_compilers_n > 0 && ncpu > 0) {
                ret->ram_bound_compilers =
                    s->near_oom_compilers_sum / (double)s->near_oom_compilers_n;
                ret->ram_bound = ret->ram_bound_compilers < ncpu / 2.0;
        }
}

/* The output of an edge as a running column names a unit: its last path
 * part, an object's ".o" dropped ("foo.cpp.o" -> "foo.cpp"). */
static void edge_name(const char *output, char *buf, size_t cap)
{
        const char *slash = strrchr(output, '/');
        const char *base = slash && slash[1] ? slash + 1 : output;
        size_t n = strlen(base);

        if (n > 2 && strcmp(base + n - 2, ".o") == 0)
                n -= 2;
        copy_utf8(buf, cap, base, n);
}

static void place_point(struct summary_point *p, const struct ninja_edge *ev, size_t n, double off)
{
        char out[SAMPLE_RUNNING_MAX + 1] = "", name[SAMPLE_RUNNING_MAX + 1];
        size_t len = 0, left = 0;

        if (!p->set || p->running[0] || !isfinite(p->elapsed_s))
                return;
        for (size_t i = 0; i < n; i++) {
                double start = (double)ev[i].start_ms / 1000.0 + off;
                double end = (double)ev[i].end_ms / 1000.0 + off;
                size_t k;

                if (!(start <= p->elapsed_s && p->elapsed_s < end))
                        continue;
                edge_name(ev[i].output, name, sizeof(name));
                k = strlen(name);
                /* room kept for " +NNNN" */
                if (k == 0 || len + (len ? 1 : 0) + k + 8 > SAMPLE_RUNNING_MAX) {
                        left++;
                        continue;
                }
                if (len)
                        out[len++] = ' ';
                memcpy(out + len, name, k + 1);
                len += k;
        }
        if (left && len) /* fits: room was kept */
                snprintf(out + len, sizeof(out) - len, " +%zu", left);
        if (len)
                copy_utf8_str(p->running, sizeof(p->running), out);
}

void summary_place_edges(struct summary *s, const struct ninja_edge *ev, size_t n, double off)
{
        struct summary_point *pts[] = {
            &s->mem_used_peak,  &s->mem_avail_min,  &s->swap_used_peak,     &s->disk_avail_min,
            &s->load1_peak,     &s->cpu_pct_peak,   &s->compilers_peak,     &s->near_oom_first,
            &s->low_disk_first, &s->build.mem_peak, &s->build.mem_cur_peak, &s->build.mem_anon_peak,
        };

        if (!ev || !n || !isfinite(off))
                return;
        for (size_t i = 0; i < ARRAY_SIZE(pts); i++)
                place_point(pts[i], ev, n, off);
}
