/* SPDX-License-Identifier: MIT */
/* The Prometheus text format (0.0.4) of a run: pure formatting into a dbuf. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/baseline.h"
#include "model/targets.h"
#include "render/prom.h"
#include "render/short.h"
#include "model/run.h"
#include "model/summary.h"
#include "util/macro.h"

/* ---- format ---- */

void prom_format_value(double v, char buf[static 32])
{
        if (isnan(v)) {
                memcpy(buf, "NaN", 4);
                return;
        }
        if (isinf(v)) {
                memcpy(buf, v > 0 ? "+Inf" : "-Inf", 5);
                return;
        }
        /* The shortest of 15..17 digits that reads back to v. */
        for (int prec = 15; prec <= 17; prec++) {
                int n = snprintf(buf, 32, "%.*g", prec, v);
                if (n > 0 && n < 32 && strtod(buf, NULL) == v)
                        return;
        }
}

/* A label value: invalid UTF-8 as U+FFFD, then backslash, newline and
 * double quote escaped, the other control bytes '?'. */
static void put_label(struct dwriter *w, const char *s, size_t len)
{
        _cleanup_dbuf_ struct dbuf clean = DBUF_INIT;

        dw_check(w, run_append_utf8_lossy(&clean, s, len, false));
        for (size_t i = 0; dw_ok(w) && i < clean.len; i++) {
                unsigned char c = (unsigned char)clean.p[i];
                if (c == '\\')
                        dw_puts(w, "\\\\");
                else if (c == '\n')
                        dw_puts(w, "\\n");
                else if (c == '"')
                        dw_puts(w, "\\\"");
                else if (c < 0x20 || c == 0x7f)
                        dw_puts(w, "?");
                else
                        dw_append(w, &clean.p[i], 1);
        }
        dw_append(w, "", 0);
}

bool prom_prefix_valid(const char *s)
{
        static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

        return *s && !(*s >= '0' && *s <= '9') && s[strspn(s, ok)] == '\0';
}

bool prom_file_valid(const char *s)
{
        size_t n = strlen(s);

        /* No control characters: a newline in a name breaks every listing
         * and log line that shows it. */
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return n > 5 && n < 200 && !strchr(s, '/') && s[0] != '.' &&
               strcmp(s + n - 5, ".prom") == 0;
}

/* One metric family: HELP/TYPE, then its samples, written only when it
 * has at least one sample. */
struct family {
        struct dwriter w;
        const char *prefix;
        const char *name, *help;
        bool started;
};

static void fam_begin(struct family *f, const char *name, const char *help)
{
        f->name = name;
        f->help = help;
        f->started = false;
}

/* The family's name, "[prefix_]build_<name>", between before and after. */
static void put_name(struct family *f, const char *before, const char *after)
{
        bool p = f->prefix && *f->prefix;

        dw_printf(&f->w, "%s%s%sbuild_%s%s", before, p ? f->prefix : "", p ? "_" : "", f->name,
                  after);
}

/* labels: NULL-terminated name/value pairs. NAN values are written as NaN
 * (callers skip what is absent before calling). */
static void fam_sample(struct family *f, double v, const char *const *labels)
{
        char val[32];

        if (!f->started) {
                put_name(f, "# HELP ", " ");
                /* HELP texts are ours, none with a backslash or newline to escape */
                dw_puts(&f->w, f->help);
                put_name(f, "\n# TYPE ", " gauge\n");
                f->started = true;
        }
        put_name(f, "", "");
        for (size_t i = 0; labels && labels[i]; i += 2) {
                dw_printf(&f->w, "%s%s=\"", i ? "," : "{", labels[i]);
                put_label(&f->w, labels[i + 1], strlen(labels[i + 1]));
                dw_puts(&f->w, "\"");
        }
        if (labels && labels[0])
                dw_puts(&f->w, "}");
        prom_format_value(v, val);
        dw_printf(&f->w, " %s\n", val);
}

/* A family of at most one sample, written when have. */
static void fam_one(struct family *f, const char *name, const char *help, bool have, double v,
                    const char *const *labels)
{
        fam_begin(f, name, help);
        if (have)
                fam_sample(f, v, labels);
}

