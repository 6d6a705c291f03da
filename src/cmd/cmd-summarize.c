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
#include "cmd/cmd-runfiles.h"
#include "cmd/cmd.h"
#include "model/units.h"
#include "render/summary.h"
#include "pipeline/loop.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

/* The run's compile units from the database, when it had process scans (a
 * cgroup mode in its rows); NULL otherwise. */
static struct units *load_units_db(struct store *st, int64_t id, const struct summary *sum)
{
        struct units *u = NULL;

        if (!sum->build.mode[0] || units_new(&u) < 0)
                return NULL;
        if (store_units_read(st, id, u) < 0) {
                units_free(u);
                return NULL;
        }
        return u;
}

/* Where a replay's compile units are: the units file beside csv, or the
 * run's rows in st. */
struct units_from {
        const char *csv;
        struct store *st;
        int64_t id;
};

/* The recording through the pipeline (a recorder with no sinks: nothing
 * is written), then its summary, with the run's units, to stdout. Returns
 * 0, -errno from the source (the caller says what it was), or 1 after
 * printing why. */
static int replay(const struct common_opts *o, const struct source_ops *ops, void *state,
                  struct run_info *ri, const struct units_from *uf)
{
        struct recorder_config cfg = o->rec;
        struct recorder *r = NULL;
        struct dbuf out = DBUF_INIT;
        struct summary *sum = NULL;
        struct units *units = NULL;
        int64_t rows;

        cfg.replay = true;
        cfg.sinks = NULL;
        rows = recorder_new(&cfg, ri, &r);
        if (rows >= 0)
                rows = loop_replay(ops, state, r);
        if (rows == -ENOMEM)
                goto oom;
        if (rows < 0)
                goto out;
        rows = 0;
        sum = malloc(sizeof(*sum));
        if (!sum)
                goto oom;
        *sum = *recorder_summary(r);
        if (sum->skipped_rows)
                fprintf(stderr, "buildtel summarize: note: %llu torn or junk rows skipped\n",
                        (unsigned long long)sum->skipped_rows);
        units = uf->csv ? load_units_file(uf->csv) : load_units_db(uf->st, uf->id, sum);
        sum->units = units;
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
        units_free(units);
        free(sum);
        dbuf_release(&out);
        recorder_free(r);
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
                e = replay(o, &source_history, src, &ri, &(struct units_from){.st = st, .id = id});
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
        e = source_csv_open(map ? map : "", map ? (size_t)st.st_size : 0, &src);
        if (e >= 0)
                e = replay(o, &source_csv, src, &ri, &(struct units_from){.csv = path});
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
