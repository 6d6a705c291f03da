/* SPDX-License-Identifier: MIT */
#include "cmd/cmd-common.h"
#include "render/report.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "parse/runfiles.h"
#include "render/prom.h"
#include "platform/child.h"
#include "platform/vcs.h"
#include "util/macro.h"
#include "util/util.h"

void common_opts_init(struct common_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->rec.interval = 2.0;
        o->rec.disk_path = ".";
        o->rec.summary.near_oom_mb = 4096;
        o->rec.summary.low_disk_gb = 20;
        o->rec.note = common_note;
        o->rec.warn = common_warn;
        o->grace = 2.0;
        o->cgroup_mode = CGROUP_MODE_AUTO;
}

void common_opts_release(struct common_opts *o)
{
        otel_config_release(&o->otlp);
        free(o->compilers_buf);
        free(o->compilers);
        o->compilers_buf = NULL;
        o->compilers = NULL;
}

static bool run_id_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-')
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
                        return false;
        return true;
}

static int parse_compilers(struct common_opts *o, const char *arg)
{
        size_t n = 1;
        char *p;

        common_opts_release(o);
        o->compilers_buf = strdup(arg);
        if (!o->compilers_buf)
                return -ENOMEM;
        for (const char *c = arg; *c; c++)
                n += *c == ',';
        o->compilers = calloc(n + 1, sizeof(*o->compilers));
        if (!o->compilers)
                return -ENOMEM;
        n = 0;
        for (char *tok = o->compilers_buf; tok; tok = p) {
                p = strchr(tok, ',');
                if (p)
                        *p++ = '\0';
                if (*tok)
                        o->compilers[n++] = tok;
        }
        o->rec.compilers = o->compilers;
        return 0;
}

/* A row's setter: 0, or -1 after printing why arg is bad. */
typedef int (*opt_set_fn)(struct common_opts *o, const char *cmd, const char *arg);

static int bad(const char *cmd, const char *opt, const char *what, const char *arg)
{
        fprintf(stderr, "buildtel %s: %s takes %s, not '%s'\n", cmd, opt, what, arg);
        return -1;
}

static int nonempty(const char *cmd, const char *opt, const char *arg)
{
        if (*arg)
                return 0;
        fprintf(stderr, "buildtel %s: %s is empty\n", cmd, opt);
        return -1;
}

static int set_interval(struct common_opts *o, const char *cmd, const char *arg)
{
        if (parse_double_str(arg, &o->rec.interval) < 0 || o->rec.interval < 0.05 ||
            o->rec.interval > 86400)
                return bad(cmd, "--interval", "seconds from 0.05 to 86400", arg);
        return 0;
}

static int set_log_dir(struct common_opts *o, const char *cmd, const char *arg)
{
        o->rec.log_dir = arg;
        return nonempty(cmd, "--log-dir", arg);
}

static int set_run_id(struct common_opts *o, const char *cmd, const char *arg)
{
        if (!run_id_valid(arg)) {
                fprintf(stderr,
                        "buildtel %s: --run-id takes 1 to 64 of [A-Za-z0-9._-], not starting "
                        "with '.' or '-'\n",
                        cmd);
                return -1;
        }
        snprintf(o->run_id, sizeof(o->run_id), "%s", arg);
        return 0;
}

static int set_stage_regex(struct common_opts *o, const char *cmd, const char *arg)
{
        regex_t re;
        int e = regcomp(&re, arg, REG_EXTENDED);

        if (e != 0) {
                char msg[256];
                regerror(e, &re, msg, sizeof(msg));
                fprintf(stderr, "buildtel %s: --stage-regex '%s': %s\n", cmd, arg, msg);
                return -1;
        }
        regfree(&re);
        o->rec.logctx.stage_regex = arg;
        return 0;
}

static int set_near_oom(struct common_opts *o, const char *cmd, const char *arg)
{
        double *d = &o->rec.summary.near_oom_mb;

        return parse_double_str(arg, d) < 0 || *d < 0
                   ? bad(cmd, "--near-oom-mb", "a number >= 0", arg)
                   : 0;
}

static int set_low_disk(struct common_opts *o, const char *cmd, const char *arg)
{
        double *d = &o->rec.summary.low_disk_gb;

        return parse_double_str(arg, d) < 0 || *d < 0
                   ? bad(cmd, "--low-disk-gb", "a number >= 0", arg)
                   : 0;
}

