/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/* Exit codes of buildtel's own (the build's status passes through). */
enum {
        EXIT_BT_OK = 0,
        EXIT_BT_USAGE = 2,      /* bad command line (subcommands other than run/watch) */
        EXIT_BT_INTERNAL = 125, /* buildtel itself failed before the build ran */
        EXIT_BT_NOEXEC = 126,   /* COMMAND found but not executable */
        EXIT_BT_NOTFOUND = 127, /* COMMAND not found */
};

/* What a command returns to end buildtel by signal sig instead of an exit
 * status, once its files are written (main: raised with its default
 * action): the build died of SIGINT or SIGQUIT, and a shell goes on with a
 * list or a script only when its child did not. group: to our whole
 * process group, as the terminal would have sent it had the build not had
 * the terminal to itself (a script running us then stops too). */
#define EXIT_BT_SIGNAL(sig, group) (-((sig) | ((group) ? 0x100 : 0)))
/* The exit status of a command's return: 128+sig for EXIT_BT_SIGNAL. */
static inline int exit_bt_status(int ret)
{
        return ret < 0 ? 128 + (-ret & 0xff) : ret;
}

struct cmd {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary; /* one line for --help */
};

int cmd_run(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_layers(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import_buildx(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Print the usage of one command to stdout; -ENOENT if unknown. */
int cmd_print_usage(const char *name);

/* The top-level help (main.c). */
void main_print_help(FILE *f);
