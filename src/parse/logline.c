/* SPDX-License-Identifier: MIT */
/* One line of the build's output on its own: what a terminal leaves
 * visible of it (escapes and '\r' overwrites gone, logline_visible()) and
 * what kind of line it is (logline_classify_bk(): work, a step, a stage, a
 * diagnostic, noise). The context across lines is logctx.c's. */
#include <string.h>

#include "model/compilers.h"
#include "model/run.h"
#include "parse/buildkit.h"
#include "parse/logctx.h"
#include "parse/logline-int.h"
#include "util/macro.h"

size_t logline_utf8_cut(const char *s, size_t len, size_t max)
{
        size_t i = max;
        uint32_t cp;

        if (len <= max)
                return len;
        while (i > 0 && max - i < 3 && ((unsigned char)s[i] & 0xC0) == 0x80)
                i--;
        /* s[max] continues the well-formed sequence at s[i]: cut before it */
        if (i < max && run_utf8_decode((const unsigned char *)s + i, len - i, &cp) > max - i)
                return i;
        return max;
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
        if (c == '[') { /* CSI: parameters and intermediates, then a final byte */
                while (p < end) {
                        c = (unsigned char)*p++;
                        if (c >= 0x40 && c <= 0x7E)
                                return p;
                }
                return end;
        }
        if (c && strchr("]PX^_", c)) { /* OSC (incl. OSC-8 links), the other string controls */
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
        }
        /* nF sequences (ESC ( B) carry intermediates before the final. */
        while (c >= 0x20 && c <= 0x2F && p < end)
                c = (unsigned char)*p++;
        return p;
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

size_t logline_visible(const char *in, size_t len, char *out, size_t cap)
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

const char *logline_skip_ci_timestamp(const char *p, const char *end)
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
        return skip_sp(q, end);
}

const char *logline_skip_digits(const char *p, const char *end)
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
        const char *t, *slash;
        size_t n = bk_next_token(cur, end, &t);

        if (n == 0)
                return false;
        slash = memrchr(t, '/', n);
        *ret = slash ? slash + 1 : t;
        *ret_len = (size_t)(t + n - *ret);
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
        static const char *const wrappers[] = {"ccache", "sccache", "distcc", NULL};
        const char *cur = p, *name;
        size_t n;

        if (!next_token_base(&cur, end, &name, &n) ||
            (name_in(name, n, wrappers) && !next_token_base(&cur, end, &name, &n)))
                return false;
        return is_compiler_name(name, n) && has_compile_flag(cur, end);
}

/* "[12/345] ..." (with NINJA_STATUS extras before ']') or "[ 42%] ...". */
static enum logline_kind classify_bracket(const char *p, const char *end)
{
        const char *q = p + 1, *d, *close;

