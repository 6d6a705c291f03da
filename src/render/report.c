/* SPDX-License-Identifier: MIT */
/* The report's data (the time series kept as samples arrive), the
 * downsampling that keeps every peak, escaping, and the Markdown job
 * summary. The HTML page is in report-html.c. */
#include "render/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"
#include "render/summary.h"
#include "util/macro.h"
#include "util/util.h"

void report_data_init(struct report_data *d)
{
        memset(d, 0, sizeof(*d));
}

void report_data_release(struct report_data *d)
{
        if (!d)
                return;
        free(d->t);
        for (size_t i = 0; i < REPORT_NSERIES; i++)
                free(d->v[i]);
        report_data_init(d);
}

static int grow(struct report_data *d)
{
        size_t cap = d->cap ? d->cap * 2 : 1024;

        for (size_t i = 0; i <= REPORT_NSERIES; i++) {
                double **a = i < REPORT_NSERIES ? &d->v[i] : &d->t;
                double *p = reallocarray(*a, cap, sizeof(double));

                if (!p)
                        return -ENOMEM;
                *a = p;
        }
        d->cap = cap;
        return 0;
}

static void note_stage(struct report_data *d, double t, const char *stage)
{
        struct report_band *b = d->nbands ? &d->bands[d->nbands - 1] : NULL;

        if (isnan(t))
                return;
        if (b)
                b->end_s = t;
        if (!stage || !*stage || (b && strncmp(b->stage, stage, SAMPLE_STAGE_MAX) == 0))
                return;
        if (d->nbands == REPORT_BANDS_MAX)
                return; /* later stages fold into the last band */
        b = &d->bands[d->nbands++];
        b->start_s = b->end_s = t;
        copy_utf8(b->stage, sizeof(b->stage), stage, strlen(stage));
}

int report_data_add(struct report_data *d, const struct sample *s)
{
        const double gib = SAMPLE_GIB;
        size_t i;

        if (d->n >= REPORT_ROWS_MAX) {
                d->dropped++;
                return 0;
        }
        if (d->n == d->cap && grow(d) < 0)
                return -ENOMEM;
        i = d->n++;
        d->t[i] = s->elapsed_s;
        d->v[REPORT_MEM_USED][i] = s->mem_used_bytes / gib;
        d->v[REPORT_MEM_AVAIL][i] = s->mem_avail_bytes / gib;
        d->v[REPORT_CG_ANON][i] = s->cg_mem_anon_bytes / gib;
        d->v[REPORT_CG_FILE][i] = s->cg_mem_file_bytes / gib;
        d->v[REPORT_SWAP][i] = s->swap_used_bytes / gib;
        d->v[REPORT_CPU][i] = s->cpu_pct;
        d->v[REPORT_DISK][i] = s->disk_avail_bytes / gib;
        d->v[REPORT_COMPILERS][i] = s->compilers;
        d->v[REPORT_CG_MEM][i] = s->cg_mem_bytes / gib;
        d->v[REPORT_CG_PEAK][i] = s->cg_mem_peak_bytes / gib;
        note_stage(d, s->elapsed_s, s->stage);
        return 0;
}

size_t report_downsample(const double *t, const double *v, size_t n, size_t buckets,
                         struct report_pt *out)
{
        double t0 = NAN, t1 = NAN, span;
        size_t k = 0, lo = 0;

        if (!buckets)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!isnan(t[i]) && !isnan(v[i])) {
                        if (isnan(t0))
                                t0 = t[i];
                        t1 = t[i];
                }
        if (isnan(t0))
                return 0;
        span = t1 > t0 ? t1 - t0 : 1;
        for (size_t b = 0; b < buckets && lo < n; b++) {
                double end = t0 + span * (double)(b + 1) / (double)buckets;
                size_t imin = SIZE_MAX, imax = SIZE_MAX, i;

                for (i = lo; i < n && (t[i] <= end || b == buckets - 1 || isnan(t[i])); i++) {
                        if (isnan(t[i]) || isnan(v[i]))
                                continue;
                        if (imin == SIZE_MAX || v[i] < v[imin])
                                imin = i;
                        if (imax == SIZE_MAX || v[i] > v[imax])
                                imax = i;
                }
                lo = i;
                if (imin == SIZE_MAX)
                        continue;
                if (imin == imax) {
                        out[k++] = (struct report_pt){t[imin], v[imin]};
                        continue;
                }
                out[k++] = (struct report_pt){t[MIN(imin, imax)], v[MIN(imin, imax)]};
                out[k++] = (struct report_pt){t[MAX(imin, imax)], v[MAX(imin, imax)]};
        }
        return k;
}

