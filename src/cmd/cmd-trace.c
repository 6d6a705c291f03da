/* SPDX-License-Identifier: MIT */
/* The Chrome trace of a recorded run: the run's facts, its samples and
 * targets from its files or the history database, its ninja edges from
 * the .ninja_log it named: the samples replayed through the pipeline into
 * the trace sink (sinks/sink-trace.c, formatted by render/trace.h). */
#include "cmd/cmd-trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "runfiles/names.h"
#include "parse/ninjalog.h"
#include "pipeline/replay.h"
#include "pipeline/recorder.h"
#include "sinks/sink.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define NAMES_BLOCK (64u << 10)

/* The edges' output names, copied out of the log as it is read (the
 * chunk they were in is gone): blocks that never move. */
struct trace_names {
        struct trace_names *next;
        size_t used, cap;
        char s[];
};

static const char *names_add(struct trace_edges *x, const char *s, size_t len)
{
        struct trace_names *b = x->names;

        if (!b || b->cap - b->used < len) {
                size_t cap = MAX((size_t)NAMES_BLOCK, len);

                b = malloc(sizeof(*b) + cap);
                if (!b)
                        return NULL;
                *b = (struct trace_names){.next = x->names, .cap = cap};
                x->names = b;
        }
        if (len)
                memcpy(b->s + b->used, s, len);
        b->used += len;
        return b->s + b->used - len;
}

static void edges_release(struct trace_edges *x)
{
        free(x->v);
        while (x->names) {
                struct trace_names *b = x->names;

                x->names = b->next;
                free(b);
        }
}

/* The edges of one ninja run, placed at offset_s on the run's clock; those
 * ending after until_s are another build's. */
struct edge_win {
        struct trace_edges *x;
        double offset_s, until_s;
        uint32_t outside;
        int e;
};

static void edge_add(void *ud, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edge_win *w = ud;
        const char *name;

        if (w->e < 0 || w->offset_s + (double)end_ms / 1000.0 > w->until_s) {
                w->outside += w->e >= 0;
                return;
        }
        name = names_add(w->x, out, len);
        if (!name || array_grow(&w->x->v, &w->x->cap, w->x->n, sizeof(*w->x->v), 256) < 0) {
                w->e = -ENOMEM;
                return;
        }
        w->x->v[w->x->n++] = (struct trace_edge){w->offset_s + (double)start_ms / 1000.0,
                                                 w->offset_s + (double)end_ms / 1000.0, name, len};
}

/* A note for a log none of whose records are the run's (ninjalog_window()). */
static void note_none(const struct trace_job *j, enum ninjalog_why why)
{
        if (why == NINJALOG_UNCHANGED)
                return; /* nothing ran */
        fprintf(stderr,
                "buildtel %s: note: --ninja-log '%s'%s: its edges are another build's, left out\n",
                j->cmd, j->ninja_log,
                why == NINJALOG_BEFORE  ? " was last written before the run"
                : why == NINJALOG_AFTER ? " was last written after the run"
                                        : ": no ninja run of it started during the run");
}

/* The edges of the log --ninja-log names that are the run's
 * (ninjalog_window(), snap NULL for a recorded run), each ninja run placed
 * on the run's clock by ninjalog_run_offset(). Read twice in chunks (its
 * runs, then the chosen ones' edges), never whole. */
static int add_ninja(const struct trace_job *j, const struct ninjalog_file *snap,
                     struct trace_edges *x, const struct run_info *ri)
{
        struct ninjalog_run runs[NINJALOG_RUNS_MAX];
        _cleanup_close_ int fd = -1;
        struct edge_win w = {.x = x};
        struct ninjalog_file now;
        struct ninjalog_pick p;
        struct stat st;
        int n, e;

        if (!j->ninja_log)
                return 0;
        fd = open_regular_file(j->ninja_log, &st);
        if (fd >= 0)
                ninjalog_file_of(&st, &now);
        n = fd < 0 ? fd
                   : ninjalog_window_read(fd, snap, &now, ri->start_epoch, ri->end_epoch, runs, &p);
        if (n < 0 && n != -ENOMEM) {
                fprintf(stderr, "buildtel %s: note: --ninja-log '%s': %s\n", j->cmd, j->ninja_log,
                        n == -EINVAL   ? "not a .ninja_log of version 5 to 7"
                        : n == -ESPIPE ? "not a regular file"
                                       : strerror(-n));
                return 0;
        }
        if (n < 0)
                return n; /* -ENOMEM */
        if (p.why >= NINJALOG_UNCHANGED) {
                note_none(j, p.why);
                return 0;
        }
        w.until_s = p.until_s;
        for (size_t i = p.first; i < p.first + p.n; i++) {
                w.offset_s = ninjalog_run_offset(runs, (size_t)n, i, now.mtime, ri->start_epoch,
                                                 ri->end_epoch);
                e = isnan(w.offset_s) ? 0 /* undated, not the last: no place */
                                      : ninjalog_read_range(fd, runs[i].begin, runs[i].end, NULL, 0,
                                                            edge_add, &w);
                if (e == -ENOMEM || w.e < 0)
                        return -ENOMEM;
        }
        if (w.outside && !j->quiet)
                fprintf(
                    stderr,
                    "buildtel %s: note: --ninja-log '%s': %u edges ending after the run left out\n",
                    j->cmd, j->ninja_log, w.outside);
        return 0;
}