static int set_compilers(struct common_opts *o, const char *cmd, const char *arg)
{
        if (parse_compilers(o, arg) < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        return 0;
}

static int set_sccache_marker(struct common_opts *o, const char *cmd, const char *arg)
{
        /* TARGET=PATH; both point into argv, which outlives us: the target
         * name ends at the '='. */
        const char *eq = strchr(arg, '=');
        struct buildmetrics_config *m = &o->rec.metrics;

        if (!eq || eq == arg || !eq[1] || m->nmarkers >= BUILDMETRICS_MAX_MARKERS) {
                fprintf(stderr,
                        "buildtel %s: --sccache-marker takes TARGET=PATH (at most %d), not '%s'\n",
                        cmd, BUILDMETRICS_MAX_MARKERS, arg);
                return -1;
        }
        m->markers[m->nmarkers].target = arg;
        m->markers[m->nmarkers++].path = eq + 1;
        return 0;
}

static int set_metric_prefix(struct common_opts *o, const char *cmd, const char *arg)
{
        if (*arg && !prom_prefix_valid(arg))
                return bad(cmd, "--metric-prefix", "[a-zA-Z_][a-zA-Z0-9_]*", arg);
        o->rec.prom.metric_prefix = arg;
        return 0;
}

static int set_textfile_dir(struct common_opts *o, const char *cmd, const char *arg)
{
        o->rec.prom.textfile_dir = arg;
        return nonempty(cmd, "--textfile-dir", arg);
}

static int set_prom_file(struct common_opts *o, const char *cmd, const char *arg)
{
        if (!prom_file_valid(arg))
                return bad(cmd, "--prom-file", "a file name ending in .prom", arg);
        o->rec.prom.prom_file = arg;
        return 0;
}

static int set_pushgateway(struct common_opts *o, const char *cmd, const char *arg)
{
        if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0)
                return bad(cmd, "--pushgateway", "an http:// or https:// URL", arg);
        o->rec.prom.pushgateway = arg;
        return 0;
}

static int set_push_job(struct common_opts *o, const char *cmd, const char *arg)
{
        o->rec.prom.push_job = arg;
        return nonempty(cmd, "--push-job", arg);
}

static int set_db(struct common_opts *o, const char *cmd, const char *arg)
{
        o->rec.db_path = arg;
        o->rec.no_db = false;
        return nonempty(cmd, "--db", arg);
}

static int set_otlp_interval(struct common_opts *o, const char *cmd, const char *arg)
{
        double d;

        if (parse_double_str(arg, &d) < 0 || d < 0.1 || d > 86400)
                return bad(cmd, "--otlp-interval", "seconds from 0.1 to 86400", arg);
        o->otlp_opt.interval_ms = (uint64_t)llround(d * 1000);
        return 0;
}

static int set_trace_max_spans(struct common_opts *o, const char *cmd, const char *arg)
{
        uint64_t n;

        if (parse_u64_str(arg, &n) < 0 || n > 1000000)
                return bad(cmd, "--trace-max-spans", "a count from 0 to 1000000", arg);
        o->otlp_opt.max_spans = n;
        o->otlp_opt.max_spans_set = true;
        return 0;
}

static int set_grace(struct common_opts *o, const char *cmd, const char *arg)
{
        if (parse_double_str(arg, &o->grace) < 0 || o->grace < 0 || o->grace > 3600)
                return bad(cmd, "--grace", "seconds from 0 to 3600", arg);
        return 0;
}

static int set_cgroup(struct common_opts *o, const char *cmd, const char *arg)
{
        if (cgroup_mode_parse(arg, &o->cgroup_mode) < 0)
                return bad(cmd, "--cgroup", "auto, v2, hybrid, v1 or none", arg);
        return 0;
}

static int set_memory(const char *cmd, const char *opt, const char *arg, uint64_t *ret)
{
        if (parse_size_str(arg, ret) < 0 || *ret < 4096)
                return bad(cmd, opt, "a size of at least 4K (512M, 4G, ...)", arg);
        return 0;
}

static int set_memory_max(struct common_opts *o, const char *cmd, const char *arg)
{
        return set_memory(cmd, "--memory-max", arg, &o->memory_max);
}

static int set_memory_high(struct common_opts *o, const char *cmd, const char *arg)
{
        return set_memory(cmd, "--memory-high", arg, &o->memory_high);
}

