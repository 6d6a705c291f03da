/* SPDX-License-Identifier: MIT */
/* Fuzzes the trace writer's JSON string escaping: whatever the bytes, the
 * result is one JSON string that jansson reads back, with no raw control
 * character and valid UTF-8; plain ASCII comes back unchanged. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/jsonw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct dbuf b = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&b);
        json_t *v;
        bool ascii = true;

        jsonw_put(&w, (const char *)data, size);
        if (w.err < 0)
                return 0;
        for (size_t i = 0; i < b.len; i++)
                if ((unsigned char)b.p[i] < 0x20)
                        abort();
        v = json_loadb(b.p, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (!json_is_string(v))
                abort();
        for (size_t i = 0; i < size; i++)
                ascii &= data[i] < 0x80;
        if (ascii && (json_string_length(v) != size || memcmp(json_string_value(v), data, size)))
                abort();
        json_decref(v);
        dbuf_release(&b);
        return 0;
}
