/* SPDX-License-Identifier: MIT */
/* The Chrome trace of a recorded run: the run's facts, its samples and
 * targets from its files or the history database, its ninja edges from
 * the .ninja_log it named, through the streaming writer (out/trace.h). */
#include "cmd/cmd-trace.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-runfiles.h"
#include "parse/runfiles.h"
#include "render/trace.h"
#include "parse/csvread.h"
#include "parse/ninjalog.h"
#include "pipeline/recorder.h"
#include "store/history-run.h"
#include "store/history.h"
#include "util/macro.h"
#include "util/util.h"

#define TRACE_MAX_CSV (1ull << 31)
#define TRACE_MAX_NINJA_LOG (1ull << 30)
#define TRACE_NINJA_SLACK_S 5.0 /* the log's last write after the run's end */

/* Where the samples come from. */
typedef int64_t (*sample_walk_fn)(void *src, int (*fn)(void *, const struct sample *), void *ud);

struct edge_acc {
        struct trace *t;
        int64_t max_end_ms;
        double offset_s;
        int e;
};

static void edge_max(void *ud, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edge_acc *a = ud;

        a->max_end_ms = MAX(a->max_end_ms, end_ms);
}

static void edge_add(void *ud, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edge_acc *a = ud;

        if (a->e >= 0)
                a->e = trace_add_edge(a->t, a->offset_s + (double)start_ms / 1000.0,
                                      a->offset_s + (double)end_ms / 1000.0, out, len);
}

/* Where ninja started on the run's clock: its times count from its start,
 * which no record gives; ninja appends a line as each edge ends, so the
 * log's mtime is the end of its last edge, and ninja started max_end before
 * it. NAN (with a note) when the log was written before the run started or
 * well after it ended: its last ninja run is another build's. */
static double ninja_offset(const struct trace_job *j, const char *what, double mtime,
                           int64_t max_end_ms, const struct run_info *ri)
{
        double off;

        if (mtime < ri->start_epoch - 1 ||
            (isfinite(ri->end_epoch) && mtime > ri->end_epoch + TRACE_NINJA_SLACK_S)) {
                fprintf(stderr,
                        "buildtel %s: note: %s was last written %s the run: its edges are "
                        "another build's, left out\n",
                        j->cmd, what, mtime < ri->start_epoch ? "before" : "after");
                return NAN;
        }
        off = mtime - ri->start_epoch - (double)max_end_ms / 1000.0;
        return isfinite(off) && off >= 0 ? off : 0;
}

