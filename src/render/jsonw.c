/* SPDX-License-Identifier: MIT */
#include "render/jsonw.h"

#include <jansson.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"

static bool plain_ascii(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
                        return false;
        }
        return true;
}

static int escape_valid_utf8(struct dbuf *out, const char *s, size_t len)
{
        size_t from = 0;
        int e = 0;

        for (size_t i = 0; i < len && e >= 0; i++) {
                unsigned char c = (unsigned char)s[i];
                char esc[8];

                if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
                        continue;
                e = dbuf_append(out, s + from, i - from);
                if (e < 0)
                        break;
                from = i + 1;
                if (c == '"' || c == '\\') {
                        esc[0] = '\\';
                        esc[1] = (char)c;
                        e = dbuf_append(out, esc, 2);
                } else if (c == '\n') {
                        e = dbuf_puts(out, "\\n");
                } else if (c == '\t') {
                        e = dbuf_puts(out, "\\t");
                } else if (c == '\r') {
                        e = dbuf_puts(out, "\\r");
                } else {
                        e = dbuf_printf(out, "\\u%04x", c);
                }
        }
        if (e >= 0)
                e = dbuf_append(out, s + from, len - from);
        return e;
}

int jsonw_string(struct dbuf *out, const char *s, size_t len)
{
        struct dbuf clean = DBUF_INIT;
        int e;

        e = dbuf_puts(out, "\"");
        if (e >= 0 && plain_ascii(s, len)) {
                e = dbuf_append(out, s, len);
        } else if (e >= 0) {
                /* the one UTF-8 cleaner (model/run.c), then JSON's escapes */
                e = run_append_utf8_lossy(&clean, s, len, false);
                if (e >= 0)
                        e = escape_valid_utf8(out, clean.len ? clean.p : "", clean.len);
                dbuf_release(&clean);
        }
        if (e >= 0)
                e = dbuf_puts(out, "\"");
        return e;
}

json_t *jsonw_str(const char *s)
{
        struct dbuf b = DBUF_INIT;
        json_t *j;

        if (!s)
                return NULL;
        if (run_append_utf8_lossy(&b, s, strlen(s), false) < 0) {
                dbuf_release(&b);
                return NULL;
        }
        j = json_stringn(b.p, b.len);
        dbuf_release(&b);
        return j;
}

json_t *jsonw_text(const char *s)
{
        return s ? jsonw_str(s) : json_null();
}

json_t *jsonw_real(double v)
{
        return isfinite(v) ? json_real(v) : json_null();
}

json_t *jsonw_argv(char *const *argv)
{
        json_t *a = argv ? json_array() : json_null();

        for (; argv && a && *argv; argv++)
                if (json_array_append_new(a, jsonw_str(*argv)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

int jsonw_dump(const json_t *v, size_t flags, struct dbuf *out)
{
        char *s = v ? json_dumps(v, flags) : NULL;
        int e = s ? dbuf_puts(out, s) : -ENOMEM;

        if (e >= 0)
                e = dbuf_puts(out, "\n");
        free(s);
        return e < 0 ? -ENOMEM : 0;
}
