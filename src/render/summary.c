/* SPDX-License-Identifier: MIT */
#include "render/summary.h"
#include "render/summary-int.h"

#include "model/baseline.h"
#include "model/critpath.h"

#include "model/figures.h"
#include "model/jobs.h"
#include "model/targets.h"
#include "model/unitname.h"
#include "model/units.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"
#include "render/jsonw.h"
#include "runfiles/targetsjson.h"
#include "runfiles/runjson.h"

#define READINGS_MAX 8

struct reading {
        const char *id;
        struct dbuf text; /* raw: may hold the build's bytes */
};

const char *summary_num(double v, int decimals, char buf[static SUMMARY_NUM_LEN])
{
        if (!isfinite(v))
                return "?";
        /* no "-0" for what rounds to zero */
        if (fabs(v) < 0.5 * pow(10.0, -decimals))
                v = 0.0;
        /* room for any finite double at a text's few decimals: never cut */
        snprintf(buf, SUMMARY_NUM_LEN, "%.*f", decimals, v);
        return buf;
}

const char *summary_size(double bytes, char buf[static 32])
{
        fmt_size(bytes, buf, 32);
        return buf;
}

/* An epoch as ISO 8601, "?" unknown. */
static const char *iso(double epoch, char buf[static 64])
{
        return format_iso8601(epoch, buf) < 0 ? "?" : buf;
}

#define ISO_STR(epoch) iso(epoch, (char[64]){0})

void summary_put_text(struct dwriter *w, const char *s)
{
        if (dw_ok(w))
                dw_check(w, run_append_utf8_lossy(w->b, s, strlen(s), true));
}

/* label then the build's text s (", running heavy.c ld:app.so"); nothing
 * when s is empty. */
static void put_if(struct dwriter *w, const char *label, const char *s)
{
        if (!s[0])
                return;
        dw_puts(w, label);
        summary_put_text(w, s);
}

/* ", stage S, running U (last printed: C)" for the parts that are known:
 * what was running leads, the build's last printed line second (ninja
 * prints an edge when it finishes, so at a peak its line names an edge
 * done; the process scan names the ones in flight). Without units in
 * flight, ", while C". */
static void put_where(struct dwriter *w, const struct summary_point *p)
{
        put_if(w, ", stage ", p->stage);
        put_if(w, ", running ", p->running);
        put_if(w, p->running[0] ? " (last printed: " : ", while ", p->context);
        if (p->running[0] && p->context[0])
                dw_puts(w, ")");
}

static double duration_of(const struct summary *s, const struct run_info *ri, bool *ret_to_last)
{
        *ret_to_last = false;
        if (!ri)
                return NAN;
        return figure_run_duration(ri->start_epoch, ri->end_epoch, s->last_epoch, ret_to_last);
}

/* "exit 0", "exit 2", "killed by SIGKILL", "exit status unknown"; after
 * an OOM kill that failed the build, "OOM-killed (exit 2)" (the outcome
 * word of figure_outcome, the status that followed). */
static void put_exit(struct dwriter *w, const struct summary *s, const struct run_info *ri)
{
        char o[FIGURE_OUTCOME_LEN];
        bool oom =
            ri && strcmp(figure_outcome(ri->exit_code, ri->term_signal, s->build.oom_kills, o),
                         "OOM-killed") == 0;

        if (oom)
                dw_puts(w, "OOM-killed (");
        if (ri && ri->term_signal > 0)
                dw_printf(w, "killed by %s", figure_outcome(-1, ri->term_signal, 0, o));
        else if (ri && ri->exit_code >= 0)
                dw_printf(w, "exit %d", ri->exit_code);
        else
                dw_puts(w, "exit status unknown");
        if (oom)
                dw_puts(w, ")");
}

/* What failed: "foo.o (make)", then its first and last error lines, each
 * after lead (the last only when there were several). */
static void put_failure(struct dwriter *w, const struct run_failure *f, const char *lead)
{
        if (!f)
                return;
        if (f->target[0]) {
                dw_printf(w, "%sfailed: ", lead);
                summary_put_text(w, f->target);
                dw_printf(w, " (%s)", f->tool);
        }
        if (f->first[0]) {
                dw_printf(w, "%s%serror: ", lead, f->errors > 1 ? "first " : "");
                summary_put_text(w, f->first);
        }
        if (f->errors > 1) {
                dw_printf(w, "%slast error: ", lead);
                summary_put_text(w, f->last);
        }
}

/* "88.9 MiB at +0.6s, running a.c b.c" */
static void put_size_at(struct dwriter *w, const struct summary_point *p)
{
        dw_printf(w, "%s at +%s", SIZE_STR(p->value), DURATION_STR(p->elapsed_s));
        put_if(w, ", running ", p->running);
}

/* The build's side of the OOM edge: its anonymous memory, which the OOM
 * killer weighs (the kernel's peak counts page cache too). */
static void put_oom_anon(const struct summary *s, struct dwriter *w)
{
        struct unit u;

        if (!s->build.mem_anon_peak.set)
                return;
        dw_puts(w, "; the build's working memory (anon) peaked at ");
        put_size_at(w, &s->build.mem_anon_peak);
        /* a unit killed between two samples: its exact peak says more */
        if (s->units && units_top(s->units, &u, 1) && u.exact &&
            u.peak_mb > 1.1 * s->build.mem_anon_peak.value) {
                dw_printf(w,
                          " as sampled; its largest unit, %s %s, held %s at its peak (the "
                          "kernel's figure)",
                          u.tool, u.name, SIZE_STR(u.peak_mb));
        }
}

