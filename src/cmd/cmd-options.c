/* SPDX-License-Identifier: MIT */
/* The one option table of every command, and what parses through it. */
#include "cmd/cmd-common.h"

#include <stddef.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/history.h"
#include "util/macro.h"
#include "util/util.h"
#include "model/bench.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static void common_opts_init(struct common_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->rec.interval = 2.0;
        o->rec.disk_path = ".";
        o->rec.summary.near_oom_mb = SUMMARY_NEAR_OOM_MB_DEFAULT;
        o->rec.summary.low_disk_gb = SUMMARY_LOW_DISK_GB_DEFAULT;
        o->since = NAN;
        o->rec.note = common_note;
        o->rec.warn = common_warn;
        o->grace = 2.0;
        o->cgroup_mode = CGROUP_MODE_AUTO;
        o->bench_runs = 10;
}

void common_opts_release(struct common_opts *o)
{
        otel_config_release(&o->otlp);
        free(o->compilers_buf);
        free(o->compilers);
        o->compilers_buf = NULL;
        o->compilers = NULL;
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

static int set_run_id(struct common_opts *o, const char *cmd, const char *arg)
{
        if (!run_id_is_valid(arg)) {
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

static int set_compilers(struct common_opts *o, const char *cmd, const char *arg)
{
        size_t n = 1;
        char *p;

        common_opts_release(o); /* a second --compilers replaces the first */
        o->compilers_buf = strdup(arg);
        for (const char *c = arg; *c; c++)
                n += *c == ',';
        o->compilers = o->compilers_buf ? calloc(n + 1, sizeof(*o->compilers)) : NULL;
        if (!o->compilers) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
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

/* The checks of OPTK_CHECKED rows. */
static bool prefix_ok(const char *arg)
{
        return !*arg || prom_prefix_valid(arg);
}

static bool http_url(const char *arg)
{
        return strncmp(arg, "http://", 7) == 0 || strncmp(arg, "https://", 8) == 0;
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

static int set_since(struct common_opts *o, const char *cmd, const char *arg)
{
        if (history_parse_when(arg, now_realtime(), &o->since) < 0)
                return bad(cmd, "--since",
                           "a date (2026-11-29, 2026-11-29T15:40[:20][Z]) or a span (30m, 2h, "
                           "3d, 1w)",
                           arg);
        return 0;
}

static int set_format(struct common_opts *o, const char *cmd, const char *arg)
{
        if (strcmp(arg, "html") != 0 && strcmp(arg, "markdown") != 0)
                return bad(cmd, "--format", "html or markdown", arg);
        o->markdown = strcmp(arg, "markdown") == 0;
        return 0;
}

static int set_cgroup(struct common_opts *o, const char *cmd, const char *arg)
{
        if (cgroup_mode_parse(arg, &o->cgroup_mode) < 0)
                return bad(cmd, "--cgroup", "auto, v2, hybrid, v1 or none", arg);
        return 0;
}

/* The headroom of --memory-guard=HEADROOM and plan --headroom: a size, 0 allowed. */
static int headroom(struct common_opts *o, const char *cmd, const char *opt, const char *what,
                    const char *arg)
{
        uint64_t v;

        if (parse_size_str(arg, &v) < 0)
                return bad(cmd, opt, what, arg);
        o->guard_headroom_mb = (double)v / 1048576.0;
        return 0;
}

static int set_memory_guard(struct common_opts *o, const char *cmd, const char *arg)
{
        o->memory_guard = true;
        o->guard_headroom_mb = NAN;
        return arg ? headroom(o, cmd, "--memory-guard", "a headroom size (256M, 1G; 0)", arg) : 0;
}

static int set_headroom(struct common_opts *o, const char *cmd, const char *arg)
{
        return headroom(o, cmd, "--headroom", "a size (256M, 1G)", arg);
}

/* prune's limits (--keep and --max-size: the table) */
static int set_older_than(struct common_opts *o, const char *cmd, const char *arg)
{
        double now = now_realtime(), t;

        /* a span back from now (90s, 30m, 2h, 3d, 1w): how old */
        if (!*arg || !strchr("smhdw", arg[strlen(arg) - 1]) ||
            history_parse_when(arg, now, &t) < 0 || !(t <= now))
                return bad(cmd, "--older-than", "a span: 90s, 30m, 2h, 3d, 1w", arg);
        o->prune.older_than_s = now - t;
        o->prune_given = true;
        return 0;
}

/* How a row without a setter takes its argument into the member at off. */
enum opt_kind {
        OPTK_AT,       /* the argument itself (or true without one) */
        OPTK_NONEMPTY, /* the argument, which must not be empty */
        OPTK_CHECKED,  /* the argument, which ok() accepts */
        OPTK_DOUBLE,   /* a double from lo to hi */
        OPTK_U64,      /* a uint64_t (or int64_t) count from lo to hi */
        OPTK_SIZE,     /* a uint64_t size (512M, 4G) from lo to hi */
};

/* What a row does with its argument: a setter, or a member it sets. */
#define CALL(fn) .set = fn
#define AT(member) .off = offsetof(struct common_opts, member)
#define NONEMPTY(member) AT(member), .kind = OPTK_NONEMPTY
#define CHECKED(member, fn, msg) AT(member), .kind = OPTK_CHECKED, .ok = fn, .what = msg
#define NUM(member, k, min, max, msg) AT(member), .kind = k, .lo = min, .hi = max, .what = msg
/* A bool member set too when the value is good. */
#define GIVEN(member) .given = offsetof(struct common_opts, member) + 1
#define MEMORY_SIZE "a size of at least 4K (512M, 4G, ...)"
#define RW (CMDS_RUN | CMDS_WATCH)
#define B CMDS_BENCH
#define RWS (CMDS_RUN | CMDS_WATCH | CMDS_SUMMARIZE)
#define RWE (CMDS_RUN | CMDS_WATCH | CMDS_EXPORT)
#define HIST \
        (CMDS_STATUS | CMDS_TOP | CMDS_INSPECT | CMDS_LAYERS | CMDS_CACHE | CMDS_COMPARE | CMDS_PLAN)
#define LISTS (CMDS_STATUS | CMDS_LAYERS)
#define ALL_CMDS (B | RWS | CMDS_EXPORT | CMDS_REPORT | HIST | CMDS_IMPORT_BUILDX | CMDS_PRUNE)
/* Every option of the commands above, in the order `help CMD` lists them. */
static const struct cmd_option {
        const char *name;
        const char *alias; /* another long name; NULL: none */
        char short_name;   /* 0: none */
        const char *arg;   /* NULL: no argument */
        unsigned cmds;
        int group;
        const char *help; /* NULL: not listed (--help) */
        opt_set_fn set;   /* NULL: kind says what goes to the member at off */
        size_t off;
        enum opt_kind kind;
        double lo, hi;               /* OPTK_DOUBLE, _U64, _SIZE: the range */
        const char *what;            /* ... and what bad() says it takes */
        size_t given;                /* 0, or 1 + the offset of a bool set after a good value */
        bool (*ok)(const char *arg); /* OPTK_CHECKED */
} options[] = {
    {"interval", NULL, 0, "SECONDS", RW | B, OPTG_MAIN,
     "seconds between samples (default 2, at least 0.05)",
     NUM(rec.interval, OPTK_DOUBLE, 0.05, 86400, "seconds from 0.05 to 86400")},
    /* One option, a row per wording: `help CMD` says only CMD's. */
    {"log-dir", "out-dir", 0, "DIR", RW | CMDS_PRUNE | B, OPTG_MAIN,
     "where the files go (alias --out-dir; default\n"
     "$XDG_STATE_HOME/buildtel/logs or\n"
     "~/.local/state/buildtel/logs, which falls back to\n"
     "$TMPDIR/buildtel-UID/logs when unwritable, as any one\n"
     "others can write that is not sticky; a DIR given that\n"
     "cannot be written: exit status 125)",
     NONEMPTY(rec.log_dir)},
    {"log-dir", "out-dir", 0, "DIR", CMDS_EXPORT, OPTG_MAIN,
     "where the run's files are (alias --out-dir)", NONEMPTY(rec.log_dir)},
    {"job", NULL, 0, "NAME", RW | B, OPTG_MAIN,
     "what repeats, to compare a run with (default\n"
     "$BUILDTEL_JOB, else GitHub's $GITHUB_WORKFLOW/$GITHUB_JOB,\n"
     "GitLab's $CI_PROJECT_PATH/$CI_JOB_NAME, else from the cwd\n"
     "and the command)",
     NONEMPTY(job)},
    {"job", NULL, 0, "NAME", CMDS_STATUS, OPTG_MAIN, "only that job's runs", NONEMPTY(job)},
    {"job", NULL, 0, "NAME", CMDS_COMPARE, OPTG_MAIN, "--last: that job's last two", NONEMPTY(job)},
    {"job", NULL, 0, "NAME", CMDS_PLAN, OPTG_MAIN,
     "the job to plan for (default $BUILDTEL_JOB or the CI's,\n"
     "else the newest run's)",
     NONEMPTY(job)},
    {"run-id", NULL, 0, "ID", RW, OPTG_MAIN,
     "name of the run (default: UTC time and a random suffix);\n"
     "an existing run id is rewritten, with a note",
     CALL(set_run_id)},
    {"disk-path", NULL, 0, "PATH", RW, OPTG_MAIN,
     "filesystem for the disk columns (default: the cwd)", AT(rec.disk_path)},
    {"stage", NULL, 0, "NAME", RW, OPTG_MAIN, "stage while the log names none",
     AT(rec.logctx.fixed_stage)},
    {"stage-regex", NULL, 0, "ERE", RW, OPTG_MAIN,
     "a line matching ERE sets the stage to its first capture", CALL(set_stage_regex)},
    {"compilers", NULL, 0, "NAME,NAME...", RW | B, OPTG_MAIN,
     "process names counted as compilers\n"
     "(default cc1plus,cc1,cc1obj,clang,clang++,rustc,lto1,ld,\n"
     "ld.gold,ld.lld,collect2,nvcc,cicc,ptxas)",
     CALL(set_compilers)},
    {"near-oom-mb", NULL, 0, "MB", RWS | CMDS_REPORT, OPTG_MAIN,
     "available memory below this is near-OOM (default " STR(SUMMARY_NEAR_OOM_MB_DEFAULT) ")",
     NUM(rec.summary.near_oom_mb, OPTK_DOUBLE, 0, HUGE_VAL, "a number >= 0")},
    {"low-disk-gb", NULL, 0, "GB", RWS | CMDS_REPORT, OPTG_MAIN,
     "available disk below this is low (default " STR(SUMMARY_LOW_DISK_GB_DEFAULT) ")",
     NUM(rec.summary.low_disk_gb, OPTK_DOUBLE, 0, HUGE_VAL, "a number >= 0")},
    {"grace", NULL, 0, "SECONDS", CMDS_RUN, OPTG_MAIN,
     "after COMMAND exits, how long to drain output still held\n"
     "by processes it left behind (default 2)",
     NUM(grace, OPTK_DOUBLE, 0, 3600, "seconds from 0 to 3600")},
    {"quiet", NULL, 0, NULL, RW, OPTG_MAIN, "no summary on stderr", AT(rec.quiet)},
    {"csv-safe", NULL, 0, NULL, RW, OPTG_MAIN,
     "a ' before CSV text starting with = + - @ (a spreadsheet formula)", AT(rec.csv_safe)},
    {"live", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "a status line pinned at the bottom of the terminal\n"
     "(only when stderr is one; also: BUILDTEL_LIVE=1)",
     AT(live)},
    {"no-pty", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "the build's output on pipes even when stdout and stderr\n"
     "are one terminal (by default it gets a terminal of its\n"
     "own then, as without buildtel: a TTY progress UI, colours)",
     AT(no_pty)},
    {"off", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN, "exec COMMAND and nothing else (also: BUILDTEL=0)",
     AT(off)},
    {"keep-runs", NULL, 0, "N", CMDS_RUN, OPTG_MAIN,
     "at the end, remove the oldest finished runs past the\n"
     "newest N (default 200, $BUILDTEL_KEEP_RUNS; 0: keep all)",
     NUM(keep_runs, OPTK_U64, 0, HUGE_VAL, "a count (0: keep all)"), GIVEN(keep_runs_given)},
    {"keep-size", NULL, 0, "SIZE", CMDS_RUN, OPTG_MAIN,
     "and the oldest past SIZE of run files in all (default\n"
     "2G, $BUILDTEL_KEEP_SIZE; 0: no limit); `help prune`",
     NUM(keep_size, OPTK_SIZE, 0, HUGE_VAL, "a size (500M, 2G; 0: no limit)"),
     GIVEN(keep_size_given)},
    {"no-report", NULL, 0, NULL, RW | B, OPTG_MAIN,
     "no HTML report (report-<run-id>.html) at the end", AT(rec.no_report)},
    {"trace-file", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "a Chrome trace beside the CSV, trace-<run-id>.json (`help export`)", AT(trace_file)},
    {"cgroup", NULL, 0, "MODE", CMDS_RUN | B, OPTG_MAIN,
     "the build's own accounting: auto (default), v2, hybrid,\n"
     "v1, or none (its process tree from /proc: estimates)",
     CALL(set_cgroup)},
    {"memory-max", NULL, 0, "SIZE", CMDS_RUN, OPTG_MAIN,
     "cap the build in its cgroup (512M, 4G): OOM-killed there",
     NUM(memory_max, OPTK_SIZE, 4096, HUGE_VAL, MEMORY_SIZE)},
    {"memory-high", NULL, 0, "SIZE", CMDS_RUN, OPTG_MAIN,
     "throttle the build above SIZE (v1: a soft limit)",
     NUM(memory_high, OPTK_SIZE, 4096, HUGE_VAL, MEMORY_SIZE)},
    {"memory-guard", NULL, 0, "[=HEADROOM]", CMDS_RUN, OPTG_MAIN,
     "hold back (SIGSTOP) a compile that would not fit in the\n"
     "memory left less HEADROOM (default: a 16th of the cap,\n"
     "else 256M), until it fits; needs root (`help run`)",
     CALL(set_memory_guard)},
    {"kill-leftovers", NULL, 0, NULL, CMDS_RUN, OPTG_MAIN,
     "at the end kill the daemons the build started too\n"
     "(by default those in a session of their own keep running)",
     AT(kill_leftovers)},
    {"pid", "watch-pid", 'p', "PID", CMDS_WATCH, OPTG_MAIN,
     "the process to watch (alias --watch-pid)", NUM(pid, OPTK_U64, 1, 4194304, "a process id")},
    {"stage-log-dir", NULL, 0, "DIR", CMDS_WATCH, OPTG_MAIN,
     "take stage and context from the newest file in DIR,\n"
     "following it, and switching when a newer one appears",
     AT(stage_log_dir)},
    {"json", NULL, 0, NULL,
     CMDS_SUMMARIZE | CMDS_STATUS | CMDS_INSPECT | CMDS_LAYERS | CMDS_CACHE | CMDS_COMPARE |
         CMDS_PLAN,
     OPTG_MAIN, "print the JSON form", AT(json)},
    {"memory", NULL, 0, "SIZE", CMDS_PLAN, OPTG_MAIN,
     "the memory to plan for (default: this host's)",
     NUM(plan_memory, OPTK_SIZE, 1 << 20, HUGE_VAL, "a size of at least 1M (512M, 16G, ...)")},
    {"cpus", NULL, 0, "N", CMDS_PLAN, OPTG_MAIN, "the CPUs to plan for (default: this host's)",
     NUM(plan_cpus, OPTK_U64, 1, 64, "1 to 64")},
    {"headroom", NULL, 0, "SIZE", CMDS_PLAN, OPTG_MAIN,
     "keep SIZE free (default: a 16th of the memory, at least 64M)", CALL(set_headroom)},
    {"limit", NULL, 0, "N", CMDS_STATUS, OPTG_MAIN, "at most N rows (default 20)",
     NUM(limit, OPTK_U64, 1, 1000000, "a number from 1 to 1000000")},
    {"limit", NULL, 0, "N", CMDS_LAYERS, OPTG_MAIN, "at most N rows",
     NUM(limit, OPTK_U64, 1, 1000000, "a number from 1 to 1000000")},
    {"since", NULL, 0, "WHEN", LISTS, OPTG_MAIN,
     "runs that started at or after WHEN: 2026-11-29,\n"
     "2026-11-29T15:40[:20] (local time; UTC with a final Z),\n"
     "or a span back from now: 90s, 30m, 2h, 3d, 1w",
     CALL(set_since)},
    {"once", NULL, 0, NULL, CMDS_TOP, OPTG_MAIN,
     "print one frame as plain text and exit; with RUN (a run\n"
     "id or a unique prefix), that run's detail",
     AT(once)},
    {"last", NULL, 0, NULL, CMDS_COMPARE, OPTG_MAIN,
     "compare the last two finished runs (the older is A)", AT(last)},
    {"all", NULL, 0, NULL, CMDS_COMPARE, OPTG_MAIN, "list every change, those within noise too",
     AT(all)},
    {"keep", NULL, 0, "N", CMDS_PRUNE, OPTG_MAIN, "keep the newest N runs",
     NUM(prune.keep, OPTK_U64, 0, HUGE_VAL, "a count"), GIVEN(prune_given)},
    {"older-than", NULL, 0, "SPAN", CMDS_PRUNE, OPTG_MAIN,
     "remove runs that ended more than SPAN ago: 90s, 30m, 2h,\n"
     "3d, 1w",
     CALL(set_older_than)},
    {"max-size", NULL, 0, "SIZE", CMDS_PRUNE, OPTG_MAIN,
     "keep the newest runs whose files fit in SIZE (500M, 2G):\n"
     "the oldest go first",
     NUM(prune.max_bytes, OPTK_SIZE, 0, HUGE_VAL, "a size (500M, 2G)"), GIVEN(prune_given)},
    {"dry-run", NULL, 0, NULL, CMDS_PRUNE, OPTG_MAIN, "say what would be removed, remove nothing",
     AT(dry_run)},
    {"runs", NULL, 'r', "N", B, OPTG_MAIN, "timed runs of each command (default 10)",
     NUM(bench_runs, OPTK_U64, 1, BENCH_RUNS_MAX, "a count from 1 to " STR(BENCH_RUNS_MAX))},
    {"warmup", NULL, 'w', "N", B, OPTG_MAIN,
     "untimed runs of each command first (default 0); recorded\n"
     "as runs too",
     NUM(bench_warmup, OPTK_U64, 0, BENCH_RUNS_MAX, "a count from 0 to " STR(BENCH_RUNS_MAX))},
    {"prepare", NULL, 'p', "CMD", B, OPTG_MAIN, "run CMD (sh -c) before each run, warmup ones too",
     NONEMPTY(prepare)},
    {"cleanup", NULL, 'c', "CMD", B, OPTG_MAIN, "run CMD (sh -c) after each command's series",
     NONEMPTY(cleanup)},
    {"export-json", NULL, 0, "FILE", B, OPTG_MAIN,
     "the results as hyperfine's JSON, and buildtel's figures", NONEMPTY(export_json)},
    {"export-markdown", NULL, 0, "FILE", B, OPTG_MAIN, "the results as a Markdown table",
     NONEMPTY(export_markdown)},
    {"show-output", NULL, 0, NULL, B, OPTG_MAIN,
     "pass the builds' output through (default: discarded;\n"
     "their build logs are written either way)",
     AT(show_output)},
    {"ignore-failure", NULL, 'i', NULL, B, OPTG_MAIN,
     "go on when a command exits non-zero (default: stop)", AT(ignore_failure)},
    {"format", NULL, 0, "FORMAT", CMDS_REPORT, OPTG_MAIN,
     "html (default) or markdown (the GitHub job summary)", CALL(set_format)},
    {"json-file", NULL, 0, "FILE", CMDS_IMPORT_BUILDX, OPTG_MAIN,
     "read a saved `docker buildx history inspect --format json`", AT(json_file)},
    {"db", NULL, 0, "PATH", RWS | CMDS_EXPORT | CMDS_REPORT | HIST | CMDS_PRUNE | B, OPTG_MAIN,
     "the run history database (default\n"
     "$XDG_STATE_HOME/buildtel/history.db or\n"
     "~/.local/state/buildtel/history.db); see `buildtel status`",
     CALL(set_db)},
    {"no-db", NULL, 0, NULL, RW | B, OPTG_MAIN, "do not record the run in the history database",
     AT(rec.no_db)},
    {"no-db", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "do not look for the run in the history database", AT(rec.no_db)},
    {"targets", NULL, 0, "A,B...", RW, OPTG_METRICS,
     "the invocation's targets (default: from the BuildKit\n"
     "stream; a single-target build is one target, 'default')",
     AT(rec.metrics.targets)},
    {"sccache-marker", NULL, 0, "TARGET=PATH", RW, OPTG_METRICS,
     "the step whose command holds PATH logs target TARGET's\n"
     "sccache stats (adds to or overrides the built-in table)",
     CALL(set_sccache_marker)},
    {"ninja-log", NULL, 0, "PATH", RWE, OPTG_METRICS,
     "read this run's records of PATH (.ninja_log v5-v7) at\n"
     "the end: edge count and the 10 slowest edges (run:\n"
     "found for ninja -C DIR, cmake --build DIR, meson compile)",
     AT(rec.metrics.ninja_log)},
    {"metric-prefix", NULL, 0, "P", RW, OPTG_METRICS,
     "metric names P_build_... (default build_...)",
     CHECKED(rec.prom.metric_prefix, prefix_ok, "[a-zA-Z_][a-zA-Z0-9_]*")},
    {"textfile-dir", NULL, 0, "DIR", RW | CMDS_PRUNE, OPTG_METRICS,
     "node_exporter textfile directory (default\n"
     "$BUILDTEL_TEXTFILE_DIR, else the first writable of\n"
     "/var/lib/node_exporter/textfile_collector and\n"
     "/var/lib/prometheus/node-exporter, else none: no file)",
     NONEMPTY(rec.prom.textfile_dir)},
    {"prom-file", NULL, 0, "NAME.prom", RW, OPTG_METRICS,
     "the textfile's name (default buildtel-JOB.prom, JOB\n"
     "made safe for a file name: two jobs on one node do not\n"
     "overwrite each other)",
     CHECKED(rec.prom.prom_file, prom_file_valid, "a file name ending in .prom")},
    {"pushgateway", NULL, 0, "URL", RW, OPTG_METRICS,
     "also PUT the metrics to URL/metrics/job/JOB/instance/HOST\n"
     "(5 s at most; a failure is one warning)",
     CHECKED(rec.prom.pushgateway, http_url, "an http:// or https:// URL")},
    {"push-job", NULL, 0, "NAME", RW, OPTG_METRICS, "the Pushgateway job (default buildtel)",
     NONEMPTY(rec.prom.push_job)},
    {"otlp-endpoint", NULL, 0, "URL", RWE, OPTG_OTLP,
     "export to URL, used as is (else\n"
     "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as is, or\n"
     "OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics)",
     AT(otlp_opt.endpoint)},
    {"otlp-interval", NULL, 0, "SECONDS", RW, OPTG_OTLP,
     "seconds between exports (default\n"
     "OTEL_METRIC_EXPORT_INTERVAL ms, else 60)",
     CALL(set_otlp_interval)},
    {"trace-max-spans", NULL, 0, "N", RWE, OPTG_OTLP,
     "OTLP spans under the run span at most: targets, then\n"
     "BuildKit steps (default 2000)",
     NUM(otlp_opt.max_spans, OPTK_U64, 0, 1000000, "a count from 0 to 1000000"),
     GIVEN(otlp_opt.max_spans_set)},
    {"otlp", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "send the run to an OTLP collector (this or --trace)", AT(export_otlp)},
    {"incomplete", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "send what an incomplete run has (marked so)", AT(incomplete)},
    {"trace", NULL, 0, NULL, CMDS_EXPORT, OPTG_MAIN,
     "write a Chrome trace (Perfetto) of the run instead", AT(export_trace)},
    {"output", NULL, 'o', "FILE", CMDS_REPORT, OPTG_MAIN,
     "the file to write, - for stdout (default report-RUN.html)", AT(output)},
    {"output", NULL, 'o', "FILE", CMDS_EXPORT, OPTG_MAIN,
     "with --trace: the file to write, - for stdout (default\n"
     "trace-RUN.json)",
     AT(output)},
    {"help", NULL, 'h', NULL, ALL_CMDS, OPTG_MAIN, NULL, AT(help)},
};

static int set(const struct cmd_option *t, struct common_opts *o, const char *cmd, const char *arg)
{
        void *p = (char *)o + t->off;
        char opt[32];
        double d = 0;
        int r = 0;

        if (t->set)
                return t->set(o, cmd, arg) < 0 ? -1 : 1;
        snprintf(opt, sizeof(opt), "--%s", t->name);
        switch (t->kind) {
        case OPTK_AT:
                if (t->arg)
                        *(const char **)p = arg;
                else
                        *(bool *)p = true;
                return 1;
        case OPTK_NONEMPTY:
                *(const char **)p = arg;
                return nonempty(cmd, opt, arg) < 0 ? -1 : 1;
        case OPTK_CHECKED:
                if (!t->ok(arg))
                        return bad(cmd, opt, t->what, arg);
                *(const char **)p = arg;
                return 1;
        case OPTK_DOUBLE:
                r = parse_double_str(arg, p);
                d = *(double *)p;
                break;
        case OPTK_U64:
        case OPTK_SIZE:
                r = t->kind == OPTK_U64 ? parse_u64_str(arg, p) : parse_size_str(arg, p);
                d = (double)*(uint64_t *)p;
                break;
        }
        if (r < 0 || d < t->lo || d > t->hi)
                return bad(cmd, opt, t->what, arg);
        if (t->given)
                *(bool *)((char *)o + t->given - 1) = true;
        return 1;
}

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
            {"bench",
             "usage: buildtel bench [--runs N] [--warmup N] [--prepare CMD] [--cleanup CMD] "
             "[--export-json F] [--export-markdown F] -- 'BUILD' ['BUILD'...]\n"},
            {"prune", "usage: buildtel prune [--keep N] [--older-than SPAN] [--max-size SIZE] "
                      "[--dry-run] [--db PATH] [--log-dir DIR]\n"},
        };

        for (size_t i = 0; i < ARRAY_SIZE(usage); i++)
                if (strcmp(usage[i].name, name) == 0) {
                        fputs(usage[i].text, stderr);
                        return;
                }
        fprintf(stderr, "see `buildtel help %s`\n", name);
}

static const struct {
        unsigned mask;
        const char *name;
} cmd_names[] = {
    {CMDS_RUN, "run"},
    {CMDS_WATCH, "watch"},
    {CMDS_SUMMARIZE, "summarize"},
    {CMDS_EXPORT, "export"},
    {CMDS_REPORT, "report"},
    {CMDS_STATUS, "status"},
    {CMDS_PLAN, "plan"},
    {CMDS_TOP, "top"},
    {CMDS_INSPECT, "inspect"},
    {CMDS_LAYERS, "layers"},
    {CMDS_CACHE, "cache"},
    {CMDS_IMPORT_BUILDX, "import-buildx"},
    {CMDS_PRUNE, "prune"},
    {CMDS_COMPARE, "compare"},
    {CMDS_BENCH, "bench"},
};

unsigned cmd_mask(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(cmd_names); i++)
                if (strcmp(cmd_names[i].name, name) == 0)
                        return cmd_names[i].mask;
        return 0;
}

/* getopt_long's value for row i: above every short option. */
#define OPT_ROW(i) (0x100 + (int)(i))

int cmd_parse_table(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o)
{
        struct option longopts[2 * ARRAY_SIZE(options) + 1];
        /* run stops at COMMAND ("+"); the others take options anywhere */
        char shortopts[2 * ARRAY_SIZE(options) + 2] = "+";
        size_t nl = 0, ns = cmd == CMDS_RUN ? 1 : 0;
        int c;

        common_opts_init(o);
        memset(longopts, 0, sizeof(longopts));
        for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                const struct cmd_option *t = &options[i];
                /* "[=X]": an optional argument, given with = */
                int has = !t->arg ? no_argument : t->arg[0] == '[' ? optional_argument : required_argument;

                if (!(t->cmds & cmd))
                        continue;
                longopts[nl++] = (struct option){t->name, has, NULL, OPT_ROW(i)};
                if (t->alias)
                        longopts[nl++] = (struct option){t->alias, has, NULL, OPT_ROW(i)};
                if (t->short_name) {
                        shortopts[ns++] = t->short_name;
                        if (t->arg)
                                shortopts[ns++] = ':';
                }
        }
        shortopts[ns] = '\0';
        /* optind 0 reinitializes getopt: the permutation is redone */
        optind = 0;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                int h = 0; /* 1: set; -1: the setter said why; 0: getopt did ('?', ':') */

                for (size_t i = 0; !h && i < ARRAY_SIZE(options); i++)
                        if ((options[i].cmds & cmd) &&
                            (c == OPT_ROW(i) || options[i].short_name == c))
                                h = set(&options[i], o, name, optarg);
                if (h > 0)
                        continue;
                cmd_print_short_usage(name);
                return -1;
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
                n = fprintf(f, "  --%s%s%s", t->name, t->arg && t->arg[0] != '[' ? " " : "",
                            t->arg ? t->arg : "");
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
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++)
                for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                        const struct cmd_option *t = &options[i];

                        if (!(t->cmds & cmd_names[c].mask) || !t->help)
                                continue;
                        fprintf(f, "%s\t--%s\t%s\t%s%s\n", cmd_names[c].name, t->name,
                                t->arg ? t->arg : "", t->alias ? "--" : "",
                                t->alias ? t->alias : "");
                }
}

