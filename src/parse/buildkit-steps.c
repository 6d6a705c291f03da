/* SPDX-License-Identifier: MIT */
/* The stream's vertices at its end: counted into the model's targets and
 * steps (which target each belongs to, cached, failed), and the plain
 * log counted alone (buildkit_count_log). */
#include "parse/buildkit.h"
#include "parse/buildkit-int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

/* The one definition of a target's steps (README "Steps and cached"): its
 * own "[stage i/n] INSTR" vertices, internal ones left out, vertices of one
 * name one step; cached when BuildKit took every vertex of it from the
 * cache, or, for a FROM, when it did nothing (an image already there:
 * BuildKit prints CACHED on one build and a bare DONE on the next, and in
 * a bake whose targets share the stage, a target's record can end with
 * the FROM's header alone, after its export: never ended, since the other
 * target's job resolved it). ended_ok: the stream exported and nothing in
 * it failed or was canceled (a FROM cut off by a failure did not end). */
static bool vtx_cached(const struct vtx *v, bool ended_ok)
{
        if (v->state == V_CACHED)
                return true;
        if (!v->from || v->worked)
                return false;
        return v->state == V_DONE || (ended_ok && (v->state == V_NEW || v->state == V_RUNNING));
}

bool buildkit_ended_ok(const struct buildkit *b)
{
        bool exported = false;

        for (uint32_t i = 0; i < b->nv; i++) {
                if (b->v[i].state == V_ERROR || b->v[i].state == V_CANCELED)
                        return false;
                exported |= b->v[i].exporting && b->v[i].state == V_DONE;
        }
        return exported;
}

/* The step's name without the target's prefix token (multi-target: "[app
 * common 2/3] RUN x" is step "common 2/3] RUN x" of app), hashed. */
static uint64_t step_key(const struct vtx *v, bool multi)
{
        const char *s = v->name ? v->name : "", *close = strchr(s, ']');

        if (multi && s[0] == '[' && close) {
                const char *sp = memchr(s, ' ', (size_t)(close - s));
                if (sp)
                        s = sp + 1;
        }
        return fnv1a(FNV1A_OFFSET, s, strlen(s));
}

/* Steps seen, by (key, owner): open addressing, grown at half load. */
struct stepset {
        struct stepent {
                uint64_t key;
                int32_t owner; /* a target index, or -1: the whole run */
                bool used, cached;
        } * e;
        size_t n, cap;
};

/* The entry of (key, owner), added (with *added) when new; NULL out of
 * memory. */
static struct stepent *stepset_get(struct stepset *ss, uint64_t key, int32_t owner, bool *added)
{
        uint64_t h = key ^ ((uint64_t)(uint32_t)owner * 0x9e3779b97f4a7c15ULL);
        size_t j;

        if ((ss->n + 1) * 2 > ss->cap) { /* rehashed into one twice the size */
                struct stepset ns = {.cap = ss->cap ? ss->cap * 2 : 256};
                bool a;

                if (!(ns.e = calloc(ns.cap, sizeof(*ns.e))))
                        return NULL;
                for (size_t i = 0; i < ss->cap; i++)
                        if (ss->e[i].used)
                                *stepset_get(&ns, ss->e[i].key, ss->e[i].owner, &a) = ss->e[i];
                free(ss->e);
                *ss = ns;
        }
        for (j = bk_slot_of(h, (uint32_t)ss->cap); ss->e[j].used; j = (j + 1) & (ss->cap - 1))
                if (ss->e[j].key == key && ss->e[j].owner == owner) {
                        *added = false;
                        return &ss->e[j];
                }
        ss->e[j] = (struct stepent){.key = key, .owner = owner, .used = true};
        ss->n++;
        *added = true;
        return &ss->e[j];
}

/* Count v, a step of owner, into *steps and *cached: once per name, and
 * cached only while every vertex of the name is. */
static void count_step(struct stepset *ss, uint64_t key, int32_t owner, bool cached,
                       uint32_t *steps, uint32_t *cached_n)
{
        bool added = true;
        struct stepent *e = ss ? stepset_get(ss, key, owner, &added) : NULL;

        if (e && !added) {
                if (e->cached && !cached) {
                        e->cached = false;
                        --*cached_n;
                }
                return;
        }
        ++*steps; /* a new name, or out of memory: every vertex counts */
        *cached_n += cached;
        if (e)
                e->cached = cached;
}

/* v as a step fact of the model: from its first line to the line that
 * ended it; when BuildKit gave its own time (rawjson's started/completed,
 * plain's "DONE 1.4s"), that long, ending at that line (a vertex's lines
 * can come in one burst when it ends), never before the run began. */
