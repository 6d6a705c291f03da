/* SPDX-License-Identifier: MIT */
#include "parse/ninjagraph.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define NINJAGRAPH_NODES_MAX (4u << 20) /* files and edges: a bound on what the output costs */

struct node {
        uint64_t id;
        const char *label; /* a path, or an ellipse edge's rule */
        int ellipse;
};

enum { ARC_SIMPLE, ARC_OUT, ARC_IN };

struct arc {
        uint64_t to, from; /* to first: sorted by cmp_key() as nodes are by id */
        int kind;
        const char *rule; /* ARC_SIMPLE's */
};

struct ninjagraph {
        char *text; /* the labels point into it */
        struct node *nodes, **by_label;
        size_t nnodes, capnodes;
        struct arc *arcs;
        size_t narcs, caparcs;
};

void ninjagraph_free(struct ninjagraph *g)
{
        if (!g)
                return;
        free(g->text);
        free(g->nodes);
        free(g->by_label);
        free(g->arcs);
        free(g);
}

/* "0x55c7..." at *p: its value; the cursor past the closing quote. */
static int quoted_id(char **p, char *end, uint64_t *ret)
{
        char *q = *p, *e;

        if (q >= end || *q++ != '"')
                return -EINVAL;
        errno = 0;
        *ret = strtoull(q, &e, 16);
        if (e == q || e >= end || *e != '"' || errno)
                return -EINVAL;
        *p = e + 1;
        return 0;
}

/* The value of key="..." in the attributes at p (up to end), cut in place;
 * NULL when absent. A label holding a quote ends at its last quote. */
static char *attr(char *p, char *end, const char *key)
{
        char *v = memmem(p, (size_t)(end - p), key, strlen(key)), *q;

        if (!v)
                return NULL;
        v += strlen(key);
        for (q = end; q > v && q[-1] != '"'; q--)
                ;
        if (q <= v)
                return NULL;
        q[-1] = '\0';
        return v;
}

static int push(void **v, size_t *n, size_t *cap, size_t size)
{
        if (*n == *cap) {
                size_t c = *cap ? 2 * *cap : 256;
                void *p = c <= NINJAGRAPH_NODES_MAX ? reallocarray(*v, c, size) : NULL;

                if (!p)
                        return -ENOMEM;
                *v = p;
                *cap = c;
        }
        return 0;
}

static int line(struct ninjagraph *g, char *p, char *end)
{
        uint64_t a, b;
        char *at;

        if (quoted_id(&p, end, &a) < 0)
                return 0;
        if (end - p >= 4 && memcmp(p, " -> ", 4) == 0) {
                struct arc *r;

                p += 4;
                if (quoted_id(&p, end, &b) < 0)
                        return 0;
                if (push((void **)&g->arcs, &g->narcs, &g->caparcs, sizeof(*g->arcs)) < 0)
                        return -ENOMEM;
                r = &g->arcs[g->narcs++];
                *r = (struct arc){.to = b, .from = a, .kind = ARC_OUT};
                if ((at = memmem(p, (size_t)(end - p), "arrowhead=none", 14)))
                        r->kind = ARC_IN;
                else if ((r->rule = attr(p, end, "label=\" ")))
                        r->kind = ARC_SIMPLE;
                return 0;
        }
        if (!(at = attr(p, end, "label=\"")))
                return 0;
        if (push((void **)&g->nodes, &g->nnodes, &g->capnodes, sizeof(*g->nodes)) < 0)
                return -ENOMEM;
        g->nodes[g->nnodes++] =
            (struct node){.id = a,
                          .label = at,
                          .ellipse = memmem(p, (size_t)(end - p), "shape=ellipse", 13) != NULL};
        return 0;
}

/* A node by its id, an arc by its to: each struct's first member. */
static int cmp_key(const void *x, const void *y)
{
        uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

        return (a > b) - (a < b);
}

static int cmp_label(const void *x, const void *y)
{
        return strcmp((*(const struct node *const *)x)->label,
                      (*(const struct node *const *)y)->label);
}

