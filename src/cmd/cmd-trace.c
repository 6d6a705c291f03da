/* SPDX-License-Identifier: MIT */
/* The Chrome trace of a recorded run: the run's facts, its samples and
 * targets from its files or the history database, its ninja edges from
 * the .ninja_log it named: the samples replayed through the pipeline into
 * the trace sink (sinks/sink-trace.c, formatted by render/trace.h). */
#include "cmd/cmd-trace.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "runfiles/names.h"
#include "model/figures.h"
#include "render/trace.h"
#include "parse/ninjalog.h"
#include "pipeline/replay.h"
#include "pipeline/recorder.h"
#include "pipeline/source.h"
#include "sinks/sink.h"
#include "store/history-run.h"
#include "store/history.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define NINJA_CHUNK (1u << 20) /* the --ninja-log is read this much at a time */
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

static int edges_push(struct trace_edges *x, double start_s, double end_s, const char *out,
                      size_t len)
{
        if (x->n == x->cap) {
                size_t cap = x->cap ? 2 * x->cap : 256;
                struct trace_edge *v = reallocarray(x->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                x->v = v;
                x->cap = cap;
        }
        x->v[x->n++] = (struct trace_edge){start_s, end_s, out, len};
        return 0;
}

struct edge_acc {
        struct trace_edges *x;
        int64_t max_end_ms;
        double offset_s;
        int e;
};

static void edge_add(void *ud, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edge_acc *a = ud;
        const char *name;

        if (a->e < 0)
                return;
        name = names_add(a->x, out, len);
        a->e = name ? edges_push(a->x, a->offset_s + (double)start_ms / 1000.0,
                                 a->offset_s + (double)end_ms / 1000.0, name, len)
                    : -ENOMEM;
}

/* Where ninja started on the run's clock (figure_ninja_offset()); NAN,
 * with a note, when the log is another build's. */
static double ninja_offset(const struct trace_job *j, const char *what, double mtime,
                           int64_t max_end_ms, const struct run_info *ri)
{
        double off;
        bool before = false;

        if (figure_ninja_offset(ri, mtime, max_end_ms, &off, &before) < 0) {
                fprintf(stderr,
                        "buildtel %s: note: %s was last written %s the run: its edges are "
                        "another build's, left out\n",
                        j->cmd, what, before ? "before" : "after");
                return NAN;
        }
        return off;
}

/* The edges of one ninja run, placed at offset_s on the run's clock; those
 * ending after until_s (the run's end, with slack) are another build's. */
struct edge_win {
        struct edge_acc a;
        double until_s;
        uint32_t outside;
};

static void edge_add_in(void *ud, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edge_win *w = ud;

        if (w->a.offset_s + (double)end_ms / 1000.0 > w->until_s) {
                w->outside++;
                return;
        }
        edge_add(&w->a, start_ms, end_ms, out, len);
}

#define NINJA_RUNS_MAX 64

/* The ninja run of the log whose start (from its records' mtimes) is inside
 * the run's time window, newest first; -1 when none is, or when no record
 * says (*ret_dated false). */
static int ninja_run_in(const struct ninjalog_run *runs, int n, const struct run_info *ri,
                        bool *ret_dated)
{
        /* A ninja run that started after the run ended is another build's,
         * however soon after (a later build within FIGURE_NINJA_SLACK_S of
         * the end was taken for ours); 1 s for mtimes in whole seconds. */
        double until = isfinite(ri->end_epoch) ? ri->end_epoch + 1.0 : INFINITY;

        *ret_dated = false;
        for (int i = n - 1; i >= 0; i--) {
                if (!isfinite(runs[i].start_epoch))
                        continue;
                *ret_dated = true;
                /* an mtime in whole seconds reads up to 1 s early */
                if (runs[i].start_epoch >= ri->start_epoch - 2 && runs[i].start_epoch <= until)
                        return i;
        }
        return -1;
}

/* Where the chosen ninja run starts on the run's clock: the file's mtime
 * rule for the last run of a log last written during the run (as the
 * history places its edges), else its records' mtimes. NAN (with a note)
 * when no run of the log is the run's. */
static double ninja_run_offset(const struct trace_job *j, const char *what, double mtime,
                               const struct ninjalog_run *runs, int n, const struct run_info *ri,
                               int *ret_at)
{
        bool dated;
        int at = ninja_run_in(runs, n, ri, &dated);

        *ret_at = at;
        if (at == n - 1 && mtime >= ri->start_epoch - 1 &&
            (!isfinite(ri->end_epoch) || mtime <= ri->end_epoch + FIGURE_NINJA_SLACK_S))
                return ninja_offset(j, what, mtime, runs[at].max_end_ms, ri);
        if (at >= 0)
                return MAX(runs[at].start_epoch - ri->start_epoch, 0.0);
        if (!dated) {
                *ret_at = n - 1;
                return ninja_offset(j, what, mtime, runs[n - 1].max_end_ms, ri);
        }
        fprintf(stderr,
                "buildtel %s: note: %s: no ninja run of it started during the run: its edges "
                "are another build's, left out\n",
                j->cmd, what);
        return NAN;
}

static int ninja_feed(void *userdata, const char *buf, size_t len)
{
        return ninjalog_stream_feed(userdata, buf, len);
}

/* [from, to) of the log at fd through a stream (runs into runs, or edges
 * to fn), NINJA_CHUNK at a time: memory flat however big the log. Returns
 * the stream's finish (the edges given to fn, or the runs), or -errno. */
static int ninja_pass(int fd, uint64_t from, uint64_t to, struct ninjalog_run *runs,
                      ninjalog_edge_fn fn, void *userdata)
{
        struct ninjalog_stream *s =
            ninjalog_stream_new(from, runs, runs ? NINJA_RUNS_MAX : 0, fn, userdata);
        int e;

        if (!s)
                return -ENOMEM;
        e = pread_chunks(fd, from, to, NINJA_CHUNK, ninja_feed, s);
        if (e >= 0)
                e = ninjalog_stream_finish(s);
        if (e >= 0 && runs)
                e = (int)ninjalog_stream_nruns(s);
        ninjalog_stream_free(s);
        return e;
}

/* The log --ninja-log names: the ninja run inside the run's time window,
 * only its edges that end inside it (a log appended or rewritten by a later
 * build holds that build's too). Without dated records, its last run
 * placed by the file's mtime. Read twice in chunks (its runs, then the
 * chosen one's edges), never whole. *ret_added: whether edges were taken. */
static int add_ninja(const struct trace_job *j, struct trace_edges *x, const struct run_info *ri,
                     bool *ret_added)
{
        _cleanup_free_ char *what = NULL;
        _cleanup_free_ struct ninjalog_run *runs = NULL;
        _cleanup_close_ int fd = -1;
        struct edge_win w = {.a = {.x = x}};
        struct stat st;
        int n, at;

        *ret_added = false;
        if (!j->ninja_log)
                return 0;
        fd = open_regular_file(j->ninja_log, &st);
        if (fd < 0) {
                fprintf(stderr, "buildtel %s: note: --ninja-log '%s': %s\n", j->cmd, j->ninja_log,
                        fd == -ESPIPE ? "not a regular file" : strerror(-fd));
                return 0;
        }
        runs = calloc(NINJA_RUNS_MAX, sizeof(*runs));
        if (!runs || asprintf(&what, "--ninja-log '%s'", j->ninja_log) < 0)
                return -ENOMEM;
        n = ninja_pass(fd, 0, (uint64_t)st.st_size, runs, NULL, NULL);
        if (n == -ENOMEM)
                return n;
        if (n <= 0) {
                if (n == -EINVAL || n == 0)
                        fprintf(stderr, "buildtel %s: note: %s: not a .ninja_log of version 5 to 7\n",
                                j->cmd, what);
                else
                        fprintf(stderr, "buildtel %s: note: %s: %s\n", j->cmd, what, strerror(-n));
                return 0;
        }
        w.a.offset_s =
            ninja_run_offset(j, what, (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9,
                             runs, n, ri, &at);
        if (isnan(w.a.offset_s))
                return 0;
        w.until_s = isfinite(ri->end_epoch) ? ri->end_epoch - ri->start_epoch + FIGURE_NINJA_SLACK_S
                                            : INFINITY;
        n = ninja_pass(fd, runs[at].begin, runs[at].end, NULL, edge_add_in, &w);
        if (n == -ENOMEM || w.a.e < 0)
                return -ENOMEM;
        if (w.outside && !j->quiet)
                fprintf(stderr, "buildtel %s: note: %s: %u edges ending after the run left out\n",
                        j->cmd, what, w.outside);
        *ret_added = x->n > 0;
        return 0;
}

/* The trace of a replay: the ninja edges of --ninja-log read (or,
 * without any of the run's, the history's: the sink's stored_edges), the
 * samples through the pipeline into sink_trace with the recorded model.
 * Returns 0 or 1 after printing. */
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
        bool from_log = false;
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
                e = add_ninja(j, &x, ri, &from_log);
        tj.edges = x.v;
        tj.nedges = x.n;
        if (e < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", j->cmd);
                edges_release(&x);
                return 1;
        }
        n = common_replay_through(j->cmd, rp, sinks, &tj, &m);
        edges_release(&x);
        if (n < 0)
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

void trace_run_edges(struct trace_run *tr, const struct run_info *ri, bool cancel)
{
        const struct trace_job j = {.ninja_log = tr->ninja_log, .cmd = "run"};
        bool from_log;

        tr->job.cancel = cancel;
        if (!cancel && add_ninja(&j, &tr->edges, ri, &from_log) < 0)
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
