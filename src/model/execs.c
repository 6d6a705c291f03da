/* SPDX-License-Identifier: MIT */
#include "model/execs.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "model/run.h"
#include "model/targets.h"

double execs_sum(double a, double b)
{
        if (isnan(a))
                return b;
        return isnan(b) ? a : a + b;
}

double execs_max(double a, double b)
{
        if (isnan(a))
                return b;
        return isnan(b) || a >= b ? a : b;
}

void step_exec_clear(struct step_exec *e)
{
        memset(e, 0, sizeof(*e));
        e->cpu_s = e->mem_peak_bytes = e->anon_peak_bytes = NAN;
        e->io_read_bytes = e->io_write_bytes = e->net_rx_bytes = e->net_tx_bytes = NAN;
        e->oom_kills = e->oom_at_s = e->peak_proc_bytes = NAN;
}

void step_exec_add(struct step_exec *to, const struct step_exec *e)
{
        if (!to->set)
                step_exec_clear(to);
        to->set = true;
        to->execs += e->execs ? e->execs : 1;
        to->cpu_s = execs_sum(to->cpu_s, e->cpu_s);
        to->mem_peak_bytes = execs_max(to->mem_peak_bytes, e->mem_peak_bytes);
        to->anon_peak_bytes = execs_max(to->anon_peak_bytes, e->anon_peak_bytes);
        to->io_read_bytes = execs_sum(to->io_read_bytes, e->io_read_bytes);
        to->io_write_bytes = execs_sum(to->io_write_bytes, e->io_write_bytes);
        to->net_rx_bytes = execs_sum(to->net_rx_bytes, e->net_rx_bytes);
        to->net_tx_bytes = execs_sum(to->net_tx_bytes, e->net_tx_bytes);
        to->oom_kills = execs_sum(to->oom_kills, e->oom_kills);
        if (!isnan(e->oom_at_s) && (isnan(to->oom_at_s) || e->oom_at_s < to->oom_at_s)) {
                to->oom_at_s = e->oom_at_s;
                memcpy(to->oom_victim, e->oom_victim, sizeof(to->oom_victim));
        }
        if (e->peak_proc[0] &&
            (isnan(to->peak_proc_bytes) || e->peak_proc_bytes > to->peak_proc_bytes)) {
                to->peak_proc_bytes = e->peak_proc_bytes;
                memcpy(to->peak_proc, e->peak_proc, sizeof(to->peak_proc));
        }
}

void execs_target(const struct step_fact *v, uint32_t n, int target, struct target_exec *ret)
{
        struct target_exec t = {
            .mem_peak_bytes = NAN, .oom_kills = NAN, .cpu_s = NAN, .peak_step = -1};

        for (uint32_t i = 0; v && i < n; i++) {
                const struct step_exec *e = &v[i].exec;

                if (!e->set || (target >= 0 && v[i].target != target))
                        continue;
                t.measured++;
                if (!isnan(e->mem_peak_bytes) &&
                    (isnan(t.mem_peak_bytes) || e->mem_peak_bytes > t.mem_peak_bytes)) {
                        t.mem_peak_bytes = e->mem_peak_bytes;
                        t.peak_step = (int)i;
                }
                t.oom_kills = execs_sum(t.oom_kills, e->oom_kills);
                t.cpu_s = execs_sum(t.cpu_s, e->cpu_s);
        }
        *ret = t;
}

static json_t *num(double d)
{
        return isfinite(d) ? json_real(d) : json_null();
}

static json_t *text_or_null(const char *s)
{
        return s[0] ? run_json_string(s) : json_null();
}

json_t *execs_step_json(const struct step_exec *e)
{
        if (!e->set)
                return json_null();
        return json_pack(
            "{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "execs", (json_int_t)e->execs,
            "cpu_s", num(e->cpu_s), "mem_peak_bytes", num(e->mem_peak_bytes), "anon_peak_bytes",
            num(e->anon_peak_bytes), "io_read_bytes", num(e->io_read_bytes), "io_write_bytes",
            num(e->io_write_bytes), "net_rx_bytes", num(e->net_rx_bytes), "net_tx_bytes",
            num(e->net_tx_bytes), "oom_kills", num(e->oom_kills), "oom_at_s", num(e->oom_at_s),
            "oom_victim", text_or_null(e->oom_victim), "peak_proc", text_or_null(e->peak_proc),
            "peak_proc_bytes", num(e->peak_proc_bytes));
}

static double jnum(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        return json_is_number(v) ? json_number_value(v) : NAN;
}

static void jtext(json_t *o, const char *key, char *dst, size_t cap)
{
        const char *s = json_string_value(json_object_get(o, key));
        size_t n = s ? strlen(s) : 0;

        n = n < cap ? n : cap - 1;
        memcpy(dst, s ? s : "", n);
        dst[n] = '\0';
}

void execs_step_from_json(json_t *o, struct step_exec *e)
{
        json_t *n = json_object_get(o, "execs");

        step_exec_clear(e);
        if (!json_is_object(o) || !json_is_integer(n) || json_integer_value(n) < 0)
                return;
        e->set = true;
        e->execs =
            (uint32_t)(json_integer_value(n) > UINT32_MAX ? UINT32_MAX : json_integer_value(n));
        e->cpu_s = jnum(o, "cpu_s");
        e->mem_peak_bytes = jnum(o, "mem_peak_bytes");
        e->anon_peak_bytes = jnum(o, "anon_peak_bytes");
        e->io_read_bytes = jnum(o, "io_read_bytes");
        e->io_write_bytes = jnum(o, "io_write_bytes");
        e->net_rx_bytes = jnum(o, "net_rx_bytes");
        e->net_tx_bytes = jnum(o, "net_tx_bytes");
        e->oom_kills = jnum(o, "oom_kills");
        e->oom_at_s = jnum(o, "oom_at_s");
        e->peak_proc_bytes = jnum(o, "peak_proc_bytes");
        jtext(o, "oom_victim", e->oom_victim, sizeof(e->oom_victim));
        jtext(o, "peak_proc", e->peak_proc, sizeof(e->peak_proc));
}
