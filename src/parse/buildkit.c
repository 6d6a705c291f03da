/* SPDX-License-Identifier: MIT */
#include "parse/buildkit.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#define CARRY_MAX 65536

/* Bit sets over TARGETS_MAX candidates or targets (more than 64: a plain
 * uint64_t shift would be undefined). */
#define CAND_WORDS ((TARGETS_MAX + 63) / 64)
static void bit_set(uint64_t *w, size_t i)
{
        w[i / 64] |= 1ULL << (i % 64);
}
/* The lowest set bit at or after `from`, or -1. */
static int bit_next(const uint64_t *w, int from)
{
        for (int i = from < 0 ? 0 : from; i < CAND_WORDS * 64; i = (i / 64 + 1) * 64) {
                uint64_t m = w[i / 64] & (~0ULL << (i % 64));
                if (m)
                        return (i / 64) * 64 + __builtin_ctzll(m);
        }
        return -1;
}

enum vstate { V_NEW, V_RUNNING, V_DONE, V_CACHED, V_ERROR, V_CANCELED };

struct vtx {
        uint64_t key;
        char *name;                 /* the last header, cut to TARGET_STEP_NAME_MAX; NULL unnamed */
        double first, last;         /* buildtel's clock: its first and last line */
        double end;                 /* the line that ended it (DONE, CACHED, ...); NAN none */
        double bk_started, bk_done; /* rawjson: BuildKit's timestamps, Unix seconds; NAN none */
        double bk_secs;             /* plain: BuildKit's "DONE 1.4s"; NAN none */
        uint64_t cands[CAND_WORDS]; /* bit i: announced under prefix cands[i] */
        int16_t target;             /* after finish: the one target, or -1 */
        int8_t marker;
        uint8_t state;
        bool named, step, exporting;
        bool from;   /* a "FROM image" step: the stage's base image */
        bool worked; /* a status or log line: it did something (pulled, ran) */
};

/* A first bracket token: a target, or (single-target builds) a stage. */
struct cand {
        char name[TARGET_NAME_MAX + 1];
};

struct buildkit {
        struct buildkit_config cfg;
        struct vtx *v;
        uint32_t nv, capv;
        uint32_t *slots;  /* open addressing: vidx + 1, 0 empty */
        uint32_t last_vi; /* the vertex found last */
        uint32_t nslots;
        bool vertex_cap_hit;
        struct cand cands[TARGETS_MAX];
        size_t ncands;
        bool multi_evidence, seen, prev_blank, last_json;
        double first, last; /* any vertex line */
        char builder[TARGET_FIELD_MAX + 1];
        /* rawjson */
        struct dbuf json;
        int depth;
        bool in_str, esc, json_active, json_skip;
        bool json_compact; /* began "{\"": one object per line (rawjson) */
        unsigned json_lines;
        struct dbuf carry, data;
        uint32_t carry_v;
        bool carry_set;
        uint32_t marker_v[BUILDKIT_MAX_MARKERS]; /* vidx + 1 */
};

int buildkit_new(const struct buildkit_config *cfg, struct buildkit **ret)
{
        struct buildkit *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        b->cfg = *cfg;
        if (b->cfg.nmarkers > BUILDKIT_MAX_MARKERS)
                b->cfg.nmarkers = BUILDKIT_MAX_MARKERS;
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

bool buildkit_last_was_json(const struct buildkit *b)
{
        return b->last_json;
}

bool buildkit_seen(const struct buildkit *b)
{
        return b->seen;
}

static uint32_t slot_of(uint64_t key, uint32_t nslots)
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
                uint32_t j = slot_of(b->v[i].key, n);
                while (s[j])
                        j = (j + 1) & (n - 1);
                s[j] = i + 1;
        }
        free(b->slots);
        b->slots = s;
        b->nslots = n;
        return 0;
}

