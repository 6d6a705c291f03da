/* SPDX-License-Identifier: MIT */
/* buildtel run: the build as a child, its output passed through untouched,
 * sampled on a monotonic grid, one final sample after it exits. The event
 * loop is the pipeline's (pipeline/loop.c), fed by the child source. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-prune.h"
#include "cmd/cmd-run.h"
#include "util/macro.h"
#include "cmd/cmd-trace.h"
#include "cmd/cmd.h"
#include "view/live.h"
#include "pipeline/loop.h"
#include "render/summary.h"
#include "platform/cgroup.h"
#include "platform/child.h"
#include "platform/procfs.h"
#include "platform/tty.h"
#include "parse/ninjaargv.h"
#include "util/util.h"

/* The terminal goes to the build only when stdin and stdout are both it:
 * in `buildtel run -- make | less` it stays with less. */
static bool same_terminal(int a, int b)
{
        struct stat sa, sb;

        return isatty(a) && isatty(b) && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
               sa.st_rdev == sb.st_rdev;
}

/* Why cmd cannot run (errno e); the status a shell gives. */
static int cannot_run(const char *cmd, int e)
{
        fprintf(stderr, "buildtel: cannot run '%s': %s\n", cmd, strerror(e));
        return e == ENOENT ? EXIT_BT_NOTFOUND : EXIT_BT_NOEXEC;
}

/* The build's cgroup, made before the build exists. Returns 0, or -1
 * after printing why. */
static int make_cgroup(const struct common_opts *o, const struct run_info *ri, struct cgroup **ret)
{
        char why[768] = "";
        struct cgroup_config cfg = {
            .mode = o->cgroup_mode,
            .root = "/",
            .memory_max = o->memory_max,
            .memory_high = o->memory_high,
            .run_id = ri->run_id,
            .note = common_note,
            .kill_leftovers = o->kill_leftovers,
            .use_systemd = true,
            .why = why,
            .why_cap = sizeof(why),
            .test_unjoinable = getenv("BUILDTEL_TEST_CGROUP_UNJOINABLE") &&
                               strcmp(getenv("BUILDTEL_TEST_CGROUP_UNJOINABLE"), "1") == 0,
        };
        int e;

        if (cfg.mode == CGROUP_MODE_NONE && (cfg.memory_max || cfg.memory_high)) {
                fprintf(stderr, "buildtel run: --memory-max and --memory-high need a cgroup, not "
                                "--cgroup=none\n");
                return -1;
        }
        e = cgroup_new(&cfg, ret);
        if (e < 0 && cfg.mode == CGROUP_MODE_AUTO && !cfg.memory_max && !cfg.memory_high) {
                fprintf(stderr,
                        "buildtel: note: no cgroup for the build (%s): --cgroup=none, its figures "
                        "are estimates from /proc\n",
                        why[0]         ? why
                        : e == -ENOENT ? "none mounted"
                                       : strerror(-e));
                cfg.mode = CGROUP_MODE_NONE;
                e = cgroup_new(&cfg, ret);
        }
        if (e < 0) {
                fprintf(stderr, "buildtel run: cannot make the build's cgroup (--cgroup=%s): %s\n",
                        cgroup_mode_name(cfg.mode),
                        why[0]             ? why
                        : e == -ENOENT     ? "its hierarchies are not mounted here"
                        : e == -EOPNOTSUPP ? "the memory limit did not hold"
                                           : strerror(-e));
                return -1;
        }
        return 0;
}

static char **copy_argv(char **argv, size_t n)
{
        char **v = calloc(n + 1, sizeof(char *));

        for (size_t i = 0; v && i < n; i++)
                if (!(v[i] = strdup(argv[i])))
                        break;
        return v;
}

/* The .ninja_log of `ninja -C DIR`, `cmake --build DIR` (Ninja
 * generator), `meson compile -C DIR`, when --ninja-log did not name one:
 * malloc'd, NULL when none. */
static char *ninja_log_of(char **argv)
{
        enum ninjaargv_need need;
        const char *dir;
        _cleanup_free_ char *bn = NULL;
        char *log;

        if (ninjaargv_dir(argv, &dir, &need) <= 0 || asprintf(&log, "%s/.ninja_log", dir) < 0)
                return NULL;
        if (need == NINJAARGV_NONE || access(log, F_OK) == 0)
                return log;
        if (asprintf(&bn, "%s/build.ninja", dir) < 0)
                bn = NULL;
        if (bn && access(bn, F_OK) == 0)
                return log;
        free(log);
        return NULL;
}

struct run {
        struct common_opts *o;
        struct run_info ri;
        struct cgroup *cg;
        struct recorder *rec;
        struct source_child *src;
        sigset_t old_mask;
        struct sigaction old_pipe, old_chld;
        const struct child_fds *given; /* what we were given, for the build */
        int sfd;
        struct live *live;      /* --live on a terminal; NULL: off */
        struct trace_run trace; /* --trace-file */
};

