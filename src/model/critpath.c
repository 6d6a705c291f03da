/* SPDX-License-Identifier: MIT */
#include "model/critpath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ninjagraph.h"
#include "util/util.h"

#define PHONY_DEPTH 8 /* phony edges followed through, nested */

struct walk {
        const struct ninjagraph *g;
        const struct ninja_edge *ev;
        const size_t *by_out; /* indexes of ev, by output */
        size_t n;
        long best;  /* the input edge that ended last; -1 none */
        int depth;
};

static int cmp_out(const void *a, const void *b, void *walk)
{
        const struct ninja_edge *v = ((const struct walk *)walk)->ev;

        return strcmp(v[*(const size_t *)a].output, v[*(const size_t *)b].output);
}

static long logged(const struct walk *w, const char *path)
{
        size_t lo = 0, hi = w->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(w->ev[w->by_out[mid]].output, path);

                if (c == 0)
                        return (long)w->by_out[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static void on_input(void *userdata, const char *input)
{
        struct walk *w = userdata;
        long e = logged(w, input);
        const char *rule = NULL;

        if (e >= 0) {
                if (w->best < 0 || w->ev[e].end_ms > w->ev[w->best].end_ms)
                        w->best = e;
                return;
        }
        /* not built in this run: a phony stands for its inputs */
        if (w->depth < PHONY_DEPTH) {
                w->depth++;
                if (ninjagraph_inputs(w->g, input, &rule, NULL, NULL) >= 0 && rule &&
                    strcmp(rule, "phony") == 0)
                        (void)ninjagraph_inputs(w->g, input, &rule, on_input, w);
                w->depth--;
        }
}

int critpath_find(const struct ninjagraph *g, const struct ninja_edge *ev, size_t n,
                  struct critpath *ret)
{
        struct walk w = {.g = g, .ev = ev, .n = n};
        size_t *by_out, *chain, nc = 0;
        long cur = -1;

        if (n == 0)
                return -ENODATA;
        by_out = calloc(n, sizeof(*by_out));
        chain = calloc(n, sizeof(*chain));
        if (!by_out || !chain) {
                free(by_out);
                free(chain);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                by_out[i] = i;
                if (cur < 0 || ev[i].end_ms > ev[cur].end_ms)
                        cur = (long)i;
        }
        qsort_r(by_out, n, sizeof(*by_out), cmp_out, &w);
        w.by_out = by_out;
        *ret = (struct critpath){.wall_s = (double)ev[cur].end_ms / 1000.0};
        /* back from the last edge; a chain never holds more edges than ran */
        while (cur >= 0 && nc < n) {
                const char *rule = NULL;

                chain[nc++] = (size_t)cur;
                w.best = -1;
                (void)ninjagraph_inputs(g, ev[cur].output, &rule, on_input, &w);
                if (w.best == cur)
                        break;
                cur = w.best;
        }
        ret->dropped = nc > CRITPATH_MAX ? nc - CRITPATH_MAX : 0;
        for (size_t k = nc; k-- > 0;) {
                const struct ninja_edge *e = &ev[chain[k]];
                double prev = k + 1 < nc ? (double)ev[chain[k + 1]].end_ms / 1000.0 : 0;
                const char *rule = NULL;
                struct critpath_step *s;

                ret->length_s += (double)(e->end_ms - e->start_ms) / 1000.0;
                if (k >= CRITPATH_MAX)
                        continue;
                s = &ret->step[ret->n++];
                copy_utf8_str(s->name, sizeof(s->name), e->output);
                (void)ninjagraph_inputs(g, e->output, &rule, NULL, NULL);
                copy_utf8_str(s->rule, sizeof(s->rule), rule ? rule : "");
                s->start_s = (double)e->start_ms / 1000.0;
                s->end_s = (double)e->end_ms / 1000.0;
                s->slack_s = s->start_s > prev ? s->start_s - prev : 0;
        }
        free(by_out);
        free(chain);
        return 0;
}
