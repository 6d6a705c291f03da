/* SPDX-License-Identifier: MIT */
/* buildtel report [RUN|FILE.csv]: the HTML report (or the Markdown job
 * summary) of a recorded run, drawn from the same model the live run's
 * sinks get: the samples replayed through the summary code (as
 * `summarize` does), the targets' facts and the compile units. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-summarize.h"
#include "cmd/cmd.h"
#include "render/report.h"
#include "parse/csvread.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
#include "util/util.h"

enum { OPT_R_OUTPUT = OPT_COMMON_END, OPT_R_FORMAT };

static const char usage[] = "usage: buildtel report [-o FILE|-] [--format html|markdown] "
                            "[--near-oom-mb N] [--low-disk-gb N] [--db PATH] [RUN|FILE.csv]\n";

#define REPORT_MAX_CSV (4ULL << 30)

struct loaded {
        struct run_info ri;
        struct summary sum;
        struct report_data d;
        struct run_facts *facts;
        struct targets *targets; /* steps, slowest ninja edges, cache blocks; NULL: none */
        struct units *units;
        char *default_out; /* report-<id>.html beside the CSV, or in the cwd */
};

static int add_sample(void *userdata, const struct sample *s)
{
        struct loaded *l = userdata;

        summary_add(&l->sum, s);
        return report_data_add(&l->d, s);
}

static void count_fact(struct target_fact *t, json_t *o)
{
        json_t *v;

        targets_copy_field(t->name, sizeof(t->name), json_string_value(json_object_get(o, "name")),
                           json_string_length(json_object_get(o, "name")));
        t->start_s =
            json_is_number(v = json_object_get(o, "first_seen_s")) ? json_number_value(v) : NAN;
        t->end_s =
            json_is_number(v = json_object_get(o, "last_seen_s")) ? json_number_value(v) : NAN;
        t->duration_s =
            json_is_number(v = json_object_get(o, "duration_s")) ? json_number_value(v) : NAN;
        t->steps_set = json_is_integer(json_object_get(o, "steps")) &&
                       json_is_integer(json_object_get(o, "cached"));
        if (t->steps_set) {
                t->steps = (uint32_t)MIN(MAX(json_integer_value(json_object_get(o, "steps")), 0),
                                         (json_int_t)UINT32_MAX);
                t->cached = (uint32_t)MIN(MAX(json_integer_value(json_object_get(o, "cached")), 0),
                                          (json_int_t)t->steps);
        }
        v = json_object_get(o, "success");
        t->success = json_is_true(v)    ? TARGET_BUILT
                     : json_is_false(v) ? TARGET_FAILED
                                        : TARGET_SUCCESS_UNKNOWN;
        for (int k = 0; k < 2; k++) {
                struct cc_counts *c = k ? &t->ccache : &t->sccache;
                json_t *cc = json_object_get(o, k ? "ccache" : "sccache");
                json_t *h = json_object_get(cc, "hits"), *m = json_object_get(cc, "misses");

                c->set = json_is_integer(h) && json_is_integer(m) && json_integer_value(h) >= 0 &&
                         json_integer_value(m) >= 0;
                if (c->set) {
                        c->hits = (uint64_t)json_integer_value(h);
                        c->misses = (uint64_t)json_integer_value(m);
                }
        }
        targets_fact_ratios(t);
}

/* The slowest ninja edges targets.json lists (durations: it keeps no
 * start times, so each starts at 0). */
static void load_slow_edges(json_t *arr, struct targets *ts)
{
        for (size_t i = 0; i < json_array_size(arr) && i < TARGETS_SLOW_EDGES; i++) {
                json_t *e = json_array_get(arr, i), *o = json_object_get(e, "output");
                double sec = json_number_value(json_object_get(e, "seconds"));

                if (json_is_string(o) && sec >= 0 && sec < 1e9)
                        targets_offer_edge(ts, 0, (int64_t)(sec * 1000), json_string_value(o),
                                           json_string_length(o));
        }
        ts->ninja_log_set = ts->nslow > 0;
        ts->ninja_edges = ts->nslow;
}

