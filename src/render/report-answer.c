/* SPDX-License-Identifier: MIT */
/* The report's first screen (issue 26, report.h): only formatted, every
 * figure is the model's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/jobs.h"
#include "model/unitname.h"
#include "model/units.h"
#include "render/report.h"
#include "render/summary.h"
#include "util/macro.h"
#include "util/util.h"

static void card_open(struct dwriter *w, const char *id, const char *key, bool bad)
{
        dw_printf(w, "<div class=\"card\" id=\"%s\"><div class=\"k\">%s</div><div class=\"v%s\">",
                  id, key, bad ? " bad" : "");
}

static void card_result(struct dwriter *w, const struct run_model *m)
{
        const struct run_facts *f = m->facts;
        int o = f ? f->outcome : RUN_OUTCOME_UNKNOWN;
        static const char *const names[] = {"unknown", "succeeded", "failed", "cancelled"};
        char word[FIGURE_OUTCOME_LEN];
        bool oom = f && strcmp(figure_outcome(f->exit_code, f->term_signal,
                                              m->summary->build.oom_kills, word),
                               "OOM-killed") == 0;

        card_open(w, "a-result", "Result", o == RUN_OUTCOME_FAILURE || o == RUN_OUTCOME_CANCELLED);
        dw_puts(w, oom ? word : o >= 0 && o < (int)ARRAY_SIZE(names) ? names[o] : "unknown");
        dw_printf(w, "</div><div class=\"d\">in %s", DURATION_STR(f ? f->duration_s : NAN));
        if (f && f->exit_code >= 0)
                dw_printf(w, ", exit %d", f->exit_code);
        if (f && f->term_signal)
                dw_printf(w, ", %s", figure_outcome(-1, f->term_signal, 0, word));
        if (f && f->failure.target[0]) {
                dw_puts(w, "</div><div class=\"d\">failed: ");
                report_html_esc(w, f->failure.target);
                dw_printf(w, " (%s)", f->failure.tool);
        }
        for (int i = 0; f && i < 2; i++) {
                const char *e = i ? f->failure.last : f->failure.first;

                if (!e[0] || (i && f->failure.errors < 2))
                        continue;
                dw_puts(w, "</div><div class=\"d\"><code>");
                report_html_esc(w, e);
                dw_puts(w, "</code>");
        }
        dw_puts(w, "</div></div>");
}

/* The unit at a point: the largest of those in flight (the running
 * column lists them largest first), else the largest process. */
static void put_first_word(struct dwriter *w, const char *s)
{
        const char *sp = strchr(s, ' ');

        report_html_escape(w, s, sp ? (size_t)(sp - s) : strlen(s));
}

/* The working memory (anon) first, what the OOM killer weighs and a
 * runner is sized by; then the kernel's peak with its page cache. */
static void card_peak(struct dwriter *w, const struct summary *s)
{
        const struct summary_build *b = &s->build;
        const struct summary_point *k = b->mem_peak.set ? &b->mem_peak : &b->mem_cur_peak;
        const struct summary_point *p = b->mem_anon_peak.value > 0 ? &b->mem_anon_peak : k;

        card_open(w, "a-peak", p == k ? "Build memory, peak" : "Working memory, peak", false);
        if (!p->set) {
                dw_puts(w, "unknown</div><div class=\"d\">");
                if (s->mem_used_peak.set)
                        dw_printf(w, "the host's peak used: %s", SIZE_STR(s->mem_used_peak.value));
                dw_puts(w, "</div></div>");
                return;
        }
        dw_printf(w, "%s</div><div class=\"d\">at +%s", SIZE_STR(p->value),
                  DURATION_STR(p->elapsed_s));
        report_html_opt(w, ", stage ", p->stage);
        report_html_opt(w, ", step ", p->context);
        if (p->running[0]) {
                dw_puts(w, ", unit ");
                put_first_word(w, p->running);
        } else if (p == k && b->mem_peak_proc.label[0]) {
                dw_puts(w, ", largest process ");
                report_html_esc(w, b->mem_peak_proc.label);
        }
        if (p != k && k->set) {
                dw_printf(w, "; the kernel's peak %s", SIZE_STR(k->value));
                if (isfinite(k->aux) && k->aux >= 0.05 * k->value)
                        dw_printf(w, ", %s of it page cache", SIZE_STR(k->aux));
        }
        dw_puts(w, "</div></div>");
}

