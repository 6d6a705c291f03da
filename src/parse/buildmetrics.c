/* SPDX-License-Identifier: MIT */
#include "parse/buildmetrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/ranges.h"
#include "parse/bakemeta.h"
#include "platform/buildx.h"
#include "parse/buildkit.h"
#include "parse/ccstats.h"
#include "parse/ninjalog.h"
#include "util/macro.h"
#include "util/util.h"

#define NINJA_LOG_MAX (256u << 20)
#define HISTORY_TIMEOUT_S 5.0
#define HISTORY_BUDGET_S 15.0

const struct sccache_marker buildmetrics_default_markers[] = {
    {"pytorch", "/opt/pytorch/sccache-stats.txt"},
    {"triton-wheel", "/wheels-triton-sccache-stats.txt"},
    {"aiter-wheel", "/wheels-aiter-sccache-stats.txt"},
    {"torchvision-wheel", "/wheels-torchvision-sccache-stats.txt"},
};
const size_t buildmetrics_default_nmarkers = ARRAY_SIZE(buildmetrics_default_markers);

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
        bool ninja_existed;
        off_t ninja_size;
        ino_t ninja_ino;
        double now; /* of the line being fed */
        struct targets model;
};

static void add_marker(struct buildmetrics *bm, const char *spec, const char *path)
{
        char target[TARGET_NAME_MAX + 1];

        targets_copy_field(target, sizeof(target), spec, strcspn(spec, "="));
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

static void feed_text(struct buildmetrics *bm, int64_t vidx, const char *s, size_t len);

static void on_log(void *userdata, uint32_t vidx, int marker, const char *text, size_t len)
{
        struct buildmetrics *bm = userdata;

        if (marker >= 0)
                (void)ccstats_feed_line(&bm->mparser[marker], text, len);
        feed_text(bm, vidx, text, len);
}

int buildmetrics_new(const struct buildmetrics_config *cfg, struct buildmetrics **ret)
{
        struct buildmetrics *bm = calloc(1, sizeof(*bm));
        struct buildkit_config bc = {0};
        struct stat st;
        int e;

        if (!bm)
                return -ENOMEM;
        bm->cfg = *cfg;
        targets_init_zeroed(&bm->model); /* bm is calloc'd */
        ccstats_parser_init(&bm->global);
        for (size_t i = 0; i < buildmetrics_default_nmarkers; i++)
                add_marker(bm, buildmetrics_default_markers[i].target,
                           buildmetrics_default_markers[i].path);
        for (size_t i = 0; i < cfg->nmarkers && i < BUILDMETRICS_MAX_MARKERS; i++)
                add_marker(bm, cfg->markers[i].target, cfg->markers[i].path);
        for (size_t i = 0; i < bm->nm; i++)
                ccstats_parser_init(&bm->mparser[i]);
        if (cfg->targets) {
                char *p;
                bm->targets_buf = strdup(cfg->targets);
                if (!bm->targets_buf) {
                        free(bm);
                        return -ENOMEM;
                }
                for (char *tok = bm->targets_buf; tok && bm->ntargets < TARGETS_MAX; tok = p) {
                        p = strchr(tok, ',');
                        if (p)
                                *p++ = '\0';
                        if (*tok)
                                bm->targets_list[bm->ntargets++] = tok;
                }
        }
        bc.targets = bm->targets_list;
        bc.ntargets = bm->ntargets;
        bc.markers = bm->mpath;
        bc.nmarkers = bm->nm;
        bc.log = on_log;
        bc.userdata = bm;
        e = buildkit_new(&bc, &bm->bk);
        if (e < 0) {
                free(bm->targets_buf);
                free(bm);
                return e;
        }
        if (cfg->ninja_log && stat(cfg->ninja_log, &st) == 0) {
                bm->ninja_existed = true;
                bm->ninja_size = st.st_size;
                bm->ninja_ino = st.st_ino;
        }
        *ret = bm;
        return 0;
}

void buildmetrics_free(struct buildmetrics *bm)
{
        if (!bm)
                return;
        buildkit_free(bm->bk);
        targets_release(&bm->model);
        free(bm->targets_buf);
        free(bm);
}

const struct targets *buildmetrics_model(const struct buildmetrics *bm)
{
        return &bm->model;
}

/* "[n/m...] " (ninja) or "[ nn%] " (make / CMake). */
static void progress(struct buildmetrics *bm, const char *s, const char *end)
{
        const char *c = s + 1;
        uint64_t a, b;

        if (c < end && (*c == ' ' || (*c >= '0' && *c <= '9'))) {
                while (c < end && *c == ' ')
                        c++;
                if (parse_u64(&c, end, &a) < 0 || c >= end)
                        return;
                if (*c == '%' && c + 1 < end && c[1] == ']' && range_ok_u64(RANGE_PERCENT, a)) {
                        bm->model.make_pct = (int)a;
                        return;
                }
                if (*c++ != '/' || parse_u64(&c, end, &b) < 0 || a > b ||
                    !range_ok_u64(RANGE_EVENTS, b) || !memchr(c, ']', (size_t)(end - c)))
                        return;
                bm->model.ninja_done = a;
                bm->model.ninja_total = b;
        }
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

        if (!lb->set || lb->vidx != vidx) {
                *lb = (struct last_block){.set = true, .vidx = vidx, .st = zero};
                lb->real = false;
        }
        lb->first = zero;
        lb->nblk = 1;
}

/* "Statistics zeroed", as ccache -z prints it (3.x and 4.x). */
static bool is_zeroed(const char *s, size_t len)
{
        while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
                len--;
        return len == 17 && memcmp(s, "Statistics zeroed", 17) == 0;
}

/* What one tool's blocks say about this build. */
static struct ccstats block_counts(const struct last_block *lb)
{
        struct ccstats c = lb->st;

        if (lb->nblk >= 2 && lb->st.hits >= lb->first.hits && lb->st.misses >= lb->first.misses) {
                c.hits -= lb->first.hits;
                c.misses -= lb->first.misses;
        }
        return c;
}

static void feed_text(struct buildmetrics *bm, int64_t vidx, const char *s, size_t len)
{
        if (len > 3 && s[0] == '[')
                progress(bm, s, s + len);
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

void buildmetrics_feed_line(struct buildmetrics *bm, const char *line, size_t len, double now)
{
        bm->now = now;
        if (!buildkit_feed_line(bm->bk, line, len, now))
                feed_text(bm, -1, line, len);
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

static void attribute_stats(struct buildmetrics *bm)
{
        bool any_marker = false;

        for (size_t i = 0; i < bm->nm; i++) {
                uint32_t v;
                int t;

                if (buildkit_marker_vertex(bm->bk, i, &v) < 0)
                        continue;
                any_marker = true;
                t = targets_find(&bm->model, bm->mtarget[i]);
                if (t < 0)
                        t = buildkit_vertex_target(bm->bk, v);
                if (t < 0)
                        continue;
                /* A layer-cached step ran nothing: absent, not zero. */
                if (buildkit_vertex_cached(bm->bk, v) || !bm->mparser[i].complete ||
                    bm->mparser[i].last.kind != CCSTATS_SCCACHE)
                        continue;
                bm->model.t[t].sccache.set = true;
                bm->model.t[t].sccache.hits = bm->mparser[i].last.hits;
                bm->model.t[t].sccache.misses = bm->mparser[i].last.misses;
                bm->model.t[t].sccache_guess = false;
        }
        if (!any_marker && bm->sc.real && block_target(bm, bm->sc.vidx) >= 0) {
                struct target *t = &bm->model.t[block_target(bm, bm->sc.vidx)];
                struct ccstats c = block_counts(&bm->sc);
                t->sccache.set = true;
                t->sccache.hits = c.hits;
                t->sccache.misses = c.misses;
                t->sccache_guess = true;
        }
        if (bm->cc.real && block_target(bm, bm->cc.vidx) >= 0) {
                struct target *t = &bm->model.t[block_target(bm, bm->cc.vidx)];
                struct ccstats c = block_counts(&bm->cc);
                t->ccache.set = true;
                t->ccache.hits = c.hits;
                t->ccache.misses = c.misses;
        }
}

static void import_ninja_log(struct buildmetrics *bm, buildmetrics_note_fn note, void *ud)
{
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0;
        bool whole;
        int e;

        if (!bm->cfg.ninja_log)
                return;
        if (stat(bm->cfg.ninja_log, &st) < 0) {
                note(ud, "--ninja-log '%s': %s", bm->cfg.ninja_log, strerror(errno));
                return;
        }
        /* Rewritten (recompacted, or a new build dir): take its last run. */
        whole = !bm->ninja_existed || st.st_ino != bm->ninja_ino || st.st_size < bm->ninja_size;
        if (!whole && st.st_size == bm->ninja_size) {
                bm->model.ninja_log_set = true; /* nothing ran */
                return;
        }
        /* Only this run's tail when the log was appended to. */
        e = read_regular_file(bm->cfg.ninja_log, whole ? 0 : (uint64_t)bm->ninja_size,
                              NINJA_LOG_MAX, &buf, &len);
        if (e < 0) {
                note(ud, "--ninja-log '%s': %s", bm->cfg.ninja_log,
                     e == -ESPIPE ? "not a regular file" : strerror(-e));
                return;
        }
        if (!whole)
                e = ninjalog_parse(buf, len, false, &bm->model);
        else
                e = ninjalog_parse(buf, len, !bm->ninja_existed ? false : true, &bm->model);
        if (e < 0)
                note(ud, "--ninja-log '%s': not a .ninja_log of version 5 to 7", bm->cfg.ninja_log);
        else
                bm->model.ninja_mtime =
                    (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
}

static const char *metadata_file(char *const *argv)
{
        for (size_t i = 0; argv && argv[i]; i++) {
                if (strcmp(argv[i], "--metadata-file") == 0 && argv[i + 1])
                        return argv[i + 1];
                if (strncmp(argv[i], "--metadata-file=", 16) == 0)
                        return argv[i] + 16;
        }
        return NULL;
}

static void import_metadata(struct buildmetrics *bm, char *const *argv, buildmetrics_note_fn note,
                            void *ud)
{
        const char *f = metadata_file(argv);
        _cleanup_free_ char *buf = NULL;
        double budget_end = now_monotonic() + HISTORY_BUDGET_S;
        size_t len = 0;
        int e;

        if (!f)
                return;
        e = read_regular_file(f, 0, BAKEMETA_MAX_FILE, &buf, &len);
        if (e >= 0)
                e = bakemeta_parse(buf, len, &bm->model);
        if (e < 0) {
                note(ud, "--metadata-file '%s': %s", f,
                     e == -EINVAL   ? "not a JSON object"
                     : e == -ESPIPE ? "not a regular file"
                                    : strerror(-e));
                return;
        }
        if (bm->cfg.no_history)
                return;
        for (size_t i = 0; i < bm->model.n; i++) {
                _cleanup_free_ char *out = NULL;
                struct buildx_history h;
                double left = budget_end - now_monotonic();

                if (!bm->model.t[i].ref[0] || left <= 0)
                        continue;
                e = buildx_history_fetch(bm->model.t[i].ref, MIN(left, HISTORY_TIMEOUT_S), &out,
                                         &len);
                if (e == -ENOENT)
                        return; /* no docker here */
                if (e >= 0)
                        e = buildx_history_parse(out, len, &h);
                if (e >= 0)
                        (void)buildx_history_apply(&h, &bm->model);
                else
                        note(ud, "docker buildx history inspect %s: %s", bm->model.t[i].ref,
                             e == -EINVAL ? "not the expected JSON" : strerror(-e));
        }
}

static void no_note(void *userdata, const char *fmt, ...) {}

void buildmetrics_finish(struct buildmetrics *bm, char *const *argv, buildmetrics_note_fn note,
                         void *userdata)
{
        if (!note)
                note = no_note;
        buildkit_finish(bm->bk, &bm->model);
        attribute_stats(bm);
        import_ninja_log(bm, note, userdata);
        import_metadata(bm, argv, note, userdata);
}