/* s[0..len) as valid UTF-8 (U+FFFD for bad bytes), control characters
 * but newline and tab as '?'. 0 or -ENOMEM. */
static int report_clean_text(struct dbuf *out, const char *s, size_t len)
{
        size_t from = out->len;
        int r = run_append_utf8_lossy(out, s, len, false);

        for (size_t i = from; r >= 0 && i < out->len; i++)
                if (((unsigned char)out->p[i] < 0x20 && out->p[i] != '\n' && out->p[i] != '\t') ||
                    out->p[i] == 0x7f)
                        out->p[i] = '?';
        return r;
}

static const char *const html_esc[256] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;"};
/* Markdown's own, before HTML's. A log line must not become a link or an
 * image: [x](u), ![x](u). */
static const char *const md_esc[256] = {
    ['|'] = "\\|", ['`'] = "\\`",   ['['] = "\\[", [']'] = "\\]", ['('] = "\\(", [')'] = "\\)",
    ['!'] = "\\!", ['\\'] = "\\\\", ['\n'] = " ",  ['\r'] = " ",  ['\t'] = " "};

/* Clean s as UTF-8 (U+FFFD, controls '?'), then escape each byte of the
 * result: first (NULL: none) before HTML's. */
static void escape_with(struct dwriter *w, const char *s, size_t len, const char *const *first)
{
        struct dbuf clean = DBUF_INIT;

        if (!dw_ok(w))
                return;
        dw_check(w, report_clean_text(&clean, s ? s : "", s ? len : 0));
        for (size_t i = 0; dw_ok(w) && i < clean.len; i++) {
                unsigned char c = (unsigned char)clean.p[i];
                const char *e = first && first[c] ? first[c] : html_esc[c];

                if (e)
                        dw_puts(w, e);
                else
                        dw_append(w, &clean.p[i], 1);
        }
        dbuf_release(&clean);
}

void report_html_escape(struct dwriter *w, const char *s, size_t len)
{
        escape_with(w, s, len, NULL);
}

void report_html_esc(struct dwriter *w, const char *s)
{
        report_html_escape(w, s, s ? strlen(s) : 0);
}

void report_html_opt(struct dwriter *w, const char *label, const char *s)
{
        if (!s[0])
                return;
        dw_puts(w, label);
        report_html_esc(w, s);
}

void report_md_escape(struct dwriter *w, const char *s, size_t len)
{
        escape_with(w, s, len, md_esc);
}

static void md_cell_str(struct dwriter *w, const char *s)
{
        dw_puts(w, " ");
        if (s && *s)
                report_md_escape(w, s, strlen(s));
        else
                dw_puts(w, "–");
        dw_puts(w, " |");
}

static void md_facts(struct dwriter *w, const struct run_model *m)
{
        const struct run_info *ri = m->run;
        const struct run_facts *f = m->facts;
        const char *o = f ? targets_outcome_name(f->outcome) : NULL;
        char word[FIGURE_OUTCOME_LEN];

        dw_puts(w, "## buildtel report: run ");
        report_md_escape(w, ri->run_id ? ri->run_id : "?", ri->run_id ? strlen(ri->run_id) : 1);
        dw_puts(w, "\n\n| fact | value |\n| --- | --- |\n| command |");
        if (ri->argv && ri->argv[0]) {
                dw_puts(w, " ");
                for (size_t i = 0; ri->argv[i] && i < 64; i++) {
                        if (i)
                                dw_puts(w, " ");
                        report_md_escape(w, ri->argv[i], strlen(ri->argv[i]));
                }
                dw_puts(w, " |\n");
        } else {
                dw_puts(w, " – |\n");
        }
        dw_puts(w, "| host |");
        md_cell_str(w, ri->host);
        if (f &&
            strcmp(figure_outcome(f->exit_code, f->term_signal, m->summary->build.oom_kills, word),
                   "OOM-killed") == 0)
                o = word;
        dw_printf(w, "\n| outcome | %s", o ? o : "unknown");
        if (f && f->exit_code >= 0)
                dw_printf(w, " (exit %d)", f->exit_code);
        if (f && f->term_signal)
                dw_printf(w, " (%s)", figure_outcome(-1, f->term_signal, 0, word));
        if (f && (f->failure.target[0] || f->failure.first[0])) {
                dw_puts(w, " |\n| failed | ");
                report_md_escape(w, f->failure.target, strlen(f->failure.target));
                if (f->failure.target[0])
                        dw_printf(w, " (%s)", f->failure.tool);
                for (int i = 0; i < 2; i++) {
                        const char *e = i ? f->failure.last : f->failure.first;

                        if (!e[0] || (i && f->failure.errors < 2))
                                continue;
                        dw_puts(w, "<br>");
                        report_md_escape(w, e, strlen(e));
                }
        }
        if (ri->guard.on)
                dw_printf(w, " |\n| memory guard | held %llu of %llu compiles back, %s in all",
                          (unsigned long long)ri->guard.held, (unsigned long long)ri->guard.units,
                          DURATION_STR(ri->guard.held_s));
        dw_printf(w, " |\n| duration | %s |\n| samples | %llu |\n\n",
                  DURATION_STR(f ? f->duration_s : NAN), (unsigned long long)m->summary->samples);
}

