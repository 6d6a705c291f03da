/* SPDX-License-Identifier: MIT */
#include "render/targets.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"

static void render_cc(struct dwriter *w, const char *what, const struct cc_counts *c, bool guess)
{
        double ratio;

        if (!c->set)
                return;
        ratio = figure_hit_ratio(c->hits, c->misses);
        dw_printf(w, ", %s %" PRIu64 " hits / %" PRIu64 " misses (%.1f%%)%s", what, c->hits,
                  c->misses, isnan(ratio) ? 0.0 : 100.0 * ratio,
                  guess ? " (a guess: no marker step found)" : "");
}

/* The build's text s made safe for a terminal, between before and after. */
static void put_clean(struct dwriter *w, const char *before, const char *s, const char *after)
{
        dw_puts(w, before);
        if (dw_ok(w))
                dw_check(w, run_append_utf8_lossy(w->b, s, strlen(s), true));
        dw_puts(w, after);
}

static void render_target_text(struct dwriter *w, const struct target *t,
                               const struct target_fact *f)
{
        put_clean(w, "buildtel: target ", f->name, "");
        dw_printf(w, ": %.1fs", isnan(f->duration_s) ? 0.0 : f->duration_s);
        if (f->steps_set)
                dw_printf(w, ", %" PRIu32 " steps, %" PRIu32 " cached", f->steps, f->cached);
        if (f->failed)
                dw_printf(w, ", %" PRIu32 " failed", f->failed);
        render_cc(w, "sccache", &f->sccache, f->sccache_guess);
        render_cc(w, "ccache", &f->ccache, false);
        if (t && t->history_set)
                dw_printf(w, " (buildx history: %s)", t->history_status);
        dw_puts(w, "\n");
}

int targets_render_text(const struct targets *ts, const struct run_facts *f, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);

        for (size_t i = 0; i < f->n; i++)
                render_target_text(&w, ts && i < ts->n ? &ts->t[i] : NULL, &f->t[i]);
        if (!ts)
                return w.err < 0 ? -ENOMEM : 0;
        for (size_t i = 0; i < ts->nfailed; i++)
                put_clean(&w, "buildtel: failed step: ", ts->failed[i].name, "\n");
        if (ts->ninja_total)
                dw_printf(&w, "buildtel: ninja progress %" PRIu64 "/%" PRIu64 "\n", ts->ninja_done,
                          ts->ninja_total);
        if (ts->make_pct >= 0)
                dw_printf(&w, "buildtel: make progress %d%%\n", ts->make_pct);
        if (ts->ninja_log_set)
                dw_printf(&w, "buildtel: .ninja_log: %" PRIu64 " edges this run%s\n",
                          ts->ninja_edges, ts->nslow ? ", slowest:" : "");
        for (size_t i = 0; i < ts->nslow; i++) {
                dw_printf(&w, "buildtel:   %8.3fs  ",
                          (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) / 1000.0);
                put_clean(&w, "", ts->slow[i].output, "\n");
        }
        return w.err < 0 ? -ENOMEM : 0;
}
