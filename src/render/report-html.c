/* SPDX-License-Identifier: MIT */
/* The HTML report: one file, inline CSS and SVG and no URL, so it opens
 * from a CI artifact or an e-mail. One small inline script adds a hover
 * read-out to the timeline's charts (the time and the values of the
 * nearest point); the page says everything without it. Everything from
 * the build is escaped (report_html_escape). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/jobs.h"
#include "model/spans.h"
#include "model/unitname.h"
#include "model/units.h"
#include "render/report.h"
#include "render/summary.h"
#include "render/trace-lanes.h"
#include "util/macro.h"
#include "util/util.h"

#define W 1000.0
#define H 170.0
#define ML 56.0 /* left margin: the y labels */
#define MR 8.0
#define MT 8.0
#define MB 22.0

static const char css[] =
    ":root{--bg:#fff;--fg:#1f2328;--mute:#59636e;--grid:#d0d7de;--band1:#f6f8fa;"
    "--band2:#eef2f7;--c0:#0969da;--c1:#1a7f37;--c2:#8250df;--c3:#bf8700;--warn:#cf222e}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;"
    "--grid:#30363d;--band1:#161b22;--band2:#1c2330;--c0:#4493f8;--c1:#3fb950;--c2:#ab7df8;"
    "--c3:#d29922;--warn:#f85149}}\n"
    "@media print{:root{--bg:#fff;--fg:#000;--mute:#333;--band1:#f4f4f4;--band2:#e8e8e8}"
    "section{break-inside:avoid}}\n"
    "body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif;"
    "margin:0 auto;max-width:1040px;padding:16px}\n"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid var(--grid)}"
    "h3{font-size:15px;margin:14px 0 2px}\n"
    "pre{white-space:pre-wrap;font-size:12.5px;background:var(--band1);padding:8px}\n"
    "svg{width:100%;height:auto;display:block}svg text{fill:var(--fg);font-size:12px}"
    ".ax{stroke:var(--grid);stroke-width:1}.th{stroke:var(--warn);stroke-dasharray:6 4}"
    ".b0{fill:var(--band1)}.b1{fill:var(--band2)}.s0{stroke:var(--c0)}.s1{stroke:var(--c1)}"
    ".s2{stroke:var(--c2)}.s3{stroke:var(--c3)}.f0{fill:var(--c0)}.f1{fill:var(--c1)}"
    ".f2{fill:var(--c2)}.f3{fill:var(--c3)}.pk{fill:var(--warn)}"
    "polyline{fill:none;stroke-width:1.4}.lg{color:var(--mute);font-size:12px}"
    ".k0{color:var(--c0)}.k1{color:var(--c1)}.k2{color:var(--c2)}.k3{color:var(--c3)}"
    "table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid var(--grid);"
    "padding:2px 8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".peaks{margin:2px 0 10px;color:var(--mute);font-size:12.5px}"
    "svg text.hvt{font-size:12px;font-weight:600;paint-order:stroke;stroke:var(--bg);"
    "stroke-width:3px}.gx{stroke:var(--grid);stroke-width:0.5;stroke-dasharray:2 3}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:8px;"
    "margin:8px 0}.card{border:1px solid var(--grid);border-radius:6px;padding:6px 10px}"
    ".card .k{color:var(--mute);font-size:12px}.card .v{font-size:20px;font-weight:600}"
    ".card .d{color:var(--mute);font-size:12px;overflow-wrap:anywhere}.bad{color:var(--warn)}"
    "ol.slow,ul.rd{margin:4px 0 8px;padding-left:22px}details{margin:12px 0}"
    "svg text.in{font-size:10px}rect.f2{stroke:var(--bg);stroke-width:1}"
    "rect.cp{stroke:var(--warn);stroke-width:2}\n";

/* The hover read-out: on a chart (svg.hv, its data-tmax, data-ymax in
 * drawn units, data-unit), the time and each line's value at the point
 * nearest the pointer, read back from the drawn points (0.1 px). Marks the
 * body data-hover="on" once set up, which the e2e test sees. No URL: the
 * elements are made in the svg's own namespace. */
static const char hover_js[] =
    "function dur(s){s=Math.round(s);var h=Math.floor(s/3600),m=Math.floor(s%3600/60);"
    "return(h?h+'h':'')+(h||m?m+'m':'')+(s%60)+'s';}"
    "[].forEach.call(document.querySelectorAll('svg.hv'),function(g){"
    "var tmax=+g.getAttribute('data-tmax'),ymax=+g.getAttribute('data-ymax'),"
    "u=g.getAttribute('data-unit')||'',ns=g.namespaceURI;"
    "var ls=[].map.call(g.querySelectorAll('polyline'),function(p){return{n:p.getAttribute("
    "'data-n'),p:p.getAttribute('points').split(' ').map(function(s){var a=s.split(',');"
    "return[+a[0],+a[1]];})};});"
    "var t=document.createElementNS(ns,'text'),ln=document.createElementNS(ns,'line');"
    "t.setAttribute('class','hvt');t.setAttribute('y',MT+12);ln.setAttribute('class','ax');"
    "ln.setAttribute('y1',MT);ln.setAttribute('y2',H-MB);g.appendChild(ln);g.appendChild(t);"
    "function hide(){ln.style.display=t.style.display='none';}hide();"
    "g.addEventListener('mousemove',function(e){var m=g.getScreenCTM();if(!m||!m.a)return;"
    "var x=(e.clientX-m.e)/m.a,bx=x,parts=[];if(x<ML||x>W-MR){hide();return;}"
    "ls.forEach(function(l){var b=null;l.p.forEach(function(q){"
    "if(!b||Math.abs(q[0]-x)<Math.abs(b[0]-x))b=q;});if(b){bx=b[0];"
    "parts.push(l.n+' '+(ymax*(1-(b[1]-MT)/(H-MT-MB))).toPrecision(4)+u);}});"
    "t.textContent=dur((bx-ML)/(W-ML-MR)*tmax)+': '+parts.join(', ');"
    "ln.setAttribute('x1',bx);ln.setAttribute('x2',bx);"
    "t.setAttribute('x',bx>W/2?bx-6:bx+6);t.setAttribute('text-anchor',bx>W/2?'end':'start');"
    "ln.style.display=t.style.display='';});g.addEventListener('mouseleave',hide);});"
    "document.body.setAttribute('data-hover','on');})();";

