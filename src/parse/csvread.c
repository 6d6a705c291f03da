/* SPDX-License-Identifier: MIT */
#include "parse/csvread.h"

#include <errno.h>

#include "util/csv.h"

int64_t csvread_samples(const char *buf, size_t len, csvread_fn fn, void *userdata)
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
                        fn(userdata, NULL);
                        break;
                }
                if (r < 0 || sample_from_record(&map, &rec, &smp) < 0) {
                        fn(userdata, NULL);
                        continue;
                }
                fn(userdata, &smp);
                good++;
        }
        r = 0;
out:
        csv_record_release(&rec);
        return r < 0 ? r : good;
}

static void to_summary(void *userdata, const struct sample *smp)
{
        struct summary *s = userdata;

        if (smp)
                summary_add(s, smp);
        else
                s->skipped_rows++;
}

int64_t csvread_summary(const char *buf, size_t len, struct summary *s)
{
        return csvread_samples(buf, len, to_summary, s);
}

struct each {
        int (*fn)(void *userdata, const struct sample *s);
        void *userdata;
        uint64_t *skipped;
        int err;
};

static void each_row(void *userdata, const struct sample *smp)
{
        struct each *w = userdata;

        if (!smp)
                (*w->skipped)++;
        else if (w->err >= 0)
                w->err = w->fn(w->userdata, smp);
}

int64_t csvread_each(const char *buf, size_t len, int (*fn)(void *userdata, const struct sample *s),
                     void *userdata, uint64_t *ret_skipped)
{
        struct each w = {fn, userdata, ret_skipped, 0};
        int64_t n = csvread_samples(buf, len, each_row, &w);

        return w.err < 0 ? w.err : n;
}