static void card_oom(struct dwriter *w, const struct run_model *m)
{
        const struct summary *s = m->summary;
        double kills = s->build.oom_kills, iv = m->run->interval;
        char rule[160];

        summary_near_oom_rule(s, rule, sizeof(rule));
        card_open(w, "a-oom", "OOM kills", kills > 0 || s->near_oom_samples);
        if (isfinite(kills))
                dw_printf(w, "%.0f", kills);
        else
                dw_puts(w, "–");
        dw_puts(w, "</div><div class=\"d\">");
        if (s->near_oom_samples)
                dw_printf(w, "near-OOM for about %s (%llu samples with ",
                          DURATION_STR((double)s->near_oom_samples * (iv > 0 ? iv : 1)),
                          (unsigned long long)s->near_oom_samples);
        else
                dw_puts(w, "never near OOM (");
        report_html_esc(w, rule);
        dw_puts(w, ")");
        if (s->mem_avail_min.set)
                dw_printf(w, "; least available %s", SIZE_STR(s->mem_avail_min.value));
        if (m->run->guard.on) {
                const struct run_guard *g = &m->run->guard;

                dw_printf(w, "; the memory guard held %llu of %llu compiles back",
                          (unsigned long long)g->held, (unsigned long long)g->units);
                if (g->held)
                        dw_printf(w, ", %s in all", DURATION_STR(g->held_s));
        }
        dw_puts(w, "</div></div>");
}

static void card_disk(struct dwriter *w, const struct summary *s)
{
        const struct summary_point *p = &s->disk_avail_min;

        if (!p->set)
                return;
        card_open(w, "a-disk", "Disk, least available", s->low_disk_samples > 0);
        dw_printf(w, "%s</div><div class=\"d\">at +%s", SIZE_STR(p->value * 1024),
                  DURATION_STR(p->elapsed_s));
        report_html_opt(w, ", stage ", p->stage);
        dw_printf(w, " (low below %.4g GiB)</div></div>", s->cfg.low_disk_gb);
}

static void card_caches(struct dwriter *w, const struct run_model *m)
{
        const struct run_facts *f = m->facts;
        uint64_t hits = 0, misses = 0;
        bool cc = false;

        if (f && f->steps_set && f->steps) {
                card_open(w, "a-layers", "Layer cache", false);
                dw_printf(w, "%.0f %%</div><div class=\"d\">%u of %u steps cached</div></div>",
                          100.0 * figure_cached_ratio(f->steps, f->cached), f->cached, f->steps);
        }
        for (int k = 0; m->targets && k < CC_TOOLS; k++) {
                const struct cc_blocks *c = targets_cc_blocks(m->targets, (enum cc_tool)k);
                uint64_t dh, dm;

                if (!c)
                        continue;
                (void)figure_cc_delta(c->first.hits, c->first.misses, c->last.hits, c->last.misses,
                                      &dh, &dm);
                hits += dh;
                misses += dm;
                cc = true;
        }
        if (!cc || hits + misses == 0)
                return;
        card_open(w, "a-cc", "Compiler cache", false);
        dw_printf(w, "%.0f %%</div><div class=\"d\">%llu hits, %llu misses</div></div>",
                  100.0 * figure_hit_ratio(hits, misses), (unsigned long long)hits,
                  (unsigned long long)misses);
}

#define SLOWEST_SHOWN 5

/* The SLOWEST_SHOWN largest of v[0..n) by key, indices into idx. */
static size_t top_by(const double *v, size_t n, size_t idx[static SLOWEST_SHOWN])
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                size_t at = k;

                if (!isfinite(v[i]))
                        continue;
                while (at > 0 && v[i] > v[idx[at - 1]])
                        at--;
                if (at >= SLOWEST_SHOWN)
                        continue;
                memmove(&idx[at + 1], &idx[at], (MIN(k, (size_t)SLOWEST_SHOWN - 1) - at) * sizeof(*idx));
                idx[at] = i;
                k = MIN(k + 1, (size_t)SLOWEST_SHOWN);
        }
        return k;
}

static void slowest_targets(struct dwriter *w, const struct run_facts *f)
{
        double v[TARGETS_MAX];
        size_t idx[SLOWEST_SHOWN], k;

        for (size_t i = 0; i < f->n; i++)
                v[i] = f->t[i].duration_s;
        k = top_by(v, f->n, idx);
        if (!k)
                return;
        dw_puts(w, "<h3>Slowest targets</h3><ol class=\"slow\" id=\"slowest\">");
        for (size_t i = 0; i < k; i++) {
                dw_puts(w, "<li>");
                report_html_esc(w, f->t[idx[i]].name);
                dw_printf(w, " %s%s</li>", DURATION_STR(v[idx[i]]),
                          f->t[idx[i]].success == TARGET_FAILED ? " (failed)" : "");
        }
        dw_puts(w, "</ol>");
}

