/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "model/compilers.h"
#include "parse/buildkit.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/macro.h"

#define ESC '\x1b'
#define BEL '\x07'

/* Cleaned bytes kept per line for classification: compile lines put -c and
 * -o after kilobytes of flags, so this is much more than the context cap. */
#define SCRATCH_MAX LINEBUF_MAX

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
        char *scratch;      /* SCRATCH_MAX + 1 bytes */
        char *winbuf;       /* the same: a cleaned line of a batch that wins */
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
        struct batched *batch;
        size_t nbatch;
        double batch_now;
};

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

static inline bool is_space(char c)
{
        return c == ' ' || (unsigned char)(c - '\t') <= '\f' - '\t'; /* \t \n \v \f */
}

static inline bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Longest prefix of s[0..len) of at most max bytes that does not split a
 * well-formed UTF-8 sequence. Malformed bytes are plain bytes here. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
        size_t i = max, k = 0, need;
        unsigned char lead;

        if (len <= max)
                return len;
        while (i > 0 && k < 3 && ((unsigned char)s[i] & 0xC0) == 0x80) {
                i--;
                k++;
        }
        if (k == 0)
                return max;
        lead = (unsigned char)s[i];
        if (lead >= 0xC2 && lead <= 0xDF)
                need = 2;
        else if (lead >= 0xE0 && lead <= 0xEF)
                need = 3;
        else if (lead >= 0xF0 && lead <= 0xF4)
                need = 4;
        else
                return max;
        if (i + need <= max)
                return max; /* s[max] is a stray continuation byte */
        if (i + need > len)
                return max; /* truncated sequence: malformed anyway */
        for (size_t j = i + 1; j < i + need; j++)
                if (((unsigned char)s[j] & 0xC0) != 0x80)
                        return max;
        return i;
}

/* p points at ESC; returns the first byte after the escape sequence. An
 * unterminated sequence swallows the rest, as a terminal would. */
static const char *skip_escape(const char *p, const char *end)
{
        unsigned char c;

        p++;
        if (p == end)
                return end;
        c = (unsigned char)*p++;
        switch (c) {
        case '[': /* CSI: parameters and intermediates, then a final byte */
                while (p < end) {
                        c = (unsigned char)*p++;
                        if (c >= 0x40 && c <= 0x7E)
                                return p;
                }
                return end;
        case ']': /* OSC (incl. OSC-8 links), and the other string controls */
        case 'P':
        case 'X':
        case '^':
        case '_':
                while (p < end) {
                        if (*p == BEL)
                                return p + 1;
                        if (*p == ESC) {
                                if (p + 1 < end && p[1] == '\\')
                                        return p + 2;
                                return p; /* a new sequence aborts this one */
                        }
                        p++;
                }
                return end;
        default:
                /* nF sequences (ESC ( B) carry intermediates before the final. */
                while (c >= 0x20 && c <= 0x2F && p < end)
                        c = (unsigned char)*p++;
                return p;
        }
}

/* Copy [p,end) without escape sequences, leading spaces skipped and
 * trailing ones trimmed, at most cap bytes. */
static size_t clean_segment(const char *p, const char *end, char *out, size_t cap)
{
        size_t o = 0;

        while (p < end && o < cap) {
                const char *e = memchr(p, ESC, (size_t)(end - p));
                const char *run_end = e ? e : end;
                size_t n;

                if (o == 0)
                        while (p < run_end && is_space(*p))
                                p++;
                n = MIN((size_t)(run_end - p), cap - o);
                memcpy(out + o, p, n);
                o += n;
                if (!e)
                        break;
                p = skip_escape(e, end);
        }
        while (o > 0 && is_space(out[o - 1]))
                o--;
        return o;
}

/* What a terminal leaves visible: the last '\r'-separated segment that still
 * has text once cleaned. */
static size_t clean_line(const char *in, size_t len, char *out, size_t cap)
{
        const char *end = in + len;

        for (;;) {
                const char *r = memrchr(in, '\r', (size_t)(end - in));
                size_t m = clean_segment(r ? r + 1 : in, end, out, cap);

                if (m > 0 || !r)
                        return m;
                end = r;
        }
}

