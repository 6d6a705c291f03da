/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct {
        const char *name;
        const char *text;
} usages[] = {
    /* A name may have several entries, printed in order: C99 caps a
     * string literal at 4095 bytes. */
    {"run",
     "usage: buildtel run [OPTIONS] -- COMMAND [ARG...]\n"
     "\n"
     "Run COMMAND (execvp, no shell) in its own process group with buildtel's stdin.\n"
     "Its stdout and stderr pass through byte for byte and are also appended to\n"
     "<log-dir>/build-<run-id>.log. Resources are sampled every --interval seconds\n"
     "and once more right after COMMAND exits, into <log-dir>/resources-<run-id>.csv;\n"
     "a summary goes to resources-<run-id>.summary.{txt,json} and, short, to stderr.\n"
     "\n"
     "  --interval SECONDS     seconds between samples (default 2, at least 0.05)\n"
     "  --log-dir DIR          where the files go (alias --out-dir; default\n"
     "                         $XDG_STATE_HOME/buildtel/logs or ~/.local/state/buildtel/logs;\n"
     "                         an unwritable one falls back to $TMPDIR/buildtel-UID/logs)\n"
     "  --run-id ID            name of the run (default: UTC time and a random suffix);\n"
     "                         an existing run id is rewritten, with a note\n"
     "  --disk-path PATH       filesystem for the disk columns (default: the cwd)\n"
     "  --stage NAME           stage while the log names none\n"
     "  --stage-regex ERE      a line matching ERE sets the stage to its first capture\n"
     "  --compilers A,B,...    process names counted as compilers\n"
     "                         (default cc1plus,cc1,cc1obj,clang,clang++,rustc,lto1,ld,\n"
     "                         ld.gold,ld.lld,collect2,nvcc,cicc,ptxas)\n"
     "  --near-oom-mb MB       available memory below this is near-OOM (default 4096)\n"
     "  --low-disk-gb GB       available disk below this is low (default 20)\n"
     "  --grace SECONDS        after COMMAND exits, how long to drain output still held\n"
     "                         by processes it left behind (default 2)\n"
     "  --quiet                no summary on stderr\n"
     "  --off                  exec COMMAND and nothing else (also: BUILDTEL=0)\n"
     "  --cgroup MODE          the build's own accounting: auto (default), v2, hybrid,\n"
     "                         v1, or none (its process tree from /proc: estimates)\n"
     "  --memory-max SIZE      cap the build in its cgroup (512M, 4G): OOM-killed there\n"
     "  --memory-high SIZE     throttle the build above SIZE (v1: a soft limit)\n"
     "  --db PATH              the run history database (default\n"
     "                         $XDG_STATE_HOME/buildtel/history.db or\n"
     "                         ~/.local/state/buildtel/history.db); see `buildtel status`\n"
     "  --no-db                do not record the run in the history database\n"
     "  --no-report            do not write report-<id>.html (see `buildtel report`)\n"
     "The run is in the history from its start (state running) to its end; a locked,\n"
     "full, unwritable or corrupt database is one warning and changes nothing else.\n"
     "\n"
     "Build metrics (from COMMAND's own output; also for `watch`):\n"
     "  --targets A,B          the invocation's targets (default: from the BuildKit\n"
     "                         stream; a single-target build is one target, 'default')\n"
     "  --sccache-marker T=PATH  the step whose command holds PATH logs target T's\n"
     "                         sccache stats (adds to or overrides the built-in table)\n"
     "  --ninja-log PATH       read this run's records of PATH (.ninja_log v5-v7) at\n"
     "                         the end: edge count and the 10 slowest edges\n"
     "  --metric-prefix P      metric names P_build_... (default build_...)\n"
     "  --textfile-dir DIR     node_exporter textfile directory (default\n"
     "                         $BUILDTEL_TEXTFILE_DIR, else the first writable of\n"
     "                         /var/lib/node_exporter/textfile_collector and\n"
     "                         /var/lib/prometheus/node-exporter, else the log dir)\n"
     "  --prom-file NAME.prom  the textfile's name (default buildtel.prom); two jobs\n"
     "                         on one node need different names\n"
     "  --pushgateway URL      also PUT the metrics to URL/metrics/job/JOB/instance/HOST\n"
     "                         (5 s at most; a failure is one warning)\n"
     "  --push-job NAME        the Pushgateway job (default buildtel)\n"
     "  --otlp-endpoint URL, --otlp-interval SECS  OTLP export: `buildtel help otlp`\n"
     "When COMMAND has --metadata-file F, F is read at the end (builder, node, ref per\n"
     "target) and, when docker exists, `docker buildx history inspect` fills in steps.\n"
     "\n"},
    {"run", "SIGINT, SIGTERM, SIGHUP and SIGQUIT go to COMMAND's process group; buildtel then\n"
            "waits for it and writes its files as on a normal exit.\n"
            "\n"
            "Exit status: COMMAND's own; 128+N when signal N killed it. buildtel's own:\n"
            "125 bad option or buildtel failed before COMMAND ran, 126 COMMAND not\n"
            "executable, 127 COMMAND not found.\n"},
    {"watch", "usage: buildtel watch --pid PID [OPTIONS]\n"
              "\n"
              "Attach to a build that is already running (alias --watch-pid), sample the same\n"
              "columns as `run`, and end when PID exits, with a final sample and the summary\n"
              "(also on SIGINT or SIGTERM).\n"
              "\n"
              "  --stage-log-dir DIR    take stage and context from the newest file in DIR,\n"
              "                         following it, and switching when a newer one appears\n"
              "  and --interval, --log-dir, --run-id, --disk-path, --stage, --stage-regex,\n"
              "  --compilers, --near-oom-mb, --low-disk-gb, --quiet, --db, --no-db as for `run`.\n"
              "\n"
              "Exit status: 0 when PID exited; 128+N when signal N ended the watch; 1 when PID\n"
              "does not exist; 2 bad usage.\n"},
    {"summarize",
     "usage: buildtel summarize [--json] [--near-oom-mb MB] [--low-disk-gb GB] [--db PATH]\n"
     "                          FILE.csv|RUN\n"
     "\n"
     "Recompute the summary of a run from its CSV (and the resources-<id>.run.json next\n"
     "to it, for the run's facts), exactly as the run computed it. Works on the CSV of a\n"
     "killed run: a torn last row and junk rows are skipped and counted. When the\n"
     "argument is not an existing file, it is a run id (or a unique prefix of one) in\n"
     "the history database, whose samples give the same summary.\n"
     "\n"
     "Exit status: 0, 1 when FILE is unreadable or not a buildtel CSV, or RUN is not in\n"
     "the history, 2 bad usage.\n"},
    {"report",
     "usage: buildtel report [-o FILE|-] [--format html|markdown] [--near-oom-mb MB]\n"
     "                       [--low-disk-gb GB] [--db PATH] [RUN|FILE.csv]\n"
     "\n"
     "The report of a run: one self-contained HTML page (inline SVG and CSS, no URL)\n"
     "with the facts and readings, a timeline with the stages and peaks, the targets\n"
     "and the slowest ninja edges, and tables; or, with --format markdown, the GitHub\n"
     "Actions job summary `run` appends to $GITHUB_STEP_SUMMARY. RUN is a run id (or a\n"
     "unique prefix) in the history, the latest when none is given; FILE.csv is a run's\n"
     "CSV with its resources-<id>.run.json, .targets.json and .units.csv beside it.\n"
     "The page goes to report-<id>.html beside the CSV (the current directory for a\n"
     "RUN) unless -o; -o - and markdown write stdout.\n"
     "\n"
     "Exit status: 0, 1 when the run cannot be read or the report written, 2 bad usage.\n"},
    {"status", "usage: buildtel status [--json] [--limit N] [--since WHEN] [--db PATH]\n"
               "\n"
               "The recent runs in the history database, newest first (20 unless --limit):\n"
               "id, start, duration, result (ok, exit N, signal N, running, incomplete),\n"
               "builder, host (or the nodes its targets ran on), peak memory used, near-OOM\n"
               "samples. A run whose buildtel was killed (its row was never completed and its\n"
               "process is gone, or the machine rebooted) is `incomplete`.\n"
               "\n"
               "  --json                 the same as a JSON array, every stored figure\n"
               "  --limit N              at most N runs\n"
               "  --since WHEN           runs that started at or after WHEN: 2026-11-29,\n"
               "                         2026-11-29T15:40[:20] (local time; UTC with a final Z),\n"
               "                         or a span back from now: 90s, 30m, 2h, 3d, 1w\n"
               "  --db PATH              the database (default as for `run`)\n"
               "\n"
               "Exit status: 0, 1 when the database is missing or unreadable, 2 bad usage.\n"},
    {"inspect",
     "usage: buildtel inspect [--json] [--db PATH] [RUN]\n"
     "\n"
     "One run from the history database (RUN: a run id or a unique prefix; the latest\n"
     "by default): command, cwd, host, builder, git revision, start, duration, result,\n"
     "steps and cached steps, resource peaks with the stage and log line active then,\n"
     "a per-target table (duration, steps, cached, ratio, node, compiler-cache hits and\n"
     "misses), and the compiler-cache stats its log printed (the first and the last\n"
     "block of each tool).\n"
     "\n"
     "Exit status: 0, 1 when RUN is not there or the database is unreadable, 2 bad usage.\n"},
    {"layers", "usage: buildtel layers [--json] [--limit N] [--since WHEN] [--db PATH]\n"
               "\n"
               "Layer-cache reuse per target (image), from the most recent build of each: steps,\n"
               "cached steps, ratio, and the node it ran on. A target whose node changed since\n"
               "its previous build is flagged: a new node cannot use the old node's local cache,\n"
               "which explains a low ratio.\n"
               "\n"
               "Exit status: 0, 1 when the database is missing or unreadable, 2 bad usage.\n"},
    {"cache", "usage: buildtel cache [--json] [--db PATH]\n"
              "\n"
              "The compiler caches now: runs `ccache --print-stats` and `sccache --show-stats\n"
              "--stats-format=json` (each only when it is on PATH; fixed argv, no shell), stores\n"
              "each snapshot in the history database, and shows hits, misses, hit rate, size\n"
              "and files, with the change since the previous `buildtel cache` (in --json also\n"
              "how much of it the stats printed in the logs of runs recorded since account for).\n"
              "\n"
              "Exit status: 0, 1 when no tool is on PATH or none gave statistics, 2 bad usage.\n"},
    {"import-buildx",
     "usage: buildtel import-buildx REF...\n"
     "       buildtel import-buildx --json-file FILE\n"
     "\n"
     "Print a build's figures (status, steps, cached steps, duration, revision) from\n"
     "`docker buildx history inspect --format json REF` (buildx >= 0.21), run with a\n"
     "fixed argv, never a shell; or from FILE, a saved copy of that output.\n"
     "\n"
     "Exit status: 0, 1 when a REF could not be read, 2 bad usage.\n"},
    {"otlp", "OTLP/HTTP metrics export of `run` and `watch`\n"
             "\n"
             "  --otlp-endpoint URL    export to URL, used as is (else\n"
             "                         OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as is, or\n"
             "                         OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics)\n"
             "  --otlp-interval SECS   seconds between exports (default\n"
             "                         OTEL_METRIC_EXPORT_INTERVAL ms, else 60)\n"
             "\n"
             "A final export at exit carries the totals and per-target metrics and waits at\n"
             "most OTEL_EXPORTER_OTLP_TIMEOUT ms (10000). Also read: OTEL_EXPORTER_OTLP_PROTOCOL\n"
             "(http/protobuf or http/json), _HEADERS (never printed), _COMPRESSION (gzip), the\n"
             "_METRICS_ forms of each, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,\n"
             "OTEL_SDK_DISABLED, and TRACEPARENT: its trace and span ids go on every data\n"
             "point as an exemplar and as attributes trace_id and span_id. Only 429, 502, 503\n"
             "and 504 are retried (Retry-After honoured); a failing collector is one warning.\n"},
    {"export", "usage: buildtel export --otlp [--db PATH|--no-db] [--log-dir DIR] [--incomplete]\n"
               "                       [--otlp-endpoint URL] RUN|FILE.csv\n"
               "\n"
               "Send a recorded run to an OTLP collector again, as its own final export would\n"
               "have: every sample (in requests of 1000), the totals and the per-target\n"
               "metrics. RUN is a run id or a unique prefix of one, read from the history\n"
               "database (--db PATH, default $XDG_STATE_HOME/buildtel/history.db). A run that\n"
               "is not there (recorded with --no-db), or FILE.csv, or --no-db: the run's files\n"
               "<log-dir>/resources-RUN.csv and .run.json (no per-target metrics then). The\n"
               "collector and its settings come from the OTEL_* variables as for `run`;\n"
               "TRACEPARENT is the exporting environment's.\n"
               "\n"
               "A run that is still running is refused. An incomplete run (its buildtel was\n"
               "killed) is refused too, unless --incomplete: then its samples and the totals\n"
               "they give are sent, without duration or targets, with the resource attribute\n"
               "build.run.state=incomplete.\n"
               "\n"
               "Exit status: 0 when the collector took everything; 1 when it did not, the run\n"
               "is unknown, running or incomplete, or its record is unreadable; 2 bad usage.\n"},
    {"help", "usage: buildtel help [COMMAND]\n"},
};

int cmd_print_usage(const char *name)
{
        for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
                if (strcmp(usages[i].name, name) == 0) {
                        fputs(usages[i].text, stdout);
                        while (i + 1 < sizeof(usages) / sizeof(usages[0]) &&
                               strcmp(usages[i + 1].name, name) == 0)
                                fputs(usages[++i].text, stdout);
                        return 0;
                }
        return -ENOENT;
}

int cmd_help(int argc, char **argv)
{
        if (argc < 2) {
                main_print_help(stdout);
                return 0;
        }
        if (cmd_print_usage(argv[1]) < 0) {
                fprintf(stderr, "buildtel: no such command '%s'; see 'buildtel --help'\n", argv[1]);
                return EXIT_BT_USAGE;
        }
        return 0;
}
