/* SPDX-License-Identifier: MIT */
/* A recorded run's model, read for a replay (cmd-recorded.h). */
#include "cmd/cmd-recorded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd-runfiles.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

static void sync_model(struct recorded *rc)
{
        rc->m.facts = rc->facts;
        rc->m.targets = rc->targets;
        rc->m.units = rc->units;
}

int recorded_init(struct recorded *rc)
{
        memset(rc, 0, sizeof(*rc));
        rc->facts = calloc(1, sizeof(*rc->facts));
        if (!rc->facts)
                return -ENOMEM;
        sync_model(rc);
        return 0;
}

void recorded_release(struct recorded *rc)
{
        if (rc->targets)
                targets_release(rc->targets);
        free(rc->targets);
        units_free(rc->units);
        free(rc->facts);
        memset(rc, 0, sizeof(*rc));
}

/* The targets of the facts, their BuildKit steps, the slowest ninja edges
 * and the log's compiler-cache blocks. */
static int load_db_targets(struct recorded *rc, struct store *st, int64_t id,
                           const struct run_info *ri)
{
        struct targets *ts = malloc(sizeof(*ts));
        int e, r;

        if (!ts)
                return -ENOMEM;
        targets_init(ts);
        for (size_t i = 0; i < rc->facts->n; i++)
                (void)targets_get(ts, rc->facts->t[i].name, strlen(rc->facts->t[i].name));
        e = store_steps_get(st, id, ts);
        r = store_edges_get(st, id, ts);
        e = e < 0 ? e : r;
        /* the report's cache blocks only: none is no error */
        (void)store_cc_log_get(st, id, ri->start_epoch, ts);
        rc->targets = ts;
        return e;
}

int recorded_load_db(struct recorded *rc, struct store *st, int64_t id, const struct run_info *ri,
                     bool with_units)
{
        int e, r;

        targets_facts(NULL, ri, rc->facts);
        e = store_targets_get(st, id, rc->facts);
        r = load_db_targets(rc, st, id, ri);
        e = e < 0 ? e : r;
        if (with_units) {
                r = units_new(&rc->units);
                if (r >= 0)
                        r = store_units_read(st, id, rc->units);
                if (r < 0) {
                        units_free(rc->units);
                        rc->units = NULL;
                }
                e = e < 0 ? e : r;
        }
        sync_model(rc);
        return e < 0 ? e : 0;
}

void recorded_load_files(struct recorded *rc, const char *csv, const struct run_info *ri)
{
        rc->units = load_units_file(csv);
        targets_facts(NULL, ri, rc->facts);
        load_targets_file(csv, rc->facts, &rc->targets);
        sync_model(rc);
}

int64_t recorded_history_row(const char *db, const char *run_id)
{
        _cleanup_free_ char *def = NULL;
        struct store *st = NULL;
        int64_t id = 0;

        if (!run_id || !run_id[0])
                return 0;
        if (!db)
                db = def = store_default_path();
        if (!db || history_store_open(db, false, 2000, &st) < 0)
                return 0;
        if (store_run_find(st, run_id, &id) >= 0) {
                struct store_run run = {0};

                /* the run's own id, not a prefix of another's */
                if (store_run_get(st, id, &run) < 0)
                        id = 0;
                else if (!run.info.run_id || strcmp(run.info.run_id, run_id) != 0)
                        id = 0;
                store_run_release(&run);
        } else
                id = 0;
        store_close(st);
        return id;
}
