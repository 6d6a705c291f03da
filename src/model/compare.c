/* SPDX-License-Identifier: MIT */
#include "model/compare.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/baseline.h"
#include "model/figures.h"
#include "util/macro.h"
#include "util/util.h"

const char *compare_section_name(enum compare_section s)
{
        static const char *const names[COMPARE_SECTIONS] = {"run",  "cache", "target", "path",
                                                            "step", "unit",  "facts"};

        return (unsigned)s < COMPARE_SECTIONS ? names[s] : "unknown";
}

enum compare_in compare_figure_in(const char *figure)
{
        static const char *const suffix[] = {"", "_s", "_mb", "_pct", "_ratio"};
        const char *u = strrchr(figure, '_');

        for (size_t i = 1; u && i < ARRAY_SIZE(suffix); i++)
                if (strcmp(u, suffix[i]) == 0)
                        return (enum compare_in)i;
        return COMPARE_IN_COUNT;
}

const char *compare_figure_label(const char *figure)
{
        static const char *const labels[][2] = {{"duration_s", "wall time"},
                                                {"cpu_s", "CPU time"},
                                                {"build_mem_peak_mb", "memory peak"},
                                                {"build_anon_peak_mb", "anon memory peak"},
                                                {"host_mem_used_peak_mb", "host memory used, peak"},
                                                {"oom_kills", "OOM kills"},
                                                {"cpu_avg_pct", "host CPU, average"},
                                                {"cached_steps", "cached steps"},
                                                {"cached", "cached steps"},
                                                {"cached_ratio", "cached share"},
                                                {"peak_mb", "memory peak"},
                                                {"mem_peak_mb", "memory peak"},
                                                {"hit_ratio", "hit ratio"},
                                                {"cwd", "directory"},
                                                {"critical_path_s", "critical path"},
                                                {"slack_s", "slack"}};

        for (size_t i = 0; i < ARRAY_SIZE(labels); i++)
                if (strcmp(figure, labels[i][0]) == 0)
                        return labels[i][1];
        return figure;
}

const char *compare_status_name(enum compare_status s)
{
        static const char *const names[] = {"same", "changed", "appeared", "gone"};

        return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

static int side_push(struct compare_side *s, enum compare_section sec, const char *subject,
                     const char *figure, double value, const char *text)
{
        struct compare_fig f = {.section = (int)sec, .value = value, .seq = s->n};

        if ((unsigned)sec >= COMPARE_SECTIONS || !figure)
                return -EINVAL;
        if (s->n >= COMPARE_FIGURES_MAX) {
                s->dropped++;
                return 0;
        }
        if (array_grow(&s->v, &s->cap, s->n, sizeof(*s->v), 64) < 0)
                return -ENOMEM;
        f.subject = strndup(subject ? subject : "", COMPARE_SUBJECT_MAX);
        f.figure = strdup(figure);
        f.text = text ? strdup(text) : NULL;
        if (!f.subject || !f.figure || (text && !f.text)) {
                free(f.subject);
                free(f.figure);
                free(f.text);
                return -ENOMEM;
        }
        s->v[s->n++] = f;
        return 0;
}

int compare_side_add(struct compare_side *s, enum compare_section sec, const char *subject,
                     const char *figure, double value)
{
        return isfinite(value) ? side_push(s, sec, subject, figure, value, NULL) : 0;
}

int compare_side_add_text(struct compare_side *s, enum compare_section sec, const char *subject,
                          const char *figure, const char *text)
{
        return text ? side_push(s, sec, subject, figure, NAN, text) : 0;
}

int compare_side_add_run(struct compare_side *s, const struct run_figures *f)
{
        const struct {
                const char *figure;
                double v;
        } v[] = {
            {"duration_s", f->duration_s},
            {"cpu_s", f->cpu_s},
            {"build_mem_peak_mb", f->mem_peak_mb},
            {"build_anon_peak_mb", f->mem_anon_peak_mb},
            {"host_mem_used_peak_mb", f->host_mem_used_peak_mb},
            {"oom_kills", f->oom_kills},
            {"cpu_avg_pct", f->cpu_avg_pct},
            {"steps", f->steps_set ? (double)f->steps : NAN},
            {"cached_steps", f->steps_set ? (double)f->cached : NAN},
        };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(v); i++)
                r = compare_side_add(s, COMPARE_RUN, "", v[i].figure, v[i].v);
        return r;
}

