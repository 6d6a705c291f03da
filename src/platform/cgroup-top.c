/* SPDX-License-Identifier: MIT */
#include "platform/cgroup-top.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "util/macro.h"

/* A compile unit's path is most telling at its end. */
#define SOURCE_KEEP 100

static const char *const compiler_names[] = {
    "cc1plus",  "cc1",   "cc1obj",  "cc1objplus", "f951",   "lto1",  "clang",    "clang++",
    "clang-cl", "gcc",   "g++",     "c++",        "cc",     "rustc", "nvcc",     "cicc",
    "ptxas",    "hipcc", "icx",     "icpx",       "cl.exe", "zig",   "gfortran", "swiftc",
    "javac",    "go",    "compile", "tsc",        "ghc",    "as",
};

static const char *const source_exts[] = {
    ".c",     ".cc", ".cpp",  ".cxx", ".c++", ".C",   ".cp",   ".cu",  ".hip", ".rs",
    ".S",     ".s",  ".sx",   ".m",   ".mm",  ".ii",  ".i",    ".f",   ".f90", ".F90",
    ".swift", ".go", ".java", ".ts",  ".hs",  ".ixx", ".cppm", ".zig",
};

void proctop_reset(struct proctop *t)
{
        memset(t, 0, sizeof(*t));
}

void proctop_consider(struct proctop *t, const struct pidstat *ps)
{
        size_t at;

        if (ps->state == 'Z' || ps->state == 'X' || ps->state == 'x')
                return;
        /* Ties keep the one seen first. */
        for (at = 0; at < t->n; at++)
                if (ps->rss_pages > t->e[at].rss_pages)
                        break;
        if (at >= PROCTOP_N)
                return;
        memmove(&t->e[at + 1], &t->e[at],
                (MIN(t->n, (size_t)PROCTOP_N - 1) - at) * sizeof(t->e[0]));
        t->e[at].pid = ps->pid;
        t->e[at].rss_pages = ps->rss_pages;
        memcpy(t->e[at].comm, ps->comm, sizeof(t->e[at].comm));
        t->e[at].comm[sizeof(t->e[at].comm) - 1] = '\0';
        t->e[at].label[0] = '\0';
        if (t->n < PROCTOP_N)
                t->n++;
}

static bool is_compiler(const char *comm)
{
        for (size_t i = 0; i < ARRAY_SIZE(compiler_names); i++)
                if (strcmp(comm, compiler_names[i]) == 0)
                        return true;
        return false;
}

static bool has_source_ext(const char *a, size_t n)
{
        for (size_t i = 0; i < ARRAY_SIZE(source_exts); i++) {
                size_t e = strlen(source_exts[i]);

                if (n > e && memcmp(a + n - e, source_exts[i], e) == 0)
                        return true;
        }
        return false;
}

struct out {
        char *p;
        size_t cap, len; /* cap includes the NUL */
        bool full;
};

/* Append bytes, control bytes as '?', stopping on a UTF-8 boundary. */
static void put(struct out *o, const char *s, size_t n)
{
        for (size_t i = 0; i < n && !o->full; i++) {
                unsigned char c = (unsigned char)s[i];

                if (o->len + 1 >= o->cap) {
                        o->full = true;
                        /* do not leave half a UTF-8 sequence */
                        size_t start = o->len, want = 1;
                        while (start > 0 && ((unsigned char)o->p[start - 1] & 0xC0) == 0x80)
                                start--;
                        if (start > 0) {
                                unsigned char lead = (unsigned char)o->p[start - 1];

                                start--;
                                want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
                        }
                        if (o->len - start < want)
                                o->len = start;
                        break;
                }
                o->p[o->len++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
        }
        o->p[o->len] = '\0';
}

/* The next NUL-separated argument of [*cur, end). */
static bool next_arg(const char **cur, const char *end, const char **ret_a, size_t *ret_n)
{
        const char *nul;

        if (*cur >= end)
                return false;
        nul = memchr(*cur, '\0', (size_t)(end - *cur));
        *ret_a = *cur;
        *ret_n = (size_t)((nul ? nul : end) - *cur);
        *cur = nul ? nul + 1 : end;
        return true;
}

int proctop_label(const char *comm, const char *cmdline, size_t len, char *out, size_t cap)
{
        struct out o = {out, cap, 0, false};
        const char *cur = cmdline, *end = cmdline + (cmdline ? len : 0), *a;
        size_t n;

        if (cap == 0 || !out)
                return -EINVAL;
        out[0] = '\0';
        put(&o, comm ? comm : "", comm ? strnlen(comm, 64) : 0);
        if (!cmdline || len == 0)
                return (int)o.len;
        (void)next_arg(&cur, end, &a, &n); /* argv[0]: comm says it shorter */

        if (is_compiler(comm ? comm : "")) {
                const char *c2 = cur;
                bool skip_next = false;

                while (next_arg(&c2, end, &a, &n)) {
                        if (skip_next) {
                                skip_next = false;
                                continue;
                        }
                        if (n == 2 && (memcmp(a, "-o", 2) == 0 || memcmp(a, "-I", 2) == 0 ||
                                       memcmp(a, "-D", 2) == 0)) {
                                skip_next = true;
                                continue;
                        }
                        if (n > 0 && a[0] != '-' && has_source_ext(a, n)) {
                                put(&o, " ", 1);
                                if (n > SOURCE_KEEP) {
                                        /* keep the tail, from a byte that starts a character */
                                        const char *t = a + n - SOURCE_KEEP;
                                        while (t < a + n && ((unsigned char)*t & 0xC0) == 0x80)
                                                t++;
                                        put(&o, "...", 3);
                                        put(&o, t, (size_t)(a + n - t));
                                } else {
                                        put(&o, a, n);
                                }
                                return (int)o.len;
                        }
                }
        }
        while (!o.full && next_arg(&cur, end, &a, &n)) {
                if (n == 0)
                        continue;
                put(&o, " ", 1);
                put(&o, a, n);
        }
        return (int)o.len;
}

void proctop_label_all(struct proctop *t, struct procfs *p)
{
        char buf[4096];

        for (size_t i = 0; i < t->n; i++) {
                ssize_t n = procfs_cmdline(p, t->e[i].pid, buf, sizeof(buf));

                (void)proctop_label(t->e[i].comm, buf, n > 0 ? (size_t)n : 0, t->e[i].label,
                                    sizeof(t->e[i].label));
        }
}
