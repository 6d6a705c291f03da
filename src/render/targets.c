/* SPDX-License-Identifier: MIT */
#include "render/targets.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"

static int render_cc(struct dbuf *out, const char *what, const struct cc_counts *c, bool guess)
{
        double ratio;

        if (!c->set)
                return 0;
        ratio = figure_hit_ratio(c->hits, c->misses);
        return dbuf_printf(out, ", %s %" PRIu64 " hits / %" PRIu64 " misses (%.1f%%)%s", what,
                           c->hits, c->misses, isnan(ratio) ? 0.0 : 100.0 * ratio,
                           guess ? " (a guess: no marker step found)" : "");
}

/* The build's text s made safe for a terminal, between before and after. */
static int put_clean(struct dbuf *out, const char *before, const char *s, const char *after)
{
        int e = dbuf_puts(out, before);

        if (e >= 0)
                e = run_append_utf8_lossy(out, s, strlen(s), true);
        return e >= 0 ? dbuf_puts(out, after) : e;
}

static int render_target_text(const struct target *t, const struct target_fact *f,
                              struct dbuf *out)
{
        int e = put_clean(out, "buildtel: target ", f->name, "");

        if (e >= 0)
                e = dbuf_printf(out, ": %.1fs", isnan(f->duration_s) ? 0.0 : f->duration_s);
        if (e >= 0 && f->steps_set)
                e = dbuf_printf(out, ", %" PRIu32 " steps, %" PRIu32 " cached", f->steps,
                                f->cached);
        if (e >= 0 && f->failed)
                e = dbuf_printf(out, ", %" PRIu32 " failed", f->failed);
        if (e >= 0)
                e = render_cc(out, "sccache", &f->sccache, f->sccache_guess);
        if (e >= 0)
                e = render_cc(out, "ccache", &f->ccache, false);
        if (e >= 0 && t && t->history_set)
                e = dbuf_printf(out, " (buildx history: %s)", t->history_status);
        return e >= 0 ? dbuf_puts(out, "\n") : e;
}

int targets_render_text(const struct targets *ts, const struct run_facts *f, struct dbuf *out)
{
        int e = 0;

        for (size_t i = 0; e >= 0 && i < f->n; i++)
                e = render_target_text(ts && i < ts->n ? &ts->t[i] : NULL, &f->t[i], out);
        for (size_t i = 0; ts && e >= 0 && i < ts->nfailed; i++)
                e = put_clean(out, "buildtel: failed step: ", ts->failed[i].name, "\n");
        if (ts && e >= 0 && ts->ninja_total)
                e = dbuf_printf(out, "buildtel: ninja progress %" PRIu64 "/%" PRIu64 "\n",
                                ts->ninja_done, ts->ninja_total);
        if (ts && e >= 0 && ts->make_pct >= 0)
                e = dbuf_printf(out, "buildtel: make progress %d%%\n", ts->make_pct);
        if (ts && e >= 0 && ts->ninja_log_set)
                e = dbuf_printf(out, "buildtel: .ninja_log: %" PRIu64 " edges this run%s\n",
                                ts->ninja_edges, ts->nslow ? ", slowest:" : "");
        for (size_t i = 0; ts && e >= 0 && i < ts->nslow; i++) {
                e = dbuf_printf(out, "buildtel:   %8.3fs  ",
                                (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) / 1000.0);
                if (e >= 0)
                        e = put_clean(out, "", ts->slow[i].output, "\n");
        }
        return e < 0 ? -ENOMEM : 0;
}
