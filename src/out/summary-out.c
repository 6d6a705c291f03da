/* SPDX-License-Identifier: MIT */
#include "out/summary-out.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

/* Below either of these, available memory counts as "near zero". */
#define OOM_EDGE_AVAIL_MB 512.0
#define OOM_EDGE_AVAIL_FRACTION 0.05
/* A falling disk is worth a reading once its minimum came this close. */
#define DISK_FALLING_FACTOR 1.5

#define READINGS_MAX 3

struct reading {
        const char *id;
        struct dbuf text; /* raw: may hold the build's bytes */
};

static void readings_release(struct reading *rd, size_t n)
{
        for (size_t i = 0; i < n; i++)
                dbuf_release(&rd[i].text);
}

/* "%.*f", or "?" for an unknown figure. */
static int put_num(struct dbuf *b, double v, int decimals)
{
        if (!isfinite(v))
                return dbuf_puts(b, "?");
        /* no "-0" for what rounds to zero */
        if (fabs(v) < 0.5 * pow(10.0, -decimals))
                v = 0.0;
        return dbuf_printf(b, "%.*f", decimals, v);
}

static int put_iso(struct dbuf *b, double epoch)
{
        char iso[64];

        if (format_iso8601(epoch, iso) < 0)
                return dbuf_puts(b, "?");
        return dbuf_puts(b, iso);
}

/* 3723.4 -> "1h02m03s", 245 -> "4m05s", 12.34 -> "12.3s". */
static int put_duration(struct dbuf *b, double secs)
{
        long long t;

        if (!isfinite(secs) || secs < 0)
                return dbuf_puts(b, "?");
        if (secs < 60)
                return dbuf_printf(b, "%.1fs", secs);
        if (secs >= 1e12)
                return dbuf_puts(b, "?");
        t = llround(secs);
        if (t < 3600)
                return dbuf_printf(b, "%lldm%02llds", t / 60, t % 60);
        return dbuf_printf(b, "%lldh%02lldm%02llds", t / 3600, t / 60 % 60, t % 60);
}

/* The build's bytes for a terminal: valid UTF-8, no control characters. */
static int put_text(struct dbuf *b, const char *s)
{
        return run_append_utf8_lossy(b, s, strlen(s), true);
}

/* ", stage S, while C" for the parts that are known. */
static int put_where(struct dbuf *b, const struct summary_point *p)
{
        int r = 0;

        if (p->stage[0]) {
                r = dbuf_puts(b, ", stage ");
                if (r >= 0)
                        r = put_text(b, p->stage);
        }
        if (r >= 0 && p->context[0]) {
                r = dbuf_puts(b, ", while ");
                if (r >= 0)
                        r = put_text(b, p->context);
        }
        return r;
}

static const char *what_of(const struct summary_point *p)
{
        return p->context[0] ? p->context : p->stage;
}

static double duration_of(const struct summary *s, const struct run_info *ri, bool *ret_to_last)
{
        *ret_to_last = false;
        if (!ri || !isfinite(ri->start_epoch))
                return NAN;
        if (isfinite(ri->end_epoch))
                return ri->end_epoch - ri->start_epoch;
        /* killed or still running: as far as the samples go */
        *ret_to_last = true;
        if (isfinite(s->last_epoch))
                return s->last_epoch - ri->start_epoch;
        return NAN;
}

/* "exit 0", "exit 2", "killed by SIGKILL", "exit status unknown". */
static int put_exit(struct dbuf *b, const struct run_info *ri)
{
        if (!ri)
                return dbuf_puts(b, "exit status unknown");
        if (ri->term_signal > 0) {
                const char *abbr = sigabbrev_np(ri->term_signal);

                if (abbr)
                        return dbuf_printf(b, "killed by SIG%s", abbr);
                return dbuf_printf(b, "killed by signal %d", ri->term_signal);
        }
        if (ri->exit_code >= 0)
                return dbuf_printf(b, "exit %d", ri->exit_code);
        return dbuf_puts(b, "exit status unknown");
}

static bool oom_edge_near_zero(const struct summary *s)
{
        const struct summary_point *p = &s->mem_avail_min;

        if (!p->set)
                return false;
        if (p->value < OOM_EDGE_AVAIL_MB)
                return true;
        return isfinite(s->mem_total_mb) && p->value < OOM_EDGE_AVAIL_FRACTION * s->mem_total_mb;
}

static int reading_oom_edge(const struct summary *s, struct dbuf *b)
{
        bool zero = oom_edge_near_zero(s);
        bool swap = s->swap_used_peak.set && s->swap_used_peak.value > 0;
        const struct summary_point *p = zero ? &s->mem_avail_min : &s->swap_used_peak;
        int r;

        if (!zero && !swap)
                return 0;
        r = dbuf_puts(b, "OOM edge: ");
        if (r >= 0 && zero) {
                r = dbuf_puts(b, "available memory down to ");
                if (r >= 0)
                        r = put_num(b, s->mem_avail_min.value, 0);
                if (r >= 0)
                        r = dbuf_puts(b, " MiB");
                if (r >= 0 && swap)
                        r = dbuf_puts(b, " and ");
        }
        if (r >= 0 && swap) {
                r = dbuf_puts(b, "swap in use (peak ");
                if (r >= 0)
                        r = put_num(b, s->swap_used_peak.value, 0);
                if (r >= 0)
                        r = dbuf_puts(b, " MiB)");
        }
        if (r >= 0)
                r = dbuf_puts(b, " at ");
        if (r >= 0)
                r = put_iso(b, p->epoch);
        if (r >= 0 && what_of(p)[0]) {
                r = dbuf_puts(b, ", while ");
                if (r >= 0)
                        r = dbuf_puts(b, what_of(p));
        }
        return r < 0 ? r : 1;
}

