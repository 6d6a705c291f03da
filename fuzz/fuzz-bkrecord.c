/* SPDX-License-Identifier: MIT */
/* BuildKit's record (parse/bkrecord) on arbitrary bytes: every step it
 * gives has NUL-terminated commands within their size, and a usage that
 * is either unset or marked as the record's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/bkrecord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *userdata, const struct bkrecord_step *st)
{
        int *n = userdata;

        if (strnlen(st->cmd, sizeof(st->cmd)) == sizeof(st->cmd) ||
            strnlen(st->xcmd, sizeof(st->xcmd)) == sizeof(st->xcmd) ||
            (st->u.set && !st->u.from_record))
                abort();
        *n += st->u.set;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int seen = 0, n = bkrecord_parse((const char *)data, size, check, &seen);

        if (n >= 0 && n != seen)
                abort();
        return 0;
}