/* Each reading (decided by summary_readings()) writes its text and returns
 * true, or returns false when it does not apply. */
static bool reading_oom_edge(const struct summary *s, const struct summary_readings *rd,
                             struct dwriter *w)
{
        bool zero = rd->oom_zero, swap = rd->oom_swap;
        const struct summary_point *p = rd->oom_at;

        if (!rd->oom_edge)
                return false;
        dw_puts(w, "OOM edge: ");
        if (zero)
                dw_printf(w, "available memory down to %s%s", SIZE_STR(s->mem_avail_min.value),
                          swap ? " and " : "");
        if (swap)
                dw_printf(w, "swap in use (peak %s)", SIZE_STR(s->swap_used_peak.value));
        dw_printf(w, " at %s", ISO_STR(p->epoch));
        if (p->running[0]) {
                dw_puts(w, ", while running ");
                summary_put_text(w, p->running);
        } else if (p->context[0] || p->stage[0]) {
                dw_puts(w, ", while ");
                dw_puts(w, p->context[0] ? p->context : p->stage);
        }
        put_oom_anon(s, w);
        return true;
}

static bool reading_disk_falling(const struct summary *s, const struct summary_readings *rd,
                                 struct dwriter *w)
{
        if (!rd->disk_falling)
                return false;
        dw_printf(w,
                  "disk falling toward the threshold (%s -> %s GiB available, minimum %s GiB, "
                  "threshold %s GiB): prune build caches (docker builder prune, ccache -C / "
                  "sccache --zero-stats ...)",
                  NUM_STR(s->disk_avail_first, 2), NUM_STR(s->disk_avail_last, 2),
                  NUM_STR(s->disk_avail_min.value, 2), NUM_STR(s->cfg.low_disk_gb, 2));
        return true;
}

/* "the 96.0 MiB cap (--memory-max) was the limit: OOM kills 1; the
 * build's working memory (anon) peaked at 87.1 MiB at +0.3s, running a.c
 * b.c: raise the cap, or run fewer of these at once" */
static bool reading_cap(const struct summary *s, const struct summary_readings *rd,
                        struct dwriter *w)
{
        if (!rd->cap_limit)
                return false;
        dw_printf(w, "the %s cap (--memory-max) was the limit", SIZE_STR(s->cfg.mem_cap_mb));
        if (isfinite(s->build.oom_kills) && s->build.oom_kills > 0)
                dw_printf(w, ": OOM kills %.0f", s->build.oom_kills);
        put_oom_anon(s, w);
        dw_puts(w, ": raise the cap, or run fewer of these at once");
        return true;
}

/* The CPUs were the limit: the build waited for them a fifth of its time. */
static bool reading_cpu_wait(const struct summary *s, const struct summary_readings *rd,
                             struct dwriter *w)
{
        if (!(rd->cpu_wait >= 0.2))
                return false;
        dw_printf(w,
                  "the build waited for CPU %.0f %% of its wall time (its CPU pressure; the "
                  "host's CPU %.0f %% busy on average): the CPUs were the limit, more cores or "
                  "a quieter host would shorten it",
                  100 * MIN(rd->cpu_wait, 1.0),
                  s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN);
        return true;
}

static bool reading_ram_bound(const struct summary *s, const struct run_info *ri,
                              const struct summary_readings *rd, struct dwriter *w)
{
        if (!rd->ram_bound)
                return false;
        dw_printf(w,
                  "compilers well below the core count while memory was low (%s on average "
                  "over %llu near-OOM samples, %u cores): the stage is RAM-bound; the lever is "
                  "more RAM, not more -j",
                  NUM_STR(rd->ram_bound_compilers, 1), (unsigned long long)s->near_oom_compilers_n,
                  ri->ncpu);
        return true;
}

/* How many jobs the machine's memory and CPUs allow (model/jobs.c), once
 * there are enough units to say it. */
static bool reading_jobs(const struct summary *s, const struct run_info *ri, struct dwriter *w)
{
        struct jobs_reading j;

        if (jobs_read(s->units, summary_jobs_mem_mb(s), ri ? ri->ncpu : 0, (size_t)s->running_peak,
                      &j) < 0)
                return false;
        if (dw_ok(w))
                dw_check(w, jobs_render(&j, w->b));
        return true;
}

/* The time with fewer jobs than CPUs, and what ran alone (model/jobs.c). */
static bool reading_parallelism(const struct summary *s, const struct run_info *ri,
                                struct dwriter *w)
{
        struct par_reading p;

        if (par_read(s, ri ? ri->ncpu : 0, &p) < 0 || !p.worth)
                return false;
        if (dw_ok(w))
                dw_check(w, par_render(&p, w->b));
        return true;
}

/* Fills rd[0..n) (zeroed by the caller) and returns n; the caller
 * releases every text (also on failure, -ENOMEM). */
static int readings_compute(const struct summary *s, const struct run_info *ri,
                            struct reading rd[static READINGS_MAX])
{
        struct summary_readings sr;
        size_t n = 0;
        int err = 0;

