/* SPDX-License-Identifier: MIT */
/* The end-of-run inputs of the build-metrics parsers (endinputs.h). */
#include "pipeline/endinputs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/bakemeta.h"
#include "model/critpath.h"
#include "parse/bkrecord.h"
#include "parse/ninjagraph.h"
#include "parse/ninjalog.h"
#include "platform/buildx.h"
#include "platform/spawn.h"
#include "util/util.h"

struct endinputs {
        struct buildmetrics *metrics;
        const struct buildmetrics_config *cfg;
        const struct run_info *run;
        const struct ninjalog_file *snap;
        note_fn note;
        void *userdata;
};

#define note(x, ...) note_to((x)->note, (x)->userdata, __VA_ARGS__)

/* docker buildx history, after the build: a call may take this long, all
 * of them this long together. A loaded 2-core runner can be slow to start
 * the CLI, and a call that times out leaves a bake's targets to the live
 * stream's figures; the build is over, and a hung docker costs 30 s once. */
#define HISTORY_TIMEOUT_S 10.0
#define HISTORY_BUDGET_S 30.0

void endinputs_snapshot(const char *ninja_log, struct ninjalog_file *ret)
{
        struct stat st;

        *ret = (struct ninjalog_file){0};
        if (ninja_log && stat(ninja_log, &st) == 0)
                ninjalog_file_of(&st, ret);
}

/* `ninja -t graph` of a large build is tens of MiB; the tool runs once */
#define NINJA_GRAPH_MAX (256u << 20)
#define NINJA_GRAPH_TIMEOUT_S 30.0
#define NINJA_EDGES_MAX 100000 /* this run's edges kept for the critical path (27 MiB) */

struct edges {
        struct buildmetrics *bm;
        struct ninjagraph *g; /* NULL: no graph, no edge kept */
        struct ninja_edge *v;
        size_t n, cap;
};

static void keep_edge(void *userdata, int64_t start_ms, int64_t end_ms, const char *out,
                      size_t out_len)
{
        struct edges *e = userdata;

        buildmetrics_ninja_edge(e->bm, start_ms, end_ms, out, out_len);
        /* past the cap or out of memory: no path, said below */
        if (e->g && e->n < NINJA_EDGES_MAX &&
            array_grow(&e->v, &e->cap, e->n, sizeof(*e->v), 1024) == 0) {
                e->v[e->n] = (struct ninja_edge){start_ms, end_ms, ""};
                copy_utf8(e->v[e->n++].output, sizeof(e->v[0].output), out, out_len);
        }
}

/* `ninja -C DIR -t graph` (the log's directory): ninja resolves its own
 * variables, includes and subninjas. NULL, said, when it cannot be had. */
static struct ninjagraph *ninja_graph(const struct endinputs *in)
{
        _cleanup_free_ char *dir = strdup(in->cfg->ninja_log);
        char a0[] = "ninja", a1[] = "-C", dot[] = ".", a3[] = "-t", a4[] = "graph";
        char *slash = dir ? strrchr(dir, '/') : NULL,
             *argv[] = {a0, a1, slash ? dir : dot, a3, a4, NULL};
        struct spawn_config sc = {
            .argv = argv, .out_max = NINJA_GRAPH_MAX, .timeout_s = NINJA_GRAPH_TIMEOUT_S};
        struct spawn_result res = {0};
        struct ninjagraph *g = NULL;
        int r = dir ? 0 : -ENOMEM, st = 0;

        if (slash)
                *slash = '\0';
        if (r >= 0 && (r = st = spawn_capture(&sc, &res)) == 0)
                r = res.out_truncated ? -EFBIG : ninjagraph_parse(res.out, res.out_len, &g);
        spawn_result_release(&res);
        if (r != 0)
                note(in, "the critical path: `ninja -C %s -t graph`: %s; none", argv[2],
                     st == 127      ? "no ninja"
                     : st > 0       ? "failed"
                     : r == -EINVAL ? "not a graph"
                                    : strerror(-r));
        return g;
}