/* The ninja edges of --ninja-log read (or, without any of the run's, the
 * history's: the sink's stored_edges), the samples through the pipeline
 * into sink_trace with the recorded model. */
int trace_write(const struct trace_job *j, struct replay *rp)
{
        const struct sink_ops *const sinks[] = {&sink_trace, NULL};
        const struct run_info *ri = &replay_run(rp)->ri;
        struct trace_sink_job tj = {.fd = -1,
                                    .cfg = {.thresholds = replay_run(rp)->thresholds},
                                    .stored_edges = true,
                                    .own_errors = true};
        _cleanup_free_ char *path = NULL;
        struct trace_edges x = {0};
        const struct run_model *m;
        int64_t n = 0;
        int e;

        if (j->out_path && strcmp(j->out_path, "-") == 0)
                tj.fd = STDOUT_FILENO;
        else
                path = j->out_path ? strdup(j->out_path)
                                   : runfiles_path(j->out_dir ? j->out_dir : ".", ri->run_id,
                                                   RUNFILE_TRACE);
        tj.path = path;
        tj.path_ours = !j->out_path;
        e = tj.fd >= 0 || path ? 0 : -ENOMEM;
        if (e >= 0)
                e = add_ninja(j, NULL, &x, ri);
        tj.edges = x.v;
        tj.nedges = x.n;
        if (e < 0)
                fprintf(stderr, "buildtel %s: out of memory\n", j->cmd);
        else
                n = common_replay_through(j->cmd, rp, sinks, &tj, &m);
        edges_release(&x);
        if (e < 0 || n < 0)
                return 1;
        if (tj.result < 0) {
                fprintf(stderr, "buildtel %s: cannot write the trace '%s': %s\n", j->cmd,
                        path ? path : "-",
                        (tj.path_ours ? runfile_strerror : outfile_strerror)(tj.result));
                return 1;
        }
        if (!replay_run(rp)->csv && m->facts->n > 0 && !isfinite(m->facts->t[0].start_s))
                fprintf(stderr,
                        "buildtel %s: note: the run was stored by an older buildtel, which kept "
                        "no times of targets: the trace has none; its files have them\n",
                        j->cmd);
        if (path && !j->quiet)
                fprintf(stderr, "buildtel %s: trace of run %s (%lld samples) in %s\n", j->cmd,
                        ri->run_id, (long long)n, path);
        return 0;
}

void trace_run_init(struct trace_run *tr, struct recorder_config *cfg)
{
        static const struct sink_ops *const sinks[] = {&sink_trace, NULL};

        *tr = (struct trace_run){.job = {.fd = -1,
                                         .cfg = {.thresholds = cfg->summary},
                                         .round = true,
                                         .own_errors = true},
                                 .ninja_log = cfg->metrics.ninja_log,
                                 .quiet = cfg->quiet};
        cfg->sinks = sinks;
        cfg->sink_userdata = &tr->job;
}

void trace_run_edges(struct trace_run *tr, const struct recorder *r, const struct run_info *ri,
                     bool cancel)
{
        const struct trace_job j = {.ninja_log = tr->ninja_log, .cmd = "run"};

        tr->job.cancel = cancel;
        if (!cancel && add_ninja(&j, recorder_ninja_snapshot(r), &tr->edges, ri) < 0)
                tr->edges.n = 0; /* out of memory: the trace without its edges */
        tr->job.edges = tr->edges.v;
        tr->job.nedges = tr->edges.n;
}

int trace_run_report(const struct trace_run *tr, const struct recorder *r, const char *run_id)
{
        const char *dir = recorder_log_dir(r);
        _cleanup_free_ char *path = dir ? runfiles_path(dir, run_id, RUNFILE_TRACE) : NULL;

        if (!dir || tr->job.cancel)
                return 0;
        if (tr->job.result < 0) {
                fprintf(stderr, "buildtel run: cannot write the trace '%s': %s\n",
                        path ? path : "-", runfile_strerror(tr->job.result));
                return 1;
        }
        if (path && !tr->quiet)
                fprintf(stderr, "buildtel run: trace of run %s (%lld samples) in %s\n", run_id,
                        (long long)tr->job.samples, path);
        return 0;
}

void trace_run_release(struct trace_run *tr)
{
        edges_release(&tr->edges);
}