static void add_step(struct targets *ts, const struct vtx *v, bool ended_ok)
{
        struct step_fact f = {.target = v->target, .start_s = v->first, .end_s = v->end};
        double bk = NAN;

        copy_utf8_str(f.name, sizeof(f.name), v->name);
        if (!isnan(v->bk_started) && !isnan(v->bk_done) && v->bk_done >= v->bk_started)
                bk = v->bk_done - v->bk_started;
        else if (!isnan(v->bk_secs))
                bk = v->bk_secs;
        if (!isnan(bk) && !isnan(f.end_s))
                f.start_s = f.end_s - bk > 0 ? f.end_s - bk : 0;
        f.step = v->step;
        f.cached = vtx_cached(v, ended_ok);
        f.error = v->state == V_ERROR;
        f.canceled = v->state == V_CANCELED;
        (void)targets_add_step(ts, &f);
}

/* The targets of the stream, touched with their vertices' times; map[c]:
 * candidate c's target. */
static void map_targets(struct buildkit *b, struct targets *ts, int *map)
{
        double first[TARGETS_MAX], last[TARGETS_MAX];

        for (size_t i = 0; i < b->ncands; i++)
                first[i] = last[i] = NAN;
        for (uint32_t i = 0; i < b->nv; i++) {
                const struct vtx *v = &b->v[i];

                if (isnan(v->first))
                        continue;
                for (int c = bit_next(v->cands, 0); c >= 0; c = bit_next(v->cands, c + 1)) {
                        if (isnan(first[c]) || v->first < first[c])
                                first[c] = v->first;
                        if (isnan(last[c]) || v->last > last[c])
                                last[c] = v->last;
                }
        }
        for (size_t i = 0; i < b->ncands; i++) {
                size_t t = targets_get(ts, b->cands[i].name, strlen(b->cands[i].name));
                map[i] = (int)t;
                if (!isnan(first[i])) {
                        targets_touch(ts, t, first[i]);
                        targets_touch(ts, t, last[i]);
                }
        }
}

/* One named vertex into the run's and its targets' counts. */
static void count_vertex(struct targets *ts, struct stepset *ss, struct vtx *v, const int *map,
                         int single, bool multi, bool ended_ok)
{
        uint64_t tm[CAND_WORDS] = {0}, key = v->step ? step_key(v, multi) : 0;
        bool cached = vtx_cached(v, ended_ok);
        int first_t;

        if (single >= 0)
                bit_set(tm, (size_t)single);
        else
                for (int c = bit_next(v->cands, 0); c >= 0; c = bit_next(v->cands, c + 1))
                        bit_set(tm, (size_t)map[c]);
        first_t = bit_next(tm, 0);
        if (v->step)
                count_step(ss, key, -1, cached, &ts->steps, &ts->cached);
        else
                ts->internal++;
        ts->errors += v->state == V_ERROR;
        ts->canceled += v->state == V_CANCELED;
        v->target = first_t >= 0 && bit_next(tm, first_t + 1) < 0 ? (int16_t)first_t : -1;
        add_step(ts, v, ended_ok);
        if (v->state == V_ERROR && ts->nfailed < TARGETS_FAILED_MAX) {
                struct failed_step *f = &ts->failed[ts->nfailed++];
                copy_utf8_str(f->name, sizeof(f->name), v->name);
                f->target = v->target;
        }
        for (int k = first_t; k >= 0; k = bit_next(tm, k + 1)) {
                struct target *t = &ts->t[k];
                if (v->step)
                        count_step(ss, key, k, cached, &t->steps, &t->cached);
                else
                        t->internal++;
                t->errors += v->state == V_ERROR;
                t->canceled += v->state == V_CANCELED;
                if (v->exporting && v->state == V_DONE)
                        t->done = true;
        }
}

bool buildkit_multi(const struct buildkit *b)
{
        return b->cfg.ntargets > 1 || b->multi_evidence;
}

void buildkit_finish(struct buildkit *b, struct targets *ts)
{
        int map[TARGETS_MAX];
        bool multi = buildkit_multi(b), ended_ok;
        struct stepset ss = {0};
        int single = -1;

        bk_flush_carry(b);
        ts->buildkit_seen = b->seen;
        if (b->builder[0])
                memcpy(ts->builder, b->builder, sizeof(ts->builder));
        if (!b->seen && b->cfg.ntargets == 0)
                return;
        for (size_t i = 0; i < b->cfg.ntargets; i++)
                (void)targets_get(ts, b->cfg.targets[i], strlen(b->cfg.targets[i]));
        if (multi) {
                map_targets(b, ts, map);
        } else if (b->seen || b->cfg.ntargets) {
                const char *nm = b->cfg.ntargets == 1 ? b->cfg.targets[0] : "default";
                single = (int)targets_get(ts, nm, strlen(nm));
                if (!isnan(b->first)) {
                        targets_touch(ts, (size_t)single, b->first);
                        targets_touch(ts, (size_t)single, b->last);
                }
        }
        ended_ok = buildkit_ended_ok(b);
        for (uint32_t i = 0; i < b->nv; i++)
                if (b->v[i].named)
                        count_vertex(ts, &ss, &b->v[i], map, single, multi, ended_ok);
        free(ss.e);
        for (size_t i = 0; i < ts->n; i++)
                if (!ts->t[i].builder[0] && b->builder[0])
                        memcpy(ts->t[i].builder, b->builder, sizeof(b->builder));
}

