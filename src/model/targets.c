/* SPDX-License-Identifier: MIT */
#include "model/targets.h"

#include <errno.h>
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
        int i;

        copy_utf8(key, sizeof(key), name, len);
        if ((i = targets_find(ts, key)) >= 0)
                return (size_t)i;
        if (ts->n == TARGETS_MAX)
                return TARGETS_MAX - 1;
        t = memset(&ts->t[ts->n], 0, sizeof(*t));
        memcpy(t->name, key, sizeof(key));
        t->first_seen = t->last_seen = NAN;
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
        for (i = 0; 2 * i + 1 < ts->nedgev;) {
                size_t c = 2 * i + 1;

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
        struct cc_blocks *c = &ts->cc_log[tool];
        double seen;

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
        seen = c->last.seen;
        c->last = *b;
        c->last.seen = seen;
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

uint64_t targets_commands_ran(const struct targets *ts)
{
        return ts ? MAX(ts->ninja_log_set ? ts->ninja_edges : 0, ts->ninja_done) : 0;
}

/* ---- the effective facts (targets.h states the rule) ---- */

const char *targets_outcome_name(int outcome)
{
        static const char *const names[] = {NULL, "success", "failure", "cancellation"};

        return (unsigned)outcome < ARRAY_SIZE(names) ? names[outcome] : NULL;
}

/* Only the run's part (outcome, exit code, signal, duration). */
static void facts_outcome(const struct run_info *run, struct run_facts *f)
{
        f->exit_code = run->exit_code;
        f->term_signal = run->term_signal;
        f->outcome = !run->finished        ? RUN_OUTCOME_UNKNOWN
                     : run->term_signal    ? RUN_OUTCOME_CANCELLED
                     : run->exit_code == 0 ? RUN_OUTCOME_SUCCESS
                     : run->exit_code > 0  ? RUN_OUTCOME_FAILURE
                                           : RUN_OUTCOME_UNKNOWN;
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
        if ((t->history_set && (strcmp(t->history_status, "failed") == 0 ||
                                strcmp(t->history_status, "canceled") == 0)) ||
            t->errors || t->canceled)
                return TARGET_FAILED;
        if (t->done || outcome == RUN_OUTCOME_SUCCESS)
                return TARGET_BUILT;
        if (outcome == RUN_OUTCOME_FAILURE || outcome == RUN_OUTCOME_CANCELLED)
                return TARGET_FAILED;
        return TARGET_SUCCESS_UNKNOWN;
}

static void fact_of(const struct targets *ts, const struct target *t, int outcome,
                    struct target_fact *f)
{
        bool hist = t->history_set && t->history_steps_set; /* history's counts win */

        *f = (struct target_fact){.start_s = t->first_seen, .end_s = t->last_seen};
        memcpy(f->name, t->name, sizeof(f->name));
        memcpy(f->builder, t->builder[0] ? t->builder : ts->builder, sizeof(f->builder));
        memcpy(f->node, t->node, sizeof(f->node));
        memcpy(f->ref, t->ref, sizeof(f->ref));
        if (t->history_set && isfinite(t->history_duration_s))
                f->duration_s = t->history_duration_s;
        else
                f->duration_s = isnan(t->first_seen) ? NAN : t->last_seen - t->first_seen;
        f->steps_set = hist || ts->buildkit_seen;
        if (f->steps_set) {
                f->steps = hist ? t->history_steps : t->steps;
                f->cached = hist ? t->history_cached : t->cached;
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
        bool front;
        int n;

        buf[0] = '\0';
        if (!ri->argv || !ri->argv[0])
                return false;
        slash = strrchr(ri->argv[0], '/');
        prog = slash ? slash + 1 : ri->argv[0];
        n = snprintf(buf, len, "%s", prog);
        if (n < 0 || (size_t)n >= len) {
                buf[0] = '\0';
                return false;
        }
        front = strcmp(prog, "docker") == 0 || strcmp(prog, "podman") == 0 ||
                strcmp(prog, "nerdctl") == 0;
        /* "buildx bake", "compose build": a word that does not fit is left out */
        for (size_t i = 1; front && i <= 2 && ri->argv[i] && ri->argv[i][0] != '-'; i++) {
                const char *w = ri->argv[i];
                size_t used = strlen(buf), k = strlen(w);

                if (used + 1 + k >= len)
                        break;
                buf[used] = ' ';
                memcpy(buf + used + 1, w, k + 1);
                if (strcmp(w, "buildx") != 0 && strcmp(w, "compose") != 0)
                        break;
        }
        return front;
}

void run_failure_set(struct run_failure *f, const char *target, const char *tool, const char *first,
                     const char *last)
{
        snprintf(f->target, sizeof(f->target), "%s", target ? target : "");
        snprintf(f->tool, sizeof(f->tool), "%s", tool ? tool : "");
        snprintf(f->first, sizeof(f->first), "%s", first ? first : "");
        snprintf(f->last, sizeof(f->last), "%s", last ? last : f->first);
        f->errors = !f->first[0] ? 0 : strcmp(f->first, f->last) != 0 ? 2 : 1;
}

void targets_facts(const struct targets *ts, const struct run_info *run, struct run_facts *ret)
{
        char fe[TARGET_FIELD_MAX + 1];

        memset(ret, 0, offsetof(struct run_facts, t)); /* t[] is filled up to n */
        facts_outcome(run, ret);
        if (!ts)
                return;
        if (ret->outcome == RUN_OUTCOME_FAILURE)
                ret->failure = ts->failure;
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
        /* 64 doubled reaches TARGETS_STEPS_MAX exactly: no cap needed */
        if (array_grow(&ts->stepv, &ts->capstepv, ts->nstepv, sizeof(*ts->stepv), 64) < 0) {
                ts->steps_dropped++;
                return -ENOMEM;
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
        free(ts->path);
        ts->path = NULL;
}

double targets_step_duration(const struct step_fact *s)
{
        return isnan(s->start_s) || isnan(s->end_s) ? NAN : MAX(s->end_s - s->start_s, 0.0);
}

int targets_ninja_offset(const struct targets *ts, const struct run_info *ri, double *ret_off)
{
        if (!ts || !ri || !ts->nedgev || !(ts->ninja_mtime > 0) || !isfinite(ri->start_epoch))
                return -ENODATA;
        return figure_ninja_offset(ri, ts->ninja_mtime, ts->ninja_max_end_ms, ret_off, NULL) < 0
                   ? -ENODATA
                   : 0;
}