/* The script, with the chart's geometry from the macros the SVG is drawn
 * with. */
static void hover_script(struct dwriter *w)
{
        dw_printf(w, "<script>(function(){var ML=%g,MR=%g,MT=%g,MB=%g,W=%g,H=%g;%s</script>\n", ML,
                  MR, MT, MB, W, H, hover_js);
}

struct frame {
        double tmax, ymax; /* ymax in drawn units */
        double k;          /* data units -> drawn units (GiB -> MiB for small values) */
        const char *unit;  /* of the drawn units */
};

static double px(const struct frame *f, double t)
{
        return ML + (W - ML - MR) * (f->tmax > 0 ? t / f->tmax : 0);
}

static double py(const struct frame *f, double v)
{
        double y = MT + (H - MT - MB) * (1 - (f->ymax > 0 ? v * f->k / f->ymax : 0));

        return MAX(MT, MIN(y, H - MB));
}

/* The page's one time axis: every chart and lane maps time with px() over
 * the same tmax. */
struct page {
        const struct run_model *m;
        const struct report_data *d;
        double tmax;
        double edge_off; /* seconds from the run's start to ninja's 0 */
        bool edges_placed;
};

/* The 1-2-5 step that cuts span into about want parts (at least 1 for
 * counts). */
static double nice_step(double span, double want, bool integer)
{
        static const double m[] = {1, 2, 5, 10};
        double raw = span / want, mag, step = 1;

        if (!(raw > 0) || !isfinite(raw))
                return 1;
        mag = pow(10, floor(log10(raw)));
        for (size_t i = 0; i < ARRAY_SIZE(m); i++)
                if (m[i] * mag >= raw * 0.999) {
                        step = m[i] * mag;
                        break;
                }
        return integer && step < 1 ? 1 : step;
}

static int decimals_of(double step)
{
        return step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
}

/* A round step of time: about 8 ticks over tmax. */
static double time_step(double tmax)
{
        static const double st[] = {0.1,  0.2,  0.5,  1,     2,     5,     10,    15,
                                    30,   60,   120,  300,   600,   900,   1800,  3600,
                                    7200, 10800, 21600, 43200, 86400, 172800, 604800};

        for (size_t i = 0; i < ARRAY_SIZE(st); i++)
                if (tmax / st[i] <= 8)
                        return st[i];
        return st[ARRAY_SIZE(st) - 1];
}

/* "0", "30s", "1m30s", "2h", "1h30m"; tenths under a second's step. */
static const char *tick_time(double t, double step, char b[static 32])
{
        long long x = llround(t), h = x / 3600, m = x / 60 % 60, sec = x % 60;

        if (fabs(t) < 1e-9)
                snprintf(b, 32, "0");
        else if (step < 1)
                snprintf(b, 32, "%.1fs", t);
        else if (h && m)
                snprintf(b, 32, "%lldh%02lldm", h, m);
        else if (h)
                snprintf(b, 32, "%lldh", h);
        else if (m && sec)
                snprintf(b, 32, "%lldm%02llds", m, sec);
        else if (m)
                snprintf(b, 32, "%lldm", m);
        else
                snprintf(b, 32, "%llds", sec);
        return b;
}

/* The time axis under a plot from y0 to y1: a grid line and a label at
 * each round time. The first line (x = ML) is the axis' origin (class
 * x0), the same x on every chart of the page. */
static void time_axis(struct dwriter *w, const struct frame *f, double y0, double y1)
{
        double step = time_step(f->tmax);
        char b[32];

        dw_printf(w, "<line class=\"ax x0\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>", ML,
                  ML, y0, y1);
        for (double t = 0; t <= f->tmax * 1.0001; t += step) {
                double x = px(f, t);

                if (t > 0)
                        dw_printf(w,
                                  "<line class=\"gx\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                                  "y2=\"%.0f\"/>",
                                  x, x, y0, y1);
                dw_printf(w, "<text class=\"tk\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"%s\">%s</text>",
                          x, y1 + 14, t == 0 ? "start" : x > W - MR - 20 ? "end" : "middle",
                          tick_time(t, step, b));
        }
}

static void stage_bands(struct dwriter *w, const struct report_data *d, const struct frame *f,
                        bool labels)
{
        for (size_t i = 0; i < d->nbands; i++) {
                const struct report_band *bd = &d->bands[i];
                double x0 = px(f, bd->start_s), x1 = px(f, bd->end_s);

                dw_printf(w,
                          "<rect class=\"b%zu\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
                          "height=\"%.0f\"><title>stage ",
                          i % 2, x0, MT, MAX(x1 - x0, 0.5), H - MT - MB);
                report_html_esc(w, bd->stage);
                dw_puts(w, "</title></rect>");
                if (labels && x1 - x0 > 60) {
                        dw_printf(w, "<text x=\"%.1f\" y=\"%.0f\" class=\"lg\">", x0 + 3, MT + 11);
                        report_html_esc(w, bd->stage);
                        dw_puts(w, "</text>");
                }
        }
}

/* The bands, the y grid at round values (the unit in the chart's title)
 * and the time axis. */
static void bands_and_axes(struct dwriter *w, const struct report_data *d, const struct frame *f,
                           double ystep)
{
        int dec = decimals_of(ystep);

        stage_bands(w, d, f, true);
        for (double v = 0; v <= f->ymax * 1.0001; v += ystep) {
                double y = py(f, v / f->k);

                dw_printf(w,
                          "<line class=\"ax\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                          "<text class=\"ty\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>",
                          ML, W - MR, y, y, ML - 4, y + 4, dec, v);
        }
        time_axis(w, f, MT, H - MB);
}

