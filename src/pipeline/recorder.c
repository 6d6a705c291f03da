/* SPDX-License-Identifier: MIT */
#include "pipeline/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/bakemeta.h"
#include "runfiles/names.h"
#include "platform/buildx.h"
#include "sinks/sink.h"
#include "render/steps.h"
#include "render/targets.h"
#include "render/summary.h"
#include "store/history.h"
#include "store/store.h"
#include "model/baseline.h"
#include "model/units.h"
#include "parse/bkrun.h"
#include "platform/bkexec.h"
#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "parse/outparse.h"
#include "parse/ninjalog.h"
#include "pipeline/parseq.h"
#include "platform/procfs.h"
#include "platform/sampler.h"
#include "util/util.h"

struct recorder {
        struct recorder_config cfg;
        struct run_info *run;
        char *log_dir; /* NULL: nothing is written */
        char *db_path; /* NULL: no history database */
        struct sampler *sampler;
        struct logctx *logctx;
        struct outparse *op;    /* the output's lines into metrics and logctx */
        struct summary summary; /* the model's, computed once; sinks read it */
        const struct sink_ops *ops[16];
        void *state[16];
        bool failed[16];              /* its finish failed */
        struct store_recorder self;   /* this process, for the history's running row */
        struct buildmetrics *metrics; /* targets from the build's own output */
        /* --ninja-log when the run started: only this run's records are read */
        bool ninja_existed;
        off_t ninja_size;
        ino_t ninja_ino;
        struct run_facts facts; /* what every sink reports of them, made at finish */
        size_t nsinks;
        int splice; /* the one sink of the raw output that takes it by splice(2), or -1 */
        double start_mono, next_tick;
        struct proctop top; /* the build's largest processes this tick */
        double page_bytes;
        struct procscan *scan;     /* the compile units in flight */
        struct units *units;       /* and over the run */
        struct baseline *baseline; /* the run against its job's usual, made at finish */
        char running[SAMPLE_RUNNING_MAX + 1];
        /* The output's parsers on their own thread (parseq.h); NULL: none
         * yet, or parsed inline (no_parseq: it could not start, or the run
         * is over). */
        struct parseq *parseq;
        bool no_parseq;
        /* The kernel's last OOM victim, for the sample: in the build's
         * cgroup or in an exec of ours, whichever report is the newest (a
         * report is new when its pid is not the one its source gave before) */
        char oom_victim[65];
        long oom_victim_pid, own_victim_pid, exec_victim_pid;
        /* BuildKit's RUN steps: the commands this build's log named (added
         * by the parse worker, read by the ticks and polls: want_lock),
         * the exec cgroups found for them, and the build's figures */
        struct bkexec *bk;
        pthread_mutex_t want_lock;
        struct bkwant *want;
        size_t nwant;
        long *allpids; /* the client's pids and the execs' */
        size_t capall;
        double bk_mem_peak, bk_pids_peak, next_poll;
};

/* A RUN command the build's log printed, and when it first did. */
#define RECORDER_WANT_MAX 1024
#define RECORDER_EXEC_POLL_S 0.1 /* an exec's OOM count and peak, between ticks */
struct bkwant {
        char cmd[BKRUN_CMD_MAX + 1];
        double seen;
        bool matched; /* an exec of it was found */
};
#define RECORDER_HUNT_S 20.0 /* a RUN step printed this recently and not found: look harder */

static void note(struct recorder *r, const char *fmt, ...) _printf_(2, 3);
static void note(struct recorder *r, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        if (!r->cfg.note)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        r->cfg.note(r->cfg.userdata, "%s", buf);
}

char *recorder_default_log_dir(void)
{
        return state_path("logs");
}

/* $TMPDIR/buildtel-UID/logs, in a shared directory: both levels must be ours
 * and writable only by us, or another user could plant the files we write.
 * On failure *ret_path names the directory refused (or NULL). */
static int fallback_log_dir(char **ret_path)
{
        const char *tmp = getenv("TMPDIR");
        char buf[4096];
        size_t top;
        int n, e;

        *ret_path = NULL;
        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        n = snprintf(buf, sizeof(buf), "%s/buildtel-%u/logs", tmp, (unsigned)getuid());
        if (n < 0 || (size_t)n >= sizeof(buf))
                return -ENAMETOOLONG;
        top = (size_t)n - strlen("/logs");
        (void)mkdir_p(tmp, 0700); /* a $TMPDIR that does not exist yet */
        buf[top] = '\0';
        e = mkdir_private(buf);
        buf[top] = '/';
        if (e >= 0)
                e = mkdir_private(buf);
        else
                buf[top] = '\0';
        *ret_path = strdup(buf);
        if (!*ret_path)
                return -ENOMEM;
        return e;
}

static void sink_warn(void *userdata, const char *fmt, ...)
{
        struct recorder *r = userdata;
        char msg[2048];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap); /* a cut note is still a note */
        va_end(ap);
        if (r->cfg.warn)
                r->cfg.warn(r->cfg.userdata, "%s", msg);
        else
                note(r, "%s", msg);
}

static void close_sinks(struct recorder *r)
{
        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->close)
                        r->ops[i]->close(r->state[i]);
        r->nsinks = 0;
        r->splice = -1;
}

/* The one sink of the raw output, when it can take it by splice(2): its
 * index, else -1. */
static int splice_sink(const struct recorder *r)
{
        int found = -1;

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->output) {
                        if (found >= 0 || !r->ops[i]->output_fd)
                                return -1;
                        found = (int)i;
                }
        return found;
}

int recorder_self(struct store_recorder *ret)
{
        _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct procfs_identity me;
        int e;

        *ret = (struct store_recorder){0};
        if (root < 0)
                return -errno;
        e = procfs_self_identity(root, &me);
        if (e < 0)
                return e;
        ret->pid = me.pid;
        ret->starttime = me.starttime;
        _Static_assert(sizeof(ret->boot_id) == sizeof(me.boot_id), "the same boot id");
        memcpy(ret->boot_id, me.boot_id, sizeof(ret->boot_id));
        return 0;
}

/* Open the sinks of list (NULL-terminated) in dir (NULL: a replay, which
 * writes no files); all or nothing. */
