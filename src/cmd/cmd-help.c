/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "util/macro.h"

/* The prose of each command's help; the option lists between come from
 * the table of cmd-common.c (opts: the commands whose options, group:
 * which of them). */
static const struct {
        const char *name;
        const char *text;
        unsigned opts;
        int group;
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
     "Example: buildtel run --memory-max 6G -- ninja -C build\n"
     "\n",
     CMDS_RUN, OPTG_MAIN},
    {"run",
     "The run is in the history from its start (state running) to its end; a locked,\n"
     "full, unwritable or corrupt database is one warning and changes nothing else.\n"
     "\n"
     "Build metrics (from COMMAND's own output; also for `watch`):\n",
     CMDS_RUN, OPTG_METRICS},
    {"run",
     "OTLP export (--otlp-endpoint URL, --otlp-interval SECONDS): `buildtel help otlp`.\n"
     "When COMMAND has --metadata-file F, F is read at the end (builder, node, ref per\n"
     "target); without one, `docker buildx history ls` finds this run's records. When\n"
     "docker exists, each target's record (history inspect, and history logs replayed)\n"
     "gives its status, duration, steps and cached steps, shared steps included.\n"
     "\n"
     "SIGINT, SIGTERM, SIGHUP and SIGQUIT go to COMMAND's process group; buildtel then\n"
     "waits for it and writes its files as on a normal exit. Killed by SIGINT or\n"
     "SIGQUIT (Ctrl-C, Ctrl-\\), COMMAND takes buildtel with it, by the same signal,\n"
     "so a shell stops the list or script that ran it.\n"
     "\n"
     "Exit status: COMMAND's own; 128+N when signal N killed it. buildtel's own:\n"
     "125 bad option or buildtel failed before COMMAND ran, 126 COMMAND not\n"
     "executable, 127 COMMAND not found.\n",
     0, 0},
    {"bench",
     "usage: buildtel bench [OPTIONS] -- 'BUILD' ['BUILD'...]\n"
     "\n"
     "Run each BUILD (one shell string, `sh -c BUILD`, as hyperfine) --runs times,\n"
     "each a whole `buildtel run` (files, history row, summary); the builds' output\n"
     "is discarded unless --show-output. Per BUILD: Time (mean ± σ), Range\n"
     "(min … max), median; each run classed hot (no compile, every layer cached),\n"
     "warm (compiler-cache hits, some layers cached) or cold, with its memory\n"
     "peaks and cache figures; two or more BUILDs: each against the fastest, the\n"
     "ratio and a Mann-Whitney U test. A failing BUILD stops the bench (-i: go on).\n"
     "On a terminal a progress line says which run is going.\n"
     "\n"
     "  -P, --parameter-scan NAME MIN MAX [-D STEP]\n"
     "  -L, --parameter-list NAME V1,V2,...\n"
     "                         as hyperfine: each BUILD once per value, {NAME}\n"
     "                         replaced (whole numbers MIN to MAX, or by STEP); a\n"
     "                         table of wall, CPU and memory peaks per value, and\n"
     "                         --export-json's \"parameters\"; e.g.\n"
     "                         bench -P j 1 8 -- 'ninja -j {j}'\n"
     "Example: buildtel bench -P j 1 8 -- 'ninja -j {j}'\n"
     "\n",
     CMDS_BENCH, OPTG_MAIN},
    {"watch",
     "usage: buildtel watch --pid PID [OPTIONS]\n"
     "\n"
     "Attach to a build that is already running, sample the same columns as `run`,\n"
     "and end when PID exits, with a final sample and the summary (also on SIGINT,\n"
     "SIGTERM, SIGHUP or SIGQUIT).\n"
     "\n"
     "Example: buildtel watch --pid $(pgrep -o ninja)\n"
     "\n",
     CMDS_WATCH, OPTG_MAIN},
    {"watch", "\nBuild metrics, from the lines of --stage-log-dir, as for `run`:\n", CMDS_WATCH,
     OPTG_METRICS},
    {"watch",
     "OTLP export (--otlp-endpoint URL, --otlp-interval SECONDS): `buildtel help otlp`.\n"
     "\n"
     "Exit status: 0 when PID exited; 128+N when signal N ended the watch (SIGINT,\n"
     "SIGQUIT: buildtel ends by it, its files written); 1 when PID does not exist;\n"
     "2 bad usage.\n",
     0, 0},
    {"summarize",
     "usage: buildtel summarize [--json] [--near-oom-mb MB] [--low-disk-gb GB] [--db PATH]\n"
     "                          FILE.csv|RUN\n"
     "\n"
     "Recompute the summary of a run from its CSV (and the resources-<id>.run.json next\n"
     "to it, for the run's facts), exactly as the run computed it: the rows go through\n"
     "the same pipeline. Works on the CSV of a killed run: a torn last row and junk\n"
     "rows are skipped and counted. When the argument is not an existing file, it is a\n"
     "run id (or a unique prefix of one) in the history database, whose samples give\n"
     "the same summary.\n"
     "\n"
     "Example: buildtel summarize --json resources-20261205T101500Z-1234.csv\n"
     "\n",
     CMDS_SUMMARIZE, OPTG_MAIN},
    {"summarize",
     "\nExit status: 0, 1 when FILE is unreadable or not a buildtel CSV, or RUN is not in\n"
     "the history, 2 bad usage.\n",
     0, 0},
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
     "Example: buildtel report --format markdown >> $GITHUB_STEP_SUMMARY\n"
     "\n",
     CMDS_REPORT, OPTG_MAIN},
    {"report",
     "\nExit status: 0, 1 when the run cannot be read or the report written, 2 bad usage.\n", 0, 0},
    {"status",
     "usage: buildtel status [--json] [--limit N] [--since WHEN] [--db PATH]\n"
     "\n"
     "The recent runs in the history database, newest first (20 unless --limit):\n"
     "id, start, duration (rounded as the summary), result (ok, exit N, signal N,\n"
     "running, incomplete), builder, host (or the nodes its targets ran on), the\n"
     "build's own peak memory (its cgroup's, page cache in) and anon peak, the\n"
     "host's peak memory used, near-OOM samples; under the table what the newest\n"
     "finished run's failure named, its largest unit and -j reading. A run whose buildtel was\n"
     "killed (its row was never completed and its process is gone, or the machine\n"
     "rebooted) is `incomplete`.\n"
     "\n"
     "Example: buildtel status --since 1d --job ci/build\n"
     "\n",
     CMDS_STATUS, OPTG_MAIN},
    {"status",
     "\nExit status: 0 (also when no run was recorded yet), 1 when the database is\n"
     "unreadable or RUN is missing, 2 bad usage.\n",
     0, 0},
    {"top",
     "usage: buildtel top [--once [RUN]] [--db PATH]\n"
     "\n"
     "A live full-screen view of the builds running on this machine and the recent\n"
     "finished ones, from the history database: command, state (ok, exit 2,\n"
     "SIGPIPE, OOM-killed), elapsed, memory available (with a sparkline of the last\n"
     "minutes), the build's memory (a finished run's peak, as status says it), CPU,\n"
     "OOM kills (a running build: a near-OOM flag), stage and context. Refreshes on\n"
     "the runs' own sampling interval (at least 0.5 s). Keys: arrows or j/k move,\n"
     "Enter opens a run (its targets and recent stages), Esc or Backspace goes back,\n"
     "q quits. With no run recorded yet it opens empty and waits for the first.\n"
     "NO_COLOR is honoured.\n"
     "\n"
     "Example: buildtel top\n"
     "\n",
     CMDS_TOP, OPTG_MAIN},
    {"top", "\nExit status: 0, 1 when the database is missing or unreadable, 2 bad usage.\n", 0, 0},
    {"prune",
     "usage: buildtel prune [--keep N] [--older-than SPAN] [--max-size SIZE] [--dry-run]\n"
     "                      [--db PATH] [--log-dir DIR]\n"
     "\n"
     "Remove the oldest finished runs: their files (only the names buildtel gives\n"
     "a run's files: resources-ID.*, build-ID.log[.gz], report-ID.html,\n"
     "trace-ID.json, regular files in the run's log directory) and then their\n"
     "rows in every table of the history. A running run (its buildtel alive) is\n"
     "never removed; it counts toward the limits. Incomplete runs (buildtel\n"
     "killed) are removed like finished ones. Without a limit, the one `run`\n"
     "applies at its end: --keep 200 --max-size 2G ($BUILDTEL_KEEP_RUNS,\n"
     "$BUILDTEL_KEEP_SIZE; `run --keep-runs N --keep-size SIZE`; 0 keeps all).\n"
     "\n"
     "Example: buildtel prune --keep 50 --dry-run\n"
     "\n",
     CMDS_PRUNE, OPTG_MAIN},
    {"prune",
     "\nExit status: 0, 1 when the history cannot be read or a run not removed, 2 bad\n"
     "usage.\n",
     0, 0},
    {"inspect",
     "usage: buildtel inspect [--json] [--db PATH] [RUN]\n"
     "\n"
     "One run from the history database (RUN: a run id or a unique prefix; the latest\n"
     "by default): command, cwd, host, builder, git revision, start, duration, result,\n"
     "what a failed build named (target, first and last error), steps and cached steps, resource "
     "peaks with the stage and log line active then,\n"
     "a per-target table (duration, steps, cached, ratio, node, compiler-cache hits and\n"
     "misses), and the compiler-cache stats its log printed (the first and the last\n"
     "block of each tool).\n"
     "\n"
     "Example: buildtel inspect --json\n"
     "\n",
     CMDS_INSPECT, OPTG_MAIN},
    {"inspect",
     "\nExit status: 0, 1 when RUN is not there or the database is unreadable, 2 bad usage.\n", 0,
     0},
    {"compare",
     "usage: buildtel compare [--all] [--json] [--db PATH] A B\n"
     "       buildtel compare --last [--job NAME] [--all] [--json] [--db PATH]\n"
     "\n"
     "Two runs from the history database side by side (A and B: run ids or unique\n"
     "prefixes; --last: the last two finished runs, the older as A; with --job NAME,\n"
     "the last two of that job), each one's outcome, then what matters first: the\n"
     "run (wall time, CPU time, the build's memory peaks, the host's, OOM kills), the\n"
     "compiler caches, per target, per BuildKit step, per compile unit (by the name\n"
     "the summary shows; only in A, only in B), the facts (command, revision, host).\n"
     "Each row shows A, B, the change and its %; in a section, the largest relative\n"
     "change first, 12 at most. Noise, what the sampling cannot tell apart, is\n"
     "folded into one line a section: a unit's time within 2.5 sample intervals (or\n"
     "a unit seen for less in one run only), another time within 5 s, a memory\n"
     "figure within 32 MiB (the baseline's floors). --all lists every change, noise\n"
     "marked; --json every row (keys in the man page).\n"
     "\n"
     "Example: buildtel compare --last --job ci/build\n"
     "\n",
     CMDS_COMPARE, OPTG_MAIN},
    {"compare",
     "\nExit status: 0, 1 when a run is not there, there are fewer than two finished\n"
     "runs (--last) or the database is missing or unreadable, 2 bad usage.\n",
     0, 0},
    {"plan",
     "usage: buildtel plan [--job NAME] [--memory SIZE] [--cpus N] [--headroom SIZE]\n"
     "                     [--json] [--db PATH]\n"
     "\n"
     "From the job's unit ledger (each compile and link unit's median peak, CPU and\n"
     "wall over its last 10 recorded runs; a unit a compiler cache served measures\n"
     "nothing) a plan for a machine, this one unless --memory and --cpus: the -j\n"
     "whose worst case fits (its heaviest units at once, with the headroom kept\n"
     "free); per -j the worst case, the most at once as the units would run in their\n"
     "usual order, and the wall time (the units alone: dependencies are not known);\n"
     "the heavy units (each above its share of the memory) and the depth of a pool\n"
     "that lets the rest run at every CPU, as snippets to paste: a ninja pool, CMake's\n"
     "JOB_POOLS (per source from CMake 4.2, per target before), and for make the\n"
     "-j that fits. The job is --job, $BUILDTEL_JOB or the CI's, else the newest\n"
     "run's. run --memory-guard holds compiles back while a build runs.\n"
     "\n"
     "  buildtel plan --memory 16G --cpus 8\n"
     "\n",
     CMDS_PLAN, OPTG_MAIN},
    {"plan",
     "\nExit status: 0, 1 when the job has no measured unit or the database is missing\n"
     "or unreadable, 2 bad usage.\n",
     0, 0},
    {"layers",
     "usage: buildtel layers [--json] [--limit N] [--since WHEN] [--db PATH]\n"
     "\n"
     "Layer-cache reuse per target (image), from the most recent build of each: steps,\n"
     "cached steps, ratio, and the node it ran on. A target whose node changed since\n"
     "its previous build is flagged: a new node cannot use the old node's local cache,\n"
     "which explains a low ratio.\n"
     "\n"
     "Example: buildtel layers --since 1w\n"
     "\n",
     CMDS_LAYERS, OPTG_MAIN},
    {"layers", "\nExit status: 0, 1 when the database is missing or unreadable, 2 bad usage.\n", 0,
     0},
    {"cache",
     "usage: buildtel cache [--json] [--db PATH]\n"
     "\n"
     "The compiler caches now: runs `ccache --print-stats` and `sccache --show-stats\n"
     "--stats-format=json` (each only when it is on PATH; fixed argv, no shell), stores\n"
     "each snapshot in the history database, and shows hits, misses, hit rate, size\n"
     "and files, with the change since the previous `buildtel cache` (in --json also\n"
     "how much of it the stats printed in the logs of runs recorded since account for).\n"
     "\n"
     "Example: buildtel cache\n"
     "\n",
     CMDS_CACHE, OPTG_MAIN},
    {"cache", "\nExit status: 0, 1 when no tool is on PATH or none gave statistics, 2 bad usage.\n",
     0, 0},
    {"import-buildx",
     "usage: buildtel import-buildx REF...\n"
     "\n"
     "Print a build's figures (status, steps, cached steps, duration, revision) from\n"
     "`docker buildx history inspect --format json REF` (buildx >= 0.21), run with a\n"
     "fixed argv, never a shell; or from FILE, a saved copy of that output. REF: any\n"
     "form buildx prints (BUILDER/NODE/ID or ID). Steps come from the replayed record\n"
     "(`docker buildx history logs ID`), internal vertices left out; then each RUN\n"
     "step's usage from BuildKit's record where it has one (cgroup v2 builders:\n"
     "`history inspect attachment --type provenance`).\n"
     "\n"
     "Example: buildtel import-buildx my-image-build\n"
     "\n",
     CMDS_IMPORT_BUILDX, OPTG_MAIN},
    {"import-buildx", "\nExit status: 0, 1 when a REF could not be read, 2 bad usage.\n", 0, 0},
    {"otlp",
     "OTLP/HTTP metrics export of `run` and `watch`\n"
     "\n",
     CMDS_RUN, OPTG_OTLP},
    {"otlp",
     "\n"
     "A final export at exit carries the totals and per-target metrics and waits at\n"
     "most OTEL_EXPORTER_OTLP_TIMEOUT ms (10000). Also read: OTEL_EXPORTER_OTLP_PROTOCOL\n"
     "(http/protobuf or http/json), _HEADERS (never printed), _COMPRESSION (gzip), the\n"
     "_METRICS_ forms of each, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,\n"
     "OTEL_SDK_DISABLED, and TRACEPARENT: its trace and span ids go on every data\n"
     "point as an exemplar and as attributes trace_id and span_id. Only 429, 502, 503\n"
     "and 504 are retried (Retry-After honoured); a failing collector is one warning.\n",
     0, 0},
    {"export",
     "usage: buildtel export --otlp [--db PATH|--no-db] [--log-dir DIR] [--incomplete]\n"
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
     "Example: buildtel export --trace -o build.trace.json\n"
     "\n",
     CMDS_EXPORT, OPTG_MAIN},
    {"export", "", CMDS_EXPORT, OPTG_OTLP},
    {"export",
     "\nExit status: 0 when the collector took everything; 1 when it did not, the run\n"
     "is unknown, running or incomplete, or its record is unreadable; 2 bad usage.\n",
     0, 0},
    {"export",
     "\n"
     "buildtel export --trace [--db PATH|--no-db] [--log-dir DIR] [--ninja-log FILE]\n"
     "                        [-o FILE|-] [RUN|FILE.csv]\n"
     "writes the run (default: the latest in the history) as a Chrome Trace Event\n"
     "Format file for Perfetto UI or chrome://tracing, to FILE or trace-RUN.json:\n"
     "the run, its targets, its compile units and the .ninja_log's edges as\n"
     "slices on lanes, the samples as counters (memory, CPU, load, disk, PSI\n"
     "stall, compilers), OOM kills and the first near-OOM and low-disk samples\n"
     "as instants. The history keeps no target times: the run's files (--no-db)\n"
     "give them.\n",
     0, 0},
    {"help", "usage: buildtel help [COMMAND]\n", 0, 0},
};

