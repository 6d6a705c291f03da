/* SPDX-License-Identifier: MIT */
/* buildtel summarize FILE.csv|RUN: the same summary a run writes,
 * recomputed from its CSV or its rows in the history through the same
 * pipeline (a replay source -> the recorder -> its summary). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd-recorded.h"
#include "cmd/cmd-runfiles.h"
#include "cmd/cmd.h"
#include "model/units.h"
#include "render/summary.h"
#include "pipeline/loop.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

/* Where a replay's model is: the run's files beside csv, or its rows in
 * st; db and row: the history the baseline reads (row 0: none). */
struct replay_from {
        const char *csv;
        struct store *st;
        int64_t id;
        const char *db;
        int64_t row;
};

/* The recording through the pipeline (a recorder with no sinks: nothing
 * is written), the run's recorded model (targets, units) loaded, the
 * recorder finished (the baseline derived as the live run's), then its
 * summary to stdout. Returns 0, -errno from the source (the caller says
 * what it was), or 1 after printing why. */
static int replay(const struct common_opts *o, const struct source_ops *ops, void *state,
                  struct run_info *ri, const struct replay_from *from)
{
        struct recorder_config cfg = o->rec;
        struct recorder *r = NULL;
        struct dbuf out = DBUF_INIT;
        const struct summary *sum;
        struct recorded rc;
        int64_t rows;

        if (recorded_init(&rc) < 0) {
                fprintf(stderr, "buildtel summarize: out of memory\n");
                return 1;
        }
        cfg.replay = true;
        cfg.sinks = NULL;
        cfg.recorded = &rc.m;
        cfg.db_path = from->db;
        cfg.replay_row = from->row;
        rows = recorder_new(&cfg, ri, &r);
        if (rows >= 0)
                rows = loop_replay(ops, state, r);
        if (rows == -ENOMEM)
                goto oom;
        if (rows < 0)
                goto out;
        rows = 0;
        sum = recorder_summary(r);
        if (sum->skipped_rows)
                fprintf(stderr, "buildtel summarize: note: %llu torn or junk rows skipped\n",
                        (unsigned long long)sum->skipped_rows);
        if (from->csv)
                recorded_load_files(&rc, from->csv, ri);
        else
                (void)recorded_load_db(&rc, from->st, from->id, ri, sum->build.mode[0] != '\0');
        if (recorder_finish(r, NULL) == -ENOMEM)
                goto oom;
        if (o->json ? summary_render_json(sum, ri, &out) < 0
                    : summary_render_text(sum, ri, &out) < 0)
                goto oom;
        if (write_all(STDOUT_FILENO, out.p, out.len) < 0) {
                fprintf(stderr, "buildtel summarize: cannot write: %s\n", strerror(errno));
                rows = 1;
        }
        goto out;
oom:
        fprintf(stderr, "buildtel summarize: out of memory\n");
        rows = 1;
out:
        dbuf_release(&out);
        recorder_free(r);
        recorded_release(&rc);
        return (int)rows;
}

/* RUN is not a file: the run from the history database, its samples
 * replayed through the pipeline. */
static int summarize_db(struct common_opts *o, const char *spec)
{
        _cleanup_free_ char *def = NULL;
        const char *db = o->rec.db_path;
        struct store *st = NULL;
        struct source_history *src = NULL;
        struct store_run run = {0};
        struct run_info ri = {0};
        int64_t id;
        int e, ret = 1;

        if (!db)
                db = def = store_default_path();
        if (!db) {
                fprintf(stderr,
                        "buildtel summarize: '%s' is not a file, and there is no history database "
                        "(set HOME or use --db)\n",
                        spec);
                return 1;
        }
        e = history_store_open(db, false, 2000, &st);
        if (e == -ENOENT) {
                fprintf(stderr,
                        "buildtel summarize: '%s' is neither a file nor a run (no history database "
                        "'%s')\n",
                        spec, db);
                return 1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel summarize: history database '%s': %s\n", db,
                        store_strerror(e));
                return 1;
        }
        e = store_run_find(st, spec, &id);
        if (e == -ENOENT || e == -EEXIST) {
                fprintf(stderr,
                        e == -ENOENT
                            ? "buildtel summarize: '%s' is neither a file nor a run in '%s'\n"
                            : "buildtel summarize: '%s' names several runs in '%s'; give more of "
                              "the id\n",
                        spec, db);
                goto out;
        }
        if (e >= 0)
                e = store_run_get(st, id, &run);
        if (e >= 0) {
                ri = run.info;
                run.info = (struct run_info){0};
        }
        if (e >= 0)
                e = source_history_open(st, id, &src);
        if (e >= 0)
                e = replay(o, &source_history, src, &ri,
                           &(struct replay_from){.st = st, .id = id, .db = db, .row = id});
        if (e < 0)
                fprintf(stderr, "buildtel summarize: history database '%s': %s\n", db,
                        store_strerror(e));
        ret = e == 0 ? 0 : 1;
out:
        source_history.close(src);
        run_info_release(&ri);
        store_run_release(&run);
        store_close(st);
        return ret;
}

/* FILE.csv: its rows replayed through the pipeline, with the run's facts
 * from the resources-<id>.run.json beside it. */
static int summarize_csv(struct common_opts *o, const char *path)
{
        struct replay_from from = {.csv = path, .db = o->rec.db_path};
        struct source_csv *src = NULL;
        struct run_info ri = {0};
        void *map = NULL;
        struct stat st;
        int e, fd, ret = 1;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "buildtel summarize: cannot open '%s': %s\n", path,
                        strerror(errno));
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                fprintf(stderr, "buildtel summarize: '%s' is not a regular file\n", path);
                goto out;
        }
        if (st.st_size > 0) {
                map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (map == MAP_FAILED) {
                        map = NULL;
                        fprintf(stderr, "buildtel summarize: cannot read '%s': %s\n", path,
                                strerror(errno));
                        goto out;
                }
        }
        load_run_info(path, &ri);
        /* its baseline: from the history it was recorded in, if any */
        from.row = recorded_history_row(from.db, ri.run_id);
        e = source_csv_open(map ? map : "", map ? (size_t)st.st_size : 0, &src);
        if (e >= 0)
                e = replay(o, &source_csv, src, &ri, &from);
        if (e < 0)
                fprintf(stderr, "buildtel summarize: '%s' is not a buildtel CSV (%s)\n", path,
                        e == -EINVAL ? "no buildtel header" : strerror(-e));
        ret = e == 0 ? 0 : 1;
out:
        source_csv.close(src);
        if (map)
                munmap(map, (size_t)st.st_size);
        closep(&fd);
        run_info_release(&ri);
        return ret;
}

int cmd_summarize(int argc, char **argv)
{
        struct common_opts o;
        struct stat st;
        int k, ret = EXIT_BT_USAGE;

        common_opts_init(&o);
        k = cmd_parse_options(CMDS_SUMMARIZE, "summarize", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (k != argc - 1) {
                cmd_print_short_usage("summarize");
                goto out;
        }
        if (stat(argv[k], &st) < 0 && errno == ENOENT)
                ret = summarize_db(&o, argv[k]);
        else
                ret = summarize_csv(&o, argv[k]);
out:
        common_opts_release(&o);
        return ret;
}