/* The peaks of the summary that were seen. */
static void md_peaks(struct dwriter *w, const struct summary *s)
{
        const struct {
                const char *what;
                const struct summary_point *p;
                int prec;   /* a plain number's decimals */
                double mib; /* a size: MiB per unit of the value (fmt_size_mib); 0: a number */
        } all[] = {
            {"host memory used", &s->mem_used_peak, 0, 1},
            {"host memory available, least", &s->mem_avail_min, 0, 1},
            {"build memory, kernel peak", &s->build.mem_peak, 0, 1},
            {"build anonymous memory", &s->build.mem_anon_peak, 0, 1},
            {"swap used", &s->swap_used_peak, 0, 1},
            {"disk available, least", &s->disk_avail_min, 0, 1024},
            {"CPU busy (%)", &s->cpu_pct_peak, 1, 0},
            {"load (1 min)", &s->load1_peak, 2, 0},
            {"compilers in flight", &s->compilers_peak, 0, 0},
        };
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
                const struct summary_point *p = all[i].p;

                if (!p->set || isnan(p->value))
                        continue;
                dw_puts(w,
                        n++ ? ""
                            : "### Peaks\n\n| figure | value | at | stage | context | running |\n"
                              "| --- | ---: | ---: | --- | --- | --- |\n");
                dw_printf(w, "| %s |", all[i].what);
                if (all[i].mib > 0)
                        dw_printf(w, " %s |", SIZE_STR(p->value * all[i].mib));
                else
                        dw_printf(w, " %.*f |", all[i].prec, p->value);
                dw_printf(w, " %s |", DURATION_STR(p->elapsed_s));
                md_cell_str(w, p->stage);
                md_cell_str(w, p->context);
                md_cell_str(w, p->running);
                dw_puts(w, "\n");
        }
        dw_puts(w, n ? "\n" : "");
}

/* A whole number cell, "–" when unknown. */
static void cell_num(struct dwriter *w, const struct report_table_fmt *fmt, bool set, double v,
                     const char *suffix)
{
        dw_puts(w, fmt->num_open);
        if (set && !isnan(v))
                dw_printf(w, "%.0f%s", v, suffix);
        else
                dw_puts(w, "–");
        dw_puts(w, fmt->cell_close);
}

void report_targets_table(struct dwriter *w, const struct run_facts *f,
                          const struct report_table_fmt *fmt)
{
        if (!f || !f->n)
                return;
        dw_puts(w, fmt->head);
        for (size_t i = 0; i < f->n; i++) {
                const struct target_fact *t = &f->t[i];

                dw_puts(w, fmt->row_open);
                dw_puts(w, fmt->text_open);
                fmt->escape(w, t->name, strlen(t->name));
                dw_printf(w, "%s%s%s%s%s%s", fmt->cell_close, fmt->text_open,
                          t->success == TARGET_BUILT    ? "built"
                          : t->success == TARGET_FAILED ? "failed"
                                                        : "unknown",
                          fmt->cell_close, fmt->num_open, DURATION_STR(t->duration_s));
                dw_puts(w, fmt->cell_close);
                cell_num(w, fmt, t->steps_set, t->steps, "");
                cell_num(w, fmt, t->steps_set, t->cached, "");
                cell_num(w, fmt, t->steps_set, t->cache_ratio * 100, "%");
                cell_num(w, fmt, t->cc.set, (double)t->cc.hits, "");
                cell_num(w, fmt, t->cc.set, (double)t->cc.misses, "");
                dw_puts(w, fmt->row_close);
        }
        dw_puts(w, fmt->tail);
}