size_t logline_clean(const char *in, size_t len, char *out, size_t cap)
{
        /* A few bytes past the cap so utf8_cut can see the sequence it cuts. */
        char tmp[SAMPLE_CONTEXT_MAX + 4];
        size_t lim, m;

        if (cap == 0)
                return 0;
        lim = MIN(cap - 1, (size_t)SAMPLE_CONTEXT_MAX);
        m = clean_line(in, len, tmp, sizeof(tmp));
        m = utf8_cut(tmp, m, lim);
        while (m > 0 && is_space(tmp[m - 1]))
                m--;
        memcpy(out, tmp, m);
        out[m] = '\0';
        return m;
}

/* "2025-07-03T08:13:03.5879809Z " as GitHub's raw logs put before each line;
 * returns p unchanged when absent. */
static const char *skip_ci_timestamp(const char *p, const char *end)
{
        static const char shape[] = "dddd-dd-ddTdd:dd:dd";
        const char *q = p;

        if (end - p < (ptrdiff_t)sizeof(shape))
                return p;
        for (size_t i = 0; i < sizeof(shape) - 1; i++, q++) {
                if (shape[i] == 'd' ? !is_digit(*q) : *q != shape[i])
                        return p;
        }
        if (q < end && *q == '.') {
                q++;
                while (q < end && is_digit(*q))
                        q++;
        }
        if (q < end && *q == 'Z')
                q++;
        if (q >= end || *q != ' ')
                return p;
        while (q < end && *q == ' ')
                q++;
        return q;
}

static bool skip_lit(const char **cur, const char *end, const char *lit);

static const char *skip_digits(const char *p, const char *end)
{
        while (p < end && is_digit(*p))
                p++;
        return p;
}

static bool name_is(const char *s, size_t n, const char *lit)
{
        size_t l;

        /* The first byte rules out almost every candidate without a strlen
         * (this runs for each line's first word against every set). */
        if (n == 0 ? lit[0] != '\0' : s[0] != lit[0])
                return false;
        l = strlen(lit);

        return n == l && memcmp(s, lit, l) == 0;
}

static bool name_in(const char *s, size_t n, const char *const *set)
{
        for (; *set; set++)
                if (name_is(s, n, *set))
                        return true;
        return false;
}

static bool is_compiler_name(const char *s, size_t n)
{
        const char *dash;

        if (n == 0 || n > 128)
                return false;
        /* gcc-12, clang++-17, aarch64-linux-gnu-gcc-12 */
        dash = memrchr(s, '-', n);
        if (dash && dash + 1 < s + n && is_digit(dash[1])) {
                const char *q = dash + 1;

                while (q < s + n && (is_digit(*q) || *q == '.'))
                        q++;
                if (q == s + n)
                        n = (size_t)(dash - s);
        }
        if (compilers_has(s, n, TOOL_LOG))
                return true;
        /* cross prefixes: aarch64-linux-gnu-gcc, arm-none-eabi-ld */
        dash = n ? memrchr(s, '-', n) : NULL;
        if (dash && dash > s)
                return compilers_has(dash + 1, (size_t)(s + n - dash - 1), TOOL_LOG_CROSS);
        return false;
}

/* First token of [*cur,end) as a basename; advances *cur past it. */
static bool next_token_base(const char **cur, const char *end, const char **ret, size_t *ret_len)
{
        const char *p = *cur, *sp, *slash;

        while (p < end && *p == ' ')
                p++;
        if (p == end)
                return false;
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp)
                sp = end;
        slash = memrchr(p, '/', (size_t)(sp - p));
        *ret = slash ? slash + 1 : p;
        *ret_len = (size_t)(sp - *ret);
        *cur = sp;
        return true;
}

static bool has_compile_flag(const char *p, const char *end)
{
        while (p < end) {
                const char *q = memmem(p, (size_t)(end - p), " -", 2);

                if (!q || q + 2 >= end)
                        return false;
                if (q[2] == 'o')
                        return true;
                if (q[2] == 'c' && (q + 3 == end || q[3] == ' ' || q[3] == '\t'))
                        return true;
                p = q + 2;
        }
        return false;
}

