/* SPDX-License-Identifier: MIT */
/* buildtel watch --pid PID: attach to a build that is already running,
 * sample the same columns, and end when it exits. The event loop is the
 * pipeline's (pipeline/loop.c), fed by the watched-pid source. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "pipeline/loop.h"
#include "platform/follow.h"
#include "util/util.h"

/* Attached: from the recorder's start to the summary. Returns the exit
 * status or EXIT_BT_SIGNAL. */
static int watch(struct common_opts *o, struct source_pid *src, int sfd)
{
        struct run_info ri = {0};
        struct recorder *rec = NULL;
        int e, sig, ret = 1;

        if (common_run_info(o, "watch", &ri) < 0 || !(ri.argv = source_pid_argv(src)) ||
            common_run_job(o, &ri) < 0) {
                fprintf(stderr, "buildtel watch: out of memory\n");
                goto out;
        }
        ri.pid = (long)o->pid;
        e = recorder_new(&o->rec, &ri, &rec);
        if (e >= 0)
                e = recorder_open_live(rec);
        if (e < 0) {
                fprintf(stderr, "buildtel watch: %s\n", strerror(-e));
                goto out;
        }
        e = loop_run(&source_pid, src, rec, sfd);
        if (e < 0)
                fprintf(stderr, "buildtel watch: warning: %s\n", strerror(-e));
        ri.end_epoch = now_realtime();
        ri.finished = true;
        (void)recorder_finish(rec);
        common_report(o, rec);
        sig = source_pid_signal(src);
        /* Ctrl-C or Ctrl-\: we end by it (main), so a shell stops its list. */
        ret = sig == SIGINT || sig == SIGQUIT ? EXIT_BT_SIGNAL(sig, false) : sig ? 128 + sig : 0;
out:
        recorder_free(rec);
        run_info_release(&ri);
        return ret;
}

int cmd_watch(int argc, char **argv)
{
        struct common_opts o;
        struct source_pid *src = NULL;
        struct follow *fol = NULL;
        sigset_t old_mask;
        int k, e, sfd = -1, ret = EXIT_BT_USAGE;

        k = cmd_parse_options(CMDS_WATCH, "watch", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (!o.pid || k < argc) {
                cmd_print_short_usage("watch");
                goto out;
        }

        ret = 1;
        if (o.rec.log_dir && (e = recorder_log_dir_usable(o.rec.log_dir)) < 0) {
                fprintf(stderr, "buildtel watch: --log-dir '%s': %s\n", o.rec.log_dir,
                        strerror(-e));
                goto out;
        }
        e = source_pid_open((long)o.pid, &src);
        if (e == -ESRCH) {
                fprintf(stderr, "buildtel watch: no process %llu\n", (unsigned long long)o.pid);
                goto out;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel watch: cannot read /proc: %s\n", strerror(-e));
                goto out;
        }
        if (o.stage_log_dir) {
                e = follow_new(o.stage_log_dir, &fol);
                if (e < 0) {
                        fprintf(stderr, "buildtel watch: cannot read '%s': %s\n", o.stage_log_dir,
                                strerror(-e));
                        goto out;
                }
                e = source_pid_follow(src, fol);
                if (e < 0) {
                        fprintf(stderr, "buildtel watch: %s\n", strerror(-e));
                        goto out;
                }
        }
        sfd = loop_signalfd(false, &old_mask);
        if (sfd < 0) {
                fprintf(stderr, "buildtel watch: signalfd: %s\n", strerror(-sfd));
                goto out;
        }
        if (common_otlp_load(&o, "watch") < 0)
                ret = EXIT_BT_USAGE;
        else
                ret = watch(&o, src, sfd);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
out:
        source_pid.close(src);
        follow_free(fol);
        closep(&sfd);
        common_opts_release(&o);
        return ret;
}