static void slowest_edges(struct dwriter *w, const struct targets *ts)
{
        dw_puts(w, "<h3>Slowest ninja edges</h3><ol class=\"slow\" id=\"slowest\">");
        for (size_t i = 0; i < MIN(ts->nslow, (size_t)SLOWEST_SHOWN); i++) {
                dw_puts(w, "<li>");
                report_html_esc(w, ts->slow[i].output);
                dw_printf(w, " %s</li>",
                          DURATION_STR((double)(ts->slow[i].end_ms - ts->slow[i].start_ms) / 1000));
        }
        dw_puts(w, "</ol>");
}

static void slowest_units(struct dwriter *w, const struct units *u, const char *root)
{
        size_t n, idx[SLOWEST_SHOWN], k;
        const struct unit *rows = units_rows(u, &n);
        double *v = malloc(MAX(n, (size_t)1) * sizeof(*v));
        char shown[UNITNAME_SHORT_MAX + 1];
        struct unitnames un;

        if (!v) {
                dw_check(w, -ENOMEM);
                return;
        }
        for (size_t i = 0; i < n; i++)
                v[i] = rows[i].last_s - rows[i].first_s;
        k = top_by(v, n, idx);
        unitnames_init(&un, rows, n, root);
        if (k)
                dw_puts(w, "<h3>Longest units (first to last scan)</h3><ol class=\"slow\" "
                           "id=\"slowest\">");
        for (size_t i = 0; i < k; i++) {
                dw_puts(w, "<li title=\"");
                report_html_esc(w, rows[idx[i]].path[0] ? rows[idx[i]].path : rows[idx[i]].name);
                dw_puts(w, "\">");
                report_html_esc(w, rows[idx[i]].tool);
                dw_puts(w, " ");
                report_html_esc(w, unitnames_short(&un, &rows[idx[i]], shown, sizeof(shown)));
                dw_printf(w, " %s</li>", DURATION_STR(v[idx[i]]));
        }
        if (k)
                dw_puts(w, "</ol>");
        free(v);
}

static void slowest(struct dwriter *w, const struct run_model *m)
{
        bool timed = false;

        for (size_t i = 0; m->facts && i < m->facts->n; i++)
                timed |= isfinite(m->facts->t[i].duration_s);
        if (timed && (m->facts->n > 1 || !m->targets || !m->targets->nslow))
                slowest_targets(w, m->facts);
        else if (m->targets && m->targets->nslow)
                slowest_edges(w, m->targets);
        else if (m->units && units_count(m->units))
                slowest_units(w, m->units, m->run ? m->run->cwd : NULL);
}

/* The -j and parallelism readings (model/jobs.c), escaped. */
static void readings(struct dwriter *w, const struct run_model *m)
{
        const struct summary *s = m->summary;
        struct dbuf t = DBUF_INIT, p = DBUF_INIT;
        struct jobs_reading j;
        struct par_reading pr;

        if (m->units && jobs_read(m->units, summary_jobs_mem_mb(s), m->run->ncpu,
                                  (size_t)s->running_peak, &j) == 0)
                dw_check(w, jobs_render(&j, &t));
        if (par_read(s, m->run->ncpu, &pr) == 0 && pr.worth)
                dw_check(w, par_render(&pr, &p));
        if (t.len || p.len)
                dw_puts(w, "<h3>Parallelism and -j</h3><ul class=\"rd\">");
        if (t.len) {
                dw_puts(w, "<li id=\"r-jobs\">-j: ");
                report_html_escape(w, t.p, t.len);
                dw_puts(w, "</li>");
        }
        if (p.len) {
                dw_puts(w, "<li id=\"r-par\">");
                report_html_escape(w, p.p, p.len);
                dw_puts(w, "</li>");
        }
        if (t.len || p.len)
                dw_puts(w, "</ul>");
        dbuf_release(&t);
        dbuf_release(&p);
}

void report_answer(struct dwriter *w, const struct run_model *m)
{
        dw_puts(w, "<section id=\"answer\"><div class=\"cards\">");
        card_result(w, m);
        card_peak(w, m->summary);
        card_oom(w, m);
        card_disk(w, m->summary);
        card_caches(w, m);
        dw_puts(w, "</div>");
        /* the findings against the usual (runs across time) go here */
        dw_puts(w, "<div id=\"findings\"></div>");
        slowest(w, m);
        readings(w, m);
        dw_puts(w, "</section>\n");
}