static int open_list(struct recorder *r, const struct sink_ops *const *list, const char *dir)
{
        struct sink_ctx ctx = {
            .log_dir = dir,
            .run = r->run,
            .quiet = r->cfg.quiet,
            .csv_safe = r->cfg.csv_safe,
            .prom = &r->cfg.prom,
            .db_path = r->db_path,
            .warn = sink_warn,
            .warn_userdata = r,
            .otlp = r->cfg.otlp,
            .userdata = r->cfg.sink_userdata,
            .no_report = r->cfg.no_report,
            .recorder = &r->self,
        };
        int e;

        e = dir ? mkdir_p(dir, 0700) : 0; /* a replay writes no files */
        if (e < 0)
                return e;
        for (size_t i = 0; list[i] && r->nsinks < ARRAY_SIZE(r->ops); i++) {
                e = list[i]->open(&ctx, &r->state[r->nsinks]);
                if (e < 0) {
                        close_sinks(r);
                        return e;
                }
                r->ops[r->nsinks++] = list[i];
        }
        r->splice = splice_sink(r);
        return 0;
}

/* Open every sink in dir; all or nothing. */
static int open_sinks(struct recorder *r, const char *dir)
{
        int e = mkdir_p(dir, 0700);

        if (e >= 0)
                e = open_list(r, sinks_all, dir);
        if (e >= 0 && r->cfg.sinks)
                e = open_list(r, r->cfg.sinks, dir);
        return e;
}

/* Every name of the run in dir under runfile_check() (util.h) before one
 * is made: a directory others may write, or a name another user holds
 * (a FIFO, a symlink, a file), refuses the directory, which falls back as
 * an unwritable one does. 1 when the run's CSV is there (a rerun of the
 * id), 0, or -errno with why said. */
static int check_dir(const char *dir, const char *run_id, char *why, size_t cap)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int e = dfd < 0 ? -errno : 0, rerun = 0;

        for (int k = 0; k < RUNFILE_COUNT_ && e >= 0; k++) {
                _cleanup_free_ char *name = runfiles_path(NULL, run_id, (enum runfile)k);

                e = name ? runfile_check(dfd, name) : -ENOMEM;
                if (e == -EEXIST)
                        (void)snprintf(why, cap,
                                       "log directory '%s' holds '%s', not a file of ours", dir,
                                       name);
                rerun |= k == RUNFILE_CSV && e == 1;
        }
        if (e == -EPERM)
                (void)snprintf(why, cap, "log directory '%s' is writable by others and not sticky",
                               dir);
        return e < 0 ? e : rerun;
}

static int setup_sinks(struct recorder *r)
{
        _cleanup_free_ char *want = NULL, *fb = NULL;
        const char *shown;
        char why[1024] = "";
        int e;

        want = r->cfg.log_dir ? strdup(r->cfg.log_dir) : recorder_default_log_dir();
        shown = want ? want : "$HOME/.local/state/buildtel/logs";
        e = want ? mkdir_p(want, 0700) : -ENOENT;
        if (e >= 0)
                e = check_dir(want, r->run->run_id, why, sizeof(why));
        if (e >= 0) {
                bool existed = e == 1;

                e = open_sinks(r, want);
                if (e >= 0) {
                        if (existed)
                                note(r, "run id '%s' exists in '%s': its files are rewritten",
                                     r->run->run_id, want);
                        r->log_dir = TAKE_PTR(want);
                        return 0;
                }
        }
        if (!why[0])
                (void)snprintf(why, sizeof(why), "cannot write to '%s': %s", shown, strerror(-e));
        if (fallback_log_dir(&fb) < 0) {
                if (fb)
                        note(r, "refusing '%s': not a directory of ours writable only by us", fb);
        } else if (!want || strcmp(fb, want) != 0) {
                if (open_sinks(r, fb) >= 0) {
                        note(r, "%s; writing to '%s' instead", why, fb);
                        r->log_dir = TAKE_PTR(fb);
                        return 0;
                }
        }
        note(r, "%s; the build runs but nothing is recorded", why);
        return 0;
}

/* A replay writes no files: only the sinks the command asked for. */
static int open_replay_sinks(struct recorder *r)
{
        static const struct sink_ops *const none[] = {NULL};

        return open_list(r, r->cfg.sinks ? r->cfg.sinks : none, NULL);
}

/* On the parse worker (parseq.h): a RUN step the log printed. */
static void on_run_vertex(void *userdata, const char *cmd, size_t len)
{
        struct recorder *r = userdata;

        if (!r->want)
                return; /* not following execs */
        pthread_mutex_lock(&r->want_lock);
        for (size_t i = 0; i < r->nwant; i++)
                if (strcmp(r->want[i].cmd, cmd) == 0)
                        goto out;
        if (r->nwant < RECORDER_WANT_MAX) {
                memcpy(r->want[r->nwant].cmd, cmd, MIN(len, (size_t)BKRUN_CMD_MAX));
                r->want[r->nwant].seen = outparse_now(r->op);
                r->nwant++;
        }
out:
        pthread_mutex_unlock(&r->want_lock);
}

/* How many RUN steps the log printed so far (any thread). */
static size_t nwant(struct recorder *r)
{
        size_t n;

        if (!r->want)
                return 0;
        pthread_mutex_lock(&r->want_lock);
        n = r->nwant;
        pthread_mutex_unlock(&r->want_lock);
        return n;
}

/* An exec cgroup is this build's when its command is one of the RUN
 * steps this build's log printed (platform/bkexec.h). */
static bool match_exec(void *userdata, const char *raw, size_t len, double first_s, char *ret_cmd,
                       size_t cap)
{
        struct recorder *r = userdata;
        char cmd[BKRUN_CMD_MAX + 1];
        bool ours = false;

        if (bkrun_argv_cmd(raw, len, cmd, sizeof(cmd)) <= 0)
                return false;
        pthread_mutex_lock(&r->want_lock);
        for (size_t i = 0; i < r->nwant && !ours; i++)
                if (strcmp(r->want[i].cmd, cmd) == 0) {
                        snprintf(ret_cmd, cap, "%s", cmd);
                        r->want[i].matched = ours = true;
                }
        pthread_mutex_unlock(&r->want_lock);
        return ours;
}

/* Is a RUN step printed lately still without its exec? (A cached one
 * never gets one: the hunt ends RECORDER_HUNT_S after it was printed.) */
static void update_hunt(struct recorder *r, double now)
{
        bool hunt = false;

        pthread_mutex_lock(&r->want_lock);
        for (size_t i = r->nwant; i-- > 0 && !hunt;) {
                if (now - r->want[i].seen > RECORDER_HUNT_S)
                        break;
                hunt = !r->want[i].matched;
        }
        pthread_mutex_unlock(&r->want_lock);
        bkexec_hunt(r->bk, hunt);
}

