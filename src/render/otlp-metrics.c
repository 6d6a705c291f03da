/* SPDX-License-Identifier: MIT */
#include "render/otlp-metrics.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/baseline.h"
#include "model/summary.h"
#include "render/otlp-encode.h"
#include "render/prom.h"
#include "render/short.h"
#include "util/macro.h"
#include "util/util.h"

#define MiB 1048576.0
#define GiB 1073741824.0

/* Units are UCUM. OpenTelemetry semantic-convention names where one fits
 * (container.* for the build's cgroup: that is what a container runtime
 * reports from the same files), build.* otherwise. Consecutive lines with
 * the same name are one metric; their fixed attribute tells the points
 * apart. */

/* From every sample: a gauge point per sample, or a cumulative sum from the
 * latest sample (counters count from the build's start). A column that this
 * buildtel's CSV lacks is skipped. */
struct sample_line {
        const char *name, *unit, *desc;
        enum otlp_kind kind;
        const char *column;
        double scale; /* column unit -> metric unit */
        const char *akey, *aval;
};

static const struct sample_line sample_lines[] = {
    {"build.host.load.1m", "1", "Host load average over 1 minute", OTLP_GAUGE, "load1", 1, NULL,
     NULL},
    {"build.host.cpu.utilization", "1", "Host CPU busy fraction", OTLP_GAUGE, "cpu_pct", 0.01, NULL,
     NULL},
    {"build.host.memory.usage", "By", "Host memory used (total minus available)", OTLP_GAUGE,
     "mem_used_mb", MiB, NULL, NULL},
    {"build.host.memory.available", "By", "Host memory available", OTLP_GAUGE, "mem_avail_mb", MiB,
     NULL, NULL},
    {"build.host.memory.utilization", "1", "Host memory used fraction", OTLP_GAUGE, "mem_pct", 0.01,
     NULL, NULL},
    {"build.host.swap.usage", "By", "Host swap used", OTLP_GAUGE, "swap_used_mb", MiB, NULL, NULL},
    {"build.host.disk.available", "By", "Disk available on the build's filesystem", OTLP_GAUGE,
     "disk_avail_gb", GiB, NULL, NULL},
    {"build.host.disk.utilization", "1", "Disk used fraction of the build's filesystem", OTLP_GAUGE,
     "disk_pct", 0.01, NULL, NULL},
    {"build.compilers", "{process}", "Live compiler processes", OTLP_GAUGE, "compilers", 1, NULL,
     NULL},
    {"container.memory.usage", "By", "Memory of the build's cgroup", OTLP_GAUGE, "cg_mem_mb", MiB,
     NULL, NULL},
    {"build.processes", "{process}", "Processes in the build's cgroup", OTLP_GAUGE, "cg_pids", 1,
     NULL, NULL},
    {"container.cpu.time", "s", "CPU time of the build's cgroup", OTLP_SUM, "cg_cpu_user_s", 1,
     "cpu.mode", "user"},
    {"container.cpu.time", "s", "CPU time of the build's cgroup", OTLP_SUM, "cg_cpu_sys_s", 1,
     "cpu.mode", "system"},
    {"container.disk.io", "By", "Disk bytes of the build's cgroup", OTLP_SUM, "cg_io_read_mb", MiB,
     "disk.io.direction", "read"},
    {"container.disk.io", "By", "Disk bytes of the build's cgroup", OTLP_SUM, "cg_io_write_mb", MiB,
     "disk.io.direction", "write"},
#define PSI(column, which)                                                                         \
        {                                                                                          \
                "build.pressure.stall.time", "s", "Pressure stall time of the build's cgroup",     \
                    OTLP_SUM, column, 1, "build.pressure", which                                   \
        }
    PSI("cg_psi_cpu_some_s", "cpu.some"),
    PSI("cg_psi_cpu_full_s", "cpu.full"),
    PSI("cg_psi_mem_some_s", "memory.some"),
    PSI("cg_psi_mem_full_s", "memory.full"),
    PSI("cg_psi_io_some_s", "io.some"),
    PSI("cg_psi_io_full_s", "io.full"),
#undef PSI
    {"build.oom_kills", "{kill}", "OOM kills in the build's cgroup", OTLP_SUM, "cg_oom_kills", 1,
     NULL, NULL},
};

