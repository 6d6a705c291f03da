/* SPDX-License-Identifier: MIT */
/* The baseline's findings (report.h), only formatted here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/baseline.h"
#include "render/short.h"
#include "model/summary.h"
#include "render/report.h"
#include "util/macro.h"

/* figure, subject, value, usual, change, verdict and cause of f as cells,
 * between open and close (the change and verdict are ASCII: escaping
 * leaves them as they are) */
static void cells(struct dwriter *w, const struct baseline_finding *f, const char *open,
                  const char *close, void (*escape)(struct dwriter *, const char *, size_t))
{
        struct dbuf v[2] = {DBUF_INIT, DBUF_INIT};
        char change[32] = "";

        for (int i = 0; i < 2; i++)
                dw_check(w, render_baseline_value(f, i ? f->st.usual : f->value, &v[i]));
        if (isfinite(f->st.change))
                snprintf(change, sizeof(change), "%+.0f %%", f->st.change * 100);
        const char *cell[] = {f->figure,
                              f->target[0] ? f->target : "–",
                              v[0].p ? v[0].p : "",
                              v[1].p ? v[1].p : "",
                              change,
                              baseline_verdict_name(f->st.verdict),
                              f->cause};
        for (size_t i = 0; i < ARRAY_SIZE(cell); i++) {
                dw_puts(w, open);
                escape(w, cell[i], strlen(cell[i]));
                dw_puts(w, close);
        }
        dbuf_release(&v[0]);
        dbuf_release(&v[1]);
}

/* The run's own small multiples, by the figure baseline_derive() names. */
static const struct {
        const char *fig, *caption;
} run_charts[] = {
    {"duration_s", "wall time"},
    {"cpu_s", "CPU time"},
    {"mem_anon_peak_mb", "anon peak"},
    {"mem_peak_mb", "memory peak"},
};
/* Per target, unit and step: the caption around the name. */
static const struct {
        const char *fig, *pre, *post;
} named_charts[] = {
    {"target_duration_s", "", " time"},
    {"target_cache_ratio", "", " layer cache"},
    {"unit_peak_mb", "", " peak"},
    {"step_duration_s", "step ", " time"},
    {"step_mem_peak_mb", "step ", " memory"},
};
#define NAMED_CHARTS_MAX 12 /* the flagged ones first */

/* The caption of a named finding's chart: its index in named_charts, or
 * -1. Only with this run's value and an earlier one to set it against. */
static int named_chart(const struct baseline_finding *f)
{
        size_t earlier = 0;

        if (!f->target[0] || f->nhist < 2 || !isfinite(f->hist[f->nhist - 1]))
                return -1;
        for (size_t i = 0; i + 1 < f->nhist; i++)
                earlier += isfinite(f->hist[i]) != 0;
        for (size_t k = 0; earlier && k < ARRAY_SIZE(named_charts); k++)
                if (strcmp(f->figure, named_charts[k].fig) == 0)
                        return (int)k;
        return -1;
}

/* One small chart of f's series: a bar per run, oldest first, this run's
 * last and marked; the usual as a line; pre, the escaped name and post
 * below it. Nothing when every value is 0 or unknown. */
static void small_multiple(struct dwriter *w, const struct baseline_finding *f, const char *pre,
                           const char *name, const char *post)
{
        const double W = 180, H = 48, gap = 2;
        double max = 0, bw = (W - gap * (double)f->nhist) / (double)MAX(f->nhist, (size_t)1);
        double usual = f->st.usual;

        for (size_t i = 0; i < f->nhist; i++)
                if (isfinite(f->hist[i]))
                        max = MAX(max, f->hist[i]);
        if (!(max > 0))
                return;
        dw_printf(w,
                  "<figure class=\"sm\" style=\"display:inline-block;margin:0 1em 0 0\"><svg "
                  "width=\"%.0f\" height=\"%.0f\" role=\"img\">",
                  W, H);
        for (size_t i = 0; i < f->nhist; i++) {
                double v = f->hist[i], h = isfinite(v) ? v / max * (H - 2) : 0;

                if (!isfinite(v))
                        continue;
                dw_printf(w,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "fill=\"%s\"><title>%.3g</title></rect>",
                          (double)i * (bw + gap), H - h, bw, h,
                          i + 1 == f->nhist ? "#c0392b" : "#7f8c8d", v);
        }
        if (isfinite(usual) && usual > 0)
                dw_printf(w,
                          "<line x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#2c3e50\" "
                          "stroke-dasharray=\"3 2\"/>",
                          W, H - usual / max * (H - 2), H - usual / max * (H - 2));
        dw_puts(w, "</svg><figcaption>");
        dw_puts(w, pre);
        report_html_esc(w, name);
        dw_puts(w, post);
        dw_puts(w, "</figcaption></figure>");
}

