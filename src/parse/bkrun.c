/* SPDX-License-Identifier: MIT */
#include "parse/bkrun.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "parse/buildkit.h"
#include "util/macro.h"
#include "util/util.h"

static bool is_ws(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Past the run of blanks (ws) or of other bytes (!ws) at p. */
static const char *skip_ws(const char *p, const char *end, bool ws)
{
        while (p < end && is_ws(*p) == ws)
                p++;
        return p;
}

/* Appending normalized text: one space between words, none at the ends. */
struct norm {
        char *out;
        size_t cap, n;
        bool space; /* a space is owed before the next byte */
};

static void norm_put(struct norm *w, const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                if (is_ws(s[i])) {
                        w->space = w->n > 0;
                        continue;
                }
                if (w->space && w->n + 1 < w->cap)
                        w->out[w->n++] = ' ';
                w->space = false;
                if (w->n + 1 < w->cap) /* control bytes: '?' on both sides of a match */
                        w->out[w->n++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
        }
        w->out[w->n] = '\0';
}

/* A word boundary between two appended pieces. */
static void norm_sep(struct norm *w)
{
        w->space = w->n > 0;
}

/* The exec form ["a", "b c"] (JSON, as the Dockerfile parser takes it;
 * anything after it ignored): its strings joined by spaces. Returns false,
 * nothing written, when s is not such an array: then it is shell form. */
static bool exec_form(const char *s, const char *end, struct norm *w)
{
        json_t *a = json_loadb(s, (size_t)(end - s), JSON_DISABLE_EOF_CHECK, NULL), *v;
        bool ok = json_is_array(a);
        size_t i;

        for (i = 0; i < json_array_size(a); i++)
                ok = ok && json_is_string(json_array_get(a, i));
        for (i = 0; ok && i < json_array_size(a); i++) {
                v = json_array_get(a, i);
                norm_sep(w);
                norm_put(w, json_string_value(v), json_string_length(v));
        }
        json_decref(a);
        return ok;
}

int bkrun_vertex_cmd(const char *name, size_t len, char *out, size_t cap)
{
        const char *p = name, *end = name + len;
        struct norm w = {.out = out, .cap = cap};

        if (cap == 0)
                return -EINVAL;
        out[0] = '\0';
        p = skip_ws(p, end, true);
        if (p < end && *p == '#') /* "#6 [stage 2/3] " */
                p = skip_ws(skip_ws(p, end, false), end, true);
        if (p < end && *p == '[') { /* "[stage 2/3] " */
                const char *q = memchr(p, ']', (size_t)(end - p));
                if (!q)
                        return 0;
                p = skip_ws(q + 1, end, true);
        }
        if (end - p < 4 || memcmp(p, "RUN", 3) != 0 || !is_ws(p[3]))
                return 0;
        /* RUN --mount=... --network=none cmd */
        for (p = skip_ws(p + 4, end, true); end - p >= 2 && p[0] == '-' && p[1] == '-';)
                p = skip_ws(skip_ws(p, end, false), end, true);
        if (p < end && *p == '[' && exec_form(p, end, &w))
                return (int)w.n;
        norm_put(&w, p, (size_t)(end - p));
        return (int)w.n;
}

static bool shell_name(const char *a, size_t len)
{
        const char *slash = memrchr(a, '/', len), *base = slash ? slash + 1 : a;

        len -= (size_t)(base - a);
        return len >= 2 && base[len - 2] == 's' && base[len - 1] == 'h';
}

/* "-c", "-ec", "-xc": a shell's option cluster that ends in c. */
static bool dash_c(const char *a, size_t len)
{
        if (len < 2 || a[0] != '-' || a[len - 1] != 'c')
                return false;
        for (size_t i = 1; i < len; i++)
                if (!((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= 'A' && a[i] <= 'Z')))
                        return false;
        return true;
}

int bkrun_argv_cmd(const char *argv, size_t len, char *out, size_t cap)
{
        const char *arg[8];
        size_t alen[8], n = 0, i = 0;
        struct norm w = {.out = out, .cap = cap};

        if (cap == 0)
                return -EINVAL;
        out[0] = '\0';
        while (len > 0 && argv[len - 1] == '\0')
                len--;
        for (; i < len && n < 8; i += alen[n++] + 1) { /* the first arguments, to find -c */
                arg[n] = argv + i;
                alen[n] = strnlen(argv + i, len - i);
        }
        if (n >= 3 && shell_name(arg[0], alen[0]))
                for (size_t k = 1; k + 1 < n; k++)
                        if (dash_c(arg[k], alen[k])) {
                                /* the rest, as sh -c 'cmd' arg0 args... gets it */
                                norm_put(&w, arg[k + 1], alen[k + 1]);
                                return (int)w.n;
                        }
        for (i = 0; i < len; i += strnlen(argv + i, len - i) + 1) {
                norm_sep(&w);
                norm_put(&w, argv + i, strnlen(argv + i, len - i));
        }
        return (int)w.n;
}

/* A plain "#N [...] RUN ..." header; its own function so the per-line
 * path carries no command buffer (and no stack guard) on the many lines
 * that are not one. */
_noinline_ static size_t feed_header(const char *p, const char *end, bkrun_fn cb, void *userdata)
{
        char cmd[BKRUN_CMD_MAX + 1];
        int k = bkrun_vertex_cmd(p, (size_t)(end - p), cmd, sizeof(cmd));

        if (k > 0 && cb)
                cb(userdata, cmd, (size_t)k);
        return k > 0;
}

/* rawjson: every "name":"..." of the line, each string read by jansson
 * (which stops after it) until one does not read (a line cut at the cap). */
_noinline_ static size_t feed_json(const char *line, const char *end, bkrun_fn cb, void *userdata)
{
        static const char key[] = "\"name\":\"";
        const char *p = line, *q;
        char cmd[BKRUN_CMD_MAX + 1];
        size_t found = 0;

        while ((q = memmem(p, (size_t)(end - p), key, sizeof(key) - 1))) {
                json_error_t err;
                json_t *name;
                int k;

                q += sizeof(key) - 2; /* the opening quote */
                name = json_loadb(q, (size_t)(end - q), JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
                                  &err);
                if (!json_is_string(name)) {
                        json_decref(name);
                        break;
                }
                k = bkrun_vertex_cmd(json_string_value(name), json_string_length(name), cmd,
                                     sizeof(cmd));
                json_decref(name);
                p = q + err.position;
                found += k > 0;
                if (k > 0 && cb)
                        cb(userdata, cmd, (size_t)k);
        }
        return found;
}

size_t bkrun_feed_line_bk(const struct bkline *bl, const char *line, size_t len, bkrun_fn cb,
                          void *userdata)
{
        const char *end = line + len;

        if (!bkrun_wants(bl, line, len))
                return 0;
        if (bl->hash)
                return feed_header(bl->digits_end + 1, end, cb, userdata);
        return feed_json(line, end, cb, userdata);
}

int bkrun_driver(const char *line, size_t len, char *out, size_t cap, char *builder, size_t bcap)
{
        static const char head[] = "#0 building with \"", mid[] = "\" instance using ";
        const char *end = line + len, *p, *q;
        size_t n, b;

        if (cap == 0 || bcap == 0)
                return -EINVAL;
        out[0] = builder[0] = '\0';
        if (len < sizeof(head) - 1 || memcmp(line, head, sizeof(head) - 1) != 0)
                return 0;
        p = memmem(line, len, mid, sizeof(mid) - 1);
        if (!p)
                return 0;
        p += sizeof(mid) - 1;
        q = memchr(p, ' ', (size_t)(end - p));
        q = q ? q : end;
        if (q == p || end - q < 7 || memcmp(q, " driver", 7) != 0)
                return 0;
        n = MIN((size_t)(q - p), cap - 1);
        memcpy(out, p, n);
        out[n] = '\0';
        b = MIN((size_t)(p - (sizeof(mid) - 1) - line) - (sizeof(head) - 1), bcap - 1);
        memcpy(builder, line + sizeof(head) - 1, b);
        builder[b] = '\0';
        return (int)n;
}

static bool driver_word(const char *w, size_t n)
{
        static const char *const names[] = {"docker",  "docker-buildx", "buildx",        "buildctl",
                                            "nerdctl", "podman",        "docker-compose"};
        const char *slash = memrchr(w, '/', n), *base = slash ? slash + 1 : w;

        n -= (size_t)(base - w);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == n && memcmp(base, names[i], n) == 0)
                        return true;
        return false;
}

bool bkrun_argv_drives(char *const *argv)
{
        for (size_t a = 0; argv && argv[a]; a++) {
                const char *s = argv[a];
                size_t i = 0, len = strlen(s);

                while (i < len) { /* words of a script too: sh -c 'docker buildx bake' */
                        size_t j;
                        while (i < len && (is_ws(s[i]) || strchr(";&|()'\"`", s[i])))
                                i++;
                        for (j = i; j < len && !is_ws(s[j]) && !strchr(";&|()'\"`", s[j]); j++)
                                ;
                        if (j > i && driver_word(s + i, j - i))
                                return true;
                        i = j;
                }
        }
        return false;
}
