/* SPDX-License-Identifier: MIT */
#include "parse/buildmetrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/ranges.h"
#include "parse/bakemeta.h"
#include "parse/buildkit.h"
#include "parse/ccstats.h"
#include "parse/failure.h"
#include "util/macro.h"
#include "util/util.h"

/* The seed's default marker table. */
static const struct sccache_marker default_markers[] = {
    {"pytorch", "/opt/pytorch/sccache-stats.txt"},
    {"triton-wheel", "/wheels-triton-sccache-stats.txt"},
    {"aiter-wheel", "/wheels-aiter-sccache-stats.txt"},
    {"torchvision-wheel", "/wheels-torchvision-sccache-stats.txt"},
};

/* The stats blocks of one tool printed by one source (a BuildKit vertex,
 * or the plain stream): the first and the last, or a zeroing. Counters are
 * cumulative (per cache dir, per sccache server), so a build that prints
 * them before and after gets the difference; one printed only at the end
 * gets them as printed. */
struct last_block {
        bool set, real; /* real: a printed block, not only a zeroing */
        struct ccstats first, st;
        uint32_t nblk;
        int64_t vidx; /* -1: not from a BuildKit vertex */
};

#define PROGRESS_BATCH 64

struct buildmetrics {
        struct buildmetrics_config cfg;
        char mtarget[BUILDKIT_MAX_MARKERS][TARGET_NAME_MAX + 1];
        const char *mpath[BUILDKIT_MAX_MARKERS];
        size_t nm;
        struct ccstats_parser mparser[BUILDKIT_MAX_MARKERS];
        char *targets_buf;
        const char *targets_list[TARGETS_MAX];
        size_t ntargets;
        struct buildkit *bk;
        struct ccstats_parser global;
        struct last_block sc, cc;
        double now; /* of the line being fed */
        struct failure fail;
        struct targets model;
        /* buildmetrics_chunk: the progress lines of the chunk, not parsed
         * yet; see flush_progress(). */
        const char *chunk, *chunk_end;
        struct pending_progress {
                const char *s, *end;
                bool make; /* "[ nn%": a make figure or none; else ninja's or none */
        } prog[PROGRESS_BATCH];
        size_t nprog, nmake;
        /* the steps' places of each replayed record that ended ok (owner:
         * its target), for buildmetrics_history_done() */
        struct step_place *places;
        size_t nplaces, capplaces;
        bool rec_ok[TARGETS_MAX];
};

static void add_marker(struct buildmetrics *bm, const char *spec, const char *path)
{
        char target[TARGET_NAME_MAX + 1];

        copy_utf8(target, sizeof(target), spec, strcspn(spec, "="));
        for (size_t i = 0; i < bm->nm; i++)
                if (strcmp(bm->mtarget[i], target) == 0) {
                        bm->mpath[i] = path;
                        return;
                }
        if (bm->nm == BUILDKIT_MAX_MARKERS)
                return;
        memcpy(bm->mtarget[bm->nm], target, sizeof(target));
        bm->mpath[bm->nm++] = path;
}

/* Whether [s, s+len) lies in the chunk being fed (buildmetrics_chunk). */
static inline bool in_chunk(const struct buildmetrics *bm, const char *s, size_t len)
{
        return bm->chunk && s >= bm->chunk && len <= (size_t)(bm->chunk_end - s);
}

enum progress_kind { PROGRESS_NONE, PROGRESS_MAKE, PROGRESS_NINJA };

/* "[n/m...] " (ninja: *a of *b) or "[ nn%] " (make / CMake: *a). */
static enum progress_kind progress_parse(const char *s, const char *end, uint64_t *a, uint64_t *b)
{
        const char *c = s + 1;