int ninjagraph_parse(const char *buf, size_t len, struct ninjagraph **ret)
{
        struct ninjagraph *g = calloc(1, sizeof(*g));
        char *p, *end;
        int e = 0;

        if (!g || !(g->text = malloc(len + 1))) {
                ninjagraph_free(g);
                return -ENOMEM;
        }
        memcpy(g->text, buf, len);
        g->text[len] = '\0';
        end = g->text + len;
        if (len < 16 || memcmp(g->text, "digraph ninja {", 15) != 0) {
                ninjagraph_free(g);
                return -EINVAL;
        }
        for (p = g->text; p < end && e >= 0;) {
                char *eol = memchr(p, '\n', (size_t)(end - p));

                if (!eol)
                        eol = end;
                *eol = '\0';
                e = line(g, p, eol);
                p = eol + 1;
        }
        if (e >= 0 && !g->nnodes)
                e = -EINVAL; /* no file: nothing to ask (and no array to sort) */
        else if (e >= 0 && !(g->by_label = reallocarray(NULL, g->nnodes, sizeof(*g->by_label))))
                e = -ENOMEM;
        if (e < 0) {
                ninjagraph_free(g);
                return e;
        }
        qsort(g->nodes, g->nnodes, sizeof(*g->nodes), cmp_key);
        for (size_t i = 0; i < g->nnodes; i++)
                g->by_label[i] = &g->nodes[i];
        qsort(g->by_label, g->nnodes, sizeof(*g->by_label), cmp_label);
        if (g->narcs)
                qsort(g->arcs, g->narcs, sizeof(*g->arcs), cmp_key);
        *ret = g;
        return 0;
}

static const struct node *node_of(const struct ninjagraph *g, uint64_t id)
{
        struct node key = {.id = id};

        return bsearch(&key, g->nodes, g->nnodes, sizeof(*g->nodes), cmp_key);
}

/* The arcs into id: [*ret_first, return). */
static size_t arcs_to(const struct ninjagraph *g, uint64_t id, size_t *ret_first)
{
        size_t lo = 0, hi = g->narcs;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (g->arcs[mid].to < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_first = lo;
        while (hi < g->narcs && g->arcs[hi].to == id)
                hi++;
        return hi;
}

int ninjagraph_inputs(const void *graph, const char *path, const char **ret_rule,
                      void (*fn)(void *userdata, const char *input), void *userdata)
{
        const struct ninjagraph *g = graph;
        struct node key = {.label = path}, *kp = &key, **hit;
        const struct node *in;
        size_t i, end;
        int n = 0;

        hit = bsearch(&kp, g->by_label, g->nnodes, sizeof(*g->by_label), cmp_label);
        /* a file's label, not an edge's (an edge may be labelled like a file) */
        while (hit && hit > g->by_label && strcmp(hit[-1]->label, path) == 0)
                hit--;
        while (hit && hit < g->by_label + g->nnodes && strcmp((*hit)->label, path) == 0 &&
               (*hit)->ellipse)
                hit++;
        if (!hit || hit == g->by_label + g->nnodes || strcmp((*hit)->label, path) != 0)
                return -ENOENT;
        for (end = arcs_to(g, (*hit)->id, &i); i < end; i++) {
                const struct arc *a = &g->arcs[i];
                size_t j, jend;

                if (a->kind == ARC_SIMPLE) {
                        if (fn && (in = node_of(g, a->from)))
                                fn(userdata, in->label);
                        *ret_rule = a->rule;
                        return 1;
                }
                if (a->kind != ARC_OUT || !(in = node_of(g, a->from)) || !in->ellipse)
                        continue;
                *ret_rule = in->label;
                for (jend = arcs_to(g, a->from, &j); j < jend; j++) {
                        const struct node *x =
                            g->arcs[j].kind == ARC_IN ? node_of(g, g->arcs[j].from) : NULL;

                        if (x && fn)
                                fn(userdata, x->label);
                        n += x != NULL;
                }
                return n;
        }
        return -ENOENT;
}