static void on_ctx_line(void *userdata, const char *line, size_t len)
{
        struct recorder *r = userdata;

        logctx_feed_line_at(r->logctx, line, len, outparse_now(r->op));
}

/* ---- the end-of-run inputs of the build-metrics parsers ---- */

#define NINJA_CHUNK (1u << 20) /* the .ninja_log is read this much at a time */
/* docker buildx history, after the build: a call may take this long, all
 * of them this long together. A loaded 2-core runner can be slow to start
 * the CLI, and a call that times out leaves a bake's targets to the live
 * stream's figures; the build is over, and a hung docker costs 30 s once. */
#define HISTORY_TIMEOUT_S 10.0
#define HISTORY_BUDGET_S 30.0

static void ninja_snapshot(struct recorder *r)
{
        struct stat st;

        if (r->cfg.metrics.ninja_log && stat(r->cfg.metrics.ninja_log, &st) == 0) {
                r->ninja_existed = true;
                r->ninja_size = st.st_size;
                r->ninja_ino = st.st_ino;
        }
}

static int ninja_feed(void *userdata, const char *buf, size_t len)
{
        return ninjalog_stream_feed(userdata, buf, len);
}

/* [from, to) of the .ninja_log at fd through a stream (edges to bm, or
 * none): NINJA_CHUNK at a time, memory flat however much ninja appended.
 * Returns its edges, *ret_last where its last run starts; or -EINVAL (not
 * a .ninja_log), -errno. */
static int ninja_pass(int fd, uint64_t from, uint64_t to, struct buildmetrics *bm,
                      uint64_t *ret_last)
{
        struct ninjalog_stream *s =
            ninjalog_stream_new(from, NULL, 0, bm ? buildmetrics_ninja_edge : NULL, bm);
        int e;

        if (!s)
                return -ENOMEM;
        e = pread_chunks(fd, from, to, NINJA_CHUNK, ninja_feed, s);
        if (e >= 0)
                e = ninjalog_stream_finish(s);
        *ret_last = ninjalog_stream_last_start(s);
        ninjalog_stream_free(s);
        return e;
}

/* This run's records of the .ninja_log at fd (from start on; with last,
 * its last run only), in two passes as buildmetrics_ninja_log(): whether
 * it is a .ninja_log and where its last run starts, then its edges. */
static int ninja_read(struct recorder *r, int fd, uint64_t start, const struct stat *st, bool last)
{
        uint64_t from, unused;
        int e = ninja_pass(fd, start, (uint64_t)st->st_size, NULL, &from);

        if (e < 0)
                return e;
        e = ninja_pass(fd, last ? from : start, (uint64_t)st->st_size, r->metrics, &unused);
        if (e == -EINVAL)
                e = 0; /* a last header with no record after it: no edge */
        if (e < 0)
                return e;
        buildmetrics_ninja_done(r->metrics, (uint64_t)e,
                                (double)st->st_mtim.tv_sec + (double)st->st_mtim.tv_nsec / 1e9);
        return 0;
}

/* This run's records of --ninja-log: the tail appended since the start,
 * or the last run of a log rewritten (recompacted, a new build dir). */