/* "i/n" (is_step_token's) as numbers; false past 999999999 or for 0. */
static bool step_numbers(const char *s, size_t len, uint32_t *ret_i, uint32_t *ret_n)
{
        const char *p = s, *end = s + len;
        uint64_t i, n;

        if (parse_u64(&p, end, &i) < 0 || !skip_prefix(&p, end, "/") ||
            parse_u64(&p, end, &n) < 0 || i - 1 >= 999999999 || n - 1 >= 999999999)
                return false;
        *ret_i = (uint32_t)i;
        *ret_n = (uint32_t)n;
        return true;
}

bool buildkit_step_place(const char *name, bool strip_target, struct step_place *ret)
{
        const char *close = name[0] == '[' ? strchr(name, ']') : NULL, *p, *tok, *last = NULL;
        uint64_t h = FNV1A_OFFSET;
        size_t last_len = 0;
        bool first = true;

        if (!close)
                return false;
        /* the last token, then every one before it into the stage's hash */
        for (p = name + 1; p < close;) {
                size_t n = bk_next_token(&p, close, &tok);
                if (n) {
                        last = tok;
                        last_len = n;
                }
        }
        if (!last || !bk_is_step_token(last, last_len) ||
            !step_numbers(last, last_len, &ret->i, &ret->n))
                return false;
        for (p = name + 1; p < last;) {
                if (!bk_next_token(&p, last, &tok))
                        continue;
                if (!first || !strip_target)
                        h = fnv1a(fnv1a(h, tok, (size_t)(p - tok)), " ", 1);
                first = false;
        }
        ret->stage = h;
        return true;
}

static int place_cmp(const void *a, const void *b)
{
        const struct step_place *x = a, *y = b;
        int c = (x->stage > y->stage) - (x->stage < y->stage);

        c = c ? c : (x->n > y->n) - (x->n < y->n);
        c = c ? c : (x->i > y->i) - (x->i < y->i);
        return c ? c : (x->owner > y->owner) - (x->owner < y->owner);
}

void buildkit_sort_places(struct step_place *v, size_t n)
{
        if (n > 1)
                qsort(v, n, sizeof(*v), place_cmp);
}

void buildkit_complete_steps(const struct step_place *v, size_t n, int32_t owner, uint32_t *steps,
                             uint32_t *cached)
{
        for (size_t g = 0, ge; g < n; g = ge) {
                bool mine = false;

                for (ge = g; ge < n && v[ge].stage == v[g].stage && v[ge].n == v[g].n; ge++)
                        mine |= v[ge].owner == owner;
                if (!mine)
                        continue;
                /* each i of the stage, its places together (sorted) */
                for (size_t k = g, ke; k < ge; k = ke) {
                        bool own = false, others_cached = true;

                        for (ke = k; ke < ge && v[ke].i == v[k].i; ke++) {
                                own |= v[ke].owner == owner;
                                if (v[ke].owner != owner)
                                        others_cached &= v[ke].cached;
                        }
                        if (own || v[k].i > v[k].n)
                                continue;
                        ++*steps;
                        *cached += others_cached;
                }
        }
}

int buildkit_vertex_target(const struct buildkit *b, uint32_t vidx)
{
        return vidx < b->nv ? b->v[vidx].target : -1;
}

bool buildkit_vertex_cached(const struct buildkit *b, uint32_t vidx)
{
        return vidx < b->nv && b->v[vidx].state == V_CACHED;
}

int buildkit_marker_vertex(const struct buildkit *b, size_t marker, uint32_t *ret)
{
        if (marker >= BUILDKIT_MAX_MARKERS || !b->marker_v[marker])
                return -ENOENT;
        *ret = b->marker_v[marker] - 1;
        return 0;
}

int buildkit_replay(struct buildkit *b, const char *buf, size_t len, struct targets *ts)
{
        targets_init_zeroed(ts);
        for (const char *p = buf, *end = buf + len, *le; p < end; p = next_line(le, end)) {
                struct bkline bl;

                le = line_end(p, end);
                bkline_parse(p, (size_t)(le - p), &bl);
                (void)buildkit_feed_line_bk(b, p, (size_t)(le - p), 0, &bl);
        }
        buildkit_finish(b, ts);
        return ts->buildkit_seen ? 0 : -EINVAL;
}

int buildkit_count_log(const char *buf, size_t len, uint32_t *ret_steps, uint32_t *ret_cached)
{
        struct buildkit_config bc = {0};
        struct buildkit *b = NULL;
        _cleanup_free_ struct targets *ts = calloc(1, sizeof(*ts));
        int e = ts ? buildkit_new(&bc, &b) : -ENOMEM;

        if (e < 0)
                return e;
        e = buildkit_replay(b, buf, len, ts);
        if (e == 0) {
                *ret_steps = ts->steps;
                *ret_cached = ts->cached;
        }
        buildkit_free(b);
        targets_release(ts);
        return e;
}