static int set_pid(struct common_opts *o, const char *cmd, const char *arg)
{
        if (parse_u64_str(arg, &o->pid) < 0 || o->pid == 0 || o->pid > 4194304)
                return bad(cmd, "--pid", "a process id", arg);
        return 0;
}

/* What a row does with its argument: a setter, or a member it sets. */
#define CALL(fn) fn, 0
#define AT(member) NULL, offsetof(struct common_opts, member)
#define RW (CMDS_RUN | CMDS_WATCH)
#define RWS (CMDS_RUN | CMDS_WATCH | CMDS_SUMMARIZE)
#define RWE (CMDS_RUN | CMDS_WATCH | CMDS_EXPORT)

/* Every option of the commands above, in the order `help CMD` lists them. */
static const struct cmd_option {
        int id;
        const char *name;
        const char *alias; /* another long name; NULL: none */
        char short_name;   /* 0: none */
        const char *arg;   /* NULL: no argument */
        unsigned cmds;
        int group;
        const char *help; /* NULL: not listed (--help) */
        opt_set_fn set;   /* NULL: arg (or true without one) goes to the member at off */
        size_t off;
} options[] = {
    {OPT_INTERVAL, "interval", NULL, 0, "SECONDS", RW, OPTG_MAIN,
     "seconds between samples (default 2, at least 0.05)", CALL(set_interval)},
    {OPT_LOG_DIR, "log-dir", "out-dir", 0, "DIR", RWE, OPTG_MAIN,
     "where the files go (export: where they are; alias\n"
     "--out-dir; default $XDG_STATE_HOME/buildtel/logs or\n"
     "~/.local/state/buildtel/logs; an unwritable one falls back\n"
     "to $TMPDIR/buildtel-UID/logs)",
     CALL(set_log_dir)},
    {OPT_RUN_ID, "run-id", NULL, 0, "ID", RW, OPTG_MAIN,
     "name of the run (default: UTC time and a random suffix);\n"
     "an existing run id is rewritten, with a note",
     CALL(set_run_id)},
    {OPT_DISK_PATH, "disk-path", NULL, 0, "PATH", RW, OPTG_MAIN,
     "filesystem for the disk columns (default: the cwd)", AT(rec.disk_path)},
    {OPT_STAGE, "stage", NULL, 0, "NAME", RW, OPTG_MAIN, "stage while the log names none",
     AT(rec.logctx.fixed_stage)},
    {OPT_STAGE_REGEX, "stage-regex", NULL, 0, "ERE", RW, OPTG_MAIN,
     "a line matching ERE sets the stage to its first capture", CALL(set_stage_regex)},
    {OPT_COMPILERS, "compilers", NULL, 0, "NAME,NAME...", RW, OPTG_MAIN,
     "process names counted as compilers\n"
     "(default cc1plus,cc1,cc1obj,clang,clang++,rustc,lto1,ld,\n"
     "ld.gold,ld.lld,collect2,nvcc,cicc,ptxas)",
     CALL(set_compilers)},
    {OPT_NEAR_OOM_MB, "near-oom-mb", NULL, 0, "MB", RWS, OPTG_MAIN,
     "available memory below this is near-OOM (default 4096)", CALL(set_near_oom)},
    {OPT_LOW_DISK_GB, "low-disk-gb", NULL, 0, "GB", RWS, OPTG_MAIN,
     "available disk below this is low (default 20)", CALL(set_low_disk)},
    {OPT_GRACE, "grace", NULL, 0, "SECONDS", CMDS_RUN, OPTG_MAIN,
     "after COMMAND exits, how long to drain output still held\n"
     "by processes it left behind (default 2)",
     CALL(set_grace)},
    {OPT_QUIET, "quiet", NULL, 0, NULL, RW, OPTG_MAIN, "no summary on stderr", AT(rec.quiet)},
    {OPT_CSV_SAFE, "csv-safe", NULL, 0, NULL, RW, OPTG_MAIN,
     "a ' before CSV text starting with = + - @ (a spreadsheet formula)", AT(rec.csv_safe)},
    {OPT_LIVE, "live", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "a status line pinned at the bottom of the terminal\n"
     "(only when stderr is one; also: BUILDTEL_LIVE=1)",
     AT(live)},
    {OPT_OFF, "off", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "exec COMMAND and nothing else (also: BUILDTEL=0)", AT(off)},
    {OPT_NO_REPORT, "no-report", NULL, 0, NULL, RW, OPTG_MAIN,
     "no HTML report (report-<run-id>.html) at the end", AT(rec.no_report)},
    {OPT_TRACE_FILE, "trace-file", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "a Chrome trace beside the CSV, trace-<run-id>.json (`help export`)", AT(trace_file)},
    {OPT_CGROUP, "cgroup", NULL, 0, "MODE", CMDS_RUN, OPTG_MAIN,
     "the build's own accounting: auto (default), v2, hybrid,\n"
     "v1, or none (its process tree from /proc: estimates)",
     CALL(set_cgroup)},
    {OPT_MEMORY_MAX, "memory-max", NULL, 0, "SIZE", CMDS_RUN, OPTG_MAIN,
     "cap the build in its cgroup (512M, 4G): OOM-killed there", CALL(set_memory_max)},
    {OPT_MEMORY_HIGH, "memory-high", NULL, 0, "SIZE", CMDS_RUN, OPTG_MAIN,
     "throttle the build above SIZE (v1: a soft limit)", CALL(set_memory_high)},
    {OPT_KILL_LEFTOVERS, "kill-leftovers", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "at the end kill the daemons the build started too\n"
     "(by default those in a session of their own keep running)",
     AT(kill_leftovers)},
    {OPT_PID, "pid", "watch-pid", 'p', "PID", CMDS_WATCH, OPTG_MAIN,
     "the process to watch (alias --watch-pid)", CALL(set_pid)},
    {OPT_STAGE_LOG_DIR, "stage-log-dir", NULL, 0, "DIR", CMDS_WATCH, OPTG_MAIN,
     "take stage and context from the newest file in DIR,\n"
     "following it, and switching when a newer one appears",
     AT(stage_log_dir)},
    {OPT_JSON, "json", NULL, 0, NULL, CMDS_SUMMARIZE, OPTG_MAIN, "print the JSON form", AT(json)},
    {OPT_DB, "db", NULL, 0, "PATH", RWS | CMDS_EXPORT, OPTG_MAIN,
     "the run history database (default\n"
     "$XDG_STATE_HOME/buildtel/history.db or\n"
     "~/.local/state/buildtel/history.db); see `buildtel status`",
     CALL(set_db)},
    {OPT_NO_DB, "no-db", NULL, 0, NULL, RWE, OPTG_MAIN,
     "do not record the run in the history database (export:\n"
     "do not look for it there)",
     AT(rec.no_db)},
    {OPT_TARGETS, "targets", NULL, 0, "A,B...", RW, OPTG_METRICS,
     "the invocation's targets (default: from the BuildKit\n"
     "stream; a single-target build is one target, 'default')",
     AT(rec.metrics.targets)},
    {OPT_SCCACHE_MARKER, "sccache-marker", NULL, 0, "TARGET=PATH", RW, OPTG_METRICS,
     "the step whose command holds PATH logs target TARGET's\n"
     "sccache stats (adds to or overrides the built-in table)",
     CALL(set_sccache_marker)},
    {OPT_NINJA_LOG, "ninja-log", NULL, 0, "PATH", RWE, OPTG_METRICS,
     "read this run's records of PATH (.ninja_log v5-v7) at\n"
     "the end: edge count and the 10 slowest edges",
     AT(rec.metrics.ninja_log)},
    {OPT_METRIC_PREFIX, "metric-prefix", NULL, 0, "P", RW, OPTG_METRICS,
     "metric names P_build_... (default build_...)", CALL(set_metric_prefix)},
    {OPT_TEXTFILE_DIR, "textfile-dir", NULL, 0, "DIR", RW, OPTG_METRICS,
     "node_exporter textfile directory (default\n"
     "$BUILDTEL_TEXTFILE_DIR, else the first writable of\n"
     "/var/lib/node_exporter/textfile_collector and\n"
     "/var/lib/prometheus/node-exporter, else the log dir)",
     CALL(set_textfile_dir)},
    {OPT_PROM_FILE, "prom-file", NULL, 0, "NAME.prom", RW, OPTG_METRICS,
     "the textfile's name (default buildtel.prom); two jobs\n"
     "on one node need different names",
     CALL(set_prom_file)},
    {OPT_PUSHGATEWAY, "pushgateway", NULL, 0, "URL", RW, OPTG_METRICS,
     "also PUT the metrics to URL/metrics/job/JOB/instance/HOST\n"
     "(5 s at most; a failure is one warning)",
     CALL(set_pushgateway)},
    {OPT_PUSH_JOB, "push-job", NULL, 0, "NAME", RW, OPTG_METRICS,
     "the Pushgateway job (default buildtel)", CALL(set_push_job)},
    {OPT_OTLP_ENDPOINT, "otlp-endpoint", NULL, 0, "URL", RWE, OPTG_OTLP,
     "export to URL, used as is (else\n"
     "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as is, or\n"
     "OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics)",
     AT(otlp_opt.endpoint)},
    {OPT_OTLP_INTERVAL, "otlp-interval", NULL, 0, "SECONDS", RW, OPTG_OTLP,
     "seconds between exports (default\n"
     "OTEL_METRIC_EXPORT_INTERVAL ms, else 60)",
     CALL(set_otlp_interval)},
    {OPT_TRACE_MAX_SPANS, "trace-max-spans", NULL, 0, "N", RWE, OPTG_OTLP,
     "OTLP spans under the run span at most: targets, then\n"
     "BuildKit steps (default 2000)",
     CALL(set_trace_max_spans)},
    {OPT_OTLP, "otlp", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "export to an OTLP collector (the only export, required)", AT(export_otlp)},
    {OPT_INCOMPLETE, "incomplete", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "send what an incomplete run has (marked so)", AT(incomplete)},
    {OPT_TRACE, "trace", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "write a Chrome trace (Perfetto) of the run instead", AT(export_trace)},
    {OPT_OUTPUT, "output", NULL, 'o', "FILE", CMDS_EXPORT, OPTG_MAIN,
     "with --trace: the file (default trace-RUN.json; - for stdout)", AT(trace_out)},
    {OPT_HELP, "help", NULL, 'h', NULL, RWS | CMDS_EXPORT, OPTG_MAIN, NULL, AT(help)},
};

