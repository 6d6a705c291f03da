/* SPDX-License-Identifier: MIT */
/* BuildKit's --progress=rawjson: its objects, split over lines or one a
 * line, into the stream's vertices (their times, logs, states). */
#include "parse/buildkit.h"
#include "parse/buildkit-int.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

/* ---- rawjson ---- */

static uint64_t digest_key(const char *s)
{
        return fnv1a(FNV1A_OFFSET, s, strlen(s)) | (1ULL << 63); /* never a plain "#N" key */
}

static int b64val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+' || c == '-')
                return 62;
        if (c == '/' || c == '_')
                return 63;
        return -1;
}

static int b64_decode(const char *s, size_t n, struct dbuf *out)
{
        uint32_t acc = 0;
        int bits = 0;

        dbuf_reset(out);
        for (size_t i = 0; i < n; i++) {
                int d = b64val((unsigned char)s[i]);
                if (d < 0)
                        continue; /* padding, newlines */
                acc = (acc << 6) | (uint32_t)d;
                bits += 6;
                if (bits >= 8) {
                        char c;
                        bits -= 8;
                        c = (char)((acc >> bits) & 0xff);
                        if (dbuf_append(out, &c, 1) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

void bk_flush_carry(struct buildkit *b)
{
        if (b->carry_set && b->carry.len)
                bk_emit_log(b, b->carry_v, b->carry.p, b->carry.len);
        dbuf_reset(&b->carry);
        b->carry_set = false;
}

static void json_logs(struct buildkit *b, uint32_t vidx, const char *data, size_t n)
{
        const char *p = data, *end = data + n;

        if (b->carry_set && b->carry_v != vidx)
                bk_flush_carry(b);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end;
                size_t room = CARRY_MAX - b->carry.len;

                if (!nl) {
                        (void)dbuf_append(&b->carry, p, MIN(room, (size_t)(le - p)));
                        b->carry_v = vidx;
                        b->carry_set = true;
                        break;
                }
                if (b->carry_set && b->carry.len) {
                        (void)dbuf_append(&b->carry, p, MIN(room, (size_t)(le - p)));
                        bk_emit_log(b, vidx, b->carry.p, b->carry.len);
                        bk_emit_ctx(b, vidx, "0.000 ", b->carry.p, b->carry.len);
                        dbuf_reset(&b->carry);
                        b->carry_set = false;
                } else {
                        bk_emit_log(b, vidx, p, (size_t)(le - p));
                        bk_emit_ctx(b, vidx, "0.000 ", p, (size_t)(le - p));
                }
                p = nl + 1;
        }
}

/* n digits of s as a number; -1 when one is not a digit. */
static int64_t digits(const char *s, size_t n)
{
        int64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

double buildkit_parse_time(const char *s, size_t n)
{
        int64_t y, mo, d, h, mi, sec, off = 0;
        double frac = 0, scale = 0.1;
        size_t i = 19;
        struct tm tm;

        if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
            s[13] != ':' || s[16] != ':')
                return NAN;
        y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
        h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
        if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
            mi > 59 || sec < 0 || sec > 60)
                return NAN;
        if (s[i] == '.')
                for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, scale /= 10)
                        frac += (s[i] - '0') * scale;
        if (i < n && (s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':') {
                int64_t oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
                if (oh < 0 || oh > 23 || om < 0 || om > 59)
                        return NAN;
                off = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        } else if (!(i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))) {
                return NAN;
        }
        tm = (struct tm){.tm_year = (int)y - 1900,
                         .tm_mon = (int)mo - 1,
                         .tm_mday = (int)d,
                         .tm_hour = (int)h,
                         .tm_min = (int)mi,
                         .tm_sec = (int)sec};
        return (double)(timegm(&tm) - off) + frac;
}

/* rawjson's "started" and "completed" of a vertex update (the first seen). */
static void json_times(struct vtx *v, json_t *it)
{
        json_t *st = json_object_get(it, "started"), *co = json_object_get(it, "completed");

        if (isnan(v->bk_started) && json_is_string(st))
                v->bk_started = buildkit_parse_time(json_string_value(st), json_string_length(st));
        if (isnan(v->bk_done) && json_is_string(co))
                v->bk_done = buildkit_parse_time(json_string_value(co), json_string_length(co));
}

static void json_status(struct buildkit *b, json_t *root, double now)
{
        json_t *arr, *it;
        size_t i;

        if (!json_is_object(root))
                return;
        arr = json_object_get(root, "vertexes");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "digest"));
                const char *name = json_string_value(json_object_get(it, "name"));
                const char *err = json_string_value(json_object_get(it, "error"));
                int64_t vi;
                struct vtx *v;

                if (!dg)
                        continue;
                b->seen = true;
                vi = bk_vertex(b, digest_key(dg), true);
                if (vi < 0)
                        continue;
                v = &b->v[vi];
                if (name) /* the same digest under another prefix adds it */
                        bk_name_vertex(b, v, name, strlen(name));
                bk_touch(b, v, now);
                if (v->name && json_object_get(it, "started") && isnan(v->bk_started))
                        bk_emit_ctx(b, (uint32_t)vi, "", v->name, strlen(v->name));
                json_times(v, it);
                if (json_object_get(it, "completed")) {
                        if (err && *err)
                                bk_end_vertex(
                                    v, strstr(err, "context canceled") ? V_CANCELED : V_ERROR, now);
                        else if (json_is_true(json_object_get(it, "cached")))
                                bk_end_vertex(v, V_CACHED, now);
                        else if (v->state != V_ERROR && v->state != V_CANCELED)
                                bk_end_vertex(v, V_DONE, now);
                } else if (json_object_get(it, "started") && v->state == V_NEW) {
                        v->state = V_RUNNING;
                }
        }
        arr = json_object_get(root, "statuses");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "vertex"));
                int64_t vi = dg ? bk_vertex(b, digest_key(dg), false) : -1;

                if (vi >= 0)
                        b->v[vi].worked = true; /* transferring, resolve, a layer pulled */
        }
        arr = json_object_get(root, "logs");
        json_array_foreach(arr, i, it)
        {
                const char *dg = json_string_value(json_object_get(it, "vertex"));
                json_t *data = json_object_get(it, "data");
                int64_t vi;

                if (!dg || !json_is_string(data))
                        continue;
                vi = bk_vertex(b, digest_key(dg), true);
                if (vi < 0)
                        continue;
                bk_touch(b, &b->v[vi], now);
                b->v[vi].worked = true;
                if (b64_decode(json_string_value(data), json_string_length(data), &b->data) < 0)
                        continue;
                json_logs(b, (uint32_t)vi, b->data.p ? b->data.p : "", b->data.len);
        }
}