static bool is_compiler_line(const char *p, const char *end)
{
        const char *cur = p, *name;
        size_t n;

        if (!next_token_base(&cur, end, &name, &n))
                return false;
        if (name_is(name, n, "ccache") || name_is(name, n, "sccache") ||
            name_is(name, n, "distcc")) {
                if (!next_token_base(&cur, end, &name, &n))
                        return false;
        }
        if (!is_compiler_name(name, n))
                return false;
        return has_compile_flag(cur, end);
}

/* "[12/345] ..." (with NINJA_STATUS extras before ']') or "[ 42%] ...". */
static enum logline_kind classify_bracket(const char *p, const char *end)
{
        const char *q = p + 1, *d, *close;

        while (q < end && *q == ' ')
                q++;
        d = q;
        q = skip_digits(q, end);
        if (q == d || q >= end)
                return LOGLINE_NOISE;
        if (*q == '%') {
                if (q - d > 3 || q + 1 >= end || q[1] != ']')
                        return LOGLINE_NOISE;
                close = q + 1;
        } else if (*q == '/') {
                d = ++q;
                q = skip_digits(q, end);
                if (q == d)
                        return LOGLINE_NOISE;
                /* Mostly "[12/345]": the ']' right after the total, no scan. */
                close = q < end && *q == ']' ? q : memchr(q, ']', (size_t)(end - q));
                if (!close)
                        return LOGLINE_NOISE;
        } else
                return LOGLINE_NOISE;
        /* Needs a description after "] "; trailing spaces are already gone. */
        if (close + 2 > end - 1 || close[1] != ' ')
                return LOGLINE_NOISE;
        return *q == '%' ? LOGLINE_MAKE : LOGLINE_NINJA;
}

/* "1,234" (Bazel groups thousands); returns p when there is no number. */
static const char *skip_grouped(const char *p, const char *end)
{
        const char *q = skip_digits(p, end);

        if (q == p)
                return p;
        while (q + 3 < end && *q == ',' && is_digit(q[1]) && is_digit(q[2]) && is_digit(q[3]))
                q += 4;
        return q;
}

/* Bazel: "[1,234 / 5,678] Compiling src/a.cc; 3s linux-sandbox". */
static bool is_bazel_progress(const char *p, const char *end)
{
        const char *q = skip_grouped(p + 1, end), *d;

        if (q == p + 1 || !skip_lit(&q, end, " / "))
                return false;
        d = q;
        q = skip_grouped(q, end);
        return q != d && q + 2 < end && q[0] == ']' && q[1] == ' ';
}

/* Tags of quiet rules: kbuild (Linux, redis, git), automake silent rules,
 * libtool. */
static bool is_quiet_tag(const char *s, size_t n)
{
        static const char *const tags[] = {
            "CC",      "CXX",     "CPP",    "CCLD",    "CXXLD",   "OBJCLD", "FCLD",    "LD",
            "AR",      "AS",      "CCAS",   "CPPAS",   "GEN",     "HOSTCC", "HOSTCXX", "HOSTLD",
            "LINK",    "INSTALL", "RANLIB", "STRIP",   "OBJCOPY", "CHK",    "UPD",     "DTC",
            "FC",      "F77",     "NVCC",   "MOC",     "UIC",     "RCC",    "LEX",     "YACC",
            "MODPOST", "LDS",     "SIGN",   "WINDRES", "OBJC",    "OBJCXX", NULL,
        };

        return name_in(s, n, tags);
}

/* "CC      foo.o", "CC [M]  drivers/x.o", "CCLD     prog": a tag, spaces,
 * one target (the line is trimmed already). */
static bool is_quiet_line(const char *p, const char *end)
{
        const char *q = p;

        while (q < end && ((*q >= 'A' && *q <= 'Z') || is_digit(*q)))
                q++;
        if (q == end || *q != ' ' || !is_quiet_tag(p, (size_t)(q - p)))
                return false;
        while (q < end && *q == ' ')
                q++;
        if (skip_lit(&q, end, "[M]"))
                while (q < end && *q == ' ')
                        q++;
        return q < end && *q != '[' && !memchr(q, ' ', (size_t)(end - q));
}

