/* SPDX-License-Identifier: MIT */
/* The replays: a recorded CSV (runfiles/samplecsv.c) and a run of the history
 * database (store/), each handing its samples to the recorder. */
#include <errno.h>
#include <stdlib.h>

#include "runfiles/samplecsv.h"
#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "store/history-run.h"

struct source_csv {
        const char *buf;
        size_t len;
};

int source_csv_open(const char *buf, size_t len, struct source_csv **ret)
{
        struct source_csv *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->buf = buf;
        s->len = len;
        *ret = s;
        return 0;
}

static void csv_row(void *userdata, const struct sample *smp)
{
        struct recorder *r = userdata;

        if (smp)
                (void)recorder_sample(r, smp);
        else
                recorder_sample_skipped(r);
}

static int64_t csv_replay(void *state, struct recorder *r)
{
        struct source_csv *s = state;

        return samplecsv_read(s->buf, s->len, csv_row, r);
}

const struct source_ops source_csv = {
    .name = "csv",
    .replay = csv_replay,
    .close = free,
};

struct source_history {
        struct store *st;
        int64_t id;
};

int source_history_open(struct store *st, int64_t id, struct source_history **ret)
{
        struct source_history *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->st = st;
        s->id = id;
        *ret = s;
        return 0;
}

static int history_row(void *userdata, const struct sample *smp)
{
        return recorder_sample(userdata, smp);
}

static int64_t history_replay_run(void *state, struct recorder *r)
{
        struct source_history *s = state;

        /* The store's row reader: only the columns the file has, so an
         * older file's missing columns stay unknown (NAN, ""). */
        return store_samples_each(s->st, s->id, history_row, r);
}

const struct source_ops source_history = {
    .name = "history",
    .replay = history_replay_run,
    .close = free,
};