        if (!(c < end && (*c == ' ' || (*c >= '0' && *c <= '9'))))
                return PROGRESS_NONE;
        c = skip_sp(c, end);
        if (parse_u64(&c, end, a) < 0 || c >= end)
                return PROGRESS_NONE;
        if (*c == '%' && c + 1 < end && c[1] == ']' && range_ok_u64(RANGE_PERCENT, *a))
                return PROGRESS_MAKE;
        if (*c++ != '/' || parse_u64(&c, end, b) < 0 || *a > *b ||
            !range_ok_u64(RANGE_EVENTS, *b) ||
            !(c < end && (*c == ']' || memchr(c, ']', (size_t)(end - c)))))
                return PROGRESS_NONE;
        return PROGRESS_NINJA;
}

/* The progress lines batched, as if each had been parsed in turn: the last
 * that parses sets each of make's and ninja's figures, so they are tried
 * from the end, and most are never parsed. */
static void flush_progress(struct buildmetrics *bm)
{
        bool make = bm->nmake == 0, ninja = bm->nmake == bm->nprog;

        for (size_t i = bm->nprog; i-- > 0 && !(make && ninja);) {
                const struct pending_progress *p = &bm->prog[i];
                uint64_t a, b;
                enum progress_kind k;

                if (p->make ? make : ninja)
                        continue;
                k = progress_parse(p->s, p->end, &a, &b);
                if (k == PROGRESS_MAKE) {
                        bm->model.make_pct = (int)a;
                } else if (k == PROGRESS_NINJA) {
                        bm->model.ninja_done = a;
                        bm->model.ninja_total = b;
                }
                make = make || k == PROGRESS_MAKE;
                ninja = ninja || k == PROGRESS_NINJA;
        }
        bm->nprog = bm->nmake = 0;
}

/* A line of the chunk that may be progress: kept with which figure it may
 * set, by the byte after its first number (as progress_parse decides). */
static inline void keep_progress(struct buildmetrics *bm, const char *s, const char *end)
{
        const char *c = skip_sp(s + 1, end);

        while (c < end && (unsigned char)(*c - '0') < 10)
                c++;
        if (c >= end || (*c != '%' && *c != '/'))
                return; /* progress_parse says none */
        if (bm->nprog == PROGRESS_BATCH)
                flush_progress(bm);
        bm->prog[bm->nprog++] = (struct pending_progress){s, end, *c == '%'};
        bm->nmake += *c == '%';
}

void buildmetrics_chunk(struct buildmetrics *bm, const char *buf, size_t len)
{
        flush_progress(bm);
        bm->chunk = buf;
        bm->chunk_end = buf ? buf + len : NULL;
}

static void block_seen(struct last_block *lb, const struct ccstats *st, int64_t vidx, bool is_new)
{
        if (!is_new) { /* more figures of the block just seen */
                if (lb->set && lb->nblk == 1)
                        lb->first = *st;
                if (lb->set)
                        lb->st = *st;
                return;
        }
        if (lb->set && lb->vidx == vidx) {
                lb->st = *st;
                lb->nblk++;
        } else {
                lb->set = true;
                lb->vidx = vidx;
                lb->first = lb->st = *st;
                lb->nblk = 1;
        }
        lb->real = true;
}

static void zeroed(struct last_block *lb, int64_t vidx)
{
        struct ccstats zero = {.kind = CCSTATS_CCACHE};

        if (!lb->set || lb->vidx != vidx) /* not real: a zeroing only */
                *lb = (struct last_block){.set = true, .vidx = vidx, .st = zero};
        lb->first = zero;
        lb->nblk = 1;
}

/* "Statistics zeroed", as ccache -z prints it (3.x and 4.x). */
static bool is_zeroed(const char *s, size_t len)
{
        if (len < 17 || s[0] != 'S')
                return false;
        while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
                len--;
        return len == 17 && memcmp(s, "Statistics zeroed", 17) == 0;
}

/* What one tool's blocks say about this build: one block, its counts;
 * more, the last less the first (figure_cc_delta(): after a reset, the
 * counts since it). */
static struct cc_counts block_counts(const struct last_block *lb)
{
        struct cc_counts c = {.set = true, .hits = lb->st.hits, .misses = lb->st.misses};

