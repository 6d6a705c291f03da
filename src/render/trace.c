/* SPDX-License-Identifier: MIT */
#include "render/trace.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/spans.h"
#include "render/jsonw.h"
#include "render/trace-lanes.h"
#include "util/macro.h"

enum { PID_BUILD = 1, PID_TARGETS = 2, PID_NINJA = 3, PID_UNITS = 4, PID_STEPS = 5, PIDS };
/* The order the processes are shown in: the steps under their targets. */
static const int pid_sort[PIDS] = {
    [PID_BUILD] = 1, [PID_TARGETS] = 2, [PID_STEPS] = 3, [PID_NINJA] = 4, [PID_UNITS] = 5};
/* The process of each kind of span. */
static const int kind_pid[SPAN_KINDS] = {[SPAN_TARGET] = PID_TARGETS,
                                         [SPAN_STEP] = PID_STEPS,
                                         [SPAN_EDGE] = PID_NINJA,
                                         [SPAN_UNIT] = PID_UNITS};

#define TRACE_NAME_MAX 512 /* bytes of a slice name kept */
#define TRACE_MEMCOLS_MAX 8
#define TRACE_KV_MAX (1 + TRACE_MEMCOLS_MAX)

/* The counter tracks, each with the values it last wrote: a counter holds
 * its value until its next event, so an unchanged one is not repeated.
 * The Trace Event Format draws the series of one "C" event as a stacked
 * area chart: series share a track only when their sum means something
 * (anon + file is the build's memory, used + available about the host's);
 * the total and each PSI resource get tracks of their own. */
enum track {
        TRACK_HOST_MEM,
        TRACK_BUILD_MEM,
        TRACK_BUILD_SPLIT,
        TRACK_CPU,
        TRACK_LOAD,
        TRACK_DISK,
        TRACK_COMPILERS,
        TRACK_PSI_CPU,
        TRACK_PSI_MEM,
        TRACK_PSI_IO,
        TRACKS
};

static const char *const track_name[TRACKS] = {
    [TRACK_HOST_MEM] = "host memory (MiB)",
    [TRACK_BUILD_MEM] = "build memory (MiB)",
    [TRACK_BUILD_SPLIT] = "build memory by kind (MiB)",
    [TRACK_CPU] = "CPU (%)",
    [TRACK_LOAD] = "load",
    [TRACK_DISK] = "disk available (GiB)",
    [TRACK_COMPILERS] = "compilers",
    [TRACK_PSI_CPU] = "PSI cpu some stall (%)",
    [TRACK_PSI_MEM] = "PSI memory some stall (%)",
    [TRACK_PSI_IO] = "PSI io some stall (%)",
};

struct kv {
        const char *key;
        double v;
};

struct trace {
        struct trace_config cfg;
        const struct run_info *ri;
        struct dbuf buf;
        struct dwriter w;       /* over buf */
        bool any;               /* an event was written */
        struct spans sp;        /* the slices: the model's spans (model/spans.h) */
        uint32_t steps_dropped; /* BuildKit vertices past the model's cap */
        double end_s;           /* the run's end on its clock; NAN unknown */
        double last_elapsed;
        /* the previous sample, for rises and rates */
        double prev_oom, prev_elapsed, prev_psi[3];
        char prev_top[SAMPLE_PROC_MAX + 1];
        bool near_oom_seen, low_disk_seen;
        /* the build's memory columns beyond cg_mem_mb (anon, file, ...) */
        size_t memcol[TRACE_MEMCOLS_MAX];
        char memkey[TRACE_MEMCOLS_MAX][24];
        size_t nmemcols;
        bool track_set[TRACKS];
        double track_last[TRACKS][TRACE_KV_MAX];
};

static int64_t us(double s)
{
        double v = s * 1e6;

        if (!(v > 0))
                return 0;
        return v >= 9e18 ? INT64_MAX / 2 : (int64_t)llround(v);
}

/* The common head of an event: {"name":..,"ph":..,"ts":..,"pid":..,"tid":.. */
static void ev_head(struct trace *t, const char *name, size_t nlen, char ph, int64_t ts, int pid,
                    int64_t tid)
{
        dw_puts(&t->w, t->any ? ",\n{\"name\":" : "\n{\"name\":");
        t->any = true;
        jsonw_put(&t->w, name, nlen);
        dw_printf(&t->w, ",\"ph\":\"%c\",\"ts\":%lld,\"pid\":%d", ph, (long long)ts, pid);
        /* a counter belongs to its process: no thread */
        if (ph != 'C')
                dw_printf(&t->w, ",\"tid\":%lld", (long long)tid);
}