#define NSAMPLE_LINES ARRAY_SIZE(sample_lines)

/* A value of a total or a target: an integer (counts, exact to 2^63) or a
 * double. */
struct val {
        bool set, is_int;
        int64_t i;
        double d;
};

static struct val dbl(double d)
{
        return (struct val){.set = isfinite(d), .d = d};
}

static struct val cnt(bool set, uint64_t u)
{
        return (struct val){.set = set, .is_int = true, .i = (int64_t)MIN(u, (uint64_t)INT64_MAX)};
}

/* At the end only: the run's totals (add_totals()), at most this many. */
#define TOTAL_LINES 14

/* At the end only: one point per target, with attributes target and
 * builder; a compiler-cache line one per tool (attribute
 * build.compiler_cache), sccache then ccache. Every value is the model's
 * (prom_target_value()). */
struct target_line {
        const char *name, *unit, *desc;
        enum prom_tval v;
        bool is_int;
        const char *cache;
};

#define CC_LINE(what, unit, desc, sc, cc, is_int)                                                  \
        {"build.target.compiler_cache." what, unit, desc, sc, is_int, "sccache"},                  \
        {                                                                                          \
                "build.target.compiler_cache." what, unit, desc, cc, is_int, "ccache"              \
        }
static const struct target_line target_lines[] = {
    {"build.target.duration", "s", "Wall time of a target of the build", TV_DURATION, false, NULL},
    {"build.target.steps", "{step}", "Steps of a target", TV_STEPS, true, NULL},
    {"build.target.steps.cached", "{step}", "Steps of a target taken from the layer cache",
     TV_CACHED, true, NULL},
    {"build.target.success", "1", "1 if the target was built, 0 if it failed (absent: unknown)",
     TV_SUCCESS, true, NULL},
    CC_LINE("hits", "{hit}", "Compiler-cache hits of a target", TV_SC_HITS, TV_CC_HITS, true),
    CC_LINE("misses", "{miss}", "Compiler-cache misses of a target", TV_SC_MISSES, TV_CC_MISSES,
            true),
    CC_LINE("hit_ratio", "1", "Compiler-cache hit ratio of a target", TV_SC_RATIO, TV_CC_RATIO,
            false),
};
#undef CC_LINE

/* A compiler cache's count as counted: past 2^53 a double is not it. */
static uint64_t cc_count(const struct target_fact *t, enum prom_tval v)
{
        const struct cc_counts *c = v == TV_SC_HITS || v == TV_SC_MISSES ? &t->sccache : &t->ccache;

        return v == TV_SC_HITS || v == TV_CC_HITS ? c->hits : c->misses;
}

#define MAX_POINT_ATTRS 6 /* line attribute, target, builder, tool, trace, span */
/* service.name and .version, host.name, build.run.kind, .id and .state, buildtel.job */
#define RESOURCE_OURS 7

struct pending {
        double epoch;
        double v[NSAMPLE_LINES];
};

struct otlp_metrics {
        const struct otel_config *cfg;
        const struct run_info *run;
        int col[NSAMPLE_LINES]; /* sample column of each line, -1 absent */
        struct pending *ring;
        size_t head, n; /* oldest at head */
        bool have_last;
        struct pending last;
        struct otlp_attr resource[RESOURCE_OURS + OTELENV_MAX_PAIRS];
        size_t nresource;
        char trace_hex[33], span_hex[17];
};

static int column_index(const char *name)
{
        for (size_t i = 0; i < sample_column_count(); i++) {
                enum sample_column_type t;
                const char *n = sample_column_name(i, &t);
                if (t == SAMPLE_COLUMN_NUMBER && strcmp(n, name) == 0)
                        return (int)i;
        }
        return -1;
}

static void resource_set(struct otlp_metrics *m, const char *key, const char *val)
{
        for (size_t i = 0; i < m->nresource; i++)
                if (strcmp(m->resource[i].key, key) == 0) {
                        m->resource[i].s = val;
                        return;
                }
        if (m->nresource < ARRAY_SIZE(m->resource))
                m->resource[m->nresource++] =
                    (struct otlp_attr){.key = key, .type = OTLP_STRING, .s = val};
}