/* The run's job (model/jobname.h) as the last label of every series,
 * buildtel_job="...", so that two jobs' textfiles on one node are two sets of
 * series (node_exporter refuses the same series from two files), and a
 * rule can take each job's usual; none when the job is unknown (a replay
 * of an older run): the NULL ends the list there. */
#define JOB_LABEL(m) (m)->run->job ? "buildtel_job" : NULL, (m)->run->job

static const struct {
        const char *name, *help;
        enum prom_tval v;
} target_series[] = {
    {"duration_seconds", "Time from the target's first step seen to its last, by buildtel's clock.",
     TV_DURATION},
    {"steps_total", "Dockerfile steps of the target (a gauge, as the seed names it).", TV_STEPS},
    {"steps_cached", "Steps of the target that came from the layer cache.", TV_CACHED},
    {"layer_cache_hit_ratio", "Cached steps over all steps of the target.", TV_CACHE_RATIO},
    {"target_success", "1 if the target was built, 0 if it failed; absent when unknown.",
     TV_SUCCESS},
    {"sccache_hits", "sccache hits of the target's build step.", TV_SC_HITS},
    {"sccache_misses", "sccache misses of the target's build step.", TV_SC_MISSES},
    {"sccache_hit_ratio", "sccache hits over hits plus misses.", TV_SC_RATIO},
    {"sccache_stats_guess",
     "1 when no marker step was found and the sccache figures are the log's last stats block.",
     TV_SC_GUESS},
    {"ccache_hits", "ccache hits reported in the build's output.", TV_CC_HITS},
    {"ccache_misses", "ccache misses reported in the build's output.", TV_CC_MISSES},
    {"ccache_hit_ratio", "ccache hits over hits plus misses.", TV_CC_RATIO},
    {"target_memory_peak_bytes",
     "Largest memory peak of one RUN step of the target (its exec cgroup, the kernel's).",
     TV_EXEC_MEM_PEAK},
    {"target_oom_kills", "Processes OOM-killed inside the target's RUN steps.", TV_EXEC_OOM},
    {"target_exec_cpu_seconds", "CPU time of the target's RUN steps inside BuildKit.", TV_EXEC_CPU},
};

double prom_target_value(const struct target_fact *t, enum prom_tval v)
{
        switch (v) {
        case TV_DURATION:
                return t->duration_s;
        case TV_STEPS:
                return t->steps_set ? t->steps : NAN;
        case TV_CACHED:
                return t->steps_set ? t->cached : NAN;
        case TV_CACHE_RATIO:
                return t->cache_ratio;
        case TV_SUCCESS:
                return t->success == TARGET_SUCCESS_UNKNOWN ? NAN : t->success;
        case TV_SC_HITS:
                return t->sccache.set ? (double)t->sccache.hits : NAN;
        case TV_SC_MISSES:
                return t->sccache.set ? (double)t->sccache.misses : NAN;
        case TV_SC_RATIO:
                return t->sccache_ratio;
        case TV_SC_GUESS:
                return t->sccache_guess ? 1 : NAN;
        case TV_CC_HITS:
                return t->ccache.set ? (double)t->ccache.hits : NAN;
        case TV_CC_MISSES:
                return t->ccache.set ? (double)t->ccache.misses : NAN;
        case TV_CC_RATIO:
                return t->ccache_ratio;
        default: /* the RUN steps': exec_value() */
                return NAN;
        }
}

/* Resource gauges from the summary, one table line each. U64 is a count,
 * DOUBLE a figure that is NAN when unknown (the build's cgroup totals:
 * absent, not zero). Bytes come from the summary's exact figures (as read,
 * not the CSV's rounded MiB/GiB). */
