/* SPDX-License-Identifier: MIT */
/* The short text of a run on the terminal (short.h). */
#include "render/short.h"

#include <math.h>
#include <string.h>

#include "model/baseline.h"
#include "render/steps.h"
#include "render/targets.h"
#include "render/summary.h"
#include "util/macro.h"
#include "util/util.h"

int short_render(const struct run_model *m, struct dbuf *out)
{
        int e = render_summary_short(m->summary, m->run, out);

        if (e >= 0)
                e = targets_render_text(m->targets, m->facts, out);
        if (e >= 0)
                e = steps_render_short(m->targets, out);
        if (e >= 0 && m->summary->baseline)
                e = render_baseline_short(m->summary->baseline, out);
        return e < 0 ? e : 0;
}

int short_render_oom(const struct summary_build *b, struct dbuf *out)
{
        const struct summary_oom *e = b->noom > SUMMARY_OOM_MAX ? NULL : &b->oom[b->noom - 1];
        struct dwriter w = DWRITER_INIT(out);

        dw_printf(&w, "OOM kill in the build's cgroup (%.0f so far)", e ? e->kills : b->oom_kills);
        if (!e || !e->victim.label[0])
                return w.err;
        /* what is known of the victim: its pid, its size */
        dw_printf(&w, "; %s: %s", summary_victim_words(e), e->victim.label);
        if (isfinite(e->victim.pid) && isfinite(e->victim.mb))
                dw_printf(&w, " (pid %.0f, %s)", e->victim.pid, SIZE_STR(e->victim.mb));
        else if (isfinite(e->victim.pid))
                dw_printf(&w, " (pid %.0f)", e->victim.pid);
        else if (isfinite(e->victim.mb))
                dw_printf(&w, " (%s)", SIZE_STR(e->victim.mb));
        return w.err;
}

int short_render_execs(const struct exec_cover *c, struct dbuf *out)
{
        int e;

        if (!c->runs || c->measured >= c->runs)
                return 0;
        if (c->measured == 0 && c->driver[0] && strcmp(c->driver, "docker") != 0)
                e = dbuf_printf(out,
                                "the builder \"%s\" (%s driver) runs BuildKit out of reach (a "
                                "container or another host): its %u RUN step(s) were not "
                                "measured; the build's figures cover the docker client alone",
                                c->builder[0] ? c->builder : "?", c->driver, c->runs);
        else if (c->measured == 0)
                e = dbuf_printf(out,
                                "no exec cgroup of this build's %u RUN step(s) was found on "
                                "this machine (a remote daemon, one in a VM, or steps shorter "
                                "than %.1f s): the build's figures cover the docker client "
                                "alone",
                                c->runs, c->poll_s);
        else
                e = dbuf_printf(out,
                                "%u of %u RUN steps were measured inside BuildKit (the others "
                                "ended between two reads); the build's figures include those %u",
                                c->measured, c->runs, c->measured);
        if (e >= 0 && c->recorded)
                e = dbuf_printf(out, "; BuildKit's own record gave the figures of %u of the others",
                                c->recorded);
        return e;
}

/* ---- the run against its job's usual ---- */

static bool figure_is(const struct baseline_finding *f, const char *suffix)
{
        size_t n = strlen(f->figure), k = strlen(suffix);

        return n > k && strcmp(f->figure + n - k, suffix) == 0;
}

const struct baseline_finding *render_baseline_run(const struct baseline *b, const char *fig)
{
        for (size_t i = 0; b && i < b->n; i++)
                if (!b->f[i].target[0] && strcmp(b->f[i].figure, fig) == 0)
                        return &b->f[i];
        return NULL;
}

int render_baseline_value(const struct baseline_finding *f, double v, struct dbuf *out)
{
        if (!isfinite(v))
                return dbuf_puts(out, "?");
        if (figure_is(f, "_ratio"))
                return dbuf_printf(out, "%.0f %%", v * 100);
        if (figure_is(f, "_s"))
                return dbuf_puts(out, DURATION_STR(v));
        if (strcmp(f->figure, "oom_kills") == 0)
                return dbuf_printf(out, "%.0f", v);
        return dbuf_puts(out, SIZE_STR(v));
}

