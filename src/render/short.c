/* SPDX-License-Identifier: MIT */
/* The short text of a run on the terminal (short.h). */
#include "render/short.h"

#include <math.h>
#include <string.h>

#include "model/baseline.h"
#include "model/targets.h"
#include "render/steps.h"
#include "render/targets.h"
#include "render/summary.h"

int short_render(const struct run_model *m, struct dbuf *out)
{
        int e = render_summary_short(m->summary, m->run, out);

        if (e >= 0)
                e = targets_render_text(m->targets, m->facts, out);
        if (e >= 0)
                e = steps_render_short(m->targets, out);
        if (e >= 0 && m->summary->baseline)
                e = baseline_render_short(m->summary->baseline, out);
        return e < 0 ? e : 0;
}

static const char *victim_words(const struct summary_oom *e)
{
        return strcmp(e->victim_source, "kernel") == 0 ? "victim (the kernel's report)"
               : strcmp(e->victim_source, "the build") == 0
                   ? "victim (the build's own process, killed by SIGKILL)"
                   : "likely victim (last seen)";
}

int short_render_oom(const struct summary_build *b, struct dbuf *out)
{
        const struct summary_oom *e;

        if (b->noom > SUMMARY_OOM_MAX)
                return dbuf_printf(out, "OOM kill in the build's cgroup (%.0f so far)",
                                   b->oom_kills);
        e = &b->oom[b->noom - 1];
        if (e->victim.label[0] && isfinite(e->victim.mb))
                return dbuf_printf(out,
                                   "OOM kill in the build's cgroup (%.0f so far); %s: %s "
                                   "(pid %.0f, %.1f MiB)",
                                   e->kills, victim_words(e), e->victim.label, e->victim.pid,
                                   e->victim.mb);
        if (e->victim.label[0])
                return dbuf_printf(out,
                                   "OOM kill in the build's cgroup (%.0f so far); %s: %s (pid %.0f)",
                                   e->kills, victim_words(e), e->victim.label, e->victim.pid);
        return dbuf_printf(out, "OOM kill in the build's cgroup (%.0f so far)", e->kills);
}

int short_render_execs(const struct exec_cover *c, struct dbuf *out)
{
        if (!c->runs || c->measured >= c->runs)
                return 0;
        if (c->measured == 0 && !c->root)
                return dbuf_printf(out,
                                   "BuildKit ran the %u RUN step(s) in the daemon's cgroups, "
                                   "which only root can read: the build's figures cover the "
                                   "docker client alone",
                                   c->runs);
        if (c->measured == 0 && c->driver[0] && strcmp(c->driver, "docker") != 0)
                return dbuf_printf(out,
                                   "the %s driver runs BuildKit out of reach (a container or "
                                   "another host): its %u RUN step(s) were not measured; the "
                                   "build's figures cover the docker client alone",
                                   c->driver, c->runs);
        if (c->measured == 0)
                return dbuf_printf(out,
                                   "no exec cgroup of this build's %u RUN step(s) was found on "
                                   "this machine (a remote daemon, one in a VM, or steps shorter "
                                   "than %.1f s): the build's figures cover the docker client "
                                   "alone",
                                   c->runs, c->poll_s);
        return dbuf_printf(out,
                           "%u of %u RUN steps were measured inside BuildKit (the others ended "
                           "between two reads); the build's figures include those %u",
                           c->measured, c->runs, c->measured);
}