static int set(const struct cmd_option *t, struct common_opts *o, const char *cmd, const char *arg)
{
        if (t->set)
                return t->set(o, cmd, arg) < 0 ? -1 : 1;
        if (t->arg)
                *(const char **)(void *)((char *)o + t->off) = arg;
        else
                *(bool *)(void *)((char *)o + t->off) = true;
        return 1;
}

int common_opts_parse(struct common_opts *o, int opt, const char *arg, const char *cmd)
{
        if (opt == 'h')
                opt = OPT_HELP;
        for (size_t i = 0; i < ARRAY_SIZE(options); i++)
                if (options[i].id == opt)
                        return set(&options[i], o, cmd, arg);
        return 0;
}

/* What a bad command line prints, after getopt's own complaint. */
void cmd_print_short_usage(const char *name)
{
        static const struct {
                const char *name, *text;
        } usage[] = {
            {"run", "usage: buildtel run [OPTIONS] -- COMMAND [ARG...]\n"
                    "Run COMMAND, pass its output through untouched, and record the machine's\n"
                    "resources while it runs. Exits with COMMAND's status. See `buildtel help "
                    "run`.\n"},
            {"watch", "usage: buildtel watch --pid PID [OPTIONS]\n"},
            {"summarize", "usage: buildtel summarize [--json] [--near-oom-mb N] [--low-disk-gb N] "
                          "[--db PATH] FILE.csv|RUN\n"},
            {"export", "usage: buildtel export --otlp [--db PATH|--no-db] [--log-dir DIR] "
                       "[--incomplete] [--otlp-endpoint URL] RUN|FILE.csv\n"
                       "       buildtel export --trace [--db PATH|--no-db] [--log-dir DIR] "
                       "[--ninja-log FILE] [-o FILE] [RUN|FILE.csv]\n"},
        };

        for (size_t i = 0; i < ARRAY_SIZE(usage); i++)
                if (strcmp(usage[i].name, name) == 0) {
                        fputs(usage[i].text, stderr);
                        return;
                }
        fprintf(stderr, "see `buildtel help %s`\n", name);
}

