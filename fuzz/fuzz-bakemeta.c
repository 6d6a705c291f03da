/* SPDX-License-Identifier: MIT */
/* Fuzzes the --metadata-file reader (build and bake shapes). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/bakemeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct targets ts;
        int r;

        targets_init(&ts);
        /* Half the runs start with a known target, as after a bake stream. */
        if (size && data[0] & 1)
                (void)targets_get(&ts, "app", 3);
        r = bakemeta_parse((const char *)data, size, &ts);
        /* r counts metadata entries: two names equal in their first
         * TARGET_NAME_MAX bytes are one target, so r may exceed ts.n. */
        if ((r < 0 && r != -EINVAL) || ts.n > TARGETS_MAX)
                abort();
        for (size_t i = 0; i < ts.n; i++)
                if (strnlen(ts.t[i].ref, TARGET_FIELD_MAX + 1) > TARGET_FIELD_MAX ||
                    strnlen(ts.t[i].node, TARGET_FIELD_MAX + 1) > TARGET_FIELD_MAX ||
                    strnlen(ts.t[i].builder, TARGET_FIELD_MAX + 1) > TARGET_FIELD_MAX ||
                    strnlen(ts.t[i].name, TARGET_NAME_MAX + 1) > TARGET_NAME_MAX)
                        abort();
        return 0;
}
