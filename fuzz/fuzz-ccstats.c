/* SPDX-License-Identifier: MIT */
/* Fuzzes the compiler-cache stats reader: sccache --show-stats (text and
 * JSON) and ccache -s / --print-stats (TSV and JSON) go through the same
 * line parser. Whole buffer through ccstats_parse, then the same lines one
 * by one, which must agree. Built twice, with sccache and ccache seeds;
 * `buildtel cache` reads the tools' output with the same parser, so its
 * seeds (--print-stats, sccache's JSON, with sizes) are among them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ccstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ccache's stats log (CCACHE_STATSLOG) and sccache's server log are fuzzed
 * on the same inputs. */
static void on_call(void *userdata, const char *input, char cache)
{
        size_t *calls = userdata;

        if (strnlen(input, 4096) >= 4096 || (cache != 'h' && cache != 'm' && cache != 'u'))
                abort();
        ++*calls;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *c = (const char *)data, *end = c + size;
        struct ccstats st = {.kind = CCSTATS_NONE};
        struct ccstats_parser p;
        int r = ccstats_parse((const char *)data, size, &st);
        size_t calls = 0;

        if (ccstatslog_parse((const char *)data, size, on_call, &calls) != calls)
                abort();
        calls = 0;
        if (scclog_parse((const char *)data, size, on_call, &calls) != calls)
                abort();

        if (r != 0 && (r != -ENOENT || st.kind != CCSTATS_NONE))
                abort();
        ccstats_parser_init(&p);
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;

                (void)ccstats_feed_line(&p, c, (size_t)(le - c));
                c = nl ? nl + 1 : end;
        }
        if (p.complete != (r == 0))
                abort();
        if (r == 0 && (p.last.kind != st.kind || p.last.hits != st.hits ||
                       p.last.misses != st.misses || st.kind == CCSTATS_NONE))
                abort();
        /* The figures `buildtel cache` stores: the same either way, known
         * (>= 0) or -1, and a terminated version. */
        if (r == 0 &&
            (p.last.size_bytes != st.size_bytes || p.last.max_size_bytes != st.max_size_bytes ||
             p.last.files != st.files || st.size_bytes < -1 || st.max_size_bytes < -1 ||
             st.files < -1 || memchr(st.version, '\0', sizeof(st.version)) == NULL ||
             strcmp(st.version, p.last.version) != 0))
                abort();
        return 0;
}
