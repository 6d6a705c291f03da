/* SPDX-License-Identifier: MIT */
#include "render/plan.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "model/ledger.h"
#include "model/units.h"
#include "render/jsonw.h"
#include "render/summary.h"
#include "util/macro.h"
#include "util/util.h"

/* A CMake quoted argument: \, " and $ escaped. */
static void put_cmake_arg(struct dwriter *w, const char *s)
{
        dw_puts(w, " \"");
        for (const char *c = s; *c; c++) {
                if (strchr("\\\"$", *c))
                        dw_puts(w, "\\");
                if ((unsigned char)*c >= 0x20)
                        dw_append(w, c, 1);
        }
        dw_puts(w, "\"");
}

static size_t listed(const struct plan *p)
{
        return MIN(p->nheavy, (size_t)PLAN_HEAVY_MAX);
}

/* The snippets into sn[]: a ninja pool, CMake's JOB_POOLS, make's
 * advice. 0 or -ENOMEM; the caller releases sn[] either way. */
static int snippets(struct ledger *l, const struct plan *p, struct dbuf sn[static 3])
{
        struct dwriter w[3] = {DWRITER_INIT(&sn[0]), DWRITER_INIT(&sn[1]), DWRITER_INIT(&sn[2])};
        struct dwriter *ninja = &w[0], *cmake = &w[1], *make = &w[2];
        char t[UNITS_NAME_MAX + 1], seen[PLAN_HEAVY_MAX][UNITS_NAME_MAX + 1];
        size_t nseen = 0;
        bool any_src = false;

        dw_printf(ninja,
                  "pool heavy\n  depth = %u\n# and in each edge that builds one of these:\n#   "
                  "pool = heavy\n",
                  p->pool_depth);
        for (size_t i = 0; i < listed(p); i++) {
                dw_puts(ninja, "#   ");
                summary_put_text(ninja,
                         ledger_at(l, i)->path[0] ? ledger_at(l, i)->path : ledger_at(l, i)->name);
                dw_puts(ninja, "\n");
        }
        dw_printf(cmake, "set_property(GLOBAL APPEND PROPERTY JOB_POOLS heavy=%u)\n",
                  p->pool_depth);
        for (size_t i = 0; i < listed(p); i++) {
                const struct ledger_unit *u = ledger_at(l, i);

                if (u->kind != UNITS_COMPILE || !u->path[0])
                        continue;
                dw_puts(cmake,
                        any_src ? "" : "# CMake 4.2 and later: these sources\nset_property(SOURCE");
                put_cmake_arg(cmake, u->path);
                any_src = true;
        }
        dw_puts(cmake, any_src ? " PROPERTY JOB_POOL_COMPILE heavy)\n" : "");
        /* before 4.2 a pool is a target's: every compile of those targets */
        for (size_t i = 0; i < listed(p); i++) {
                const struct ledger_unit *u = ledger_at(l, i);
                bool link = u->kind == UNITS_LINK, dup = false;

                if (link) {
                        const char *b = strrchr(u->name, '/');

                        copy_utf8_str(t, sizeof(t), b ? b + 1 : u->name);
                } else if (!plan_cmake_target(u->dir, t, sizeof(t))) {
                        continue;
                }
                for (size_t k = 0; k < nseen && !dup; k++)
                        dup = strcmp(seen[k], t) == 0;
                if (dup)
                        continue;
                memcpy(seen[nseen++], t, sizeof(t));
                dw_puts(cmake, nseen == 1 ? "# CMake before 4.2: their targets\n" : "");
                dw_puts(cmake, "set_property(TARGET");
                put_cmake_arg(cmake, t);
                dw_printf(cmake, " PROPERTY JOB_POOL_%s heavy)\n", link ? "LINK" : "COMPILE");
        }
        dw_printf(make,
                  "make has no pools: make -j%u fits; or build the heavy ones first at -j%u, then "
                  "the rest at -j%u",
                  MAX(p->j_fit, 1u), MAX(p->pool_depth, 1u), p->cpus);
        return w[0].err < 0 ? w[0].err : w[1].err < 0 ? w[1].err : w[2].err;
}

int render_plan_text(const char *job, unsigned runs, struct ledger *l, const struct plan *p,
                     struct dbuf *out)
{
        static const char *const heads[3] = {"\nninja (build.ninja):\n",
                                             "\nCMake (CMakeLists.txt, the Ninja generator):\n",
                                             "\nmake:\n"};
        struct dwriter w = DWRITER_INIT(out);
        struct dbuf sn[3] = {DBUF_INIT, DBUF_INIT, DBUF_INIT};

