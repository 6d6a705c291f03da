/* SPDX-License-Identifier: MIT */
#include "parse/buildkit.h"
#include "parse/buildkit-int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

int buildkit_new(const struct buildkit_config *cfg, struct buildkit **ret)
{
        struct buildkit *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        b->cfg = *cfg;
        b->first = b->last = NAN;
        b->prev_blank = true;
        *ret = b;
        return 0;
}

void buildkit_free(struct buildkit *b)
{
        if (!b)
                return;
        for (uint32_t i = 0; i < b->nv; i++)
                free(b->v[i].name);
        free(b->v);
        free(b->slots);
        dbuf_release(&b->json);
        dbuf_release(&b->carry);
        dbuf_release(&b->data);
        free(b);
}

uint32_t bk_slot_of(uint64_t key, uint32_t nslots)
{
        key ^= key >> 33;
        key *= 0xff51afd7ed558ccdULL;
        key ^= key >> 33;
        return (uint32_t)key & (nslots - 1);
}

static int grow_slots(struct buildkit *b)
{
        uint32_t n = b->nslots ? b->nslots * 2 : 256;
        uint32_t *s = calloc(n, sizeof(*s));

        if (!s)
                return -ENOMEM;
        for (uint32_t i = 0; i < b->nv; i++) {
                uint32_t j = bk_slot_of(b->v[i].key, n);
                while (s[j])
                        j = (j + 1) & (n - 1);
                s[j] = i + 1;
        }
        free(b->slots);
        b->slots = s;
        b->nslots = n;
        return 0;
}

int64_t bk_vertex(struct buildkit *b, uint64_t key, bool add)
{
        struct vtx *v;
        uint32_t j;

        /* Consecutive lines mostly belong to one vertex. */
        if (b->last_vi < b->nv && b->v[b->last_vi].key == key)
                return b->last_vi;
        if (b->nslots) {
                for (j = bk_slot_of(key, b->nslots); b->slots[j]; j = (j + 1) & (b->nslots - 1))
                        if (b->v[b->slots[j] - 1].key == key)
                                return b->last_vi = b->slots[j] - 1;
        }
        if (!add)
                return -1;
        if (b->nv >= BUILDKIT_MAX_VERTICES)
                return -1;
        if (array_grow(&b->v, &b->capv, b->nv, sizeof(*b->v), 64) < 0)
                return -1;
        /* Keep the load under a half. */
        if ((b->nv + 1) * 2 > b->nslots && grow_slots(b) < 0)
                return -1;
        v = &b->v[b->nv];
        *v = (struct vtx){.key = key, .target = -1, .marker = -1};
        v->first = v->last = v->end = v->bk_started = v->bk_done = v->bk_secs = NAN;
        for (j = bk_slot_of(key, b->nslots); b->slots[j]; j = (j + 1) & (b->nslots - 1))
                ;
        b->slots[j] = b->nv + 1;
        return b->nv++;
}

/* Per line: the vertex's times only; the targets' come from their
 * vertices at the end. */
void bk_touch(struct buildkit *b, struct vtx *v, double now)
{
        if (isnan(b->first))
                b->first = now;
        b->last = now;
        if (isnan(v->first))
                v->first = now;
        v->last = now;
}

static int cand_index(struct buildkit *b, const char *name, size_t len)
{
        char key[TARGET_NAME_MAX + 1];

        copy_utf8(key, sizeof(key), name, len);
        for (size_t i = 0; i < b->ncands; i++)
                if (strcmp(b->cands[i].name, key) == 0)
                        return (int)i;
        if (b->ncands == TARGETS_MAX)
                return TARGETS_MAX - 1;
        memcpy(b->cands[b->ncands].name, key, sizeof(key));
        return (int)b->ncands++;
}

bool bk_is_step_token(const char *s, size_t n)
{
        const char *slash = memchr(s, '/', n);

        if (!slash || slash == s || slash == s + n - 1)
                return false;
        for (const char *p = s; p < s + n; p++)
                if (p != slash && (*p < '0' || *p > '9'))
                        return false;
        return true;
}

size_t bk_next_token(const char **p, const char *end, const char **ret_tok)
{
        const char *s = skip_sp(*p, end);

        *ret_tok = s;
        while (s < end && *s != ' ')
                s++;
        *p = s;
        return (size_t)(s - *ret_tok);
}

/* Shared steps are re-announced under another prefix: the latest name is
 * the one a failure is reported under. Out of memory only loses the name. */
static void keep_name(struct vtx *v, const char *name, size_t len)
{
        char buf[TARGET_STEP_NAME_MAX + 1];

        copy_utf8(buf, sizeof(buf), name, len);
        free(v->name);
        v->name = strdup(buf);
}

/* Whether name is the one v was last announced with (in full, when it was
 * not cut): then naming it again changes nothing. */
