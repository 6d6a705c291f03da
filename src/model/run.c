/* SPDX-License-Identifier: MIT */
#include "model/run.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void run_info_release(struct run_info *ri)
{
        if (!ri)
                return;
        free(ri->run_id);
        free(ri->kind);
        for (char **a = ri->argv; a && *a; a++)
                free(*a);
        free(ri->argv);
        free(ri->cwd);
        free(ri->host);
        free(ri->vcs_rev);
        free(ri->vcs_ref);
        free(ri->exit_comm);
        free(ri->job);
        memset(ri, 0, sizeof(*ri));
}

size_t run_utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
        unsigned char c = s[0], lo = 0x80, hi = 0xBF;
        size_t n;

        if (c < 0x80) {
                *ret_cp = c;
                return 1;
        }
        if (c >= 0xC2 && c <= 0xDF)
                n = 2;
        else if (c >= 0xE0 && c <= 0xEF)
                n = 3;
        else if (c >= 0xF0 && c <= 0xF4)
                n = 4;
        else
                return 0;
        if (c == 0xE0)
                lo = 0xA0;
        else if (c == 0xED)
                hi = 0x9F;
        else if (c == 0xF0)
                lo = 0x90;
        else if (c == 0xF4)
                hi = 0x8F;
        if (len < n || s[1] < lo || s[1] > hi)
                return 0;
        *ret_cp = c & (0x7F >> n);
        for (size_t i = 1; i < n; i++) {
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
                *ret_cp = *ret_cp << 6 | (s[i] & 0x3F);
        }
        return n;
}

/* A code point a terminal must not get from the build: C0, DEL and C1
 * controls (U+0080-U+009F: 8-bit CSI, OSC, ... to xterm and VTE), and the
 * invisible format characters that reorder or hide text (bidi embeddings,
 * overrides and isolates, marks, zero-width characters, line and paragraph
 * separators, tags). U+FFFD too: a bad byte shows as '?' whether it comes
 * straight from the build or from a file that kept it as U+FFFD. */
static bool term_unsafe(uint32_t cp)
{
        return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xAD || cp == 0x61C ||
               cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
               (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFD) ||
               (cp >= 0xE0000 && cp <= 0xE007F);
}

int run_append_utf8_lossy(struct dbuf *out, const char *s, size_t len, bool no_controls)
{
        const unsigned char *p = (const unsigned char *)s, *end = p + len;
        /* a NULL buffer would make dbuf's p NULL; an empty string is meant */
        int r = dbuf_append(out, "", 0);

        while (r >= 0 && p < end) {
                const unsigned char *run = p;
                uint32_t cp;
                size_t n;

                /* copy the longest clean stretch in one go */
                while (p < end && (n = run_utf8_decode(p, (size_t)(end - p), &cp)) > 0 &&
                       !(no_controls && term_unsafe(cp)))
                        p += n;
                if (p > run)
                        r = dbuf_append(out, run, (size_t)(p - run));
                if (r < 0 || p >= end)
                        break;
                n = run_utf8_decode(p, (size_t)(end - p), &cp);
                if (n == 0 && !no_controls)
                        r = dbuf_append(out, "\xEF\xBF\xBD", 3);
                else
                        r = dbuf_append(out, "?", 1);
                /* an unsafe character is one '?'; a bad byte, one each */
                p += n ? n : 1;
        }
        return r;
}

static bool run_id_char(char c, bool first)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || (!first && (c == '-' || c == '.'));
}

bool run_id_is_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!run_id_char(s[i], i == 0))
                        return false;
        return true;
}

int run_id_sanitize(char **id)
{
        char *s = *id;
        size_t n;

        if (!s || run_id_is_valid(s))
                return 0;
        if (!*s) {
                free(s);
                *id = strdup("unknown");
                return *id ? 1 : -ENOMEM;
        }
        n = strlen(s);
        if (n > 64)
                s[n = 64] = '\0';
        for (size_t i = 0; i < n; i++)
                if (!run_id_char(s[i], i == 0))
                        s[i] = '_';
        return 1;
}