        dw_puts(&w, "plan for job ");
        summary_put_text(&w, job);
        dw_printf(&w, ": %zu units from its last %u runs; for %s and %u CPUs, keeping %s free\n",
                  p->units, runs, SIZE_STR(p->memory_mb), p->cpus, SIZE_STR(p->headroom_mb));
        if (p->j_fit == 0)
                dw_printf(&w, "  -j that fits: none: the heaviest unit alone needs %s\n",
                          SIZE_STR(p->steps[0].worst_mb));
        else if (p->j_fit == 1)
                dw_printf(&w, "  -j that fits: 1 (the heaviest unit needs %s)\n",
                          SIZE_STR(p->steps[0].worst_mb));
        else
                dw_printf(&w, "  -j that fits: %u (the %u heaviest units at once need %s)\n",
                          p->j_fit, p->j_fit, SIZE_STR(p->steps[p->j_fit - 1].worst_mb));
        dw_puts(
            &w,
            "\n    -j  worst case  as scheduled  wall (the units alone, in their usual order)\n");
        for (size_t i = 0; i < p->nsteps; i++) {
                const struct plan_step *s = &p->steps[i];

                dw_printf(&w, "  %4u  %10s  %12s  %s%s\n", s->j, SIZE_STR(s->worst_mb),
                          SIZE_STR(s->sched_mb), DURATION_STR(s->wall_s),
                          s->fits ? "" : "  (too much)");
        }
        if (p->nheavy == 0 || p->pool_depth == 0) {
                dw_puts(&w, p->nheavy == 0 ? "\nno unit needs more than its share: no pool needed\n"
                            : p->nheavy == p->units
                                ? "\nevery unit is heavy: a pool would hold them all; "
                                  "the -j that fits is the plan\n"
                                : "\nno pool lets more run: keep the -j that fits\n");
                return dw_ok(&w) ? 0 : w.err;
        }
        dw_printf(&w,
                  "\nheavy units (each above its share, %s): %zu; a pool of depth %u lets the "
                  "rest run at -j%u\n",
                  SIZE_STR((p->memory_mb - p->headroom_mb) / p->cpus), p->nheavy, p->pool_depth,
                  p->j_pooled);
        for (size_t i = 0; i < listed(p); i++) {
                const struct ledger_unit *u = ledger_at(l, i);

                dw_printf(&w, "  %s  ", SIZE_STR(u->peak_mb));
                summary_put_text(&w, u->path[0] ? u->path : u->name);
                dw_printf(&w, "  (%u run%s)\n", u->runs, u->runs == 1 ? "" : "s");
        }
        if (p->nheavy > listed(p))
                dw_printf(&w, "  and %zu more\n", p->nheavy - listed(p));
        dw_check(&w, snippets(l, p, sn));
        for (int i = 0; i < 3; i++) {
                dw_puts(&w, heads[i]);
                dw_puts(&w, sn[i].p ? sn[i].p : "");
                dbuf_release(&sn[i]);
        }
        dw_puts(&w, "\n");
        return dw_ok(&w) ? 0 : w.err;
}

int render_plan_json(const char *job, unsigned runs, struct ledger *l, const struct plan *p,
                     struct dbuf *out)
{
        struct dbuf sn[3] = {DBUF_INIT, DBUF_INIT, DBUF_INIT};
        json_t *steps = json_array(), *heavy = json_array(), *o;
        int r = 0;

        for (size_t i = 0; steps && i < p->nsteps; i++) {
                const struct plan_step *s = &p->steps[i];

                json_array_append_new(steps,
                                      json_pack("{s:I, s:f, s:f, s:f, s:b}", "j", (json_int_t)s->j,
                                                "worst_mb", s->worst_mb, "scheduled_mb",
                                                s->sched_mb, "wall_s", s->wall_s, "fits", s->fits));
        }
        for (size_t i = 0; heavy && i < listed(p); i++) {
                const struct ledger_unit *u = ledger_at(l, i);

                json_array_append_new(
                    heavy, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:I}", "kind",
                                     u->kind == UNITS_LINK ? "link" : "compile", "name",
                                     jsonw_str(u->name), "path", jsonw_text(u->path), "peak_mb",
                                     jsonw_real(u->peak_mb), "cpu_s", jsonw_real(u->cpu_s),
                                     "wall_s", jsonw_real(u->wall_s), "runs", (json_int_t)u->runs));
        }
        if (p->pool_depth)
                r = snippets(l, p, sn);
        o = json_pack("{s:o, s:I, s:I, s:f, s:I, s:f, s:I, s:o, s:I, s:o, s:I, s:I, s:o}", "job",
                      jsonw_str(job), "runs", (json_int_t)runs, "units", (json_int_t)p->units,
                      "memory_mb", p->memory_mb, "cpus", (json_int_t)p->cpus, "headroom_mb",
                      p->headroom_mb, "j_fit", (json_int_t)p->j_fit, "steps", steps, "heavy_count",
                      (json_int_t)p->nheavy, "heavy", heavy, "pool_depth",
                      (json_int_t)p->pool_depth, "j_with_pool", (json_int_t)p->j_pooled, "snippets",
                      p->pool_depth
                          ? json_pack("{s:o, s:o, s:o}", "ninja", jsonw_text(sn[0].p), "cmake",
                                      jsonw_text(sn[1].p), "make", jsonw_text(sn[2].p))
                          : json_null());
        r = o && r >= 0 ? jsonw_dump(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out) : -ENOMEM;
        json_decref(o);
        for (int i = 0; i < 3; i++)
                dbuf_release(&sn[i]);
        return r;
}
