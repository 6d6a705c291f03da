/* SPDX-License-Identifier: MIT */
#include "model/run.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "util/macro.h"

/* A run.json is ours, but it sits on disk: cap what we accept. */
#define RUN_ARGV_MAX 65536

void run_info_release(struct run_info *ri)
{
        if (!ri)
                return;
        free(ri->run_id);
        free(ri->kind);
        if (ri->argv)
                for (char **a = ri->argv; *a; a++)
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

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
        unsigned char c = s[0], lo = 0x80, hi = 0xBF;
        size_t n;

        if (c < 0x80)
                return 1;
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
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
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

/* The code point of the well-formed sequence of n bytes at p. */
static uint32_t utf8_cp(const unsigned char *p, size_t n)
{
        uint32_t cp = n == 1 ? p[0] : p[0] & (0x7F >> n);

        for (size_t i = 1; i < n; i++)
                cp = cp << 6 | (p[i] & 0x3F);
        return cp;
}

int run_append_utf8_lossy(struct dbuf *out, const char *s, size_t len, bool no_controls)
{
        const unsigned char *p = (const unsigned char *)s, *end = p + len;
        int r = 0;

        /* a NULL buffer would make dbuf's p NULL; an empty string is meant */
        r = dbuf_append(out, "", 0);
        while (r >= 0 && p < end) {
                const unsigned char *run = p;
                size_t n;

                /* copy the longest clean stretch in one go */
                while (p < end && (n = utf8_seq_len(p, (size_t)(end - p))) > 0 &&
                       !(no_controls && term_unsafe(utf8_cp(p, n))))
                        p += n;
                if (p > run)
                        r = dbuf_append(out, run, (size_t)(p - run));
                if (r < 0 || p >= end)
                        break;
                n = utf8_seq_len(p, (size_t)(end - p));
                if (n == 0 && !no_controls)
                        r = dbuf_append(out, "\xEF\xBF\xBD", 3);
                else
                        r = dbuf_append(out, "?", 1);
                /* an unsafe character is one '?'; a bad byte, one each */
                p += n ? n : 1;
        }
        return r;
}

struct json_t *run_json_string(const char *s)
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

/* json_object_set_new() steals v even on failure; a NULL v is taken as
 * "out of memory" by the callers, who pass null explicitly. */
static int set(json_t *o, const char *key, json_t *v)
{
        if (!v)
                return -ENOMEM;
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_t *str_or_null(const char *s)
{
        return s ? run_json_string(s) : json_null();
}

static json_t *real_or_null(double v)
{
        return isfinite(v) ? json_real(v) : json_null();
}

int run_info_to_json(const struct run_info *ri, struct dbuf *out)
{
        json_t *o = json_object(), *argv = NULL;
        char *text = NULL;
        int r = -ENOMEM;

        if (!o)
                return -ENOMEM;
        /* members go in in the order they print */
        if (set(o, "run_id", str_or_null(ri->run_id)) < 0 ||
            set(o, "kind", str_or_null(ri->kind)) < 0)
                goto out;
        if (ri->argv) {
                argv = json_array();
                if (!argv)
                        goto out;
                for (char **a = ri->argv; *a; a++)
                        if (json_array_append_new(argv, run_json_string(*a)) < 0) {
                                json_decref(argv);
                                goto out;
                        }
        } else {
                argv = json_null();
        }
        if (set(o, "argv", argv) < 0 || set(o, "cwd", str_or_null(ri->cwd)) < 0 ||
            set(o, "host", str_or_null(ri->host)) < 0 ||
            set(o, "start_epoch", real_or_null(ri->start_epoch)) < 0 ||
            set(o, "end_epoch", real_or_null(ri->end_epoch)) < 0 ||
            set(o, "finished", json_boolean(ri->finished)) < 0 ||
            set(o, "exit_code", json_integer(ri->exit_code)) < 0 ||
            set(o, "term_signal", json_integer(ri->term_signal)) < 0 ||
            set(o, "ncpu", json_integer(ri->ncpu)) < 0 ||
            set(o, "interval", real_or_null(ri->interval)) < 0 ||
            set(o, "pid", json_integer(ri->pid)) < 0 ||
            (ri->exit_comm && set(o, "exit_comm", run_json_string(ri->exit_comm)) < 0) ||
            (ri->job && set(o, "job", run_json_string(ri->job)) < 0))
                goto out;
        text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        if (!text)
                goto out;
        r = dbuf_puts(out, text);
        if (r >= 0)
                r = dbuf_append(out, "\n", 1);
out:
        free(text);
        json_decref(o);
        return r;
}

/* A member that is absent or null keeps *ret as it is. */
static int get_str(json_t *o, const char *key, char **ret)
{
        json_t *v = json_object_get(o, key);
        char *s;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                return -EINVAL;
        s = strdup(json_string_value(v));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int get_real(json_t *o, const char *key, enum range_kind range, double *ret)
{
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_number(v) || !range_ok(range, json_number_value(v)))
                return -EINVAL;
        *ret = json_number_value(v);
        return 0;
}

static int get_int(json_t *o, const char *key, enum range_kind range, long long *ret)
{
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_integer(v) || !range_ok_i64(range, json_integer_value(v)))
                return -EINVAL;
        *ret = json_integer_value(v);
        return 0;
}

static int get_argv(json_t *o, char ***ret)
{
        json_t *v = json_object_get(o, "argv");
        char **argv;
        size_t n;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_array(v) || json_array_size(v) > RUN_ARGV_MAX)
                return -EINVAL;
        n = json_array_size(v);
        argv = calloc(n + 1, sizeof(*argv));
        if (!argv)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_t *a = json_array_get(v, i);
                int r = -EINVAL;

                if (json_is_string(a) && strlen(json_string_value(a)) == json_string_length(a)) {
                        argv[i] = strdup(json_string_value(a));
                        r = argv[i] ? 0 : -ENOMEM;
                }
                if (r < 0) {
                        for (size_t k = 0; k < i; k++)
                                free(argv[k]);
                        free(argv);
                        return r;
                }
        }
        *ret = argv;
        return 0;
}