/* cargo: "Compiling serde v1.0.200", "Checking foo v0.1.0 (/src/foo)". */
static bool is_cargo_line(const char *p, const char *end)
{
        static const char *const verbs[] = {"Compiling", "Checking", "Documenting", NULL};
        const char *cur = p, *w;
        size_t n;

        if (!next_token_base(&cur, end, &w, &n) || w != p || !name_in(w, n, verbs))
                return false;
        if (!next_token_base(&cur, end, &w, &n)) /* the crate */
                return false;
        cur++;
        return cur + 1 < end && *cur == 'v' && is_digit(cur[1]);
}

static bool set_work(struct logline *ret, enum logline_kind k)
{
        ret->kind = k;
        ret->work = true;
        return true;
}

/* Lines that name work on their own, also as a BuildKit step's log text. */
static bool classify_work(const char *p, const char *end, struct logline *ret)
{
        enum logline_kind k;

        if (p < end && *p == '[') {
                k = classify_bracket(p, end);
                if (k != LOGLINE_NOISE)
                        return set_work(ret, k);
                if (is_bazel_progress(p, end))
                        return set_work(ret, LOGLINE_BAZEL);
                return false;
        }
        if (is_compiler_line(p, end))
                return set_work(ret, LOGLINE_COMPILER);
        if (p < end && *p >= 'A' && *p <= 'Z') {
                if (is_quiet_line(p, end))
                        return set_work(ret, LOGLINE_QUIET);
                if (is_cargo_line(p, end))
                        return set_work(ret, LOGLINE_CARGO);
        }
        return false;
}

static bool is_platform_token(const char *s, size_t n)
{
        return memchr(s, '/', n) != NULL;
}

static bool is_index_token(const char *s, size_t n)
{
        const char *end = s + n, *q = skip_digits(s, end);

        if (q == s || q == end || *q != '/')
                return false;
        q++;
        return q < end && skip_digits(q, end) == end;
}

/* "#N [target platform stage i/n] INSTR ..." with p just after '['. */
static bool classify_step(const char *p, const char *end, struct logline *ret)
{
        const char *close = memchr(p, ']', (size_t)(end - p));
        const char *tok[8], *last = NULL, *first_name = NULL, *last_name_end = NULL;
        size_t toklen[8], ntok = 0;
        const char *q;

        if (!close || close + 1 >= end || close[1] != ' ')
                return false;
        for (q = p; q < close;) {
                const char *t;

                while (q < close && *q == ' ')
                        q++;
                if (q == close)
                        break;
                t = q;
                while (q < close && *q != ' ')
                        q++;
                if (ntok == ARRAY_SIZE(tok))
                        return false; /* not a shape BuildKit prints */
                tok[ntok] = t;
                toklen[ntok++] = (size_t)(q - t);
        }
        if (ntok == 0)
                return false;
        last = tok[ntok - 1];
        if (!is_index_token(last, toklen[ntok - 1]))
                return false;
        for (size_t i = 0; i + 1 < ntok; i++) {
                if (is_platform_token(tok[i], toklen[i]))
                        continue;
                if (!first_name)
                        first_name = tok[i];
                last_name_end = tok[i] + toklen[i];
        }
        ret->kind = LOGLINE_BUILDKIT_STEP;
        ret->work = true;
        if (first_name) {
                ret->stage = first_name;
                ret->stage_len = (size_t)(last_name_end - first_name);
        }
        return true;
}

/* What BuildKit prints about a vertex's state, not what it does: "DONE",
 * "DONE 1.4s", "CACHED", "CANCELED", "...", and BuildKit 0.8's
 * "sha256:<64 hex>" while it resolves a digest. */
static bool is_bookkeeping(const char *q, const char *end)
{
        size_t n = (size_t)(end - q);

        /* Most BuildKit lines are a container's output ("1.234 text"): the
         * first byte rules every word out. */
        if (*q != 'C' && *q != 'D' && *q != '.' && *q != 's')
                return false;
        if ((n == 6 && !memcmp(q, "CACHED", 6)) || (n == 8 && !memcmp(q, "CANCELED", 8)) ||
            (n == 3 && !memcmp(q, "...", 3)) || (n == 4 && !memcmp(q, "DONE", 4)))
                return true;
        if (n > 5 && !memcmp(q, "DONE ", 5)) {
                const char *d = skip_digits(q + 5, end);
                return d > q + 5 && d < end && *d == '.' && skip_digits(d + 1, end) + 1 == end &&
                       end[-1] == 's';
        }
        if (n == 71 && !memcmp(q, "sha256:", 7)) {
                for (const char *p = q + 7; p < end; p++)
                        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                                return false;
                return true;
        }
        return false;
}

