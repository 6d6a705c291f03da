/* SPDX-License-Identifier: MIT */
#include "render/jsonw.h"

#include <jansson.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"

void jsonw_put(struct dwriter *w, const char *s, size_t len)
{
        _cleanup_dbuf_ struct dbuf clean = DBUF_INIT;
        size_t ascii = 0, from = 0;

        while (ascii < len && (unsigned char)s[ascii] < 0x80)
                ascii++;
        if (ascii < len && dw_ok(w)) { /* the one UTF-8 cleaner (model/run.c) */
                dw_check(w, run_append_utf8_lossy(&clean, s, len, false));
                s = clean.len ? clean.p : "";
                len = clean.len;
        }
        dw_puts(w, "\"");
        for (size_t i = 0; i < len && dw_ok(w); i++) {
                unsigned char c = (unsigned char)s[i];

                if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
                        continue;
                dw_append(w, s + from, i - from);
                from = i + 1;
                if (c == '"' || c == '\\')
                        dw_printf(w, "\\%c", c);
                else if (c == '\n')
                        dw_puts(w, "\\n");
                else if (c == '\t')
                        dw_puts(w, "\\t");
                else if (c == '\r')
                        dw_puts(w, "\\r");
                else
                        dw_printf(w, "\\u%04x", c);
        }
        dw_append(w, s + from, len - from);
        dw_puts(w, "\"");
}

json_t *jsonw_str(const char *s)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        if (!s || run_append_utf8_lossy(&b, s, strlen(s), false) < 0)
                return NULL;
        return json_stringn(b.p, b.len);
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
        int e = s ? dbuf_printf(out, "%s\n", s) : -ENOMEM;

        free(s);
        return e < 0 ? -ENOMEM : 0;
}
