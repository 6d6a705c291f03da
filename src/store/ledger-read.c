/* SPDX-License-Identifier: MIT */
/* The job's unit ledger from the history (model/ledger.h). */
#include <math.h>

#include "model/ledger.h"
#include "model/units.h"
#include "store/history.h"
#include "store/store.h"

struct ids {
        int64_t id[LEDGER_RUNS];
        size_t n;
};

static int collect(void *userdata, const struct store_run *r)
{
        struct ids *ids = userdata;

        if (ids->n < LEDGER_RUNS)
                ids->id[ids->n++] = r->id;
        return 0;
}

int store_job_ledger(struct store *st, const char *job, const char *host, struct ledger *l)
{
        const struct store_job_filter f = {
            .job = job, .host = host, .finished_only = true, .success = -1, .since = NAN};
        struct ids ids = {.n = 0};
        int e = store_job_runs(st, &f, LEDGER_RUNS, collect, &ids);

        for (size_t i = 0; e >= 0 && i < ids.n; i++) {
                struct units *u;
                const struct unit *rows;
                size_t n;

                if ((e = units_new(&u)) < 0)
                        break;
                if ((e = store_units_read(st, ids.id[i], u)) >= 0) {
                        rows = units_rows(u, &n);
                        e = ledger_add_run(l, rows, n);
                }
                units_free(u);
        }
        return e < 0 ? e : (int)ids.n;
}