/* The vertex for key, added when new. -1 past the cap or out of memory. */
static int64_t vertex(struct buildkit *b, uint64_t key, bool add)
{
        uint32_t j;

        /* Consecutive lines mostly belong to one vertex. */
        if (b->last_vi < b->nv && b->v[b->last_vi].key == key)
                return b->last_vi;
        if (b->nslots) {
                for (j = slot_of(key, b->nslots); b->slots[j]; j = (j + 1) & (b->nslots - 1))
                        if (b->v[b->slots[j] - 1].key == key)
                                return b->last_vi = b->slots[j] - 1;
        }
        if (!add)
                return -1;
        if (b->nv >= BUILDKIT_MAX_VERTICES) {
                b->vertex_cap_hit = true;
                return -1;
        }
        if (b->nv == b->capv) {
                uint32_t n = b->capv ? b->capv * 2 : 64;
                struct vtx *nv = realloc(b->v, n * sizeof(*nv));
                if (!nv)
                        return -1;
                b->v = nv;
                b->capv = n;
        }
        /* Keep the load under a half. */
        if ((b->nv + 1) * 2 > b->nslots && grow_slots(b) < 0)
                return -1;
        b->v[b->nv] = (struct vtx){.key = key,
                                   .target = -1,
                                   .marker = -1,
                                   .first = NAN,
                                   .last = NAN,
                                   .end = NAN,
                                   .bk_started = NAN,
                                   .bk_done = NAN,
                                   .bk_secs = NAN};
        for (j = slot_of(key, b->nslots); b->slots[j]; j = (j + 1) & (b->nslots - 1))
                ;
        b->slots[j] = b->nv + 1;
        return b->nv++;
}

/* Per line: the vertex's times only; the targets' come from their
 * vertices at the end. */
static void touch(struct buildkit *b, struct vtx *v, double now)
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

static bool is_step_token(const char *s, size_t n)
{
        const char *slash = memchr(s, '/', n);

        if (!slash || slash == s || slash == s + n - 1)
                return false;
        for (const char *p = s; p < s + n; p++)
                if (p != slash && (*p < '0' || *p > '9'))
                        return false;
        return true;
}

/* The next space-separated token of [*p, end): its length (0 at the end)
 * and *ret_tok; *p past it. */