int compare_side_add_cache(struct compare_side *s, const char *tool, bool have_first,
                           uint64_t first_hits, uint64_t first_misses, uint64_t last_hits,
                           uint64_t last_misses)
{
        uint64_t h = last_hits, m = last_misses;

        if (have_first)
                (void)figure_cc_delta(first_hits, first_misses, last_hits, last_misses, &h, &m);
        if (compare_side_add(s, COMPARE_CACHE, tool, "hits", (double)h) < 0 ||
            compare_side_add(s, COMPARE_CACHE, tool, "misses", (double)m) < 0)
                return -ENOMEM;
        return compare_side_add(s, COMPARE_CACHE, tool, "hit_ratio", figure_hit_ratio(h, m));
}

void compare_side_release(struct compare_side *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++) {
                free(s->v[i].subject);
                free(s->v[i].figure);
                free(s->v[i].text);
        }
        free(s->v);
        *s = (struct compare_side){0};
}

void compare_result_release(struct compare_result *r)
{
        if (!r)
                return;
        free(r->rows);
        *r = (struct compare_result){0};
}

static int key_cmp(const struct compare_fig *x, const struct compare_fig *y)
{
        int c = (x->section > y->section) - (x->section < y->section);

        if (!c)
                c = strcmp(x->subject, y->subject);
        return c ? c : strcmp(x->figure, y->figure);
}

