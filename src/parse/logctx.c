/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "parse/buildkit.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "parse/logline-int.h"
#include "util/macro.h"

/* Cleaned bytes kept per line for classification: compile lines put -c and
 * -o after kilobytes of flags, so this is much more than the context cap. */
#define SCRATCH_MAX LINEBUF_MAX

/* A line of the chunk, as fed, kept until the batch is looked at;
 * whether it may set the stage (stage_candidate(); a dirty one is decided
 * once cleaned) and whether it holds an escape or a '\r' (dirty). */
struct batched {
        const char *line;
        size_t len;
        bool stage_cand;
        bool dirty;
};

#define BATCH_MAX 1024

struct logctx {
        regex_t re;
        bool has_re;
        char *fixed_stage;
        char stage[SAMPLE_STAGE_MAX + 1];
        bool stage_set;
        char context[SAMPLE_CONTEXT_MAX + 1];
        bool seen_work;
        double last_work_s; /* when the last work line came */
        double hold_s;      /* logctx_config.hold_s */
        /* logctx_chunk: [clean_lo, clean_hi) of the chunk holds no ESC and
         * no '\r', and clean_hi is the first of them at or after clean_lo
         * (the chunk's end: none). chunk_needs_cleaning() moves it. */
        const char *chunk, *chunk_end;
        const char *clean_lo, *clean_hi;
        /* The context's line while it lies in the chunk: copied when the
         * chunk goes or the context is read, not for every line that wins. */
        const char *pend;
        size_t pend_n;
        /* Lines of the chunk not yet looked at (logctx_feed_line_bk): at
         * most BATCH_MAX, all of one instant (batch_now), no --stage-regex;
         * those needing cleaning are cleaned when looked at. See
         * flush_batch(). */
        struct batched batch[BATCH_MAX];
        size_t nbatch;
        double batch_now;
        char scratch[SCRATCH_MAX + 1];
        char winbuf[SCRATCH_MAX + 1]; /* a cleaned line of a batch that wins */
};

int logctx_new(const struct logctx_config *cfg, struct logctx **ret)
{
        struct logctx *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        if (cfg && cfg->hold_s > 0 && cfg->hold_s < 1e9)
                c->hold_s = cfg->hold_s;
        if (cfg && cfg->fixed_stage) {
                size_t n =
                    logline_utf8_cut(cfg->fixed_stage, strlen(cfg->fixed_stage), SAMPLE_STAGE_MAX);

                if (!(c->fixed_stage = strndup(cfg->fixed_stage, n))) {
                        logctx_free(c);
                        return -ENOMEM;
                }
        }
        if (cfg && cfg->stage_regex) {
                int r = regcomp(&c->re, cfg->stage_regex, REG_EXTENDED);

                if (r != 0) {
                        logctx_free(c);
                        return r == REG_ESPACE ? -ENOMEM : -EINVAL;
                }
                c->has_re = true;
        }
        *ret = c;
        return 0;
}

void logctx_free(struct logctx *c)
{
        if (!c)
                return;
        if (c->has_re)
                regfree(&c->re);
        free(c->fixed_stage);
        free(c);
}

static bool set_stage(struct logctx *c, const char *s, size_t n)
{
        n = logline_utf8_cut(s, n, SAMPLE_STAGE_MAX);
        memcpy(c->stage, s, n);
        c->stage[n] = '\0';
        c->stage_set = true;
        return true;
}

/* "pytorch linux/arm64 builder" -> "pytorch/builder" */
static bool set_stage_buildkit(struct logctx *c, const char *s, size_t n)
{
        char tmp[SAMPLE_STAGE_MAX + 4];
        const char *q = s, *end = s + n;
        size_t o = 0;

        while (q < end && o < sizeof(tmp)) {
                const char *t;
                size_t l = bk_next_token(&q, end, &t);

                if (l == 0 || memchr(t, '/', l)) /* a platform: linux/amd64 */
                        continue;
                if (o > 0)
                        tmp[o++] = '/';
                l = MIN(l, sizeof(tmp) - o);
                memcpy(tmp + o, t, l);
                o += l;
        }
        return o > 0 && set_stage(c, tmp, o);
}

/* The stage a step or group line names; whether it set one. */
static bool line_stage(struct logctx *c, const struct logline *l)
{
        if (l->stage_len > 0 && l->kind == LOGLINE_BUILDKIT_STEP)
                return set_stage_buildkit(c, l->stage, l->stage_len);
        return l->stage_len > 0 && l->kind == LOGLINE_GHA_GROUP &&
               set_stage(c, l->stage, l->stage_len);
}

