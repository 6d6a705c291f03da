/* SPDX-License-Identifier: MIT */
#include "model/targets.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/run.h"
#include "util/macro.h"
#include "util/util.h"

void targets_init(struct targets *ts)
{
        memset(ts, 0, sizeof(*ts));
        targets_init_zeroed(ts);
}

size_t targets_get(struct targets *ts, const char *name, size_t len)
{
        char key[TARGET_NAME_MAX + 1];
        struct target *t;

        copy_utf8(key, sizeof(key), name, len);
        for (size_t i = 0; i < ts->n; i++)
                if (strcmp(ts->t[i].name, key) == 0)
                        return i;
        if (ts->n == TARGETS_MAX)
                return TARGETS_MAX - 1;
        t = &ts->t[ts->n];
        memset(t, 0, sizeof(*t));
        memcpy(t->name, key, sizeof(key));
        t->first_seen = NAN;
        t->last_seen = NAN;
        return ts->n++;
}

int targets_find(const struct targets *ts, const char *name)
{
        for (size_t i = 0; i < ts->n; i++)
                if (strcmp(ts->t[i].name, name) == 0)
                        return (int)i;
        return -1;
}

void targets_touch(struct targets *ts, size_t i, double now)
{
        struct target *t = &ts->t[i];

        if (isnan(t->first_seen))
                t->first_seen = now;
        t->last_seen = now;
}

static int64_t edge_len(const struct ninja_edge *e)
{
        return e->end_ms - e->start_ms;
}

/* edgev as a min-heap on duration: the shortest kept at [0], replaced by
 * a longer one once full. Out of memory keeps what it has. */
static void heap_edge(struct targets *ts, const struct ninja_edge *e)
{
        struct ninja_edge *h;
        size_t i;

        if (!ts->edgev && !(ts->edgev = malloc(TARGETS_EDGES_MAX * sizeof(*ts->edgev))))
                return;
        h = ts->edgev;
        if (ts->nedgev < TARGETS_EDGES_MAX) {
                for (i = ts->nedgev++; i > 0 && edge_len(&h[(i - 1) / 2]) > edge_len(e);
                     i = (i - 1) / 2)
                        h[i] = h[(i - 1) / 2];
                h[i] = *e;
                return;
        }
        if (edge_len(e) <= edge_len(&h[0]))
                return;
        for (i = 0;;) {
                size_t c = 2 * i + 1;
                if (c >= ts->nedgev)
                        break;
                if (c + 1 < ts->nedgev && edge_len(&h[c + 1]) < edge_len(&h[c]))
                        c++;
                if (edge_len(&h[c]) >= edge_len(e))
                        break;
                h[i] = h[c];
                i = c;
        }
        h[i] = *e;
}

void targets_keep_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                       size_t out_len)
{
        struct ninja_edge e = {.start_ms = start_ms, .end_ms = end_ms};

        copy_utf8(e.output, sizeof(e.output), out, out_len);
        heap_edge(ts, &e);
        ts->ninja_max_end_ms = MAX(ts->ninja_max_end_ms, end_ms);
}

void targets_offer_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                        size_t out_len)
{
        int64_t d = end_ms - start_ms;
        size_t pos;

        for (size_t i = 0; i < ts->nslow; i++)
                if (ts->slow[i].start_ms == start_ms && ts->slow[i].end_ms == end_ms)
                        return;
        /* Ties keep file order: a new edge goes after equal ones. */
        for (pos = 0; pos < ts->nslow; pos++)
                if (ts->slow[pos].end_ms - ts->slow[pos].start_ms < d)
                        break;
        if (pos >= TARGETS_SLOW_EDGES)
                return;
        if (ts->nslow < TARGETS_SLOW_EDGES)
                ts->nslow++;
        memmove(&ts->slow[pos + 1], &ts->slow[pos], (ts->nslow - 1 - pos) * sizeof(ts->slow[0]));
        ts->slow[pos].start_ms = start_ms;
        ts->slow[pos].end_ms = end_ms;
        copy_utf8(ts->slow[pos].output, sizeof(ts->slow[pos].output), out, out_len);
}

