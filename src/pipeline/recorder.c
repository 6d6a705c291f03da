/* SPDX-License-Identifier: MIT */
#include "pipeline/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/baseline.h"
#include "model/jobs.h"
#include "model/ledger.h"
#include "model/critpath.h"
#include "model/units.h"
#include "pipeline/acct.h"
#include "parse/bkrun.h"
#include "parse/ccstats.h"
#include "parse/outparse.h"
#include "runfiles/names.h"
#include "runfiles/samplecsv.h"
#include "pipeline/endinputs.h"
#include "pipeline/execmatch.h"
#include "pipeline/guard.h"
#include "pipeline/parseq.h"
#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "platform/sampler.h"
#include "render/short.h"
#include "sinks/sink.h"
#include "store/history-run.h"
#include "store/history.h"
#include "store/store.h"
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
        struct ninjalog_file ninja;   /* --ninja-log when the run started */
        struct run_facts facts;       /* what every sink reports of them, made at finish */
        size_t nsinks;
        int splice; /* the one sink of the raw output that takes it by splice(2), or -1 */
        double start_mono, next_tick;
        struct proctop top; /* the build's largest processes this tick */
        double page_bytes;
        struct procscan *scan; /* the compile units in flight */
        struct units *units;   /* and over the run */
        /* The kernel's accounting of every process (root): the units
         * exact, in their own table; NULL: not ours to read. */
        struct acct *acct;
        struct units *xunits;
        struct guard *guard;       /* --memory-guard; NULL: off */
        struct ledger *ledger;     /* the job's usual units, for the guard */
        char *statslog;            /* ccache's stats log of the build; NULL none */
        uint64_t statslog_off;     /* its size when the build started */
        char *scclog;              /* the log of an sccache server the build starts; NULL none */
        struct baseline *baseline; /* the run against its job's usual, made at finish */
        char running[SAMPLE_RUNNING_MAX + 1];
        /* The output's parsers on their own thread (parseq.h); NULL: none
         * yet, or parsed inline (no_parseq: it could not start, or the run
         * is over). */
        struct parseq *parseq;
        bool no_parseq;
        struct victim victim;   /* the kernel's last OOM victim, for the sample */
        struct execmatch *em;   /* BuildKit's RUN steps followed; NULL: not */
        double next_poll;       /* of the execs, between ticks */
        struct run_model model; /* complete after recorder_finish */
};

#define note(x, ...) note_to((x)->cfg.note, (x)->cfg.userdata, __VA_ARGS__)

char *recorder_default_log_dir(void)
{
        return state_path("logs");
}

int recorder_log_dir_usable(const char *dir)
{
        int e = mkdir_p(dir, 0700);

        return e < 0 ? e : access(dir, W_OK | X_OK) < 0 ? -errno : 0;
}

/* $TMPDIR/buildtel-UID/leaf, in a shared directory: buildtel-UID must be
 * ours and writable only by us, or another user could plant the files we
 * write; leaf "logs" is made the same way, another (a file) is only named.
 * On failure *ret_path names the directory refused (or NULL). */
static int fallback_path(const char *leaf, char **ret_path)
{
        const char *tmp = getenv("TMPDIR");
        char *p = tmp_state_path(leaf), *slash = p ? strrchr(p, '/') : NULL;
        int e;

        *ret_path = NULL;
        if (!slash) /* p NULL: a made one always has a '/' */
                return -ENOMEM;
        (void)mkdir_p(tmp && tmp[0] == '/' ? tmp : "/tmp", 0700); /* a $TMPDIR not made yet */
        *slash = '\0';
        e = mkdir_private(p);
        if (e >= 0) {
                *slash = '/';
                if (strcmp(leaf, "logs") == 0)
                        e = mkdir_private(p);
        }
        *ret_path = p; /* on failure, the directory refused */
        return e;
}

/* The default history's directory cannot be written: the history goes
 * where the logs fall back to, said once (an explicit --db is the user's
 * to fix: its warning comes when it is opened). */