        q = skip_sp(q, end);
        d = q;
        q = logline_skip_digits(q, end);
        if (q == d || q >= end)
                return LOGLINE_NOISE;
        if (*q == '%') {
                if (q - d > 3 || q + 1 >= end || q[1] != ']')
                        return LOGLINE_NOISE;
                close = q + 1;
        } else if (*q == '/') {
                d = ++q;
                q = logline_skip_digits(q, end);
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
        const char *q = logline_skip_digits(p, end);

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

        if (q == p + 1 || !skip_prefix(&q, end, " / "))
                return false;
        d = q;
        q = skip_grouped(q, end);
        return q != d && q + 2 < end && q[0] == ']' && q[1] == ' ';
}

/* Tags of quiet rules: kbuild (Linux, redis, git), automake silent rules,
 * libtool. */
static const char *const quiet_tags[] = {
    "CC",      "CXX",     "CPP",    "CCLD",    "CXXLD",   "OBJCLD", "FCLD",    "LD",
    "AR",      "AS",      "CCAS",   "CPPAS",   "GEN",     "HOSTCC", "HOSTCXX", "HOSTLD",
    "LINK",    "INSTALL", "RANLIB", "STRIP",   "OBJCOPY", "CHK",    "UPD",     "DTC",
    "FC",      "F77",     "NVCC",   "MOC",     "UIC",     "RCC",    "LEX",     "YACC",
    "MODPOST", "LDS",     "SIGN",   "WINDRES", "OBJC",    "OBJCXX", NULL,
};

/* "CC      foo.o", "CC [M]  drivers/x.o", "CCLD     prog": a tag, spaces,
 * one target (the line is trimmed already). */
static bool is_quiet_line(const char *p, const char *end)
{
        const char *q = p;

        while (q < end && ((*q >= 'A' && *q <= 'Z') || is_digit(*q)))
                q++;
        if (q == end || *q != ' ' || !name_in(p, (size_t)(q - p), quiet_tags))
                return false;
        q = skip_sp(q, end);
        if (skip_prefix(&q, end, "[M]"))
                q = skip_sp(q, end);
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

/* "#N [target platform stage i/n] INSTR ..." with p just after '['. */
static bool classify_step(const char *p, const char *end, struct logline *ret)
{
        const char *close = memchr(p, ']', (size_t)(end - p));
        const char *tok[8], *last = NULL, *first_name = NULL, *last_name_end = NULL;
        size_t toklen[8], ntok = 0, n;
        const char *q, *t;

        if (!close || close + 1 >= end || close[1] != ' ')
                return false;
        for (q = p; (n = bk_next_token(&q, close, &t)) > 0;) {
                if (ntok == ARRAY_SIZE(tok))
                        return false; /* not a shape BuildKit prints */
                tok[ntok] = t;
                toklen[ntok++] = n;
        }
        if (ntok == 0)
                return false;
        last = tok[ntok - 1];
        if (!bk_is_step_token(last, toklen[ntok - 1]))
                return false;
        for (size_t i = 0; i + 1 < ntok; i++) {
                if (memchr(tok[i], '/', toklen[i])) /* a platform: linux/amd64 */
                        continue;
                if (!first_name)
                        first_name = tok[i];
                last_name_end = tok[i] + toklen[i];
        }
        set_work(ret, LOGLINE_BUILDKIT_STEP);
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
        static const char *const states[] = {"CACHED", "CANCELED", "...", "DONE", NULL};
        size_t n = (size_t)(end - q);

        /* Most BuildKit lines are a container's output ("1.234 text"): the
         * first byte rules every word out. */
        if (*q != 'C' && *q != 'D' && *q != '.' && *q != 's')
                return false;
        if (name_in(q, n, states))
                return true;
        if (n > 5 && !memcmp(q, "DONE ", 5)) {
                const char *d = logline_skip_digits(q + 5, end);
                return d > q + 5 && d < end && *d == '.' &&
                       logline_skip_digits(d + 1, end) + 1 == end && end[-1] == 's';
        }
        return bkline_is_digest(q, end);
}

/* bl: the prefix of the line at p, as bkline_parse found it (p is the line
 * uncleaned, end at most its end), or NULL. */
static void classify_buildkit(const char *p, const char *end, const struct bkline *bl,
                              struct logline *ret)
{
        const char *q = bl ? bl->digits_end : logline_skip_digits(p + 1, end), *secs;

        if (q == p + 1 || q >= end || *q != ' ')
                return; /* stays NOISE */
        ret->kind = LOGLINE_BUILDKIT;
        q++;
        if (q >= end)
                return;
        /* "#N 1.234 text": a container's output inside a step */
        secs = bl && bl->secs_end ? bl->secs_end : bkline_secs_end(q, end);
        if (secs) {
                if (secs < end && *secs == ' ')
                        classify_work(skip_sp(secs, end), end, ret);
        } else if (is_bookkeeping(q, end)) {
                ret->bookkeeping = true;
        } else if (*q == '[') {
                classify_step(q + 1, end, ret);
        }
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
        d = logline_skip_digits(c + 1, end);
        if (d == c + 1 || d >= end || *d != ':')
                return false;
        d = logline_skip_digits(d + 1, end); /* the column, when there is one */
        if (d < end && *d == ':')
                d++;
        d = skip_sp(d, end);
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

        if (*p && strchr("^~|", *p)) /* caret lines "^~~~~", gutters "| ^~~~" */
                return true;
        if (*p && strchr("[=#-.*>\xE2", *p)) /* a bar's first glyph */
                return is_progress(p, end, false);
        if (*p == 'I')
                return skip_prefix(&q, end, "In file included from") ||
                       skip_prefix(&q, end, "In function") ||
                       skip_prefix(&q, end, "In member function") ||
                       skip_prefix(&q, end, "In instantiation of") || is_located_diag(p, end);
        /* the rest of an include chain: "from a/b.h:12," */
        if (skip_prefix(&q, end, "from ") && (q = memchr(q, ':', (size_t)(end - q))) &&
            q + 1 < end && is_digit(q[1]))
                return true;
        if (is_digit(*p)) { /* "  123 | code", "45% |#####   |" */
                q = logline_skip_digits(p, end);
                if (q < end && *q == '%' && ++q < end && *q == ' ')
                        return is_progress(q + 1, end, true);
                q = skip_sp(q, end);
                if (q < end && *q == '|')
                        return true;
                /* clang's tally: "4 warnings generated.", "1 warning and 2
                 * errors generated." */
                if ((size_t)(end - p) > 10 && memcmp(end - 10, "generated.", 10) == 0 &&
                    (skip_prefix(&q, end, "warning") || skip_prefix(&q, end, "error")))
                        return true;
        }
        return is_located_diag(p, end);
}

void logline_classify_bk(const char *line, size_t len, const struct bkline *bl, struct logline *ret)
{
        const char *p = line, *end = line + len, *q;

        *ret = (struct logline){.kind = LOGLINE_NOISE};
        if (len == 0) {
                ret->kind = LOGLINE_BLANK;
                return;
        }
        if (is_digit(*p)) {
                p = logline_skip_ci_timestamp(p, end);
                if (p == end)
                        return;
        }
        q = p;
        switch (*p) {
        case '#':
                /* "##[group]" is how GitHub's runner echoes ::group:: */
                if (p + 1 < end && p[1] == '#' && skip_prefix(&q, end, "##[group]"))
                        classify_group(q, end, ret);
                else
                        classify_buildkit(p, end, bl && bl->hash ? bl : NULL, ret);
                if (ret->kind == LOGLINE_NOISE && is_progress(p, end, false))
                        ret->kind = LOGLINE_DIAG; /* "#########" */
                return;
        case ':':
                if (skip_prefix(&q, end, "::group::"))
                        classify_group(q, end, ret);
                return;
        case 'm':
                /* "make[2]: *** ..." / "make: *** ...": a failure, not work */
                if (!skip_prefix(&q, end, "make"))
                        break;
                if (q < end && *q == '[') {
                        const char *d = ++q;

                        q = logline_skip_digits(q, end);
                        if (q == d || !skip_prefix(&q, end, "]"))
                                break;
                }
                if (skip_prefix(&q, end, ": ***")) {
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