        summary_readings(s, ri ? ri->ncpu : 0, &sr);
        for (int k = 0; k < READINGS_MAX; k++) {
                struct dwriter w = DWRITER_INIT(&rd[n].text);
                static const char *const ids[READINGS_MAX] = {
                    "cap",      "oom_edge", "disk_falling", "ram_bound",
                    "cpu_wait", "jobs",     "parallelism",  "critical_path"};
                bool got = k == 0   ? reading_cap(s, &sr, &w)
                           : k == 1 ? reading_oom_edge(s, &sr, &w)
                           : k == 2 ? reading_disk_falling(s, &sr, &w)
                           : k == 3 ? reading_ram_bound(s, ri, &sr, &w)
                           : k == 4 ? reading_cpu_wait(s, &sr, &w)
                           : k == 5 ? reading_jobs(s, ri, &w)
                           : k == 6 ? reading_parallelism(s, ri, &w)
                                    : summary_path_reading(s->path, &w);

                if (w.err < 0)
                        err = w.err;
                else if (got)
                        rd[n++].id = ids[k];
        }
        return err < 0 ? err : (int)n;
}

/* ---- JSON ---- */

/* Figures print as they were recorded: rounded to their column's decimals,
 * whole numbers as integers, unknown as null. */
json_t *summary_jnum(double v, int decimals)
{
        double m;

        if (!isfinite(v))
                return json_null();
        if (decimals == 0 && fabs(v) < 9007199254740992.0)
                return json_integer((json_int_t)llround(v));
        m = pow(10.0, decimals);
        if (fabs(v) * m < 9007199254740992.0)
                v = round(v * m) / m;
        if (v == 0.0)
                v = 0.0; /* no "-0.0" */
        return json_real(v);
}

static json_t *jtime(double epoch)
{
        char iso[64];

        if (format_iso8601(epoch, iso) < 0)
                return json_null();
        return json_string(iso);
}

/* {"value", aux_key?, "time", "elapsed_s", "stage", "context", "running"}
 * or null. */
static json_t *jpoint(const struct summary_point *p, int decimals, const char *aux_key,
                      int aux_decimals)
{
        if (!p->set)
                return json_null();
        /* o*: no aux member without aux_key */
        return json_pack("{s:o, s:o*, s:o, s:o, s:o, s:o, s:o}", "value",
                         summary_jnum(p->value, decimals), aux_key ? aux_key : "",
                         aux_key ? summary_jnum(p->aux, aux_decimals) : NULL, "time",
                         jtime(p->epoch), "elapsed_s", summary_jnum(p->elapsed_s, 3), "stage",
                         jsonw_text(p->stage), "context", jsonw_text(p->context), "running",
                         jsonw_text(p->running));
}

static json_t *jwarning(uint64_t count, const struct summary_point *first, double threshold,
                        const char *threshold_key, int decimals)
{
        bool f = first->set;

        return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "count",
                         (json_int_t)MIN(count, (uint64_t)INT64_MAX), threshold_key,
                         summary_jnum(threshold, decimals), "first_time",
                         f ? jtime(first->epoch) : json_null(), "first_elapsed_s",
                         f ? summary_jnum(first->elapsed_s, 3) : json_null(), "stage",
                         f ? jsonw_text(first->stage) : json_null(), "context",
                         f ? jsonw_text(first->context) : json_null());
}

/* {"target", "tool", "first_error", "last_error", "errors"}; null: nothing named. */
static json_t *failure_json(const struct run_failure *f)
{
        if (!f || (!f->target[0] && !f->errors))
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o, s:I}", "target",
                         jsonw_text(f->target[0] ? f->target : NULL), "tool",
                         jsonw_text(f->tool[0] ? f->tool : NULL), "first_error",
                         jsonw_text(f->first[0] ? f->first : NULL), "last_error",
                         jsonw_text(f->last[0] ? f->last : NULL), "errors", (json_int_t)f->errors);
}

static json_t *jrun(const struct summary *s, const struct run_info *ri)
{
        bool to_last;
        double dur = duration_of(s, ri, &to_last);
        char word[FIGURE_OUTCOME_LEN], sig[FIGURE_OUTCOME_LEN];

        if (!ri)
                return json_null();
        return json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:s, s:o, s:b, s:o, s:o}",
            "command", jsonw_argv(ri->argv), "run_id", jsonw_text(ri->run_id), "kind",
            jsonw_text(ri->kind), "cwd", jsonw_text(ri->cwd), "host", jsonw_text(ri->host), "pid",
            ri->pid > 0 ? json_integer(ri->pid) : json_null(), "start", jtime(ri->start_epoch),
            "end", jtime(ri->end_epoch), "duration_s", summary_jnum(dur, 3),
            "duration_to_last_sample", to_last, "exit_code",
            ri->exit_code >= 0 ? json_integer(ri->exit_code) : json_null(), "signal",
            ri->term_signal > 0 ? json_string(figure_outcome(-1, ri->term_signal, 0, sig))
                                : json_null(),
            "outcome", figure_outcome(ri->exit_code, ri->term_signal, s->build.oom_kills, word),
            "failure", failure_json(s->failure), "finished", ri->finished, "ncpu",
            ri->ncpu > 0 ? json_integer(ri->ncpu) : json_null(), "interval_s",
            summary_jnum(ri->interval, 3));
}

/* ---- the build's own accounting ---- */

static bool build_psi_is_host(const struct summary_build *b)
{
        return strcmp(b->mode, "none") == 0 || strcmp(b->mode, "v1") == 0;
}

static json_t *jproc(const struct summary_proc *p)
{
        if (!p->label[0])
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o}", "label", jsonw_text(p->label), "mb",
                         summary_jnum(p->mb, 1), "anon_mb", summary_jnum(p->anon_mb, 1), "pid",
                         summary_jnum(p->pid, 0));
}

