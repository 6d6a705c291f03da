/* SPDX-License-Identifier: MIT */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cmd/cmd.h"
#include "version.h" /* vcs_tag(): BUILDTEL_VERSION_GIT */

static const struct cmd commands[] = {
    {"run", cmd_run, "run a build and record what it and the machine did"},
    {"bench", cmd_bench, "run builds several times and compare them (hyperfine-like)"},
    {"watch", cmd_watch, "attach to a running build by pid and record the same"},
    {"summarize", cmd_summarize, "recompute a run's summary from its CSV or the history"},
    {"report", cmd_report, "the HTML report (or Markdown job summary) of a run"},
    {"status", cmd_status, "recent runs from the history database"},
    {"top", cmd_top, "a live view of the running and recent builds"},
    {"prune", cmd_prune, "remove the oldest finished runs' files and history rows"},
    {"inspect", cmd_inspect, "one run in detail (the latest by default)"},
    {"compare", cmd_compare, "two runs side by side, what changed most first"},
    {"plan", cmd_plan, "the -j that fits a machine, and the pool for the heavy units"},
    {"layers", cmd_layers, "layer-cache reuse per target, from the latest builds"},
    {"cache", cmd_cache, "compiler-cache figures now, and the change since last time"},
    {"import-buildx", cmd_import_buildx, "a build's figures from docker buildx history"},
    {"export", cmd_export, "send a finished run to an OTLP collector again"},
    {"help", cmd_help, "show the help of a command"},
};

void main_print_help(FILE *f)
{
        fprintf(f, "usage: buildtel [--version] [--help] COMMAND [ARGS]\n\n"
                   "Record what a long build did and what the machine was doing while it ran.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\nSee 'buildtel help COMMAND' or man buildtel(1).\n");
}

/* End by the signal of an EXIT_BT_SIGNAL return, as the build did: its
 * default action, unblocked. SIGQUIT's default dumps core: not ours
 * (RLIMIT_CORE 0), buildtel did not fail; the build's core is its own.
 * Started with the signal ignored, we are not to die of it: 128+sig. */
static int die_by_signal(int ret)
{
        struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
        const struct rlimit no_core = {0, 0};
        int sig = -ret & 0xff;
        sigset_t set;

        if (sigaction(sig, NULL, &old) < 0 || old.sa_handler == SIG_IGN)
                return exit_bt_status(ret);
        fflush(stdout);
        fflush(stderr);
        if (sig == SIGQUIT)
                (void)setrlimit(RLIMIT_CORE, &no_core);
        (void)sigaction(sig, &dfl, NULL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        (void)sigprocmask(SIG_UNBLOCK, &set, NULL);
        (void)((-ret & 0x100) ? kill(0, sig) : raise(sig));
        return exit_bt_status(ret);
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                main_print_help(stderr);
                return EXIT_BT_USAGE;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                main_print_help(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
                printf("buildtel %s\n", BUILDTEL_VERSION_GIT);
                return 0;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0) {
                        int ret = commands[i].fn(argc - 1, argv + 1);

                        return ret < 0 ? die_by_signal(ret) : ret;
                }
        fprintf(stderr, "buildtel: '%s' is not a command; see 'buildtel --help'\n", argv[1]);
        return EXIT_BT_USAGE;
}