int cmd_parse_options(unsigned cmd, const char *name, int argc, char **argv, struct common_opts *o)
{
        int k = cmd_parse_table(cmd, name, argc, argv, o);

        if (k < 0)
                return k;
        if (o->help) {
                cmd_print_usage(name);
                return 0;
        }
        return k;
}

int cmd_print_usage(const char *name)
{
        bool found = false;

        for (size_t i = 0; i < ARRAY_SIZE(usages); i++) {
                if (strcmp(usages[i].name, name) != 0)
                        continue;
                fputs(usages[i].text, stdout);
                if (usages[i].opts)
                        cmd_print_options(stdout, usages[i].opts, usages[i].group);
                found = true;
        }
        return found ? 0 : -ENOENT;
}

int cmd_help(int argc, char **argv)
{
        if (argc < 2) {
                main_print_help(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--completion") == 0) {
                /* the shell completions meson installs, from the option table */
                if (argc != 3 || cmd_print_completion(stdout, argv[2]) < 0) {
                        fprintf(stderr, "buildtel help --completion: bash, zsh or fish\n");
                        return EXIT_BT_USAGE;
                }
                return 0;
        }
        if (strcmp(argv[1], "--dump-options") == 0) {
                /* hidden: the option table, for the man page check */
                cmd_dump_options(stdout);
                return 0;
        }
        if (cmd_print_usage(argv[1]) < 0) {
                fprintf(stderr, "buildtel: no such command '%s'; see 'buildtel --help'\n", argv[1]);
                return EXIT_BT_USAGE;
        }
        return 0;
}