/* ---- shell completions, from the tables above (issue 39) ---- */

/* An option's argument is a path: complete files there. */
static bool arg_is_path(const char *arg)
{
        return arg && (strstr(arg, "FILE") || strstr(arg, "DIR") || strstr(arg, "PATH"));
}

/* The first line of a help text, for zsh and fish: no quote, no bracket. */
static void put_help_line(FILE *f, const char *h)
{
        for (; h && *h && *h != '\n'; h++)
                fputc(strchr("'[]:\\`$\"", *h) ? ' ' : *h, f);
}

static void bash_completion(FILE *f)
{
        fputs("# bash completion for buildtel (buildtel help --completion bash)\n"
              "_buildtel() {\n"
              "        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
              "        local cmd=${COMP_WORDS[1]} opts= w\n"
              "        local cmds='help",
              f);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++)
                fprintf(f, " %s", cmd_names[c].name);
        fputs("'\n        if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
              "                COMPREPLY=($(compgen -W \"$cmds --help --version\" -- \"$cur\"))\n"
              "                return\n        fi\n"
              "        # after run's or bench's --, the build's own words\n"
              "        for w in \"${COMP_WORDS[@]:2:COMP_CWORD-2}\"; do\n"
              "                [ \"$w\" = -- ] && { COMPREPLY=($(compgen -c -- \"$cur\")); return; }\n"
              "        done\n        case $prev in\n",
              f);
        for (size_t i = 0, n = 0; i < ARRAY_SIZE(options); i++)
                if (arg_is_path(options[i].arg))
                        fprintf(f, "%s--%s", n++ ? "|" : "        ", options[i].name);
        fputs(")\n                COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
              "        esac\n        case $cmd in\n",
              f);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++) {
                fprintf(f, "        %s) opts='--help", cmd_names[c].name);
                for (size_t i = 0; i < ARRAY_SIZE(options); i++)
                        if ((options[i].cmds & cmd_names[c].mask) && options[i].help)
                                fprintf(f, " --%s", options[i].name);
                fputs("' ;;\n", f);
        }
        fputs("        help) COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\")); return ;;\n"
              "        esac\n"
              "        if [[ $cur == -* ]]; then\n"
              "                COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
              "        elif [[ $cmd == @(inspect|compare|report|summarize|export) ]]; then\n"
              "                # the recent runs' ids, from the history\n"
              "                COMPREPLY=($(compgen -W \"$(buildtel status --limit 50 2>/dev/null |"
              " awk 'NR > 1 {print $1}')\" -- \"$cur\"))\n"
              "        fi\n}\ncomplete -F _buildtel buildtel\n",
              f);
}