static int reading_disk_falling(const struct summary *s, struct dbuf *b)
{
        int r;

        if (!s->disk_avail_min.set || !isfinite(s->disk_avail_first) ||
            !isfinite(s->disk_avail_last) || !(s->disk_avail_last < s->disk_avail_first) ||
            !(s->disk_avail_min.value < DISK_FALLING_FACTOR * s->cfg.low_disk_gb))
                return 0;
        r = dbuf_puts(b, "disk falling toward the threshold (");
        if (r >= 0)
                r = put_num(b, s->disk_avail_first, 2);
        if (r >= 0)
                r = dbuf_puts(b, " -> ");
        if (r >= 0)
                r = put_num(b, s->disk_avail_last, 2);
        if (r >= 0)
                r = dbuf_puts(b, " GiB available, minimum ");
        if (r >= 0)
                r = put_num(b, s->disk_avail_min.value, 2);
        if (r >= 0)
                r = dbuf_puts(b, " GiB, threshold ");
        if (r >= 0)
                r = put_num(b, s->cfg.low_disk_gb, 2);
        if (r >= 0)
                r = dbuf_puts(b, " GiB): prune build caches (docker builder prune, "
                                 "ccache -C / sccache --zero-stats ...)");
        return r < 0 ? r : 1;
}

static int reading_ram_bound(const struct summary *s, const struct run_info *ri, struct dbuf *b)
{
        double avg;
        int r;

        if (s->near_oom_samples == 0 || s->near_oom_compilers_n == 0 || !ri || ri->ncpu == 0)
                return 0;
        avg = s->near_oom_compilers_sum / (double)s->near_oom_compilers_n;
        if (!(avg < ri->ncpu / 2.0))
                return 0;
        r = dbuf_puts(b, "compilers well below the core count while memory was low (");
        if (r >= 0)
                r = put_num(b, avg, 1);
        if (r >= 0)
                r = dbuf_printf(b,
                                " on average over %llu near-OOM samples, %u cores): the stage is "
                                "RAM-bound; the lever is more RAM, not more -j",
                                (unsigned long long)s->near_oom_compilers_n, ri->ncpu);
        return r < 0 ? r : 1;
}

/* Fills rd[0..*ret_n); the caller releases them (also on failure). */
static int readings_compute(const struct summary *s, const struct run_info *ri,
                            struct reading rd[static READINGS_MAX], size_t *ret_n)
{
        size_t n = 0;
        int r;

        *ret_n = 0;
        for (size_t i = 0; i < READINGS_MAX; i++)
                rd[i] = (struct reading){NULL, DBUF_INIT};
        r = reading_oom_edge(s, &rd[n].text);
        if (r > 0)
                rd[n++].id = "oom_edge";
        if (r >= 0)
                r = reading_disk_falling(s, &rd[n].text);
        if (r > 0)
                rd[n++].id = "disk_falling";
        if (r >= 0)
                r = reading_ram_bound(s, ri, &rd[n].text);
        if (r > 0)
                rd[n++].id = "ram_bound";
        *ret_n = READINGS_MAX; /* release every buffer, used or not */
        if (r < 0)
                return r;
        return (int)n;
}

/* ---- JSON ---- */

/* Figures print as they were recorded: rounded to their column's decimals,
 * whole numbers as integers, unknown as null. */
static json_t *jnum(double v, int decimals)
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

static json_t *jstr(const char *s)
{
        return s ? run_json_string(s) : json_null();
}

