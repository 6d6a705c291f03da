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

static int render_target_text(const struct target *t, const struct target_fact *f,
                              struct dbuf *name, struct dbuf *out)
{
        int e;

        dbuf_reset(name);
        e = run_append_utf8_lossy(name, f->name, strlen(f->name), true);
        if (e >= 0)
                e = dbuf_printf(out, "buildtel: target %s: %.1fs", name->p ? name->p : "",
                                isnan(f->duration_s) ? 0.0 : f->duration_s);
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
        struct dbuf name = DBUF_INIT;
        int e = 0;

        for (size_t i = 0; e >= 0 && i < f->n; i++)
                e = render_target_text(ts && i < ts->n ? &ts->t[i] : NULL, &f->t[i], &name, out);
        for (size_t i = 0; ts && e >= 0 && i < ts->nfailed; i++) {
                const struct failed_step *fs = &ts->failed[i];

                dbuf_reset(&name);
                e = run_append_utf8_lossy(&name, fs->name, strlen(fs->name), true);
                if (e >= 0)
                        e = dbuf_printf(out, "buildtel: failed step: %s\n", name.p ? name.p : "");
        }
        if (ts && e >= 0 && ts->ninja_total)
                e = dbuf_printf(out, "buildtel: ninja progress %" PRIu64 "/%" PRIu64 "\n",
                                ts->ninja_done, ts->ninja_total);
        if (ts && e >= 0 && ts->make_pct >= 0)
                e = dbuf_printf(out, "buildtel: make progress %d%%\n", ts->make_pct);
        if (ts && e >= 0 && ts->ninja_log_set)
                e = dbuf_printf(out, "buildtel: .ninja_log: %" PRIu64 " edges this run%s\n",
                                ts->ninja_edges, ts->nslow ? ", slowest:" : "");
        for (size_t i = 0; ts && e >= 0 && i < ts->nslow; i++) {
                dbuf_reset(&name);
                e = run_append_utf8_lossy(&name, ts->slow[i].output, strlen(ts->slow[i].output),
                                          true);
                if (e >= 0)
                        e = dbuf_printf(out, "buildtel:   %8.3fs  %s\n",
                                        (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) /
                                            1000.0,
                                        name.p ? name.p : "");
        }
        dbuf_release(&name);
        return e < 0 ? -ENOMEM : 0;
}
