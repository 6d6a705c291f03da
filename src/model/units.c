/* SPDX-License-Identifier: MIT */
#include "model/units.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/execs.h"
#include "model/unitname.h"
#include "util/macro.h"
#include "util/util.h"

/* Open addressing over kind + ident + key (slot) and over kind + ident
 * (gslot, the first row of that ident; gnext chains the others); each table
 * is over three times UNITS_MAX. */
#define SLOTS 65536u
#define GROUP_MAX 64 /* units of one base told apart by their tags */

struct units {
        struct unit *rows; /* in order of first sight */
        size_t n, cap;
        uint32_t slot[SLOTS], gslot[SLOTS]; /* row index + 1; 0 empty */
};

int units_new(struct units **ret)
{
        struct units *u = calloc(1, sizeof(*u));

        if (!u)
                return -ENOMEM;
        *ret = u;
        return 0;
}

void units_free(struct units *u)
{
        if (!u)
                return;
        free(u->rows);
        free(u);
}

static uint32_t hash(int kind, const char *name, uint64_t key)
{
        uint64_t h = fnv1a(fnv1a(FNV1A_OFFSET ^ (uint64_t)kind, name, strlen(name)), &key, 8);

        return (uint32_t)(h ^ (h >> 32));
}

/* The entry of tab for kind + ident + *key (slot), or kind + ident with
 * key NULL (gslot: the first row of that ident); else the empty one where
 * it goes. */
static uint32_t *probe(struct units *u, uint32_t *tab, int kind, const char *ident,
                       const uint64_t *key)
{
        uint32_t i = hash(kind, ident, key ? *key : 0) & (SLOTS - 1);

        for (; tab[i]; i = (i + 1) & (SLOTS - 1)) {
                const struct unit *r = &u->rows[tab[i] - 1];

                if (r->kind == kind && (!key || r->key == *key) && strcmp(r->ident, ident) == 0)
                        break;
        }
        return &tab[i];
}

/* The row of kind + ident + key, or NULL and where a new one goes (*ret_slot). */
static struct unit *lookup(struct units *u, int kind, const char *ident, uint64_t key,
                           uint32_t *ret_slot)
{
        uint32_t *s = probe(u, u->slot, kind, ident, &key);

        *ret_slot = (uint32_t)(s - u->slot);
        return *s ? &u->rows[*s - 1] : NULL;
}

/* Component j of a directory counted from its end (0 the last), without a
 * CMake ".dir"; NULL past its start. */
static const char *dir_part(const char *dir, size_t j, size_t *ret_n)
{
        const char *end = dir + strlen(dir), *b;

        for (;;) {
                b = end;
                while (b > dir && b[-1] != '/')
                        b--;
                if (j-- == 0)
                        break;
                if (b == dir)
                        return NULL;
                end = b - 1;
        }
        *ret_n = (size_t)(end - b);
        if (*ret_n > 4 && memcmp(end - 4, ".dir", 4) == 0)
                *ret_n -= 4;
        return *ret_n ? b : NULL;
}

static bool all_distinct(const char *const *t, const size_t *tn, size_t m)
{
        for (size_t i = 0; i < m; i++) {
                if (!t[i] || tn[i] == 0)
                        return false;
                for (size_t k = 0; k < i; k++)
                        if (tn[k] == tn[i] && memcmp(t[k], t[i], tn[i]) == 0)
                                return false;
        }
        return true;
}

/* The tags of m rows of one base: their -std= values when these tell them
 * apart, else the first directory part from the end that does, else none. */
static bool pick_tags(struct unit *const *g, size_t m, const char **t, size_t *tn)
{
        for (size_t i = 0; i < m; i++)
                t[i] = g[i]->std, tn[i] = strlen(g[i]->std);
        if (all_distinct(t, tn, m))
                return true;
        for (size_t j = 0; j < 8; j++) {
                bool same = true;

                for (size_t i = 0; i < m; i++) {
                        t[i] = dir_part(g[i]->dir, j, &tn[i]);
                        if (!t[i])
                                return false;
                        same = same && tn[i] == tn[0] && memcmp(t[i], t[0], tn[0]) == 0;
                }
                if (!same)
                        return all_distinct(t, tn, m);
        }
        return false;
}

/* Name every row of the base of row `first` again ("base [tag]"). */
static void retag(struct units *u, uint32_t first)
{
        struct unit *g[GROUP_MAX];
        const char *t[GROUP_MAX];
        size_t tn[GROUP_MAX], m = 0;
        bool tagged;

        for (uint32_t i = first; i && m < GROUP_MAX; i = u->rows[i - 1].gnext)
                g[m++] = &u->rows[i - 1];
        if (m < 2)
                return;
        tagged = pick_tags(g, m, t, tn);
        for (size_t i = 0; i < m; i++) {
                char tag[UNITS_TAG_MAX + 1], base[UNITS_NAME_MAX + 1];
                size_t room = UNITS_NAME_MAX - 3;
                int w;

                if (tagged)
                        copy_utf8_str(tag, MIN(tn[i] + 1, sizeof(tag)), t[i]);
                else if (snprintf(tag, sizeof(tag), "#%zu", i + 1) >= (int)sizeof(tag))
                        continue;
                room -= strlen(tag);
                copy_utf8_str(base, MIN(room + 1, sizeof(base)), g[i]->base);
                w = snprintf(g[i]->name, sizeof(g[i]->name), "%s [%s]", base, tag);
                if (w < 0 || (size_t)w >= sizeof(g[i]->name))
                        copy_utf8_str(g[i]->name, sizeof(g[i]->name), g[i]->base);
        }
}