int otlp_metrics_new(const struct otel_config *cfg, const struct run_info *run,
                     struct otlp_metrics **ret)
{
        struct otlp_metrics *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        m->ring = calloc(OTLP_MAX_PENDING, sizeof(*m->ring));
        if (!m->ring) {
                free(m);
                return -ENOMEM;
        }
        m->cfg = cfg;
        m->run = run;
        for (size_t i = 0; i < NSAMPLE_LINES; i++)
                m->col[i] = column_index(sample_lines[i].column);
        /* Ours first, OTEL_RESOURCE_ATTRIBUTES over them, then
         * OTEL_SERVICE_NAME; the run id is always ours. */
        resource_set(m, "service.name", "buildtel");
        resource_set(m, "service.version", BUILDTEL_VERSION);
        if (run->host && *run->host)
                resource_set(m, "host.name", run->host);
        for (size_t i = 0; i < cfg->resource.n; i++)
                resource_set(m, cfg->resource.p[i].key, cfg->resource.p[i].value);
        if (cfg->service_name)
                resource_set(m, "service.name", cfg->service_name);
        if (run->kind)
                resource_set(m, "build.run.kind", run->kind);
        /* the job (issue 23): not cicd.pipeline.name, which the run span
         * gives the CI's workflow; a Prometheus translation of it is the
         * textfile's own buildtel_job label */
        if (run->job && *run->job)
                resource_set(m, "buildtel.job", run->job);
        resource_set(m, "build.run.id", run->run_id ? run->run_id : "");
        /* the run span, which the caller's TRACEPARENT is the parent of */
        if (cfg->span_set) {
                hex_encode(m->trace_hex, cfg->span.trace_id, 16);
                hex_encode(m->span_hex, cfg->span.span_id, 8);
        }
        *ret = m;
        return 0;
}

void otlp_metrics_set_resource(struct otlp_metrics *m, const char *key, const char *val)
{
        if (strcmp(key, "build.run.id") != 0)
                resource_set(m, key, val);
}

void otlp_metrics_free(struct otlp_metrics *m)
{
        if (!m)
                return;
        free(m->ring);
        free(m);
}

void otlp_metrics_add_sample(struct otlp_metrics *m, const struct sample *s)
{
        struct pending p = {.epoch = s->epoch};

        if (!isfinite(s->epoch))
                return;
        for (size_t i = 0; i < NSAMPLE_LINES; i++)
                p.v[i] = m->col[i] >= 0
                             ? sample_column_number(s, (size_t)m->col[i]) * sample_lines[i].scale
                             : NAN;
        if (m->n == OTLP_MAX_PENDING) {
                m->head = (m->head + 1) % OTLP_MAX_PENDING;
                m->n--;
        }
        m->ring[(m->head + m->n) % OTLP_MAX_PENDING] = p;
        m->n++;
        m->last = p;
        m->have_last = true;
}

size_t otlp_metrics_pending(const struct otlp_metrics *m)
{
        return m->n;
}

/* The CSV keeps milliseconds: whole milliseconds make the nanoseconds
 * exact, the same from a live run and from its files. */
static uint64_t to_ns(double epoch)
{
        if (!(epoch > 0) || epoch > 9e9)
                return 0;
        return (uint64_t)llround(epoch * 1e3) * 1000000u;
}

struct build {
        struct otlp_metrics *m;
        struct otlp_metric *metrics;
        size_t nmetrics;
        struct otlp_point *points;
        size_t npoints;
        struct otlp_attr *attrs;
        size_t nattrs;
};

/* A new metric unless the last one has this name. */
static void metric(struct build *B, const char *name, const char *unit, const char *desc,
                   enum otlp_kind kind)
{
        struct otlp_metric *last = B->nmetrics ? &B->metrics[B->nmetrics - 1] : NULL;

        if (last && strcmp(last->name, name) == 0)
                return;
        B->metrics[B->nmetrics++] = (struct otlp_metric){
            .name = name,
            .unit = unit,
            .description = desc,
            .kind = kind,
            .monotonic = kind == OTLP_SUM,
            .points = &B->points[B->npoints],
        };
}

static struct otlp_attr *attr(struct build *B)
{
        return &B->attrs[B->nattrs++];
}

static void str_attr(struct build *B, const char *k, const char *v)
{
        *attr(B) = (struct otlp_attr){.key = k, .type = OTLP_STRING, .s = v};
}

/* A point of the current metric; attributes are the ones added since
 * attrs_start, plus the trace ids. */
