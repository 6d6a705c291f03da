/* SPDX-License-Identifier: MIT */
/* sccache's server log: what it said of each compile. */
#include "parse/ccstats.h"

#include <stdbool.h>
#include <string.h>

#include "model/units.h"
#include "util/macro.h"
#include "util/util.h"

#define PENDING_MAX 32 /* compiles in flight at once, past it the oldest forgotten */
#define OUT_MAX 127
#define SRC_MAX 511

/* A compile heard of ("[OUT]: get_cached_or_compile: [ARGS]"), its
 * verdict not yet given. */
struct pending {
        char out[OUT_MAX + 1];
        char src[SRC_MAX + 1];
        char cache; /* a miss, until its compile says it was not cacheable */
};

struct scclog {
        struct pending p[PENDING_MAX];
        size_t n;
        ccstatslog_fn fn;
        void *userdata;
        size_t calls;
};

static bool starts(const char *p, const char *end, const char *s)
{
        size_t n = strlen(s);

        return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* Options whose value is the next argument: that is no source. */
static bool takes_value(const char *a, size_t n)
{
        static const char *const opts[] = {
            "-o",          "-I",        "-D",       "-U",
            "-x",          "-MF",       "-MT",      "-MQ",
            "-include",    "-imacros",  "-isystem", "-iquote",
            "-idirafter",  "-isysroot", "-Xclang",  "-Xpreprocessor",
            "-Xassembler", "-Xlinker",  "--param",  "-target",
            "-arch",       "-L",
        };

        for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
                if (strlen(opts[i]) == n && memcmp(a, opts[i], n) == 0)
                        return true;
        return false;
}

/* The source among the arguments as Rust prints them ("-c", "../a.c",
 * "-o", "a.o"]: the first that is no option nor an option's value, its
 * leading "./" and "../" dropped (they are relative to the compile's cwd).
 * False when there is none. */
static bool args_source(const char *c, const char *end, char *src)
{
        char a[SRC_MAX + 1];
        bool value = false;

        while ((c = memchr(c, '"', (size_t)(end - c)))) {
                size_t n = 0;
                const char *s;

                for (c++; c < end && *c != '"'; c++) {
                        if (*c == '\\' && c + 1 < end)
                                c++; /* \" and \\ as themselves; others kept as escaped */
                        if (n < SRC_MAX)
                                a[n++] = *c;
                }
                if (c++ >= end)
                        return false;
                a[n] = '\0';
                if (value || a[0] == '-' || n == 0) {
                        value = !value && takes_value(a, n);
                        continue;
                }
                for (s = a; starts(s, a + n, "./") || starts(s, a + n, "../");)
                        s += s[1] == '/' ? 2 : 3;
                copy_utf8_str(src, SRC_MAX + 1, s);
                return src[0] != '\0';
        }
        return false;
}

static void emit(struct scclog *l, const char *src, char cache)
{
        l->fn(l->userdata, src, cache);
        l->calls++;
}

/* The oldest compile in flight of output out (n bytes), or NULL. */
static struct pending *find(struct scclog *l, const char *out, size_t n)
{
        for (size_t i = 0; i < l->n; i++)
                if (strlen(l->p[i].out) == MIN(n, OUT_MAX) &&
                    memcmp(l->p[i].out, out, MIN(n, OUT_MAX)) == 0)
                        return &l->p[i];
        return NULL;
}

static void drop(struct scclog *l, struct pending *p)
{
        memmove(p, p + 1, (size_t)(l->p + l->n - (p + 1)) * sizeof(*p));
        l->n--;
}

/* "[OUT]: MSG" of compiler.rs: a compile begins, its cache lookup's
 * outcome, its compile's end. */
static void on_compile(struct scclog *l, const char *c, const char *end)
{
        const char *out = c + 1, *close = memmem(c, (size_t)(end - c), "]: ", 3), *m;
        struct pending *p;

        if (!close)
                return;
        m = close + 3;
        if (starts(m, end, "get_cached_or_compile: ")) {
                if (l->n == PENDING_MAX)
                        drop(l, &l->p[0]);
                p = &l->p[l->n];
                *p = (struct pending){.cache = 0};
                if (!args_source(m, end, p->src))
                        return;
                copy_utf8(p->out, sizeof(p->out), out, (size_t)(close - out));
                l->n++;
                return;
        }
        if (!(p = find(l, out, (size_t)(close - out))))
                return;
        if (starts(m, end, "Cache hit in ")) {
                emit(l, p->src, UNITS_CACHE_HIT);
                drop(l, p);
        } else if (starts(m, end, "Cache miss") || starts(m, end, "Cache none") ||
                   starts(m, end, "Cache recache") || starts(m, end, "Cache timed out") ||
                   starts(m, end, "Cache read error")) {
                p->cache = UNITS_CACHE_MISS;
        } else if (starts(m, end, "Compiled in ") && p->cache) {
                bool none = memmem(m, (size_t)(end - m), ", but not cacheable", 19) != NULL;

                emit(l, p->src, none ? UNITS_CACHE_NONE : p->cache);
                drop(l, p);
        }
}

/* "parse_arguments: CannotCache(REASON): [ARGS]" (the reason may hold
 * ": [" too: the last is the arguments'). */
static void cannot_cache(struct scclog *l, const char *m, const char *end)
{
        char src[SRC_MAX + 1];
        const char *a = NULL;

        for (const char *f = m; (f = memmem(f, (size_t)(end - f), ": [", 3)); f += 3)
                a = f + 3;
        if (a && args_source(a, end, src))
                emit(l, src, UNITS_CACHE_NONE);
}

size_t scclog_parse(const char *buf, size_t len, ccstatslog_fn fn, void *userdata)
{
        struct scclog l = {.fn = fn, .userdata = userdata};
        const char *c = buf, *end = buf + len;

        while (c < end) {
                const char *eol = line_end(c, end), *m = memmem(c, (size_t)(eol - c), "] ", 2);

                /* "[2026-12-05T19:30:17Z DEBUG sccache::compiler::compiler] MSG" */
                if (m && memmem(c, (size_t)(m - c), " sccache::", 10)) {
                        m += 2;
                        if (m < eol && *m == '[')
                                on_compile(&l, m, eol);
                        else if (starts(m, eol, "parse_arguments: CannotCache("))
                                cannot_cache(&l, m, eol);
                }
                c = next_line(eol, end);
        }
        for (size_t i = 0; i < l.n; i++) /* a miss whose compile's end was not logged */
                if (l.p[i].cache)
                        emit(&l, l.p[i].src, l.p[i].cache);
        return l.calls;
}
