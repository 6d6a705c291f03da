/* SPDX-License-Identifier: MIT */
#include "render/bench.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "render/jsonw.h"
#include "render/summary.h"
#include "util/json-cleanup.h"
#include "util/util.h"

/* hyperfine's unit: milliseconds below a second (of the mean), else s. */
struct tunit {
        const char *name;
        double mul;
};

static struct tunit unit_for(double mean_s)
{
        return mean_s < 1 ? (struct tunit){"ms", 1000} : (struct tunit){"s", 1};
}

static void class_counts(const struct bench_series *s, size_t cnt[_BENCH_CLASS_MAX])
{
        memset(cnt, 0, sizeof(size_t) * _BENCH_CLASS_MAX);
        for (size_t i = 0; i < s->n; i++)
                cnt[bench_classify(&s->f[i])]++;
}

static void caches_line(struct dwriter *w, const struct bench_series *s)
{
        uint64_t hits = 0, misses = 0, steps = 0, cached = 0, units = 0;
        bool layers = false;

        for (size_t i = 0; i < s->n; i++) {
                hits += s->f[i].cc_hits;
                misses += s->f[i].cc_misses;
                units += s->f[i].compile_units;
                if (s->f[i].steps_set) {
                        layers = true;
                        steps += s->f[i].steps;
                        cached += s->f[i].cached;
                }
        }
        dw_printf(w, "  Caches (%zu run%s):     compiler %llu hits, %llu misses; ", s->n,
                  s->n == 1 ? "" : "s", (unsigned long long)hits, (unsigned long long)misses);
        if (layers)
                dw_printf(w, "layers %llu of %llu cached", (unsigned long long)cached,
                          (unsigned long long)steps);
        else
                dw_puts(w, "no layer steps");
        dw_printf(w, "; %llu compile units\n", (unsigned long long)units);
}

int render_bench_series(const struct bench_view *v, size_t i, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        const struct bench_series *s = &v->s[i];
        const struct bench_result *r = &v->r[i];
        struct tunit u = unit_for(r->wall.mean);
        int pr = u.mul > 1 ? 1 : 3; /* hyperfine: 12.3 ms, 1.234 s */
        size_t cnt[_BENCH_CLASS_MAX];
        double sd = isfinite(r->wall.stddev) ? r->wall.stddev : 0;

        dw_printf(&w, "Benchmark %zu: %s\n", i + 1, s->command);
        dw_printf(&w, "  Time (mean ± σ):   %8.*f %s ± %6.*f %s", pr, r->wall.mean * u.mul, u.name,
                  pr, sd * u.mul, u.name);
        if (isfinite(r->user.mean) && isfinite(r->sys.mean))
                dw_printf(&w,
                          u.mul > 1 ? "    [User: %.1f %s, System: %.1f %s]"
                                    : "    [User: %.3f %s, System: %.3f %s]",
                          r->user.mean * u.mul, u.name, r->sys.mean * u.mul, u.name);
        dw_printf(&w, "\n  Range (min … max):  %8.*f %s … %6.*f %s    %zu run%s\n", pr,
                  r->wall.min * u.mul, u.name, pr, r->wall.max * u.mul, u.name, s->n,
                  s->n == 1 ? "" : "s");
        dw_printf(&w, "  Median:             %8.*f %s\n", pr, r->wall.median * u.mul, u.name);
        class_counts(s, cnt);
        for (int c = 0; c < _BENCH_CLASS_MAX; c++) {
                const struct bench_stats *b = &r->by_class[c];

                if (!cnt[c])
                        continue;
                dw_printf(&w, "  %-4s %3zu run%s      %8.*f %s ± %6.*f %s, median %.*f %s\n",
                          bench_class_name((enum bench_class)c), cnt[c],
                          cnt[c] == 1 ? ": " : "s:", pr, b->mean * u.mul, u.name, pr,
                          isfinite(b->stddev) ? b->stddev * u.mul : 0, u.name, pr,
                          b->median * u.mul, u.name);
        }
        dw_printf(&w, "  Memory peak (max):  %s, anon %s\n",
                  isfinite(r->mem_peak.max) ? SIZE_STR(r->mem_peak.max) : "unknown",
                  isfinite(r->mem_anon.max) ? SIZE_STR(r->mem_anon.max) : "unknown");
        caches_line(&w, s);
        dw_puts(&w, "  Runs:              ");
        for (size_t k = 0; k < s->n; k++)
                dw_printf(&w, " %s", s->run_id[k]);
        dw_puts(&w, "\n\n");
        return w.err;
}

/* A parameter scan: one row per value, wall, CPU and memory peaks. */
static void scan_table(struct dwriter *w, const struct bench_view *v)
{
        dw_printf(w, "Parameter %s\n  %-10s %10s %10s %12s %12s\n", v->s[0].param, v->s[0].param,
                  "wall", "cpu", "build peak", "anon peak");
        for (size_t i = 0; i < v->n; i++) {
                const struct bench_result *r = &v->r[i];

                dw_printf(w, "  %-10s %9.3fs %9.3fs %12s %12s\n", v->s[i].value, r->wall.mean,
                          r->user.mean + r->sys.mean, SIZE_STR(r->mem_peak.max),
                          SIZE_STR(r->mem_anon.max));
        }
        dw_puts(w, "\n");
}