static bool same_name(const struct vtx *v, const char *name, size_t len)
{
        return v->named && v->name && len <= TARGET_STEP_NAME_MAX && strlen(v->name) == len &&
               memcmp(v->name, name, len) == 0;
}

/* A vertex name: "[tok tok i/n] INSTR ..." or "[tok] exporting ..." or
 * "exporting to image" ... */
void bk_name_vertex(struct buildkit *b, struct vtx *v, const char *name, size_t len)
{
        const char *close, *rest = name, *end = name + len;
        const char *tok[4], *last = NULL;
        size_t tlen[4], ntok = 0, all = 0, last_len = 0;

        if (same_name(v, name, len))
                return; /* a re-announcement (after "#N ...", or rawjson's every update) */

        if (len > 0 && name[0] == '[' && (close = memchr(name, ']', len))) {
                for (const char *p = name + 1, *s; p < close;) {
                        size_t n = bk_next_token(&p, close, &s);
                        if (n) {
                                if (ntok < 4) {
                                        tok[ntok] = s;
                                        tlen[ntok++] = n;
                                }
                                last = s;
                                last_len = n;
                                all++;
                        }
                }
                rest = skip_sp(close + 1, end);
                if (all >= 1 && bk_is_step_token(last, last_len))
                        v->step = true;
                if (all >= 1 && !memchr(tok[0], '/', tlen[0])) {
                        bool internal1 =
                            all == 1 && ((tlen[0] == 8 && !memcmp(tok[0], "internal", 8)) ||
                                         (tlen[0] == 4 && !memcmp(tok[0], "auth", 4)));
                        /* [t] exporting ..., [t internal], [t stage i/n]; [t i/n] (or
                         * [stage i/n]) names a candidate but is no evidence */
                        bool multi = v->step ? all >= 3 : (all == 1 && !internal1) || all == 2;

                        if (multi || (all == 2 && v->step)) {
                                bit_set(v->cands, (size_t)cand_index(b, tok[0], tlen[0]));
                                b->multi_evidence |= multi;
                        }
                }
        }
        keep_name(v, name, len);
        if ((size_t)(end - rest) >= 12 && !memcmp(rest, "exporting to", 12))
                v->exporting = true;
        if (v->step && (size_t)(end - rest) >= 5 && !memcmp(rest, "FROM ", 5))
                v->from = true;
        if (v->marker < 0)
                for (size_t i = 0; i < b->cfg.nmarkers; i++)
                        if (memmem(name, len, b->cfg.markers[i], strlen(b->cfg.markers[i]))) {
                                v->marker = (int8_t)i;
                                b->marker_v[i] = (uint32_t)(v - b->v) + 1;
                                break;
                        }
        v->named = true;
}

void bk_emit_log(struct buildkit *b, uint32_t vidx, const char *text, size_t len)
{
        if (b->cfg.log)
                b->cfg.log(b->cfg.userdata, vidx, b->v[vidx].marker, text, len);
}

/* rawjson: "#N <rest>" to the context callback (cut at 1 KiB: the context
 * keeps less). */
void bk_emit_ctx(struct buildkit *b, uint32_t vidx, const char *pfx, const char *text, size_t len)
{
        char line[1024];
        int n;

        if (!b->cfg.ctx)
                return;
        n = snprintf(line, sizeof(line), "#%u %s", vidx + 1, pfx);
        if (n < 0 || (size_t)n >= sizeof(line))
                return;
        len = MIN(len, sizeof(line) - (size_t)n);
        memcpy(line + n, text, len);
        b->cfg.ctx(b->cfg.ctx_userdata, line, (size_t)n + len);
}

/* "#0 building with "X" instance using D driver" */
static void description(struct buildkit *b, const char *s, const char *end)
{
        const char *q;

        if (!skip_prefix(&s, end, "building with \""))
                return;
        q = memchr(s, '"', (size_t)(end - s));
        if (q)
                copy_utf8(b->builder, sizeof(b->builder), s, (size_t)(q - s));
}

static bool eq(const char *s, const char *end, const char *lit)
{
        size_t n = strlen(lit);
        return (size_t)(end - s) == n && memcmp(s, lit, n) == 0;
}

/* " 1.4s" after "DONE": BuildKit's own time of the vertex; NAN none. */
static double done_secs(const char *s, const char *end)
{
        const char *p = s;
        uint64_t whole = 0, frac = 0, scale = 1;

        if (p >= end || *p++ != ' ')
                return NAN;
        if (parse_u64(&p, end, &whole) < 0 || whole > 1000000000ULL || p >= end || *p++ != '.')
                return NAN;
        for (; p < end && *p >= '0' && *p <= '9' && scale < 1000000; p++, scale *= 10)
                frac = frac * 10 + (uint64_t)(*p - '0');
        if (scale == 1 || p + 1 != end || *p != 's')
                return NAN;
        return (double)whole + (double)frac / (double)scale;
}