static void import_ninja_log(struct recorder *r)
{
        const char *path = r->cfg.metrics.ninja_log;
        _cleanup_close_ int fd = -1;
        struct stat st;
        bool whole;
        int e;

        if (!path)
                return;
        if (stat(path, &st) < 0) {
                /* one found from the command may never have been written */
                if (!r->cfg.metrics.ninja_log_found)
                        note(r, "--ninja-log '%s': %s", path, strerror(errno));
                return;
        }
        whole = !r->ninja_existed || st.st_ino != r->ninja_ino || st.st_size < r->ninja_size;
        if (!whole && st.st_size == r->ninja_size) {
                buildmetrics_ninja_unchanged(r->metrics);
                return;
        }
        fd = open_regular_file(path, &st);
        e = fd < 0 ? fd
                   : ninja_read(r, fd, whole ? 0 : (uint64_t)r->ninja_size, &st,
                                whole && r->ninja_existed);
        if (e == -EINVAL)
                note(r, "--ninja-log '%s': not a .ninja_log of version 5 to 7", path);
        else if (e < 0)
                note(r, "--ninja-log '%s': %s", path,
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
static int find_records(struct recorder *r, double left)
{
        const struct targets *m = buildmetrics_model(r->metrics);
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
                e = buildmetrics_history_list(r->metrics, out, len, r->run->start_epoch,
                                              now_realtime() + 1.0, &amb);
        if (amb)
                note(r,
                     "buildx history: %u target(s) of this run could be several records "
                     "(builds at once): their steps are the live stream's",
                     amb);
        return e;
}

/* docker buildx history for each target's ref (the --metadata-file's, or
 * this run's records from history ls), within one budget: status,
 * duration, revision (inspect), steps and cached (the record's log
 * replayed: history logs). */
static void import_history(struct recorder *r)
{
        const struct targets *m = buildmetrics_model(r->metrics);
        double budget_end = now_monotonic() + HISTORY_BUDGET_S;
        size_t replayed = 0;
        int ls = 0;

        if (r->cfg.metrics.no_history)
                return;
        /* --progress=tty (a build in a terminal of its own): nothing of
         * its stream is ours; its record in the history says it all */
        if (!m->n && !r->cfg.replay && single_build(r->run->argv) &&
            buildmetrics_unseen_build(r->metrics) == 0) {
                ls = find_records(r, HISTORY_BUDGET_S);
                if (!m->t[0].ref[0]) {
                        buildmetrics_unseen_drop(r->metrics);
                        return;
                }
        } else if (!m->n)
                return;
        else if (m->buildkit_seen)
                ls = find_records(r, HISTORY_BUDGET_S);
        for (size_t i = 0; i < m->n && ls != -ENOENT; i++) {
                _cleanup_free_ char *out = NULL;
                double left = budget_end - now_monotonic();
                size_t len = 0;
                int e;

                if (!m->t[i].ref[0] || left <= 0)
                        continue;
                e = buildx_history_fetch(m->t[i].ref, MIN(left, HISTORY_TIMEOUT_S), &out, &len);
                if (e == -ENOENT)
                        return; /* no docker here */
                if (e >= 0)
                        e = buildmetrics_history(r->metrics, out, len);
                if (e < 0)
                        note(r, "docker buildx history inspect %s: %s", m->t[i].ref,
                             e == -EINVAL ? "not the expected JSON" : strerror(-e));
                free(out);
                out = NULL;
                left = budget_end - now_monotonic();
                e = left > 0
                        ? buildx_history_logs(m->t[i].ref, MIN(left, HISTORY_TIMEOUT_S), &out, &len)
                        : -ETIMEDOUT;
                if (e >= 0)
                        e = buildmetrics_history_logs(r->metrics, m->t[i].ref, out, len);
                if (e >= 0)
                        replayed++;
                else
                        note(r, "docker buildx history logs %s: %s", m->t[i].ref, fetch_error(e));
        }
        buildmetrics_history_done(r->metrics);
        if (m->n > 1 && replayed < m->n && (front_end(r->run->argv) || replayed))
                note(r,
                     "buildx history: %zu of %zu targets replayed from their records%s: the "
                     "others' steps are the live stream's, which prints a step shared by "
                     "targets under one of them",
                     replayed, m->n, ls < 0 ? " (docker buildx history ls failed)" : "");
}

/* The build's --metadata-file: builder, node and ref per target. */
static void import_metadata(struct recorder *r)
{
        const char *f = buildmetrics_metadata_file(r->run->argv);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int e;

        if (!f)
                return;
        e = read_regular_file(f, 0, BAKEMETA_MAX_FILE, &buf, &len);
        if (e >= 0)
                e = buildmetrics_metadata(r->metrics, buf, len);
        if (e < 0) {
                note(r, "--metadata-file '%s': %s", f,
                     e == -EINVAL   ? "not a JSON object"
                     : e == -ESPIPE ? "not a regular file"
                                    : strerror(-e));
                return;
        }
}

int recorder_new(const struct recorder_config *cfg, struct run_info *run, struct recorder **ret)
{
        struct sampler_config scfg = {
            .root = "/",
            .disk_path = cfg->disk_path ? cfg->disk_path : ".",
            .compilers = cfg->compilers,
        };
        struct recorder *r;
        int e;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        pthread_mutex_init(&r->want_lock, NULL);
        r->cfg = *cfg;
        r->run = run;
        r->splice = -1;
        summary_init(&r->summary, &cfg->summary);
        {
                struct logctx_config lc = cfg->logctx;

                lc.hold_s = cfg->interval; /* a work line pins the context one tick */
                e = logctx_new(&lc, &r->logctx);
        }
        if (e >= 0 && !cfg->replay)
                e = sampler_new(&scfg, &r->sampler);
        if (e >= 0) {
                struct buildmetrics_config mc = cfg->metrics;

                mc.ctx_line = on_ctx_line;
                mc.ctx_userdata = r;
                e = buildmetrics_new(&mc, &r->metrics);
        }
        if (e >= 0) {
                struct outparse_config oc = {.metrics = r->metrics,
                                             .logctx = r->logctx,
                                             .on_run = on_run_vertex,
                                             .userdata = r};
                e = outparse_new(&oc, &r->op);
        }
        if (e >= 0)
                ninja_snapshot(r);
        if (e >= 0)
                e = procscan_new(&r->scan);
        if (e >= 0)
                e = units_new(&r->units);
        /* run: only a command that drives BuildKit has execs to follow;
         * watch: when its lines name RUN steps */
        if (e >= 0 && !cfg->replay && (!cfg->cgroup || bkrun_argv_drives(run->argv))) {
                struct bkexec_config bc = {.root = "/", .match = match_exec, .userdata = r};
                e = bkexec_new(&bc, &r->bk);
                r->want = e >= 0 ? calloc(RECORDER_WANT_MAX, sizeof(*r->want)) : NULL;
                if (e >= 0 && !r->want)
                        e = -ENOMEM;
        }
        if (e < 0) {
                recorder_free(r);
                return e;
        }
        if (!cfg->no_db && !cfg->replay) {
                r->db_path = cfg->db_path ? strdup(cfg->db_path) : store_default_path();
                if (!r->db_path)
                        note(r, "no history database: neither XDG_STATE_HOME nor HOME is set");
        } else if (cfg->replay && cfg->replay_row > 0) {
                /* only its baseline reads it: a replay's sinks write none */
                r->db_path = cfg->db_path ? strdup(cfg->db_path) : store_default_path();
        }
        if (cfg->replay) {
                e = open_replay_sinks(r);
                if (e < 0) {
                        recorder_free(r);
                        return e;
                }
        } else {
                (void)recorder_self(&r->self); /* zeros when /proc cannot tell */
                (void)setup_sinks(r);
        }
        r->page_bytes = (double)sysconf(_SC_PAGESIZE);
        r->bk_mem_peak = r->bk_pids_peak = NAN;
        r->start_mono = now_monotonic();
        r->next_tick = r->start_mono; /* a first sample at once: the baseline */
        *ret = r;
        return 0;
}

void recorder_free(struct recorder *r)
{
        if (!r)
                return;
        parseq_free(r->parseq);
        close_sinks(r);
        sampler_free(r->sampler);
        buildmetrics_free(r->metrics);
        procscan_free(r->scan);
        units_free(r->units);
        bkexec_free(r->bk);
        free(r->want);
        pthread_mutex_destroy(&r->want_lock);
        free(r->allpids);
        logctx_free(r->logctx);
        outparse_free(r->op);
        free(r->log_dir);
        free(r->db_path);
        free(r->baseline);
        free(r);
}

const char *recorder_log_dir(const struct recorder *r)
{
        return r->log_dir;
}
double recorder_next_tick(const struct recorder *r)
{
        return r->next_tick;
}

/* On the parse thread, or inline: a chunk of output into lines. */
static void on_chunk(void *userdata, int stream, const char *buf, size_t len, double now, bool eof)
{
        struct recorder *r = userdata;

        if (eof)
                outparse_eof(r->op, stream, now);
        else
                outparse_chunk(r->op, stream, buf, len, now);
}

/* Every reader of the parsers' state first waits for the parse thread to
 * catch up, so a sample sees exactly the lines that came before it. */
static void parse_sync(struct recorder *r)
{
        if (r->parseq)
                parseq_sync(r->parseq);
}

static void parse_stop(struct recorder *r)
{
        parseq_free(r->parseq);
        r->parseq = NULL;
        r->no_parseq = true;
}

void recorder_output(struct recorder *r, int stream, const char *buf, size_t len)
{
        /* One clock read per chunk: its lines arrived together, and a read
         * per line was 40% of the parsing time. */
        double now = now_monotonic() - r->start_mono;

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->output)
                        r->ops[i]->output(r->state[i], stream, buf, len);
        if (!r->parseq && !r->no_parseq && parseq_new(on_chunk, r, &r->parseq) < 0)
                r->no_parseq = true; /* no thread to be had: parse inline */
        if (r->parseq)
                parseq_push(r->parseq, stream, buf, len, now);
        else
                on_chunk(r, stream, buf, len, now, false);
}

int recorder_output_fd(struct recorder *r, off_t *ret_off)
{
        int i = r->splice;

        /* The parse reads the spliced bytes back on its own thread. */
        if (i < 0 || r->no_parseq)
                return -1;
        if (!r->parseq && parseq_new(on_chunk, r, &r->parseq) < 0) {
                r->no_parseq = true;
                return -1;
        }
        return r->ops[i]->output_fd(r->state[i], ret_off);
}

void recorder_output_spliced(struct recorder *r, int stream, int fd, off_t off, size_t n)
{
        double now = now_monotonic() - r->start_mono;
        r->ops[r->splice]->output_spliced(r->state[r->splice], n);
        parseq_push_file(r->parseq, stream, fd, off, n, now);
}

void recorder_output_eof(struct recorder *r, int stream)
{
        double now = now_monotonic() - r->start_mono;

        if (r->parseq)
                parseq_push_eof(r->parseq, stream, now);
        else
                on_chunk(r, stream, NULL, 0, now, true);
}

void recorder_log_line(struct recorder *r, const char *line, size_t len)
{
        /* watch's lines (--stage-log-dir) reach the same parsers as run's. */
        parse_sync(r);
        outparse_line(r->op, line, len, now_monotonic() - r->start_mono);
}

static void on_build_proc(void *userdata, const struct pidstat *ps)
{
        struct recorder *r = userdata;

        proctop_consider(&r->top, ps);
        procscan_consider(r->scan, ps);
        if (r->bk)
                bkexec_consider(r->bk, ps);
}

/* The client's pids and those of this build's execs, for the walk. */
static void set_pids(struct recorder *r, const long *pids, size_t n)
{
        const long *ep;
        size_t en = 0;

        if (r->bk)
                bkexec_pids(r->bk, &ep, &en);
        if (en && n + en > r->capall) {
                long *nv = realloc(r->allpids, (n + en) * sizeof(*nv));
                if (nv) {
                        r->allpids = nv;
                        r->capall = n + en;
                }
        }
        if (!en || n + en > r->capall) {
                sampler_set_pids(r->sampler, pids, n, on_build_proc, r);
                return;
        }
        memcpy(r->allpids, pids, n * sizeof(*pids));
        memcpy(r->allpids + n, ep, en * sizeof(*ep));
        sampler_set_pids(r->sampler, r->allpids, n + en, on_build_proc, r);
}

static void set_victim(struct recorder *r, const char *comm, long pid)
{
        snprintf(r->oom_victim, sizeof(r->oom_victim), "%s", comm);
        r->oom_victim_pid = pid;
}

static void victim_to_sample(struct recorder *r, struct sample *s)
{
        if (r->oom_victim_pid <= 0)
                return;
        s->oom_victim = r->oom_victim;
        s->oom_victim_pid = (double)r->oom_victim_pid;
}

/* The build's figures are the client's cgroup and this invocation's
 * execs summed: counters over every exec (gone ones at their last read),
 * levels over those alive, and as the peak the largest of the client's
 * own kernel peak, one exec's kernel peak, and the sampled sum. */
static void fold_execs(struct recorder *r, struct sample *s)
{
        struct bkexec_totals t;

        if (!r->bk)
                return;
        bkexec_totals(r->bk, &t);
        if (!t.ours)
                return;
        s->cg_cpu_user_s = execs_sum(s->cg_cpu_user_s, t.cpu_user_s);
        s->cg_cpu_sys_s = execs_sum(s->cg_cpu_sys_s, t.cpu_sys_s);
        s->cg_io_read_bytes = execs_sum(s->cg_io_read_bytes, t.io_read_bytes);
        s->cg_io_write_bytes = execs_sum(s->cg_io_write_bytes, t.io_write_bytes);
        s->cg_oom_kills = execs_sum(s->cg_oom_kills, t.oom_kills);
        s->cg_mem_bytes = execs_sum(s->cg_mem_bytes, t.mem_bytes);
        s->cg_mem_anon_bytes = execs_sum(s->cg_mem_anon_bytes, t.anon_bytes);
        s->cg_mem_file_bytes = execs_sum(s->cg_mem_file_bytes, t.file_bytes);
        s->cg_pids = execs_sum(s->cg_pids, t.pids);
        r->bk_mem_peak = execs_max(r->bk_mem_peak, execs_max(s->cg_mem_bytes, t.max_peak_bytes));
        s->cg_mem_peak_bytes = execs_max(s->cg_mem_peak_bytes, r->bk_mem_peak);
        r->bk_pids_peak = execs_max(r->bk_pids_peak, s->cg_pids);
        s->cg_pids_peak = execs_max(s->cg_pids_peak, r->bk_pids_peak);
        if (t.oom_victim_pid > 0 && t.oom_victim_pid != r->exec_victim_pid) {
                r->exec_victim_pid = t.oom_victim_pid;
                set_victim(r, t.oom_victim, t.oom_victim_pid);
        }
        victim_to_sample(r, s);
        if (r->cfg.cgroup && cgroup_pressure_is_host(r->cfg.cgroup))
                return; /* host-wide already: the execs are in it */
        s->cg_psi_cpu_some_s = execs_sum(s->cg_psi_cpu_some_s, t.psi_cpu_some_s);
        s->cg_psi_cpu_full_s = execs_sum(s->cg_psi_cpu_full_s, t.psi_cpu_full_s);
        s->cg_psi_mem_some_s = execs_sum(s->cg_psi_mem_some_s, t.psi_mem_some_s);
        s->cg_psi_mem_full_s = execs_sum(s->cg_psi_mem_full_s, t.psi_mem_full_s);
        s->cg_psi_io_some_s = execs_sum(s->cg_psi_io_some_s, t.psi_io_some_s);
        s->cg_psi_io_full_s = execs_sum(s->cg_psi_io_full_s, t.psi_io_full_s);
}

/* Before the host sample: the build's counters, and its pids for the
 * per-process part of the sampler. */
static void build_before(struct recorder *r, struct sample *s)
{
        static const long no_pids[1];
        struct cgroup_stats cs;
        const long *pids;
        size_t n;

        (void)cgroup_read(r->cfg.cgroup, &cs);
        s->cg_mode = cgroup_mode_name(cgroup_mode(r->cfg.cgroup));
        s->cg_cpu_user_s = cs.cpu_user_s;
        s->cg_cpu_sys_s = cs.cpu_sys_s;
        s->cg_mem_bytes = cs.mem_bytes;
        s->cg_mem_peak_bytes = cs.mem_peak_bytes;
        s->cg_oom_kills = cs.oom_kills;
        s->cg_io_read_bytes = cs.io_read_bytes;
        s->cg_io_write_bytes = cs.io_write_bytes;
        s->cg_psi_cpu_some_s = cs.psi_cpu_some_s;
        s->cg_psi_cpu_full_s = cs.psi_cpu_full_s;
        s->cg_psi_mem_some_s = cs.psi_mem_some_s;
        s->cg_psi_mem_full_s = cs.psi_mem_full_s;
        s->cg_psi_io_some_s = cs.psi_io_some_s;
        s->cg_psi_io_full_s = cs.psi_io_full_s;
        s->cg_pids = cs.pids;
        s->cg_pids_peak = cs.pids_peak;
        s->cg_mem_anon_bytes = cs.mem_anon_bytes;
        s->cg_mem_file_bytes = cs.mem_file_bytes;
        if (cs.oom_victim_pid > 0 && cs.oom_victim_pid != r->own_victim_pid) {
                r->own_victim_pid = cs.oom_victim_pid;
                set_victim(r, cs.oom_victim_comm, cs.oom_victim_pid);
        }
        victim_to_sample(r, s);
        proctop_reset(&r->top);
        procscan_begin(r->scan);
        if (r->bk) {
                update_hunt(r, s->elapsed_s);
                (void)bkexec_tick(r->bk, sampler_procfs(r->sampler), s->elapsed_s, nwant(r) > 0);
        }
        /* Never the whole host: without the list, no process at all. */
        if (cgroup_pids(r->cfg.cgroup, &pids, &n) < 0) {
                pids = no_pids;
                n = 0;
        }
        set_pids(r, pids, n);
}

/* What the units table is told of a scanned unit; s NULL for an ended one
 * (no sample: elapsed and rss stay 0, units_ended_seen() reads neither). */
static struct units_seen seen_of(const struct recorder *r, const struct procscan_unit *u,
                                 const struct sample *s)
{
        return (struct units_seen){
            .kind = u->u.kind == PROCUNIT_LINK ? UNITS_LINK : UNITS_COMPILE,
            .tool = u->u.tool,
            .name = u->u.name,
            .std = u->u.std,
            .dir = u->u.dir,
            .src = u->u.src,
            .cwd = u->u.cwd,
            .key = u->u.key,
            .elapsed_s = s ? s->elapsed_s : 0,
            .rss_mb = s ? (double)u->rss_pages * r->page_bytes / SAMPLE_MIB : 0,
            .cpu_s = u->cpu_s,
        };
}

/* The units in flight: the running column, and the per-unit table. */
static void scan_units(struct recorder *r, struct sample *s)
{
        const struct procscan_unit *u;
        size_t n;

        procscan_end(r->scan, sampler_procfs(r->sampler));
        u = procscan_ended(r->scan, &n);
        for (size_t i = 0; i < n; i++) { /* before the live ones: see units_ended() */
                struct units_seen ended = seen_of(r, &u[i], NULL);

                (void)units_ended_seen(r->units, &ended);
        }
        u = procscan_units(r->scan, &n);
        (void)procscan_running_text(u, n, r->running, sizeof(r->running));
        s->running = r->running;
        for (size_t i = 0; i < n; i++) {
                struct units_seen seen = seen_of(r, &u[i], s);

                (void)units_see(r->units, &seen);
        }
}

static void build_after(struct recorder *r, struct sample *s)
{
        const char **label[PROCTOP_N] = {&s->top_proc, &s->top2_proc, &s->top3_proc};
        double *bytes[PROCTOP_N] = {&s->top_proc_bytes, &s->top2_proc_bytes, &s->top3_proc_bytes};
        double *pid[PROCTOP_N] = {&s->top_pid, &s->top2_pid, &s->top3_pid};

        struct pidmem pm;

        proctop_label_all(&r->top, sampler_procfs(r->sampler));
        /* The largest one's own anon: one statm read a scan. */
        if (r->top.n > 0 && procfs_pidmem(sampler_procfs(r->sampler), r->top.e[0].pid, &pm) >= 0)
                s->top_proc_anon_bytes = (double)pm.anon_pages * r->page_bytes;
        if (r->bk)
                bkexec_end(r->bk, sampler_procfs(r->sampler));
        fold_execs(r, s);
        for (size_t i = 0; i < r->top.n; i++) {
                *label[i] = r->top.e[i].label;
                *bytes[i] = (double)r->top.e[i].rss_pages * r->page_bytes;
                *pid[i] = (double)r->top.e[i].pid;
        }
        scan_units(r, s);
}

static const char *victim_words(const struct summary_oom *e)
{
        return strcmp(e->victim_source, "kernel") == 0 ? "victim (the kernel's report)"
               : strcmp(e->victim_source, "the build") == 0
                   ? "victim (the build's own process, killed by SIGKILL)"
                   : "likely victim (last seen)";
}

static void on_watch_proc(void *userdata, const struct pidstat *ps)
{
        struct recorder *r = userdata;

        bkexec_consider(r->bk, ps);
}

/* watch has no cgroup of the build: when its lines (--stage-log-dir) name
 * RUN steps, the build's figures are those of their execs alone. */
static void watch_before(struct recorder *r, struct sample *s)
{
        (void)s;
        if (!nwant(r))
                return;
        update_hunt(r, s->elapsed_s);
        (void)bkexec_tick(r->bk, sampler_procfs(r->sampler), s->elapsed_s, true);
        /* the whole /proc stays walked for the compilers count */
        sampler_set_pids(r->sampler, NULL, 0, on_watch_proc, r);
}

static void watch_after(struct recorder *r, struct sample *s)
{
        if (!nwant(r))
                return;
        bkexec_end(r->bk, sampler_procfs(r->sampler));
        fold_execs(r, s);
}

/* Say at once when the build lost a process to the OOM killer. */
static void warn_oom(struct recorder *r, uint64_t before)
{
        const struct summary_build *b = &r->summary.build;
        const struct summary_oom *e;

        if (b->noom == before || !r->cfg.warn)
                return;
        if (b->noom > SUMMARY_OOM_MAX) {
                r->cfg.warn(r->cfg.userdata, "OOM kill in the build's cgroup (%.0f so far)",
                            b->oom_kills);
                return;
        }
        e = &b->oom[b->noom - 1];
        if (e->victim.label[0] && isfinite(e->victim.mb))
                r->cfg.warn(r->cfg.userdata,
                            "OOM kill in the build's cgroup (%.0f so far); %s: %s "
                            "(pid %.0f, %.1f MiB)",
                            e->kills, victim_words(e), e->victim.label, e->victim.pid,
                            e->victim.mb);
        else if (e->victim.label[0])
                r->cfg.warn(r->cfg.userdata,
                            "OOM kill in the build's cgroup (%.0f so far); %s: %s (pid %.0f)",
                            e->kills, victim_words(e), e->victim.label, e->victim.pid);
        else
                r->cfg.warn(r->cfg.userdata, "OOM kill in the build's cgroup (%.0f so far)",
                            e->kills);
}

/* One sample, taken or replayed, to the model and the sinks. */
static void record(struct recorder *r, const struct sample *s)
{
        uint64_t noom = r->summary.build.noom;
        const struct run_model m = {.run = r->run, .summary = &r->summary};

        summary_add(&r->summary, s);
        warn_oom(r, noom);
        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->sample)
                        r->ops[i]->sample(r->state[i], s, &m);
}