static json_t *joom_events(const struct summary_build *b)
{
        json_t *ooms = json_array();

        for (size_t i = 0; ooms && i < MIN(b->noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                const struct summary_oom *e = &b->oom[i];
                json_t *j =
                    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "time", jtime(e->epoch),
                              "elapsed_s", summary_jnum(e->elapsed_s, 3), "kills",
                              summary_jnum(e->kills, 0), "stage", jsonw_text(e->stage), "victim",
                              jproc(&e->victim), "victim_source", jsonw_text(e->victim_source));

                if (!j || json_array_append_new(ooms, j) < 0)
                        break; /* as many as memory allowed */
        }
        return ooms;
}

/* json_pack() steals every "o" value, also when it fails (a NULL one means
 * an allocation failed below): no guard per member. */
static json_t *jbuild(const struct summary *s)
{
        const struct summary_build *b = &s->build;
        json_t *peak;

        if (!b->mode[0])
                return json_null();
        peak = jpoint(&b->mem_peak, 1, "file_mb", 1);
        if (peak && b->mem_peak.set &&
            json_object_set_new(peak, "process", jproc(&b->mem_peak_proc)) < 0) {
                json_decref(peak);
                peak = NULL;
        }
        return json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "mode",
            jsonw_text(b->mode), "estimates",
            b->estimates ? json_pack("[s,s,s,s]", "cpu", "memory", "io", "pids") : json_array(),
            "cpu_user_s", summary_jnum(b->cpu_user_s, 3), "cpu_sys_s",
            summary_jnum(b->cpu_sys_s, 3), "mem_peak_mb", peak, "mem_max_sampled_mb",
            jpoint(&b->mem_cur_peak, 1, NULL, 0), "mem_anon_peak_mb",
            jpoint(&b->mem_anon_peak, 1, "file_mb", 1), "oom_kills", summary_jnum(b->oom_kills, 0),
            "oom_events", joom_events(b), "io_read_mb", summary_jnum(b->io_read_mb, 1),
            "io_write_mb", summary_jnum(b->io_write_mb, 1), "pressure",
            json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "source",
                      build_psi_is_host(b) ? "host" : "cgroup", "cpu_some_s",
                      summary_jnum(b->psi.some_s[PSI_CPU], 3), "cpu_full_s",
                      summary_jnum(b->psi.full_s[PSI_CPU], 3), "mem_some_s",
                      summary_jnum(b->psi.some_s[PSI_MEM], 3), "mem_full_s",
                      summary_jnum(b->psi.full_s[PSI_MEM], 3), "io_some_s",
                      summary_jnum(b->psi.some_s[PSI_IO], 3), "io_full_s",
                      summary_jnum(b->psi.full_s[PSI_IO], 3)),
            "pids_peak", summary_jnum(b->pids_peak, 0));
}

static json_t *jreadings(const struct reading *rd, size_t nrd)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < nrd; i++)
                if (json_array_append_new(a, json_pack("{s:s, s:o}", "id", rd[i].id, "text",
                                                       jsonw_str(rd[i].text.p))) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/* {"job", "runs", "findings": [{"figure", "target", "value", "usual",
 * "spread", "change", "verdict", "cause"}]}, or null without a baseline. */
static json_t *jbaseline(const struct summary *s)
{
        const struct baseline *b = s->baseline;
        json_t *a;

        if (!b)
                return json_null();
        a = json_array();
        for (size_t i = 0; a && i < b->n; i++) {
                const struct baseline_finding *f = &b->f[i];
                json_t *e = json_pack(
                    "{s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:o}", "figure", f->figure, "target",
                    f->target[0] ? jsonw_str(f->target) : json_null(), "value",
                    summary_jnum(f->value, 4), "usual", summary_jnum(f->st.usual, 4), "spread",
                    summary_jnum(f->st.spread, 4), "change", summary_jnum(f->st.change, 4),
                    "verdict", baseline_verdict_name(f->st.verdict), "cause",
                    f->cause[0] ? jsonw_str(f->cause) : json_null());

                if (json_array_append_new(a, e) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return json_pack("{s:o, s:I, s:o}", "job", jsonw_str(b->job), "runs", (json_int_t)b->runs,
                         "findings", a);
}

static json_t *jsummary(const struct summary *s, const struct run_info *ri,
                        const struct reading *rd, size_t nrd)
{
        double avg = s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN;
        json_t *mem, *disk, *cpu, *warn, *thr;

        mem = json_pack("{s:o, s:o, s:o, s:o}", "total_mb", summary_jnum(s->mem_total_mb, 0),
                        "peak_used_mb", jpoint(&s->mem_used_peak, 0, "avail_mb", 0), "min_avail_mb",
                        jpoint(&s->mem_avail_min, 0, "used_mb", 0), "max_swap_used_mb",
                        jpoint(&s->swap_used_peak, 0, NULL, 0));
        disk = json_pack("{s:o, s:o, s:o}", "min_avail_gb", jpoint(&s->disk_avail_min, 2, "pct", 1),
                         "first_avail_gb", summary_jnum(s->disk_avail_first, 2), "last_avail_gb",
                         summary_jnum(s->disk_avail_last, 2));
        cpu = json_pack("{s:o, s:o, s:o, s:o}", "peak_load1", jpoint(&s->load1_peak, 2, NULL, 0),
                        "avg_cpu_pct", summary_jnum(avg, 1), "peak_cpu_pct",
                        jpoint(&s->cpu_pct_peak, 1, NULL, 0), "peak_compilers",
                        jpoint(&s->compilers_peak, 0, NULL, 0));
        warn = json_pack(
            "{s:o, s:o}", "near_oom",
            jwarning(s->near_oom_samples, &s->near_oom_first, s->cfg.near_oom_mb, "below_mb", 0),
            "low_disk",
            jwarning(s->low_disk_samples, &s->low_disk_first, s->cfg.low_disk_gb, "below_gb", 2));
        thr = json_pack("{s:o, s:o, s:o}", "near_oom_mb", summary_jnum(s->cfg.near_oom_mb, 0),
                        "low_disk_gb", summary_jnum(s->cfg.low_disk_gb, 2), "memory_max_mb",
                        s->cfg.mem_cap_mb > 0 ? summary_jnum(s->cfg.mem_cap_mb, 1) : json_null());
        return json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}", "run",
            jrun(s, ri), "memory", mem, "disk", disk, "cpu", cpu, "build", jbuild(s), "units",
            summary_junits(s, ri ? ri->cwd : NULL), "processes",
            ri ? runjson_procs(&ri->procs) : json_null(), "memory_guard",
            ri ? runjson_guard(&ri->guard) : json_null(), "commands_ran",
            s->ran ? json_integer((json_int_t)MIN(s->ran, (uint64_t)INT64_MAX)) : json_null(),
            "warnings", warn, "readings", jreadings(rd, nrd), "thresholds", thr, "samples",
            (json_int_t)MIN(s->samples, (uint64_t)INT64_MAX), "skipped_rows",
            (json_int_t)MIN(s->skipped_rows, (uint64_t)INT64_MAX), "baseline", jbaseline(s),
            "critical_path", targetsjson_path(s->path));
}

static void render_json(const struct summary *s, const struct run_info *ri,
                        const struct reading *rd, size_t nrd, struct dwriter *w)
{
        json_t *o = jsummary(s, ri, rd, nrd);

        if (dw_ok(w))
                dw_check(
                    w, jsonw_dump(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15),
                                  w->b));
        json_decref(o);
}