        if (lb->nblk >= 2)
                (void)figure_cc_delta(lb->first.hits, lb->first.misses, lb->st.hits, lb->st.misses,
                                      &c.hits, &c.misses);
        return c;
}

static void feed_text(struct buildmetrics *bm, int64_t vidx, const char *s, size_t len)
{
        /* No stats line and no "Statistics zeroed" starts with '[': a
         * progress line ends here. */
        if (len > 0 && s[0] == '[') {
                if (len <= 3)
                        return;
                /* one of the chunk's: parsed when the chunk goes or the
                 * model is read, if it is the last; else now */
                keep_progress(bm, s, s + len);
                if (!in_chunk(bm, s, len))
                        flush_progress(bm);
                return;
        }
        int r = ccstats_feed_line(&bm->global, s, len);

        if (r > 0) {
                const struct ccstats *st = &bm->global.last;
                bool sc = st->kind == CCSTATS_SCCACHE;
                struct cc_block b = {.seen = bm->now,
                                     .hits = st->hits,
                                     .misses = st->misses,
                                     .size_bytes = st->size_bytes,
                                     .max_size_bytes = st->max_size_bytes,
                                     .files = st->files};

                block_seen(sc ? &bm->sc : &bm->cc, st, vidx, r == 1);
                memcpy(b.version, st->version, MIN(sizeof(b.version), sizeof(st->version)));
                targets_note_cc_block(&bm->model, sc ? CC_TOOL_SCCACHE : CC_TOOL_CCACHE, &b,
                                      r == 1);
        } else if (is_zeroed(s, len)) {
                zeroed(&bm->cc, vidx); /* ccache -z: what follows counts from zero */
        }
}

_noinline_ static void log_slow(struct buildmetrics *bm, uint32_t vidx, int marker,
                                const char *text, size_t len)
{
        if (marker >= 0)
                (void)ccstats_feed_line(&bm->mparser[marker], text, len);
        feed_text(bm, vidx, text, len);
}

static void on_log(void *userdata, uint32_t vidx, int marker, const char *text, size_t len)
{
        struct buildmetrics *bm = userdata;

        /* Most log lines of a compile are progress ("[12/300] ..."): kept
         * as feed_text keeps them, with no call. */
        if (marker < 0 && len > 3 && text[0] == '[' && in_chunk(bm, text, len)) {
                keep_progress(bm, text, text + len);
                return;
        }
        log_slow(bm, vidx, marker, text, len);
}

int buildmetrics_new(const struct buildmetrics_config *cfg, struct buildmetrics **ret)
{
        struct buildmetrics *bm = calloc(1, sizeof(*bm));
        struct buildkit_config bc = {0};
        int e;

        if (!bm)
                return -ENOMEM;
        bm->cfg = *cfg;
        targets_init_zeroed(&bm->model); /* bm is calloc'd */
        ccstats_parser_init(&bm->global);
        for (size_t i = 0; i < ARRAY_SIZE(default_markers); i++)
                add_marker(bm, default_markers[i].target, default_markers[i].path);
        for (size_t i = 0; i < cfg->nmarkers; i++)
                add_marker(bm, cfg->markers[i].target, cfg->markers[i].path);
        for (size_t i = 0; i < bm->nm; i++)
                ccstats_parser_init(&bm->mparser[i]);
        if (cfg->targets && !(bm->targets_buf = strdup(cfg->targets))) {
                buildmetrics_free(bm);
                return -ENOMEM;
        }
        for (char *rest = bm->targets_buf, *tok;
             bm->ntargets < TARGETS_MAX && (tok = strsep(&rest, ","));)
                if (*tok)
                        bm->targets_list[bm->ntargets++] = tok;
        bc.targets = bm->targets_list;
        bc.ntargets = bm->ntargets;
        bc.markers = bm->mpath;
        bc.nmarkers = bm->nm;
        bc.log = on_log;
        bc.ctx = cfg->ctx_line;
        bc.ctx_userdata = cfg->ctx_userdata;
        bc.userdata = bm;
        e = buildkit_new(&bc, &bm->bk);
        if (e < 0) {
                buildmetrics_free(bm);
                return e;
        }
        *ret = bm;
        return 0;
}