static void db_fallback(struct recorder *r)
{
        const char *slash = strrchr(r->db_path, '/');
        _cleanup_free_ char *dir = slash ? strndup(r->db_path, (size_t)(slash - r->db_path)) : NULL;
        _cleanup_free_ char *fb = NULL;
        int e = dir ? recorder_log_dir_usable(dir) : -ENOMEM;

        if (e >= 0 || !dir || fallback_path("history.db", &fb) < 0)
                return;
        note(r, "cannot write to '%s': %s; the history in '%s' instead", dir, strerror(-e), fb);
        free(r->db_path);
        r->db_path = TAKE_PTR(fb);
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

/* Open the sinks of list (NULL-terminated) in dir, made already (NULL: a
 * replay, which writes no files); all or nothing. */
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

        for (size_t i = 0; list[i] && r->nsinks < ARRAY_SIZE(r->ops); i++) {
                int e = list[i]->open(&ctx, &r->state[r->nsinks]);

                if (e < 0) {
                        close_sinks(r);
                        return e;
                }
                if (r->state[r->nsinks]) /* NULL: off (sink.h) */
                        r->ops[r->nsinks++] = list[i];
        }
        r->splice = splice_sink(r);
        return 0;
}

/* Open every sink in dir; all or nothing. */
static int open_sinks(struct recorder *r, const char *dir)
{
        int e = open_list(r, sinks_all, dir);

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
        if (fallback_path("logs", &fb) < 0) {
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

/* On the parse worker (parseq.h): a RUN step the log printed. */
static void on_run_vertex(void *userdata, const char *cmd, size_t len)
{
        struct recorder *r = userdata;

        execmatch_want(r->em, cmd, len, outparse_now(r->op));
}

static void on_ctx_line(void *userdata, const char *line, size_t len)
{
        struct recorder *r = userdata;

        logctx_feed_line_bk(r->logctx, line, len, outparse_now(r->op), NULL);
}

int recorder_new(const struct recorder_config *cfg, struct run_info *run, struct recorder **ret)
{
        struct logctx_config lc = cfg->logctx;
        struct buildmetrics_config mc = cfg->metrics;
        struct recorder *r = calloc(1, sizeof(*r));
        int e;

        if (!r)
                return -ENOMEM;
        r->cfg = *cfg;
        r->run = run;
        r->splice = -1;
        summary_init(&r->summary, &cfg->summary);
        lc.hold_s = cfg->interval; /* a work line pins the context one tick */
        e = logctx_new(&lc, &r->logctx);
        mc.ctx_line = on_ctx_line;
        mc.ctx_userdata = r;
        if (e >= 0)
                e = buildmetrics_new(&mc, &r->metrics);
        if (e >= 0)
                e = outparse_new(&(struct outparse_config){.metrics = r->metrics,
                                                           .logctx = r->logctx,
                                                           .on_run = on_run_vertex,
                                                           .userdata = r},
                                 &r->op);
        if (e >= 0)
                e = procscan_new(&r->scan);
        if (e >= 0)
                e = units_new(&r->units);
        if (e >= 0 && !cfg->no_db) {
                r->db_path = cfg->db_path ? strdup(cfg->db_path) : state_path("history.db");
                if (cfg->db_path && !r->db_path)
                        e = -ENOMEM;
                else if (!cfg->db_path && r->db_path)
                        db_fallback(r);
        }
        if (e < 0) {
                recorder_free(r);
                return e;
        }
        r->page_bytes = (double)sysconf(_SC_PAGESIZE);
        *ret = r; /* the clock starts in recorder_open_live: a replay reads none */
        return 0;
}

/* ccache's stats log: the caller's, else one in the log directory; what
 * it holds already is not this build's. */
static void open_statslog(struct recorder *r)
{
        struct stat st;

        if (r->cfg.ccache_statslog && r->cfg.ccache_statslog[0])
                r->statslog = strdup(r->cfg.ccache_statslog);
        else if (r->log_dir)
                r->statslog = runfiles_path(r->log_dir, r->run->run_id, RUNFILE_CCACHE_LOG);
        if (r->statslog && stat(r->statslog, &st) == 0 && S_ISREG(st.st_mode))
                r->statslog_off = (uint64_t)st.st_size;
        if (r->log_dir)
                r->scclog = runfiles_path(r->log_dir, r->run->run_id, RUNFILE_SCCACHE_LOG);
}

const char *recorder_statslog(const struct recorder *r)
{
        return r->statslog;
}

const char *recorder_scclog(const struct recorder *r)
{
        return r->scclog;
}

static void mark_cache(void *userdata, const char *input, char cache)
{
        (void)units_mark_cache(userdata, input, cache);
}

/* Every unit of the source: the client's and its server's preprocessor's
 * (sccache hashes the preprocessed source, hit or not). */
static void mark_cache_all(void *userdata, const char *input, char cache)
{
        while (units_mark_cache(userdata, input, cache) == 0)
                ;
}

/* What ccache said of each compile, on the units of the model. */
static void read_statslog(struct recorder *r, struct units *u)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (r->statslog && u &&
            read_regular_file(r->statslog, r->statslog_off, 64 << 20, &buf, &len) >= 0)
                (void)ccstatslog_parse(buf, len, mark_cache, u);
        free(buf);
        buf = NULL;
        /* sccache's server says of each compile only in its own log: one
         * running before the build logs elsewhere, and no verdict is ours */
        if (r->scclog && u && read_regular_file(r->scclog, 0, 256 << 20, &buf, &len) >= 0 && len)
                (void)scclog_parse(buf, len, mark_cache_all, u);
        else
                r->run->procs.sccache_unknown = r->run->procs.sccache_ran;
}

/* --memory-guard: the job's ledger from the history, and the guard told
 * of every unit by the kernel's accounting (without it: said, none). */
static void open_guard(struct recorder *r)
{
        struct guard_config gc = {
            .headroom_mb = r->cfg.guard_headroom_mb,
            .limit_mb = r->run->memory_max_mb > 0 ? r->run->memory_max_mb : 0,
            .cg = r->cfg.cgroup,
            .proc = sampler_procfs(r->sampler),
        };
        struct store *st;

        if (!r->acct) {
                note(r, "--memory-guard: needs the kernel's accounting of every process (root, "
                        "taskstats): the build runs unguarded");
                return;
        }
        if (ledger_new(&r->ledger) < 0)
                return;
        if (r->db_path && r->run->job && store_open(r->db_path, false, 2000, &st) >= 0) {
                (void)store_job_ledger(st, r->run->job, r->run->host, r->ledger);
                store_close(st);
        }
        gc.ledger = r->ledger;
        if (guard_new(&gc, &r->guard) >= 0)
                acct_set_guard(r->acct, r->guard);
}

int recorder_open_live(struct recorder *r)
{
        struct sampler_config scfg = {
            .root = "/",
            .disk_path = r->cfg.disk_path ? r->cfg.disk_path : ".",
            .compilers = r->cfg.compilers,
        };
        int e = sampler_new(&scfg, &r->sampler);

        /* run: only a command that drives BuildKit has execs to follow;
         * watch: when its lines name RUN steps */
        if (e >= 0 && (!r->cfg.cgroup || bkrun_argv_drives(r->run->argv)))
                e = execmatch_new("/", &r->em);
        if (e < 0)
                return e;
        /* run's build, as root: every process accounted (opened before the
         * build starts, so its first fork is heard) */
        if (r->cfg.cgroup && units_new(&r->xunits) >= 0 &&
            acct_open(sampler_procfs(r->sampler), r->xunits, r->em, &r->acct) < 0) {
                units_free(r->xunits);
                r->xunits = NULL;
        }
        if (r->cfg.cgroup && r->cfg.memory_guard)
                open_guard(r);
        endinputs_snapshot(r->cfg.metrics.ninja_log, &r->ninja);
        if (!r->cfg.no_db && !r->db_path)
                note(r, "no history database: neither XDG_STATE_HOME nor HOME is set");
        (void)recorder_self(&r->self); /* zeros when /proc cannot tell */
        (void)setup_sinks(r);
        if (r->cfg.cgroup)
                open_statslog(r); /* in the log directory setup_sinks chose */
        /* the clock starts once the sinks are open: the run's time is the build's */
        r->start_mono = now_monotonic();
        r->next_tick = r->start_mono; /* a first sample at once: the baseline */
        return 0;
}

int recorder_open_sinks(struct recorder *r)
{
        static const struct sink_ops *const none[] = {NULL};

        return open_list(r, r->cfg.sinks ? r->cfg.sinks : none, NULL);
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
        acct_free(r->acct);
        guard_free(r->guard);
        ledger_free(r->ledger);
        units_free(r->xunits);
        execmatch_free(r->em);
        logctx_free(r->logctx);
        outparse_free(r->op);
        free(r->log_dir);
        free(r->statslog);
        free(r->scclog);
        free(r->db_path);
        free(r->baseline);
        free(r);
}

const char *recorder_log_dir(const struct recorder *r)
{
        return r->log_dir;
}
const struct ninjalog_file *recorder_ninja_snapshot(const struct recorder *r)
{
        return &r->ninja;
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

static void parse_stop(struct recorder *r)
{
        parseq_free(r->parseq);
        r->parseq = NULL;
        r->no_parseq = true;
}

/* Whether the output goes to the parse thread, started on first use. */
static bool parse_start(struct recorder *r)
{
        if (!r->parseq && !r->no_parseq && parseq_new(on_chunk, r, &r->parseq) < 0)
                r->no_parseq = true; /* no thread to be had: parse inline */
        return r->parseq;
}

void recorder_output(struct recorder *r, int stream, const char *buf, size_t len)
{
        /* One clock read per chunk: its lines arrived together, and a read
         * per line was 40% of the parsing time. */
        double now = now_monotonic() - r->start_mono;

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->output)
                        r->ops[i]->output(r->state[i], stream, buf, len);
        if (parse_start(r))
                parseq_push(r->parseq, stream, buf, len, now);
        else
                on_chunk(r, stream, buf, len, now, false);
}

int recorder_output_fd(struct recorder *r, off_t *ret_off)
{
        int i = r->splice;

        /* The parse reads the spliced bytes back on its own thread. */
        if (i < 0 || !parse_start(r))
                return -1;
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
        parseq_sync(r->parseq);
        outparse_line(r->op, line, len, now_monotonic() - r->start_mono);
}

static void on_build_proc(void *userdata, const struct pidstat *ps)
{
        struct recorder *r = userdata;

        proctop_consider(&r->top, ps);
        procscan_consider(r->scan, ps);
        if (r->em)
                execmatch_consider(r->em, ps);
}

/* Before the host sample: the build's counters, and its pids for the
 * per-process part of the sampler. */
static void build_before(struct recorder *r, struct sample *s)
{
        static const long no_pids[1];
        struct cgroup_stats cs;
        char label[PROCTOP_LABEL_MAX + 1];
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
        s->cg_psi = cs.psi;
        s->cg_pids = cs.pids;
        s->cg_pids_peak = cs.pids_peak;
        s->cg_mem_anon_bytes = cs.mem_anon_bytes;
        s->cg_mem_file_bytes = cs.mem_file_bytes;
        victim_report(
            &r->victim, VICTIM_OWN,
            acct_label(r->acct, cs.oom_victim_pid, cs.oom_victim_comm, label, sizeof(label)),
            cs.oom_victim_pid, s);
        proctop_reset(&r->top);
        procscan_begin(r->scan);
        if (r->em)
                execmatch_tick(r->em, sampler_procfs(r->sampler), s->elapsed_s,
                               execmatch_nwant(r->em) > 0);
        /* Never the whole host: without the list, no process at all. */
        if (cgroup_pids(r->cfg.cgroup, &pids, &n) < 0) {
                pids = no_pids;
                n = 0;
        }
        if (r->em)
                pids = execmatch_pids(r->em, pids, n, &n);
        for (size_t i = 0; r->acct && i < n; i++) /* with the execs' */
                acct_member(r->acct, pids[i]);
        sampler_set_pids(r->sampler, pids, n, on_build_proc, r);
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
        for (size_t i = 0; i < n; i++) { /* before the live ones: see units_ended_seen() */
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
        execmatch_fold(r->em, sampler_procfs(r->sampler), s, &r->victim,
                       cgroup_pressure_is_host(r->cfg.cgroup));
        for (size_t i = 0; i < r->top.n; i++) {
                *label[i] = r->top.e[i].label;
                *bytes[i] = (double)r->top.e[i].rss_pages * r->page_bytes;
                *pid[i] = (double)r->top.e[i].pid;
        }
        scan_units(r, s);
}

static void on_watch_proc(void *userdata, const struct pidstat *ps)
{
        struct recorder *r = userdata;

        execmatch_consider(r->em, ps);
}

/* watch has no cgroup of the build: when its lines (--stage-log-dir) name
 * RUN steps, the build's figures are those of their execs alone. */
static void watch_before(struct recorder *r, struct sample *s)
{
        if (!execmatch_nwant(r->em))
                return;
        execmatch_tick(r->em, sampler_procfs(r->sampler), s->elapsed_s, true);
        /* the whole /proc stays walked for the compilers count */
        sampler_set_pids(r->sampler, NULL, 0, on_watch_proc, r);
}

static void watch_after(struct recorder *r, struct sample *s)
{
        if (execmatch_nwant(r->em))
                execmatch_fold(r->em, sampler_procfs(r->sampler), s, &r->victim, false);
}

/* Say at once when the build lost a process to the OOM killer. */
static void warn_oom(struct recorder *r, uint64_t before)
{
        _cleanup_dbuf_ struct dbuf msg = DBUF_INIT;

        if (r->summary.build.noom == before || !r->cfg.warn)
                return;
        if (short_render_oom(&r->summary.build, &msg) >= 0)
                r->cfg.warn(r->cfg.userdata, "%s", msg.p);
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

/* The kernel's records so far (the build's root first made a member: its
 * exec is among them); p: what ppoll returned, or NULL. No acct: nothing. */
static void drain_acct(struct recorder *r, const struct pollfd *p, size_t n)
{
        acct_member(r->acct, r->run->pid);
        acct_poll(r->acct, p, n, r->start_mono);
}

/* The units of the model: the kernel's when it accounted the build's
 * compiles (its BuildKit steps' included; a build whose compiles ran out
 * of its sight has only the scans'), else the scans'; watch has none. */
static const struct units *model_units(struct recorder *r)
{
        struct units *u = r->units;

        if (!r->cfg.cgroup)
                return NULL;
        acct_procs(r->acct, r->start_mono, &r->run->procs);
        if (r->guard) { /* the build is over: nothing is held from here on */
                acct_set_guard(r->acct, NULL);
                guard_account(r->guard, &r->run->guard);
                guard_free(r->guard);
                r->guard = NULL;
        }
        if (r->acct && (units_count(r->xunits) > 0 || units_count(r->units) == 0))
                u = r->xunits;
        read_statslog(r, u);
        return u;
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
        drain_acct(r, NULL, 0);
        if (r->cfg.cgroup)
                build_before(r, &s);
        else if (r->em)
                watch_before(r, &s);
        (void)sampler_take(r->sampler, &s);
        if (r->cfg.cgroup)
                build_after(r, &s);
        else if (r->em)
                watch_after(r, &s);
        /* the parse caught up: the sample sees exactly the lines before it */
        parseq_sync(r->parseq);
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

/* The run against its job's last finished runs on this host with the
 * same outcome, read before the sqlite sink finishes this run's row (a
 * running row is never in the window); before > 0: those recorded before
 * that row (a replay: the same window, so the same findings); < 0: none. A
 * history that cannot be read leaves the summary without a baseline: one
 * note. */
static void derive_baseline(struct recorder *r, const struct run_model *m, int64_t before)
{
        const struct run_info *ri = r->run;
        struct baseline_run cur, *win = NULL;
        struct store *st = NULL;
        int n = 0, e;

        if (before < 0 || !r->db_path || !ri->job || !ri->job[0])
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
                baseline_derive(ri->job, &cur, win, (size_t)n, r->baseline);
        }
        free(win);
        if (e < 0) {
                note(r, "the job's usual: %s", store_strerror(e));
                free(r->baseline);
                r->baseline = NULL;
        }
        r->summary.baseline = r->baseline;
}

/* The model complete (r->model): the run's, its facts (made from its
 * targets when it has none), the summary's run ended, its ninja edges
 * placed, its baseline derived, every sink finished. */
static int finish_model(struct recorder *r, int64_t before)
{
        struct run_model *m = &r->model;
        double off;
        int ret = 0;

        m->run = r->run;
        m->summary = &r->summary;
        if (!m->facts) {
                targets_facts(m->targets, r->run, &r->facts);
                m->facts = &r->facts;
        }
        summary_end_run(&r->summary, r->run);
        r->summary.units = m->units;
        if (units_exact(m->units)) /* every unit seen: the overlap of theirs, not the scans' */
                r->summary.running_peak = jobs_in_flight(m->units);
        r->summary.failure = &m->facts->failure;
        r->summary.ran = targets_commands_ran(m->targets);
        if (m->targets && targets_ninja_offset(m->targets, r->run, &off) == 0) {
                summary_place_edges(&r->summary, m->targets->edgev, m->targets->nedgev, off);
                if (m->targets->path && m->targets->path->jobs && m->units)
                        critpath_units(m->targets->path, m->units, off);
        }
        r->summary.path = m->targets ? m->targets->path : NULL;
        derive_baseline(r, m, before);
        for (size_t i = 0; i < r->nsinks; i++) {
                int e = r->ops[i]->finish ? r->ops[i]->finish(r->state[i], m) : 0;

                r->failed[i] = e < 0;
                /* only -EEXIST is surely a run file's (an -EPERM may be the
                 * textfile directory's) */
                if (e < 0)
                        note(r, "%s: %s", r->ops[i]->name,
                             e == -EEXIST ? runfile_strerror(e) : strerror(-e));
                ret = ret < 0 ? ret : e;
        }
        if (r->cfg.on_finish)
                r->cfg.on_finish(r->cfg.on_finish_userdata, m);
        return ret;
}

int recorder_finish(struct recorder *r)
{
        struct exec_cover cover;
        _cleanup_dbuf_ struct dbuf msg = DBUF_INIT;

        parse_stop(r); /* every line parsed; the end-of-run fetches fork */
        endinputs_read(r->metrics, &r->cfg.metrics, r->run, &r->ninja, r->cfg.note,
                       r->cfg.userdata);
        r->model =
            (struct run_model){.targets = buildmetrics_model(r->metrics), .units = model_units(r)};
        execmatch_finish(r->em, now_monotonic() - r->start_mono, r->model.targets,
                         2 * r->cfg.interval + 1, &cover);
        (void)snprintf(cover.driver, sizeof(cover.driver), "%s", outparse_driver(r->op));
        (void)snprintf(cover.builder, sizeof(cover.builder), "%s", outparse_builder(r->op));
        endinputs_record(r->metrics, &r->cfg.metrics, &cover, r->cfg.note, r->cfg.userdata);
        endinputs_path(r->metrics);
        if (short_render_execs(&cover, &msg) >= 0 && msg.len)
                note(r, "%s", msg.p);
        return finish_model(r, 0);
}

int recorder_finish_recorded(struct recorder *r, const struct run_model *recorded, int64_t row)
{
        parse_stop(r);
        r->model = *recorded;
        return finish_model(r, row > 0 ? row : -1);
}

const struct run_model *recorder_model(const struct recorder *r)
{
        return &r->model;
}

size_t recorder_pollfds(struct recorder *r, struct pollfd *p, size_t cap, double *deadline)
{
        size_t n = 0;

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->pollfds)
                        n += r->ops[i]->pollfds(r->state[i], p + n, cap - n, deadline);
        n += acct_pollfds(r->acct, p + n, cap - n, now_monotonic(), deadline);
        if (r->guard)
                guard_check(r->guard, now_monotonic(), deadline);
        /* this build's execs between ticks: their OOM count before they go */
        if (r->em && r->next_poll < *deadline && execmatch_nwant(r->em))
                *deadline = r->next_poll;
        return n;
}

void recorder_poll(struct recorder *r, const struct pollfd *p, size_t n)
{
        double now = now_monotonic();

        for (size_t i = 0; i < r->nsinks; i++)
                if (r->ops[i]->poll)
                        r->ops[i]->poll(r->state[i], p, n, now);
        drain_acct(r, p, n);
        if (r->em && now >= r->next_poll && execmatch_nwant(r->em)) {
                execmatch_poll(r->em, sampler_procfs(r->sampler), now - r->start_mono);
                r->next_poll = now + MIN(EXECMATCH_POLL_S, r->cfg.interval);
        }
}

bool recorder_sink_failed(const struct recorder *r, const char *name)
{
        for (size_t i = 0; r && i < r->nsinks; i++)
                if (strcmp(r->ops[i]->name, name) == 0)
                        return r->failed[i];
        return true; /* not open: nothing there to name */
}

/* A torn or junk row (s NULL) is counted in the summary. */
static void csv_row(void *userdata, const struct sample *s)
{
        struct recorder *r = userdata;

        if (s)
                record(r, s);
        else
                r->summary.skipped_rows++;
}

int64_t recorder_replay_csv(struct recorder *r, const char *buf, size_t len)
{
        return samplecsv_read(buf, len, csv_row, r);
}

static int history_row(void *userdata, const struct sample *s)
{
        record(userdata, s);
        return 0;
}

int64_t recorder_replay_history(struct recorder *r, struct store *st, int64_t id)
{
        return store_samples_each(st, id, history_row, r);
}

const struct summary *recorder_summary(const struct recorder *r)
{
        return &r->summary;
}