bool bkline_is_digest(const char *s, const char *end)
{
        if ((size_t)(end - s) != 71 || memcmp(s, "sha256:", 7) != 0)
                return false;
        for (const char *p = s + 7; p < end; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

/* v ended in state at now (buildtel's clock): the first ending line wins. */
void bk_end_vertex(struct vtx *v, enum vstate state, double now)
{
        v->state = state;
        if (isnan(v->end))
                v->end = now;
}

const char *bkline_secs_end(const char *s, const char *end)
{
        const char *p = s, *f;

        while (p < end && (unsigned char)(*p - '0') < 10)
                p++;
        if (p == s || p >= end || *p != '.')
                return NULL;
        f = ++p;
        while (p < end && p - f < 4 && (unsigned char)(*p - '0') < 10)
                p++;
        if (p == f || p - f > 3 || (p < end && *p != ' '))
                return NULL;
        return p;
}

/* "#N <rest>" that is no "<secs> text": a header, a state, a status. */
_noinline_ static void feed_status(struct buildkit *b, struct vtx *v, const char *s,
                                   const char *end, bool header, double now)
{
        if (eq(s, end, "...") || skip_prefix(&s, end, "WARN: "))
                return;
        if (skip_prefix(&s, end, "DONE")) {
                if (s == end || *s == ' ') {
                        bk_end_vertex(v, V_DONE, now);
                        v->bk_secs = done_secs(s, end);
                }
        } else if (eq(s, end, "CACHED")) {
                bk_end_vertex(v, V_CACHED, now);
        } else if (eq(s, end, "CANCELED")) {
                bk_end_vertex(v, V_CANCELED, now);
        } else if (skip_prefix(&s, end, "ERROR: ")) {
                bk_end_vertex(v, V_ERROR, now);
        } else if (header) {
                bk_name_vertex(b, v, s, (size_t)(end - s));
                bk_touch(b, v, now);
                if (v->state == V_NEW)
                        v->state = V_RUNNING;
        } else if (!bkline_is_digest(s, end)) {
                v->worked = true; /* a status: "resolve ...", "sha256:... 1.2MB / 3MB" */
        }
}

/* "#N <secs> <log text>" of vertex vi: it worked, and its text goes to the
 * log. */
static inline void secs_line(struct buildkit *b, uint32_t vi, const struct bkline *bl)
{
        const char *text = bl->secs_end == bl->end ? bl->end : bl->secs_end + 1;

        b->v[vi].worked = true;
        bk_emit_log(b, vi, text, (size_t)(bl->end - text));
}

static bool feed_plain(struct buildkit *b, const struct bkline *bl, double now)
{
        const char *s, *end = bl->end;
        uint64_t n;
        int64_t vi;
        struct vtx *v;
        bool header;

        if (!bl->ok)
                return false;
        s = bl->rest;
        n = bl->n;
        b->seen = true;
        if (n == 0) {
                description(b, s, end);
                b->prev_blank = false;
                return true;
        }
        header = b->prev_blank;
        b->prev_blank = false;
        vi = bk_vertex(b, n + 1, false);
        if (vi < 0) {
                vi = bk_vertex(b, n + 1, true);
                header = true;
                if (vi < 0)
                        return true;
        }
        v = &b->v[vi];
        bk_touch(b, v, now);
        /* Most lines are "<secs> <log text>": one look at the first byte
         * instead of five keyword compares. */
        if (!header && bl->secs_end) {
                secs_line(b, (uint32_t)vi, bl);
                return true;
        }
        feed_status(b, v, s, end, header, now);
        return true;
}

_noinline_ static int feed_line_slow(struct buildkit *b, const char *line, size_t len, double now,
                                     const struct bkline *bl)
{
        const char *end = bl->end;

        if ((b->json_active || (len && line[0] == '{')) && bk_feed_json(b, line, end, now))
                return BK_LINE_JSON;
        if (bl->hash) /* never blank */
                return feed_plain(b, bl, now) ? BK_LINE_PLAIN : BK_LINE_OTHER;
        b->prev_blank = end == line;
        return BK_LINE_OTHER;
}

int buildkit_feed_line_bk(struct buildkit *b, const char *line, size_t len, double now,
                          const struct bkline *bl)
{
        /* Most lines are "#N <secs> <log text>" of the vertex of the line
         * before: what feed_plain does with them, with no call but the
         * log's. */
        if (!b->json_active && bl->ok && bl->secs_end && bl->n != 0 && !b->prev_blank &&
            b->last_vi < b->nv && b->v[b->last_vi].key == bl->n + 1) {
                b->seen = true;
                bk_touch(b, &b->v[b->last_vi], now);
                secs_line(b, b->last_vi, bl);
                return BK_LINE_PLAIN;
        }
        return feed_line_slow(b, line, len, now, bl);
}