struct chart_def {
        const char *title, *unit;
        int series[4];
        const char *names[4];
        double threshold; /* NAN: none */
        const char *threshold_name;
        const struct summary_point *peaks[3];
        const char *peak_names[3];
        double peak_scale; /* summary units -> chart units */
        bool integer;      /* a count: whole ticks */
        double fixed_ymax; /* NAN: from the data (CPU %: 100) */
};

static void series_line(struct dwriter *w, const struct report_data *d, const struct frame *f,
                        int id, int color, const char *name, struct report_pt *pts)
{
        size_t n = report_downsample(d->t, d->v[id], d->n, REPORT_BUCKETS, pts);

        if (!n)
                return;
        dw_printf(w, "<polyline class=\"s%d\" data-n=\"%s\" points=\"", color, name);
        for (size_t i = 0; i < n; i++)
                dw_printf(w, "%s%.1f,%.1f", i ? " " : "", px(f, pts[i].t), py(f, pts[i].v));
        dw_puts(w, "\"/>");
}

static void peak_text(struct dwriter *w, const char *name, const struct summary_point *p, double v,
                      const char *unit)
{
        dw_printf(w, "%s %.4g%s at %s", name, v, unit, DURATION_STR(p->elapsed_s));
        report_html_opt(w, ", stage ", p->stage);
        report_html_opt(w, ", context ", p->context);
        report_html_opt(w, ", running ", p->running);
}

static void chart_peaks(struct dwriter *w, const struct chart_def *c, const struct frame *f,
                        bool list)
{
        double lx = -1e9, lyp = -1e9, ly;

        for (size_t i = 0; i < ARRAY_SIZE(c->peaks); i++) {
                const struct summary_point *p = c->peaks[i];
                double v;

                if (!p || !p->set || isnan(p->value) || isnan(p->elapsed_s))
                        continue;
                v = p->value * c->peak_scale;
                if (list) {
                        dw_puts(w, "<li>");
                        peak_text(w, c->peak_names[i], p, v * f->k, f->unit);
                        dw_puts(w, "</li>");
                        continue;
                }
                dw_printf(w, "<circle class=\"pk\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>",
                          px(f, p->elapsed_s), py(f, v));
                peak_text(w, c->peak_names[i], p, v * f->k, f->unit);
                /* a second label near the first goes a line lower */
                ly = MAX(py(f, v) - 6, MT + 22);
                if (i > 0 && fabs(px(f, p->elapsed_s) - lx) < 200 && fabs(ly - lyp) < 14)
                        ly = lyp + 14;
                lx = px(f, p->elapsed_s);
                lyp = ly;
                dw_printf(w,
                          "</title></circle><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">"
                          "%s %.4g%s</text>",
                          lx + (lx > W / 2 ? -6 : 6), ly, lx > W / 2 ? "end" : "start",
                          c->peak_names[i], v * f->k, f->unit);
        }
}

/* The largest value of the chart's series; false when every value is
 * unknown or zero (no chart of a series that is zero throughout).
 * *ret_flat: every value within 3 % of it (a chart that carries no
 * information, folded). */
static bool chart_max(const struct report_data *d, const struct chart_def *c, double *ret,
                      bool *ret_flat)
{
        double m = 0, lo = INFINITY;

        for (size_t k = 0; k < ARRAY_SIZE(c->series) && c->names[k]; k++)
                for (size_t i = 0; i < d->n; i++)
                        if (!isnan(d->v[c->series[k]][i])) {
                                m = MAX(m, d->v[c->series[k]][i]);
                                lo = MIN(lo, d->v[c->series[k]][i]);
                        }
        *ret = m;
        *ret_flat = d->n > 2 && lo >= 0.97 * m;
        return m > 0;
}

static void chart_legend(struct dwriter *w, const struct chart_def *c, double th,
                         const struct frame *f)
{
        dw_puts(w, "</svg><div class=\"lg\">");
        for (size_t k = 0; k < ARRAY_SIZE(c->series) && c->names[k]; k++)
                dw_printf(w, "<span class=\"k%zu\">&#9632;</span> %s &nbsp; ", k, c->names[k]);
        if (!isnan(c->threshold))
                dw_printf(w, "<span style=\"color:var(--warn)\">- -</span> %s%s", c->threshold_name,
                          isnan(th) ? " (far above the data: not drawn)" : "");
        dw_puts(w, "</div><ul class=\"peaks\">");
        chart_peaks(w, c, f, true);
        dw_puts(w, "</ul>");
}

static void chart(struct dwriter *w, const struct page *P, const struct chart_def *c,
                  struct report_pt *pts)
{
        const struct report_data *d = P->d;
        struct frame f = {.tmax = P->tmax, .ymax = 0, .k = 1, .unit = c->unit};
        double th, ystep;
        bool flat;

        if (!chart_max(d, c, &f.ymax, &flat))
                return;
        if (flat)
                dw_printf(w, "<details class=\"flat\"><summary>%s: flat over the run</summary>",
                          c->title);
        /* a threshold far above the data would flatten it: said, not drawn */
        th = !isnan(c->threshold) && (c->integer || c->threshold <= f.ymax * 2) ? c->threshold
                                                                                 : NAN;
        if (!isnan(th))
                f.ymax = MAX(f.ymax, th);
        if (strcmp(c->unit, " GiB") == 0 && f.ymax < 1.5) {
                f.k = 1024;
                f.unit = " MiB";
        }
        f.ymax = isnan(c->fixed_ymax) ? f.ymax * f.k * 1.04 : c->fixed_ymax;
        ystep = nice_step(f.ymax, 4, c->integer);
        f.ymax = MAX(ceil(f.ymax / ystep - 1e-9) * ystep, ystep);
        dw_printf(w,
                  "<h3>%s (%s)</h3><svg class=\"hv\" data-tmax=\"%.6g\" data-ymax=\"%.6g\" "
                  "data-unit=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s "
                  "over the run\"><title>%s</title><desc>",
                  c->title, f.unit[0] == ' ' ? f.unit + 1 : f.unit[0] ? f.unit : "count", f.tmax,
                  f.ymax, f.unit, W, H, c->title, c->title);
        dw_puts(w, "its peaks are listed below it</desc>");
        bands_and_axes(w, d, &f, ystep);
        if (!isnan(th))
                dw_printf(w,
                          "<line class=\"th\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\">"
                          "<title>%s</title></line>",
                          ML, W - MR, py(&f, th), py(&f, th), c->threshold_name);
        for (size_t k = 0; k < ARRAY_SIZE(c->series) && c->names[k]; k++)
                series_line(w, d, &f, c->series[k], (int)k, c->names[k], pts);
        chart_peaks(w, c, &f, false);
        chart_legend(w, c, th, &f);
        if (flat)
                dw_puts(w, "</details>");
}