int render_bench_summary(const struct bench_view *v, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);

        if (v->n && v->s[0].param)
                scan_table(&w, v);

        if (v->nc == 0)
                return 0;
        dw_printf(&w, "Summary\n  %s ran\n", v->s[v->ref].command);
        for (size_t k = 0; k < v->nc; k++) {
                const struct bench_cmp *c = &v->cmp[k];

                dw_printf(&w, "    %.2f ± %.2f times faster than %s\n", c->ratio.mean,
                          isfinite(c->ratio.mean_err) ? c->ratio.mean_err : 0,
                          v->s[c->other].command);
        }
        dw_puts(&w, "\n");
        for (size_t k = 0; k < v->nc; k++) {
                const struct bench_cmp *c = &v->cmp[k];

                dw_printf(&w, "  '%s' is %.2fx ± %.2f slower than '%s' (medians %.2fx)",
                          v->s[c->other].command, c->ratio.mean,
                          isfinite(c->ratio.mean_err) ? c->ratio.mean_err : 0, v->s[c->ref].command,
                          c->ratio.median);
                if (c->mwu_ok)
                        dw_printf(&w, ", Mann-Whitney U = %g, p = %.3g%s", c->mwu.u, c->mwu.p,
                                  c->mwu.exact ? " (exact)" : "");
                dw_puts(&w, "\n");
        }
        return w.err;
}

/* A number, or null when unknown. */
static int add_stats(json_t *o, const struct bench_stats *b)
{
        json_t *st = json_pack("{s:o, s:o, s:o, s:o, s:o}", "mean", jsonw_real(b->mean), "stddev",
                               jsonw_real(b->stddev), "median", jsonw_real(b->median), "min",
                               jsonw_real(b->min), "max", jsonw_real(b->max));

        return json_object_update_new(o, st) < 0 ? -ENOMEM : 0;
}

/* The per-run arrays: times, user, system, exit codes, run ids, classes,
 * memory peaks and caches. */
static int add_runs(json_t *o, const struct bench_series *s)
{
        static const char *const names[] = {"times",
                                            "user_times",
                                            "system_times",
                                            "exit_codes",
                                            "run_ids",
                                            "classes",
                                            "mem_peak_mb",
                                            "mem_anon_peak_mb",
                                            "compiler_cache_hits",
                                            "compiler_cache_misses",
                                            "layer_steps",
                                            "layer_cached"};
        json_t *a[ARRAY_SIZE(names)];
        int e = 0;

        for (size_t k = 0; k < ARRAY_SIZE(names); k++)
                a[k] = json_array();
        for (size_t i = 0; i < s->n; i++) {
                const struct run_figures *f = &s->f[i];
                json_t *v[ARRAY_SIZE(names)] = {
                    jsonw_real(f->duration_s),
                    jsonw_real(f->user_s),
                    jsonw_real(f->sys_s),
                    json_integer(f->exit_code),
                    json_string(s->run_id[i]),
                    json_string(bench_class_name(bench_classify(f))),
                    jsonw_real(run_figures_mem_peak(f)),
                    jsonw_real(f->mem_anon_peak_mb),
                    json_integer((json_int_t)f->cc_hits),
                    json_integer((json_int_t)f->cc_misses),
                    f->steps_set ? json_integer(f->steps) : json_null(),
                    f->steps_set ? json_integer(f->cached) : json_null(),
                };

                for (size_t k = 0; k < ARRAY_SIZE(names); k++)
                        e |= json_array_append_new(a[k], v[k]);
        }
        for (size_t k = 0; k < ARRAY_SIZE(names); k++)
                e |= json_object_set_new(o, names[k], a[k]);
        return e ? -ENOMEM : 0;
}