static void point(struct build *B, size_t attrs_start, uint64_t start_ns, uint64_t time_ns,
                  struct val v)
{
        struct otlp_point *p = &B->points[B->npoints++];

        if (B->m->cfg->span_set) {
                str_attr(B, "trace_id", B->m->trace_hex);
                str_attr(B, "span_id", B->m->span_hex);
        }
        *p = (struct otlp_point){
            .start_ns = start_ns,
            .time_ns = time_ns,
            .is_int = v.is_int,
            .i = v.is_int ? v.i : 0,
            .d = v.is_int ? 0 : v.d,
            .attrs = &B->attrs[attrs_start],
            .nattrs = B->nattrs - attrs_start,
        };
        B->metrics[B->nmetrics - 1].npoints++;
}

static void add_samples(struct build *B)
{
        struct otlp_metrics *m = B->m;
        uint64_t start_ns = to_ns(m->run->start_epoch);

        for (size_t i = 0; i < NSAMPLE_LINES; i++) {
                const struct sample_line *l = &sample_lines[i];

                if (m->col[i] < 0)
                        continue;
                if (l->kind == OTLP_GAUGE) {
                        for (size_t k = 0; k < m->n; k++) {
                                const struct pending *p =
                                    &m->ring[(m->head + k) % OTLP_MAX_PENDING];
                                if (!isfinite(p->v[i]) || !to_ns(p->epoch))
                                        continue;
                                /* opened at its first point, once (metric()) */
                                metric(B, l->name, l->unit, l->desc, l->kind);
                                point(B, B->nattrs, 0, to_ns(p->epoch), dbl(p->v[i]));
                        }
                } else if (m->have_last && isfinite(m->last.v[i]) && to_ns(m->last.epoch)) {
                        size_t a = B->nattrs;
                        metric(B, l->name, l->unit, l->desc, l->kind);
                        if (l->akey)
                                str_attr(B, l->akey, l->aval);
                        point(B, a, start_ns ? start_ns : to_ns(m->last.epoch),
                              to_ns(m->last.epoch), dbl(m->last.v[i]));
                }
        }
}

/* The totals, then the per-target lines. Unknown totals (set false) are
 * not sent; bytes are summary->exact's, as the platform layer read them,
 * not the CSV's rounded MiB and GiB. */
