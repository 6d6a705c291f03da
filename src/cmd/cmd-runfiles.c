/* SPDX-License-Identifier: MIT */
/* The run's files beside a recorded CSV, read for a replay. */
#include "cmd/cmd-runfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "runfiles/names.h"
#include "runfiles/runjson.h"
#include "runfiles/targetsjson.h"
#include "runfiles/unitscsv.h"
#include "util/macro.h"
#include "util/util.h"

/* The run's compile units from resources-<id>.units.csv beside the CSV,
 * when the run wrote one; NULL otherwise. */
struct units *load_units_file(const char *csv)
{
        _cleanup_free_ char *path = runfiles_beside(csv, RUNFILE_UNITS);
        _cleanup_free_ char *buf = NULL;
        struct units *u = NULL;
        size_t len, skipped = 0;

        if (!path || read_file_at(AT_FDCWD, path, 64 << 20, &buf, &len) < 0 || units_new(&u) < 0)
                return NULL;
        if (unitscsv_parse(buf, len, u, &skipped) < 0) {
                fprintf(stderr,
                        "buildtel summarize: note: '%s' is not a units file; units left out\n",
                        path);
                units_free(u);
                return NULL;
        }
        if (skipped)
                fprintf(stderr, "buildtel summarize: note: %zu bad rows of '%s' skipped\n", skipped,
                        path);
        return u;
}

void load_run_info(const char *csv, struct run_info *ri)
{
        _cleanup_free_ char *path = runfiles_beside(csv, RUNFILE_RUN);
        _cleanup_free_ char *buf = NULL;
        size_t len;

        ri->end_epoch = ri->start_epoch = NAN;
        ri->exit_code = -1;
        if (!path || read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len) < 0)
                return;
        if (runjson_parse(buf, len, ri) < 0) {
                run_info_release(ri);
                ri->end_epoch = ri->start_epoch = NAN;
                ri->exit_code = -1;
                fprintf(stderr,
                        "buildtel summarize: note: '%s' is not a run record; run facts left out\n",
                        path);
        }
}

void load_targets_file(const char *csv, struct run_facts *f, struct targets **ret_ts)
{
        _cleanup_free_ char *path = runfiles_beside(csv, RUNFILE_TARGETS);
        _cleanup_free_ char *buf = NULL;
        struct targets *ts;
        size_t len;

        *ret_ts = NULL;
        if (!path || read_file_at(AT_FDCWD, path, 16 << 20, &buf, &len) < 0)
                return;
        ts = malloc(sizeof(*ts));
        if (!ts)
                return;
        targets_init(ts);
        if (targetsjson_parse(buf, len, f, ts) == -EINVAL) {
                targets_release(ts);
                free(ts);
                return;
        }
        *ret_ts = ts;
}