void buildmetrics_free(struct buildmetrics *bm)
{
        if (!bm)
                return;
        buildkit_free(bm->bk);
        free(bm->places);
        targets_release(&bm->model);
        free(bm->targets_buf);
        free(bm);
}

const struct targets *buildmetrics_model(struct buildmetrics *bm)
{
        flush_progress(bm);
        return &bm->model;
}

bool buildmetrics_feed_line_bk(struct buildmetrics *bm, const char *line, size_t len, double now,
                               const struct bkline *bl)
{
        int k;

        bm->now = now;
        failure_line(&bm->fail, line, len);
        k = buildkit_feed_line_bk(bm->bk, line, len, now, bl);
        if (k == BK_LINE_PLAIN)
                return false;
        /* JSON lines too: sccache --stats-format=json prints one. */
        feed_text(bm, -1, line, len);
        return k == BK_LINE_JSON;
}

/* The target a stats block belongs to: the vertex's own, else the only
 * target, else a new "default"; -1 when several targets could own it. */
static int block_target(struct buildmetrics *bm, int64_t vidx)
{
        int t = vidx >= 0 ? buildkit_vertex_target(bm->bk, (uint32_t)vidx) : -1;

        if (t >= 0)
                return t;
        if (bm->model.n > 1)
                return -1;
        if (bm->model.n == 1)
                return 0;
        return (int)targets_get(&bm->model, "default", 7);
}

void buildmetrics_unseen_build(struct buildmetrics *bm)
{
        (void)targets_get(&bm->model, "default", 7);
}

void buildmetrics_unseen_drop(struct buildmetrics *bm)
{
        bm->model.n = 0;
}

/* The sccache stats p read of marker i's step (of b) into t, if the step
 * ran: a layer-cached step ran nothing, absent, not zero. */
static void marker_stats(struct buildkit *b, size_t i, const struct ccstats_parser *p,
                         struct target *t)
{
        uint32_t v;

        if (buildkit_marker_vertex(b, i, &v) < 0 || buildkit_vertex_cached(b, v) || !p->complete ||
            p->last.kind != CCSTATS_SCCACHE)
                return;
        t->sccache =
            (struct cc_counts){.set = true, .hits = p->last.hits, .misses = p->last.misses};
        t->sccache_guess = false;
}

static void attribute_stats(struct buildmetrics *bm)
{
        bool any_marker = false;
        int t;

        for (size_t i = 0; i < bm->nm; i++) {
                uint32_t v;

                if (buildkit_marker_vertex(bm->bk, i, &v) < 0)
                        continue;
                any_marker = true;
                t = targets_find(&bm->model, bm->mtarget[i]);
                if (t < 0)
                        t = buildkit_vertex_target(bm->bk, v);
                if (t >= 0)
                        marker_stats(bm->bk, i, &bm->mparser[i], &bm->model.t[t]);
        }
        if (!any_marker && bm->sc.real && (t = block_target(bm, bm->sc.vidx)) >= 0) {
                bm->model.t[t].sccache = block_counts(&bm->sc);
                bm->model.t[t].sccache_guess = true;
        }
        if (bm->cc.real && (t = block_target(bm, bm->cc.vidx)) >= 0)
                bm->model.t[t].ccache = block_counts(&bm->cc);
}

void buildmetrics_ninja_edge(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                             size_t out_len)
{
        struct buildmetrics *bm = userdata;

        /* counted (the slowest) and kept (the lanes: the trace, the history) */
        targets_offer_edge(&bm->model, start_ms, end_ms, out, out_len);
        targets_keep_edge(&bm->model, start_ms, end_ms, out, out_len);
}