/* ---- text ---- */

/* A make build: no graph to find a critical path in. */
static bool is_make(const struct run_info *ri)
{
        const char *a = ri && ri->argv ? ri->argv[0] : NULL, *b = a ? strrchr(a, '/') : NULL;

        b = b ? b + 1 : a;
        return b && (strcmp(b, "make") == 0 || strcmp(b, "gmake") == 0);
}

/* A word as a POSIX shell would need it quoted to mean itself. */
static void put_shell_word(struct dwriter *w, const char *word)
{
        static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789@%+=:,./_-";
        size_t n = strlen(word);

        if (n > 0 && strspn(word, safe) == n) {
                dw_append(w, word, n);
                return;
        }
        dw_append(w, "'", 1);
        for (const char *p = word; *p; p++) {
                if (*p == '\'')
                        dw_puts(w, "'\\''");
                else
                        dw_append(w, p, 1);
        }
        dw_append(w, "'", 1);
}

/* argv quoted for a shell, then made safe for a terminal. */
static void put_command(struct dwriter *w, char **argv)
{
        struct dbuf q = DBUF_INIT;
        struct dwriter qw = DWRITER_INIT(&q);

        if (!argv) {
                dw_puts(w, "?");
                return;
        }
        for (char **a = argv; *a; a++) {
                if (a != argv)
                        dw_append(&qw, " ", 1);
                put_shell_word(&qw, *a);
        }
        dw_check(w, qw.err);
        if (dw_ok(w))
                dw_check(w, run_append_utf8_lossy(w->b, q.p ? q.p : "", q.len, true));
        dbuf_release(&q);
}

/* "<iso> (+<elapsed>)<where>": when and where a point happened. */
static void put_when(struct dwriter *w, const struct summary_point *p)
{
        dw_printf(w, "%s (+%s)", ISO_STR(p->epoch), DURATION_STR(p->elapsed_s));
        put_where(w, p);
}

/* "<value><unit>[ (<aux_label> <aux MiB>)] at <when>" or "no data"; a
 * size (" MiB ...", " GiB ...") as every text says one. */
static void put_point(struct dwriter *w, const struct summary_point *p, int decimals,
                      const char *unit, const char *aux_label)
{
        bool mib = strncmp(unit, " MiB", 4) == 0, gib = strncmp(unit, " GiB", 4) == 0;

        if (!p->set) {
                dw_puts(w, "no data");
                return;
        }
        if (mib || gib)
                dw_printf(w, "%s%s", SIZE_STR(gib ? p->value * 1024 : p->value), unit + 4);
        else
                dw_printf(w, "%s%s", NUM_STR(p->value, decimals), unit);
        if (aux_label)
                dw_printf(w, " (%s %s)", aux_label, SIZE_STR(p->aux));
        dw_puts(w, " at ");
        put_when(w, p);
}

void summary_near_oom_rule(const struct summary *s, char *buf, size_t len)
{
        const char *th = SIZE_STR(s->cfg.near_oom_mb),
                   *kill = isfinite(s->build.oom_kills) && s->build.oom_kills > 0
                               ? ", or an OOM kill"
                               : "";

        if (s->cfg.mem_cap_mb > 0)
                snprintf(buf, len, "available < %s, or within %s of the %s cap%s", th,
                         SIZE_STR(summary_cap_near_mb(&s->cfg)), SIZE_STR(s->cfg.mem_cap_mb), kill);
        else
                snprintf(buf, len, "available < %s%s", th, kill);
}

/* "  <label> (<rule>): N samples[, first at <when>]"; the rule of the low
 * disk: available < <threshold> GiB */
static void put_warning(struct dwriter *w, const char *label, const char *rule, uint64_t count,
                        const struct summary_point *first)
{
        dw_printf(w, "  %s (%s): %llu samples", label, rule, (unsigned long long)count);
        if (first->set) {
                dw_puts(w, ", first at ");
                put_when(w, first);
        }
        dw_append(w, "\n", 1);
}