static void fish_completion(FILE *f)
{
        fputs("# fish completion for buildtel (buildtel help --completion fish)\n"
              "complete -c buildtel -f\n",
              f);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++)
                fprintf(f, "complete -c buildtel -n __fish_use_subcommand -a %s\n", cmd_names[c].name);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++)
                for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                        const struct cmd_option *t = &options[i];

                        if (!(t->cmds & cmd_names[c].mask) || !t->help)
                                continue;
                        fprintf(f, "complete -c buildtel -n '__fish_seen_subcommand_from %s' -l %s%s -d '",
                                cmd_names[c].name, t->name,
                                !t->arg ? "" : arg_is_path(t->arg) ? " -r -F" : " -r");
                        put_help_line(f, t->help);
                        fputs("'\n", f);
                }
        fputs("complete -c buildtel -n '__fish_seen_subcommand_from inspect compare report summarize "
              "export' -a '(buildtel status --limit 50 2>/dev/null | awk \"NR > 1 {print \\$1}\")'\n",
              f);
}

static void zsh_completion(FILE *f)
{
        fputs("#compdef buildtel\n# zsh completion for buildtel (buildtel help --completion zsh)\n"
              "_buildtel() {\n        local -a cmds\n        cmds=(help",
              f);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++)
                fprintf(f, " %s", cmd_names[c].name);
        fputs(")\n        if (( CURRENT == 2 )); then\n"
              "                _describe command cmds\n                return\n        fi\n"
              "        case $words[2] in\n",
              f);
        for (size_t c = 0; c < ARRAY_SIZE(cmd_names); c++) {
                fprintf(f, "        %s) _arguments", cmd_names[c].name);
                for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
                        const struct cmd_option *t = &options[i];

                        if (!(t->cmds & cmd_names[c].mask) || !t->help)
                                continue;
                        fprintf(f, " \\\n                '--%s%s[", t->name,
                                t->arg && t->arg[0] != '[' ? "=" : "");
                        put_help_line(f, t->help);
                        fprintf(f, "]%s'", !t->arg || t->arg[0] == '[' ? ""
                                                : arg_is_path(t->arg) ? ":path:_files"
                                                                      : ":value:");
                }
                fputs(" \\\n                '*:argument:_default' ;;\n", f);
        }
        fputs("        esac\n}\n_buildtel \"$@\"\n", f);
}

int cmd_print_completion(FILE *f, const char *shell)
{
        if (strcmp(shell, "bash") == 0)
                bash_completion(f);
        else if (strcmp(shell, "zsh") == 0)
                zsh_completion(f);
        else if (strcmp(shell, "fish") == 0)
                fish_completion(f);
        else
                return -EINVAL;
        return 0;
}