static void timeline(struct dwriter *w, const struct page *P)
{
        const struct summary *s = P->m->summary;
        const double g = 1.0 / 1024; /* MiB -> GiB */
        unsigned ncpu = P->m->run->ncpu;
        char th1[80], th2[80], th3[80], th4[80];
        const struct chart_def defs[] = {
            {"Build memory", " GiB",
             {REPORT_CG_MEM, REPORT_CG_PEAK, REPORT_CG_ANON, REPORT_CG_FILE},
             {"total", "kernel peak", "anonymous", "file"},
             s->cfg.mem_cap_mb > 0 ? s->cfg.mem_cap_mb / 1024 : NAN, th4,
             {&s->build.mem_peak, &s->build.mem_anon_peak}, {"peak", "peak anonymous"}, g,
             false, NAN},
            {"Host memory", " GiB", {REPORT_MEM_USED, REPORT_MEM_AVAIL}, {"used", "available"},
             s->cfg.near_oom_mb / 1024, th1, {&s->mem_used_peak, &s->mem_avail_min},
             {"peak used", "least available"}, g, false, NAN},
            {"Swap used", " GiB", {REPORT_SWAP}, {"swap used"}, NAN, NULL, {&s->swap_used_peak},
             {"peak swap"}, g, false, NAN},
            {"CPU busy", "%", {REPORT_CPU}, {"CPU"}, NAN, NULL, {&s->cpu_pct_peak}, {"peak CPU"},
             1, false, 100},
            {"Jobs in flight", "", {REPORT_COMPILERS}, {"compilers"}, ncpu ? (double)ncpu : NAN,
             th3, {&s->compilers_peak}, {"most compilers"}, 1, true, NAN},
            {"Disk available", " GiB", {REPORT_DISK}, {"available"}, s->cfg.low_disk_gb, th2,
             {&s->disk_avail_min}, {"least available"}, 1, false, NAN},
        };
        struct report_pt *pts = malloc(2 * REPORT_BUCKETS * sizeof(*pts));

        if (!pts) {
                dw_check(w, -ENOMEM);
                return;
        }
        snprintf(th1, sizeof(th1), "--near-oom-mb %.0f", s->cfg.near_oom_mb);
        snprintf(th2, sizeof(th2), "--low-disk-gb %.4g", s->cfg.low_disk_gb);
        snprintf(th3, sizeof(th3), "%u CPUs: the gap under it is idle cores", ncpu);
        snprintf(th4, sizeof(th4), "--memory-max %.4g MiB, the cap", s->cfg.mem_cap_mb);
        if (!P->d->n)
                dw_puts(w, "<p>No samples.</p>");
        for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
                chart(w, P, &defs[i], pts);
        free(pts);
}

#define CHAR_PX 6.2 /* the width of a lane label's character, about */

/* Up to fit px of s (whole UTF-8 sequences, "…" when cut) as a lane's
 * label; nothing when not even a few characters fit. */