int cmd_parse_options(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o)
{
        struct option longopts[2 * ARRAY_SIZE(options) + 1];
        char shortopts[2 * ARRAY_SIZE(options) + 2] = "+";
        size_t nl = 0, ns = 1;
        int c;

        memset(longopts, 0, sizeof(longopts));
        for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                const struct cmd_option *t = &options[i];
                int has = t->arg ? required_argument : no_argument;

                if (!(t->cmds & cmd))
                        continue;
                longopts[nl++] = (struct option){t->name, has, NULL, t->id};
                if (t->alias)
                        longopts[nl++] = (struct option){t->alias, has, NULL, t->id};
                if (t->short_name) {
                        shortopts[ns++] = t->short_name;
                        if (t->arg)
                                shortopts[ns++] = ':';
                }
        }
        optind = 1;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                for (size_t i = 0; c > 0 && c < 0x100 && i < ARRAY_SIZE(options); i++)
                        if (options[i].short_name == c && (options[i].cmds & cmd))
                                c = options[i].id;
                if (common_opts_parse(o, c, optarg, name) > 0)
                        continue;
                if (c != '?' && c != ':')
                        fprintf(stderr, "buildtel %s: option not handled\n", name);
                cmd_print_short_usage(name);
                return -1;
        }
        if (o->help) {
                cmd_print_usage(name);
                return 0;
        }
        return optind;
}