/* The build is where its cgroup is, or the run falls back to mode none
 * (its figures estimates) with one note. With a memory limit there is
 * nothing to fall back to: the build is ended. Returns 0 or -1. */
static int check_joined(struct run *R)
{
        long pid = source_child_pid(R->src);
        int e = cgroup_verify(R->cg, (pid_t)pid, source_child_join_error(R->src));

        if (e >= 0)
                return 0;
        if (R->o->memory_max || R->o->memory_high) {
                fprintf(stderr,
                        "buildtel run: the build could not join its cgroup %s (%s): no memory "
                        "limit holds; it is stopped\n",
                        cgroup_path(R->cg), strerror(-e));
                (void)kill(-(pid_t)pid, SIGKILL);
                (void)kill((pid_t)pid, SIGKILL);
                return -1;
        }
        fprintf(stderr,
                "buildtel: note: the build could not join its cgroup %s (%s): --cgroup=none, its "
                "figures are estimates from /proc\n",
                cgroup_path(R->cg), strerror(-e));
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        return cgroup_fallback_none(R->cg, (long)getpid()) < 0 ? -1 : 0;
}

static void live_on_sample(void *userdata, const struct sample *s)
{
        struct run *R = userdata;

        live_sample(R->live, s, now_monotonic());
}

/* --live: the status line on stderr's terminal, or nothing at all. */
static void live_start(struct run *R)
{
        const char *nc = getenv("NO_COLOR");
        struct live_limits lim = {
            .near_oom_mb = R->o->rec.summary.near_oom_mb,
            .low_disk_gb = R->o->rec.summary.low_disk_gb,
        };

        if (!R->o->live || !tty_usable(STDERR_FILENO))
                return;
        if (live_new(STDERR_FILENO, &lim, !(nc && *nc), &R->live) < 0) {
                R->live = NULL;
                return;
        }
        /* resize; Ctrl-Z when the terminal is ours: the line steps aside */
        (void)loop_signalfd_add(R->sfd, true, (const int[]){SIGWINCH, SIGTSTP}, 2);
        R->o->rec.on_sample = live_on_sample;
        R->o->rec.on_sample_userdata = R;
}

/* Spawn the build in its cgroup, with the signal mask and SIGPIPE
 * disposition we had. Returns 0, or the exit status after printing why
 * and recording the attempt. */
