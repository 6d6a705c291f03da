/* SPDX-License-Identifier: MIT */
#include "render/steps.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/execs.h"
#include "model/run.h"
#include "runfiles/targetsjson.h"
#include "render/jsonw.h"
#include "render/summary.h"
#include "util/util.h"

static const char *target_of(const struct targets *ts, const struct step_fact *f)
{
        return f->target >= 0 && (size_t)f->target < ts->n ? ts->t[f->target].name : "";
}

/* name, cleaned for a terminal */
static const char *clean(struct dbuf *tmp, const char *s)
{
        dbuf_reset(tmp);
        if (run_append_utf8_lossy(tmp, s, strlen(s), true) < 0 || !tmp->p)
                return "";
        return tmp->p;
}

static void peak_line(struct dwriter *w, const struct targets *ts, struct dbuf *tmp)
{
        struct target_exec te;
        const struct step_fact *f;
        const char *tg;

        execs_target(ts->stepv, ts->nstepv, -1, &te);
        if (te.peak_step < 0)
                return;
        f = &ts->stepv[te.peak_step];
        tg = target_of(ts, f);
        dw_printf(w, "buildtel: step peak %s in %s%s%s%s", BYTES_STR(f->exec.mem_peak_bytes),
                  clean(tmp, f->name), tg[0] ? ", target " : "", tg,
                  f->exec.from_record ? " (BuildKit's record)" : "");
        if (f->exec.peak_proc[0])
                dw_printf(w, "; largest process %s %s", clean(tmp, f->exec.peak_proc),
                          BYTES_STR(f->exec.peak_proc_bytes));
        dw_puts(w, "\n");
}

static void oom_lines(struct dwriter *w, const struct targets *ts, struct dbuf *tmp)
{
        for (uint32_t i = 0; i < ts->nstepv; i++) {
                const struct step_fact *f = &ts->stepv[i];
                const char *tg = target_of(ts, f);

                if (!f->exec.set || !(f->exec.oom_kills > 0))
                        continue;
                dw_printf(w, "buildtel: OOM kill x%.0f in step %s%s%s at +%.1fs; victim %s\n",
                          f->exec.oom_kills, clean(tmp, f->name), tg[0] ? ", target " : "", tg,
                          isnan(f->exec.oom_at_s) ? 0.0 : f->exec.oom_at_s,
                          f->exec.oom_victim[0] ? f->exec.oom_victim : "unknown");
        }
}

/* The steps with figures (*ret_rec: of them, those from BuildKit's record). */
static uint32_t measured(const struct targets *ts, uint32_t *ret_rec)
{
        uint32_t n = 0;

        *ret_rec = 0;
        for (uint32_t i = 0; ts && i < ts->nstepv; i++) {
                n += ts->stepv[i].exec.set;
                *ret_rec += ts->stepv[i].exec.from_record;
        }
        return n;
}

/* The lines of the terminal and, with all, the summary.txt's. */
static int render(const struct targets *ts, bool all, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        struct dbuf tmp = DBUF_INIT;
        uint32_t rec, n = measured(ts, &rec);

        if (!n)
                return 0;
        if (all)
                dw_printf(&w, "\nBuildKit RUN steps measured in their exec cgroups: %u\n", n - rec);
        if (all && rec)
                dw_printf(&w, "BuildKit RUN steps from BuildKit's own record (marked *): %u\n", rec);
        peak_line(&w, ts, &tmp);
        oom_lines(&w, ts, &tmp);
        if (all)
                dw_puts(&w, "       cpu       peak       anon       read    written        rx "
                            "        tx  oom  step\n");
        for (uint32_t i = 0; all && i < ts->nstepv; i++) {
                const struct step_exec *x = &ts->stepv[i].exec;

                if (!x->set)
                        continue;
                dw_printf(&w, "  %8s  %9s  %9s  %9s  %9s  %9s  %9s  %3.0f  %s%s\n",
                          DURATION_STR(x->cpu_s), BYTES_STR(x->mem_peak_bytes),
                          BYTES_STR(x->anon_peak_bytes), BYTES_STR(x->io_read_bytes),
                          BYTES_STR(x->io_write_bytes), BYTES_STR(x->net_rx_bytes),
                          BYTES_STR(x->net_tx_bytes), isnan(x->oom_kills) ? 0.0 : x->oom_kills,
                          x->from_record ? "*" : "", clean(&tmp, ts->stepv[i].name));
        }
        dbuf_release(&tmp);
        return w.err < 0 ? -ENOMEM : 0;
}

int steps_render_short(const struct targets *ts, struct dbuf *out)
{
        return render(ts, false, out);
}

int steps_render_text(const struct targets *ts, struct dbuf *out)
{
        return render(ts, true, out);
}

static json_t *text_or_null(const char *s)
{
        return s[0] ? jsonw_str(s) : json_null();
}

static json_t *execs_json(const struct targets *ts)
{
        struct target_exec te;
        json_t *steps = json_array(), *o;

        execs_target(ts->stepv, ts->nstepv, -1, &te);
        for (uint32_t i = 0; steps && i < ts->nstepv; i++) {
                const struct step_fact *f = &ts->stepv[i];
                const char *tg = target_of(ts, f);

                if (!f->exec.set)
                        continue;
                o = json_pack("{s:o,s:o,s:o}", "name", jsonw_str(f->name), "target",
                              text_or_null(tg), "exec", targetsjson_exec(&f->exec));
                if (!o || json_array_append_new(steps, o) != 0) {
                        json_decref(steps);
                        return NULL;
                }
        }
        return json_pack("{s:I,s:o,s:o,s:o,s:o}", "measured_steps", (json_int_t)te.measured,
                         "peak_step",
                         te.peak_step >= 0 ? jsonw_str(ts->stepv[te.peak_step].name) : json_null(),
                         "mem_peak_bytes", jsonw_real(te.mem_peak_bytes), "oom_kills",
                         jsonw_real(te.oom_kills), "steps", steps);
}

int steps_merge_json(const struct targets *ts, struct dbuf *js)
{
        json_t *root, *x;
        uint32_t rec;
        int e;

        if (!measured(ts, &rec) || !js->p)
                return 0;
        root = json_loadb(js->p, js->len, 0, NULL);
        x = root ? execs_json(ts) : NULL;
        if (!x || json_object_set_new(root, "buildkit_execs", x) != 0) {
                json_decref(root);
                return -ENOMEM;
        }
        /* root is a copy: js can take its text */
        dbuf_reset(js);
        e = jsonw_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER, js);
        json_decref(root);
        return e;
}