/* Counters to 0.01 of their unit (MiB, GiB, %, load): finer is noise,
 * and it keeps a day of them small. */
static double round2(double v)
{
        return fabs(v) < 1e13 ? round(v * 100.0) / 100.0 : v;
}

static void put_num(struct dwriter *w, const char *key, double v, bool comma)
{
        char num[64];
        int n = fabs(v) < 1e13 ? snprintf(num, sizeof(num), "%.2f", v)
                               : snprintf(num, sizeof(num), "%.15g", v);

        if (n <= 0 || (size_t)n >= sizeof(num)) {
                dw_check(w, -EINVAL);
                return;
        }
        if (fabs(v) < 1e13) { /* "12.50" -> "12.5", "3.00" -> "3" */
                while (num[n - 1] == '0')
                        n--;
                if (num[n - 1] == '.')
                        n--;
                if (n == 2 && num[0] == '-' && num[1] == '0')
                        num[0] = '0', n = 1; /* -0.001 */
        }
        dw_printf(w, "%s\"%s\":%.*s", comma ? "," : "", key, n, num);
}

/* Values the same as last written: NAN is the same as NAN. */
static bool same_values(const double *last, const struct kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!(last[i] == kv[i].v || (isnan(last[i]) && isnan(kv[i].v))))
                        return false;
        return true;
}

/* A counter track: the finite values of kv; nothing when none is, or when
 * they are what the track holds already. */
static void counter(struct trace *t, enum track tr, int64_t ts, struct kv *kv, size_t n)
{
        const char *name = track_name[tr];
        bool any = false;

        for (size_t i = 0; i < n; i++) {
                kv[i].v = round2(kv[i].v);
                any |= isfinite(kv[i].v);
        }
        if (!any || (t->track_set[tr] && same_values(t->track_last[tr], kv, n)))
                return;
        t->track_set[tr] = true;
        for (size_t i = 0; i < n; i++)
                t->track_last[tr][i] = kv[i].v;
        ev_head(t, name, strlen(name), 'C', ts, PID_BUILD, 0);
        dw_puts(&t->w, ",\"args\":{");
        any = false;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(kv[i].v))
                        continue;
                put_num(&t->w, kv[i].key, kv[i].v, any);
                any = true;
        }
        dw_puts(&t->w, "}}");
}

/* A global instant on the build's process, up to its args' members: the
 * caller writes them and closes it with "}}". */
static void instant(struct trace *t, const char *name, int64_t ts)
{
        ev_head(t, name, strlen(name), 'i', ts, PID_BUILD, 0);
        dw_puts(&t->w, ",\"s\":\"g\",\"args\":{");
}

static void find_memcols(struct trace *t)
{
        const char *name;

        for (size_t i = 0; (name = sample_column_name(i, NULL)); i++) {
                enum sample_column_type ty;
                size_t n = strlen(name);

                (void)sample_column_name(i, &ty);
                if (ty != SAMPLE_COLUMN_NUMBER || strncmp(name, "cg_mem_", 7) != 0 || n < 10 ||
                    strcmp(name + n - 3, "_mb") != 0 || strcmp(name, "cg_mem_mb") == 0 ||
                    strcmp(name, "cg_mem_peak_mb") == 0 || t->nmemcols >= TRACE_MEMCOLS_MAX)
                        continue;
                /* cg_mem_anon_mb: "anon" on the MiB track */
                t->memcol[t->nmemcols] = i;
                snprintf(t->memkey[t->nmemcols++], sizeof(t->memkey[0]), "%.*s",
                         (int)MIN(n - 10, sizeof(t->memkey[0]) - 1), name + 7);
        }
}

