/* SPDX-License-Identifier: MIT */
/* buildtel summarize FILE.csv: the same summary a run writes, recomputed
 * from its CSV alone through the same code (csvread -> summary -> render),
 * with the run's facts from the resources-<id>.run.json beside it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-summarize.h"
#include "cmd/cmd.h"
#include "model/units.h"
#include "out/summary-out.h"
#include "parse/csvread.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

enum { OPT_JSON = OPT_COMMON_END };

/* "x/resources-ID.csv" -> "x/resources-ID<suffix>" (".run.json") */
char *beside_path(const char *csv, const char *suffix)
{
        size_t n = strlen(csv), sl = strlen(suffix);
        size_t base = n >= 4 && strcmp(csv + n - 4, ".csv") == 0 ? n - 4 : n;
        char *p = malloc(base + sl + 1);

        if (!p)
                return NULL;
        memcpy(p, csv, base);
        memcpy(p + base, suffix, sl + 1);
        return p;
}

/* The run's compile units from resources-<id>.units.csv beside the CSV,
 * when the run wrote one; NULL otherwise. */
struct units *load_units_file(const char *csv)
{
        _cleanup_free_ char *path = beside_path(csv, ".units.csv");
        _cleanup_free_ char *buf = NULL;
        struct units *u = NULL;
        size_t len, skipped = 0;

        if (!path || read_file_at(AT_FDCWD, path, 64 << 20, &buf, &len) < 0 || units_new(&u) < 0)
                return NULL;
        if (units_csv_parse(buf, len, u, &skipped) < 0) {
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

/* Render sum with the units of the run's units file, when there is one. */
static int render_with_units_file(struct summary *sum, const struct run_info *ri, const char *csv,
                                  bool json, struct dbuf *out)
{
        struct units *u = load_units_file(csv);
        int r;

        sum->units = u;
        r = json ? summary_render_json(sum, ri, out) : summary_render_text(sum, ri, out);
        sum->units = NULL;
        units_free(u);
        return r;
}

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

void load_run_info(const char *csv, struct run_info *ri)
{
        _cleanup_free_ char *path = beside_path(csv, ".run.json");
        _cleanup_free_ char *buf = NULL;
        size_t len;

        ri->end_epoch = ri->start_epoch = NAN;
        ri->exit_code = -1;
        if (!path || read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len) < 0)
                return;
        if (run_info_parse_json(buf, len, ri) < 0) {
                run_info_release(ri);
                ri->end_epoch = ri->start_epoch = NAN;
                ri->exit_code = -1;
                fprintf(stderr,
                        "buildtel summarize: note: '%s' is not a run record; run facts left out\n",
                        path);
        }
}

/* RUN is not a file: the run from the history database, its samples
 * replayed through the same summary code. */
static int summarize_db(struct common_opts *o, const char *spec, bool json)
{
        _cleanup_free_ char *def = NULL;
        const char *db = o->rec.db_path;
        struct store *st = NULL;
        struct run_info ri = {0};
        struct summary sum;
        struct dbuf out = DBUF_INIT;
        struct units *units = NULL;
        int64_t id, rows;
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
        e = store_open(db, false, 2000, &st);
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
        e = history_find_run(st, spec, &id);
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
                e = history_run_info(st, id, &ri);
        summary_init(&sum, &o->rec.summary);
        rows = e >= 0 ? history_replay(st, id, &sum) : e;
        if (rows < 0) {
                fprintf(stderr, "buildtel summarize: history database '%s': %s\n", db,
                        store_strerror((int)rows));
                goto out;
        }
        units = load_units_db(st, id, &sum);
        sum.units = units;
        if (json ? summary_render_json(&sum, &ri, &out) < 0
                 : summary_render_text(&sum, &ri, &out) < 0) {
                fprintf(stderr, "buildtel summarize: out of memory\n");
                goto out;
        }
        if (write_all(STDOUT_FILENO, out.p, out.len) < 0) {
                fprintf(stderr, "buildtel summarize: cannot write: %s\n", strerror(errno));
                goto out;
        }
        ret = 0;
out:
        units_free(units);
        dbuf_release(&out);
        run_info_release(&ri);
        store_close(st);
        return ret;
}

int cmd_summarize(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"near-oom-mb", required_argument, NULL, OPT_NEAR_OOM_MB},
            {"low-disk-gb", required_argument, NULL, OPT_LOW_DISK_GB},
            {"json", no_argument, NULL, OPT_JSON},
            {"db", required_argument, NULL, OPT_DB},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        struct common_opts o;
        struct summary sum;
        struct run_info ri = {0};
        struct dbuf out = DBUF_INIT;
        bool json = false;
        const char *path;
        void *map = NULL;
        struct stat st;
        int64_t rows;
        int c, fd = -1, ret = EXIT_BT_USAGE;

        common_opts_init(&o);
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                int h = common_opts_parse(&o, c, optarg, "summarize");
                if (h < 0)
                        goto out;
                if (h > 0)
                        continue;
                if (c == OPT_JSON) {
                        json = true;
                } else if (c == 'h') {
                        o.help = true;
                } else {
                        fputs("usage: buildtel summarize [--json] [--near-oom-mb N] [--low-disk-gb "
                              "N] [--db PATH] FILE.csv|RUN\n",
                              stderr);
                        goto out;
                }
        }
        if (o.help) {
                cmd_print_usage("summarize");
                ret = 0;
                goto out;
        }
        if (optind != argc - 1) {
                fputs("usage: buildtel summarize [--json] [--near-oom-mb N] [--low-disk-gb N] "
                      "[--db PATH] FILE.csv|RUN\n",
                      stderr);
                goto out;
        }
        path = argv[optind];

        ret = 1;
        if (stat(path, &st) < 0 && errno == ENOENT) {
                ret = summarize_db(&o, path, json);
                goto out;
        }
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

        summary_init(&sum, &o.rec.summary);
        rows = csvread_summary(map ? map : "", map ? (size_t)st.st_size : 0, &sum);
        if (rows < 0) {
                fprintf(stderr, "buildtel summarize: '%s' is not a buildtel CSV (%s)\n", path,
                        rows == -EINVAL ? "no buildtel header" : strerror((int)-rows));
                goto out;
        }
        if (sum.skipped_rows)
                fprintf(stderr, "buildtel summarize: note: %llu torn or junk rows skipped\n",
                        (unsigned long long)sum.skipped_rows);

        load_run_info(path, &ri);
        if (render_with_units_file(&sum, &ri, path, json, &out) < 0) {
                fprintf(stderr, "buildtel summarize: out of memory\n");
                goto out;
        }
        if (write_all(STDOUT_FILENO, out.p, out.len) < 0) {
                fprintf(stderr, "buildtel summarize: cannot write: %s\n", strerror(errno));
                goto out;
        }
        ret = 0;
out:
        if (map)
                munmap(map, (size_t)st.st_size);
        closep(&fd);
        dbuf_release(&out);
        run_info_release(&ri);
        common_opts_release(&o);
        return ret;
}