enum rkind { R_U64, R_DOUBLE };
static const struct {
        const char *name, *help;
        enum rkind kind;
        size_t off;
} resources[] = {
    {"memory_peak_used_bytes", "Peak memory used (MemTotal - MemAvailable) during the run.",
     R_DOUBLE, offsetof(struct summary, exact.mem_used_peak_bytes)},
    {"memory_min_available_bytes", "Minimum MemAvailable during the run.", R_DOUBLE,
     offsetof(struct summary, exact.mem_avail_min_bytes)},
    {"swap_max_used_bytes", "Maximum swap used during the run.", R_DOUBLE,
     offsetof(struct summary, exact.swap_used_peak_bytes)},
    {"disk_min_available_bytes", "Minimum disk space available on --disk-path during the run.",
     R_DOUBLE, offsetof(struct summary, exact.disk_avail_min_bytes)},
    {"near_oom_samples", "Samples with MemAvailable under --near-oom-mb.", R_U64,
     offsetof(struct summary, near_oom_samples)},
    {"low_disk_samples", "Samples with disk available under --low-disk-gb.", R_U64,
     offsetof(struct summary, low_disk_samples)},
    {"cpu_user_seconds", "CPU time of the build in user mode (its cgroup, else its process tree).",
     R_DOUBLE, offsetof(struct summary, build.cpu_user_s)},
    {"cpu_system_seconds",
     "CPU time of the build in kernel mode (its cgroup, else its process tree).", R_DOUBLE,
     offsetof(struct summary, build.cpu_sys_s)},
    {"oom_kills", "Processes of the build's cgroup killed by the OOM killer.", R_DOUBLE,
     offsetof(struct summary, build.oom_kills)},
    {"io_read_bytes", "Bytes the build read from block devices.", R_DOUBLE,
     offsetof(struct summary, exact.cg_io_read_bytes)},
    {"io_write_bytes", "Bytes the build wrote to block devices.", R_DOUBLE,
     offsetof(struct summary, exact.cg_io_write_bytes)},
    {"pressure_cpu_some_seconds", "Time some task of the build stalled waiting for CPU (PSI some).",
     R_DOUBLE, offsetof(struct summary, build.psi.some_s[PSI_CPU])},
    {"pressure_cpu_full_seconds", "Time all non-idle tasks of the build stalled on CPU (PSI full).",
     R_DOUBLE, offsetof(struct summary, build.psi.full_s[PSI_CPU])},
    {"pressure_memory_some_seconds", "Time some task of the build stalled on memory (PSI some).",
     R_DOUBLE, offsetof(struct summary, build.psi.some_s[PSI_MEM])},
    {"pressure_memory_full_seconds",
     "Time all non-idle tasks of the build stalled on memory (PSI full).", R_DOUBLE,
     offsetof(struct summary, build.psi.full_s[PSI_MEM])},
    {"pressure_io_some_seconds", "Time some task of the build stalled on IO (PSI some).", R_DOUBLE,
     offsetof(struct summary, build.psi.some_s[PSI_IO])},
    {"pressure_io_full_seconds", "Time all non-idle tasks of the build stalled on IO (PSI full).",
     R_DOUBLE, offsetof(struct summary, build.psi.full_s[PSI_IO])},
};

/* What the target's RUN steps used inside BuildKit (model/execs.h), NAN
 * for a target whose steps were not measured. */
static double exec_value(const struct targets *ts, const struct target_fact *t, enum prom_tval v)
{
        struct target_exec te;
        int idx = targets_find(ts, t->name);

        if (idx < 0)
                return NAN;
        execs_target(ts->stepv, ts->nstepv, idx, &te);
        if (!te.measured)
                return NAN;
        return v == TV_EXEC_MEM_PEAK ? te.mem_peak_bytes
               : v == TV_EXEC_OOM    ? te.oom_kills
                                     : te.cpu_s;
}

/* The run against its job's usual (model/baseline.h): the usual wall
 * time, the ratio to it, the window and the regressions, so a fleet can
 * alert on them; none without a baseline, the usual ones without enough
 * earlier runs. */
static void prom_baseline(struct family *f, const struct run_model *m, const char *const *labels)
{
        const struct baseline *b = m->summary ? m->summary->baseline : NULL;
        const struct baseline_finding *dur = render_baseline_run(b, "duration_s");
        double regressions = 0;

        if (!b)
                return;
        for (size_t i = 0; i < b->n; i++)
                regressions += b->f[i].st.verdict == BASELINE_REGRESSION;
        fam_one(f, "baseline_runs", "Earlier runs of the job the run was compared with.", true,
                (double)b->runs, labels);
        fam_one(f, "baseline_regressions",
                "Figures of the run beyond its job's usual and its noise, the worse way.", true,
                regressions, labels);
        if (!dur || dur->st.verdict == BASELINE_UNKNOWN)
                return;
        fam_one(f, "usual_duration_seconds",
                "Median wall time of the job's recent finished runs on this host.", true,
                dur->st.usual, labels);
        fam_one(f, "duration_ratio_to_usual", "Wall time of the run over its job's usual.",
                dur->st.usual > 0, dur->value / dur->st.usual, labels);
}