void targets_note_cc_block(struct targets *ts, enum cc_tool tool, const struct cc_block *b,
                           bool is_new)
{
        struct cc_blocks *c;

        if ((unsigned)tool >= CC_TOOLS)
                return;
        c = &ts->cc_log[tool];
        if (is_new) {
                if (c->blocks < UINT32_MAX)
                        c->blocks++;
                if (c->blocks == 1)
                        c->first = *b;
                c->last = *b;
                return;
        }
        if (!c->blocks)
                return;
        /* Keep the time the block was completed. */
        c->last = (struct cc_block){.seen = c->last.seen,
                                    .hits = b->hits,
                                    .misses = b->misses,
                                    .size_bytes = b->size_bytes,
                                    .max_size_bytes = b->max_size_bytes,
                                    .files = b->files};
        memcpy(c->last.version, b->version, sizeof(c->last.version));
        if (c->blocks == 1)
                c->first = c->last;
}

const struct cc_blocks *targets_cc_blocks(const struct targets *ts, enum cc_tool tool)
{
        return (unsigned)tool < CC_TOOLS && ts->cc_log[tool].blocks ? &ts->cc_log[tool] : NULL;
}

const char *targets_cc_tool_name(enum cc_tool tool)
{
        return tool == CC_TOOL_SCCACHE ? "sccache" : tool == CC_TOOL_CCACHE ? "ccache" : "";
}

bool targets_any(const struct targets *ts)
{
        return ts->n > 0 || ts->ninja_total > 0 || ts->make_pct >= 0 || ts->ninja_log_set;
}

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

static json_t *cc_json(const struct cc_counts *c)
{
        if (!c->set)
                return json_null();
        return json_pack("{s:I,s:I}", "hits", (json_int_t)MIN(c->hits, (uint64_t)INT64_MAX),
                         "misses", (json_int_t)MIN(c->misses, (uint64_t)INT64_MAX));
}

static json_t *num_or_null(double d)
{
        return isfinite(d) ? json_real(d) : json_null(); /* json_real() takes no NAN or inf */
}

static json_t *count_or_null(bool set, uint32_t v)
{
        return set ? json_integer(v) : json_null();
}

static json_t *success_json(int success)
{
        return success == TARGET_SUCCESS_UNKNOWN ? json_null() : json_boolean(success);
}

/* json_pack's "o" steals every value, even when packing fails. */
static json_t *target_json(const struct target_fact *f)
{
        return json_pack(
            "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:b,s:o}", "name",
            run_json_string(f->name), "builder", run_json_string(f->builder), "node",
            run_json_string(f->node), "ref", run_json_string(f->ref), "first_seen_s",
            num_or_null(f->start_s), "last_seen_s", num_or_null(f->end_s), "duration_s",
            num_or_null(f->duration_s), "steps", count_or_null(f->steps_set, f->steps), "cached",
            count_or_null(f->steps_set, f->cached), "success", success_json(f->success), "failed",
            (json_int_t)f->failed, "sccache", cc_json(&f->sccache), "sccache_guess",
            f->sccache_guess, "ccache", cc_json(&f->ccache));
}

