/* SPDX-License-Identifier: MIT */
#include "parse/failure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/util.h"

/* The line as a person reads it: ANSI escapes and control characters out
 * (a tab is a space), blanks off both ends, cut at FAILURE_TEXT_MAX bytes
 * between characters. */
static void clean(const char *p, size_t len, char out[static FAILURE_TEXT_MAX + 1])
{
        size_t n = 0, i;

        for (i = 0; i < len && n < FAILURE_TEXT_MAX; i++) {
                unsigned char c = (unsigned char)p[i];

                if (c == 0x1b) { /* CSI: parameters up to a final byte; else one byte */
                        if (i + 1 < len && p[i + 1] == '[') {
                                for (i += 2; i < len && ((unsigned char)p[i] < 0x40 ||
                                                         (unsigned char)p[i] > 0x7e);
                                     i++)
                                        ;
                        } else {
                                i++;
                        }
                        continue;
                }
                if (c == '\t')
                        c = ' ';
                if (c < 0x20 || c == 0x7f || (c == ' ' && n == 0))
                        continue;
                out[n++] = (char)c;
        }
        /* cut inside a character (the next byte continues it): all of it goes */
        if (n == FAILURE_TEXT_MAX && i < len && ((unsigned char)p[i] & 0xc0) == 0x80)
                while (n > 0 && ((unsigned char)out[--n] & 0xc0) == 0x80)
                        ;
        while (n > 0 && out[n - 1] == ' ')
                n--;
        out[n] = '\0';
}

static bool prefix(const char *s, const char *p)
{
        return strncmp(s, p, strlen(p)) == 0;
}

/* BuildKit's plain prefix "#12 " or "#12 3.456 ": the vertex, and the
 * text after it (s itself when there is none). */
static const char *bk_prefix(const char *s, unsigned long *ret_n)
{
        char *end;

        *ret_n = 0;
        if (s[0] != '#' || s[1] < '0' || s[1] > '9')
                return s;
        *ret_n = strtoul(s + 1, &end, 10);
        if (*end != ' ')
                return s;
        s = end + 1;
        if (*s >= '0' && *s <= '9') { /* a log line's seconds */
                const char *q = s;

                while ((*q >= '0' && *q <= '9') || *q == '.')
                        q++;
                if (*q == ' ')
                        s = q + 1;
        }
        return s;
}

static const char *bk_step(const struct failure *f, unsigned long n)
{
        for (unsigned i = 0; i < MIN(f->nsteps, (unsigned)ARRAY_SIZE(f->steps)); i++)
                if (f->steps[i].n == n)
                        return f->steps[i].name;
        return NULL;
}

static void set_target(struct failure *f, const char *tool, const char *t, size_t n)
{
        while (n > 0 && t[n - 1] == ' ')
                n--;
        if (n == 0)
                return;
        copy_utf8(f->r.target, sizeof(f->r.target), t, n);
        snprintf(f->r.tool, sizeof(f->r.tool), "%s", tool);
}

/* make's "make[2]: *** [Makefile:76: foo.o] Error 1": foo.o; its other
 * "***" lines are errors of their own ("No rule to make target"). */
static bool make_line(struct failure *f, const char *s)
{
        const char *p = s, *t, *e;

        if (prefix(p, "gmake"))
                p++;
        if (!prefix(p, "make"))
                return false;
        p = strstr(p, ": *** ");
        if (!p || strchr(s, ' ') < p) /* "make[2]:" is one word */
                return false;
        p += 6;
        if (prefix(p, "Waiting for unfinished jobs")) /* make's, not an error */
                return true;
        e = *p == '[' ? strstr(p, "] Error ") : NULL;
        if (!e)
                return false; /* an error line: the caller's */
        /* the innermost comes first: keep it over the outer ones */
        if (strcmp(f->r.tool, "make") != 0 || !f->r.target[0]) {
                t = p + 1;
                for (const char *q = t; q + 1 < e; q++) /* make 4: "FILE:LINE: target" */
                        if (q[0] == ':' && q[1] == ' ')
                                t = q + 2;
                set_target(f, "make", t, (size_t)(e - t));
        }
        return true;
}

static bool error_line(const char *s)
{
        return prefix(s, "error:") || prefix(s, "error[") || prefix(s, "fatal error:") ||
               prefix(s, "ERROR:") || prefix(s, "ERROR ") || prefix(s, "CMake Error") ||
               strstr(s, ": error:") || strstr(s, ": fatal error:") || strstr(s, ": *** ") ||
               strstr(s, "undefined reference to ");
}

void failure_line(struct failure *f, const char *line, size_t len)
{
        char s[FAILURE_TEXT_MAX + 1];
        const char *t;
        unsigned long n;
        size_t tl;

        clean(line, len, s);
        if (!s[0])
                return;
        t = bk_prefix(s, &n);
        if (n && t[0] == '[' && t != s) { /* "#12 [build 3/5] RUN make" */
                unsigned i = f->nsteps++ % ARRAY_SIZE(f->steps);

                f->steps[i].n = n;
                copy_utf8_str(f->steps[i].name, sizeof(f->steps[i].name), t);
                return;
        }
        tl = strlen(t);
        if (prefix(s, "> [") && tl > 4 && t[tl - 1] == ':') { /* the error epilogue */
                set_target(f, "buildkit", t + 2, tl - 3);
                return;
        }
        if (prefix(t, "FAILED: ")) { /* ninja: its first output */
                const char *o = t + 8, *end;

                if (prefix(o, "[code=") && (end = strstr(o, "] ")))
                        o = end + 2;
                end = strchr(o, ' ');
                if (!f->r.target[0] || strcmp(f->r.tool, "ninja") != 0)
                        set_target(f, "ninja", o, end ? (size_t)(end - o) : strlen(o));
                return;
        }
        if (make_line(f, t))
                return;
        if (!error_line(t))
                return;
        if (n && prefix(t, "ERROR") && (line = bk_step(f, n)))
                set_target(f, "buildkit", line, strlen(line));
        if (!f->r.errors++)
                copy_utf8_str(f->r.first, sizeof(f->r.first), t);
        copy_utf8_str(f->r.last, sizeof(f->r.last), t);
}
