/* SPDX-License-Identifier: MIT */
#include "parse/bakemeta.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parse/buildkit.h"
#include "util/macro.h"
#include "util/util.h"

/* "<builder>/<node>/<ref>" into t. */
static void apply_ref(struct target *t, const char *s)
{
        const char *a = strchr(s, '/'), *b2 = a ? strchr(a + 1, '/') : NULL;

        if (!a || !b2) {
                copy_utf8_str(t->ref, sizeof(t->ref), s);
                return;
        }
        copy_utf8(t->builder, sizeof(t->builder), s, (size_t)(a - s));
        copy_utf8(t->node, sizeof(t->node), a + 1, (size_t)(b2 - a - 1));
        copy_utf8_str(t->ref, sizeof(t->ref), b2 + 1);
}

int bakemeta_parse(const char *buf, size_t len, struct targets *ts)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *v;
        const char *k, *ref;
        int n = 0;

        if (!json_is_object(root)) {
                json_decref(root);
                return -EINVAL;
        }
        ref = json_string_value(json_object_get(root, "buildx.build.ref"));
        if (ref) {
                /* buildx build: one flat object. */
                const char *nm = ts->n == 1 ? ts->t[0].name : "default";
                apply_ref(&ts->t[targets_get(ts, nm, strlen(nm))], ref);
                n = 1;
        } else {
                json_object_foreach(root, k, v)
                {
                        ref = json_string_value(json_object_get(v, "buildx.build.ref"));
                        if (!json_is_object(v) || !ref)
                                continue;
                        apply_ref(&ts->t[targets_get(ts, k, strlen(k))], ref);
                        n++;
                }
        }
        json_decref(root);
        return n;
}

/* o's key, a 32-bit count, into *ret (untouched when it is none). */
static void get_u32(json_t *o, const char *key, uint32_t *ret)
{
        json_t *x = json_object_get(o, key);

        if (json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) <= UINT32_MAX)
                *ret = (uint32_t)json_integer_value(x);
}

/* o's key, a string, into buf ("" when it is none). */
#define GET_STR(o, key, buf)                                                                       \
        copy_utf8_str(buf, sizeof(buf), json_string_value(json_object_get(o, key)))

int buildx_history_parse(const char *buf, size_t len, struct buildx_history *ret)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *d;
        struct buildx_history h = {0};

        if (!json_is_object(root) || !json_is_string(json_object_get(root, "Ref"))) {
                json_decref(root);
                return -EINVAL;
        }
        GET_STR(root, "Ref", h.ref);
        GET_STR(root, "Name", h.name);
        GET_STR(root, "Status", h.status);
        GET_STR(root, "VCSRevision", h.vcs_revision);
        d = json_object_get(root, "Duration");
        h.duration_s = json_is_integer(d) && json_integer_value(d) >= 0
                           ? (double)json_integer_value(d) / 1e9
                           : NAN;
        get_u32(root, "NumTotalSteps", &h.total_steps);
        get_u32(root, "NumCachedSteps", &h.cached_steps);
        get_u32(root, "NumCompletedSteps", &h.completed_steps);
        json_decref(root);
        *ret = h;
        return 0;
}

int buildx_history_apply(const struct buildx_history *h, struct targets *ts)
{
        int i = -1;
        struct target *t;

        for (size_t k = 0; k < ts->n && i < 0; k++)
                if (ts->t[k].ref[0] && strcmp(ts->t[k].ref, h->ref) == 0)
                        i = (int)k;
        if (i < 0 && h->name[0])
                i = targets_find(ts, h->name);
        if (i < 0)
                return -ENOENT;
        t = &ts->t[i];
        t->history_set = true;
        t->history_duration_s = h->duration_s;
        memcpy(t->history_status, h->status, sizeof(t->history_status));
        _Static_assert(sizeof(t->history_vcs_revision) == sizeof(h->vcs_revision), "same size");
        memcpy(t->history_vcs_revision, h->vcs_revision, sizeof(t->history_vcs_revision));
        return i;
}

/* A finished record's status, as inspect spells it, and its duration. */
static void ls_status(json_t *o, struct buildx_record *r)
{
        static const char *const names[][2] = {
            {"Completed", "completed"}, {"Error", "failed"}, {"Canceled", "canceled"}};
        const char *st = json_string_value(json_object_get(o, "status"));
        json_t *c = json_object_get(o, "completed_at");

        r->duration_s = NAN;
        for (size_t i = 0; st && i < ARRAY_SIZE(names); i++)
                if (strcmp(st, names[i][0]) == 0)
                        snprintf(r->status, sizeof(r->status), "%s", names[i][1]);
        if (r->status[0] && json_is_string(c))
                r->duration_s =
                    buildkit_parse_time(json_string_value(c), json_string_length(c)) - r->created_s;
        if (!(r->duration_s >= 0 && r->duration_s < 1e9))
                r->duration_s = NAN;
}

int buildx_history_ls_parse(const char *buf, size_t len, buildx_record_fn fn, void *userdata)
{
        const char *p = buf, *end = buf + len;
        int n = 0;

        for (const char *le; p < end; p = next_line(le, end)) {
                json_t *o = json_loadb(p, (size_t)((le = line_end(p, end)) - p), 0, NULL);
                const char *ref = json_string_value(json_object_get(o, "ref"));
                json_t *c = json_object_get(o, "created_at");

                if (json_is_object(o) && ref && ref[0]) {
                        struct buildx_record r = {.created_s = NAN};
                        const char *nm = json_string_value(json_object_get(o, "name"));

                        copy_utf8_str(r.ref, sizeof(r.ref), buildx_bare_id(ref));
                        copy_utf8_str(r.name, sizeof(r.name), nm);
                        if (json_is_string(c))
                                r.created_s = buildkit_parse_time(json_string_value(c),
                                                                  json_string_length(c));
                        ls_status(o, &r);
                        if (r.ref[0]) {
                                fn(userdata, &r);
                                n++;
                        }
                }
                json_decref(o);
        }
        return n > 0 ? n : -EINVAL;
}

bool buildx_record_target(const char *name, char *out)
{
        size_t n = strlen(name);
        const char *par = n >= 4 && name[n - 1] == ')' ? memrchr(name, '(', n - 1) : NULL;

        out[0] = '\0';
        if (!par || par == name || par[-1] != ' ' || par + 2 == name + n)
                return false;
        copy_utf8(out, TARGET_NAME_MAX + 1, par + 1, (size_t)(name + n - 2 - par));
        return out[0] != '\0';
}

const char *buildx_bare_id(const char *ref)
{
        const char *s = strrchr(ref, '/');

        return s ? s + 1 : ref;
}