static void lane_label(struct dwriter *w, const char *s, double x, double y, double fit,
                       const char *anchor)
{
        size_t len = strlen(s), max = fit > 0 ? (size_t)(fit / CHAR_PX) : 0, n = len;

        if (max < 4 && len > max)
                return;
        if (len > max) {
                n = max - 1;
                while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                        n--;
        }
        dw_printf(w, "<text class=\"in\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
        report_html_escape(w, s, n);
        dw_puts(w, n < len ? "…</text>" : "</text>");
}

/* A label for the bar x0..x1 of a row of its own: inside when it fits,
 * else beside it on the side with more room, cut to the plot. */
static void row_label(struct dwriter *w, const char *s, double x0, double x1, double y)
{
        double need = (double)strlen(s) * CHAR_PX + 6;

        if (x1 - x0 >= need)
                lane_label(w, s, x0 + 3, y, x1 - x0 - 6, "start");
        else if (W - MR - x1 >= x0 - ML)
                lane_label(w, s, x1 + 3, y, W - MR - x1 - 6, "start");
        else
                lane_label(w, s, x0 - 3, y, x0 - ML - 6, "end");
}

static void target_bars(struct dwriter *w, const struct page *P)
{
        const struct run_facts *f = P->m->facts;
        double rowh = 20, h;
        struct frame fr = {.k = 1, .unit = "", .tmax = P->tmax, .ymax = 1};
        size_t n = 0;

        for (size_t i = 0; f && i < f->n; i++)
                if (!isnan(f->t[i].start_s) && !isnan(f->t[i].end_s))
                        n++;
        if (!n)
                return;
        h = rowh * (double)n + 20;
        dw_printf(w,
                  "<h3>Targets (start to end; cached steps striped)</h3><svg viewBox=\"0 0 %.0f "
                  "%.0f\" role=\"img\" aria-label=\"targets from first to last line seen\">"
                  "<title>Targets over the run</title><desc>one bar per target</desc>"
                  "<defs><pattern id=\"cached\" width=\"6\" height=\"6\" "
                  "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect "
                  "class=\"f1\" width=\"3\" height=\"6\"/></pattern></defs>",
                  W, h);
        time_axis(w, &fr, 0, h - 20);
        n = 0;
        for (size_t i = 0; i < f->n; i++) {
                const struct target_fact *t = &f->t[i];
                double x0, x1, y = rowh * (double)n + 2, frac;

                if (isnan(t->start_s) || isnan(t->end_s))
                        continue;
                n++;
                x0 = px(&fr, t->start_s);
                x1 = MAX(px(&fr, t->end_s), x0 + 2);
                frac = t->steps_set ? figure_cached_ratio(t->steps, t->cached) : NAN;
                if (isnan(frac))
                        frac = 0; /* no stripe */
                dw_printf(w,
                          "<rect class=\"f%d\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
                          "height=\"%.0f\" opacity=\"0.75\"><title>",
                          t->success == TARGET_FAILED ? 3 : 0, x0, y, x1 - x0, rowh - 5);
                report_html_esc(w, t->name);
                dw_printf(w, ": %s", DURATION_STR(t->duration_s));
                if (t->steps_set)
                        dw_printf(w, ", %u steps, %u cached", t->steps, t->cached);
                dw_puts(w, "</title></rect>");
                if (frac > 0)
                        dw_printf(w,
                                  "<rect fill=\"url(#cached)\" x=\"%.1f\" y=\"%.0f\" "
                                  "width=\"%.1f\" height=\"%.0f\"/>",
                                  x0, y, (x1 - x0) * frac, rowh - 5);
                row_label(w, t->name, x0, x1, y + 11);
        }
        dw_puts(w, "</svg>");
}

#define REPORT_STEP_BARS 400 /* BuildKit steps drawn (the longest); the rest are counted */

static int cmp_step_len(const void *a, const void *b)
{
        const struct span *x = *(const struct span *const *)a, *y = *(const struct span *const *)b;
        int64_t dx = llround(x->end_s * 1e6) - llround(x->start_s * 1e6),
                dy = llround(y->end_s * 1e6) - llround(y->start_s * 1e6);

        return dx != dy ? (dx > dy ? -1 : 1) : 0;
}

static int cmp_step_lane(const void *a, const void *b)
{
        const struct span *x = *(const struct span *const *)a, *y = *(const struct span *const *)b;
        int64_t xs = llround(x->start_s * 1e6), ys = llround(y->start_s * 1e6);

        if (x->group != y->group)
                return x->group < y->group ? -1 : 1;
        return xs != ys ? (xs < ys ? -1 : 1) : 0;
}

/* What a RUN step used inside BuildKit, in its bar's title. */
static void step_exec_title(struct dwriter *w, const struct step_exec *x)
{
        if (!x->set)
                return;
        if (isfinite(x->mem_peak_bytes))
                dw_printf(w, ", memory peak %s", BYTES_STR(x->mem_peak_bytes));
        if (isfinite(x->anon_peak_bytes))
                dw_printf(w, " (anon %s)", BYTES_STR(x->anon_peak_bytes));
        report_html_opt(w, ", largest process ", x->peak_proc);
        if (isfinite(x->cpu_s))
                dw_printf(w, ", CPU %.2f s", x->cpu_s);
        if (isfinite(x->io_read_bytes) && isfinite(x->io_write_bytes))
                dw_printf(w, ", IO %s read, %s written", BYTES_STR(x->io_read_bytes),
                          BYTES_STR(x->io_write_bytes));
        if (isfinite(x->net_rx_bytes) && isfinite(x->net_tx_bytes))
                dw_printf(w, ", net %s in, %s out", BYTES_STR(x->net_rx_bytes),
                          BYTES_STR(x->net_tx_bytes));
        if (x->oom_kills > 0) {
                dw_printf(w, ", OOM kills %.0f", x->oom_kills);
                if (x->oom_victim[0]) {
                        dw_puts(w, " (victim ");
                        report_html_esc(w, x->oom_victim);
                        dw_puts(w, ")");
                }
        }
}

/* One step's bar on row lane: cached ones striped, failed ones in the
 * warning colour; its name, target and duration in its title. */
static void step_bar(struct dwriter *w, const struct frame *fr, const struct span *f, double y)
{
        double x0 = px(fr, f->start_s), x1 = MAX(px(fr, f->end_s), x0 + 1.5);

        dw_printf(w,
                  "<rect class=\"f%d%s\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"12\" "
                  "opacity=\"0.8\"%s><title>",
                  f->sf->error || f->sf->canceled ? 3
                  : f->sf->step                   ? 0
                                                  : 2,
                  f->critical ? " cp" : "", x0, y, x1 - x0,
                  f->sf->cached ? " fill=\"url(#stepcached)\"" : "");
        report_html_esc(w, f->name);
        if (f->critical)
                dw_puts(w, " (critical path)");
        if (f->target[0]) {
                dw_puts(w, " (");
                report_html_esc(w, f->target);
                dw_puts(w, ")");
        }
        dw_printf(w, ": %s%s%s%s", DURATION_STR(f->end_s - f->start_s),
                  f->sf->cached ? ", cached" : "", f->sf->error ? ", failed" : "",
                  f->sf->canceled ? ", canceled" : "");
        step_exec_title(w, &f->sf->exec);
        dw_puts(w, "</title></rect>");
        /* the step's memory on its bar, where it fits */
        if (f->sf->exec.set && isfinite(f->sf->exec.mem_peak_bytes) && x1 - x0 >= 48)
                dw_printf(w,
                          "<text x=\"%.1f\" y=\"%.0f\" font-size=\"9\" "
                          "pointer-events=\"none\">%.0f MiB%s</text>",
                          x0 + 2, y + 9, f->sf->exec.mem_peak_bytes / SAMPLE_MIB,
                          f->sf->exec.oom_kills > 0 ? " OOM" : "");
}

/* The spans of a kind (model/spans.h) in v, in the model's order.
 * Returns how many. */
static size_t spans_of(const struct spans *M, enum span_kind kind, const struct span **v)
{
        size_t n = 0;

        for (size_t i = 0; i < M->n; i++)
                if (M->v[i].kind == kind)
                        v[n++] = &M->v[i];
        return n;
}

/* The BuildKit steps, start to end, on lanes per target (the longest
 * REPORT_STEP_BARS when there are more). */
static void step_bars(struct dwriter *w, const struct spans *M, const struct targets *ts,
                      double page_tmax)
{
        const struct span **r;
        uint32_t *lane;
        size_t n, all, rows = 0;
        /* the page's axis ends after every step */
        struct frame fr = {.k = 1, .unit = "", .ymax = 1, .tmax = page_tmax};

        if (!ts || !ts->nstepv)
                return;
        r = calloc(M->n + 1, sizeof(*r));
        lane = calloc(M->n + 1, sizeof(*lane));
        n = all = r && lane ? spans_of(M, SPAN_STEP, r) : 0;
        if (!n) {
                dw_check(w, r && lane ? 0 : -ENOMEM);
                goto out;
        }
        if (n > REPORT_STEP_BARS) {
                qsort(r, n, sizeof(*r), cmp_step_len);
                n = REPORT_STEP_BARS;
        }
        qsort(r, n, sizeof(*r), cmp_step_lane);
        /* lanes per target, numbered one after the other */
        for (size_t i = 0, j; i < n; i = j) {
                struct trace_span sp[REPORT_STEP_BARS];
                int64_t l;
                for (j = i; j < n && r[j]->group == r[i]->group; j++)
                        sp[j - i] = (struct trace_span){llround(r[j]->start_s * 1e6),
                                                        llround(r[j]->end_s * 1e6)};
                l = trace_lanes_assign(sp, j - i, lane + i);
                for (size_t k = i; l >= 0 && k < j; k++)
                        lane[k] += (uint32_t)rows;
                rows += l > 0 ? (size_t)l : 0;
        }
        dw_printf(w,
                  "<h3>BuildKit steps (start to end, lanes per target; cached striped, failed "
                  "in red; %zu of %zu shown)</h3><svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                  "aria-label=\"BuildKit steps from their first to their last line\">"
                  "<title>BuildKit steps over the run</title><desc>one bar per step, a row of "
                  "lanes per target</desc><defs><pattern id=\"stepcached\" width=\"6\" "
                  "height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                  "<rect class=\"f1\" width=\"3\" height=\"6\"/></pattern></defs>",
                  n, all + ts->steps_dropped, W, 16.0 * (double)rows + 24);
        for (size_t i = 0; i < n; i++) {
                step_bar(w, &fr, r[i], 16.0 * lane[i] + 2);
                if (i == 0 || r[i]->group != r[i - 1]->group) {
                        dw_printf(w, "<text x=\"2\" y=\"%.0f\">", 16.0 * lane[i] + 12);
                        report_html_esc(w, r[i]->target[0] ? r[i]->target : "(shared)");
                        dw_puts(w, "</text>");
                }
        }
        time_axis(w, &fr, 0, 16.0 * (double)rows + 4);
        dw_puts(w, "</svg>");
out:
        free(r);
        free(lane);
}

#define EDGE_LANES 30 /* lanes of ninja edges drawn; edges that find none are counted */

static int cmp_edge_start(const void *a, const void *b)
{
        const struct span *x = *(const struct span *const *)a, *y = *(const struct span *const *)b;

        if (x->start_s != y->start_s)
                return x->start_s < y->start_s ? -1 : 1;
        return x->end_s < y->end_s ? 1 : x->end_s > y->end_s ? -1 : 0;
}

/* Without start times (the run's files keep durations only): the slowest
 * as a list. */
static void ninja_durations(struct dwriter *w, const struct targets *ts)
{
        dw_printf(w,
                  "<h3>Slowest ninja edges (durations: the run's files keep no start times; "
                  "%llu edges)</h3><table><tr><th>edge</th><th>duration</th></tr>",
                  (unsigned long long)ts->ninja_edges);
        for (size_t i = 0; i < ts->nslow; i++) {
                dw_puts(w, "<tr><td>");
                report_html_esc(w, ts->slow[i].output);
                dw_printf(w, "</td><td class=\"n\">%s</td></tr>",
                          DURATION_STR((double)(ts->slow[i].end_ms - ts->slow[i].start_ms) / 1000));
        }
        dw_puts(w, "</table>");
}

static void edge_bar(struct dwriter *w, const struct frame *fr, const struct span *e,
                     size_t lane)
{
        double x0 = px(fr, e->start_s), x1 = MAX(px(fr, e->end_s), x0 + 1);
        const char *base = strrchr(e->name, '/');

        dw_printf(w,
                  "<rect class=\"%s\" opacity=\"0.7\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
                  "height=\"15\"><title>",
                  e->critical ? "f2 cp" : "f2", x0, 18.0 * (double)lane + 2, x1 - x0);
        report_html_esc(w, e->name);
        if (e->critical)
                dw_puts(w, " (critical path)");
        /* whole milliseconds, as the .ninja_log has them */
        dw_printf(w, ": %s</title></rect>",
                  DURATION_STR((double)llround((e->end_s - e->start_s) * 1000) / 1000));
        lane_label(w, base && base[1] ? base + 1 : e->name, x0 + 3, 18.0 * (double)lane + 13,
                   x1 - x0 - 6, "start");
}

/* The .ninja_log's edges on lanes on the page's axis (its clock placed by
 * the log's mtime): an edge takes the first lane free at its start. */
static void ninja_lanes(struct dwriter *w, const struct page *P, const struct spans *M)
{
        const struct targets *ts = P->m->targets;
        struct frame fr = {.ymax = 1, .k = 1, .unit = "", .tmax = P->tmax};
        const struct span **v;
        struct trace_span *sp;
        uint32_t *lane;
        size_t n, drawn = 0;
        int64_t nl;
        double h;

        if (!ts || (!ts->nedgev && !ts->nslow))
                return;
        if (!P->edges_placed) {
                if (ts->nslow)
                        ninja_durations(w, ts);
                return;
        }
        v = calloc(M->n + 1, sizeof(*v));
        sp = calloc(M->n + 1, sizeof(*sp));
        lane = calloc(M->n + 1, sizeof(*lane));
        if (!v || !sp || !lane) {
                dw_check(w, -ENOMEM);
                goto out;
        }
        n = spans_of(M, SPAN_EDGE, v);
        qsort(v, n, sizeof(*v), cmp_edge_start);
        for (size_t i = 0; i < n; i++)
                sp[i] = (struct trace_span){llround(v[i]->start_s * 1e6),
                                            llround(v[i]->end_s * 1e6)};
        /* lanes past EDGE_LANES are not drawn; they take none of the first */
        nl = MIN(trace_lanes_assign(sp, n, lane), EDGE_LANES);
        if (nl < 0) {
                dw_check(w, (int)nl);
                goto out;
        }
        h = 18.0 * (double)nl + 22;
        dw_printf(w,
                  "<h3>Slowest ninja edges (.ninja_log, ninja's clock, placed on the run's; %llu "
                  "edges)</h3>"
                  "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"ninja edges on lanes\">"
                  "<title>Slowest ninja edges</title><desc>the %u slowest of %llu edges</desc>",
                  (unsigned long long)ts->ninja_edges, W, h, ts->nedgev,
                  (unsigned long long)ts->ninja_edges);
        time_axis(w, &fr, 0, h - 22);
        for (size_t i = 0; i < n; i++)
                if (lane[i] < EDGE_LANES) {
                        edge_bar(w, &fr, v[i], lane[i]);
                        drawn++;
                }
        dw_puts(w, "</svg>");
        if (drawn < ts->nedgev)
                dw_printf(w, "<div class=\"lg\">%zu of the %u slowest edges drawn (%d lanes)</div>",
                          drawn, ts->nedgev, EDGE_LANES);
out:
        free(v);
        free(sp);
        free(lane);
}

/* A number cell, "–" when unknown; prec < 0: a signed whole number. */
static void td_num(struct dwriter *w, double v, int prec)
{
        dw_puts(w, "<td class=\"n\">");
        if (!isnan(v))
                dw_printf(w, "%s%.*f", prec < 0 && v >= 0 ? "+" : "", prec < 0 ? 0 : prec, v);
        else
                dw_puts(w, "–");
        dw_puts(w, "</td>");
}

static const struct report_table_fmt targets_table = {
    .head = "<h3>Targets</h3><table><tr><th>target</th><th>result</th><th>duration</th>"
            "<th>steps</th><th>cached</th><th>ratio</th><th>cache hits</th><th>cache misses</th>"
            "</tr>",
    .row_open = "<tr>",
    .text_open = "<td>",
    .num_open = "<td class=\"n\">",
    .cell_close = "</td>",
    .row_close = "</tr>",
    .tail = "</table>",
    .escape = report_html_escape,
};

static void units_table(struct dwriter *w, const struct units *u, const char *root)
{
        struct unit top[UNITS_TOP];
        size_t n = u ? units_top(u, top, UNITS_TOP) : 0, nall = 0;
        const struct unit *all = u ? units_rows(u, &nall) : NULL;
        char shown[UNITNAME_SHORT_MAX + 1];
        struct unitnames un;

        if (!n)
                return;
        unitnames_init(&un, all, nall, root);
        dw_puts(w, "<h3>Compile units by peak memory</h3><table><tr><th>unit</th><th>tool</th>"
                   "<th>peak MiB</th><th>at</th><th>CPU s</th></tr>");
        for (size_t i = 0; i < n; i++) {
                dw_puts(w, "<tr><td title=\"");
                report_html_esc(w, top[i].path[0] ? top[i].path : top[i].name);
                dw_puts(w, "\">");
                report_html_esc(w, unitnames_short(&un, &top[i], shown, sizeof(shown)));
                dw_puts(w, "</td><td>");
                report_html_esc(w, top[i].tool);
                dw_puts(w, "</td>");
                td_num(w, top[i].peak_mb, 0);
                dw_printf(w, "<td class=\"n\">%s</td>", DURATION_STR(top[i].peak_s));
                td_num(w, top[i].cpu_s, 1);
                dw_puts(w, "</tr>");
        }
        dw_puts(w, "</table>");
}

static void cache_table(struct dwriter *w, const struct targets *ts)
{
        bool head = false;

        for (int k = 0; ts && k < CC_TOOLS; k++) {
                const struct cc_blocks *c = targets_cc_blocks(ts, (enum cc_tool)k);
                uint64_t hits, misses;

                if (!c)
                        continue;
                if (!head)
                        dw_puts(w, "<h3>Compiler-cache deltas (first to last stats block)</h3>"
                                   "<table><tr><th>tool</th><th>blocks</th><th>hits</th>"
                                   "<th>misses</th></tr>");
                head = true;
                dw_printf(w, "<tr><td>%s</td><td class=\"n\">%u</td>", targets_cc_tool_name(k),
                          c->blocks);
                /* a reset between the blocks: the counts since it */
                (void)figure_cc_delta(c->first.hits, c->first.misses, c->last.hits, c->last.misses,
                                      &hits, &misses);
                td_num(w, (double)hits, -1);
                td_num(w, (double)misses, -1);
                dw_puts(w, "</tr>");
        }
        if (head)
                dw_puts(w, "</table>");
}

static void totals_table(struct dwriter *w, const struct summary *s)
{
        const struct summary_build *b = &s->build;
        const struct {
                const char *th;
                double v[2];
                int prec;
                bool two;
        } rows[] = {
            {"CPU user s", {b->cpu_user_s}, 1, false},
            {"CPU system s", {b->cpu_sys_s}, 1, false},
            {"IO read MiB", {b->io_read_mb}, 1, false},
            {"IO written MiB", {b->io_write_mb}, 1, false},
            {"pressure: memory some / full s", {b->psi.some_s[PSI_MEM], b->psi.full_s[PSI_MEM]}, 2, true},
            {"pressure: CPU some / full s", {b->psi.some_s[PSI_CPU], b->psi.full_s[PSI_CPU]}, 2, true},
            {"pressure: IO some / full s", {b->psi.some_s[PSI_IO], b->psi.full_s[PSI_IO]}, 2, true},
            {"processes, most", {b->pids_peak}, 0, false},
            {"OOM kills", {b->oom_kills}, 0, false},
        };

        if (!b->mode[0])
                return;
        dw_puts(w, "<h3>The build's totals</h3><table>");
        dw_puts(w, "<tr><th>accounting</th><td>");
        report_html_esc(w, b->mode);
        if (b->estimates)
                dw_puts(w, " (no cgroup: the figures below are estimates from the process tree "
                           "in /proc)");
        dw_puts(w, "</td></tr>");
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                dw_printf(w, "<tr><th>%s</th>", rows[i].th);
                td_num(w, rows[i].v[0], rows[i].prec);
                if (rows[i].two)
                        td_num(w, rows[i].v[1], rows[i].prec);
                dw_puts(w, "</tr>");
        }
        for (size_t i = 0; i < MIN(b->noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                dw_printf(w, "<tr><th>OOM kill at %s</th><td>", DURATION_STR(b->oom[i].elapsed_s));
                report_html_esc(w, b->oom[i].victim.label[0] ? b->oom[i].victim.label
                                                             : "victim unknown");
                dw_puts(w, "</td></tr>");
        }
        dw_puts(w, "</table>");
}

static void head(struct dwriter *w, const struct run_model *m)
{
        const struct run_info *ri = m->run;
        const char *o = m->facts ? targets_outcome_name(m->facts->outcome) : NULL;

        dw_puts(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                   "<meta name=\"color-scheme\" content=\"light dark\"><title>buildtel report ");
        report_html_esc(w, ri->run_id);
        dw_printf(w, "</title><style>%s</style></head><body>\n<h1>buildtel report: run ", css);
        report_html_esc(w, ri->run_id);
        dw_puts(w, "</h1><p><b>");
        for (size_t i = 0; ri->argv && ri->argv[i] && i < 64; i++) {
                if (i)
                        dw_puts(w, " ");
                report_html_esc(w, ri->argv[i]);
        }
        dw_puts(w, "</b><br>on ");
        report_html_esc(w, ri->host ? ri->host : "?");
        dw_printf(w, ", %s", o ? o : "outcome unknown");
        if (m->facts && m->facts->exit_code >= 0)
                dw_printf(w, " (exit %d)", m->facts->exit_code);
        dw_printf(w, ", %s, %llu samples</p>\n",
                  DURATION_STR(m->facts ? m->facts->duration_s : NAN),
                  (unsigned long long)m->summary->samples);
}

/* The page's time axis: the samples, the run's duration, the targets,
 * the steps and the placed ninja edges all fit on it. */
static void page_init(struct page *P, const struct report_data *d, const struct run_model *m)
{
        const struct targets *ts = m->targets;

        *P = (struct page){.m = m, .d = d};
        for (size_t i = 0; i < d->n; i++)
                if (!isnan(d->t[i]))
                        P->tmax = MAX(P->tmax, d->t[i]);
        if (m->facts && isfinite(m->facts->duration_s))
                P->tmax = MAX(P->tmax, m->facts->duration_s);
        for (size_t i = 0; m->facts && i < m->facts->n; i++)
                if (isfinite(m->facts->t[i].end_s))
                        P->tmax = MAX(P->tmax, m->facts->t[i].end_s);
        for (uint32_t i = 0; ts && i < ts->nstepv; i++)
                if (isfinite(ts->stepv[i].end_s))
                        P->tmax = MAX(P->tmax, ts->stepv[i].end_s);
        if (targets_ninja_offset(ts, m->run, &P->edge_off) == 0) {
                P->edges_placed = true;
                P->tmax = MAX(P->tmax, P->edge_off + (double)ts->ninja_max_end_ms / 1000);
        }
        if (!(P->tmax > 0))
                P->tmax = 1;
}

/* The summary text, folded, at the end. */
static void summary_folded(struct dwriter *w, const struct run_model *m)
{
        struct dbuf txt = DBUF_INIT;

        dw_check(w, render_summary_text(m->summary, m->run, &txt));
        dw_puts(w, "<section id=\"summary\"><details><summary>The summary (facts and readings, "
                   "as summary.txt)</summary><pre>");
        report_html_escape(w, txt.p ? txt.p : "", txt.len);
        dw_puts(w, "</pre></details></section>\n");
        dbuf_release(&txt);
}

int report_render_html(const struct report_data *d, const struct run_model *m, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        struct spans M = {.max = SIZE_MAX}; /* the steps and placed edges the lanes draw */
        struct page P;

        page_init(&P, d, m);
        dw_check(&w, spans_derive(&M, m->run, NULL, m->targets));
        head(&w, m);
        report_answer(&w, m);
        report_baseline_html(&w, m->summary);
        dw_puts(&w, "<section id=\"timeline\"><h2>Timeline</h2>");
        timeline(&w, &P);
        dw_puts(&w, "<div id=\"bars\">");
        target_bars(&w, &P);
        step_bars(&w, &M, m->targets, P.tmax);
        ninja_lanes(&w, &P, &M);
        dw_puts(&w, "</div></section>\n<section id=\"tables\"><h2>Tables</h2>");
        report_targets_table(&w, m->facts, &targets_table);
        units_table(&w, m->units, m->run ? m->run->cwd : NULL);
        cache_table(&w, m->targets);
        totals_table(&w, m->summary);
        dw_puts(&w, "</section>\n");
        summary_folded(&w, m);
        hover_script(&w);
        dw_puts(&w, "</body></html>\n");
        spans_release(&M);
        return w.err;
}
