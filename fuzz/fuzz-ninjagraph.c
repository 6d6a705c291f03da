/* SPDX-License-Identifier: MIT */
/* Fuzzes `ninja -t graph`'s reader and the critical path over it: every
 * query of a label returns within the input, and the path through made-up
 * edges (one per label asked) is bounded: no step twice, no negative slack. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/critpath.h"
#include "parse/ninjagraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(void *userdata, const char *input)
{
        *(size_t *)userdata += strlen(input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const ask[] = {"a", "b.o", "app", "all", "", "phony"};
        struct ninja_edge ev[6];
        struct ninjagraph *g;
        struct critpath cp;
        size_t sum = 0;

        if (ninjagraph_parse((const char *)data, size, &g) < 0)
                return 0;
        for (size_t i = 0; i < 6; i++) {
                const char *rule = NULL;

                if (ninjagraph_inputs(g, ask[i], &rule, touch, &sum) >= 0 && (!rule || strlen(rule) > size))
                        abort();
                ev[i] = (struct ninja_edge){.start_ms = (int64_t)i * 10, .end_ms = (int64_t)i * 10 + 5};
                strcpy(ev[i].output, ask[i]);
        }
        if (critpath_ninja(ninjagraph_inputs, g, ev, 6, 2, &cp) == 0) {
                if (cp.n > CRITPATH_MAX || cp.n == 0 || cp.n + cp.dropped > 6)
                        abort();
                for (size_t i = 0; i < cp.n; i++)
                        if (cp.step[i].slack_s < 0 || !memchr(cp.step[i].name, '\0', sizeof(cp.step[i].name)))
                                abort();
        }
        ninjagraph_free(g);
        return 0;
}