int run_info_parse_json(const char *buf, size_t len, struct run_info *ret)
{
        struct run_info ri = {
            .start_epoch = NAN,
            .end_epoch = NAN,
            .exit_code = -1,
            .interval = NAN,
        };
        long long exit_code = -1, sig = 0, ncpu = 0, pid = 0;
        json_t *v, *o;
        int r;

        o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
        if (!o)
                return -EINVAL;
        if (!json_is_object(o)) {
                json_decref(o);
                return -EINVAL;
        }
        r = get_str(o, "run_id", &ri.run_id);
        if (r >= 0)
                r = get_str(o, "kind", &ri.kind);
        if (r >= 0)
                r = get_argv(o, &ri.argv);
        if (r >= 0)
                r = get_str(o, "cwd", &ri.cwd);
        if (r >= 0)
                r = get_str(o, "host", &ri.host);
        if (r >= 0)
                r = get_real(o, "start_epoch", RANGE_EPOCH, &ri.start_epoch);
        if (r >= 0)
                r = get_real(o, "end_epoch", RANGE_EPOCH, &ri.end_epoch);
        if (r >= 0)
                r = get_real(o, "interval", RANGE_INTERVAL, &ri.interval);
        if (r >= 0)
                r = get_int(o, "exit_code", RANGE_EXIT_CODE, &exit_code);
        if (r >= 0)
                r = get_int(o, "term_signal", RANGE_SIGNAL, &sig);
        if (r >= 0)
                r = get_int(o, "ncpu", RANGE_NCPU, &ncpu);
        if (r >= 0)
                r = get_int(o, "pid", RANGE_PID, &pid);
        if (r >= 0)
                r = get_str(o, "exit_comm", &ri.exit_comm);
        if (r >= 0 && get_str(o, "job", &ri.job) == -ENOMEM) /* tolerant: a bad job is none */
                r = -ENOMEM;
        if (r >= 0) {
                v = json_object_get(o, "finished");
                if (json_is_boolean(v))
                        ri.finished = json_is_true(v);
                else if (v && !json_is_null(v))
                        r = -EINVAL;
        }
        json_decref(o);
        if (r < 0) {
                run_info_release(&ri);
                return r;
        }
        if (run_id_sanitize(&ri.run_id) < 0) {
                run_info_release(&ri);
                return -ENOMEM;
        }
        ri.exit_code = (int)exit_code;
        ri.term_signal = (int)sig;
        ri.ncpu = (unsigned)ncpu;
        ri.pid = (long)pid;
        *ret = ri;
        return 0;
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