static bool apply_regex(struct logctx *c, const char *p, size_t n)
{
        regmatch_t m[2];
        int g;

        /* regexec wants a C string; the scratch buffer may already hold it. */
        n = MIN(n, (size_t)SCRATCH_MAX);
        if (p != c->scratch)
                memcpy(c->scratch, p, n);
        c->scratch[n] = '\0';
        if (regexec(&c->re, c->scratch, ARRAY_SIZE(m), m, 0) != 0)
                return false;
        g = c->re.re_nsub > 0 && m[1].rm_so >= 0 ? 1 : 0;
        if (m[g].rm_eo <= m[g].rm_so)
                return false; /* an empty capture names no stage */
        set_stage(c, c->scratch + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
        return true;
}

bool logctx_line_wins(bool work, bool seen_work, double last_work_s, double now_s, double hold_s)
{
        return work || !seen_work || now_s - last_work_s > hold_s;
}

static void put_context(struct logctx *c, const char *p, size_t n)
{
        size_t cut = logline_utf8_cut(p, n, SAMPLE_CONTEXT_MAX);

        while (cut > 0 && is_space(p[cut - 1]))
                cut--;
        memcpy(c->context, p, cut);
        c->context[cut] = '\0';
}

static void flush_context(struct logctx *c)
{
        if (c->pend) {
                put_context(c, c->pend, c->pend_n);
                c->pend = NULL;
        }
}

/* Whether [p, p+n) lies in the chunk being fed (logctx_chunk). */
static inline bool in_chunk(const struct logctx *c, const char *p, size_t n)
{
        uintptr_t a = (uintptr_t)p;

        return c->chunk && a >= (uintptr_t)c->chunk && a <= (uintptr_t)c->chunk_end &&
               n <= (size_t)((uintptr_t)c->chunk_end - a);
}

/* The first ESC or '\r' in [p, end), or end. Output with escapes has them
 * on most lines: the next one is looked for near p in one pass for both (a
 * memchr for each, per line, was most of what such a line cost); past
 * NEAR_CONTROL bytes without one, a clean stretch (most text: the rest of
 * the chunk) is left to libc's memchr, the faster over a long way. */
#define NEAR_CONTROL 256
static const char *next_control(const char *p, const char *end)
{
        const char *stop = end - p > NEAR_CONTROL ? p + NEAR_CONTROL : end, *e, *r;

#if defined(__SSE2__)
        const __m128i esc = _mm_set1_epi8(ESC), cr = _mm_set1_epi8('\r');

        for (; stop - p >= 16; p += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
                unsigned m = (unsigned)_mm_movemask_epi8(
                    _mm_or_si128(_mm_cmpeq_epi8(v, esc), _mm_cmpeq_epi8(v, cr)));

                if (m)
                        return p + __builtin_ctz(m);
        }
#endif
        for (; p < stop; p++)
                if (*p == ESC || *p == '\r')
                        return p;
        if (p == end)
                return end;
        e = memchr(p, ESC, (size_t)(end - p));
        r = memchr(p, '\r', (size_t)((e ? e : end) - p));
        return r ? r : e ? e : end;
}

/* The same for [p, p+n) in the chunk: the next ESC or '\r' at or after p
 * is found once and kept while the lines move forward past none, so the
 * chunk is scanned once whatever its lines are. */
_noinline_ static bool chunk_needs_cleaning(struct logctx *c, const char *p, size_t n)
{
        if (p < c->clean_lo || c->clean_hi < p) {
                c->clean_lo = p;
                c->clean_hi = next_control(p, c->chunk_end);
        }
        return c->clean_hi < p + n;
}

/* Whether [p, p+n), in the chunk, holds no escape and no '\r'. */
static inline bool clean_in_chunk(struct logctx *c, const char *p, size_t n)
{
        if (p >= c->clean_lo && p + n <= c->clean_hi)
                return true;
        return !chunk_needs_cleaning(c, p, n);
}

/* What one classified line does: the stage it sets, and whether it becomes
 * the context (the rule of logctx_line_wins). p is in the chunk, or the
 * scratch buffer, or elsewhere (then copied now). */
static void apply_line(struct logctx *c, const char *p, size_t n, const struct logline *l,
                       double now_s)
{
        /* The user's --stage-regex wins over what the line itself says. */
        if (!(c->has_re && apply_regex(c, p, n)))
                (void)line_stage(c, l);
        if (l->kind == LOGLINE_BLANK || l->kind == LOGLINE_DIAG || l->bookkeeping ||
            !logctx_line_wins(l->work, c->seen_work, c->last_work_s, now_s, c->hold_s))
                return;
        if (l->work) {
                c->seen_work = true;
                c->last_work_s = now_s;
        }
        if (p != c->scratch && in_chunk(c, p, n)) {
                c->pend = p;
                c->pend_n = n;
                return;
        }
        c->pend = NULL;
        put_context(c, p, n);
}

/* Whether a line that needs no cleaning (trimmed, p..end) can set the
 * stage, by the bytes logline_classify_bk() decides it on: "##[group]", "::group::"
 * and "#N [..." (a BuildKit step), also after a CI timestamp. A line that
 * "#N 1.234 " starts is a step's output, never a step. */
static bool stage_candidate(const char *p, const char *end)
{
        const char *q;

        if (is_digit(*p)) {
                p = logline_skip_ci_timestamp(p, end);
                if (p == end || is_digit(*p))
                        return false;
        }
        if (*p == ':')
                return true;
        if (*p != '#' || p + 1 >= end)
                return false;
        if (p[1] == '#')
                return true;
        q = logline_skip_digits(p + 1, end);
        return q > p + 1 && q + 1 < end && *q == ' ' && q[1] == '[';
}

/* The line without the spaces around it (and the '\r's at its end). */
static const char *trim(const char *p, size_t n, size_t *ret_n)
{
        while (n > 0 && (is_space(p[n - 1]) || p[n - 1] == '\r'))
                n--;
        while (n > 0 && is_space(*p)) {
                p++;
                n--;
        }
        *ret_n = n;
        return p;
}

/* Whether a line (trimmed, clean) could be work or set the stage, by the
 * bytes logline_classify_bk() decides those on: a bracket, a capital ("CC x.o",
 * "Compiling"), '#' (BuildKit, "##[group]"), ':' ("::group::"), a digit
 * (a CI timestamp first), or " -" (a compiler line's -c or -o). */
static bool may_matter(const char *p, size_t n)
{
        const char *end = p + n, *q = p;
        unsigned char f = (unsigned char)*p;

        if (f == '[' || f == '#' || f == ':' || is_digit(*p) || (f >= 'A' && f <= 'Z'))
                return true;
        while ((q = memchr(q, ' ', (size_t)(end - q))) && q + 1 < end)
                if (*++q == '-')
                        return true;
        return false;
}

/* The lines batched, as if each had been fed on its own. They are of one
 * instant, so once a work line wins no later line of the batch can (the
 * hold is at least 0 s), and without one, whether a line wins is the same
 * for all of them: the context is the batch's last work line, else its
 * last eligible line if such a line wins now, else unchanged. The stage is
 * the last that a stage line sets. Looked at from the end, most batches of
 * a build's output end in work: a handful of lines are classified, not
 * each of them; and once the last eligible line is known, a line that can
 * be neither work nor a stage (may_matter) is not classified at all. A
 * line with escapes or '\r's is cleaned when it is looked at; the one that
 * wins is kept in winbuf, since the scratch serves the next. */
_noinline_ static void flush_batch(struct logctx *c)
{
        const char *win_p = NULL, *el_p = NULL;
        size_t win_n = 0, el_n = 0;
        bool stage_done = false;
        size_t i = c->nbatch;

        c->nbatch = 0;
        while (i-- > 0 && !(win_p && stage_done)) {
                const struct batched *b = &c->batch[i];
                struct bkline bl;
                struct logline l;
                const char *p;
                size_t n;

                if (win_p && !b->stage_cand)
                        continue;
                p = trim(b->line, b->len, &n);
                if (b->dirty && n > 0) {
                        n = logline_visible(p, n, c->scratch, SCRATCH_MAX);
                        p = c->scratch;
                        if (win_p && (n == 0 || !stage_candidate(p, p + n)))
                                continue;
                }
                if (el_p && n > 0 && !may_matter(p, n))
                        continue;
                if (p == b->line)
                        bkline_parse(b->line, b->len, &bl);
                logline_classify_bk(p, n, p == b->line ? &bl : NULL, &l);
                if (!stage_done)
                        stage_done = line_stage(c, &l);
                if (win_p || l.kind == LOGLINE_BLANK || l.kind == LOGLINE_DIAG || l.bookkeeping)
                        continue;
                if (!l.work && el_p)
                        continue;
                if (p == c->scratch) {
                        memcpy(c->winbuf, p, n);
                        p = c->winbuf;
                }
                if (l.work) {
                        win_p = p;
                        win_n = n;
                } else {
                        el_p = p;
                        el_n = n;
                }
        }
        if (win_p) {
                c->seen_work = true;
                c->last_work_s = c->batch_now;
                el_p = win_p;
                el_n = win_n;
        } else if (el_p &&
                   !logctx_line_wins(false, c->seen_work, c->last_work_s, c->batch_now, c->hold_s))
                el_p = NULL;
        if (el_p && el_p == c->winbuf) {
                c->pend = NULL;
                put_context(c, el_p, el_n);
        } else if (el_p) {
                c->pend = el_p;
                c->pend_n = el_n;
        }
}

void logctx_chunk(struct logctx *c, const char *buf, size_t len)
{
        flush_batch(c);
        flush_context(c);
        c->chunk = buf;
        c->chunk_end = buf ? buf + len : NULL;
        c->clean_lo = c->clean_hi = c->chunk_end;
}

/* Whether a raw line of the chunk may set the stage, with its BuildKit
 * prefix when parsed: "#N 1.234 text" is a step's output, never a step. */
static bool raw_stage_candidate(const char *line, size_t len, const struct bkline *bl)
{
        if (bl && bl->hash)
                return !bl->secs_end && bl->digits_end + 1 < bl->end && bl->digits_end[0] == ' ' &&
                       bl->digits_end[1] == '[';
        if (len == 0)
                return false;
        if (is_space(*line))
                return true; /* decided once trimmed */
        return stage_candidate(line, line + len);
}

/* A line not batched: looked at now, the batch before it first. */
_noinline_ static void feed_one(struct logctx *c, const char *line, size_t len, double now_s,
                                const struct bkline *bl)
{
        const char *p;
        size_t n;
        struct logline l;

        flush_batch(c);
        p = trim(line, len, &n);
        if (n == 0)
                return; /* blank: sets nothing, never the context */
        if (in_chunk(c, p, n) ? !clean_in_chunk(c, p, n)
                              : memchr(p, ESC, n) || memchr(p, '\r', n)) {
                n = logline_visible(p, n, c->scratch, SCRATCH_MAX);
                p = c->scratch;
        }
        /* The prefix is the line's only while the line is where it was. */
        logline_classify_bk(p, n, p == line ? bl : NULL, &l);
        apply_line(c, p, n, &l, now_s);
}

static inline void batch_push(struct logctx *c, const char *line, size_t len, bool stage_cand,
                              bool dirty)
{
        c->batch[c->nbatch++] =
            (struct batched){.line = line, .len = len, .stage_cand = stage_cand, .dirty = dirty};
}

/* A line of the chunk into the batch, the batch first looked at when full
 * or of another instant. */
_noinline_ static void batch_slow(struct logctx *c, const char *line, size_t len, double now_s,
                                  const struct bkline *bl)
{
        bool dirty = !clean_in_chunk(c, line, len);

        if (c->nbatch > 0 && (c->nbatch == BATCH_MAX || c->batch_now != now_s))
                flush_batch(c);
        batch_push(c, line, len, dirty || raw_stage_candidate(line, len, bl), dirty);
        c->batch_now = now_s;
}

void logctx_feed_line_bk(struct logctx *c, const char *line, size_t len, double now_s,
                         const struct bkline *bl)
{
        /* Most lines lie in the chunk and need no cleaning: those are
         * looked at not one at a time but as a batch. The common case,
         * with no call: clean, the batch not full, of its instant. */
        if (c->has_re || !in_chunk(c, line, len))
                feed_one(c, line, len, now_s, bl);
        else if (line >= c->clean_lo && line + len <= c->clean_hi && c->nbatch > 0 &&
                 c->nbatch < BATCH_MAX && c->batch_now == now_s)
                batch_push(c, line, len, raw_stage_candidate(line, len, bl), false);
        else
                batch_slow(c, line, len, now_s, bl);
}

const char *logctx_stage(struct logctx *c)
{
        flush_batch(c);
        if (c->stage_set)
                return c->stage;
        return c->fixed_stage ? c->fixed_stage : "";
}

const char *logctx_context(struct logctx *c)
{
        /* A pending line is copied now: a read amid a chunk sees it too. */
        flush_batch(c);
        flush_context(c);
        return c->context;
}