/* bl: the prefix of the line at p, as bkline_parse found it (p is the line
 * uncleaned, end at most its end), or NULL. */
static void classify_buildkit(const char *p, const char *end, const struct bkline *bl,
                              struct logline *ret)
{
        const char *q = bl ? bl->digits_end : skip_digits(p + 1, end), *d;

        if (q == p + 1 || q >= end || *q != ' ')
                return; /* stays NOISE */
        ret->kind = LOGLINE_BUILDKIT;
        q++;
        if (q >= end)
                return;
        if (bl && bl->secs_end) { /* "<secs> text", as below */
                q = bl->secs_end;
                if (q >= end || *q != ' ')
                        return;
                while (q < end && *q == ' ')
                        q++;
                classify_work(q, end, ret);
                return;
        }
        if (is_bookkeeping(q, end)) {
                ret->bookkeeping = true;
                return;
        }
        if (*q == '[') {
                classify_step(q + 1, end, ret);
                return;
        }
        /* "#N 1.234 text": a container's output inside a step */
        d = q;
        q = skip_digits(q, end);
        if (q == d || q >= end || *q != '.')
                return;
        d = ++q;
        q = skip_digits(q, end);
        if (q == d || q - d > 3 || q >= end || *q != ' ')
                return;
        while (q < end && *q == ' ')
                q++;
        classify_work(q, end, ret);
}

static bool skip_lit(const char **cur, const char *end, const char *lit)
{
        size_t l = strlen(lit);

        if ((size_t)(end - *cur) < l || memcmp(*cur, lit, l) != 0)
                return false;
        *cur += l;
        return true;
}

static void classify_group(const char *q, const char *end, struct logline *ret)
{
        ret->kind = LOGLINE_GHA_GROUP;
        while (q < end && is_space(*q))
                q++;
        while (end > q && is_space(end[-1]))
                end--;
        if (q < end) {
                ret->stage = q;
                ret->stage_len = (size_t)(end - q);
        }
}

static const char *const diag_words[] = {"warning", "error", "note", "fatal error", "remark", NULL};

/* gcc/clang's "PATH:LINE:COL: warning: ...", "PATH: In function 'f':",
 * "PATH:12:3:   required from here", "note: ..." and "error: ...". */
static bool is_located_diag(const char *p, const char *end)
{
        const char *c = memchr(p, ':', (size_t)MIN(end - p, (ptrdiff_t)512)), *d;

        if (!c || c == p)
                return false;
        if (c + 1 < end && c[1] == ' ') /* "error: x", "PATH: In function" */
                return name_in(p, (size_t)(c - p), diag_words) ||
                       (c + 4 < end &&
                        (memcmp(c + 1, " In ", 4) == 0 || memcmp(c + 1, " At ", 4) == 0));
        d = skip_digits(c + 1, end);
        if (d == c + 1 || d >= end || *d != ':')
                return false;
        d = skip_digits(d + 1, end); /* the column, when there is one */
        if (d < end && *d == ':')
                d++;
        while (d < end && *d == ' ')
                d++;
        for (size_t i = 0; diag_words[i]; i++) {
                size_t n = strlen(diag_words[i]);

                if ((size_t)(end - d) > n && memcmp(d, diag_words[i], n) == 0 && d[n] == ':')
                        return true;
        }
        return (size_t)(end - d) >= 13 && memcmp(d, "required from", 13) == 0;
}

static bool is_bar_glyph(const char *p, const char *end, size_t *ret_n)
{
        unsigned char c = (unsigned char)*p;

        *ret_n = 1;
        if (c == '=' || c == '#' || c == '-' || c == '.' || c == '*' || c == '>')
                return true;
        /* U+2500..U+259F: box drawing, block elements (━ █ ▇ ░ ▒ ▓) */
        *ret_n = 3;
        return c == 0xE2 && end - p >= 3 &&
               ((unsigned char)p[1] == 0x94 || (unsigned char)p[1] == 0x95 ||
                (unsigned char)p[1] == 0x96);
}