/* The last ninja run of the log --ninja-log names. */
static int add_ninja(const struct trace_job *j, struct trace *t, const struct run_info *ri)
{
        _cleanup_free_ char *buf = NULL, *what = NULL;
        struct edge_acc a = {.t = t};
        struct stat st;
        size_t len;
        int e;

        if (!j->ninja_log)
                return 0;
        e = read_file_at(AT_FDCWD, j->ninja_log, TRACE_MAX_NINJA_LOG, &buf, &len);
        if (e >= 0 && stat(j->ninja_log, &st) < 0)
                e = -errno;
        if (e < 0) {
                fprintf(stderr, "buildtel %s: note: --ninja-log '%s': %s\n", j->cmd, j->ninja_log,
                        strerror(-e));
                return 0;
        }
        if (ninjalog_each(buf, len, true, edge_max, &a) < 0) {
                fprintf(stderr,
                        "buildtel %s: note: --ninja-log '%s': not a .ninja_log of version "
                        "5 to 7\n",
                        j->cmd, j->ninja_log);
                return 0;
        }
        if (asprintf(&what, "--ninja-log '%s'", j->ninja_log) < 0)
                return -ENOMEM;
        a.offset_s =
            ninja_offset(j, what, (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9,
                         a.max_end_ms, ri);
        if (isnan(a.offset_s))
                return 0;
        (void)ninjalog_each(buf, len, true, edge_add, &a);
        return a.e;
}

/* The edges the history kept (the slowest TARGETS_EDGES_MAX of the run's
 * .ninja_log), when no --ninja-log is given. */
static int add_stored_edges(const struct trace_job *j, struct trace *t, const struct run_info *ri,
                            const struct targets *ts)
{
        double off;
        int e = 0;

        if (j->ninja_log || !ts || !ts->nedgev || !(ts->ninja_mtime > 0))
                return 0;
        off = ninja_offset(j, "the run's .ninja_log", ts->ninja_mtime, ts->ninja_max_end_ms, ri);
        for (uint32_t i = 0; !isnan(off) && e >= 0 && i < ts->nedgev; i++)
                e = trace_add_edge(t, off + (double)ts->edgev[i].start_ms / 1000.0,
                                   off + (double)ts->edgev[i].end_ms / 1000.0, ts->edgev[i].output,
                                   strlen(ts->edgev[i].output));
        return e;
}

/* The output: a temp file renamed over the path at the end, or stdout. */
struct out {
        FILE *f;
        char *path, *tmp;
};

static int out_open(const struct trace_job *j, const char *run_id, struct out *o)
{
        int fd;
        size_t n;

        if (j->out_path && strcmp(j->out_path, "-") == 0) {
                o->f = stdout;
                return 0;
        }
        o->path = j->out_path ? strdup(j->out_path)
                              : runfiles_path(j->out_dir ? j->out_dir : ".", run_id, RUNFILE_TRACE);
        if (!o->path)
                return -ENOMEM;
        n = strlen(o->path) + 16;
        o->tmp = malloc(n);
        if (!o->tmp)
                return -ENOMEM;
        snprintf(o->tmp, n, "%s.tmp-XXXXXX", o->path);
        fd = mkstemp(o->tmp);
        if (fd < 0) {
                free(o->tmp);
                o->tmp = NULL;
                return -errno;
        }
        (void)fchmod(fd, 0644);
        o->f = fdopen(fd, "w");
        if (!o->f) {
                close(fd);
                return -errno;
        }
        return 0;
}

/* Close; keep the file when ok (rename it over the path), else remove it. */
static int out_close(struct out *o, bool ok)
{
        int e = 0;

        if (o->f && o->f != stdout && fclose(o->f) != 0 && ok)
                e = -EIO;
        if (o->tmp && ok && e == 0 && rename(o->tmp, o->path) < 0)
                e = -errno;
        if (o->tmp && (!ok || e < 0))
                (void)unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        o->f = NULL;
        return e;
}

static int to_trace(void *ud, const struct sample *s)
{
        return trace_sample(ud, s);
}

/* The trace of one run, whatever its source. Returns 0 or 1 after
 * printing. */
static int write_trace(const struct trace_job *j, const struct run_info *ri,
                       const struct summary_config *thresholds, const struct run_facts *f,
                       const struct targets *steps, const struct units *u, sample_walk_fn walk,
                       void *src)
{
        size_t nu = 0;
        const struct unit *units = units_rows(u, &nu);
        struct trace_config cfg = {.thresholds = *thresholds};
        struct out o = {0};
        struct trace *t = NULL;
        int64_t n = 0;
        int e;

        e = out_open(j, ri->run_id, &o);
        if (e >= 0)
                e = trace_new(o.f, &cfg, ri, &t);
        if (e >= 0)
                n = walk(src, to_trace, t);
        e = n < 0 ? (int)n : e;
        for (size_t i = 0; f && e >= 0 && i < f->n; i++)
                e = trace_add_target(t, &f->t[i]);
        if (e >= 0)
                trace_set_steps_dropped(t, steps->steps_dropped);
        for (uint32_t i = 0; e >= 0 && i < steps->nstepv; i++) {
                const struct step_fact *sf = &steps->stepv[i];
                e = trace_add_step(t, sf,
                                   sf->target >= 0 && (size_t)sf->target < steps->n
                                       ? steps->t[sf->target].name
                                       : NULL);
        }
        for (size_t i = 0; e >= 0 && i < nu; i++)
                e = trace_add_unit(t, &units[i]);
        if (e >= 0)
                e = add_ninja(j, t, ri);
        if (e >= 0)
                e = add_stored_edges(j, t, ri, steps);
        if (e >= 0)
                e = trace_finish(t);
        trace_free(t);
        e = out_close(&o, e >= 0) < 0 && e >= 0 ? -EIO : e;
        if (e < 0) {
                fprintf(stderr, "buildtel %s: cannot write the trace '%s': %s\n", j->cmd,
                        o.path ? o.path : "-", strerror(-e));
                free(o.path);
                return 1;
        }
        if (o.path && !j->quiet)
                fprintf(stderr, "buildtel %s: trace of run %s (%lld samples) in %s\n", j->cmd,
                        ri->run_id, (long long)n, o.path);
        free(o.path);
        return 0;
}

/* ---- files ---- */

struct csv_src {
        const char *buf;
        size_t len;
        uint64_t skipped;
};

static int64_t walk_csv(void *src, int (*fn)(void *, const struct sample *), void *ud)
{
        struct csv_src *c = src;

        return csvread_each(c->buf, c->len, fn, ud, &c->skipped);
}

int trace_write_files(const struct trace_job *j, const char *csv)
{
        _cleanup_free_ char *buf = NULL, *json = NULL, *runjson = NULL, *upath = NULL, *uc = NULL;
        struct units *u = NULL;
        _cleanup_free_ struct run_facts *f = calloc(1, sizeof(*f));
        _cleanup_free_ struct targets *steps = NULL;
        struct csv_src src = {0};
        struct run_info ri = {0};
        size_t jlen, tlen;
        int e;

        if (!f || !(runjson = runfiles_beside(csv, RUNFILE_RUN)) ||
            !(upath = runfiles_beside(csv, RUNFILE_UNITS)) || units_new(&u) < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", j->cmd);
                return 1;
        }
        e = read_file_at(AT_FDCWD, csv, TRACE_MAX_CSV, &buf, &src.len);
        if (e < 0) {
                fprintf(stderr, "buildtel %s: cannot read '%s': %s\n", j->cmd, csv, strerror(-e));
                units_free(u);
                return 1;
        }
        src.buf = buf;
        if (read_file_at(AT_FDCWD, runjson, 1 << 20, &json, &jlen) < 0 ||
            run_info_parse_json(json, jlen, &ri) < 0 || !ri.run_id) {
                fprintf(stderr, "buildtel %s: '%s' is missing or not a run record\n", j->cmd,
                        runjson);
                run_info_release(&ri);
                units_free(u);
                return 1;
        }
        load_targets_file(csv, f, &steps);
        if (!steps && (steps = malloc(sizeof(*steps))))
                targets_init(steps);
        if (!steps) {
                fprintf(stderr, "buildtel %s: out of memory\n", j->cmd);
                run_info_release(&ri);
                units_free(u);
                return 1;
        }
        /* the compile units: absent (an older run) or unreadable is none */
        if (read_file_at(AT_FDCWD, upath, 64 << 20, &uc, &tlen) >= 0)
                (void)units_csv_parse(uc, tlen, u, NULL);
        e = write_trace(j, &ri, &j->thresholds, f, steps, u, walk_csv, &src);
        targets_release(steps);
        run_info_release(&ri);
        units_free(u);
        return e;
}

/* ---- the history database ---- */

struct db_src {
        struct store *st;
        int64_t id;
};

static int64_t walk_db(void *src, int (*fn)(void *, const struct sample *), void *ud)
{
        struct db_src *d = src;

        return store_samples_each(d->st, d->id, fn, ud);
}

int trace_write_db(const struct trace_job *j, struct store *st, int64_t id)
{
        _cleanup_free_ struct run_facts *f = calloc(1, sizeof(*f));
        _cleanup_free_ struct targets *steps = calloc(1, sizeof(*steps));
        struct summary_config thresholds = j->thresholds;
        struct db_src src = {st, id};
        struct run_info ri = {0};
        struct units *u = NULL;
        int e;

        if (!f || !steps || units_new(&u) < 0) {
                units_free(u);
                fprintf(stderr, "buildtel %s: out of memory\n", j->cmd);
                return 1;
        }
        struct store_run run;

        e = store_run_get(st, id, &run);
        if (e >= 0) {
                ri = run.info;
                run.info = (struct run_info){0};
                e = store_run_thresholds(&run, &thresholds);
                store_run_release(&run);
        }
        if (e >= 0)
                e = store_targets_get(st, id, f);
        if (e >= 0)
                e = store_units_read(st, id, u);
        if (e >= 0)
                e = store_steps_get(st, id, steps);
        if (e >= 0)
                e = store_edges_get(st, id, steps);
        if (e < 0) {
                fprintf(stderr, "buildtel %s: history database: %s\n", j->cmd, store_strerror(e));
                targets_release(steps);
                run_info_release(&ri);
                units_free(u);
                return 1;
        }
        if (f->n > 0 && !isfinite(f->t[0].start_s))
                fprintf(stderr,
                        "buildtel %s: note: the run was stored by an older buildtel, which kept "
                        "no times of targets: the trace has none; its files have them\n",
                        j->cmd);
        e = write_trace(j, &ri, &thresholds, f, steps, u, walk_db, &src);
        targets_release(steps);
        run_info_release(&ri);
        units_free(u);
        return e;
}

int trace_write_run(const struct recorder *r, const struct recorder_config *cfg, const char *run_id)
{
        const char *dir = recorder_log_dir(r);
        struct trace_job j = {.out_dir = dir,
                              .ninja_log = cfg->metrics.ninja_log,
                              .thresholds = cfg->summary,
                              .cmd = "run",
                              .quiet = cfg->quiet};
        _cleanup_free_ char *csv = NULL;

        if (!dir)
                return 0;
        csv = runfiles_path(dir, run_id, RUNFILE_CSV);
        if (!csv) {
                fprintf(stderr, "buildtel run: out of memory\n");
                return 1;
        }
        return trace_write_files(&j, csv);
}