/* The rules of the two warnings, in words. */
static void warning_rules(const struct summary *s, char oom[static 160], char disk[static 48])
{
        summary_near_oom_rule(s, oom, 160);
        snprintf(disk, 48, "available < %s", SIZE_STR(s->cfg.low_disk_gb * 1024));
}

/* "cc1 x.c 49.0 MiB (anon 40.1 MiB, pid 9)": RSS, then its own anon. */
static void put_proc(struct dwriter *w, const struct summary_proc *p)
{
        summary_put_text(w, p->label);
        if (isfinite(p->mb))
                dw_printf(w, " %s", SIZE_STR(p->mb));
        if (isfinite(p->anon_mb)) {
                dw_printf(w, " (anon %s", SIZE_STR(p->anon_mb));
                if (isfinite(p->pid))
                        dw_printf(w, ", pid %.0f", p->pid);
                dw_puts(w, ")");
        } else if (isfinite(p->pid)) {
                dw_printf(w, " (pid %.0f)", p->pid);
        }
}

/* A process's RSS above the build's anon peak needs a word: RSS counts the
 * file pages it maps, shared and charged to the cgroup once or not at all. */
static void put_proc_excess(struct dwriter *w, const struct summary_build *bd)
{
        const struct summary_proc *p = &bd->mem_peak_proc;

        if (!p->label[0] || !isfinite(p->mb) || !bd->mem_anon_peak.set ||
            p->mb <= 1.1 * bd->mem_anon_peak.value)
                return;
        dw_puts(w, " (its RSS is above the build's anon peak: RSS counts the file pages it "
                   "maps, the compiler and its libraries, shared)");
}

static void put_mode(struct dwriter *w, const struct summary_build *bd)
{
        if (bd->estimates)
                dw_puts(w, "no cgroup: estimates from the process tree in /proc");
        else
                dw_printf(w, "cgroup %s", bd->mode);
}

/* A process by its unit's name when it was one (unit_of) */
static void put_unit_proc(struct dwriter *w, const struct summary *s, const char *root,
                          const struct summary_proc *p, double at_s, bool ended)
{
        struct summary_proc v = *p;
        char name[sizeof(v.label) + UNITNAME_SHORT_MAX];

        if (summary_unit_of(s, root, v.label, at_s, ended, name, sizeof(name)))
                snprintf(v.label, sizeof(v.label), "%.*s", (int)sizeof(v.label) - 1, name);
        put_proc(w, &v);
}

const char *summary_victim_words(const struct summary_oom *e)
{
        return strcmp(e->victim_source, "kernel") == 0 ? "victim (the kernel's report)"
               : strcmp(e->victim_source, "the build") == 0
                   ? "victim (the build's own process, killed by SIGKILL)"
                   : "likely victim (last seen)";
}

/* ", victim (the kernel's report): cc1plus foo.cpp [gnu++17] 1.2 GiB (pid
 * 12)"; or the one last seen. */
static void put_victim(struct dwriter *w, const struct summary *s, const char *root,
                       const struct summary_oom *e)
{
        if (!e->victim.label[0]) {
                dw_puts(w, ", likely victim: unknown (the kernel's report unread, never sampled)");
                return;
        }
        dw_printf(w, ", %s: ", summary_victim_words(e));
        put_unit_proc(w, s, root, &e->victim, e->elapsed_s, true);
}

/* "1 OOM kill(s), victim ..." for the first rise. */
static void put_oom(struct dwriter *w, const struct summary *s, const char *root)
{
        const struct summary_build *bd = &s->build;
        const struct summary_oom *e = &bd->oom[0];

        dw_printf(w, "OOM kills %s", NUM_STR(bd->oom_kills, 0));
        if (bd->noom == 0)
                return;
        dw_printf(w, ", first by +%s", DURATION_STR(e->elapsed_s));
        put_if(w, " in stage ", e->stage);
        put_victim(w, s, root, e);
}

/* The working memory first: what the OOM killer weighs and a runner is
 * sized by (sampled); the peak after it holds page cache too. */
static void put_anon_peak(struct dwriter *w, const struct summary_build *bd)
{
        if (!bd->mem_anon_peak.set)
                return;
        dw_puts(w, " system\n  working memory: ");
        put_point(w, &bd->mem_anon_peak, 1, " MiB anon", "file");
        dw_puts(w, bd->estimates ? "\n                  (the peak below is the tree's RSS, file "
                                   "pages included; the OOM edge is about anon, sampled)"
                                 : "\n                  (the peak below is the kernel's, page "
                                   "cache included; the OOM edge is about anon, sampled)");
        dw_puts(w, "\n  peak memory:    ");
}

static void render_build_text(const struct summary *s, const struct run_info *ri, const char *root,
                              struct dwriter *w)
{
        static const char *const psi_label[] = {
            [PSI_CPU] = "cpu ", [PSI_MEM] = ", memory ", [PSI_IO] = ", io "};
        const struct summary_build *bd = &s->build;