static void add_totals(struct build *B, const struct run_model *fm)
{
        const struct run_facts *f = fm->facts;
        const struct summary *s = fm->summary;
        /* the run's wall time against its job's usual (model/baseline.h):
         * sent when the usual is known (enough earlier runs) */
        const struct baseline_finding *dur = render_baseline_run(s->baseline, "duration_s");
        const struct baseline_finding *u = dur && dur->st.verdict != BASELINE_UNKNOWN ? dur : NULL;
        const char *result = targets_outcome_name(f->outcome);
        const struct val none = {0};
        uint64_t t = to_ns(isfinite(fm->run->end_epoch) ? fm->run->end_epoch : s->last_epoch);
        const struct {
                const char *name, *unit, *desc;
                struct val v;
        } totals[TOTAL_LINES] = {
            {"build.duration", "s", "Wall time of the build", dbl(f->duration_s)},
            {"build.figures.estimated", "1",
             "1 when the build's figures are estimates from its process tree (no cgroup)",
             s->build.mode[0] ? cnt(true, s->build.estimates) : none},
            {"build.host.memory.usage.max", "By", "Peak host memory used",
             dbl(s->exact.mem_used_peak_bytes)},
            {"build.host.memory.available.min", "By", "Least host memory available",
             dbl(s->exact.mem_avail_min_bytes)},
            {"build.host.swap.usage.max", "By", "Peak host swap used",
             dbl(s->exact.swap_used_peak_bytes)},
            {"build.host.disk.available.min", "By", "Least disk available",
             dbl(s->exact.disk_avail_min_bytes)},
            {"build.host.load.1m.max", "1", "Peak 1-minute load average",
             s->load1_peak.set ? dbl(s->load1_peak.value) : none},
            {"build.host.cpu.utilization.avg", "1", "Average host CPU busy fraction",
             s->cpu_pct_n ? dbl(s->cpu_pct_sum / (double)s->cpu_pct_n / 100.0) : none},
            {"build.near_oom.samples", "{sample}",
             "Samples with memory available under the near-OOM threshold",
             cnt(true, s->near_oom_samples)},
            {"build.samples", "{sample}", "Samples recorded", cnt(true, s->samples)},
            {"build.steps", "{step}",
             "Distinct BuildKit steps of the build (a step shared by targets counts once)",
             cnt(f->steps_set, f->steps)},
            {"build.steps.cached", "{step}", "Distinct BuildKit steps taken from the layer cache",
             cnt(f->steps_set, f->cached)},
            {"build.duration.usual", "s",
             "Median wall time of the job's recent finished runs on this host",
             u ? dbl(u->st.usual) : none},
            {"build.duration.ratio_to_usual", "1", "Wall time of the build over its job's usual",
             u && u->st.usual > 0 ? dbl(u->value / u->st.usual) : none},
        };

        if (!t)
                return;
        for (size_t i = 0; i < TOTAL_LINES; i++) {
                size_t a = B->nattrs;

                if (!totals[i].v.set)
                        continue;
                metric(B, totals[i].name, totals[i].unit, totals[i].desc, OTLP_GAUGE);
                if (i == 1) /* build.figures.estimated: of which accounting */
                        str_attr(B, "build.cgroup.mode", s->build.mode);
                if (i == 0 && result) /* build.duration: how the build ended */
                        str_attr(B, "cicd.pipeline.result", result);
                if (i == 0 && f->exit_code >= 0)
                        *attr(B) = (struct otlp_attr){
                            .key = "build.exit_code", .type = OTLP_INT, .i = f->exit_code};
                point(B, a, 0, t, totals[i].v);
        }
        for (size_t i = 0; i < ARRAY_SIZE(target_lines); i++) {
                const struct target_line *l = &target_lines[i];

                for (size_t k = 0; k < f->n; k++) {
                        const struct target_fact *tg = &f->t[k];
                        double d = prom_target_value(tg, l->v);
                        size_t a = B->nattrs;

                        if (!isfinite(d))
                                continue;
                        metric(B, l->name, l->unit, l->desc, OTLP_GAUGE);
                        str_attr(B, "target", tg->name);
                        str_attr(B, "builder", tg->builder);
                        if (l->cache)
                                str_attr(B, "build.compiler_cache", l->cache);
                        point(B, a, 0, t,
                              !l->is_int ? dbl(d)
                              : l->cache ? cnt(true, cc_count(tg, l->v))
                                         : cnt(true, (uint64_t)d));
                }
        }
}

int otlp_metrics_encode(struct otlp_metrics *m, const struct run_model *final, bool json,
                        struct dbuf *out)
{
        size_t ntargets = final ? final->facts->n : 0;
        size_t maxm = NSAMPLE_LINES + TOTAL_LINES + ARRAY_SIZE(target_lines);
        size_t maxp =
            NSAMPLE_LINES * (m->n + 1) + TOTAL_LINES + ARRAY_SIZE(target_lines) * ntargets;
        struct build B = {.m = m};
        struct otlp_request rq = {
            .resource = m->resource,
            .nresource = m->nresource,
            .scope_name = "buildtel",
            .scope_version = BUILDTEL_VERSION,
            .has_trace = m->cfg->span_set,
        };
        int e = -ENOMEM;

        B.metrics = calloc(maxm, sizeof(*B.metrics));
        B.points = calloc(maxp, sizeof(*B.points));
        B.attrs = calloc(maxp * MAX_POINT_ATTRS, sizeof(*B.attrs));
        if (B.metrics && B.points && B.attrs) {
                add_samples(&B);
                if (final)
                        add_totals(&B, final);
                rq.metrics = B.metrics;
                rq.nmetrics = B.nmetrics;
                if (m->cfg->span_set) {
                        memcpy(rq.trace_id, m->cfg->span.trace_id, 16);
                        memcpy(rq.span_id, m->cfg->span.span_id, 8);
                }
                e = otlp_encode(&rq, json, out);
        }
        free(B.metrics);
        free(B.points);
        free(B.attrs);
        if (e >= 0)
                m->head = m->n = 0;
        return e;
}

const struct otlp_attr *otlp_metrics_resource(const struct otlp_metrics *m, size_t *ret_n)
{
        *ret_n = m->nresource;
        return m->resource;
}
