/* SPDX-License-Identifier: MIT */
#include "render/trace-lanes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* A binary min-heap of (key, lane) pairs. */
struct heap_item {
        int64_t key;
        uint32_t lane;
};

struct heap {
        struct heap_item *v;
        size_t n;
};

/* a before b: by key, then by lane */
static bool before(struct heap_item a, struct heap_item b)
{
        return a.key < b.key || (a.key == b.key && a.lane < b.lane);
}

static void heap_push(struct heap *h, int64_t key, uint32_t lane)
{
        struct heap_item it = {key, lane};
        size_t i = h->n++;

        while (i > 0 && before(it, h->v[(i - 1) / 2])) {
                h->v[i] = h->v[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        h->v[i] = it;
}

static struct heap_item heap_pop(struct heap *h)
{
        struct heap_item top = h->v[0], last = h->v[--h->n];
        size_t i = 0;

        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= h->n)
                        break;
                if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
                        c++;
                if (!before(h->v[c], last))
                        break;
                h->v[i] = h->v[c];
                i = c;
        }
        if (h->n > 0)
                h->v[i] = last;
        return top;
}

int64_t trace_lanes_assign(const struct trace_span *spans, size_t n, uint32_t *lane)
{
        /* busy: lanes keyed by the end of their last span; idle: free lanes
         * keyed by their number. Each lane is in exactly one of them. */
        struct heap busy = {calloc(n + 1, sizeof(struct heap_item)), 0};
        struct heap idle = {calloc(n + 1, sizeof(struct heap_item)), 0};
        uint32_t lanes = 0;

        if (!busy.v || !idle.v) {
                free(busy.v);
                free(idle.v);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                while (busy.n > 0 && busy.v[0].key <= spans[i].start) {
                        struct heap_item it = heap_pop(&busy);
                        heap_push(&idle, it.lane, it.lane);
                }
                lane[i] = idle.n > 0 ? heap_pop(&idle).lane : lanes++;
                heap_push(&busy, spans[i].end, lane[i]);
        }
        free(busy.v);
        free(idle.v);
        return lanes;
}
