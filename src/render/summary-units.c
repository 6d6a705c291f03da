/* SPDX-License-Identifier: MIT */
/* The summary's units and processes: the units table (text and JSON), a
 * process label by its unit's name, and the kernel's account of the
 * build's processes. */
#include "render/summary-int.h"

#include <math.h>
#include <string.h>

#include "model/unitname.h"
#include "model/units.h"
#include "render/jsonw.h"
#include "util/macro.h"

/* The top units by peak RSS: [{"tool", "name" (as given), "path" (resolved,
 * null unknown), "shown" (as the text shows it), "kind", "peak_mb",
 * "peak_elapsed_s", "first_elapsed_s", "last_elapsed_s", "cpu_s", "source"
 * (taskstats or sampled), "cache" (the compiler cache's word, null unknown),
 * "wait_cpu_s", "wait_io_s", "wait_mem_s" (delay accounting; null unknown)}], or null
 * when the run had no process scans. */
json_t *summary_junits(const struct summary *s, const char *root)
{
        struct unit top[UNITS_TOP];
        const struct unit *all;
        struct unitnames un;
        size_t n, nall;
        json_t *a;

        if (!s->units)
                return json_null();
        a = json_array();
        n = units_top(s->units, top, ARRAY_SIZE(top));
        all = units_rows(s->units, &nall);
        unitnames_init(&un, all, nall, root);
        for (size_t i = 0; a && i < n; i++) {
                char shown[UNITNAME_SHORT_MAX + 1];
                json_t *e = json_pack(
                    "{s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o}",
                    "tool", jsonw_text(top[i].tool), "name", jsonw_text(top[i].name), "path",
                    top[i].path[0] ? jsonw_text(top[i].path) : json_null(), "shown",
                    jsonw_text(unitnames_short(&un, &top[i], shown, sizeof(shown))), "kind",
                    top[i].kind == UNITS_LINK ? "link" : "compile", "peak_mb",
                    summary_jnum(top[i].peak_mb, 1), "peak_elapsed_s",
                    summary_jnum(top[i].peak_s, 3), "first_elapsed_s",
                    summary_jnum(top[i].first_s, 3), "last_elapsed_s",
                    summary_jnum(top[i].last_s, 3), "cpu_s", summary_jnum(top[i].cpu_s, 2),
                    "source", top[i].exact ? "taskstats" : "sampled", "cache",
                    top[i].cache ? json_string(units_cache_name(top[i].cache)) : json_null(),
                    "wait_cpu_s", summary_jnum(top[i].wait_s[0], 3), "wait_io_s",
                    summary_jnum(top[i].wait_s[1], 3), "wait_mem_s",
                    summary_jnum(top[i].wait_s[2], 3));

                if (json_array_append_new(a, e) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

/* The unit a process label ("cc1plus ../src/foo.cpp") is, as the units
 * table shows it ("cc1plus foo.cpp [gnu++17]"), of the units of that tool
 * and source: ended (a victim), seen before at_s (the sample that saw the
 * kill) and not after it, the one seen last; else one alive at at_s.
 * False when none is. */
bool summary_unit_of(const struct summary *s, const char *root, const char *label, double at_s,
                     bool ended, char *buf, size_t cap)
{
        const char *src = strchr(label, ' ');
        const struct unit *rows, *best = NULL;
        double dbest = INFINITY;
        struct unitnames un;
        char shown[UNITNAME_SHORT_MAX + 1];
        size_t n, tl;

        if (!s->units || !src)
                return false;
        tl = (size_t)(src++ - label);
        rows = units_rows(s->units, &n);
        for (size_t i = 0; i < n; i++) {
                const struct unit *u = &rows[i];
                size_t sl = strlen(src);
                double d = ended ? at_s - u->last_s : u->last_s >= at_s - 1e-3 ? 0 : -1;

                /* the victim was seen before the sample that saw the kill,
                 * and not after it: the one that ended last then; a unit
                 * the kernel accounted ends at its exact end, which may be
                 * after that sample (the driver outlives its compiler): the
                 * one that ended nearest it */
                if (ended && u->exact)
                        d = fabs(d);
                if (strlen(u->tool) != tl || strncmp(u->tool, label, tl) != 0 ||
                    strncmp(u->name, src, sl) != 0 || (u->name[sl] && u->name[sl] != ' ') ||
                    !(u->first_s < at_s + !ended * 1e-3) || !(d >= -1e-3) || !(d < dbest))
                        continue;
                best = u;
                dbest = d;
        }
        if (!best)
                return false;
        unitnames_init(&un, rows, n, root);
        snprintf(buf, cap, "%s %s", best->tool, unitnames_short(&un, best, shown, sizeof(shown)));
        return true;
}

/* "units (top 20 of N by peak RSS)" then one line each. */
void summary_units_text(const struct summary *s, const char *root, struct dwriter *w)
{
        struct unit top[UNITS_TOP];
        const struct unit *all;
        struct unitnames un;
        size_t n, nall;
        char shown[UNITNAME_SHORT_MAX + 1];

        if (!s->units)
                return;
        n = units_top(s->units, top, ARRAY_SIZE(top));
        all = units_rows(s->units, &nall);
        unitnames_init(&un, all, nall, root);
        dw_printf(w, "\n\nunits (top %zu of %zu by peak RSS", n, units_count(s->units));
        dw_printf(w, "; peak %llu in flight", (unsigned long long)s->running_peak);
        if (s->ran)
                dw_printf(w, "; the build ran %llu commands", (unsigned long long)s->ran);
        if (units_exact(s->units))
                dw_puts(w, "; every process accounted by the kernel (taskstats): "
                           "each unit's peak RSS and CPU exact");
        else if (s->ran)
                dw_puts(w, ": those shorter than a sample interval go unseen");
        dw_puts(w, ")");
        if (n == 0)
                dw_puts(w, "\n  none seen");
        for (size_t i = 0; i < n; i++) {
                dw_printf(w, "\n  %s  ", SIZE_STR(top[i].peak_mb));
                summary_put_text(w, top[i].tool);
                dw_puts(w, " ");
                summary_put_text(w, unitnames_short(&un, &top[i], shown, sizeof(shown)));
                dw_printf(w, "  +%s .. +%s", DURATION_STR(top[i].first_s),
                          DURATION_STR(top[i].last_s));
                if (isfinite(top[i].cpu_s))
                        dw_printf(w, ", cpu %s s", NUM_STR(top[i].cpu_s, 1));
                if (isfinite(top[i].wait_s[0])) /* delay accounting: starved for what */
                        dw_printf(w, ", waited cpu %s io %s mem %s s", NUM_STR(top[i].wait_s[0], 1),
                                  NUM_STR(top[i].wait_s[1], 1), NUM_STR(top[i].wait_s[2], 1));
                if (top[i].cache) /* a hit measures no compile: the -j reading leaves it out */
                        dw_printf(w, ", cache %s", units_cache_name(top[i].cache));
        }
}

/* "  processes:      peak 12; 1204 ended (the kernel's account), cpu 61.2 s"
 * then what ran most by name, and what the build waited for. */
void summary_procs_text(const struct run_procs *p, struct dwriter *w)
{
        if (!p->ended)
                return;
        dw_printf(w, "; %llu ended (the kernel's account), cpu %s s", (unsigned long long)p->ended,
                  NUM_STR(p->cpu_s, 1));
        if (p->unread)
                dw_printf(w,
                          "; %llu compiler(s) ended before their command line could be read "
                          "(no unit)",
                          (unsigned long long)p->unread);
        if (p->lost)
                dw_printf(w, "; %llu kernel read(s) lost (a full buffer): processes may be missing",
                          (unsigned long long)p->lost);
        dw_puts(w, "\n  what ran:       ");
        for (size_t i = 0; i < p->ntop; i++) {
                dw_puts(w, i ? ", " : "");
                summary_put_text(w, p->top[i].comm);
                dw_printf(w, " x%llu %s s peak %s", (unsigned long long)p->top[i].count,
                          NUM_STR(p->top[i].cpu_s, 1), SIZE_STR(p->top[i].peak_mb));
        }
        if (p->sccache_unknown)
                dw_puts(
                    w,
                    "\n  sccache:        which compile hit is unknown: its server was not started "
                    "by the build (stop it first), or SCCACHE_LOG was set");
        if (!p->delayacct) {
                dw_puts(w, "\n  waiting:        unmeasured (`sysctl kernel.task_delayacct=1` would "
                           "show the build's time waiting for CPU, IO and memory)");
                return;
        }
        dw_printf(w,
                  "\n  waiting:        for CPU %s s, for IO %s s, for memory (reclaim, swap, "
                  "thrashing) %s s (its processes summed; delay accounting)",
                  NUM_STR(p->delay_cpu_s, 1), NUM_STR(p->delay_io_s, 1),
                  NUM_STR(p->delay_mem_s, 1));
}

/* "  memory guard:   held 7 of 41 compiles and links back, 41.2 s in all,
 * the longest 12.0 s (heavy.cpp); ..." (run --memory-guard). */
void summary_guard_text(const struct run_guard *g, struct dwriter *w)
{
        if (!g->on)
                return;
        dw_printf(w, "\n  memory guard:   held %llu of %llu compiles and links back",
                  (unsigned long long)g->held, (unsigned long long)g->units);
        if (g->held) {
                dw_printf(w, ", %s s in all, the longest %s s (", NUM_STR(g->held_s, 1),
                          NUM_STR(g->longest_s, 1));
                summary_put_text(w, g->longest);
                dw_puts(w, ")");
        }
        dw_printf(w, "; headroom %s", SIZE_STR(g->headroom_mb));
        if (g->limit_mb > 0)
                dw_printf(w, " under the cap of %s", SIZE_STR(g->limit_mb));
        else
                dw_puts(w, " of the host's available memory");
        dw_printf(w, "; %llu with a usual peak from the job's history",
                  (unsigned long long)g->from_ledger);
}
