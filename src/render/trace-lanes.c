/* SPDX-License-Identifier: MIT */
#include "render/trace-lanes.h"

#include <errno.h>
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

static void heap_push(struct heap *h, int64_t key, uint32_t lane)
{
        size_t i = h->n++;

        while (i > 0) {
                size_t p = (i - 1) / 2;
                if (h->v[p].key < key || (h->v[p].key == key && h->v[p].lane <= lane))
                        break;
                h->v[i] = h->v[p];
                i = p;
        }
        h->v[i] = (struct heap_item){key, lane};
}

static struct heap_item heap_pop(struct heap *h)
{
        struct heap_item top = h->v[0], last = h->v[--h->n];
        size_t i = 0;

        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= h->n)
                        break;
                if (c + 1 < h->n &&
                    (h->v[c + 1].key < h->v[c].key ||
                     (h->v[c + 1].key == h->v[c].key && h->v[c + 1].lane < h->v[c].lane)))
                        c++;
                if (last.key < h->v[c].key ||
                    (last.key == h->v[c].key && last.lane <= h->v[c].lane))
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