static size_t next_token(const char **p, const char *end, const char **ret_tok)
{
        const char *s = *p;

        while (s < end && *s == ' ')
                s++;
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
static void name_vertex(struct buildkit *b, struct vtx *v, const char *name, size_t len)
{
        const char *close, *rest = name, *end = name + len;
        const char *tok[4], *last = NULL;
        size_t tlen[4], ntok = 0, all = 0, last_len = 0;
        int cand = -1;

        if (same_name(v, name, len))
                return; /* a re-announcement (after "#N ...", or rawjson's every update) */

        if (len > 0 && name[0] == '[' && (close = memchr(name, ']', len))) {
                for (const char *p = name + 1, *s; p < close;) {
                        size_t n = next_token(&p, close, &s);
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
                rest = close + 1;
                while (rest < end && *rest == ' ')
                        rest++;
                if (all >= 1 && is_step_token(last, last_len))
                        v->step = true;
                if (all >= 1 && !memchr(tok[0], '/', tlen[0])) {
                        bool internal1 =
                            all == 1 && ((tlen[0] == 8 && !memcmp(tok[0], "internal", 8)) ||
                                         (tlen[0] == 4 && !memcmp(tok[0], "auth", 4)));
                        if (all == 1 && !v->step && !internal1) {
                                cand = cand_index(b, tok[0], tlen[0]); /* [t] exporting ... */
                                b->multi_evidence = true;
                        } else if (all == 2 && !v->step) {
                                cand = cand_index(b, tok[0], tlen[0]); /* [t internal] */
                                b->multi_evidence = true;
                        } else if (all >= 3 && v->step) {
                                cand = cand_index(b, tok[0], tlen[0]); /* [t stage i/n] */
                                b->multi_evidence = true;
                        } else if (all == 2 && v->step) {
                                cand = cand_index(b, tok[0], tlen[0]); /* [t i/n] or [stage i/n] */
                        }
                }
        }
        if (cand >= 0)
                bit_set(v->cands, (size_t)cand);
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

static void emit_log(struct buildkit *b, uint32_t vidx, const char *text, size_t len)
{
        if (b->cfg.log)
                b->cfg.log(b->cfg.userdata, vidx, b->v[vidx].marker, text, len);
}

/* rawjson: "#N <rest>" to the context callback (cut at 1 KiB: the context
 * keeps less). */
static void emit_ctx(struct buildkit *b, uint32_t vidx, const char *pfx, const char *text,
                     size_t len)
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
        b->cfg.ctx(b->cfg.userdata, line, (size_t)n + len);
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

/* "<secs> <text>": secs is digits '.' 1-3 digits. */
static inline bool log_prefix(const char *s, const char *end, const char **ret_text)
{
        const char *p = s, *f;

        while (p < end && (unsigned char)(*p - '0') < 10)
                p++;
        if (p == s || p >= end || *p != '.')
                return false;
        f = ++p;
        while (p < end && p - f < 4 && (unsigned char)(*p - '0') < 10)
                p++;
        if (p == f || p - f > 3)
                return false;
        if (p == end) {
                *ret_text = p;
                return true;
        }
        if (*p != ' ')
                return false;
        *ret_text = p + 1;
        return true;
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

/* "sha256:<64 hex>" alone: BuildKit 0.8 naming a vertex's digest while it
 * resolves, no work of the vertex. */
static bool is_legacy_digest(const char *s, const char *end)
{
        if ((size_t)(end - s) != 71 || memcmp(s, "sha256:", 7) != 0)
                return false;
        for (const char *p = s + 7; p < end; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

/* v ended in state at now (buildtel's clock): the first ending line wins. */
static void end_vertex(struct vtx *v, enum vstate state, double now)
{
        v->state = state;
        if (isnan(v->end))
                v->end = now;
}

const char *bkline_secs_end(const char *s, const char *end)
{
        const char *text;

        if (log_prefix(s, end, &text))
                return text == end && end[-1] != ' ' ? end : text - 1;
        return NULL;
}

_noinline_ static void feed_status(struct buildkit *b, struct vtx *v, int64_t vi, const char *s,
                                   const char *end, bool header, double now);

/* "#N <secs> <log text>" of vertex vi: it worked, and its text goes to the
 * log. */
static inline void secs_line(struct buildkit *b, uint32_t vi, const struct bkline *bl)
{
        const char *text = bl->secs_end == bl->end ? bl->end : bl->secs_end + 1;

        b->v[vi].worked = true;
        emit_log(b, vi, text, (size_t)(bl->end - text));
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
        /* Consecutive lines mostly belong to one vertex: that look inline. */
        if (b->last_vi < b->nv && b->v[b->last_vi].key == n + 1)
                vi = b->last_vi;
        else
                vi = vertex(b, n + 1, false);
        if (vi < 0) {
                vi = vertex(b, n + 1, true);
                header = true;
                if (vi < 0)
                        return true;
        }
        v = &b->v[vi];
        touch(b, v, now);
        /* Most lines are "<secs> <log text>": one look at the first byte
         * instead of five keyword compares. */
        if (!header && bl->secs_end) {
                secs_line(b, (uint32_t)vi, bl);
                return true;
        }
        feed_status(b, v, vi, s, end, header, now);
        return true;
}

/* "#N <rest>" that is no "<secs> text": a header, a state, a status. */
_noinline_ static void feed_status(struct buildkit *b, struct vtx *v, int64_t vi, const char *s,
                                   const char *end, bool header, double now)
{
        const char *text;

        if (eq(s, end, "..."))
                return;
        if (skip_prefix(&s, end, "DONE")) {
                if (s == end || *s == ' ') {
                        end_vertex(v, V_DONE, now);
                        v->bk_secs = done_secs(s, end);
                }
                return;
        }
        if (eq(s, end, "CACHED")) {
                end_vertex(v, V_CACHED, now);
                return;
        }
        if (eq(s, end, "CANCELED")) {
                end_vertex(v, V_CANCELED, now);
                return;
        }
        if (skip_prefix(&s, end, "ERROR: ")) {
                end_vertex(v, V_ERROR, now);
                return;
        }
        if (skip_prefix(&s, end, "WARN: "))
                return;
        if (!header && log_prefix(s, end, &text)) {
                v->worked = true;
                emit_log(b, (uint32_t)vi, text, (size_t)(end - text));
                return;
        }
        if (header) {
                name_vertex(b, v, s, (size_t)(end - s));
                touch(b, v, now);
                if (v->state == V_NEW)
                        v->state = V_RUNNING;
        } else if (!is_legacy_digest(s, end)) {
                v->worked = true; /* a status: "resolve ...", "sha256:... 1.2MB / 3MB" */
        }
}

/* ---- rawjson ---- */

static uint64_t digest_key(const char *s)
{
        return fnv1a(FNV1A_OFFSET, s, strlen(s)) | (1ULL << 63); /* never a plain "#N" key */
}

static int b64val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+' || c == '-')
                return 62;
        if (c == '/' || c == '_')
                return 63;
        return -1;
}

static int b64_decode(const char *s, size_t n, struct dbuf *out)
{
        uint32_t acc = 0;
        int bits = 0;

        dbuf_reset(out);
        for (size_t i = 0; i < n; i++) {
                int d = b64val((unsigned char)s[i]);
                if (d < 0)
                        continue; /* padding, newlines */
                acc = (acc << 6) | (uint32_t)d;
                bits += 6;
                if (bits >= 8) {
                        char c;
                        bits -= 8;
                        c = (char)((acc >> bits) & 0xff);
                        if (dbuf_append(out, &c, 1) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

static void flush_carry(struct buildkit *b)
{
        if (b->carry_set && b->carry.len)
                emit_log(b, b->carry_v, b->carry.p, b->carry.len);
        dbuf_reset(&b->carry);
        b->carry_set = false;
}

static void json_logs(struct buildkit *b, uint32_t vidx, const char *data, size_t n)
{
        const char *p = data, *end = data + n;

        if (b->carry_set && b->carry_v != vidx)
                flush_carry(b);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end;
                size_t room = CARRY_MAX - b->carry.len;

                if (!nl) {
                        (void)dbuf_append(&b->carry, p, MIN(room, (size_t)(le - p)));
                        b->carry_v = vidx;
                        b->carry_set = true;
                        break;
                }
                if (b->carry_set && b->carry.len) {
                        (void)dbuf_append(&b->carry, p, MIN(room, (size_t)(le - p)));
                        emit_log(b, vidx, b->carry.p, b->carry.len);
                        emit_ctx(b, vidx, "0.000 ", b->carry.p, b->carry.len);
                        dbuf_reset(&b->carry);
                        b->carry_set = false;
                } else {
                        emit_log(b, vidx, p, (size_t)(le - p));
                        emit_ctx(b, vidx, "0.000 ", p, (size_t)(le - p));
                }
                p = nl + 1;
        }
}

/* n digits of s as a number; -1 when one is not a digit. */
static int64_t digits(const char *s, size_t n)
{
        int64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
        int64_t era, yoe, doy, doe;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

/* An RFC 3339 time as BuildKit writes it ("2024-05-01T10:00:02.123456789Z",
 * or with a +hh:mm offset) into Unix seconds; NAN when it is not one. */
double buildkit_parse_time(const char *s, size_t n)
{
        int64_t y, mo, d, h, mi, sec, off = 0;
        double frac = 0, scale = 0.1;
        size_t i = 19;

        if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
            s[13] != ':' || s[16] != ':')
                return NAN;
        y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
        h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
        if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
            mi > 59 || sec < 0 || sec > 60)
                return NAN;
        if (s[i] == '.')
                for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, scale /= 10)
                        frac += (s[i] - '0') * scale;
        if (i < n && (s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':') {
                int64_t oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
                if (oh < 0 || oh > 23 || om < 0 || om > 59)
                        return NAN;
                off = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        } else if (!(i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))) {
                return NAN;
        }
        return (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off) + frac;
}

/* rawjson's "started" and "completed" of a vertex update (the first seen). */
static void json_times(struct vtx *v, json_t *it)
{
        json_t *st = json_object_get(it, "started"), *co = json_object_get(it, "completed");

        if (isnan(v->bk_started) && json_is_string(st))
                v->bk_started = buildkit_parse_time(json_string_value(st), json_string_length(st));
        if (isnan(v->bk_done) && json_is_string(co))
                v->bk_done = buildkit_parse_time(json_string_value(co), json_string_length(co));
}

static void json_status(struct buildkit *b, json_t *root, double now)
{
        json_t *arr, *it;
        size_t i;

        if (!json_is_object(root))
                return;
        arr = json_object_get(root, "vertexes");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "digest"));
                const char *name = json_string_value(json_object_get(it, "name"));
                const char *err = json_string_value(json_object_get(it, "error"));
                int64_t vi;
                struct vtx *v;

                if (!dg)
                        continue;
                b->seen = true;
                vi = vertex(b, digest_key(dg), true);
                if (vi < 0)
                        continue;
                v = &b->v[vi];
                if (name) {
                        /* The same digest announced under another prefix adds it. */
                        name_vertex(b, v, name, strlen(name));
                }
                touch(b, v, now);
                if (v->name && json_object_get(it, "started") && isnan(v->bk_started))
                        emit_ctx(b, (uint32_t)vi, "", v->name, strlen(v->name));
                json_times(v, it);
                if (json_object_get(it, "completed")) {
                        if (err && *err)
                                end_vertex(
                                    v, strstr(err, "context canceled") ? V_CANCELED : V_ERROR, now);
                        else if (json_is_true(json_object_get(it, "cached")))
                                end_vertex(v, V_CACHED, now);
                        else if (v->state != V_ERROR && v->state != V_CANCELED)
                                end_vertex(v, V_DONE, now);
                } else if (json_object_get(it, "started") && v->state == V_NEW) {
                        v->state = V_RUNNING;
                }
        }
        arr = json_object_get(root, "statuses");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "vertex"));
                int64_t vi = dg ? vertex(b, digest_key(dg), false) : -1;

                if (vi >= 0)
                        b->v[vi].worked = true; /* transferring, resolve, a layer pulled */
        }
        arr = json_object_get(root, "logs");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "vertex"));
                json_t *data = json_object_get(it, "data");
                int64_t vi;

                if (!dg || !json_is_string(data))
                        continue;
                vi = vertex(b, digest_key(dg), true);
                if (vi < 0)
                        continue;
                touch(b, &b->v[vi], now);
                b->v[vi].worked = true;
                if (b64_decode(json_string_value(data), json_string_length(data), &b->data) < 0)
                        continue;
                json_logs(b, (uint32_t)vi, b->data.p ? b->data.p : "", b->data.len);
        }
}

