/* SPDX-License-Identifier: MIT */
#include "model/bench.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

enum bench_class bench_classify(const struct run_figures *f)
{
        bool compiled = f->compile_units > 0 || f->cc_hits + f->cc_misses > 0;
        bool has_steps = f->steps_set && f->steps > 0;
        bool all_cached = has_steps && f->cached >= f->steps;
        bool some_cached = has_steps && f->cached > 0;

        if (!compiled && (!has_steps || all_cached))
                return BENCH_HOT;
        if (f->cc_hits > 0 || some_cached)
                return BENCH_WARM;
        return BENCH_COLD;
}

const char *bench_class_name(enum bench_class c)
{
        static const char *const names[] = {"cold", "warm", "hot"};

        return (unsigned)c < _BENCH_CLASS_MAX ? names[c] : "cold";
}

void bench_stats_of(const double *x, size_t n, struct bench_stats *ret)
{
        double sum = 0, ss = 0, *s;

        *ret = (struct bench_stats){
            .n = n, .mean = NAN, .stddev = NAN, .median = NAN, .min = NAN, .max = NAN};
        if (n == 0)
                return;
        for (size_t i = 0; i < n; i++)
                sum += x[i];
        ret->mean = sum / (double)n;
        for (size_t i = 0; i < n; i++)
                ss += (x[i] - ret->mean) * (x[i] - ret->mean);
        if (n > 1)
                ret->stddev = sqrt(ss / (double)(n - 1));
        s = malloc(n * sizeof(*s));
        if (!s)
                return; /* the median unknown, rather than wrong */
        memcpy(s, x, n * sizeof(*s));
        ret->median = figure_median(s, n); /* s sorted */
        ret->min = s[0];
        ret->max = s[n - 1];
        free(s);
}

/* c[i][j][k]: the arrangements of i and j values whose U is k, by the
 * recurrence c(i, j, k) = c(i - 1, j, k - j) + c(i, j - 1, k); small
 * (8 x 8 x 65). */
static double mwu_exact_p(double u, size_t m, size_t n)
{
        static const size_t K = BENCH_MWU_EXACT_MAX * BENCH_MWU_EXACT_MAX + 1;
        double c[BENCH_MWU_EXACT_MAX + 1][BENCH_MWU_EXACT_MAX + 1]
                [BENCH_MWU_EXACT_MAX * BENCH_MWU_EXACT_MAX + 1];
        double big = fmax(u, (double)(m * n) - u), total = 0, tail = 0;

        for (size_t i = 0; i <= m; i++)
                for (size_t j = 0; j <= n; j++)
                        for (size_t k = 0; k < K; k++)
                                c[i][j][k] =
                                    i == 0 || j == 0
                                        ? k == 0
                                        : c[i][j - 1][k] + (k >= j ? c[i - 1][j][k - j] : 0);
        for (size_t k = 0; k <= m * n; k++) {
                total += c[m][n][k];
                if ((double)k >= big)
                        tail += c[m][n][k];
        }
        return fmin(1.0, 2 * tail / total);
}

int bench_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
                       struct bench_mwu *ret)
{
        double u = 0, nn = (double)(na + nb), tie_sum = 0, z;
        double mu = (double)na * (double)nb / 2, var;
        _cleanup_free_ double *all = NULL;
        size_t n = na + nb, t;
        bool ties = false;

        if (na == 0 || nb == 0)
                return -EINVAL;
        for (size_t i = 0; i < na; i++)
                for (size_t j = 0; j < nb; j++)
                        u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
        all = malloc(n * sizeof(*all));
        if (!all)
                return -ENOMEM;
        memcpy(all, a, na * sizeof(*all));
        memcpy(all + na, b, nb * sizeof(*all));
        qsort(all, n, sizeof(*all), cmp_double);
        for (size_t i = 0; i < n; i += t) {
                for (t = 1; i + t < n && all[i + t] == all[i]; t++)
                        ;
                ties |= t > 1;
                tie_sum += (double)t * (double)t * (double)t - (double)t;
        }
        ret->u = u;
        ret->exact = !ties && na <= BENCH_MWU_EXACT_MAX && nb <= BENCH_MWU_EXACT_MAX;
        if (ret->exact) {
                ret->p = mwu_exact_p(u, na, nb);
                return 0;
        }
        var = (double)na * (double)nb / 12 * ((nn + 1) - tie_sum / (nn * (nn - 1)));
        if (!(var > 0)) {
                ret->p = 1;
                return 0;
        }
        /* continuity correction toward the mean */
        z = (fabs(u - mu) - 0.5) / sqrt(var);
        if (z < 0)
                z = 0;
        ret->p = fmin(1.0, erfc(z / sqrt(2.0)));
        return 0;
}