void cmd_print_options(FILE *f, unsigned cmd, int group)
{
        for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                const struct cmd_option *t = &options[i];
                const char *h;
                int n;

                if (!(t->cmds & cmd) || t->group != group || !t->help)
                        continue;
                n = fprintf(f, "  --%s%s%s", t->name, t->arg ? " " : "", t->arg ? t->arg : "");
                if (n > 23)
                        fprintf(f, "\n%25s", "");
                else
                        fprintf(f, "%*s", 25 - n, "");
                for (h = t->help; *h; h++) {
                        fputc(*h, f);
                        if (*h == '\n')
                                fprintf(f, "%25s", "");
                }
                fputc('\n', f);
        }
}

void cmd_dump_options(FILE *f)
{
        static const struct {
                unsigned mask;
                const char *name;
        } cmds[] = {{CMDS_RUN, "run"},
                    {CMDS_WATCH, "watch"},
                    {CMDS_SUMMARIZE, "summarize"},
                    {CMDS_EXPORT, "export"}};

        for (size_t c = 0; c < ARRAY_SIZE(cmds); c++)
                for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                        const struct cmd_option *t = &options[i];

                        if (!(t->cmds & cmds[c].mask) || !t->help)
                                continue;
                        fprintf(f, "%s\t--%s\t%s\t%s%s\n", cmds[c].name, t->name,
                                t->arg ? t->arg : "", t->alias ? "--" : "",
                                t->alias ? t->alias : "");
                }
}

static void make_run_id(char *buf, size_t len)
{
        uint8_t rnd[3] = {0};
        time_t t = time(NULL);
        struct tm tm;

        if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
                /* No entropy yet: pid and clock still keep ids apart. */
                uint32_t x = (uint32_t)getpid() ^ (uint32_t)(now_monotonic() * 1e6);
                rnd[0] = (uint8_t)x;
                rnd[1] = (uint8_t)(x >> 8);
                rnd[2] = (uint8_t)(x >> 16);
        }
        gmtime_r(&t, &tm);
        snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ-%02x%02x%02x", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd[0], rnd[1],
                 rnd[2]);
}

int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri)
{
        char host[256] = "";
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        if (!o->run_id[0])
                make_run_id(o->run_id, sizeof(o->run_id));
        (void)gethostname(host, sizeof(host) - 1);
        ri->run_id = strdup(o->run_id);
        ri->kind = strdup(kind);
        ri->cwd = getcwd(NULL, 0);
        ri->host = strdup(host);
        if (!ri->run_id || !ri->kind || !ri->host)
                return -ENOMEM;
        ri->start_epoch = now_realtime();
        ri->end_epoch = NAN;
        ri->finished = false;
        ri->exit_code = -1;
        ri->ncpu = ncpu > 0 ? (unsigned)ncpu : 1;
        ri->interval = o->rec.interval;
        return 0;
}

void common_note(void *userdata, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(stderr, "buildtel: note: %s\n", buf);
}

static const char *env_lookup(void *userdata, const char *name)
{
        return getenv(name);
}