/* "slower than usual", "layer cache of X", "unit X bigger"... */
static void put_what(struct dwriter *w, const struct baseline_finding *f)
{
        bool worse = f->st.verdict == BASELINE_REGRESSION;
        static const struct {
                const char *fig, *pre, *worse, *better;
        } words[] = {
            {"duration_s", "", "slower than usual", "faster than usual"},
            {"cpu_s", "", "more CPU time than usual", "less CPU time than usual"},
            {"mem_anon_peak_mb", "", "more anon memory than usual", "less anon memory than usual"},
            {"mem_peak_mb", "", "more memory than usual", "less memory than usual"},
            {"oom_kills", "", "OOM kills", "fewer OOM kills"},
            {"cc_hit_ratio", "", "compiler-cache hits", "compiler-cache hits"},
            {"target_duration_s", "target ", " slower", " faster"},
            {"target_cache_ratio", "layer cache of ", "", ""},
            {"unit_peak_mb", "unit ", " bigger", " smaller"},
            {"step_duration_s", "step ", " slower", " faster"},
            {"step_mem_peak_mb", "step ", " bigger", " smaller"},
        };

        for (size_t i = 0; i < ARRAY_SIZE(words); i++)
                if (strcmp(words[i].fig, f->figure) == 0) {
                        dw_printf(w, "%s%s%s", words[i].pre, f->target,
                                  worse ? words[i].worse : words[i].better);
                        return;
                }
        dw_puts(w, f->figure);
}

static void put_finding(struct dwriter *w, const struct baseline *b,
                        const struct baseline_finding *f, bool first, bool cause)
{
        dw_puts(w, first ? "" : "; ");
        put_what(w, f);
        for (int i = 0; i < 2 && dw_ok(w); i++) {
                dw_puts(w, i ? " against " : ": ");
                dw_check(w, render_baseline_value(f, i ? f->st.usual : f->value, w->b));
        }
        if (isfinite(f->st.change) && first)
                dw_printf(w, " (%+.0f %%, last %zu runs)", f->st.change * 100, b->runs);
        else if (isfinite(f->st.change))
                dw_printf(w, " (%+.0f %%)", f->st.change * 100);
        if (cause && f->cause[0])
                dw_printf(w, "; %s", f->cause);
}

/* The second finding of the short line: a flagged cache ratio when there
 * is one (the usual cause), else the next flagged finding. */
static const struct baseline_finding *second_of(const struct baseline *b,
                                                const struct baseline_finding *first)
{
        const struct baseline_finding *next = NULL;

        for (size_t i = 0; i < b->n; i++) {
                const struct baseline_finding *f = &b->f[i];

                if (f == first || !baseline_is_flag(f->st.verdict))
                        continue;
                if (figure_is(f, "_ratio"))
                        return f;
                if (!next)
                        next = f;
        }
        return next;
}

int render_baseline_short(const struct baseline *b, struct dbuf *out)
{
        const struct baseline_finding *first = NULL, *second;
        size_t flagged = baseline_flagged(b);
        struct dwriter w = DWRITER_INIT(out);

        /* too few earlier runs for a usual: nothing that changes a
         * decision (summary.json and the report say how many there were) */
        if (b->runs < BASELINE_MIN_RUNS)
                return 0;
        for (size_t i = 0; i < b->n && !first; i++)
                if (baseline_is_flag(b->f[i].st.verdict))
                        first = &b->f[i];
        if (!first)
                return 0;
        second = second_of(b, first);
        /* a cache ratio shown second is the first's cause: not twice */
        dw_puts(&w, "buildtel: ");
        put_finding(&w, b, first, true, !(second && figure_is(second, "_ratio")));
        if (second)
                put_finding(&w, b, second, false, true);
        if (flagged > 1 + (second != NULL))
                dw_printf(&w, "; %zu more in the summary", flagged - 1 - (second != NULL));
        dw_puts(&w, "\n");
        return w.err;
}
