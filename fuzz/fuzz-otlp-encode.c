/* SPDX-License-Identifier: MIT */
/* Random OTLP metric sets, made from the fuzz input, encoded as protobuf,
 * JSON and gzip and decoded back (tests/otlp-roundtrip.h): the values must
 * be the same. A mismatch aborts with its reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tests/otlp-roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *why = rt_run(data, size);

        if (why) {
                fprintf(stderr, "round trip: %s\n", why);
                abort();
        }
        return 0;
}