/* The targets', units' and steps' charts, the flagged first, at most
 * NAMED_CHARTS_MAX. */
static void named_multiples(struct dwriter *w, const struct baseline *b)
{
        size_t drawn = 0;

        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < b->n && drawn < NAMED_CHARTS_MAX; i++) {
                        const struct baseline_finding *f = &b->f[i];
                        int k = named_chart(f);

                        if (k < 0 || baseline_is_flag(f->st.verdict) != (pass == 0))
                                continue;
                        if (!drawn++)
                                dw_puts(w, "<div class=\"sm-named\"><h3>Per target, unit and "
                                           "step</h3>");
                        small_multiple(w, f, named_charts[k].pre, f->target, named_charts[k].post);
                }
        if (drawn)
                dw_puts(w, "</div>");
}

void report_baseline_html(struct dwriter *w, const struct summary *s)
{
        const struct baseline *b = s ? s->baseline : NULL;

        if (!b)
                return;
        dw_puts(w, "<section id=\"baseline\"><h2>Against the usual of job ");
        report_html_esc(w, b->job);
        dw_printf(w,
                  "</h2><p>%zu earlier runs (the last %d finished on this host with the same "
                  "outcome); a change counts beyond %.0f %% and %.0f times their spread.</p>",
                  b->runs, BASELINE_WINDOW, BASELINE_MIN_REL * 100, BASELINE_K);
        for (size_t k = 0; k < ARRAY_SIZE(run_charts) && b->runs > 0; k++) {
                const struct baseline_finding *f = render_baseline_run(b, run_charts[k].fig);

                if (f)
                        small_multiple(w, f, run_charts[k].caption, "", "");
        }
        named_multiples(w, b);
        if (b->runs < BASELINE_MIN_RUNS)
                dw_puts(w, "<p>No usual yet: too few earlier runs.</p>");
        else if (!baseline_flagged(b))
                dw_puts(w, "<p>Every figure is within the noise of its usual.</p>");
        dw_puts(w, "<details><summary>Findings</summary><table><tr><th>figure</th><th>of</th>"
                   "<th>value</th><th>usual</th><th>change</th><th>verdict</th><th>cause</th>"
                   "</tr>");
        /* the flagged ones first */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < b->n; i++) {
                        if (baseline_is_flag(b->f[i].st.verdict) != (pass == 0))
                                continue;
                        dw_puts(w, "<tr>");
                        cells(w, &b->f[i], "<td>", "</td>", report_html_escape);
                        dw_puts(w, "</tr>");
                }
        dw_puts(w, "</table></details></section>\n");
}

void report_baseline_md(struct dwriter *w, const struct summary *s)
{
        const struct baseline *b = s ? s->baseline : NULL;

        if (!b || b->runs == 0)
                return;
        dw_puts(w, "### Against the usual of job ");
        report_md_escape(w, b->job, strlen(b->job));
        dw_printf(w, "\n\n%zu earlier runs. ", b->runs);
        if (b->runs < BASELINE_MIN_RUNS) {
                dw_puts(w, "No usual yet: too few earlier runs.\n\n");
                return;
        }
        if (!baseline_flagged(b)) {
                dw_puts(w, "Every figure is within the noise of its usual.\n\n");
                return;
        }
        dw_puts(w, "\n\n| figure | of | value | usual | change | verdict | cause |\n"
                   "| --- | --- | ---: | ---: | ---: | --- | --- |\n");
        for (size_t i = 0; i < b->n; i++) {
                if (!baseline_is_flag(b->f[i].st.verdict))
                        continue;
                dw_puts(w, "|");
                cells(w, &b->f[i], " ", " |", report_md_escape);
                dw_puts(w, "\n");
        }
        dw_puts(w, "\n");
}