int prom_render(const struct run_model *m, const char *prefix, struct dbuf *out)
{
        static const struct targets none = {.make_pct = -1};
        const struct targets *ts = m->targets ? m->targets : &none;
        const struct run_facts *rf = m->facts;
        struct family f = {.w = DWRITER_INIT(out), .prefix = prefix};
        const char *inv_labels[] = {"builder", rf->builder, JOB_LABEL(m), NULL};
        double v;

        for (size_t k = 0; k < ARRAY_SIZE(target_series); k++) {
                fam_begin(&f, target_series[k].name, target_series[k].help);
                for (size_t i = 0; i < rf->n; i++) {
                        const struct target_fact *t = &rf->t[i];
                        const char *labels[] = {"target",   t->name,      "builder",
                                                t->builder, JOB_LABEL(m), NULL};

                        v = target_series[k].v >= TV_EXEC_MEM_PEAK
                                ? exec_value(ts, t, target_series[k].v)
                                : prom_target_value(t, target_series[k].v);
                        if (!isnan(v))
                                fam_sample(&f, v, labels);
                }
        }

        fam_one(&f, "invocation_duration_seconds", "Wall time of the whole invocation.",
                !isnan(rf->duration_s), rf->duration_s, inv_labels);
        fam_one(&f, "invocation_success", "1 if the invocation exited 0.",
                rf->outcome != RUN_OUTCOME_UNKNOWN, rf->outcome == RUN_OUTCOME_SUCCESS, inv_labels);
        v = !isnan(m->run->end_epoch) ? m->run->end_epoch : m->run->start_epoch;
        fam_one(&f, "last_run_timestamp_seconds", "When the invocation ended (Unix time).",
                !isnan(v), v, inv_labels);
        fam_one(&f, "invocation_steps",
                "Distinct BuildKit steps of the invocation (a step shared by targets counts once).",
                rf->steps_set, rf->steps, inv_labels);
        fam_one(&f, "invocation_steps_cached",
                "Distinct BuildKit steps that came from the layer cache.", rf->steps_set,
                rf->cached, inv_labels);
        fam_one(&f, "ninja_edges_done", "Last ninja [n/m] progress: edges finished.",
                ts->ninja_total, (double)ts->ninja_done, inv_labels);
        fam_one(&f, "ninja_edges", "Last ninja [n/m] progress: edges in the build.",
                ts->ninja_total, (double)ts->ninja_total, inv_labels);
        fam_one(&f, "make_progress_ratio", "Last make/CMake [ nn%] progress, as a ratio.",
                ts->make_pct >= 0, ts->make_pct / 100.0, inv_labels);
        fam_one(&f, "ninja_log_edges", "Edges this run recorded in .ninja_log.", ts->ninja_log_set,
                (double)ts->ninja_edges, inv_labels);

        fam_begin(&f, "build_figures_estimated",
                  "1 when the build's figures (cpu, memory, io, pids) are estimates from its "
                  "process tree (no cgroup), 0 when they are its cgroup's.");
        if (m->summary && m->summary->build.mode[0])
                fam_sample(&f, m->summary->build.estimates, inv_labels);
        for (size_t k = 0; m->summary && k < ARRAY_SIZE(resources); k++) {
                const char *base = (const char *)m->summary + resources[k].off;

                fam_begin(&f, resources[k].name, resources[k].help);
                if (resources[k].kind == R_DOUBLE) {
                        double d;
                        memcpy(&d, base, sizeof(d));
                        if (!isnan(d))
                                fam_sample(&f, d, inv_labels);
                } else {
                        uint64_t u;
                        memcpy(&u, base, sizeof(u));
                        fam_sample(&f, (double)u, inv_labels);
                }
        }
        prom_baseline(&f, m, inv_labels);
        return f.w.err < 0 ? -ENOMEM : 0;
}