static int spawn(struct run *R, char **argv, bool subreaper)
{
        int cg_fds[_CG_H_MAX];
        struct child_config ccfg = {
            .argv = argv,
            .pipes = true,
            /* stdout and stderr one terminal: the build gets one too (a
             * pty we read), as it would without us; not beside --live's
             * line, which owns the terminal's last row */
            .pty = !R->o->no_pty && !R->live && same_terminal(STDOUT_FILENO, STDERR_FILENO),
            .foreground =
                same_terminal(STDIN_FILENO, STDOUT_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp(),
            .sigmask = &R->old_mask,
            .sigpipe = &R->old_pipe,
            .sigchld = &R->old_chld,
            .fds = R->given,
            .cgroup_procs_fds = cg_fds,
        };
        struct otlp_child_env env;
        int e, ret;

        ccfg.n_cgroup_procs_fds = cgroup_procs_fds(R->cg, cg_fds, ARRAY_SIZE(cg_fds));
        /* With spans exported the build's TRACEPARENT names the run span. */
        e = common_otlp_child_env(R->o, &env);
        ccfg.envp = env.envp;
        if (e >= 0)
                e = source_child_open(&ccfg, R->o->grace, subreaper, &R->src);
        if (e >= 0 && ccfg.pty) /* its size follows ours */
                (void)loop_signalfd_add(R->sfd, true, (const int[]){SIGWINCH}, 1);
        common_otlp_child_env_release(&env);
        if (e >= 0 && check_joined(R) < 0) {
                R->ri.exit_code = EXIT_BT_INTERNAL;
                return EXIT_BT_INTERNAL;
        }
        if (e >= 0)
                return 0;
        ret = cannot_run(argv[0], -e);
        /* The attempt is on record, with the status a shell gives. */
        R->ri.end_epoch = now_realtime();
        R->ri.finished = true;
        R->ri.exit_code = ret;
        if (R->rec && R->o->trace_file)
                trace_run_edges(&R->trace, R->rec, &R->ri, true);
        if (R->rec)
                (void)recorder_finish(R->rec);
        return ret;
}

/* The retention limit, after the run is on record: one line when it
 * removed runs. Never this run, nor a running one. */
static void prune_at_end(struct run *R)
{
        const struct common_opts *o = R->o;
        struct retention_policy p;
        struct prune_result res;

        if (o->rec.no_db || !R->rec || prune_limit_of("run", o, &p) < 0 ||
            !retention_policy_any(&p))
                return;
        if (prune_apply(o->rec.db_path, recorder_log_dir(R->rec), o->rec.prom.textfile_dir, &p,
                        R->ri.run_id, false, false, &res) < 0 ||
            res.runs == 0 || o->rec.quiet)
                return;
        fprintf(stderr,
                "buildtel: pruned %llu old run%s (%s): %llu kept (%s); limits --keep-runs %llu, "
                "--keep-size %s (`buildtel help prune`)\n",
                (unsigned long long)res.runs, res.runs == 1 ? "" : "s",
                BYTES_STR((double)res.bytes), (unsigned long long)res.kept_runs,
                BYTES_STR((double)res.kept_bytes), (unsigned long long)p.keep,
                p.max_bytes ? BYTES_STR((double)p.max_bytes) : "no size limit");
}

/* From the spawned build to its exit status, the files written. */
static int supervise(struct run *R)
{
        struct source_live lv = {.live = R->live,
                                 .output = live_output,
                                 .update = live_update,
                                 .deadline = live_deadline,
                                 .resize = live_resize,
                                 .suspend = live_suspend,
                                 .resume = live_resume};
        int e, status, sig;

        R->ri.pid = source_child_pid(R->src);
        /* The OOM killer should take the build's process, not the recorder;
         * the build forked before this and keeps its own value. Lowering
         * needs privilege; without it this simply fails. */
        (void)procfs_set_self_oom_score_adj(-500);
        source_child_set_live(R->src, R->live ? &lv : NULL);
        e = loop_run(&source_child, R->src, R->rec, R->sfd);
        if (e < 0) /* only ppoll fails it: the build's status still stands */
                fprintf(stderr, "buildtel: warning: %s\n", strerror(-e));
        status = source_child_wait(R->src, R->sfd, &sig);
        /* The terminal clean before the summary is printed. */
        source_child_set_live(R->src, NULL);
        live_free(R->live);
        R->live = NULL;
        /* After the final sample: what the build left running goes with
         * its cgroup. */
        cgroup_free(R->cg);
        R->cg = NULL;

        R->ri.end_epoch = now_realtime();
        R->ri.finished = true;
        R->ri.exit_code = status;
        R->ri.term_signal = sig;
        if (source_child_exit_comm(R->src)[0]) {
                free(R->ri.exit_comm);
                R->ri.exit_comm = strdup(source_child_exit_comm(R->src)); /* NULL: unknown */
        }
        if (R->rec) {
                if (R->o->trace_file)
                        trace_run_edges(&R->trace, R->rec, &R->ri, false);
                (void)recorder_finish(R->rec);
                if (R->o->trace_file)
                        (void)trace_run_report(&R->trace, R->rec, R->ri.run_id);
                common_report(R->o, R->rec);
                prune_at_end(R);
        }
        /* Died of Ctrl-C or Ctrl-\: we end by it too (main), else a shell
         * runs the next command of the list, the script's loop goes on. */
        if (sig == SIGINT || sig == SIGQUIT)
                return EXIT_BT_SIGNAL(sig, source_child_keyboard_signal(R->src));
        return status;
}

int cmd_run_build(struct common_opts *o, char **argv, size_t argc, const struct child_fds *given)
{
        struct sigaction ign = {.sa_handler = SIG_IGN}, dfl = {.sa_handler = SIG_DFL};
        struct run R = {.o = o, .sfd = -1, .given = given};
        _cleanup_free_ char *ninja_log = NULL;
        bool subreaper = false;
        int e, ret = EXIT_BT_INTERNAL;

        /* Signals arrive on the signalfd; the build gets the old mask. */
        R.sfd = loop_signalfd(true, &R.old_mask);
        if (R.sfd < 0) {
                fprintf(stderr, "buildtel: signalfd: %s\n", strerror(-R.sfd));
                return ret;
        }
        sigaction(SIGPIPE, &ign, &R.old_pipe);
        /* Started with SIGCHLD ignored, the kernel would reap the build for
         * us and wait would never see it: default for us, the build gets
         * what we were given. */
        sigaction(SIGCHLD, &dfl, &R.old_chld);
        if (common_run_info(o, "run", &R.ri) < 0 || !(R.ri.argv = copy_argv(argv, argc)) ||
            common_run_job(o, &R.ri) < 0) {
                fprintf(stderr, "buildtel: out of memory\n");
                goto out;
        }
        /* A command that cannot start is not a run: one line, the status
         * a shell gives, and nothing made (no cgroup, row or file). */
        e = child_exec_check(argv[0], getenv("PATH"));
        if (e < 0) {
                ret = cannot_run(argv[0], -e);
                goto out;
        }
        /* A log directory named that cannot be written is a bad option:
         * the files would be elsewhere than asked (only the default falls back). */
        if (o->rec.log_dir && (e = recorder_log_dir_usable(o->rec.log_dir)) < 0) {
                fprintf(stderr, "buildtel: --log-dir '%s': %s\n", o->rec.log_dir, strerror(-e));
                goto out;
        }
        if (make_cgroup(o, &R.ri, &R.cg) < 0)
                goto out;
        /* no cgroup: the build's orphans come to us, their CPU counted */
        if (cgroup_mode(R.cg) == CGROUP_MODE_NONE)
                subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
        o->rec.cgroup = R.cg;
        o->rec.summary.mem_cap_mb = (double)o->memory_max / (1 << 20); /* 0: none */
        R.ri.memory_max_mb = o->rec.summary.mem_cap_mb;
        o->rec.memory_guard = o->memory_guard;
        o->rec.guard_headroom_mb = !isnan(o->guard_headroom_mb) ? o->guard_headroom_mb
                                   : o->memory_max              ? MAX(64.0, R.ri.memory_max_mb / 16)
                                                                : 256.0;
        if (!o->rec.metrics.ninja_log && (ninja_log = ninja_log_of(argv))) {
                o->rec.metrics.ninja_log = ninja_log;
                o->rec.metrics.ninja_log_found = true;
        }
        live_start(&R);
        /* The recorder's clock starts, and the baseline sample is taken,
         * before the build exists: nothing it does can precede them. */
        if (o->trace_file)
                trace_run_init(&R.trace, &o->rec);
        o->rec.ccache_statslog = getenv("CCACHE_STATSLOG");
        e = recorder_new(&o->rec, &R.ri, &R.rec);
        if (e >= 0)
                e = recorder_open_live(R.rec);
        if (e < 0) {
                recorder_free(R.rec);
                fprintf(stderr, "buildtel: warning: not recording: %s\n", strerror(-e));
                R.rec = NULL;
        } else {
                (void)recorder_tick(R.rec);
                /* ccache says of each compile whether it hit: into the run's files */
                if (!o->rec.ccache_statslog && recorder_statslog(R.rec))
                        (void)setenv("CCACHE_STATSLOG", recorder_statslog(R.rec), 1);
                /* sccache's server says of each compile in its log, if the
                 * build starts it; clients log nothing of these modules */
                if (!getenv("SCCACHE_LOG") && !getenv("SCCACHE_ERROR_LOG") &&
                    recorder_scclog(R.rec) &&
                    setenv("SCCACHE_ERROR_LOG", recorder_scclog(R.rec), 1) == 0)
                        (void)setenv("SCCACHE_LOG",
                                     "sccache::compiler::compiler=debug,sccache::server=debug", 1);
        }
        ret = spawn(&R, argv, subreaper);
        if (ret == 0)
                ret = supervise(&R);
        /* A signal that came during the final exports cut them short; it
         * must not kill us when the mask is restored: the status is the
         * build's. */
        loop_signalfd_drain(R.sfd);
out:
        sigaction(SIGPIPE, &R.old_pipe, NULL);
        sigaction(SIGCHLD, &R.old_chld, NULL);
        sigprocmask(SIG_SETMASK, &R.old_mask, NULL);
        live_free(R.live);
        recorder_free(R.rec);
        trace_run_release(&R.trace);
        cgroup_free(R.cg);
        source_child.close(R.src);
        closep(&R.sfd);
        run_info_release(&R.ri);
        return ret;
}

int cmd_run(int argc, char **argv)
{
        struct common_opts o;
        const char *env = getenv("BUILDTEL");
        int k, ret = EXIT_BT_INTERNAL;
        /* First: what we were given is what the build gets (nothing we open
         * later), and a closed 0-2 is held by /dev/null, not our files. */
        struct child_fds given;

        if (child_fds_take(&given) < 0)
                given.overflow = true;
        k = cmd_parse_options(CMDS_RUN, "run", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (getenv("BUILDTEL_LIVE") && strcmp(getenv("BUILDTEL_LIVE"), "1") == 0)
                o.live = true;
        if (k >= argc) {
                fprintf(stderr, "buildtel run: no command given\n");
                cmd_print_short_usage("run");
                goto out;
        }
        if (o.off || (env && strcmp(env, "0") == 0)) {
                child_fds_unreserve(&given);
                execvp(argv[k], argv + k);
                ret = cannot_run(argv[k], errno);
                goto out;
        }
        if (common_otlp_load(&o, "run") < 0)
                goto out;
        ret = cmd_run_build(&o, argv + k, (size_t)(argc - k), &given);
out:
        common_opts_release(&o);
        return ret;
}