/* resources-<id>.targets.json beside the CSV, as the facts it holds. */
static void load_targets_file(const char *csv, struct run_facts *f, struct targets **ret_ts)
{
        _cleanup_free_ char *path = beside_path(csv, ".targets.json");
        _cleanup_free_ char *buf = NULL;
        json_t *root, *arr;
        size_t len;

        if (!path || read_file_at(AT_FDCWD, path, 16 << 20, &buf, &len) < 0)
                return;
        root = json_loadb(buf, len, 0, NULL);
        arr = json_object_get(root, "targets");
        for (size_t i = 0; i < json_array_size(arr) && f->n < TARGETS_MAX; i++)
                if (json_is_object(json_array_get(arr, i)))
                        count_fact(&f->t[f->n++], json_array_get(arr, i));
        if (root && (*ret_ts = malloc(sizeof(**ret_ts)))) {
                targets_init(*ret_ts);
                load_slow_edges(json_object_get(root, "slowest_edges"), *ret_ts);
                (void)targets_steps_from_json(root, *ret_ts);
        }
        json_decref(root);
}

static char *out_beside(const char *dir_of, size_t dirlen, const char *id)
{
        size_t n = dirlen + strlen(id) + sizeof("report-.html") + 1;
        char *p = malloc(n);
        int r;

        if (!p)
                return NULL;
        r = snprintf(p, n, "%.*sreport-%s.html", (int)dirlen, dir_of, id);
        if (r < 0 || (size_t)r >= n) {
                free(p);
                return NULL;
        }
        return p;
}

static int load_csv(const char *path, struct loaded *l)
{
        _cleanup_free_ char *buf = NULL;
        const char *slash = strrchr(path, '/');
        size_t len;
        int64_t rows;
        int e;

        e = read_file_at(AT_FDCWD, path, REPORT_MAX_CSV, &buf, &len);
        if (e < 0) {
                fprintf(stderr, "buildtel report: cannot read '%s': %s\n", path, strerror(-e));
                return 1;
        }
        rows = csvread_each(buf, len, add_sample, l, &l->sum.skipped_rows);
        if (rows < 0) {
                fprintf(stderr, "buildtel report: '%s' is not a buildtel CSV (%s)\n", path,
                        rows == -EINVAL ? "no buildtel header" : strerror((int)-rows));
                return 1;
        }
        load_run_info(path, &l->ri);
        l->units = load_units_file(path);
        targets_facts(NULL, &l->ri, l->facts);
        load_targets_file(path, l->facts, &l->targets);
        l->default_out = out_beside(path, slash ? (size_t)(slash - path + 1) : 0,
                                    l->ri.run_id ? l->ri.run_id : "unknown");
        return l->default_out ? 0 : -ENOMEM;
}

/* What the report draws of the model from a stored run: the BuildKit
 * steps, the slowest ninja edges and the log's compiler-cache blocks. A
 * read that fails leaves that part out. */
static void load_db_model(struct store *st, int64_t id, struct loaded *l)
{
        struct targets *ts = malloc(sizeof(*ts));

        if (!ts)
                return;
        targets_init(ts);
        for (size_t i = 0; i < l->facts->n; i++)
                (void)targets_get(ts, l->facts->t[i].name, strlen(l->facts->t[i].name));
        (void)store_steps_get(st, id, ts);
        (void)store_edges_get(st, id, ts);
        (void)store_cc_log_get(st, id, l->ri.start_epoch, ts);
        l->targets = ts;
}

static int load_db(const struct common_opts *o, const char *spec, struct loaded *l)
{
        _cleanup_free_ char *def = NULL;
        const char *db = o->rec.db_path;
        struct store *st = NULL;
        int64_t id, rows;
        int e, ret = 1;

        if (!db)
                db = def = store_default_path();
        e = db ? store_open(db, false, 2000, &st) : -ENOENT;
        if (e < 0) {
                fprintf(stderr,
                        "buildtel report: '%s' is neither a file nor a run (history "
                        "database '%s': %s)\n",
                        spec ? spec : "latest", db ? db : "none", store_strerror(e));
                return 1;
        }
        e = store_run_find(st, spec ? spec : "", &id);
        if (e >= 0) {
                struct store_run run;

                e = store_run_get(st, id, &run);
                if (e >= 0) {
                        l->ri = run.info;
                        run.info = (struct run_info){0};
                        (void)store_run_thresholds(&run, &l->sum.cfg);
                        store_run_release(&run);
                }
        }
        rows = e >= 0 ? store_samples_each(st, id, add_sample, l) : e;
        if (rows < 0) {
                fprintf(stderr, "buildtel report: '%s' in '%s': %s\n", spec ? spec : "latest", db,
                        rows == -ENOENT ? "no such run" : store_strerror((int)rows));
                goto out;
        }
        targets_facts(NULL, &l->ri, l->facts);
        (void)store_targets_get(st, id, l->facts);
        load_db_model(st, id, l);
        if (l->sum.build.mode[0] && units_new(&l->units) >= 0 &&
            store_units_read(st, id, l->units) < 0) {
                units_free(l->units);
                l->units = NULL;
        }
        l->default_out = out_beside("", 0, l->ri.run_id ? l->ri.run_id : "unknown");
        ret = l->default_out ? 0 : -ENOMEM;
out:
        store_close(st);
        return ret;
}