int common_otlp_run_span(struct otel_config *c, const char *run_id, bool vcs_of_cwd)
{
        uint8_t rnd[16];
        struct vcs_info vcs;
        char cwd[4096];

        if (!c->enabled)
                return 0;
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
                /* cannot happen on Linux >= 3.17 once booted; still unique */
                uint64_t x =
                    (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(now_realtime() * 1e9);
                for (size_t i = 0; i < sizeof(rnd); i++)
                        rnd[i] = (uint8_t)(x >> (8 * (i % 8))) ^ (uint8_t)(i * 37);
        }
        otelenv_set_run_span(c, rnd, run_id);
        if (vcs_of_cwd && getcwd(cwd, sizeof(cwd)) && vcs_read(cwd, &vcs) >= 0 && vcs.rev[0] &&
            !(c->vcs_rev = strdup(vcs.rev)))
                return -ENOMEM;
        return 0;
}

int common_otlp_load(struct common_opts *o, const char *cmd)
{
        int e;

        otel_config_release(&o->otlp);
        e = otelenv_load(env_lookup, NULL, &o->otlp_opt, common_note, NULL, &o->otlp);
        if (e == -EINVAL) {
                /* never echo the value: a URL may carry user:password */
                fprintf(
                    stderr,
                    "buildtel %s: --otlp-endpoint takes an http:// or https:// URL with a host\n",
                    cmd);
                return -1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        o->rec.otlp = &o->otlp;
        /* the run id now: the run span's id derives from it */
        if (!o->run_id[0])
                make_run_id(o->run_id, sizeof(o->run_id));
        if (common_otlp_run_span(&o->otlp, o->run_id, true) < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        return 0;
}

int common_otlp_child_env(const struct common_opts *o, struct otlp_child_env *ret)
{
        static char no_state[] = "TRACESTATE"; /* removes it */
        char *set[2];
        size_t n = 0;

        *ret = (struct otlp_child_env){0};
        if (!o->otlp.enabled || !o->otlp.traces_url || !o->otlp.span_set)
                return 0;
        memcpy(ret->traceparent, "TRACEPARENT=", 12);
        (void)otelenv_format_traceparent(&o->otlp.span, ret->traceparent + 12,
                                         sizeof(ret->traceparent) - 12);
        set[n++] = ret->traceparent;
        if (o->otlp.has_trace && o->otlp.tracestate) {
                if (asprintf(&ret->tracestate, "TRACESTATE=%s", o->otlp.tracestate) < 0) {
                        ret->tracestate = NULL;
                        return -ENOMEM;
                }
                set[n++] = ret->tracestate;
        } else {
                set[n++] = no_state; /* a new trace: no one else's state */
        }
        return child_env_with(set, n, &ret->envp);
}

void common_otlp_child_env_release(struct otlp_child_env *ce)
{
        free(ce->envp);
        free(ce->tracestate);
        *ce = (struct otlp_child_env){0};
}

void common_warn(void *userdata, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(stderr, "buildtel: warning: %s\n", buf);
}

/* GitHub Actions annotations, after the build's output. */
static void common_gh_warnings(struct recorder *r)
{
        struct dbuf w = DBUF_INIT;

        if (report_gh_warnings(recorder_summary(r), &w) >= 0 && w.len)
                fputs(w.p, stderr);
        dbuf_release(&w);
}

/* "buildtel: what: <dir>/<file><tail>" */
static void common_say_file(const char *what, const char *dir, const char *run_id,
                            enum runfile kind, const char *tail)
{
        _cleanup_free_ char *p = runfiles_path(dir, run_id, kind);

        if (p)
                fprintf(stderr, "buildtel: %s: %s%s\n", what, p, tail);
}

void common_report(const struct common_opts *o, struct recorder *r, struct dbuf *short_sum)
{
        const char *dir = recorder_log_dir(r);
        const char *gha = getenv("GITHUB_ACTIONS");

        if (gha && strcmp(gha, "true") == 0)
                common_gh_warnings(r);
        if (o->rec.quiet)
                return;
        if (short_sum->len)
                fputs(short_sum->p, stderr);
        /* Only the files that were written (a full disk was said above). */
        if (dir && !recorder_sink_failed(r, "csv"))
                common_say_file("csv", dir, o->run_id, RUNFILE_CSV, "");
        if (dir && !recorder_sink_failed(r, "summary"))
                common_say_file("summary", dir, o->run_id, RUNFILE_SUMMARY_TXT, " (.json)");
        if (dir && !o->rec.no_report && !recorder_sink_failed(r, "report"))
                common_say_file("report", dir, o->run_id, RUNFILE_REPORT, "");
}