static int fig_cmp(const void *p, const void *q)
{
        const struct compare_fig *x = *(const struct compare_fig *const *)p;
        const struct compare_fig *y = *(const struct compare_fig *const *)q;
        int c = key_cmp(x, y);

        return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The side's figures by key, as pointers (the side stays as it is). */
static int sorted(const struct compare_side *s, const struct compare_fig ***ret)
{
        const struct compare_fig **p = malloc(MAX(s->n, (size_t)1) * sizeof(*p));

        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                p[i] = &s->v[i];
        qsort(p, s->n, sizeof(*p), fig_cmp);
        *ret = p;
        return 0;
}

/* The row of x (A's, may be NULL) and y (B's, may be NULL). */
static struct compare_row make_row(const struct compare_fig *x, const struct compare_fig *y)
{
        const struct compare_fig *k = x ? x : y;
        struct compare_row r = {.section = k->section,
                                .subject = k->subject,
                                .figure = k->figure,
                                .a = x ? x->value : NAN,
                                .b = y ? y->value : NAN,
                                .ta = x ? x->text : NULL,
                                .tb = y ? y->text : NULL,
                                .change = NAN,
                                .change_pct = NAN,
                                .seq = x && y ? MAX(x->seq, y->seq) : k->seq};

        if (!x || !y) {
                r.status = x ? COMPARE_GONE : COMPARE_APPEARED;
                r.rank = 1;
        } else if (x->text || y->text) {
                bool same = x->text && y->text && strcmp(x->text, y->text) == 0;

                r.status = same ? COMPARE_SAME : COMPARE_CHANGED;
                r.rank = same ? 0 : 1;
        } else {
                r.change = r.b - r.a;
                r.change_pct = r.a != 0 ? 100 * r.change / fabs(r.a) : NAN;
                r.rank = r.a != 0 ? fabs(r.change_pct) / 100 : r.b != 0;
                r.status = r.change != 0 ? COMPARE_CHANGED : COMPARE_SAME;
        }
        return r;
}

static int row_cmp(const void *p, const void *q)
{
        const struct compare_row *x = p, *y = q;
        double cx = isfinite(x->change) ? fabs(x->change) : 0;
        double cy = isfinite(y->change) ? fabs(y->change) : 0;
        bool fixed = x->section == COMPARE_RUN || x->section == COMPARE_FACTS;
        int c;

        if (x->section != y->section)
                return x->section - y->section;
        if (fixed && x->seq != y->seq)
                return x->seq < y->seq ? -1 : 1;
        if (x->noise != y->noise)
                return x->noise - y->noise;
        if (x->rank != y->rank)
                return x->rank < y->rank ? 1 : -1;
        if (cx != cy)
                return cx < cy ? 1 : -1;
        c = strcmp(x->subject, y->subject);
        return c ? c : strcmp(x->figure, y->figure);
}

/* Merge the two sorted lists into rows (room for na + nb), in key order. */
static size_t merge(const struct compare_fig **pa, size_t na, const struct compare_fig **pb,
                    size_t nb, struct compare_row *rows)
{
        size_t i = 0, j = 0, n = 0;

        while (i < na || j < nb) {
                int c = i == na ? 1 : j == nb ? -1 : key_cmp(pa[i], pb[j]);

                if (c == 0)
                        rows[n++] = make_row(pa[i++], pb[j++]);
                else if (c < 0)
                        rows[n++] = make_row(pa[i++], NULL);
                else
                        rows[n++] = make_row(NULL, pb[j++]);
        }
        return n;
}

/* Mark the noise (see compare_runs) among rows[0..n), in key order: a
 * subject's rows are together. */
static void mark_noise(struct compare_row *rows, size_t n, double q)
{
        for (size_t i = 0, j; i < n; i = j) {
                double t = NAN; /* the time of a subject known in one run only */

                for (j = i; j < n && rows[j].section == rows[i].section &&
                            strcmp(rows[j].subject, rows[i].subject) == 0;
                     j++) {
                        struct compare_row *r = &rows[j];
                        double d = fabs(r->change);
                        enum compare_in in = compare_figure_in(r->figure);
                        /* ninja's and BuildKit's own times: no sampling quantum */
                        bool exact = r->section == COMPARE_PATH ||
                                     strcmp(r->figure, "critical_path_s") == 0;

                        if (r->status == COMPARE_CHANGED && isfinite(d))
                                r->noise = (in == COMPARE_IN_MB && d < BASELINE_FLOOR_MB) ||
                                           (in == COMPARE_IN_S && d < COMPARE_QUANTA * q &&
                                            !exact) ||
                                           (in == COMPARE_IN_S && d < BASELINE_FLOOR_S &&
                                            r->section != COMPARE_UNIT);
                        if (r->section == COMPARE_UNIT && r->status >= COMPARE_APPEARED &&
                            strcmp(r->figure, "duration_s") == 0)
                                t = isfinite(r->a) ? r->a : r->b;
                }
                for (size_t k = i; t < COMPARE_QUANTA * q && k < j; k++)
                        rows[k].noise |= rows[k].status >= COMPARE_APPEARED;
        }
}

int compare_runs(const struct compare_side *a, const struct compare_side *b, double quantum_s,
                 struct compare_result *ret)
{
        _cleanup_free_ const struct compare_fig **pa = NULL, **pb = NULL;
        struct compare_result res = {.quantum_s = quantum_s > 0 ? quantum_s : 0};

        if (sorted(a, &pa) < 0 || sorted(b, &pb) < 0)
                return -ENOMEM;
        res.rows = malloc(MAX(a->n + b->n, (size_t)1) * sizeof(*res.rows));
        if (!res.rows)
                return -ENOMEM;
        res.n = merge(pa, a->n, pb, b->n, res.rows);
        mark_noise(res.rows, res.n, res.quantum_s);
        qsort(res.rows, res.n, sizeof(*res.rows), row_cmp);
        for (size_t i = 0; i < res.n; i++) {
                const struct compare_row *x = &res.rows[i];

                res.count[x->section]++;
                if (!x->noise)
                        res.score[x->section] = MAX(res.score[x->section], x->rank);
        }
        *ret = res;
        return 0;
}
