/* SPDX-License-Identifier: MIT */
/* The OTEL_* and TRACEPARENT parsers on arbitrary bytes: k=v lists (both
 * modes), percent-decoding, traceparent, booleans, milliseconds, endpoint
 * URLs and their display form, Retry-After, tracestate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/otlp-send.h"
#include "parse/otelenv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        struct otel_pairs ps;
        struct traceparent tp;
        size_t bad;
        uint64_t ms;
        char *str, disp[64];
        double d;
        bool b;

        for (int hdr = 0; hdr < 2; hdr++)
                if (otelenv_parse_pairs(s, size, hdr, &ps, &bad) == 0) {
                        if (ps.n > OTELENV_MAX_PAIRS)
                                abort();
                        for (size_t i = 0; i < ps.n; i++)
                                if (!ps.p[i].key[0] || strlen(ps.p[i].key) > size)
                                        abort();
                        otel_pairs_release(&ps);
                }
        if (otelenv_percent_decode(s, size, &str) == 0) {
                if (strlen(str) > size)
                        abort();
                free(str);
        }
        if (otelenv_parse_traceparent(s, size, &tp) == 0 && tp.version == 0xff)
                abort();
        /* a valid tracestate is printable ASCII, no newline */
        if (otelenv_check_tracestate(s, size) == 0)
                for (size_t i = 0; i < size; i++)
                        if (data[i] < 0x20 && data[i] != '\t')
                                abort();
        (void)otelenv_parse_bool(s, size, &b);
        if (otelenv_parse_ms(s, size, 3600000, &ms) == 0 && ms > 3600000)
                abort();
        for (int generic = 0; generic < 2; generic++)
                if (otelenv_metrics_url(s, size, generic, &str) == 0) {
                        otelenv_url_for_display(str, disp, sizeof(disp));
                        /* no query, no fragment, no user info in the authority
                         * (an '@' further on is part of the path) */
                        const char *auth = strstr(disp, "//");
                        size_t alen = auth ? strcspn(auth + 2, "/") : 0;
                        if (strlen(disp) >= sizeof(disp) || strchr(disp, '?') ||
                            strchr(disp, '#') || (auth && memchr(auth + 2, '@', alen)))
                                abort();
                        free(str);
                }
        if (otlp_parse_retry_after(s, size, 1.8e9, &d) == 0 && !(d >= 0))
                abort();
        return 0;
}
