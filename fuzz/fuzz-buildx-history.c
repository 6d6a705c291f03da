/* SPDX-License-Identifier: MIT */
/* Fuzzes the `docker buildx history inspect --format json` reader and
 * its merge into the targets model, and the `history ls --format json`
 * reader with the target a record's name names. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/targets.h"
#include "parse/bakemeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_record(void *userdata, const struct buildx_record *r)
{
        char tn[TARGET_NAME_MAX + 1];

        (void)userdata;
        if (strnlen(r->ref, sizeof(r->ref)) == sizeof(r->ref) || !r->ref[0] ||
            strchr(r->ref, '/') || strnlen(r->name, sizeof(r->name)) == sizeof(r->name))
                abort();
        if (buildx_record_target(r->name, tn) != (tn[0] != '\0') ||
            strnlen(tn, sizeof(tn)) == sizeof(tn))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct targets ts;

        (void)buildx_history_ls_parse((const char *)data, size, on_record, NULL);
        struct buildx_history h;
        int t;

        if (buildx_history_parse((const char *)data, size, &h) < 0)
                return 0;
        if (strnlen(h.ref, sizeof(h.ref)) == sizeof(h.ref) ||
            strnlen(h.name, sizeof(h.name)) == sizeof(h.name) ||
            strnlen(h.status, sizeof(h.status)) == sizeof(h.status) ||
            strnlen(h.vcs_revision, sizeof(h.vcs_revision)) == sizeof(h.vcs_revision) ||
            (!isnan(h.duration_s) && !(h.duration_s >= 0)) || isinf(h.duration_s))
                abort();
        targets_init(&ts);
        (void)targets_get(&ts, "app", 3);
        t = buildx_history_apply(&h, &ts);
        if (t >= (int)ts.n)
                abort();
        return 0;
}