int recorder_tick(struct recorder *r)
{
        double mono = now_monotonic();
        struct sample s;

        if (!r->sampler)
                return -EINVAL; /* a replay: its samples come from the source */
        sample_clear(&s);
        /* Whole milliseconds, as the CSV keeps it: each output then rounds
         * the same time the same way (printf's "%.3f" and llround(ms)
         * differed on a raw epoch such as x.1135). */
        s.epoch = round(now_realtime() * 1e3) / 1e3;
        s.elapsed_s = mono - r->start_mono;
        if (r->cfg.cgroup)
                build_before(r, &s);
        else if (r->bk)
                watch_before(r, &s);
        (void)sampler_take(r->sampler, &s);
        if (r->cfg.cgroup)
                build_after(r, &s);
        else if (r->bk)
                watch_after(r, &s);
        parse_sync(r);
        s.stage = logctx_stage(r->logctx);
        s.context = logctx_context(r->logctx);

        /* Schedule on the grid start + k*interval; skip ticks we missed. */
        while (r->next_tick <= mono)
                r->next_tick += r->cfg.interval;

        /* The sample as read, once: the summary takes the CSV's precision
         * from it (summary.h), the sinks format or store it. */
        record(r, &s);
        if (r->cfg.on_sample)
                r->cfg.on_sample(r->cfg.on_sample_userdata, &s);
        return 0;
}