/* Steals v; NULL means an allocation failed somewhere below. */
static int jset(json_t *o, const char *key, json_t *v)
{
        if (!o || !v) {
                json_decref(v);
                return -ENOMEM;
        }
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

/* {"value", aux_key?, "time", "elapsed_s", "stage", "context"} or null. */
static json_t *jpoint(const struct summary_point *p, int decimals, const char *aux_key,
                      int aux_decimals)
{
        json_t *o;

        if (!p->set)
                return json_null();
        o = json_object();
        if (jset(o, "value", jnum(p->value, decimals)) < 0 ||
            (aux_key && jset(o, aux_key, jnum(p->aux, aux_decimals)) < 0) ||
            jset(o, "time", jtime(p->epoch)) < 0 ||
            jset(o, "elapsed_s", jnum(p->elapsed_s, 3)) < 0 ||
            jset(o, "stage", jstr(p->stage)) < 0 || jset(o, "context", jstr(p->context)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *jwarning(uint64_t count, const struct summary_point *first, double threshold,
                        const char *threshold_key, int decimals)
{
        json_t *o = json_object();

        if (jset(o, "count", json_integer((json_int_t)MIN(count, (uint64_t)INT64_MAX))) < 0 ||
            jset(o, threshold_key, jnum(threshold, decimals)) < 0 ||
            jset(o, "first_time", first->set ? jtime(first->epoch) : json_null()) < 0 ||
            jset(o, "first_elapsed_s", first->set ? jnum(first->elapsed_s, 3) : json_null()) < 0 ||
            jset(o, "stage", first->set ? jstr(first->stage) : json_null()) < 0 ||
            jset(o, "context", first->set ? jstr(first->context) : json_null()) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *jrun(const struct summary *s, const struct run_info *ri)
{
        json_t *o, *cmd;
        bool to_last;
        double dur;
        const char *abbr;

        if (!ri)
                return json_null();
        o = json_object();
        cmd = ri->argv ? json_array() : json_null();
        if (ri->argv && cmd)
                for (char **a = ri->argv; *a; a++)
                        if (json_array_append_new(cmd, run_json_string(*a)) < 0) {
                                json_decref(cmd);
                                cmd = NULL;
                                break;
                        }
        dur = duration_of(s, ri, &to_last);
        abbr = ri->term_signal > 0 ? sigabbrev_np(ri->term_signal) : NULL;
        if (jset(o, "command", cmd) < 0 || jset(o, "run_id", jstr(ri->run_id)) < 0 ||
            jset(o, "kind", jstr(ri->kind)) < 0 || jset(o, "cwd", jstr(ri->cwd)) < 0 ||
            jset(o, "host", jstr(ri->host)) < 0 ||
            jset(o, "pid", ri->pid > 0 ? json_integer(ri->pid) : json_null()) < 0 ||
            jset(o, "start", jtime(ri->start_epoch)) < 0 ||
            jset(o, "end", jtime(ri->end_epoch)) < 0 || jset(o, "duration_s", jnum(dur, 3)) < 0 ||
            jset(o, "duration_to_last_sample", json_boolean(to_last)) < 0 ||
            jset(o, "exit_code", ri->exit_code >= 0 ? json_integer(ri->exit_code) : json_null()) <
                0 ||
            jset(o, "signal",
                 ri->term_signal <= 0 ? json_null()
                 : abbr               ? json_sprintf("SIG%s", abbr)
                                      : json_sprintf("signal %d", ri->term_signal)) < 0 ||
            jset(o, "finished", json_boolean(ri->finished)) < 0 ||
            jset(o, "ncpu", ri->ncpu > 0 ? json_integer(ri->ncpu) : json_null()) < 0 ||
            jset(o, "interval_s", jnum(ri->interval, 3)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* ---- the build's own accounting ---- */

static bool build_is_estimate(const struct summary_build *b)
{
        return strcmp(b->mode, "none") == 0;
}

static bool build_psi_is_host(const struct summary_build *b)
{
        return strcmp(b->mode, "none") == 0 || strcmp(b->mode, "v1") == 0;
}

static json_t *jproc(const struct summary_proc *p)
{
        json_t *o;

        if (!p->label[0])
                return json_null();
        o = json_object();
        if (jset(o, "label", jstr(p->label)) < 0 || jset(o, "mb", jnum(p->mb, 1)) < 0 ||
            jset(o, "pid", jnum(p->pid, 0)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *jbuild(const struct summary *s)
{
        const struct summary_build *b = &s->build;
        json_t *o, *est, *psi, *ooms, *peak;
        int r;

        if (!b->mode[0])
                return json_null();
        o = json_object();
        est = json_array();
        psi = json_object();
        ooms = json_array();
        if (!est || !psi || !ooms) {
                json_decref(est);
                json_decref(psi);
                json_decref(ooms);
                json_decref(o);
                return NULL;
        }
        if (build_is_estimate(b))
                for (const char *const *k =
                         (const char *const[]){"cpu", "memory", "io", "pids", NULL};
                     *k; k++)
                        (void)json_array_append_new(est, json_string(*k));
        peak = jpoint(&b->mem_peak, 1, NULL, 0);
        if (peak && b->mem_peak.set)
                (void)jset(peak, "process", jproc(&b->mem_peak_proc));
        for (size_t i = 0; i < MIN(b->noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                const struct summary_oom *e = &b->oom[i];
                json_t *j = json_object();

                if (jset(j, "time", jtime(e->epoch)) < 0 ||
                    jset(j, "elapsed_s", jnum(e->elapsed_s, 3)) < 0 ||
                    jset(j, "kills", jnum(e->kills, 0)) < 0 ||
                    jset(j, "stage", jstr(e->stage)) < 0 ||
                    jset(j, "victim", jproc(&e->victim)) < 0 ||
                    json_array_append_new(ooms, j) < 0) {
                        json_decref(j);
                        break;
                }
        }
        r = jset(psi, "source", json_string(build_psi_is_host(b) ? "host" : "cgroup"));
        if (r >= 0)
                r = jset(psi, "cpu_some_s", jnum(b->psi_cpu_some_s, 3));
        if (r >= 0)
                r = jset(psi, "cpu_full_s", jnum(b->psi_cpu_full_s, 3));
        if (r >= 0)
                r = jset(psi, "mem_some_s", jnum(b->psi_mem_some_s, 3));
        if (r >= 0)
                r = jset(psi, "mem_full_s", jnum(b->psi_mem_full_s, 3));
        if (r >= 0)
                r = jset(psi, "io_some_s", jnum(b->psi_io_some_s, 3));
        if (r >= 0)
                r = jset(psi, "io_full_s", jnum(b->psi_io_full_s, 3));

        if (r >= 0)
                r = jset(o, "mode", jstr(b->mode));
        if (r >= 0)
                r = jset(o, "estimates", est);
        else
                json_decref(est);
        if (r >= 0)
                r = jset(o, "cpu_user_s", jnum(b->cpu_user_s, 3));
        if (r >= 0)
                r = jset(o, "cpu_sys_s", jnum(b->cpu_sys_s, 3));
        if (r >= 0)
                r = jset(o, "mem_peak_mb", peak);
        else
                json_decref(peak);
        if (r >= 0)
                r = jset(o, "mem_max_sampled_mb", jpoint(&b->mem_cur_peak, 1, NULL, 0));
        if (r >= 0)
                r = jset(o, "oom_kills", jnum(b->oom_kills, 0));
        if (r >= 0)
                r = jset(o, "oom_events", ooms);
        else
                json_decref(ooms);
        if (r >= 0)
                r = jset(o, "io_read_mb", jnum(b->io_read_mb, 1));
        if (r >= 0)
                r = jset(o, "io_write_mb", jnum(b->io_write_mb, 1));
        if (r >= 0)
                r = jset(o, "pressure", psi);
        else
                json_decref(psi);
        if (r >= 0)
                r = jset(o, "pids_peak", jnum(b->pids_peak, 0));
        if (r < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *jsummary(const struct summary *s, const struct run_info *ri,
                        const struct reading *rd, size_t nrd)
{
        json_t *o = json_object(), *mem = json_object(), *disk = json_object(),
               *cpu = json_object(), *warn = json_object(), *thr = json_object(),
               *readings = json_array();
        double avg = s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN;
        int r;

        r = jset(mem, "total_mb", jnum(s->mem_total_mb, 0));
        if (r >= 0)
                r = jset(mem, "peak_used_mb", jpoint(&s->mem_used_peak, 0, "avail_mb", 0));
        if (r >= 0)
                r = jset(mem, "min_avail_mb", jpoint(&s->mem_avail_min, 0, "used_mb", 0));
        if (r >= 0)
                r = jset(mem, "max_swap_used_mb", jpoint(&s->swap_used_peak, 0, NULL, 0));

        if (r >= 0)
                r = jset(disk, "min_avail_gb", jpoint(&s->disk_avail_min, 2, "pct", 1));
        if (r >= 0)
                r = jset(disk, "first_avail_gb", jnum(s->disk_avail_first, 2));
        if (r >= 0)
                r = jset(disk, "last_avail_gb", jnum(s->disk_avail_last, 2));

        if (r >= 0)
                r = jset(cpu, "peak_load1", jpoint(&s->load1_peak, 2, NULL, 0));
        if (r >= 0)
                r = jset(cpu, "avg_cpu_pct", jnum(avg, 1));
        if (r >= 0)
                r = jset(cpu, "peak_cpu_pct", jpoint(&s->cpu_pct_peak, 1, NULL, 0));
        if (r >= 0)
                r = jset(cpu, "peak_compilers", jpoint(&s->compilers_peak, 0, NULL, 0));

        if (r >= 0)
                r = jset(warn, "near_oom",
                         jwarning(s->near_oom_samples, &s->near_oom_first, s->cfg.near_oom_mb,
                                  "below_mb", 0));
        if (r >= 0)
                r = jset(warn, "low_disk",
                         jwarning(s->low_disk_samples, &s->low_disk_first, s->cfg.low_disk_gb,
                                  "below_gb", 2));

        for (size_t i = 0; r >= 0 && i < nrd; i++) {
                json_t *e = json_object();

                r = jset(e, "id", json_string(rd[i].id));
                if (r >= 0)
                        r = jset(e, "text", run_json_string(rd[i].text.p));
                if (r >= 0 && json_array_append_new(readings, e) < 0)
                        r = -ENOMEM;
                else if (r < 0)
                        json_decref(e);
        }

        if (r >= 0)
                r = jset(thr, "near_oom_mb", jnum(s->cfg.near_oom_mb, 0));
        if (r >= 0)
                r = jset(thr, "low_disk_gb", jnum(s->cfg.low_disk_gb, 2));

        if (r >= 0)
                r = jset(o, "run", jrun(s, ri));
        if (r >= 0)
                r = jset(o, "memory", TAKE_PTR(mem));
        if (r >= 0)
                r = jset(o, "disk", TAKE_PTR(disk));
        if (r >= 0)
                r = jset(o, "cpu", TAKE_PTR(cpu));
        if (r >= 0)
                r = jset(o, "build", jbuild(s));
        if (r >= 0)
                r = jset(o, "warnings", TAKE_PTR(warn));
        if (r >= 0)
                r = jset(o, "readings", TAKE_PTR(readings));
        if (r >= 0)
                r = jset(o, "thresholds", TAKE_PTR(thr));
        if (r >= 0)
                r = jset(o, "samples",
                         json_integer((json_int_t)MIN(s->samples, (uint64_t)INT64_MAX)));
        if (r >= 0)
                r = jset(o, "skipped_rows",
                         json_integer((json_int_t)MIN(s->skipped_rows, (uint64_t)INT64_MAX)));
        json_decref(mem);
        json_decref(disk);
        json_decref(cpu);
        json_decref(warn);
        json_decref(readings);
        json_decref(thr);
        if (r < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

int summary_render_json(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        struct reading rd[READINGS_MAX];
        size_t nrd;
        json_t *o = NULL;
        char *text = NULL;
        int r;

        r = readings_compute(s, ri, rd, &nrd);
        if (r >= 0) {
                o = jsummary(s, ri, rd, (size_t)r);
                if (o)
                        text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                                 JSON_REAL_PRECISION(15));
                r = text ? dbuf_puts(out, text) : -ENOMEM;
                if (r >= 0)
                        r = dbuf_append(out, "\n", 1);
        }
        free(text);
        json_decref(o);
        readings_release(rd, nrd);
        return r;
}

/* ---- text ---- */

/* A word as a POSIX shell would need it quoted to mean itself. */
static int put_shell_word(struct dbuf *b, const char *w)
{
        static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789@%+=:,./_-";
        size_t n = strlen(w);
        int r;

        if (n > 0 && strspn(w, safe) == n)
                return dbuf_append(b, w, n);
        r = dbuf_append(b, "'", 1);
        for (const char *p = w; r >= 0 && *p; p++) {
                if (*p == '\'')
                        r = dbuf_puts(b, "'\\''");
                else
                        r = dbuf_append(b, p, 1);
        }
        if (r >= 0)
                r = dbuf_append(b, "'", 1);
        return r;
}

/* argv quoted for a shell, then made safe for a terminal. */
static int put_command(struct dbuf *b, char **argv)
{
        struct dbuf q = DBUF_INIT;
        int r = 0;

        if (!argv)
                return dbuf_puts(b, "?");
        for (char **a = argv; r >= 0 && *a; a++) {
                if (a != argv)
                        r = dbuf_append(&q, " ", 1);
                if (r >= 0)
                        r = put_shell_word(&q, *a);
        }
        if (r >= 0)
                r = run_append_utf8_lossy(b, q.p ? q.p : "", q.len, true);
        dbuf_release(&q);
        return r;
}

/* "<value><unit>[ (<aux_label> <aux> <aux_unit>)] at <iso> (+<elapsed>)<where>"
 * or "no data". */
static int put_point_aux(struct dbuf *b, const struct summary_point *p, int decimals,
                         const char *unit, const char *aux_label, const char *aux_unit)
{
        int r;

        if (!p->set)
                return dbuf_puts(b, "no data");
        r = put_num(b, p->value, decimals);
        if (r >= 0)
                r = dbuf_puts(b, unit);
        if (r >= 0 && aux_label) {
                r = dbuf_printf(b, " (%s ", aux_label);
                if (r >= 0)
                        r = put_num(b, p->aux, 0);
                if (r >= 0)
                        r = dbuf_printf(b, "%s)", aux_unit);
        }
        if (r >= 0)
                r = dbuf_puts(b, " at ");
        if (r >= 0)
                r = put_iso(b, p->epoch);
        if (r >= 0)
                r = dbuf_puts(b, " (+");
        if (r >= 0)
                r = put_duration(b, p->elapsed_s);
        if (r >= 0)
                r = dbuf_puts(b, ")");
        if (r >= 0)
                r = put_where(b, p);
        return r;
}

static int put_point(struct dbuf *b, const struct summary_point *p, int decimals, const char *unit)
{
        return put_point_aux(b, p, decimals, unit, NULL, NULL);
}

static int put_warning(struct dbuf *b, const char *label, uint64_t count,
                       const struct summary_point *first)
{
        int r = dbuf_printf(b, "  %s%llu samples", label, (unsigned long long)count);

        if (r >= 0 && first->set) {
                r = dbuf_puts(b, ", first at ");
                if (r >= 0)
                        r = put_iso(b, first->epoch);
                if (r >= 0)
                        r = dbuf_puts(b, " (+");
                if (r >= 0)
                        r = put_duration(b, first->elapsed_s);
                if (r >= 0)
                        r = dbuf_puts(b, ")");
                if (r >= 0)
                        r = put_where(b, first);
        }
        if (r >= 0)
                r = dbuf_append(b, "\n", 1);
        return r;
}

/* MiB as "512.3 MiB" or, from 1 GiB, "18.2 GiB". */
static int put_size(struct dbuf *b, double mb)
{
        int r;

        if (isfinite(mb) && mb >= 1024.0) {
                r = put_num(b, mb / 1024.0, 1);
                return r < 0 ? r : dbuf_puts(b, " GiB");
        }
        r = put_num(b, mb, 1);
        return r < 0 ? r : dbuf_puts(b, " MiB");
}

/* "cc1plus foo.cpp 6.1 GiB (pid 123)" */
static int put_proc(struct dbuf *b, const struct summary_proc *p)
{
        int r = put_text(b, p->label);

        if (r >= 0 && isfinite(p->mb)) {
                r = dbuf_puts(b, " ");
                if (r >= 0)
                        r = put_size(b, p->mb);
        }
        if (r >= 0 && isfinite(p->pid))
                r = dbuf_printf(b, " (pid %.0f)", p->pid);
        return r;
}

static int put_mode(struct dbuf *b, const struct summary_build *bd)
{
        if (build_is_estimate(bd))
                return dbuf_puts(b, "no cgroup: estimates from the process tree in /proc");
        return dbuf_printf(b, "cgroup %s", bd->mode);
}

/* "1 OOM kill(s), likely victim: ..." for the first rise. */
static int put_oom(struct dbuf *b, const struct summary_build *bd)
{
        const struct summary_oom *e = &bd->oom[0];
        int r = dbuf_puts(b, "OOM kills ");

        if (r >= 0)
                r = put_num(b, bd->oom_kills, 0);
        if (r >= 0 && bd->noom > 0) {
                r = dbuf_puts(b, ", first by +");
                if (r >= 0)
                        r = put_duration(b, e->elapsed_s);
                if (r >= 0 && e->stage[0]) {
                        r = dbuf_puts(b, " in stage ");
                        if (r >= 0)
                                r = put_text(b, e->stage);
                }
                if (r >= 0)
                        r = dbuf_puts(b, ", likely victim: ");
                if (r >= 0)
                        r = e->victim.label[0] ? put_proc(b, &e->victim)
                                               : dbuf_puts(b, "unknown (it was never sampled)");
        }
        return r;
}

static int render_build_text(const struct summary *s, struct dbuf *b)
{
        const struct summary_build *bd = &s->build;
        int r;

        if (!bd->mode[0])
                return 0;
        r = dbuf_puts(b, "\n\nbuild (");
        if (r >= 0)
                r = put_mode(b, bd);
        if (r >= 0)
                r = dbuf_puts(b, ")\n  cpu:            ");
        if (r >= 0)
                r = put_num(b, bd->cpu_user_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, " s user, ");
        if (r >= 0)
                r = put_num(b, bd->cpu_sys_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, " s system\n  peak memory:    ");
        if (r >= 0)
                r = put_point(b, &bd->mem_peak, 1, " MiB");
        if (r >= 0 && bd->mem_peak.set && bd->mem_peak_proc.label[0]) {
                r = dbuf_puts(b, "; largest process ");
                if (r >= 0)
                        r = put_proc(b, &bd->mem_peak_proc);
        }
        if (r >= 0)
                r = dbuf_puts(b, "\n  max sampled:    ");
        if (r >= 0)
                r = put_point(b, &bd->mem_cur_peak, 1, " MiB");
        if (r >= 0)
                r = dbuf_puts(b, "\n  ");
        if (r >= 0)
                r = put_oom(b, bd);
        for (size_t i = 1; r >= 0 && i < MIN(bd->noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                r = dbuf_puts(b, "\n    then by +");
                if (r >= 0)
                        r = put_duration(b, bd->oom[i].elapsed_s);
                if (r >= 0)
                        r = dbuf_puts(b, ", likely victim: ");
                if (r >= 0)
                        r = bd->oom[i].victim.label[0] ? put_proc(b, &bd->oom[i].victim)
                                                       : dbuf_puts(b, "unknown");
        }
        if (r >= 0)
                r = dbuf_puts(b, "\n  io:             ");
        if (r >= 0)
                r = put_num(b, bd->io_read_mb, 1);
        if (r >= 0)
                r = dbuf_puts(b, " MiB read, ");
        if (r >= 0)
                r = put_num(b, bd->io_write_mb, 1);
        if (r >= 0)
                r = dbuf_printf(b, " MiB written\n  pressure (%s, stall s some/full): cpu ",
                                build_psi_is_host(bd) ? "host-wide" : "the build's");
        if (r >= 0)
                r = put_num(b, bd->psi_cpu_some_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, "/");
        if (r >= 0)
                r = put_num(b, bd->psi_cpu_full_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, ", memory ");
        if (r >= 0)
                r = put_num(b, bd->psi_mem_some_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, "/");
        if (r >= 0)
                r = put_num(b, bd->psi_mem_full_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, ", io ");
        if (r >= 0)
                r = put_num(b, bd->psi_io_some_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, "/");
        if (r >= 0)
                r = put_num(b, bd->psi_io_full_s, 3);
        if (r >= 0)
                r = dbuf_puts(b, "\n  processes:      peak ");
        if (r >= 0)
                r = put_num(b, bd->pids_peak, 0);
        if (r >= 0 && build_is_estimate(bd))
                r = dbuf_puts(b, "\n  (estimates: cpu adds reaped children's rusage; memory sums "
                                 "RSS at each sample; io from /proc/PID/io)");
        return r;
}

static int render_text(const struct summary *s, const struct run_info *ri, const struct reading *rd,
                       size_t nrd, struct dbuf *b)
{
        double avg = s->cpu_pct_n ? s->cpu_pct_sum / (double)s->cpu_pct_n : NAN;
        bool to_last;
        double dur = duration_of(s, ri, &to_last);
        int r;

        r = dbuf_puts(b, "buildtel summary\n");
        if (r >= 0 && ri) {
                r = dbuf_puts(b, "command:   ");
                if (r >= 0)
                        r = put_command(b, ri->argv);
                if (r >= 0)
                        r = dbuf_puts(b, "\nrun id:    ");
                if (r >= 0)
                        r = put_text(b, ri->run_id ? ri->run_id : "?");
                if (r >= 0)
                        r = dbuf_puts(b, "\nstart:     ");
                if (r >= 0)
                        r = put_iso(b, ri->start_epoch);
                if (r >= 0)
                        r = dbuf_puts(b, "\nend:       ");
                if (r >= 0)
                        r = isfinite(ri->end_epoch) ? put_iso(b, ri->end_epoch)
                                                    : dbuf_puts(b, "unknown");
                if (r >= 0)
                        r = dbuf_puts(b, "\nduration:  ");
                if (r >= 0)
                        r = put_duration(b, dur);
                if (r >= 0 && isfinite(dur)) {
                        r = dbuf_puts(b, " (");
                        if (r >= 0)
                                r = put_num(b, dur, 3);
                        if (r >= 0)
                                r = dbuf_puts(b, to_last ? " s, to the last sample)" : " s)");
                }
                if (r >= 0)
                        r = dbuf_puts(b, "\nexit:      ");
                if (r >= 0)
                        r = put_exit(b, ri);
                if (r >= 0)
                        r = dbuf_puts(b, ri->finished ? "\nstatus:    finished\n"
                                                      : "\nstatus:    incomplete\n");
        }

        if (r >= 0)
                r = dbuf_puts(b, "\nmemory\n  peak used:      ");
        if (r >= 0)
                r = put_point_aux(b, &s->mem_used_peak, 0, " MiB", "available", " MiB");
        if (r >= 0)
                r = dbuf_puts(b, "\n  min available:  ");
        if (r >= 0)
                r = put_point(b, &s->mem_avail_min, 0, " MiB");
        if (r >= 0)
                r = dbuf_puts(b, "\n  max swap used:  ");
        if (r >= 0)
                r = put_point(b, &s->swap_used_peak, 0, " MiB");
        if (r >= 0)
                r = dbuf_puts(b, "\n  total:          ");
        if (r >= 0)
                r = put_num(b, s->mem_total_mb, 0);
        if (r >= 0)
                r = dbuf_puts(b, " MiB\n\ndisk\n  min available:  ");
        if (r >= 0)
                r = put_point(b, &s->disk_avail_min, 2, " GiB");
        if (r >= 0)
                r = dbuf_puts(b, "\n  first -> last:  ");
        if (r >= 0)
                r = put_num(b, s->disk_avail_first, 2);
        if (r >= 0)
                r = dbuf_puts(b, " -> ");
        if (r >= 0)
                r = put_num(b, s->disk_avail_last, 2);
        if (r >= 0)
                r = dbuf_puts(b, " GiB\n\ncpu and load\n  peak load1:     ");
        if (r >= 0)
                r = put_point(b, &s->load1_peak, 2, "");
        if (r >= 0)
                r = dbuf_puts(b, "\n  average cpu:    ");
        if (r >= 0)
                r = put_num(b, avg, 1);
        if (r >= 0)
                r = dbuf_puts(b, " %\n  peak cpu:       ");
        if (r >= 0)
                r = put_point(b, &s->cpu_pct_peak, 1, " %");
        if (r >= 0)
                r = dbuf_puts(b, "\n  peak compilers: ");
        if (r >= 0)
                r = put_point(b, &s->compilers_peak, 0, "");
        if (r >= 0)
                r = render_build_text(s, b);

        if (r >= 0)
                r = dbuf_puts(b, "\n\nwarnings\n");
        if (r >= 0) {
                struct dbuf label = DBUF_INIT;

                r = dbuf_puts(&label, "near-OOM (available < ");
                if (r >= 0)
                        r = put_num(&label, s->cfg.near_oom_mb, 0);
                if (r >= 0)
                        r = dbuf_puts(&label, " MiB): ");
                if (r >= 0)
                        r = put_warning(b, label.p, s->near_oom_samples, &s->near_oom_first);
                dbuf_reset(&label);
                if (r >= 0)
                        r = dbuf_puts(&label, "low disk (available < ");
                if (r >= 0)
                        r = put_num(&label, s->cfg.low_disk_gb, 2);
                if (r >= 0)
                        r = dbuf_puts(&label, " GiB): ");
                if (r >= 0)
                        r = put_warning(b, label.p, s->low_disk_samples, &s->low_disk_first);
                dbuf_release(&label);
        }

        if (r >= 0)
                r = dbuf_puts(b, "\nreadings\n");
        if (r >= 0 && nrd == 0)
                r = dbuf_puts(b, "  none\n");
        for (size_t i = 0; r >= 0 && i < nrd; i++) {
                r = dbuf_puts(b, "  - ");
                if (r >= 0)
                        r = put_text(b, rd[i].text.p);
                if (r >= 0)
                        r = dbuf_append(b, "\n", 1);
        }

        if (r >= 0)
                r = dbuf_puts(b, "\nthresholds: near_oom_mb=");
        if (r >= 0)
                r = put_num(b, s->cfg.near_oom_mb, 0);
        if (r >= 0)
                r = dbuf_puts(b, " low_disk_gb=");
        if (r >= 0)
                r = put_num(b, s->cfg.low_disk_gb, 2);
        if (r >= 0)
                r = dbuf_printf(b, "\nsamples: %llu (skipped rows: %llu)\n",
                                (unsigned long long)s->samples,
                                (unsigned long long)s->skipped_rows);
        return r;
}

typedef int (*render_fn)(const struct summary *s, const struct run_info *ri,
                         const struct reading *rd, size_t nrd, struct dbuf *b);

/* Compute the readings, render with fn, and leave out as it was on failure. */
static int render_with(render_fn fn, const struct summary *s, const struct run_info *ri,
                       struct dbuf *out)
{
        struct reading rd[READINGS_MAX];
        size_t nrd;
        size_t old = out->len;
        int r;

        r = readings_compute(s, ri, rd, &nrd);
        if (r >= 0)
                r = fn(s, ri, rd, (size_t)r, out);
        readings_release(rd, nrd);
        if (r < 0 && out->p) {
                out->len = old;
                out->p[old] = '\0';
        }
        return r;
}

int summary_render_text(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        return render_with(render_text, s, ri, out);
}

/* "buildtel: build peak 18.2 GiB at +2h14m07s, stage S, cc1plus Foo.cpp
 * 6.1 GiB (pid 9); cpu 812.3 s (cgroup hybrid)" and a line on OOM kills. */
static int render_build_short(const struct summary_build *bd, struct dbuf *b)
{
        const struct summary_point *p = &bd->mem_peak;
        int r = dbuf_puts(b, "buildtel: build peak ");

        if (r >= 0 && !p->set)
                r = dbuf_puts(b, "memory unknown");
        if (r >= 0 && p->set) {
                r = put_size(b, p->value);
                if (r >= 0)
                        r = dbuf_puts(b, " by +");
                if (r >= 0)
                        r = put_duration(b, p->elapsed_s);
                if (r >= 0 && p->stage[0]) {
                        r = dbuf_puts(b, ", stage ");
                        if (r >= 0)
                                r = put_text(b, p->stage);
                }
                if (r >= 0 && bd->mem_peak_proc.label[0]) {
                        r = dbuf_puts(b, ", ");
                        if (r >= 0)
                                r = put_proc(b, &bd->mem_peak_proc);
                }
        }
        if (r >= 0)
                r = dbuf_puts(b, "; cpu ");
        if (r >= 0)
                r = put_num(b, bd->cpu_user_s + bd->cpu_sys_s, 1);
        if (r >= 0)
                r = dbuf_puts(b, " s (");
        if (r >= 0)
                r = put_mode(b, bd);
        if (r >= 0)
                r = dbuf_puts(b, ")\n");
        if (r >= 0 && isfinite(bd->oom_kills) && bd->oom_kills > 0) {
                r = dbuf_puts(b, "buildtel: ");
                if (r >= 0)
                        r = put_oom(b, bd);
                if (r >= 0)
                        r = dbuf_puts(b, "\n");
        }
        return r;
}

/* Three to six lines: status, memory, disk (each with its warning), then
 * one line per reading. */
static int render_short(const struct summary *s, const struct run_info *ri,
                        const struct reading *rd, size_t nrd, struct dbuf *b)
{
        const struct summary_point *m = &s->mem_used_peak, *d = &s->disk_avail_min;
        bool to_last;
        double dur = duration_of(s, ri, &to_last);
        int r;

        r = dbuf_puts(b, "buildtel: ");
        if (r >= 0)
                r = put_duration(b, dur);
        if (r >= 0)
                r = dbuf_puts(b, ", ");
        if (r >= 0)
                r = put_exit(b, ri);
        if (r >= 0 && ri && !ri->finished)
                r = dbuf_puts(b, ", incomplete");
        if (r >= 0)
                r = dbuf_puts(b, "\nbuildtel: peak memory ");
        if (r >= 0 && !m->set)
                r = dbuf_puts(b, "unknown");
        if (r >= 0 && m->set) {
                r = put_num(b, m->value, 0);
                if (r >= 0)
                        r = dbuf_puts(b, " MiB used (");
                if (r >= 0)
                        r = put_num(b, m->aux, 0);
                if (r >= 0)
                        r = dbuf_puts(b, " MiB available) at +");
                if (r >= 0)
                        r = put_duration(b, m->elapsed_s);
                if (r >= 0)
                        r = put_where(b, m);
        }
        if (r >= 0 && s->near_oom_samples > 0) {
                r = dbuf_printf(b, "; %llu near-OOM samples (available < ",
                                (unsigned long long)s->near_oom_samples);
                if (r >= 0)
                        r = put_num(b, s->cfg.near_oom_mb, 0);
                if (r >= 0)
                        r = dbuf_puts(b, " MiB)");
        }
        if (r >= 0)
                r = dbuf_puts(b, "\nbuildtel: minimum disk ");
        if (r >= 0 && !d->set)
                r = dbuf_puts(b, "unknown");
        if (r >= 0 && d->set) {
                r = put_num(b, d->value, 2);
                if (r >= 0)
                        r = dbuf_puts(b, " GiB available at +");
                if (r >= 0)
                        r = put_duration(b, d->elapsed_s);
        }
        if (r >= 0 && s->low_disk_samples > 0) {
                r = dbuf_printf(b, "; %llu low-disk samples (available < ",
                                (unsigned long long)s->low_disk_samples);
                if (r >= 0)
                        r = put_num(b, s->cfg.low_disk_gb, 2);
                if (r >= 0)
                        r = dbuf_puts(b, " GiB)");
        }
        if (r >= 0)
                r = dbuf_append(b, "\n", 1);
        if (r >= 0 && s->build.mode[0])
                r = render_build_short(&s->build, b);
        for (size_t i = 0; r >= 0 && i < nrd; i++) {
                r = dbuf_puts(b, "buildtel: ");
                if (r >= 0)
                        r = put_text(b, rd[i].text.p);
                if (r >= 0)
                        r = dbuf_append(b, "\n", 1);
        }
        return r;
}

int summary_render_short(const struct summary *s, const struct run_info *ri, struct dbuf *out)
{
        return render_with(render_short, s, ri, out);
}

int summary_write_files(const struct summary *s, const struct run_info *ri, const char *txt_path,
                        const char *json_path)
{
        struct dbuf txt = DBUF_INIT, json = DBUF_INIT;
        int r, r2;

        r = summary_render_text(s, ri, &txt);
        if (r >= 0)
                r = write_file_atomic(txt_path, txt.p, txt.len);
        /* one file failing is no reason to lose the other */
        r2 = summary_render_json(s, ri, &json);
        if (r2 >= 0)
                r2 = write_file_atomic(json_path, json.p, json.len);
        dbuf_release(&txt);
        dbuf_release(&json);
        return r < 0 ? r : r2;
}