static json_t *failed_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < ts->nfailed; i++) {
                const struct failed_step *f = &ts->failed[i];

                if (json_array_append_new(
                        a, json_pack("{s:o,s:o}", "name", run_json_string(f->name), "target",
                                     f->target >= 0 ? run_json_string(ts->t[f->target].name)
                                                    : json_null())) != 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static json_t *slow_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < ts->nslow; i++)
                if (json_array_append_new(
                        a, json_pack("{s:o,s:f}", "output", run_json_string(ts->slow[i].output),
                                     "seconds",
                                     (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) /
                                         1000.0)) != 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/* This run's edges of the .ninja_log as kept (edgev, in its order: read
 * back in that order it is the same heap) with what places them on the
 * run's clock: a replay from the files places the peaks' edges as the run
 * did. null when none were kept. */
static json_t *ninja_log_json(const struct targets *ts)
{
        json_t *a, *o;

        if (!ts->nedgev || !(ts->ninja_mtime > 0))
                return json_null();
        a = json_array();
        for (uint32_t i = 0; a && i < ts->nedgev; i++)
                if (json_array_append_new(a, json_pack("[I,I,o]", (json_int_t)ts->edgev[i].start_ms,
                                                       (json_int_t)ts->edgev[i].end_ms,
                                                       run_json_string(ts->edgev[i].output))) != 0) {
                        json_decref(a);
                        a = NULL;
                }
        o = a ? json_pack("{s:f,s:I,s:o}", "mtime", ts->ninja_mtime, "max_end_ms",
                          (json_int_t)ts->ninja_max_end_ms, "edges", a)
              : NULL;
        return o;
}

static json_t *steps_json(const struct targets *ts)
{
        json_t *a = json_array();

        for (uint32_t i = 0; a && i < ts->nstepv; i++) {
                const struct step_fact *st = &ts->stepv[i];
                bool tgt = st->target >= 0 && (size_t)st->target < ts->n;

                if (json_array_append_new(
                        a, json_pack("{s:o,s:o,s:o,s:o,s:b,s:b,s:b,s:b,s:o}", "name",
                                     run_json_string(st->name), "target",
                                     tgt ? run_json_string(ts->t[st->target].name) : json_null(),
                                     "start_s", num_or_null(st->start_s), "end_s",
                                     num_or_null(st->end_s), "step", st->step, "cached", st->cached,
                                     "error", st->error, "canceled", st->canceled, "exec",
                                     execs_step_json(&st->exec))) != 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static json_t *run_json(const struct run_facts *f)
{
        const char *o = targets_outcome_name(f->outcome);

        return json_pack("{s:o,s:o,s:o,s:o}", "outcome", o ? json_string(o) : json_null(),
                         "exit_code", f->exit_code >= 0 ? json_integer(f->exit_code) : json_null(),
                         "signal", f->term_signal ? json_integer(f->term_signal) : json_null(),
                         "duration_s", num_or_null(f->duration_s));
}

int targets_render_json(const struct targets *ts, const struct run_facts *f, struct dbuf *out)
{
        static const struct targets none = {.make_pct = -1};
        json_t *arr = json_array(), *root;
        char *s = NULL;
        int e = arr ? 0 : -ENOMEM;

        if (!ts)
                ts = &none;
        for (size_t i = 0; e >= 0 && i < f->n; i++)
                if (json_array_append_new(arr, target_json(&f->t[i])) != 0)
                        e = -ENOMEM;
        if (e < 0) {
                json_decref(arr);
                return e;
        }
        root = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "targets", arr, "steps",
                         count_or_null(f->steps_set, f->steps), "cached",
                         count_or_null(f->steps_set, f->cached), "run", run_json(f), "failed_steps",
                         failed_json(ts), "slowest_edges", slow_json(ts), "buildkit_steps",
                         steps_json(ts), "buildkit_steps_dropped", (json_int_t)ts->steps_dropped,
                         "ninja_log", ninja_log_json(ts));
        if (root)
                s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        e = s ? dbuf_puts(out, s) : -ENOMEM;
        if (e >= 0)
                e = dbuf_puts(out, "\n");
        free(s);
        json_decref(root);
        return e < 0 ? -ENOMEM : 0;
}

/* ---- the effective facts (targets.h states the rule) ---- */

const char *targets_outcome_name(int outcome)
{
        switch (outcome) {
        case RUN_OUTCOME_SUCCESS:
                return "success";
        case RUN_OUTCOME_FAILURE:
                return "failure";
        case RUN_OUTCOME_CANCELLED:
                return "cancellation";
        }
        return NULL;
}

void targets_facts_outcome(const struct run_info *run, struct run_facts *f)
{
        f->exit_code = run->exit_code;
        f->term_signal = run->term_signal;
        if (!run->finished)
                f->outcome = RUN_OUTCOME_UNKNOWN;
        else if (run->term_signal)
                f->outcome = RUN_OUTCOME_CANCELLED;
        else if (run->exit_code == 0)
                f->outcome = RUN_OUTCOME_SUCCESS;
        else if (run->exit_code > 0)
                f->outcome = RUN_OUTCOME_FAILURE;
        else
                f->outcome = RUN_OUTCOME_UNKNOWN;
        /* NAN when either end is unknown: no samples here */
        f->duration_s = figure_run_duration(run->start_epoch, run->end_epoch, NAN, NULL);
}

static double cc_ratio(const struct cc_counts *c)
{
        return c->set ? figure_hit_ratio(c->hits, c->misses) : NAN;
}

void targets_fact_ratios(struct target_fact *t)
{
        t->cache_ratio = t->steps_set ? figure_cached_ratio(t->steps, t->cached) : NAN;
        t->sccache_ratio = cc_ratio(&t->sccache);
        t->ccache_ratio = cc_ratio(&t->ccache);
        t->cc = t->sccache.set ? t->sccache : t->ccache;
}

static int success_of(const struct target *t, int outcome)
{
        if (t->history_set && strcmp(t->history_status, "completed") == 0)
                return TARGET_BUILT;
        if (t->history_set && (strcmp(t->history_status, "failed") == 0 ||
                               strcmp(t->history_status, "canceled") == 0))
                return TARGET_FAILED;
        if (t->errors || t->canceled)
                return TARGET_FAILED;
        if (t->done)
                return TARGET_BUILT;
        switch (outcome) {
        case RUN_OUTCOME_SUCCESS:
                return TARGET_BUILT;
        case RUN_OUTCOME_FAILURE:
        case RUN_OUTCOME_CANCELLED:
                return TARGET_FAILED;
        }
        return TARGET_SUCCESS_UNKNOWN;
}

static void fact_of(const struct targets *ts, const struct target *t, int outcome,
                    struct target_fact *f)
{
        memset(f, 0, sizeof(*f));
        memcpy(f->name, t->name, sizeof(f->name));
        memcpy(f->builder, t->builder[0] ? t->builder : ts->builder, sizeof(f->builder));
        memcpy(f->node, t->node, sizeof(f->node));
        memcpy(f->ref, t->ref, sizeof(f->ref));
        f->start_s = t->first_seen;
        f->end_s = t->last_seen;
        if (t->history_set && isfinite(t->history_duration_s))
                f->duration_s = t->history_duration_s;
        else
                f->duration_s = isnan(t->first_seen) ? NAN : t->last_seen - t->first_seen;
        if (t->history_set && t->history_steps_set) {
                f->steps_set = true;
                f->steps = t->history_steps;
                f->cached = t->history_cached;
        } else if (ts->buildkit_seen) {
                f->steps_set = true;
                f->steps = t->steps;
                f->cached = t->cached;
        }
        f->success = success_of(t, outcome);
        f->failed = t->errors;
        f->sccache = t->sccache;
        f->sccache_guess = t->sccache.set && t->sccache_guess;
        f->ccache = t->ccache;
        targets_fact_ratios(f);
}

bool targets_guess_builder(const struct run_info *ri, char *buf, size_t len)
{
        const char *prog, *slash;
        size_t used;
        int n;

        buf[0] = '\0';
        if (!ri->argv || !ri->argv[0])
                return false;
        prog = ri->argv[0];
        slash = strrchr(prog, '/');
        if (slash)
                prog = slash + 1;
        n = snprintf(buf, len, "%s", prog);
        if (n < 0 || (size_t)n >= len) {
                buf[0] = '\0';
                return false;
        }
        used = (size_t)n;
        if (strcmp(prog, "docker") != 0 && strcmp(prog, "podman") != 0 &&
            strcmp(prog, "nerdctl") != 0)
                return false;
        for (size_t i = 1, words = 0; ri->argv[i] && words < 2; i++) {
                const char *w = ri->argv[i];

                if (w[0] == '-')
                        break;
                n = snprintf(buf + used, len - used, " %s", w);
                if (n < 0 || (size_t)n >= len - used) {
                        buf[used] = '\0';
                        return true;
                }
                used += (size_t)n;
                words++;
                if (strcmp(w, "buildx") != 0 && strcmp(w, "compose") != 0)
                        break;
        }
        return true;
}

void targets_facts(const struct targets *ts, const struct run_info *run, struct run_facts *ret)
{
        char fe[TARGET_FIELD_MAX + 1];

        ret->n = 0;
        ret->steps_set = false;
        ret->steps = ret->cached = 0;
        ret->builder[0] = '\0';
        targets_facts_outcome(run, ret);
        if (!ts)
                return;
        if (ts->buildkit_seen) {
                ret->steps_set = true;
                ret->steps = ts->steps;
                ret->cached = ts->cached;
        }
        memcpy(ret->builder, ts->builder, sizeof(ret->builder));
        for (size_t i = 0; !ret->builder[0] && i < ts->n; i++)
                memcpy(ret->builder, ts->t[i].builder, sizeof(ret->builder));
        /* No builder named (Docker 20.10's plain log has no "#0 building
         * with"): a container front end, as the run's history row has it
         * ("docker build"). */
        if (!run || !targets_guess_builder(run, fe, sizeof(fe)))
                fe[0] = '\0'; /* make, ninja: no builder label */
        if (!ret->builder[0])
                memcpy(ret->builder, fe, sizeof(fe));
        for (size_t i = 0; i < ts->n && i < TARGETS_MAX; i++) {
                fact_of(ts, &ts->t[i], ret->outcome, &ret->t[i]);
                if (!ret->t[i].builder[0])
                        memcpy(ret->t[i].builder, fe, sizeof(fe));
                /* No BuildKit in the log (--progress=quiet): buildx
                 * history's figures are all there is; their sum. */
                if (!ts->buildkit_seen && ret->t[i].steps_set) {
                        ret->steps_set = true;
                        ret->steps += ret->t[i].steps;
                        ret->cached += ret->t[i].cached;
                }
        }
        ret->n = MIN(ts->n, (size_t)TARGETS_MAX);
}

void targets_init_zeroed(struct targets *ts)
{
        ts->make_pct = -1;
}

int targets_add_step(struct targets *ts, const struct step_fact *s)
{
        if (ts->nstepv >= TARGETS_STEPS_MAX) {
                ts->steps_dropped++;
                return 0;
        }
        if (ts->nstepv == ts->capstepv) {
                uint32_t n = ts->capstepv ? MIN(ts->capstepv * 2, (uint32_t)TARGETS_STEPS_MAX) : 64;
                struct step_fact *nv = realloc(ts->stepv, n * sizeof(*nv));
                if (!nv) {
                        ts->steps_dropped++;
                        return -ENOMEM;
                }
                ts->stepv = nv;
                ts->capstepv = n;
        }
        ts->stepv[ts->nstepv++] = *s;
        return 0;
}

void targets_release(struct targets *ts)
{
        free(ts->stepv);
        ts->stepv = NULL;
        ts->nstepv = ts->capstepv = 0;
        free(ts->edgev);
        ts->edgev = NULL;
        ts->nedgev = 0;
}

double targets_step_duration(const struct step_fact *s)
{
        if (isnan(s->start_s) || isnan(s->end_s))
                return NAN;
        return s->end_s >= s->start_s ? s->end_s - s->start_s : 0;
}

int targets_ninja_offset(const struct targets *ts, const struct run_info *ri, double *ret_off)
{
        /* The one rule of where ninja's clock starts: figure_ninja_offset(). */
        if (!ts || !ri || !ts->nedgev || !(ts->ninja_mtime > 0) || !isfinite(ri->start_epoch))
                return -ENODATA;
        return figure_ninja_offset(ri, ts->ninja_mtime, ts->ninja_max_end_ms, ret_off, NULL) < 0
                   ? -ENODATA
                   : 0;
}