/* Each exec of this build to the RUN step it ran: the step with its
 * command whose time it fell in (ties: the nearest start, a step not yet
 * given one first). */
static void attach_execs(struct recorder *r, const struct targets *ts)
{
        const struct exec_fact *f;
        _cleanup_free_ char(*cmd)[BKRUN_CMD_MAX + 1] = NULL;
        _cleanup_free_ bool *taken = NULL;
        size_t n;

        f = r->bk && ts ? bkexec_facts(r->bk, &n) : NULL;
        if (!f || !n || !ts->nstepv)
                return;
        cmd = calloc(ts->nstepv, sizeof(*cmd));
        taken = calloc(ts->nstepv, sizeof(*taken));
        if (!cmd || !taken)
                return;
        for (uint32_t j = 0; j < ts->nstepv; j++)
                (void)bkrun_vertex_cmd(ts->stepv[j].name, strlen(ts->stepv[j].name), cmd[j],
                                       sizeof(cmd[j]));
        for (size_t i = 0; i < n; i++) {
                double best_d = INFINITY, slack = 2 * r->cfg.interval + 1;
                int best = -1;

                for (uint32_t j = 0; j < ts->nstepv; j++) {
                        const struct step_fact *st = &ts->stepv[j];
                        double lo = isnan(st->start_s) ? -INFINITY : st->start_s - slack;
                        double hi = isnan(st->end_s) ? INFINITY : st->end_s + slack, d;

                        if (!cmd[j][0] || strcmp(cmd[j], f[i].cmd) != 0)
                                continue;
                        d = isnan(st->start_s) ? 0 : fabs(f[i].first_s - st->start_s);
                        if (f[i].first_s < lo || f[i].first_s > hi)
                                d += 1e6;
                        if (taken[j])
                                d += 1e9;
                        if (d < best_d) {
                                best_d = d;
                                best = (int)j;
                        }
                }
                if (best < 0)
                        continue;
                step_exec_add(&ts->stepv[best].exec, &f[i].u);
                taken[best] = true;
        }
}