static void json_reset(struct buildkit *b)
{
        dbuf_reset(&b->json);
        b->depth = 0;
        b->in_str = b->esc = b->json_active = b->json_skip = b->json_compact = false;
        b->json_lines = 0;
}

/* Assemble objects by brace depth; strings and escapes respected. */
_noinline_ static bool feed_json(struct buildkit *b, const char *line, const char *end, double now)
{
        size_t len = (size_t)(end - line);

        if (!b->json_active) {
                if (!(len >= 2 && line[0] == '{' && line[1] == '"') &&
                    !(len == 1 && line[0] == '{'))
                        return false;
                b->json_active = true;
                b->json_compact = len >= 2;
        } else if (b->json_lines == 1 && b->json.len == 2) {
                /* After a lone "{": the indented form goes on with a key. */
                const char *p = line;
                while (p < end && *p == ' ')
                        p++;
                if (p == end || *p != '"') {
                        json_reset(b);
                        return false;
                }
        }
        for (const char *p = line; p < end; p++) {
                char c = *p;
                if (b->in_str) {
                        if (b->esc)
                                b->esc = false;
                        else if (c == '\\')
                                b->esc = true;
                        else if (c == '"')
                                b->in_str = false;
                } else if (c == '"') {
                        b->in_str = true;
                } else if (c == '{' || c == '[') {
                        b->depth++;
                } else if (c == '}' || c == ']') {
                        b->depth--;
                }
        }
        b->json_lines++;
        /* No JSON string spans lines, and a rawjson object ends on its own
         * line: anything else is a line cut at the cap (or junk). Drop the
         * object, or the scanner stays inside it for the rest of the run. */
        if (b->in_str || (b->json_compact && b->depth > 0)) {
                json_reset(b);
                return true;
        }
        if (!b->json_skip) {
                if (b->json.len + len + 1 > BUILDKIT_MAX_JSON ||
                    dbuf_append(&b->json, line, len) < 0 || dbuf_append(&b->json, "\n", 1) < 0) {
                        b->json_skip = true;
                        dbuf_release(&b->json);
                }
        }
        if (b->depth <= 0) {
                if (!b->json_skip && b->depth == 0) {
                        json_t *root = json_loadb(b->json.p, b->json.len, 0, NULL);
                        json_status(b, root, now);
                        json_decref(root);
                }
                json_reset(b);
        }
        return true;
}

