/* SPDX-License-Identifier: MIT */
#include "parse/csvread.h"

#include <errno.h>

#include "model/sample.h"
#include "util/csv.h"

static int add_to_summary(void *userdata, const struct sample *smp)
{
        summary_add(userdata, smp);
        return 0;
}

int64_t csvread_summary(const char *buf, size_t len, struct summary *s)
{
        return csvread_each(buf, len, add_to_summary, s, &s->skipped_rows);
}

int64_t csvread_each(const char *buf, size_t len, int (*fn)(void *userdata, const struct sample *s),
                     void *userdata, uint64_t *ret_skipped)
{
        struct csv_record rec = CSV_RECORD_INIT;
        struct sample_colmap map;
        struct sample smp;
        size_t pos, used;
        int64_t good = 0;
        int r;

        r = csv_parse_record(buf, len, &rec, &used);
        if (r > 0)
                r = sample_colmap_init(&map, &rec);
        else if (r == 0)
                r = -EINVAL; /* not even a whole header */
        if (r < 0)
                goto out;

        for (pos = used; pos < len; pos += used) {
                r = csv_parse_record(buf + pos, len - pos, &rec, &used);
                if (r == -ENOMEM)
                        goto out;
                if (r == 0) {
                        /* the torn last row of a writer that was killed */
                        (*ret_skipped)++;
                        break;
                }
                if (r < 0 || sample_from_record(&map, &rec, &smp) < 0) {
                        (*ret_skipped)++;
                        continue;
                }
                r = fn(userdata, &smp);
                if (r < 0)
                        goto out;
                good++;
        }
        r = 0;
out:
        csv_record_release(&rec);
        return r < 0 ? r : good;
}
