/* SPDX-License-Identifier: MIT */
#include "render/steps.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/execs.h"
#include "model/run.h"
#include "model/sample.h"
#include "runfiles/targetsjson.h"
#include "render/jsonw.h"

static const char *target_of(const struct targets *ts, const struct step_fact *f)
{
        return f->target >= 0 && (size_t)f->target < ts->n ? ts->t[f->target].name : "";
}

static double mib(double b)
{
        return b / SAMPLE_MIB;
}

/* name, cleaned for a terminal */
static const char *clean(struct dbuf *tmp, const char *s)
{
        dbuf_reset(tmp);
        if (run_append_utf8_lossy(tmp, s, strlen(s), true) < 0 || !tmp->p)
                return "";
        return tmp->p;
}

static int peak_line(const struct targets *ts, struct dbuf *tmp, struct dbuf *out)
{
        struct target_exec te;
        const struct step_fact *f;
        const char *tg;
        int e;

        execs_target(ts->stepv, ts->nstepv, -1, &te);
        if (te.peak_step < 0)
                return 0;
        f = &ts->stepv[te.peak_step];
        tg = target_of(ts, f);
        e = dbuf_printf(out, "buildtel: step peak %.1f MiB in %s%s%s", mib(f->exec.mem_peak_bytes),
                        clean(tmp, f->name), tg[0] ? ", target " : "", tg);
        if (e >= 0 && f->exec.peak_proc[0])
                e = dbuf_printf(out, "; largest process %s %.1f MiB", clean(tmp, f->exec.peak_proc),
                                mib(f->exec.peak_proc_bytes));
        return e >= 0 ? dbuf_puts(out, "\n") : e;
}

static int oom_lines(const struct targets *ts, struct dbuf *tmp, struct dbuf *out)
{
        int e = 0;

        for (uint32_t i = 0; e >= 0 && i < ts->nstepv; i++) {
                const struct step_fact *f = &ts->stepv[i];
                const char *tg = target_of(ts, f);

                if (!f->exec.set || !(f->exec.oom_kills > 0))
                        continue;
                e = dbuf_printf(out,
                                "buildtel: OOM kill x%.0f in step %s%s%s at +%.1fs; victim %s\n",
                                f->exec.oom_kills, clean(tmp, f->name), tg[0] ? ", target " : "",
                                tg, isnan(f->exec.oom_at_s) ? 0.0 : f->exec.oom_at_s,
                                f->exec.oom_victim[0] ? f->exec.oom_victim : "unknown");
        }
        return e;
}

static uint32_t measured(const struct targets *ts)
{
        uint32_t n = 0;

        for (uint32_t i = 0; ts && i < ts->nstepv; i++)
                n += ts->stepv[i].exec.set;
        return n;
}

int steps_render_short(const struct targets *ts, struct dbuf *out)
{
        struct dbuf tmp = DBUF_INIT;
        int e;

        if (!measured(ts))
                return 0;
        e = peak_line(ts, &tmp, out);
        if (e >= 0)
                e = oom_lines(ts, &tmp, out);
        dbuf_release(&tmp);
        return e < 0 ? -ENOMEM : 0;
}

/* x in MiB, or "-" when not measured */
static void fmt_mib(char *buf, size_t cap, double b)
{
        int n = isnan(b) ? snprintf(buf, cap, "-") : snprintf(buf, cap, "%.1f", mib(b));

        if (n < 0 || (size_t)n >= cap)
                buf[0] = '\0';
}

int steps_render_text(const struct targets *ts, struct dbuf *out)
{
        struct dbuf tmp = DBUF_INIT;
        uint32_t n = measured(ts);
        int e;

        if (!n)
                return 0;
        e = dbuf_printf(out, "\nBuildKit RUN steps measured in their exec cgroups: %u\n", n);
        if (e >= 0)
                e = peak_line(ts, &tmp, out);
        if (e >= 0)
                e = oom_lines(ts, &tmp, out);
        if (e >= 0)
                e = dbuf_puts(out, "  cpu_s   peak_mb  anon_mb  read_mb  write_mb  rx_bytes  "
                                   "tx_bytes  oom  step\n");
        for (uint32_t i = 0; e >= 0 && i < ts->nstepv; i++) {
                const struct step_exec *x = &ts->stepv[i].exec;
                char pk[32], an[32], rd[32], wr[32];

                if (!x->set)
                        continue;
                fmt_mib(pk, sizeof(pk), x->mem_peak_bytes);
                fmt_mib(an, sizeof(an), x->anon_peak_bytes);
                fmt_mib(rd, sizeof(rd), x->io_read_bytes);
                fmt_mib(wr, sizeof(wr), x->io_write_bytes);
                e = dbuf_printf(out, "  %6.2f  %7s  %7s  %7s  %8s  %8.0f  %8.0f  %3.0f  %s\n",
                                isnan(x->cpu_s) ? 0.0 : x->cpu_s, pk, an, rd, wr,
                                isnan(x->net_rx_bytes) ? 0.0 : x->net_rx_bytes,
                                isnan(x->net_tx_bytes) ? 0.0 : x->net_tx_bytes,
                                isnan(x->oom_kills) ? 0.0 : x->oom_kills,
                                clean(&tmp, ts->stepv[i].name));
        }
        dbuf_release(&tmp);
        return e < 0 ? -ENOMEM : 0;
}

static json_t *num(double d)
{
        return isfinite(d) ? json_real(d) : json_null();
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
        return json_pack(
            "{s:I,s:o,s:o,s:o,s:o}", "measured_steps", (json_int_t)te.measured, "peak_step",
            te.peak_step >= 0 ? jsonw_str(ts->stepv[te.peak_step].name) : json_null(),
            "mem_peak_bytes", num(te.mem_peak_bytes), "oom_kills", num(te.oom_kills), "steps",
            steps);
}

int steps_merge_json(const struct targets *ts, struct dbuf *js)
{
        json_t *root, *x;
        char *s;
        int e;

        if (!measured(ts) || !js->p)
                return 0;
        root = json_loadb(js->p, js->len, 0, NULL);
        x = root ? execs_json(ts) : NULL;
        if (!x || json_object_set_new(root, "buildkit_execs", x) != 0) {
                json_decref(root);
                return -ENOMEM;
        }
        s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (!s)
                return -ENOMEM;
        dbuf_reset(js);
        e = dbuf_puts(js, s);
        if (e >= 0)
                e = dbuf_puts(js, "\n");
        free(s);
        return e < 0 ? -ENOMEM : 0;
}
