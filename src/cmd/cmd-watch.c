/* SPDX-License-Identifier: MIT */
/* buildtel watch --pid PID: attach to a build that is already running,
 * sample the same columns, and end when it exits. A pidfd tells us the
 * moment it exits; without one, the process start time guards against a
 * reused pid. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "platform/follow.h"
#include "platform/procfs.h"
#include "util/util.h"

enum {
        OPT_PID = OPT_COMMON_END,
        OPT_STAGE_LOG_DIR,
};

static int pidfd_open_compat(long pid)
{
#ifdef SYS_pidfd_open
        return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
        errno = ENOSYS;
        return -1;
#endif
}

/* Is pid still the process we attached to? */
static bool same_process(struct procfs *pfs, long pid, uint64_t starttime)
{
        struct pidstat ps;

        if (procfs_pidstat(pfs, pid, &ps) < 0)
                return false;
        return ps.starttime == starttime && ps.state != 'Z' && ps.state != 'X';
}

static char **cmdline_argv(struct procfs *pfs, long pid)
{
        char buf[8192];
        ssize_t n = procfs_cmdline(pfs, pid, buf, sizeof(buf) - 1);
        size_t count = 0, k = 0;
        char **argv;

        if (n < 0)
                n = 0;
        buf[n] = '\0';
        for (ssize_t i = 0; i < n; i++)
                count += buf[i] == '\0';
        if (n > 0 && buf[n - 1] != '\0')
                count++;
        argv = calloc(count + 1, sizeof(char *));
        if (!argv)
                return NULL;
        for (ssize_t i = 0; i < n && k < count; i += (ssize_t)strlen(buf + i) + 1)
                if (!(argv[k++] = strdup(buf + i)))
                        break;
        return argv;
}

static void on_log_line(void *userdata, const char *line, size_t len, bool truncated)
{
        recorder_log_line(userdata, line, len);
}

int cmd_watch(int argc, char **argv)
{
        static const struct option longopts[] = {
            COMMON_LONGOPTS,
            {"pid", required_argument, NULL, OPT_PID},
            {"watch-pid", required_argument, NULL, OPT_PID},
            {"stage-log-dir", required_argument, NULL, OPT_STAGE_LOG_DIR},
            {0},
        };
        struct common_opts o;
        struct run_info ri = {0};
        struct recorder *rec = NULL;
        struct procfs *pfs = NULL;
        struct follow *fol = NULL;
        struct dbuf short_sum = DBUF_INIT;
        struct pidstat ps;
        const char *log_dir_arg = NULL;
        sigset_t mask, old_mask;
        uint64_t pid = 0;
        int c, e, sfd = -1, pidfd = -1, ret = EXIT_BT_USAGE, got_signal = 0;

        common_opts_init(&o);
        optind = 1;
        while ((c = getopt_long(argc, argv, "+hp:", longopts, NULL)) != -1) {
                int h = common_opts_parse(&o, c, optarg, "watch");
                if (h < 0)
                        goto out;
                if (h > 0)
                        continue;
                switch (c) {
                case 'p':
                case OPT_PID:
                        if (parse_u64_str(optarg, &pid) < 0 || pid == 0 || pid > 4194304) {
                                fprintf(stderr,
                                        "buildtel watch: --pid takes a process id, not '%s'\n",
                                        optarg);
                                goto out;
                        }
                        break;
                case OPT_STAGE_LOG_DIR:
                        log_dir_arg = optarg;
                        break;
                case 'h':
                        o.help = true;
                        break;
                default:
                        fputs("usage: buildtel watch --pid PID [OPTIONS]\n", stderr);
                        goto out;
                }
        }
        if (o.help) {
                cmd_print_usage("watch");
                ret = 0;
                goto out;
        }
        if (!pid || optind < argc) {
                fputs("usage: buildtel watch --pid PID [OPTIONS]\n", stderr);
                goto out;
        }

        ret = 1;
        e = procfs_new("/", &pfs);
        if (e < 0) {
                fprintf(stderr, "buildtel watch: cannot read /proc: %s\n", strerror(-e));
                goto out;
        }
        /* Open the pidfd first, then read the start time: if the pid was
         * reused in between, the start time no longer matches later. */
        pidfd = pidfd_open_compat((long)pid);
        e = procfs_pidstat(pfs, (long)pid, &ps);
        if (e < 0 || ps.state == 'Z') {
                fprintf(stderr, "buildtel watch: no process %llu\n", (unsigned long long)pid);
                goto out;
        }
        if (log_dir_arg) {
                e = follow_new(log_dir_arg, &fol);
                if (e < 0) {
                        fprintf(stderr, "buildtel watch: cannot read '%s': %s\n", log_dir_arg,
                                strerror(-e));
                        goto out;
                }
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigprocmask(SIG_BLOCK, &mask, &old_mask);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                fprintf(stderr, "buildtel watch: signalfd: %s\n", strerror(errno));
                goto out_sig;
        }
        if (common_otlp_load(&o, "watch") < 0) {
                ret = EXIT_BT_USAGE;
                goto out_sig;
        }
        if (common_run_info(&o, "watch", &ri) < 0 || !(ri.argv = cmdline_argv(pfs, (long)pid))) {
                fprintf(stderr, "buildtel watch: out of memory\n");
                goto out_sig;
        }
        ri.pid = (long)pid;
        e = recorder_new(&o.rec, &ri, &rec);
        if (e < 0) {
                fprintf(stderr, "buildtel watch: %s\n", strerror(-e));
                goto out_sig;
        }

        for (;;) {
                /* a negative fd (no pidfd) is ignored by poll */
                struct pollfd p[2 + RECORDER_POLLFDS] = {
                    {.fd = sfd, .events = POLLIN},
                    {.fd = pidfd, .events = POLLIN},
                };
                double deadline = recorder_next_tick(rec), wait;
                size_t np = 2 + recorder_pollfds(rec, p + 2, RECORDER_POLLFDS, &deadline);
                struct signalfd_siginfo si;
                int n;

                wait = deadline - now_monotonic();
                /* always a turn of poll: an export may be due before the tick */
                {
                        n = poll(p, (nfds_t)np, (int)ceil(MAX(wait, 0.0) * 1000));
                        if (n < 0 && errno != EINTR)
                                break;
                        recorder_poll(rec, p + 2, np - 2);
                        if (p[0].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                                got_signal = (int)si.ssi_signo;
                                break;
                        }
                        if (pidfd >= 0 && p[1].revents)
                                break;
                        if (now_monotonic() < recorder_next_tick(rec))
                                continue;
                }
                if (pidfd < 0 && !same_process(pfs, (long)pid, ps.starttime))
                        break;
                if (fol)
                        (void)follow_poll(fol, on_log_line, rec);
                (void)recorder_tick(rec);
        }

        /* The final sample, right after the exit (or the interrupt). */
        if (fol)
                (void)follow_poll(fol, on_log_line, rec);
        (void)recorder_tick(rec);
        ri.end_epoch = now_realtime();
        ri.finished = true;
        (void)recorder_finish(rec, &short_sum);
        common_report(&o, rec, &short_sum);
        ret = got_signal ? 128 + got_signal : 0;

out_sig:
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
out:
        recorder_free(rec);
        follow_free(fol);
        procfs_free(pfs);
        closep(&sfd);
        closep(&pidfd);
        dbuf_release(&short_sum);
        run_info_release(&ri);
        common_opts_release(&o);
        return ret;
}