bool buildkit_feed_line(struct buildkit *b, const char *line, size_t len, double now)
{
        struct bkline bl;

        bkline_parse(line, len, &bl);
        return buildkit_feed_line_bk(b, line, len, now, &bl);
}

_noinline_ static bool feed_line_slow(struct buildkit *b, const char *line, size_t len, double now,
                                      const struct bkline *bl);

bool buildkit_feed_line_bk(struct buildkit *b, const char *line, size_t len, double now,
                           const struct bkline *bl)
{
        /* Most lines are "#N <secs> <log text>" of the vertex of the line
         * before: what feed_plain does with them, with no call but the
         * log's. */
        if (!b->json_active && bl->ok && bl->secs_end && bl->n != 0 && !b->prev_blank &&
            b->last_vi < b->nv && b->v[b->last_vi].key == bl->n + 1) {
                b->last_json = false;
                b->seen = true;
                touch(b, &b->v[b->last_vi], now);
                secs_line(b, b->last_vi, bl);
                return true;
        }
        return feed_line_slow(b, line, len, now, bl);
}

static bool feed_line_slow(struct buildkit *b, const char *line, size_t len, double now,
                           const struct bkline *bl)
{
        const char *end = bl->end;

        b->last_json = false;
        if (b->json_active || (len && line[0] == '{')) {
                if (feed_json(b, line, end, now)) {
                        b->last_json = true;
                        return false;
                }
        }
        if (end == line) {
                b->prev_blank = true;
                return false;
        }
        if (bl->hash)
                return feed_plain(b, bl, now);
        b->prev_blank = false;
        return false;
}

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