/* A progress bar, by its start: "[" or "|" and then a run of bar glyphs,
 * at least 8 of them, or 4 with a '%' on the line, or nothing but them
 * ("....", "====="). */
static bool is_progress(const char *p, const char *end, bool pct)
{
        size_t run = 0, n;

        if (p < end && (*p == '[' || *p == '|'))
                p++;
        while (p < end && run < 8 && is_bar_glyph(p, end, &n)) {
                run++;
                p += n;
        }
        return run >= 8 || (run > 0 && p == end) ||
               (run >= 4 && (pct || memchr(p, '%', (size_t)(end - p)) != NULL));
}

/* A noise line that must never be the context: rejected by its first byte
 * when it cannot be one. */
static bool is_diag(const char *p, const char *end)
{
        const char *q = p;

        switch (*p) {
        case '^': /* caret lines "^~~~~", gutters "| ^~~~" */
        case '~':
        case '|':
                return true;
        case 'I':
                return skip_lit(&q, end, "In file included from") ||
                       skip_lit(&q, end, "In function") ||
                       skip_lit(&q, end, "In member function") ||
                       skip_lit(&q, end, "In instantiation of") || is_located_diag(p, end);
        case 'f':
                /* the rest of an include chain: "from a/b.h:12," */
                if (skip_lit(&q, end, "from ") && (q = memchr(q, ':', (size_t)(end - q))) &&
                    q + 1 < end && is_digit(q[1]))
                        return true;
                break;
        case '[':
        case '=':
        case '#':
        case '-':
        case '.':
        case '*':
        case '>':
        case '\xE2':
                return is_progress(p, end, false);
        default:
                break;
        }
        if (is_digit(*p)) { /* "  123 | code", "45% |#####   |" */
                q = skip_digits(p, end);
                if (q < end && *q == '%' && ++q < end && *q == ' ')
                        return is_progress(q + 1, end, true);
                while (q < end && *q == ' ')
                        q++;
                if (q < end && *q == '|')
                        return true;
                /* clang's tally: "4 warnings generated.", "1 warning and 2
                 * errors generated." */
                if ((size_t)(end - p) > 10 && memcmp(end - 10, "generated.", 10) == 0 &&
                    (skip_lit(&q, end, "warning") || skip_lit(&q, end, "error")))
                        return true;
        }
        return is_located_diag(p, end);
}

static void classify(const char *line, size_t len, const struct bkline *bl, struct logline *ret);

void logline_classify(const char *line, size_t len, struct logline *ret)
{
        classify(line, len, NULL, ret);
}

static void classify(const char *line, size_t len, const struct bkline *bl, struct logline *ret)
{
        const char *p = line, *end = line + len, *q;

        *ret = (struct logline){.kind = LOGLINE_NOISE};
        if (len == 0) {
                ret->kind = LOGLINE_BLANK;
                return;
        }
        if (is_digit(*p)) {
                p = skip_ci_timestamp(p, end);
                if (p == end)
                        return;
        }
        switch (*p) {
        case '#':
                q = p;
                /* "##[group]" is how GitHub's runner echoes ::group:: */
                if (p + 1 < end && p[1] == '#' && skip_lit(&q, end, "##[group]"))
                        classify_group(q, end, ret);
                else
                        classify_buildkit(p, end, bl && bl->hash ? bl : NULL, ret);
                if (ret->kind == LOGLINE_NOISE && is_progress(p, end, false))
                        ret->kind = LOGLINE_DIAG; /* "#########" */
                return;
        case ':':
                q = p;
                if (skip_lit(&q, end, "::group::"))
                        classify_group(q, end, ret);
                return;
        case 'm':
                /* "make[2]: *** ..." / "make: *** ...": a failure, not work */
                q = p;
                if (!skip_lit(&q, end, "make"))
                        break;
                if (q < end && *q == '[') {
                        const char *d = ++q;

                        q = skip_digits(q, end);
                        if (q == d || !skip_lit(&q, end, "]"))
                                break;
                }
                if (skip_lit(&q, end, ": ***")) {
                        ret->kind = LOGLINE_MAKE;
                        return;
                }
                break;
        default:
                break;
        }
        if (!classify_work(p, end, ret) && is_diag(p, end))
                ret->kind = LOGLINE_DIAG;
}