int trace_new(const struct trace_config *cfg, const struct run_info *ri, struct trace **ret)
{
        struct trace *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->cfg = *cfg;
        t->w = (struct dwriter)DWRITER_INIT(&t->buf);
        t->sp.max = cfg->max_slices ? cfg->max_slices : TRACE_SLICES_MAX;
        t->ri = ri;
        t->end_s = figure_run_duration(ri->start_epoch, ri->end_epoch, NAN, NULL);
        t->prev_elapsed = NAN;
        for (size_t i = 0; i < ARRAY_SIZE(t->prev_psi); i++)
                t->prev_psi[i] = NAN;
        find_memcols(t);
        dw_puts(&t->w, "{\"traceEvents\":[");
        if (t->w.err < 0) {
                trace_free(t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

struct dbuf *trace_output(struct trace *t)
{
        return &t->buf;
}

void trace_free(struct trace *t)
{
        if (!t)
                return;
        spans_release(&t->sp);
        dbuf_release(&t->buf);
        free(t);
}

/* PSI stall as % of wall time since the previous sample, per resource. */
static void psi_rates(struct trace *t, const struct sample *s, int64_t ts)
{
        const double *cur = s->cg_psi.some_s;
        double dt = s->elapsed_s - t->prev_elapsed;
        struct kv kv[3] = {{"cpu", NAN}, {"memory", NAN}, {"io", NAN}};

        for (size_t i = 0; i < 3; i++) {
                double d = cur[i] - t->prev_psi[i];
                if (dt > 0 && d >= 0)
                        kv[i].v = d / dt * 100.0;
                t->prev_psi[i] = cur[i];
                counter(t, TRACK_PSI_CPU + i, ts, &kv[i], 1);
        }
}

static void sample_instants(struct trace *t, const struct sample *s, int64_t ts)
{
        if (isfinite(s->cg_oom_kills) &&
            s->cg_oom_kills > (isfinite(t->prev_oom) ? t->prev_oom : 0)) {
                instant(t, "OOM kill", ts);
                dw_printf(&t->w, "\"kills\":%.10g,\"largest_process_before\":", s->cg_oom_kills);
                jsonw_put(&t->w, t->prev_top, strlen(t->prev_top));
                dw_puts(&t->w, "}}");
        }
        if (isfinite(s->cg_oom_kills))
                t->prev_oom = s->cg_oom_kills;
        double avail_mb = s->mem_avail_bytes / SAMPLE_MIB,
               disk_gb = s->disk_avail_bytes / SAMPLE_GIB;

        if (!t->near_oom_seen && !isnan(avail_mb) && avail_mb < t->cfg.thresholds.near_oom_mb) {
                t->near_oom_seen = true;
                instant(t, "first near-OOM sample", ts);
                dw_printf(&t->w, "\"available_mb\":%.10g,\"threshold_mb\":%.10g}}", avail_mb,
                          t->cfg.thresholds.near_oom_mb);
        }
        if (!t->low_disk_seen && !isnan(disk_gb) && disk_gb < t->cfg.thresholds.low_disk_gb) {
                t->low_disk_seen = true;
                instant(t, "first low-disk sample", ts);
                dw_printf(&t->w, "\"available_gb\":%.10g,\"threshold_gb\":%.10g}}", disk_gb,
                          t->cfg.thresholds.low_disk_gb);
        }
}

int trace_sample(struct trace *t, const struct sample *s)
{
        struct kv split[TRACE_MEMCOLS_MAX];
        const struct {
                enum track tr;
                struct kv *kv;
                size_t n;
        } c[] = {
            {TRACK_HOST_MEM,
             (struct kv[]){{"used", s->mem_used_bytes / SAMPLE_MIB},
                           {"available", s->mem_avail_bytes / SAMPLE_MIB}},
             2},
            {TRACK_BUILD_MEM, (struct kv[]){{"cgroup", s->cg_mem_bytes / SAMPLE_MIB}}, 1},
            {TRACK_BUILD_SPLIT, split, t->nmemcols},
            {TRACK_CPU, (struct kv[]){{"host", s->cpu_pct}}, 1},
            {TRACK_LOAD, (struct kv[]){{"load1", s->load1}}, 1},
            {TRACK_DISK, (struct kv[]){{"available", s->disk_avail_bytes / SAMPLE_GIB}}, 1},
            {TRACK_COMPILERS, (struct kv[]){{"in flight", s->compilers}}, 1},
        };
        int64_t ts;

        if (!isfinite(s->elapsed_s))
                return 0;
        ts = us(s->elapsed_s);
        for (size_t i = 0; i < t->nmemcols; i++)
                split[i] = (struct kv){t->memkey[i], sample_column_number(s, t->memcol[i])};
        /* counter() writes nothing for no values (no memory columns) */
        for (size_t i = 0; i < ARRAY_SIZE(c); i++)
                counter(t, c[i].tr, ts, c[i].kv, c[i].n);
        psi_rates(t, s, ts);
        sample_instants(t, s, ts);
        if (t->w.err < 0)
                return t->w.err;
        t->prev_elapsed = s->elapsed_s;
        t->last_elapsed = MAX(t->last_elapsed, s->elapsed_s);
        snprintf(t->prev_top, sizeof(t->prev_top), "%s", s->top_proc ? s->top_proc : "");
        return 0;
}

struct spans *trace_spans(struct trace *t)
{
        return &t->sp;
}

void trace_set_steps_dropped(struct trace *t, uint32_t n)
{
        t->steps_dropped = n;
}

void trace_set_end(struct trace *t, double end_s)
{
        if (!isfinite(t->end_s))
                t->end_s = end_s;
}

static int cmp_slice(const void *a, const void *b)
{
        const struct span *x = a, *y = b;

        int64_t xs = us(x->start_s), ys = us(y->start_s), xe = us(x->end_s), ye = us(y->end_s);

        if (kind_pid[x->kind] != kind_pid[y->kind])
                return kind_pid[x->kind] < kind_pid[y->kind] ? -1 : 1;
        if (x->group != y->group)
                return x->group < y->group ? -1 : 1;
        if (xs != ys)
                return xs < ys ? -1 : 1;
        if (xe != ye)
                return xe > ye ? -1 : 1; /* the longer first */
        return 0;
}

/* A key (its '"name":' text) and a JSON string. */
static void put_str(struct dwriter *w, const char *key, const char *s)
{
        dw_puts(w, key);
        jsonw_put(w, s, strlen(s));
}

/* A compile unit's args: its tool, peak RSS and CPU where known. */
static void unit_args(struct dwriter *w, const struct span *s)
{
        put_str(w, "\"tool\":", s->unit->tool);
        if (isfinite(s->unit->peak_mb))
                put_num(w, "peak_mb", s->unit->peak_mb, true);
        if (isfinite(s->unit->cpu_s))
                put_num(w, "cpu_s", s->unit->cpu_s, true);
}

/* What a RUN step used inside BuildKit, where measured. */
static void exec_args(struct dwriter *w, const struct step_exec *x)
{
        const struct kv kv[] = {
            {"mem_peak_mb", x->mem_peak_bytes / SAMPLE_MIB},
            {"anon_peak_mb", x->anon_peak_bytes / SAMPLE_MIB},
            {"cpu_s", x->cpu_s},
            {"io_read_mb", x->io_read_bytes / SAMPLE_MIB},
            {"io_write_mb", x->io_write_bytes / SAMPLE_MIB},
            {"net_rx_bytes", x->net_rx_bytes},
            {"net_tx_bytes", x->net_tx_bytes},
            {"oom_kills", x->oom_kills},
        };

        for (size_t i = 0; i < ARRAY_SIZE(kv); i++)
                if (isfinite(kv[i].v))
                        put_num(w, kv[i].key, kv[i].v, true);
        if (x->peak_proc[0])
                put_str(w, ",\"peak_proc\":", x->peak_proc);
        if (x->oom_victim[0])
                put_str(w, ",\"oom_victim\":", x->oom_victim);
}

#define TF(b) ((b) ? "true" : "false")

/* A BuildKit step's args: its target, whether it is a [i/n] step, and how
 * it ended. */
static void step_args(struct dwriter *w, const struct span *s)
{
        if (s->target[0])
                put_str(w, "\"target\":", s->target);
        else
                dw_puts(w, "\"target\":null");
        dw_printf(w, ",\"step\":%s,\"cached\":%s,\"error\":%s,\"canceled\":%s", TF(s->sf->step),
                  TF(s->sf->cached), TF(s->sf->error), TF(s->sf->canceled));
        if (s->sf->exec.set)
                exec_args(w, &s->sf->exec);
}

static void slice_event(struct trace *t, const struct span *s, int64_t lane)
{
        static const char *const cat[PIDS] = {[PID_TARGETS] = "target",
                                              [PID_STEPS] = "step",
                                              [PID_NINJA] = "ninja",
                                              [PID_UNITS] = "unit"};
        struct dwriter *w = &t->w;

        ev_head(t, s->name, MIN(strnlen(s->name, s->len), TRACE_NAME_MAX), 'X', us(s->start_s),
                kind_pid[s->kind], lane);
        dw_printf(w, ",\"dur\":%lld,\"cat\":\"%s\",\"args\":{",
                  (long long)(us(s->end_s) - us(s->start_s)), cat[kind_pid[s->kind]]);
        if (s->kind == SPAN_UNIT)
                unit_args(w, s);
        if (s->kind == SPAN_STEP)
                step_args(w, s);
        if (s->kind == SPAN_TARGET) {
                dw_printf(w, "\"success\":%s",
                          s->tf->success == TARGET_BUILT    ? "true"
                          : s->tf->success == TARGET_FAILED ? "false"
                                                            : "null");
                if (s->tf->steps_set)
                        dw_printf(w, ",\"steps\":%u,\"cached\":%u", s->tf->steps, s->tf->cached);
        }
        if (s->critical) /* the edge's args are empty */
                dw_puts(w, s->kind == SPAN_EDGE ? "\"critical_path\":true"
                                                : ",\"critical_path\":true");
        dw_puts(w, "}}");
}

static void meta(struct trace *t, const char *what, int pid, int64_t tid, const char *key,
                 const char *name, int64_t sort)
{
        ev_head(t, what, strlen(what), 'M', 0, pid, tid);
        if (name) {
                dw_printf(&t->w, ",\"args\":{\"%s\":", key);
                jsonw_put(&t->w, name, strlen(name));
                dw_puts(&t->w, "}}");
        } else {
                dw_printf(&t->w, ",\"args\":{\"%s\":%lld}}", key, (long long)sort);
        }
}

/* The slices of one group of a process (sl[0..n), sorted) on lanes of
 * their own, numbered from *tid; the lanes are named after the group (a
 * step's target) when it has a name. */
static void write_group(struct trace *t, int pid, const struct span *sl, size_t n,
                        struct trace_span *spans, uint32_t *lane, int64_t *tid)
{
        const char *gname = pid == PID_STEPS && sl[0].target[0] ? sl[0].target : NULL;
        int64_t lanes;

        for (size_t i = 0; i < n; i++)
                spans[i] = (struct trace_span){us(sl[i].start_s), us(sl[i].end_s)};
        lanes = trace_lanes_assign(spans, n, lane);
        if (lanes < 0) {
                dw_check(&t->w, (int)lanes);
                return;
        }
        for (size_t i = 0; i < n; i++)
                slice_event(t, &sl[i], *tid + lane[i]);
        for (int64_t l = 0; l < lanes; l++) {
                char name[TARGET_NAME_MAX + 32];

                if (gname)
                        snprintf(name, sizeof(name), "%s %lld", gname, (long long)l + 1);
                else
                        snprintf(name, sizeof(name), "lane %lld", (long long)*tid + l + 1);
                meta(t, "thread_name", pid, *tid + l, "name", name, 0);
                meta(t, "thread_sort_index", pid, *tid + l, "sort_index", NULL, *tid + l);
        }
        *tid += lanes;
}

static void process_meta(struct trace *t, int pid, const char *name)
{
        meta(t, "process_name", pid, 0, "name", name, 0);
        meta(t, "process_sort_index", pid, 0, "sort_index", NULL, pid_sort[pid]);
}

/* The slices of one process (sl[0..n), sorted by group and start), on
 * their lanes: per group, so a target's steps share lanes only with each
 * other. */
static void write_process(struct trace *t, int pid, const char *pname, const struct span *sl,
                          size_t n)
{
        struct trace_span *spans = calloc(n + 1, sizeof(*spans));
        uint32_t *lane = calloc(n + 1, sizeof(*lane));
        int64_t tid = 0;

        dw_check(&t->w, spans && lane ? 0 : -ENOMEM);
        for (size_t i = 0; i < n && dw_ok(&t->w);) {
                size_t j = i;
                while (j < n && sl[j].group == sl[i].group)
                        j++;
                write_group(t, pid, sl + i, j - i, spans, lane, &tid);
                i = j;
        }
        process_meta(t, pid, pname);
        free(spans);
        free(lane);
}

/* The run: one slice on the build process, named after its command. */
static void run_event(struct trace *t)
{
        struct dbuf name = DBUF_INIT;
        struct dwriter nw = DWRITER_INIT(&name), *w = &t->w;
        double end = isfinite(t->end_s) ? t->end_s : t->last_elapsed;

        dw_puts(&nw, "buildtel run");
        for (char **a = t->ri->argv; a && *a && name.len < TRACE_NAME_MAX; a++) {
                dw_puts(&nw, " ");
                dw_puts(&nw, *a);
        }
        dw_check(w, nw.err);
        ev_head(t, name.p, MIN(name.len, TRACE_NAME_MAX), 'X', 0, PID_BUILD, 0);
        dw_printf(w, ",\"dur\":%lld,\"cat\":\"run\",\"args\":{", (long long)us(end));
        put_str(w, "\"run_id\":", t->ri->run_id ? t->ri->run_id : "");
        if (t->ri->exit_code >= 0)
                dw_printf(w, ",\"exit_code\":%d", t->ri->exit_code);
        if (t->ri->term_signal > 0)
                dw_printf(w, ",\"signal\":%d", t->ri->term_signal);
        dw_puts(w, "}}");
        process_meta(t, PID_BUILD, "build");
        meta(t, "thread_name", PID_BUILD, 0, "name", "run", 0);
        dbuf_release(&name);
}

struct mem_point {
        int64_t ts;
        double delta;
};

static int cmp_point(const void *a, const void *b)
{
        const struct mem_point *x = a, *y = b;

        if (x->ts != y->ts)
                return x->ts < y->ts ? -1 : 1;
        return (x->delta > y->delta) - (x->delta < y->delta); /* ends first */
}

/* Per target, a counter of its RUN steps' memory: the sum of the kernel
 * peaks of the steps running at each instant (a step holds its peak from
 * its start to its end), on the steps' process. sl is sorted by group. */
static void target_memory(struct trace *t, const struct span *sl, size_t n)
{
        struct mem_point *pt = calloc(2 * n + 1, sizeof(*pt));

        dw_check(&t->w, pt ? 0 : -ENOMEM);
        for (size_t i = 0; i < n && dw_ok(&t->w);) {
                size_t j = i, np = 0;
                char name[TARGET_NAME_MAX + 32];
                double cur = 0;
                int k;

                for (; j < n && sl[j].group == sl[i].group; j++) {
                        double mb = sl[j].sf->exec.mem_peak_bytes / SAMPLE_MIB;
                        if (!sl[j].sf->exec.set || !isfinite(mb))
                                continue;
                        pt[np++] = (struct mem_point){us(sl[j].start_s), mb};
                        pt[np++] = (struct mem_point){us(sl[j].end_s), -mb};
                }
                k = snprintf(name, sizeof(name), "memory %s (MiB)",
                             sl[i].target[0] ? sl[i].target : "steps");
                if (k < 0 || (size_t)k >= sizeof(name))
                        k = snprintf(name, sizeof(name), "memory (MiB)");
                qsort(pt, np, sizeof(*pt), cmp_point);
                for (size_t q = 0; q < np; q++) {
                        cur += pt[q].delta;
                        if (q + 1 < np && pt[q + 1].ts == pt[q].ts)
                                continue; /* one value per instant */
                        ev_head(t, name, strlen(name), 'C', pt[q].ts, PID_STEPS, 0);
                        dw_puts(&t->w, ",\"args\":{");
                        put_num(&t->w, "step_peak_mb", round2(fmax(cur, 0)), false);
                        dw_puts(&t->w, "}}");
                }
                i = j;
        }
        free(pt);
}

int trace_finish(struct trace *t)
{
        static const char *const pname[PIDS] = {[PID_TARGETS] = "targets",
                                                [PID_STEPS] = "BuildKit steps",
                                                [PID_NINJA] = "ninja",
                                                [PID_UNITS] = "compile units"};
        run_event(t);
        /* the Chrome trace's order: parents are not used past here */
        if (t->sp.n)
                qsort(t->sp.v, t->sp.n, sizeof(*t->sp.v), cmp_slice);
        for (size_t i = 0; i < t->sp.n && dw_ok(&t->w);) {
                const struct span *v = t->sp.v;
                size_t j = i;
                while (j < t->sp.n && kind_pid[v[j].kind] == kind_pid[v[i].kind])
                        j++;
                write_process(t, kind_pid[v[i].kind], pname[kind_pid[v[i].kind]], v + i, j - i);
                if (v[i].kind == SPAN_STEP)
                        target_memory(t, v + i, j - i);
                i = j;
        }
        if (t->sp.dropped) {
                instant(t, "slices cut: too many to show", 0);
                dw_printf(&t->w, "\"kept\":%zu,\"dropped\":%llu}}", t->sp.n,
                          (unsigned long long)t->sp.dropped);
        }
        if (t->steps_dropped) {
                instant(t, "BuildKit steps cut: more than the model keeps", 0);
                dw_printf(&t->w, "\"dropped\":%u}}", t->steps_dropped);
        }
        dw_puts(&t->w, "\n],\"displayTimeUnit\":\"ms\"}\n");
        return t->w.err;
}