static const struct report_table_fmt md_targets = {
    .head = "### Targets\n\n| target | result | duration | steps | cached | ratio | cache hits | "
            "cache misses |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    .row_open = "|",
    .text_open = " ",
    .num_open = " ",
    .cell_close = " |",
    .row_close = "\n",
    .tail = "\n",
    .escape = report_md_escape,
};

/* The summary text in a fence longer than any backtick run in it. */
static void md_summary_text(struct dwriter *w, const struct run_model *m)
{
        struct dbuf txt = DBUF_INIT, clean = DBUF_INIT;
        size_t run = 0, longest = 0;

        if (render_summary_text(m->summary, m->run, &txt) < 0 ||
            report_clean_text(&clean, txt.p ? txt.p : "", txt.len) < 0) {
                dw_check(w, -ENOMEM);
                goto out;
        }
        for (size_t i = 0; i < clean.len; i++) {
                run = clean.p[i] == '`' ? run + 1 : 0;
                longest = MAX(longest, run);
        }
        dw_puts(w, "<details><summary>The summary (facts and readings)</summary>\n\n");
        for (size_t i = 0; i < MAX(longest + 1, 3); i++)
                dw_puts(w, "`");
        dw_puts(w, "text\n");
        dw_append(w, clean.p ? clean.p : "", clean.len);
        dw_puts(w, "\n");
        for (size_t i = 0; i < MAX(longest + 1, 3); i++)
                dw_puts(w, "`");
        dw_puts(w, "\n</details>\n\n");
out:
        dbuf_release(&txt);
        dbuf_release(&clean);
}

int report_render_markdown(const struct run_model *m, const char *const *files, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);

        md_facts(&w, m);
        report_baseline_md(&w, m->summary);
        md_summary_text(&w, m);
        report_targets_table(&w, m->facts, &md_targets);
        md_peaks(&w, m->summary);
        if (files && files[0]) {
                dw_puts(&w, "### Artifacts\n\n");
                for (size_t i = 0; files[i]; i++) {
                        dw_puts(&w, "- ");
                        report_md_escape(&w, files[i], strlen(files[i]));
                        dw_puts(&w, "\n");
                }
                dw_puts(&w, "\n");
        }
        return w.err;
}

int report_gh_warnings(const struct summary *s, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        char rule[160];

        summary_near_oom_rule(s, rule, sizeof(rule));
        if (s->near_oom_samples)
                dw_printf(&w,
                          "::warning title=buildtel near-OOM::near-OOM (%s) in %llu samples, first "
                          "at %s\n",
                          rule, (unsigned long long)s->near_oom_samples,
                          DURATION_STR(s->near_oom_first.elapsed_s));
        if (s->low_disk_samples)
                dw_printf(&w,
                          "::warning title=buildtel low disk::disk available fell below %s "
                          "(least %s at %s)\n",
                          SIZE_STR(s->cfg.low_disk_gb * 1024),
                          SIZE_STR(s->disk_avail_min.value * 1024),
                          DURATION_STR(s->disk_avail_min.elapsed_s));
        for (size_t i = 0; i < MIN(s->build.noom, (uint64_t)SUMMARY_OOM_MAX); i++) {
                const struct summary_oom *o = &s->build.oom[i];
                struct dbuf lab = DBUF_INIT;

                /* a workflow command ends at the newline and decodes %XX: in the
                 * victim's name '%' and line ends become '?' */
                dw_check(&w, run_append_utf8_lossy(&lab, o->victim.label, strlen(o->victim.label),
                                                   true));
                for (size_t k = 0; k < lab.len && dw_ok(&w); k++)
                        if (lab.p[k] == '%' || lab.p[k] == '\r' || lab.p[k] == '\n')
                                lab.p[k] = '?';
                dw_printf(&w, "::warning title=buildtel OOM kill::the kernel killed %s at %s\n",
                          lab.len ? lab.p : "a process of the build", DURATION_STR(o->elapsed_s));
                dbuf_release(&lab);
        }
        return w.err;
}