void buildmetrics_set_path(struct buildmetrics *bm, struct critpath *p)
{
        free(bm->model.path);
        bm->model.path = p;
}

void buildmetrics_ninja_done(struct buildmetrics *bm, uint64_t edges, double mtime)
{
        bm->model.ninja_log_set = true;
        bm->model.ninja_edges = edges;
        bm->model.ninja_mtime = mtime;
}

const char *buildmetrics_metadata_file(char *const *argv)
{
        for (size_t i = 0; argv && argv[i]; i++) {
                if (strcmp(argv[i], "--metadata-file") == 0 && argv[i + 1])
                        return argv[i + 1];
                if (strncmp(argv[i], "--metadata-file=", 16) == 0)
                        return argv[i] + 16;
        }
        return NULL;
}

int buildmetrics_metadata(struct buildmetrics *bm, const char *buf, size_t len)
{
        return bakemeta_parse(buf, len, &bm->model);
}

int buildmetrics_history(struct buildmetrics *bm, const char *buf, size_t len)
{
        struct buildx_history h;
        int e = buildx_history_parse(buf, len, &h);

        if (e >= 0)
                (void)buildx_history_apply(&h, &bm->model);
        return e;
}

/* history ls: the records of this run's time for the targets that have
 * no ref yet. */
struct ls_match {
        struct buildmetrics *bm;
        double from, to;
        uint32_t hits[TARGETS_MAX];
        struct buildx_record rec[TARGETS_MAX];
};

static void on_record(void *userdata, const struct buildx_record *r)
{
        struct ls_match *m = userdata;
        char tn[TARGET_NAME_MAX + 1];
        int t = -1;

        if (!(r->created_s >= m->from && r->created_s <= m->to))
                return;
        if (buildx_record_target(r->name, tn))
                t = targets_find(&m->bm->model, tn);
        else if (m->bm->model.n == 1)
                t = 0;
        if (t < 0 || m->bm->model.t[t].ref[0])
                return;
        m->hits[t]++;
        m->rec[t] = *r;
}

int buildmetrics_history_list(struct buildmetrics *bm, const char *buf, size_t len, double from_s,
                              double to_s, uint32_t *ret_ambiguous)
{
        _cleanup_free_ struct ls_match *m = calloc(1, sizeof(*m));
        uint32_t amb = 0;
        int n = 0;

        if (!m)
                return -ENOMEM;
        m->bm = bm;
        m->from = from_s;
        m->to = to_s;
        if (buildx_history_ls_parse(buf, len, on_record, m) < 0 && len > 1)
                return -EINVAL;
        for (size_t i = 0; i < bm->model.n && i < TARGETS_MAX; i++) {
                struct target *t = &bm->model.t[i];
                const struct buildx_record *r = &m->rec[i];

                amb += m->hits[i] > 1;
                if (m->hits[i] != 1)
                        continue;
                memcpy(t->ref, r->ref, sizeof(t->ref));
                n++;
                /* a finished record's status and time: inspect's, but for
                 * the context's revision */
                if (r->status[0]) {
                        t->history_set = true;
                        t->history_duration_s = r->duration_s;
                        memcpy(t->history_status, r->status, sizeof(t->history_status));
                }
        }
        *ret_ambiguous = amb;
        return n;
}

/* A record's replay: the sccache stats of its marker steps. */
struct replay {
        struct ccstats_parser mp[BUILDKIT_MAX_MARKERS];
};

static void replay_log(void *userdata, uint32_t vidx, int marker, const char *text, size_t len)
{
        struct replay *rp = userdata;

        if (marker >= 0)
                (void)ccstats_feed_line(&rp->mp[marker], text, len);
}

/* Marker i's stats of the replay of target t into t, unless the live
 * stream's marker step gave them. */