/* The critical path of this run's edges (e->n of the logged) in e->g. */
static void ninja_path(const struct endinputs *in, const struct edges *e, size_t logged)
{
        struct critpath *p = e->n == logged ? malloc(sizeof(*p)) : NULL;
        int r = p ? critpath_ninja(ninjagraph_inputs, e->g, e->v, e->n,
                                   critpath_jobs(in->run->argv, in->run->ncpu), p)
                  : -ENOMEM;

        if (r >= 0)
                buildmetrics_set_path(in->metrics, p);
        else if (e->n < logged)
                note(in, "the critical path: %zu of %zu edges kept (at most %d); none", e->n,
                     logged, NINJA_EDGES_MAX);
        else
                note(in, "the critical path: %s", strerror(-r));
        if (r < 0)
                free(p);
}

/* This run's records of --ninja-log, by ninjalog_window()'s rule. */
static void import_ninja_log(const struct endinputs *in)
{
        const char *path = in->cfg->ninja_log;
        struct ninjalog_run runs[NINJALOG_RUNS_MAX];
        _cleanup_close_ int fd = -1;
        struct ninjalog_file now;
        struct ninjalog_pick p;
        struct edges ev = {.bm = in->metrics};
        struct stat st;
        int e;

        if (!path)
                return;
        fd = open_regular_file(path, &st);
        /* one found from the command may never have been written */
        if (fd == -ENOENT && in->cfg->ninja_log_found)
                return;
        if (fd >= 0)
                ninjalog_file_of(&st, &now);
        e = fd < 0 ? fd
                   : ninjalog_window_read(fd, in->snap, &now, in->run->start_epoch,
                                          in->run->end_epoch, runs, &p);
        if (e >= 0 && p.from < p.to) {
                ev.g = ninja_graph(in); /* before the edges: none kept without it */
                e = ninjalog_read_range(fd, p.from, p.to, NULL, 0, keep_edge, &ev);
        }
        if (e >= 0) /* unchanged: nothing ran */
                buildmetrics_ninja_done(in->metrics, (uint64_t)e, p.from < p.to ? now.mtime : 0);
        if (e > 0 && ev.g)
                ninja_path(in, &ev, (size_t)e);
        ninjagraph_free(ev.g);
        free(ev.v);
        if (e == -EINVAL)
                note(in, "--ninja-log '%s': not a .ninja_log of version 5 to 7", path);
        else if (e < 0)
                note(in, "--ninja-log '%s': %s", path,
                     e == -ESPIPE ? "not a regular file" : strerror(-e));
}

/* Whether argv runs a container front end (docker, podman, nerdctl): a
 * build whose history is worth a note when it cannot be had (a log
 * replayed with cat is none). */
static bool front_end(char *const *argv)
{
        static const char *const fe[] = {"docker", "podman", "nerdctl", "docker-buildx"};
        const char *p, *slash;

        if (!argv || !argv[0])
                return false;
        slash = strrchr(argv[0], '/');
        p = slash ? slash + 1 : argv[0];
        for (size_t i = 0; i < ARRAY_SIZE(fe); i++)
                if (strcmp(p, fe[i]) == 0)
                        return true;
        return false;
}

/* Whether argv is one image build of a front end ("docker build",
 * "docker buildx build", "docker-buildx build"): not bake or compose,
 * whose targets only their stream or metadata file name. */
static bool single_build(char *const *argv)
{
        bool build = false;

        if (!front_end(argv))
                return false;
        for (size_t i = 1; argv[i]; i++) {
                if (strcmp(argv[i], "bake") == 0 || strcmp(argv[i], "compose") == 0)
                        return false;
                build = build || strcmp(argv[i], "build") == 0;
        }
        return build;
}

static const char *fetch_error(int e)
{
        return e == -EINVAL ? "not the expected output" : e == -EIO ? "failed" : strerror(-e);
}

/* The refs of targets the --metadata-file did not name: this run's records
 * in `docker buildx history ls`. */