void bench_ratio_of(const struct bench_stats *a, const struct bench_stats *b,
                    struct bench_ratio *ret)
{
        *ret = (struct bench_ratio){.mean = NAN, .mean_err = NAN, .median = NAN};
        if (a->mean > 0 && isfinite(b->mean)) {
                double ra = isfinite(a->stddev) ? a->stddev / a->mean : 0;
                double rb = isfinite(b->stddev) && b->mean != 0 ? b->stddev / b->mean : 0;

                ret->mean = b->mean / a->mean;
                ret->mean_err = ret->mean * sqrt(ra * ra + rb * rb);
        }
        if (a->median > 0 && isfinite(b->median))
                ret->median = b->median / a->median;
}

/* Figure k of a run, in struct bench_result's order: wall, user, sys,
 * memory peak, anon peak. */
static double fig(const struct run_figures *f, int k)
{
        const double v[] = {f->duration_s, f->user_s, f->sys_s, run_figures_mem_peak(f),
                            f->mem_anon_peak_mb};

        return v[k];
}

/* Figure k of every run of s of class cls (-1 any) into a new array (the
 * unknown left out), or NULL. */
static double *series_values(const struct bench_series *s, int k, int cls, size_t *ret_n)
{
        double *v = malloc((s->n ? s->n : 1) * sizeof(*v));
        size_t m = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                if ((cls < 0 || (int)bench_classify(&s->f[i]) == cls) && isfinite(fig(&s->f[i], k)))
                        v[m++] = fig(&s->f[i], k);
        *ret_n = m;
        return v;
}

static int stats_of(const struct bench_series *s, int k, int cls, struct bench_stats *ret)
{
        size_t n;
        _cleanup_free_ double *v = series_values(s, k, cls, &n);

        if (!v)
                return -ENOMEM;
        bench_stats_of(v, n, ret);
        return 0;
}

int bench_result_of(const struct bench_series *s, struct bench_result *ret)
{
        struct bench_stats *out[] = {&ret->wall, &ret->user, &ret->sys, &ret->mem_peak,
                                     &ret->mem_anon};

        memset(ret, 0, sizeof(*ret));
        for (int k = 0; k < (int)ARRAY_SIZE(out); k++)
                if (stats_of(s, k, -1, out[k]) < 0)
                        return -ENOMEM;
        for (int c = 0; c < _BENCH_CLASS_MAX; c++)
                if (stats_of(s, 0, c, &ret->by_class[c]) < 0)
                        return -ENOMEM;
        return 0;
}

int bench_compare(const struct bench_series *s, const struct bench_result *r, size_t n,
                  struct bench_cmp *cmp, size_t *ret_ref)
{
        size_t ref = 0, k = 0, na, nb;

        for (size_t i = 1; i < n; i++)
                if (r[i].wall.mean < r[ref].wall.mean)
                        ref = i;
        *ret_ref = ref;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ double *a = NULL, *b = NULL;

                if (i == ref)
                        continue;
                cmp[k] = (struct bench_cmp){.ref = ref, .other = i};
                bench_ratio_of(&r[ref].wall, &r[i].wall, &cmp[k].ratio);
                a = series_values(&s[i], 0, -1, &na);
                b = series_values(&s[ref], 0, -1, &nb);
                if (!a || !b)
                        return -ENOMEM;
                cmp[k].mwu_ok = bench_mann_whitney(a, na, b, nb, &cmp[k].mwu) == 0;
                k++;
        }
        return (int)k;
}