/* One note when the RUN steps could not be followed into BuildKit: what
 * the build's figures then cover. */
static void note_execs(struct recorder *r, const struct targets *ts)
{
        uint32_t runs = 0, measured = 0;
        char c[BKRUN_CMD_MAX + 1];

        for (uint32_t j = 0; ts && j < ts->nstepv; j++) {
                const struct step_fact *st = &ts->stepv[j];

                if (st->cached || bkrun_vertex_cmd(st->name, strlen(st->name), c, sizeof(c)) <= 0)
                        continue;
                runs++;
                measured += st->exec.set;
        }
        if (!runs || !r->bk)
                return;
        if (measured == 0 && geteuid() != 0)
                note(r,
                     "BuildKit ran the %u RUN step(s) in the daemon's cgroups, which only root "
                     "can read: the build's figures cover the docker client alone",
                     runs);
        else if (measured == 0 && outparse_driver(r->op)[0] &&
                 strcmp(outparse_driver(r->op), "docker") != 0)
                note(r,
                     "the %s driver runs BuildKit out of reach (a container or another host): "
                     "its %u RUN step(s) were not measured; the build's figures cover the "
                     "docker client alone",
                     outparse_driver(r->op), runs);
        else if (measured == 0)
                note(r,
                     "no exec cgroup of this build's %u RUN step(s) was found on this machine "
                     "(a remote daemon, one in a VM, or steps shorter than %.1f s): the "
                     "build's figures cover the docker client alone",
                     runs, RECORDER_EXEC_POLL_S);
        else if (measured < runs)
                note(r,
                     "%u of %u RUN steps were measured inside BuildKit (the others ended "
                     "between two reads); the build's figures include those %u",
                     measured, runs, measured);
}