static int find_records(const struct endinputs *in, double left)
{
        const struct targets *m = buildmetrics_model(in->metrics);
        _cleanup_free_ char *out = NULL;
        uint32_t amb = 0;
        size_t len = 0;
        int e;

        for (size_t i = 0; i < m->n; i++)
                if (!m->t[i].ref[0])
                        goto lookup;
        return 0;
lookup:
        e = buildx_history_list(MIN(left, HISTORY_TIMEOUT_S), &out, &len);
        if (e >= 0)
                e = buildmetrics_history_list(in->metrics, out, len, in->run->start_epoch,
                                              now_realtime() + 1.0, &amb);
        if (amb)
                note(in,
                     "buildx history: %u target(s) of this run could be several records "
                     "(builds at once): their steps are the live stream's",
                     amb);
        return e;
}

/* The one target's live stream was whole (its steps counted and every
 * one ended, exported or failed): its record's log would replay the same
 * steps, so that call (about 0.3 s) is not made. A bake's targets are
 * replayed: their streams print a shared step under one of them. */
static bool stream_whole(const struct targets *m)
{
        const struct target *t = &m->t[0];

        return m->n == 1 && m->buildkit_seen && t->steps > 0 && (t->done || t->errors);
}

/* docker buildx history for each target's ref (the --metadata-file's, or
 * this run's records from history ls), within one budget: status,
 * duration, revision (inspect; history ls says the first two), steps and
 * cached (the record's log replayed: history logs). After a whole stream
 * (stream_whole()) history ls is the one call. */
static void import_history(const struct endinputs *in)
{
        const struct targets *m = buildmetrics_model(in->metrics);
        double budget_end = now_monotonic() + HISTORY_BUDGET_S;
        size_t replayed = 0;
        int ls = 0;

        if (in->cfg->no_history)
                return;
        /* --progress=tty (a build in a terminal of its own): nothing of
         * its stream is ours; its record in the history says it all */
        if (!m->n && single_build(in->run->argv)) {
                buildmetrics_unseen_build(in->metrics);
                ls = find_records(in, HISTORY_BUDGET_S);
                if (!m->t[0].ref[0]) {
                        buildmetrics_unseen_drop(in->metrics);
                        return;
                }
        } else if (!m->n)
                return;
        else if (m->buildkit_seen)
                ls = find_records(in, HISTORY_BUDGET_S);
        for (size_t i = 0; i < m->n && ls != -ENOENT; i++) {
                _cleanup_free_ char *out = NULL, *logs = NULL;
                double left = budget_end - now_monotonic();
                size_t len = 0;
                int e;

                if (!m->t[i].ref[0] || left <= 0)
                        continue;
                /* history ls said its status and time, the stream its
                 * steps; inspect would add only the context's revision
                 * (the run's own is read from its checkout): not worth a
                 * second call at the end of every build (issue 40) */
                if (stream_whole(m) && m->t[i].history_set)
                        continue;
                e = buildx_history_fetch(m->t[i].ref, MIN(left, HISTORY_TIMEOUT_S), &out, &len);
                if (e == -ENOENT)
                        return; /* no docker here */
                if (e >= 0)
                        e = buildmetrics_history(in->metrics, out, len);
                if (e < 0)
                        note(in, "docker buildx history inspect %s: %s", m->t[i].ref,
                             e == -EINVAL ? "not the expected JSON" : strerror(-e));
                if (stream_whole(m))
                        continue;
                left = budget_end - now_monotonic();
                e = left > 0 ? buildx_history_logs(m->t[i].ref, MIN(left, HISTORY_TIMEOUT_S), &logs,
                                                   &len)
                             : -ETIMEDOUT;
                if (e >= 0)
                        e = buildmetrics_history_logs(in->metrics, m->t[i].ref, logs, len);
                if (e >= 0)
                        replayed++;
                else
                        note(in, "docker buildx history logs %s: %s", m->t[i].ref, fetch_error(e));
        }
        buildmetrics_history_done(in->metrics);
        if (m->n > 1 && replayed < m->n && (front_end(in->run->argv) || replayed))
                note(in,
                     "buildx history: %zu of %zu targets replayed from their records%s: the "
                     "others' steps are the live stream's, which prints a step shared by "
                     "targets under one of them",
                     replayed, m->n, ls < 0 ? " (docker buildx history ls failed)" : "");
}