/* A new row of kind + ident + key at slot, named base, chained to its
 * ident's rows. */
static struct unit *new_row(struct units *u, int kind, const char *ident, const char *base,
                            uint64_t key, uint32_t slot)
{
        struct unit *r;
        uint32_t *gs, i;

        if (u->n >= UNITS_MAX)
                return NULL;
        if (u->n == u->cap) {
                size_t ncap = MIN(u->cap ? 2 * u->cap : 64, (size_t)UNITS_MAX);

                if (!(r = reallocarray(u->rows, ncap, sizeof(*r))))
                        return NULL;
                u->rows = r;
                u->cap = ncap;
        }
        u->slot[slot] = (uint32_t)++u->n;
        r = memset(&u->rows[u->n - 1], 0, sizeof(*r));
        r->kind = kind;
        r->key = key;
        copy_utf8_str(r->ident, sizeof(r->ident), ident); /* fits: a path or a base */
        memcpy(r->base, base, sizeof(r->base));
        memcpy(r->name, base, sizeof(r->name));
        gs = probe(u, u->gslot, kind, ident, NULL);
        if (*gs == 0) {
                *gs = (uint32_t)u->n;
                return r;
        }
        for (i = *gs; u->rows[i - 1].gnext; i = u->rows[i - 1].gnext)
                ;
        u->rows[i - 1].gnext = (uint32_t)u->n;
        return r;
}

/* The unit s names: its name cut (base), its resolved path ("" unknown),
 * its identity (the path or else base) and its row (NULL: new, at slot). */
struct seen_id {
        char base[UNITS_NAME_MAX + 1];
        char path[UNITS_PATH_MAX + 1];
        const char *ident;
        struct unit *row;
        uint32_t slot;
};

static int seen_id(struct units *u, const struct units_seen *s, struct seen_id *id)
{
        if (!s->name || !s->name[0] || (s->kind != UNITS_COMPILE && s->kind != UNITS_LINK))
                return -EINVAL;
        copy_utf8_str(id->base, sizeof(id->base), s->name);
        if (!s->src || unitname_resolve(s->cwd, s->src, id->path, sizeof(id->path)) < 0)
                id->path[0] = '\0';
        id->ident = id->path[0] ? id->path : id->base;
        id->row = lookup(u, s->kind, id->ident, s->key, &id->slot);
        return 0;
}

int units_see(struct units *u, const struct units_seen *s)
{
        struct seen_id id;
        struct unit *r;

        if (seen_id(u, s, &id) < 0)
                return -EINVAL;
        if (!(r = id.row)) {
                if (!(r = new_row(u, s->kind, id.ident, id.base, s->key, id.slot)))
                        return -ENOSPC;
                memcpy(r->path, id.path, sizeof(r->path));
                r->first_s = s->elapsed_s;
                r->peak_mb = r->peak_s = r->cpu_s = NAN;
                r->wait_s[0] = r->wait_s[1] = r->wait_s[2] = NAN;
                copy_utf8_str(r->tool, sizeof(r->tool), s->tool);
                copy_utf8_str(r->std, sizeof(r->std), s->std);
                copy_utf8_str(r->dir, sizeof(r->dir), s->dir);
                r->exact = s->exact;
                retag(u, *probe(u, u->gslot, s->kind, id.ident, NULL));
        }
        r->last_s = s->elapsed_s;
        if (isfinite(s->rss_mb) && (isnan(r->peak_mb) || s->rss_mb > r->peak_mb)) {
                r->peak_mb = s->rss_mb;
                r->peak_s = s->elapsed_s;
                copy_utf8_str(r->tool, sizeof(r->tool), s->tool);
        }
        /* What ended before counts too: a unit's processes come and go (a
         * source compiled twice, an LTO link's ltrans partitions). */
        if (isfinite(s->cpu_s))
                r->cpu_s = execs_max(r->cpu_s, s->cpu_s + r->ended_cpu);
        return 0;
}

int units_ended_seen(struct units *u, const struct units_seen *s)
{
        struct seen_id id;

        if (seen_id(u, s, &id) < 0 || !isfinite(s->cpu_s) || s->cpu_s < 0)
                return -EINVAL;
        if (!id.row)
                return -ENOENT;
        id.row->ended_cpu += s->cpu_s;
        id.row->cpu_s = execs_max(id.row->cpu_s, id.row->ended_cpu);
        return 0;
}