static json_t *result_json(const struct bench_series *s, const struct bench_result *r)
{
        json_t *o = json_pack("{s:s}", "command", s->command), *by = json_object();
        int e = by ? 0 : -1; /* without o every call below fails, and frees its value */

        if (s->param)
                e |= json_object_set_new(o, "parameters", json_pack("{s:s}", s->param, s->value));
        e |= add_stats(o, &r->wall);
        e |= json_object_set_new(o, "user", jsonw_real(r->user.mean));
        e |= json_object_set_new(o, "system", jsonw_real(r->sys.mean));
        e |= add_runs(o, s);
        for (int c = 0; c < _BENCH_CLASS_MAX; c++) {
                json_t *k;

                if (!r->by_class[c].n)
                        continue;
                k = json_pack("{s:I}", "runs", (json_int_t)r->by_class[c].n);
                e |= k ? add_stats(k, &r->by_class[c]) : -1;
                e |= json_object_set_new(by, bench_class_name((enum bench_class)c), k);
        }
        e |= json_object_set_new(o, "by_class", by);
        if (e) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *cmp_json(const struct bench_view *v, const struct bench_cmp *c)
{
        return json_pack(
            "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b}", "command", v->s[c->other].command,
            "reference", v->s[c->ref].command, "ratio", jsonw_real(c->ratio.mean), "ratio_stddev",
            jsonw_real(c->ratio.mean_err), "median_ratio", jsonw_real(c->ratio.median),
            "mann_whitney_u", c->mwu_ok ? jsonw_real(c->mwu.u) : json_null(), "p_value",
            c->mwu_ok ? jsonw_real(c->mwu.p) : json_null(), "exact", c->mwu_ok && c->mwu.exact);
}

int render_bench_json(const struct bench_view *v, struct dbuf *out)
{
        _cleanup_json_ json_t *root = json_object();
        json_t *results = json_array(), *cmps = json_array();
        int e = 0;

        if (!root || !results || !cmps) {
                json_decref(results);
                json_decref(cmps);
                return -ENOMEM;
        }
        e |= json_object_set_new(root, "results", results);
        e |= json_object_set_new(root, "comparison", cmps);
        for (size_t i = 0; i < v->n; i++) {
                json_t *r = result_json(&v->s[i], &v->r[i]);

                e |= r ? json_array_append_new(results, r) : -1;
        }
        for (size_t k = 0; k < v->nc; k++) {
                json_t *c = cmp_json(v, &v->cmp[k]);

                e |= c ? json_array_append_new(cmps, c) : -1;
        }
        if (e)
                return -ENOMEM;
        return jsonw_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15),
                          out);
}

/* A command in a Markdown cell: `...`, its pipes escaped, newlines as spaces. */
static void md_command(struct dwriter *w, const char *c)
{
        dw_puts(w, "`");
        for (; *c; c++) {
                if (*c == '|')
                        dw_puts(w, "\\|");
                else if (*c == '\n' || *c == '\r' || *c == '`')
                        dw_puts(w, *c == '`' ? "'" : " ");
                else
                        dw_append(w, c, 1);
        }
        dw_puts(w, "`");
}

/* A parameter scan's time and peak memory against the parameter, as two
 * Mermaid charts (GitHub renders them in a job summary or a comment). */
static void scan_charts(struct dwriter *w, const struct bench_view *v)
{
        for (int c = 0; c < 2; c++) {
                dw_printf(w, "\n```mermaid\nxychart-beta\n    title \"%s against %s\"\n    x-axis [",
                          c ? "the build's memory peak (MiB)" : "wall time (s)", v->s[0].param);
                for (size_t i = 0; i < v->n; i++) {
                        dw_puts(w, i ? ", \"" : "\"");
                        for (const char *q = v->s[i].value; *q; q++)
                                if (*q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
                                        dw_append(w, q, 1);
                        dw_puts(w, "\"");
                }
                dw_printf(w, "]\n    y-axis \"%s\"\n    %s [", c ? "MiB" : "s", c ? "bar" : "line");
                for (size_t i = 0; i < v->n; i++) {
                        double y = c ? v->r[i].mem_peak.max : v->r[i].wall.mean;

                        dw_printf(w, "%s%.3f", i ? ", " : "", isfinite(y) ? y : 0);
                }
                dw_puts(w, "]\n```\n");
        }
}

int render_bench_markdown(const struct bench_view *v, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        struct tunit u = unit_for(v->n ? v->r[v->ref].wall.mean : 0);
        const struct bench_stats *ref = v->n ? &v->r[v->ref].wall : NULL;

        dw_printf(&w,
                  "| Command | Mean [%s] | Min [%s] | Max [%s] | Relative | Classes |\n"
                  "|:---|---:|---:|---:|---:|:---|\n",
                  u.name, u.name, u.name);
        for (size_t i = 0; i < v->n; i++) {
                const struct bench_stats *b = &v->r[i].wall;
                struct bench_ratio rt;
                size_t cnt[_BENCH_CLASS_MAX];
                const char *sep = "";

                bench_ratio_of(ref, b, &rt);
                dw_puts(&w, "| ");
                md_command(&w, v->s[i].command);
                dw_printf(&w, " | %.1f ± %.1f | %.1f | %.1f | ", b->mean * u.mul,
                          isfinite(b->stddev) ? b->stddev * u.mul : 0, b->min * u.mul,
                          b->max * u.mul);
                if (i == v->ref)
                        dw_puts(&w, "1.00");
                else
                        dw_printf(&w, "%.2f ± %.2f", rt.mean,
                                  isfinite(rt.mean_err) ? rt.mean_err : 0);
                dw_puts(&w, " | ");
                class_counts(&v->s[i], cnt);
                for (int c = 0; c < _BENCH_CLASS_MAX; c++)
                        if (cnt[c]) {
                                dw_printf(&w, "%s%zu %s", sep, cnt[c],
                                          bench_class_name((enum bench_class)c));
                                sep = ", ";
                        }
                dw_puts(&w, " |\n");
        }
        if (v->n && v->s[0].param)
                scan_charts(&w, v);
        return w.err;
}