/* Exported, and no vertex failed or was canceled: see vtx_cached(). */
static bool stream_ended_ok(const struct buildkit *b)
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

        if ((ss->n + 1) * 2 > ss->cap) {
                size_t nc = ss->cap ? ss->cap * 2 : 256;
                struct stepent *ne = calloc(nc, sizeof(*ne));
                if (!ne)
                        return NULL;
                for (size_t i = 0; i < ss->cap; i++) {
                        uint64_t hh;
                        if (!ss->e[i].used)
                                continue;
                        hh = ss->e[i].key ^
                             ((uint64_t)(uint32_t)ss->e[i].owner * 0x9e3779b97f4a7c15ULL);
                        for (j = slot_of(hh, (uint32_t)nc); ne[j].used; j = (j + 1) & (nc - 1))
                                ;
                        ne[j] = ss->e[i];
                }
                free(ss->e);
                ss->e = ne;
                ss->cap = nc;
        }
        for (j = slot_of(h, (uint32_t)ss->cap); ss->e[j].used; j = (j + 1) & (ss->cap - 1))
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

        if (!e) { /* out of memory: every vertex counts */
                ++*steps;
                *cached_n += cached;
                return;
        }
        if (added) {
                ++*steps;
                e->cached = cached;
                *cached_n += cached;
        } else if (e->cached && !cached) {
                e->cached = false;
                --*cached_n;
        }
}

/* v as a step fact of the model: from its first line to the line that
 * ended it; when BuildKit gave its own time (rawjson's started/completed,
 * plain's "DONE 1.4s"), that long, ending at that line (a vertex's lines
 * can come in one burst when it ends), never before the run began. */