int units_done(struct units *u, const struct units_seen *s, double start_s)
{
        struct units_seen at = *s;
        struct seen_id id;
        int e;

        at.elapsed_s = start_s;
        at.rss_mb = at.cpu_s = NAN;
        e = units_see(u, &at);
        if (e >= 0 && isfinite(s->cpu_s))
                e = units_ended_seen(u, s);
        at = *s;
        at.cpu_s = NAN;
        if (e >= 0 && (e = units_see(u, &at)) >= 0 && seen_id(u, s, &id) >= 0 && id.row)
                for (size_t i = 0; i < 3; i++)
                        if (isfinite(s->wait_s[i]))
                                id.row->wait_s[i] =
                                    (isnan(id.row->wait_s[i]) ? 0 : id.row->wait_s[i]) +
                                    s->wait_s[i];
        return e;
}

int units_put(struct units *u, const struct unit *row)
{
        const char *ident = row->path[0] ? row->path : row->name;
        /* one path built two ways is two rows ("x.cpp [c++20]", "x.cpp [gnu++17]") */
        uint64_t key = row->path[0] ? hash(row->kind, row->name, 0) | 1 : 0;
        struct unit *r;
        uint32_t slot = 0, next;

        if (!row->name[0] || memchr(row->name, '\0', sizeof(row->name)) == NULL ||
            memchr(row->tool, '\0', sizeof(row->tool)) == NULL ||
            memchr(row->path, '\0', sizeof(row->path)) == NULL ||
            (row->kind != UNITS_COMPILE && row->kind != UNITS_LINK))
                return -EINVAL;
        r = lookup(u, row->kind, ident, key, &slot);
        if (!r && !(r = new_row(u, row->kind, ident, row->name, key, slot)))
                return -ENOSPC;
        next = r->gnext;
        *r = *row;
        r->gnext = next; /* its place in its ident's chain */
        r->key = key;
        memcpy(r->base, row->name, sizeof(r->base));
        copy_utf8_str(r->ident, sizeof(r->ident), ident);
        r->std[0] = '\0'; /* dir kept: the history has it (the plan's CMake targets) */
        r->ended_cpu = 0.0;
        return 0;
}

size_t units_count(const struct units *u)
{
        return u->n;
}

const struct unit *units_rows(const struct units *u, size_t *ret_n)
{
        *ret_n = u->n;
        return u->rows;
}

bool units_exact(const struct units *u)
{
        for (size_t i = 0; u && i < u->n; i++)
                if (!u->rows[i].exact)
                        return false;
        return u && u->n > 0;
}

/* input is the source of r: its path ends with input after a '/', or r
 * has no path and input's base name is r's base. */
static bool is_source(const struct unit *r, const char *input)
{
        size_t pl = strlen(r->path), il = strlen(input);
        const char *base = strrchr(input, '/');

        if (r->kind != UNITS_COMPILE || !il)
                return false;
        if (pl)
                return pl >= il && strcmp(r->path + pl - il, input) == 0 &&
                       (pl == il || input[0] == '/' || r->path[pl - il - 1] == '/');
        return strcmp(r->base, base ? base + 1 : input) == 0;
}

int units_mark_cache(struct units *u, const char *input, char cache)
{
        for (size_t i = 0; i < u->n; i++)
                if (!u->rows[i].cache && is_source(&u->rows[i], input)) {
                        u->rows[i].cache = cache;
                        return 0;
                }
        return -ENOENT;
}

const char *units_cache_name(char cache)
{
        return cache == UNITS_CACHE_HIT    ? "hit"
               : cache == UNITS_CACHE_MISS ? "miss"
               : cache == UNITS_CACHE_NONE ? "uncacheable"
                                           : "";
}

char units_cache_of(const char *name)
{
        static const char all[] = {UNITS_CACHE_HIT, UNITS_CACHE_MISS, UNITS_CACHE_NONE};

        for (size_t i = 0; name && name[0] && i < sizeof(all); i++)
                if (strcmp(name, units_cache_name(all[i])) == 0)
                        return all[i];
        return UNITS_CACHE_UNKNOWN;
}

static double peak_of(const struct unit *r)
{
        return isnan(r->peak_mb) ? -1.0 : r->peak_mb;
}

size_t units_top(const struct units *u, struct unit *out, size_t cap)
{
        size_t k = 0;

        /* Insertion into a short sorted list: rows are in order of first
         * sight, and a strict comparison keeps the first on ties. */
        for (size_t i = 0; i < u->n; i++) {
                size_t at = k;

                while (at > 0 && peak_of(&u->rows[i]) > peak_of(&out[at - 1]))
                        at--;
                if (at >= cap)
                        continue;
                memmove(&out[at + 1], &out[at], (MIN(k, cap - 1) - at) * sizeof(*out));
                out[at] = u->rows[i];
                if (k < cap)
                        k++;
        }
        return k;
}