static void replay_sccache(struct buildmetrics *bm, struct buildkit *b, const struct replay *rp,
                           struct target *t)
{
        for (size_t i = 0; i < bm->nm; i++) {
                if (strcmp(bm->mtarget[i], t->name) != 0 &&
                    targets_find(&bm->model, bm->mtarget[i]) >= 0)
                        continue; /* another target's marker */
                if (!t->sccache.set || t->sccache_guess)
                        marker_stats(b, i, &rp->mp[i], t);
        }
}

/* The places of ts's steps as owner's (strip: a multi-target stream's
 * names). false, and none of them kept, out of memory. */
static bool keep_places(struct buildmetrics *bm, const struct targets *ts, bool strip,
                        int32_t owner)
{
        size_t n0 = bm->nplaces;

        for (uint32_t i = 0; i < ts->nstepv; i++) {
                struct step_place p;

                if (!ts->stepv[i].step || !buildkit_step_place(ts->stepv[i].name, strip, &p))
                        continue;
                if (array_grow(&bm->places, &bm->capplaces, bm->nplaces, sizeof(*bm->places), 64) <
                    0) {
                        bm->nplaces = n0;
                        return false;
                }
                p.owner = owner;
                p.cached = ts->stepv[i].cached;
                bm->places[bm->nplaces++] = p;
        }
        return true;
}

int buildmetrics_history_logs(struct buildmetrics *bm, const char *ref, const char *buf, size_t len)
{
        _cleanup_free_ struct replay *rp = calloc(1, sizeof(*rp));
        _cleanup_free_ struct targets *rt = calloc(1, sizeof(*rt));
        struct buildkit_config bc = {
            .ntargets = 1, .markers = bm->mpath, .nmarkers = bm->nm, .log = replay_log};
        struct buildkit *b = NULL;
        struct target *t = NULL;
        const char *name;
        int e;

        for (size_t i = 0; i < bm->model.n && !t; i++)
                if (bm->model.t[i].ref[0] && strcmp(bm->model.t[i].ref, buildx_bare_id(ref)) == 0)
                        t = &bm->model.t[i];
        if (!t)
                return -ENOENT;
        if (!rp || !rt)
                return -ENOMEM;
        name = t->name;
        bc.targets = &name;
        bc.userdata = rp;
        for (size_t i = 0; i < bm->nm; i++)
                ccstats_parser_init(&rp->mp[i]);
        e = buildkit_new(&bc, &b);
        if (e < 0)
                return e;
        e = buildkit_replay(b, buf, len, rt);
        if (e == 0) { /* rt->t[0]: the record's target, named in bc */
                int32_t ti = (int32_t)(t - bm->model.t);

                t->history_steps_set = true;
                t->history_steps = rt->t[0].steps;
                t->history_cached = rt->t[0].cached;
                replay_sccache(bm, b, rp, t);
                if (buildkit_ended_ok(b))
                        bm->rec_ok[ti] = keep_places(bm, rt, false, ti);
        }
        buildkit_free(b);
        targets_release(rt);
        return e;
}

void buildmetrics_history_done(struct buildmetrics *bm)
{
        bool any = false;

        for (size_t i = 0; i < bm->model.n; i++)
                any |= bm->rec_ok[i];
        /* the live stream's places: where a step a record lacks may have
         * been printed, under another target */
        if (any && keep_places(bm, &bm->model, buildkit_multi(bm->bk), -1)) {
                buildkit_sort_places(bm->places, bm->nplaces);
                for (size_t i = 0; i < bm->model.n; i++)
                        if (bm->rec_ok[i])
                                buildkit_complete_steps(bm->places, bm->nplaces, (int32_t)i,
                                                        &bm->model.t[i].history_steps,
                                                        &bm->model.t[i].history_cached);
        }
        memset(bm->rec_ok, 0, sizeof(bm->rec_ok));
        free(bm->places);
        bm->places = NULL;
        bm->nplaces = bm->capplaces = 0;
}

void buildmetrics_finish(struct buildmetrics *bm)
{
        flush_progress(bm);
        buildkit_finish(bm->bk, &bm->model);
        attribute_stats(bm);
        bm->model.failure = bm->fail.r;
}