int logctx_new(const struct logctx_config *cfg, struct logctx **ret)
{
        struct logctx *c;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->scratch = malloc(SCRATCH_MAX + 1);
        c->winbuf = malloc(SCRATCH_MAX + 1);
        c->batch = malloc(BATCH_MAX * sizeof(*c->batch));
        if (!c->scratch || !c->winbuf || !c->batch)
                goto nomem;
        if (cfg && cfg->hold_s > 0 && cfg->hold_s < 1e9)
                c->hold_s = cfg->hold_s;
        if (cfg && cfg->fixed_stage) {
                size_t n = strlen(cfg->fixed_stage);

                n = utf8_cut(cfg->fixed_stage, n, SAMPLE_STAGE_MAX);
                c->fixed_stage = strndup(cfg->fixed_stage, n);
                if (!c->fixed_stage)
                        goto nomem;
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
nomem:
        logctx_free(c);
        return -ENOMEM;
}

void logctx_free(struct logctx *c)
{
        if (!c)
                return;
        if (c->has_re)
                regfree(&c->re);
        free(c->fixed_stage);
        free(c->scratch);
        free(c->winbuf);
        free(c->batch);
        free(c);
}

static void set_stage(struct logctx *c, const char *s, size_t n)
{
        n = utf8_cut(s, n, SAMPLE_STAGE_MAX);
        memcpy(c->stage, s, n);
        c->stage[n] = '\0';
        c->stage_set = true;
}

/* "pytorch linux/arm64 builder" -> "pytorch/builder" */
static bool set_stage_buildkit(struct logctx *c, const char *s, size_t n)
{
        char tmp[SAMPLE_STAGE_MAX + 4];
        const char *q = s, *end = s + n;
        size_t o = 0;

        while (q < end && o < sizeof(tmp)) {
                const char *t;
                size_t l;

                while (q < end && *q == ' ')
                        q++;
                t = q;
                while (q < end && *q != ' ')
                        q++;
                l = (size_t)(q - t);
                if (l == 0 || is_platform_token(t, l))
                        continue;
                if (o > 0)
                        tmp[o++] = '/';
                l = MIN(l, sizeof(tmp) - o);
                memcpy(tmp + o, t, l);
                o += l;
        }
        if (o == 0)
                return false;
        set_stage(c, tmp, o);
        return true;
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

void logctx_feed_line(struct logctx *c, const char *line, size_t len)
{
        logctx_feed_line_at(c, line, len, 0.0);
}

static void put_context(struct logctx *c, const char *p, size_t n)
{
        size_t cut = utf8_cut(p, n, SAMPLE_CONTEXT_MAX);

        while (cut > 0 && is_space(p[cut - 1]))
                cut--;
        memcpy(c->context, p, cut);
        c->context[cut] = '\0';
}

_noinline_ static void flush_batch(struct logctx *c);

static void flush_context(struct logctx *c)
{
        if (c->pend) {
                put_context(c, c->pend, c->pend_n);
                c->pend = NULL;
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

/* Whether [p, p+n) holds an escape or a '\r'. Within the chunk, each
 * byte's next place is found once and kept while the lines move forward:
 * linear in the chunk whatever the lines are. */
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

static bool needs_cleaning(struct logctx *c, const char *p, size_t n)
{
        if (!in_chunk(c, p, n))
                return memchr(p, ESC, n) || memchr(p, '\r', n);
        return !clean_in_chunk(c, p, n);
}

void logctx_feed_line_at(struct logctx *c, const char *line, size_t len, double now_s)
{
        logctx_feed_line_bk(c, line, len, now_s, NULL);
}

/* What one classified line does: the stage it sets, and whether it becomes
 * the context (the rule of logctx_line_wins). p is in the chunk, or the
 * scratch buffer, or elsewhere (then copied now). */
static void apply_line(struct logctx *c, const char *p, size_t n, const struct logline *l,
                       double now_s)
{
        bool staged = false;

        /* The user's --stage-regex wins over what the line itself says. */
        if (c->has_re)
                staged = apply_regex(c, p, n);
        if (!staged && l->stage_len > 0) {
                if (l->kind == LOGLINE_BUILDKIT_STEP)
                        set_stage_buildkit(c, l->stage, l->stage_len);
                else if (l->kind == LOGLINE_GHA_GROUP)
                        set_stage(c, l->stage, l->stage_len);
        }

        if (l->kind == LOGLINE_BLANK || l->kind == LOGLINE_DIAG || l->bookkeeping)
                return;
        if (!logctx_line_wins(l->work, c->seen_work, c->last_work_s, now_s, c->hold_s))
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
 * stage, by the bytes classify() decides it on: "##[group]", "::group::"
 * and "#N [..." (a BuildKit step), also after a CI timestamp. A line that
 * "#N 1.234 " starts is a step's output, never a step. */
static bool stage_candidate(const char *p, const char *end)
{
        const char *q;

        if (is_digit(*p)) {
                p = skip_ci_timestamp(p, end);
                if (p == end || is_digit(*p))
                        return false;
        }
        if (*p == ':')
                return true;
        if (*p != '#' || p + 1 >= end)
                return false;
        if (p[1] == '#')
                return true;
        q = skip_digits(p + 1, end);
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
 * bytes classify() decides those on: a bracket, a capital ("CC x.o",
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
        const struct batched *win = NULL, *eligible = NULL;
        const char *win_p = NULL, *el_p = NULL;
        size_t win_n = 0, el_n = 0;
        bool stage_done = false;
        size_t i = c->nbatch;

        c->nbatch = 0;
        while (i-- > 0 && !(win && stage_done)) {
                const struct batched *b = &c->batch[i];
                struct bkline bl;
                struct logline l;
                const char *p;
                size_t n;

                if (win && !b->stage_cand)
                        continue;
                p = trim(b->line, b->len, &n);
                if (b->dirty && n > 0) {
                        n = clean_line(p, n, c->scratch, SCRATCH_MAX);
                        p = c->scratch;
                        if (win && (n == 0 || !stage_candidate(p, p + n)))
                                continue;
                }
                if (eligible && n > 0 && !may_matter(p, n))
                        continue;
                if (p == b->line)
                        bkline_parse(b->line, b->len, &bl);
                classify(p, n, p == b->line ? &bl : NULL, &l);
                if (!stage_done && l.stage_len > 0) {
                        if (l.kind == LOGLINE_BUILDKIT_STEP)
                                stage_done = set_stage_buildkit(c, l.stage, l.stage_len);
                        else if (l.kind == LOGLINE_GHA_GROUP) {
                                set_stage(c, l.stage, l.stage_len);
                                stage_done = true;
                        }
                }
                if (win || l.kind == LOGLINE_BLANK || l.kind == LOGLINE_DIAG || l.bookkeeping)
                        continue;
                if (!l.work && eligible)
                        continue;
                if (p == c->scratch) {
                        memcpy(c->winbuf, p, n);
                        p = c->winbuf;
                }
                if (l.work) {
                        win = b;
                        win_p = p;
                        win_n = n;
                } else {
                        eligible = b;
                        el_p = p;
                        el_n = n;
                }
        }
        if (win) {
                c->seen_work = true;
                c->last_work_s = c->batch_now;
                el_p = win_p;
                el_n = win_n;
        } else if (eligible &&
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
        if (needs_cleaning(c, p, n)) {
                n = clean_line(p, n, c->scratch, SCRATCH_MAX);
                p = c->scratch;
        }
        /* The prefix is the line's only while the line is where it was. */
        classify(p, n, p == line ? bl : NULL, &l);
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
         * looked at not one at a time but as a batch. The common case
         * first, with no call: clean, the batch not full, of its instant. */
        if (!c->has_re && in_chunk(c, line, len)) {
                if (line >= c->clean_lo && line + len <= c->clean_hi && c->nbatch > 0 &&
                    c->nbatch < BATCH_MAX && c->batch_now == now_s) {
                        batch_push(c, line, len, raw_stage_candidate(line, len, bl), false);
                        return;
                }
                batch_slow(c, line, len, now_s, bl);
                return;
        }
        feed_one(c, line, len, now_s, bl);
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