static void json_reset(struct buildkit *b)
{
        dbuf_reset(&b->json);
        b->depth = 0;
        b->in_str = b->esc = b->json_active = b->json_skip = b->json_compact = false;
        b->json_lines = 0;
}

/* Assemble objects by brace depth; strings and escapes respected. */
bool bk_feed_json(struct buildkit *b, const char *line, const char *end, double now)
{
        size_t len = (size_t)(end - line);

        if (!b->json_active) {
                if (!(len >= 2 && line[0] == '{' && line[1] == '"') &&
                    !(len == 1 && line[0] == '{'))
                        return false;
                b->json_active = true;
                b->json_compact = len >= 2;
        } else if (b->json_lines == 1 && b->json.len == 2) {
                /* After a lone "{": the indented form goes on with a key. */
                const char *p = skip_sp(line, end);
                if (p == end || *p != '"') {
                        json_reset(b);
                        return false;
                }
        }
        for (const char *p = line; p < end; p++) {
                char c = *p;
                if (b->in_str) {
                        if (b->esc)
                                b->esc = false;
                        else if (c == '\\')
                                b->esc = true;
                        else if (c == '"')
                                b->in_str = false;
                } else if (c == '"') {
                        b->in_str = true;
                } else if (c == '{' || c == '[') {
                        b->depth++;
                } else if (c == '}' || c == ']') {
                        b->depth--;
                }
        }
        b->json_lines++;
        /* No JSON string spans lines, and a rawjson object ends on its own
         * line: anything else is a line cut at the cap (or junk). Drop the
         * object, or the scanner stays inside it for the rest of the run. */
        if (b->in_str || (b->json_compact && b->depth > 0)) {
                json_reset(b);
                return true;
        }
        if (!b->json_skip) {
                if (b->json.len + len + 1 > BUILDKIT_MAX_JSON ||
                    dbuf_append(&b->json, line, len) < 0 || dbuf_append(&b->json, "\n", 1) < 0) {
                        b->json_skip = true;
                        dbuf_release(&b->json);
                }
        }
        if (b->depth <= 0) {
                if (!b->json_skip && b->depth == 0) {
                        json_t *root = json_loadb(b->json.p, b->json.len, 0, NULL);
                        json_status(b, root, now);
                        json_decref(root);
                }
                json_reset(b);
        }
        return true;
}