        if (!bd->mode[0])
                return;
        dw_puts(w, "\n\nbuild (");
        put_mode(w, bd);
        dw_printf(w, ")\n  cpu:            %s user, %s", DURATION_STR(bd->cpu_user_s),
                  DURATION_STR(bd->cpu_sys_s));
        if (bd->mem_anon_peak.set)
                put_anon_peak(w, bd);
        else
                dw_puts(w, " system\n  peak memory:    ");
        put_point(w, &bd->mem_peak, 1, " MiB", bd->mem_anon_peak.set ? "page cache" : NULL);
        if (bd->mem_peak.set && bd->mem_peak_proc.label[0]) {
                dw_puts(w, "; largest process ");
                put_unit_proc(w, s, root, &bd->mem_peak_proc, bd->mem_peak.elapsed_s, false);
                put_proc_excess(w, bd);
        }
        dw_puts(w, "\n  max sampled:    ");
        put_point(w, &bd->mem_cur_peak, 1, " MiB", NULL);
        dw_puts(w, "\n  ");
        put_oom(w, s, root);
        for (size_t i = 1; i < MIN(bd->noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                dw_printf(w, "\n    then by +%s", DURATION_STR(bd->oom[i].elapsed_s));
                put_victim(w, s, root, &bd->oom[i]);
        }
        dw_printf(w,
                  "\n  io:             %s read, %s written\n  pressure (%s, stall s some/full): ",
                  SIZE_STR(bd->io_read_mb), SIZE_STR(bd->io_write_mb),
                  build_psi_is_host(bd) ? "host-wide" : "the build's");
        for (int k = PSI_CPU; k <= PSI_IO; k++) /* "cpu <some>/<full>, memory ..." */
                dw_printf(w, "%s%s/%s", psi_label[k], NUM_STR(bd->psi.some_s[k], 3),
                          NUM_STR(bd->psi.full_s[k], 3));
        dw_printf(w, "\n  processes:      peak %s", NUM_STR(bd->pids_peak, 0));
        if (ri) {
                summary_procs_text(&ri->procs, w);
                summary_guard_text(&ri->guard, w);
        }
        if (bd->estimates)
                dw_puts(w, "\n  (estimates: cpu adds reaped children's rusage; memory sums "
                           "RSS at each sample; io from /proc/PID/io)");
        summary_units_text(s, root, w);
}

/* command, run id, start, end, duration, exit, status */
static void render_run_text(const struct summary *s, const struct run_info *ri, struct dwriter *w)
{
        bool to_last;
        double dur = duration_of(s, ri, &to_last);

        dw_puts(w, "command:   ");
        put_command(w, ri->argv);
        dw_puts(w, "\nrun id:    ");
        summary_put_text(w, ri->run_id ? ri->run_id : "?");
        dw_printf(w, "\nstart:     %s\nend:       %s\nduration:  %s", ISO_STR(ri->start_epoch),
                  isfinite(ri->end_epoch) ? ISO_STR(ri->end_epoch) : "unknown", DURATION_STR(dur));
        if (isfinite(dur))
                dw_printf(w, " (%s s%s)", NUM_STR(dur, 3), to_last ? ", to the last sample" : "");
        dw_puts(w, "\nexit:      ");
        put_exit(w, s, ri);
        put_failure(w, s->failure, "\n  ");
        dw_puts(w, ri->finished ? "\nstatus:    finished\n" : "\nstatus:    incomplete\n");
}

/* memory, disk, cpu and load: the host's figures */
static void render_host_text(const struct summary *s, struct dwriter *w)
{
        double avg = s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN;

        dw_puts(w, "\nmemory\n  peak used:      ");
        put_point(w, &s->mem_used_peak, 0, " MiB", "available");
        dw_puts(w, "\n  min available:  ");
        put_point(w, &s->mem_avail_min, 0, " MiB", NULL);
        dw_puts(w, "\n  max swap used:  ");
        put_point(w, &s->swap_used_peak, 0, " MiB", NULL);
        dw_printf(w,
                  "\n  total:          %s\n\ndisk\n  min available:  ", SIZE_STR(s->mem_total_mb));
        put_point(w, &s->disk_avail_min, 2, " GiB", NULL);
        dw_printf(w, "\n  first -> last:  %s -> %s\n\ncpu and load\n  peak load1:     ",
                  SIZE_STR(s->disk_avail_first * 1024), SIZE_STR(s->disk_avail_last * 1024));
        put_point(w, &s->load1_peak, 2, "", NULL);
        dw_printf(w, "\n  average cpu:    %s %%\n  peak cpu:       ", NUM_STR(avg, 1));
        put_point(w, &s->cpu_pct_peak, 1, " %", NULL);
        dw_puts(w, "\n  peak compilers: ");
        put_point(w, &s->compilers_peak, 0, "", NULL);
}

static void render_text(const struct summary *s, const struct run_info *ri,
                        const struct reading *rd, size_t nrd, struct dwriter *w)
{
        char oom[160], disk[48];

        dw_puts(w, "buildtel summary\n");
        if (ri)
                render_run_text(s, ri, w);
        render_host_text(s, w);
        render_build_text(s, ri, ri ? ri->cwd : NULL, w);
        if (s->path || is_make(ri))
                summary_path_text(s->path, w);

        dw_puts(w, "\n\nwarnings\n");
        warning_rules(s, oom, disk);
        put_warning(w, "near-OOM", oom, s->near_oom_samples, &s->near_oom_first);
        put_warning(w, "low disk", disk, s->low_disk_samples, &s->low_disk_first);

        dw_puts(w, "\nreadings\n");
        if (nrd == 0)
                dw_puts(w, "  none\n");
        for (size_t i = 0; i < nrd; i++) {
                dw_puts(w, "  - ");
                summary_put_text(w, rd[i].text.p);
                dw_append(w, "\n", 1);
        }

        dw_printf(
            w, "\nthresholds: near_oom_mb=%s low_disk_gb=%s\nsamples: %llu (skipped rows: %llu)\n",
            NUM_STR(s->cfg.near_oom_mb, 0), NUM_STR(s->cfg.low_disk_gb, 2),
            (unsigned long long)s->samples, (unsigned long long)s->skipped_rows);
}

typedef void (*render_fn)(const struct summary *s, const struct run_info *ri,
                          const struct reading *rd, size_t nrd, struct dwriter *w);

/* Compute the readings, render with fn, and leave out as it was on failure. */
static int render_with(render_fn fn, const struct summary *s, const struct run_info *ri,
                       struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        struct reading rd[READINGS_MAX] = {0};
        size_t old = out->len;
        int r;

        r = readings_compute(s, ri, rd);
        if (r >= 0) {
                fn(s, ri, rd, (size_t)r, &w);
                r = w.err;
        }
        for (size_t i = 0; i < READINGS_MAX; i++)
                dbuf_release(&rd[i].text);
        if (r < 0 && out->p) {
                out->len = old;
                out->p[old] = '\0';
        }
        return r;
}

int render_summary_text(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        return render_with(render_text, s, ri, out);
}

int render_summary_json(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        return render_with(render_json, s, ri, out);
}

/* "buildtel: build peak 18.2 GiB at +2h14m07s, stage S, cc1plus Foo.cpp
 * 6.1 GiB (pid 9); anon peak 15.9 GiB at +2h14m06s; cpu 812.3 s (cgroup
 * hybrid)" and a line on OOM kills. */
static void render_build_short(const struct summary *s, const char *root, struct dwriter *w)
{
        const struct summary_build *bd = &s->build;
        static const struct summary_point unsampled; /* an anon peak of 0: never seen */
        const struct summary_point *p = &bd->mem_peak, *a = bd->mem_anon_peak.value > 0
                                                                ? &bd->mem_anon_peak
                                                                : &unsampled;

        dw_puts(w, "buildtel: "); /* the working memory first, the kernel's (page cache in) after */
        if (a->set) {
                dw_puts(w, "working memory (anon) peak ");
                put_size_at(w, a);
        }
        dw_puts(w, a->set ? "; the kernel's peak " : "build peak ");
        if (!p->set) {
                dw_puts(w, "memory unknown");
        } else {
                dw_puts(w, SIZE_STR(p->value));
                if (a->set && isfinite(p->aux) && p->aux >= 0.05 * p->value)
                        dw_printf(w, ", %s of it page cache,", SIZE_STR(p->aux));
                dw_printf(w, " by +%s", DURATION_STR(p->elapsed_s));
                put_if(w, ", stage ", p->stage);
                if (bd->mem_peak_proc.label[0]) {
                        dw_puts(w, a->set ? ", largest process " : ", ");
                        put_unit_proc(w, s, root, &bd->mem_peak_proc, bd->mem_peak.elapsed_s,
                                      false);
                        put_proc_excess(w, bd);
                }
                if (!a->set)
                        put_if(w, ", running ", p->running);
        }
        dw_printf(w, "; cpu %s s (", NUM_STR(bd->cpu_user_s + bd->cpu_sys_s, 1));
        put_mode(w, bd);
        dw_puts(w, ")\n");
        if (isfinite(bd->oom_kills) && bd->oom_kills > 0) {
                dw_puts(w, "buildtel: ");
                put_oom(w, s, root);
                dw_puts(w, "\n");
        }
}

/* "; N <what> samples (<rule>)" when there were any. */
static void put_short_warning(struct dwriter *w, uint64_t count, const char *what, const char *rule)
{
        if (count)
                dw_printf(w, "; %llu %s samples (%s)", (unsigned long long)count, what, rule);
}

/* Three to six lines: status, memory, disk (each with its warning), then
 * one line per reading. */
static void render_short(const struct summary *s, const struct run_info *ri,
                         const struct reading *rd, size_t nrd, struct dwriter *w)
{
        const struct summary_point *m = &s->mem_used_peak, *d = &s->disk_avail_min;
        char oom[160], disk[48];
        bool to_last;

        dw_printf(w, "buildtel: %s, ", DURATION_STR(duration_of(s, ri, &to_last)));
        put_exit(w, s, ri);
        if (ri && !ri->finished)
                dw_puts(w, ", incomplete");
        put_failure(w, s->failure, "\nbuildtel:   ");
        dw_puts(w, "\nbuildtel: peak memory ");
        if (!m->set) {
                dw_puts(w, "unknown");
        } else {
                dw_printf(w, "%s used (%s available) at +%s", SIZE_STR(m->value), SIZE_STR(m->aux),
                          DURATION_STR(m->elapsed_s));
                put_where(w, m);
        }
        warning_rules(s, oom, disk);
        put_short_warning(w, s->near_oom_samples, "near-OOM", oom);
        dw_puts(w, "\nbuildtel: minimum disk ");
        if (!d->set)
                dw_puts(w, "unknown");
        else
                dw_printf(w, "%s available at +%s", SIZE_STR(d->value * 1024),
                          DURATION_STR(d->elapsed_s));
        put_short_warning(w, s->low_disk_samples, "low-disk", disk);
        dw_append(w, "\n", 1);
        if (s->build.mode[0])
                render_build_short(s, ri ? ri->cwd : NULL, w);
        for (size_t i = 0; i < nrd; i++) {
                dw_puts(w, "buildtel: ");
                summary_put_text(w, rd[i].text.p);
                dw_append(w, "\n", 1);
        }
}

int render_summary_short(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        return render_with(render_short, s, ri, out);
}