static int write_out(const char *out, const struct dbuf *b)
{
        int e;

        if (strcmp(out, "-") == 0)
                e = write_all(STDOUT_FILENO, b->p, b->len);
        else
                e = write_file_atomic(out, b->p, b->len);
        if (e < 0) {
                fprintf(stderr, "buildtel report: cannot write '%s': %s\n", out, strerror(-e));
                return 1;
        }
        if (strcmp(out, "-") != 0)
                fprintf(stderr, "buildtel: report: %s\n", out);
        return 0;
}

static int render(struct loaded *l, bool markdown, const char *out)
{
        struct run_model m = {.run = &l->ri,
                              .summary = &l->sum,
                              .units = l->units,
                              .facts = l->facts,
                              .targets = l->targets};
        struct dbuf b = DBUF_INIT;
        int e, ret;

        l->sum.units = l->units;
        e = markdown ? report_render_markdown(&m, NULL, &b) : report_render_html(&l->d, &m, &b);
        if (e < 0) {
                fprintf(stderr, "buildtel report: out of memory\n");
                dbuf_release(&b);
                return 1;
        }
        ret = write_out(out ? out : markdown ? "-" : l->default_out, &b);
        dbuf_release(&b);
        return ret;
}

static int parse_args(int argc, char **argv, struct common_opts *o, const char **ret_out,
                      bool *ret_md)
{
        static const struct option longopts[] = {
            {"near-oom-mb", required_argument, NULL, OPT_NEAR_OOM_MB},
            {"low-disk-gb", required_argument, NULL, OPT_LOW_DISK_GB},
            {"db", required_argument, NULL, OPT_DB},
            {"output", required_argument, NULL, OPT_R_OUTPUT},
            {"format", required_argument, NULL, OPT_R_FORMAT},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
                int h = common_opts_parse(o, c, optarg, "report");

                if (h < 0)
                        return -1;
                if (h > 0)
                        continue;
                if (c == 'o' || c == OPT_R_OUTPUT) {
                        *ret_out = optarg;
                } else if (c == OPT_R_FORMAT &&
                           (strcmp(optarg, "html") == 0 || strcmp(optarg, "markdown") == 0)) {
                        *ret_md = strcmp(optarg, "markdown") == 0;
                } else if (c == 'h') {
                        o->help = true;
                } else {
                        fputs(usage, stderr);
                        return -1;
                }
        }
        if (!o->help && optind < argc - 1) {
                fputs(usage, stderr);
                return -1;
        }
        return 0;
}

int cmd_report(int argc, char **argv)
{
        struct common_opts o;
        struct loaded l = {.ri = {0}};
        const char *out = NULL, *spec;
        bool md = false;
        struct stat sb;
        int ret = EXIT_BT_USAGE;

        common_opts_init(&o);
        report_data_init(&l.d);
        if (parse_args(argc, argv, &o, &out, &md) < 0)
                goto out;
        if (o.help) {
                cmd_print_usage("report");
                ret = 0;
                goto out;
        }
        spec = optind < argc ? argv[optind] : NULL;
        summary_init(&l.sum, &o.rec.summary);
        l.ri.end_epoch = l.ri.start_epoch = NAN;
        l.ri.exit_code = -1;
        l.facts = calloc(1, sizeof(*l.facts));
        if (!l.facts) {
                ret = 1;
                goto out;
        }
        if (spec && stat(spec, &sb) == 0)
                ret = load_csv(spec, &l);
        else
                ret = load_db(&o, spec, &l);
        if (ret < 0)
                fprintf(stderr, "buildtel report: out of memory\n");
        if (ret == 0)
                ret = render(&l, md, out);
        else
                ret = 1;
out:
        free(l.facts);
        if (l.targets)
                targets_release(l.targets);
        free(l.targets);
        free(l.default_out);
        units_free(l.units);
        report_data_release(&l.d);
        run_info_release(&l.ri);
        common_opts_release(&o);
        return ret;
}