/* The build's --metadata-file: builder, node and ref per target. */
static void import_metadata(const struct endinputs *in)
{
        const char *f = buildmetrics_metadata_file(in->run->argv);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int e;

        if (!f)
                return;
        e = read_regular_file(f, 0, BAKEMETA_MAX_FILE, &buf, &len);
        if (e >= 0)
                e = buildmetrics_metadata(in->metrics, buf, len);
        if (e < 0)
                note(in, "--metadata-file '%s': %s", f,
                     e == -EINVAL   ? "not a JSON object"
                     : e == -ESPIPE ? "not a regular file"
                                    : strerror(-e));
}

void endinputs_read(struct buildmetrics *bm, const struct buildmetrics_config *cfg,
                    const struct run_info *run, const struct ninjalog_file *snap, note_fn fn,
                    void *userdata)
{
        const struct endinputs in = {bm, cfg, run, snap, fn, userdata};

        buildmetrics_finish(bm);
        import_ninja_log(&in);
        import_metadata(&in);
        import_history(&in);
}

void endinputs_path(struct buildmetrics *bm)
{
        const struct targets *ts = buildmetrics_model(bm);
        struct critpath *p;

        if (ts->path || !ts->nstepv || !(p = malloc(sizeof(*p))))
                return;
        if (critpath_buildkit(ts, p) == 0)
                buildmetrics_set_path(bm, p);
        else
                free(p);
}

/* Pairing a record's exec steps with one target's RUN steps: the k-th of
 * a command with the k-th step of that command (taken: paired already),
 * filling those buildtel did not measure. */
struct fill {
        const struct targets *ts;
        int target;
        bool *taken;
        uint32_t filled;
};

static void fill_step(void *userdata, const struct bkrecord_step *rs)
{
        struct fill *f = userdata;
        char c[BKRUN_CMD_MAX + 1];

        for (uint32_t j = 0; j < f->ts->nstepv; j++) {
                struct step_fact *st = &f->ts->stepv[j];

                if (f->taken[j] || st->cached || (st->target != f->target && st->target >= 0) ||
                    bkrun_vertex_cmd(st->name, strlen(st->name), c, sizeof(c)) <= 0 ||
                    (strcmp(c, rs->cmd) != 0 && strcmp(c, rs->xcmd) != 0))
                        continue;
                f->taken[j] = true;
                if (!st->exec.set && rs->u.set) {
                        st->exec = rs->u;
                        f->filled++;
                }
                return;
        }
}

void endinputs_record(struct buildmetrics *bm, const struct buildmetrics_config *cfg,
                      struct exec_cover *cover, note_fn fn, void *userdata)
{
        const struct targets *ts = buildmetrics_model(bm);
        double end = now_monotonic() + HISTORY_TIMEOUT_S;
        _cleanup_free_ bool *taken = calloc(ts->nstepv + 1, sizeof(*taken));

        /* a local daemon on a host that is not pure cgroup v2 samples nothing */
        if (cover->measured >= cover->runs ||
            (strcmp(cover->driver[0] ? cover->driver : "docker", "docker") == 0 &&
             !buildx_host_v2()))
                return;
        for (size_t i = 0; taken && !cfg->no_history && i < ts->n; i++) {
                struct fill f = {ts, (int)i, taken, 0};
                _cleanup_free_ char *out = NULL;
                size_t len = 0;
                int e;

                if (!ts->t[i].ref[0] || now_monotonic() >= end)
                        continue;
                e = buildx_history_provenance(ts->t[i].ref, end - now_monotonic(), &out, &len);
                if (e == -ENOENT)
                        return;
                if (e >= 0)
                        e = bkrecord_parse(out, len, fill_step, &f);
                if (e == 0)
                        note_to(fn, userdata,
                                "buildx history: BuildKit's record of %s has no usage of its "
                                "steps (BuildKit samples them on cgroup v2 hosts only; under "
                                "dockerd's systemd driver, with --cgroup-parent only)",
                                ts->t[i].ref);
                else if (e < 0)
                        note_to(fn, userdata, "buildx history: BuildKit's record of %s: %s",
                                ts->t[i].ref, fetch_error(e));
                cover->recorded += f.filled;
        }
}