static void add_step(struct targets *ts, const struct vtx *v, bool ended_ok)
{
        struct step_fact f = {.target = v->target, .start_s = v->first, .end_s = v->end};
        double bk = NAN;

        copy_utf8(f.name, sizeof(f.name), v->name ? v->name : "", v->name ? strlen(v->name) : 0);
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
static void count_vertex(struct buildkit *b, struct targets *ts, struct stepset *ss, struct vtx *v,
                         const int *map, int single, bool multi, bool ended_ok)
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
                copy_utf8(f->name, sizeof(f->name), v->name ? v->name : "",
                          v->name ? strlen(v->name) : 0);
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

bool buildkit_ended_ok(const struct buildkit *b)
{
        return stream_ended_ok(b);
}

void buildkit_finish(struct buildkit *b, struct targets *ts)
{
        int map[TARGETS_MAX];
        bool multi = buildkit_multi(b), ended_ok;
        struct stepset ss = {0};
        int single = -1;

        flush_carry(b);
        ts->buildkit_seen = b->seen;
        ts->vertex_cap_hit = b->vertex_cap_hit;
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
        ended_ok = stream_ended_ok(b);
        for (uint32_t i = 0; i < b->nv; i++)
                if (b->v[i].named)
                        count_vertex(b, ts, &ss, &b->v[i], map, single, multi, ended_ok);
        free(ss.e);
        for (size_t i = 0; i < ts->n; i++)
                if (!ts->t[i].builder[0] && b->builder[0])
                        memcpy(ts->t[i].builder, b->builder, sizeof(b->builder));
}

/* "i/n" (is_step_token's) as numbers; false past 9 digits or for 0. */
static bool step_numbers(const char *s, size_t len, uint32_t *ret_i, uint32_t *ret_n)
{
        const char *slash = memchr(s, '/', len);
        uint32_t v[2] = {0, 0};
        size_t k = 0;

        if (!slash || slash - s > 9 || (size_t)(s + len - slash - 1) > 9)
                return false;
        for (const char *p = s; p < s + len; p++)
                if (p == slash)
                        k = 1;
                else
                        v[k] = v[k] * 10 + (uint32_t)(*p - '0');
        if (!v[0] || !v[1])
                return false;
        *ret_i = v[0];
        *ret_n = v[1];
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
                size_t n = next_token(&p, close, &tok);
                if (n) {
                        last = tok;
                        last_len = n;
                }
        }
        if (!last || !is_step_token(last, last_len) ||
            !step_numbers(last, last_len, &ret->i, &ret->n))
                return false;
        for (p = name + 1; p < last;) {
                if (!next_token(&p, last, &tok))
                        continue;
                if (first && strip_target) {
                        first = false;
                        continue;
                }
                first = false;
                h = fnv1a(fnv1a(h, tok, (size_t)(p - tok)), " ", 1);
        }
        ret->stage = h;
        return true;
}

static int place_cmp(const void *a, const void *b)
{
        const struct step_place *x = a, *y = b;

        if (x->stage != y->stage)
                return x->stage < y->stage ? -1 : 1;
        if (x->n != y->n)
                return x->n < y->n ? -1 : 1;
        if (x->i != y->i)
                return x->i < y->i ? -1 : 1;
        return (x->owner > y->owner) - (x->owner < y->owner);
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

int buildkit_count_log(const char *buf, size_t len, uint32_t *ret_steps, uint32_t *ret_cached)
{
        struct buildkit_config bc = {0};
        struct buildkit *b = NULL;
        struct targets *ts = calloc(1, sizeof(*ts));
        int e = ts ? buildkit_new(&bc, &b) : -ENOMEM;

        if (e < 0) {
                free(ts);
                return e;
        }
        targets_init_zeroed(ts);
        for (const char *p = buf, *end = buf + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
                (void)buildkit_feed_line(b, p, (size_t)(le - p), 0);
                p = le + (nl != NULL);
        }
        buildkit_finish(b, ts);
        e = ts->buildkit_seen ? 0 : -EINVAL;
        if (e == 0) {
                *ret_steps = ts->steps;
                *ret_cached = ts->cached;
        }
        buildkit_free(b);
        targets_release(ts);
        free(ts);
        return e;
}