/* The run against its job's last finished runs on this host with the
 * same outcome, read before the sqlite sink finishes this run's row (a
 * running row is never in the window). A replay reads the runs recorded
 * before it (smaller row ids): the same window, so the same findings. A
 * history that cannot be read leaves the summary without a baseline: one
 * note. */
static void derive_baseline(struct recorder *r, const struct run_model *m)
{
        const struct run_info *ri = r->run;
        struct baseline_run cur, *win = NULL;
        struct store *st = NULL;
        int64_t before = r->cfg.replay ? r->cfg.replay_row : 0;
        int n = 0, e;

        if ((r->cfg.replay && before <= 0) || !r->db_path || !ri->job || !ri->job[0])
                return;
        r->baseline = malloc(sizeof(*r->baseline));
        win = calloc(BASELINE_WINDOW, sizeof(*win));
        e = r->baseline && win ? 0 : -ENOMEM;
        if (e >= 0) {
                e = store_open(r->db_path, false, 2000, &st);
                if (e >= 0)
                        n = store_baseline_window(st, ri->job, ri->host,
                                                  ri->exit_code == 0 && ri->term_signal == 0,
                                                  before, win, BASELINE_WINDOW);
                else if (e == -ENOENT)
                        e = 0; /* no history yet: no earlier runs */
                store_close(st);
                e = n < 0 ? n : e;
        }
        if (e >= 0) {
                baseline_run_of(&r->summary, ri, m->facts, m->targets, m->units, &cur);
                e = baseline_derive(ri->job, &cur, win, (size_t)n, r->baseline);
        }
        free(win);
        if (e < 0) {
                note(r, "the job's usual: %s", store_strerror(e));
                free(r->baseline);
                r->baseline = NULL;
        }
        r->summary.baseline = r->baseline;
}

int recorder_finish(struct recorder *r, struct dbuf *short_out)
{
        /* units only from a run's process scans (watch has none) */
        const struct units *units = r->cfg.cgroup ? r->units : NULL;
        struct run_model m = {.run = r->run, .summary = &r->summary, .units = units};
        int ret = 0;

        parse_stop(r); /* every line parsed; the end-of-run fetches fork */
        summary_end_run(&r->summary, r->run);
        /* A replay's command line ran long ago: its --metadata-file and
         * buildx history are not read again. */
        if (!r->cfg.replay) {
                buildmetrics_finish(r->metrics);
                import_ninja_log(r);
                import_metadata(r);
                import_history(r);
        }
        r->summary.units = units;
        m.targets = buildmetrics_model(r->metrics);
        if (!r->cfg.replay) {
                if (r->bk)
                        bkexec_finish(r->bk, now_monotonic() - r->start_mono);
                attach_execs(r, m.targets);
                note_execs(r, m.targets);
        }
        targets_facts(m.targets, r->run, &r->facts);
        m.facts = &r->facts;
        if (r->cfg.replay && r->cfg.recorded) {
                m.targets = r->cfg.recorded->targets;
                m.facts = r->cfg.recorded->facts;
                m.units = r->cfg.recorded->units;
                r->summary.units = m.units;
        }
        {
                double off;

                if (m.targets && targets_ninja_offset(m.targets, r->run, &off) == 0)
                        summary_place_edges(&r->summary, m.targets->edgev, m.targets->nedgev, off);
        }

        derive_baseline(r, &m);
        for (size_t i = 0; i < r->nsinks; i++) {
                int e;

                if (!r->ops[i]->finish)
                        continue;
                e = r->ops[i]->finish(r->state[i], &m);
                r->failed[i] = e < 0;
                if (e < 0) {
                        /* only -EEXIST is surely a run file's (an -EPERM may be the
                         * textfile directory's) */
                        note(r, "%s: %s", r->ops[i]->name,
                             e == -EEXIST ? runfile_strerror(e) : strerror(-e));
                        if (ret == 0)
                                ret = e;
                }
        }
        if (short_out)
                (void)summary_render_short(&r->summary, r->run, short_out);
        if (short_out)
                (void)targets_render_text(m.targets, m.facts, short_out);
        if (short_out)
                (void)steps_render_short(m.targets, short_out);
        if (short_out && r->baseline)
                (void)baseline_render_short(r->baseline, short_out);
        if (r->cfg.on_finish)
                r->cfg.on_finish(r->cfg.on_finish_userdata, &m);
        return ret;
}

size_t recorder_pollfds(struct recorder *r, struct pollfd *p, size_t cap, double *deadline)
{
        size_t n = 0;

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->pollfds)
                        n += r->ops[i]->pollfds(r->state[i], p + n, cap - n, deadline);
        /* this build's execs between ticks: their OOM count before they go */
        if (r->bk && r->sampler && r->next_poll < *deadline && nwant(r))
                *deadline = r->next_poll;
        return n;
}

void recorder_poll(struct recorder *r, const struct pollfd *p, size_t n)
{
        double now = now_monotonic();

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->poll)
                        r->ops[i]->poll(r->state[i], p, n, now);
        if (r->bk && r->sampler && now >= r->next_poll && nwant(r)) {
                update_hunt(r, now - r->start_mono);
                (void)bkexec_poll(r->bk, sampler_procfs(r->sampler), now - r->start_mono);
                r->next_poll = now + MIN(RECORDER_EXEC_POLL_S, r->cfg.interval);
        }
}

bool recorder_sink_failed(const struct recorder *r, const char *name)
{
        for (size_t i = 0; r && i < r->nsinks; i++)
                if (strcmp(r->ops[i]->name, name) == 0)
                        return r->failed[i];
        return true; /* not open: nothing there to name */
}

int recorder_sample(struct recorder *r, const struct sample *s)
{
        record(r, s);
        return 0;
}

void recorder_sample_skipped(struct recorder *r)
{
        r->summary.skipped_rows++;
}

const struct summary *recorder_summary(const struct recorder *r)
{
        return &r->summary;
}
