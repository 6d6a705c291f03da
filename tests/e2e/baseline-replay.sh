#!/usr/bin/env bash
# A run's baseline (issue 23) derived again by every replay: `summarize RUN`,
# `summarize FILE.csv`, `report RUN` and `export --otlp RUN` of a run read
# the job's runs recorded before it (never the run itself, never a later
# one) and give exactly the findings the live run wrote. Five similar runs
# of one job (a BuildKit plain log of one fully cached target, then a
# pause), then a slow one whose layer cache collapsed (flagged: wall time
# and the target's cache ratio, with the cause), then two more runs; the
# replays of the slow run, of an early run (one earlier run: unknown) and
# of a run recorded with --no-db (no baseline, as it had none live).
. "$(dirname "$0")/lib.sh"
SINKDIR=$HERE/../otlp-sink
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node is not installed (tools/test installs nodejs)"; exit 77; }
[ -d "$SINKDIR/node_modules/@opentelemetry/otlp-transformer" ] ||
        { echo "SKIP: tests/otlp-sink/node_modules is missing: run 'npm ci' there (tools/test does)"; exit 77; }
unset OTEL_SDK_DISABLED OTEL_EXPORTER_OTLP_METRICS_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS TRACEPARENT \
        OTEL_RESOURCE_ATTRIBUTES OTEL_SERVICE_NAME OTEL_EXPORTER_OTLP_ENDPOINT http_proxy HTTP_PROXY \
        https_proxy ALL_PROXY all_proxy
export OTEL_EXPORTER_OTLP_PROTOCOL=http/json
trap 'stop_sink; cleanup' EXIT
DB="$T/h.db"
L="$T/logs"
OTLPCHECK="python3 $HERE/otlpcheck.py"

# One target of 4 steps, the first C of them CACHED, then a pause of S s.
write_bk_log "$T/bk.sh"
n=0
run() { # run [OPTION...] -- CACHED PAUSE: one run of job img; its stderr in $T/err-$n
        local opts=()
        while [ "$1" != -- ]; do opts+=("$1"); shift; done
        shift
        n=$((n + 1))
        "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id "r$n" --interval 0.2 --job img \
                --textfile-dir "$T/tf" "${opts[@]}" -- "$T/bk.sh" "$@" >/dev/null 2>"$T/err-$n"
}
for i in 1 2 3 4 5; do run -- 4 0.3; done
start_sink "$T/live"
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" run -- 1 6
rc=$?
slow=$n
stop_sink
expect_eq "the slow run: its own status" "$rc" 0
# two later runs, one of them slow too: a replay of r$slow must not see them
run -- 4 0.3
run -- 1 3
js="$L/resources-r$slow.summary.json"
check "the live run flagged the wall time and the layer cache, over 5 runs" python3 - "$js" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
f = {(x["figure"], x["target"]): x for x in b["findings"]}
assert b["runs"] == 5, b["runs"]
assert f[("duration_s", None)]["verdict"] == "regression", f[("duration_s", None)]
c = f[("target_cache_ratio", "default")]
assert c["verdict"] == "regression" and c["cause"] == "not cached from [app 2/4] RUN make deps on", c
PY

# -- summarize: the whole summary, baseline included, from both replays
"$BUILDTEL" summarize --db "$DB" --json "r$slow" >"$T/slow.db.json"
expect_eq "summarize RUN: status" "$?" 0
check "summarize RUN --json is the live summary.json, baseline and all" \
        $CSVCHECK json-equal "$T/slow.db.json" "$js"
"$BUILDTEL" summarize --db "$DB" --json "$L/resources-r$slow.csv" >"$T/slow.csv.json"
check "summarize FILE.csv --json (its history named) is the live summary.json, baseline and all" \
        $CSVCHECK json-equal "$T/slow.csv.json" "$js"
"$BUILDTEL" summarize --db "$T/other.db" --json "$L/resources-r$slow.csv" >"$T/slow.nodb.json"
expect_eq "summarize FILE.csv against a history without the run: no baseline" \
        "$($CSVCHECK json-get "$T/slow.nodb.json" baseline)" "None"

# -- report: the section of the live report, from the history and from the files
same_section() { # same_section A B: the baseline section of two reports, byte for byte
        python3 - "$@" <<'PY'
import sys
a, b = (h[h.index('<section id="baseline">'):] for h in (open(p).read() for p in sys.argv[1:3]))
a, b = a[:a.index("</section>")], b[:b.index("</section>")]
if a != b:
    i = next(i for i in range(min(len(a), len(b)) + 1) if a[i:i + 1] != b[i:i + 1])
    sys.exit(f"differ at {i}:\n  {a[max(0, i - 80):i + 80]}\n  {b[max(0, i - 80):i + 80]}")
PY
}
"$BUILDTEL" report --db "$DB" -o "$T/slow.html" "r$slow" 2>/dev/null
expect_eq "report RUN: status" "$?" 0
check "report RUN: the baseline section has both findings flagged" \
        sh -c "grep -q '<td>duration_s</td><td>–</td>.*<td>regression</td>' '$T/slow.html' &&
               grep -q '<td>target_cache_ratio</td><td>default</td>.*<td>regression</td>' '$T/slow.html'"
check "report RUN: the baseline section is the live report's, byte for byte" \
        same_section "$T/slow.html" "$L/report-r$slow.html"
"$BUILDTEL" report --db "$DB" -o "$T/slow.fromcsv.html" "$L/resources-r$slow.csv" 2>/dev/null
check "report FILE.csv: the same section" same_section "$T/slow.fromcsv.html" "$L/report-r$slow.html"
"$BUILDTEL" report --db "$DB" --format markdown "r$slow" >"$T/slow.md" 2>/dev/null
check "report --format markdown: the flagged wall time" \
        grep -Eq '^\| duration_s \| – \| 6\.[0-9]s \| 0\.[0-9]s \| \+[0-9]+ % \| regression \|' "$T/slow.md"

# -- export: what the live run sent, the usual wall time and the ratio included
start_sink "$T/exp"
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$DB" --log-dir "$T/none" \
        "r$slow" >/dev/null 2>"$T/err-export"
expect_eq "export --otlp RUN: status" "$?" 0
stop_sink
check "export sends what the live run sent, its usual and the ratio to it included" \
        $OTLPCHECK same "$T/live/rec.jsonl" "$T/exp/rec.jsonl" build.duration build.duration.usual \
        build.duration.ratio_to_usual

# -- an early run: one earlier run, every finding unknown, as live
"$BUILDTEL" summarize --db "$DB" --json r2 >"$T/r2.json"
check "summarize of the second run is its summary.json, baseline and all" \
        $CSVCHECK json-equal "$T/r2.json" "$L/resources-r2.summary.json"
check "the second run's replay: one earlier run, every finding unknown" python3 -c "
import json
b = json.load(open('$T/r2.json'))['baseline']
assert b['runs'] == 1 and b['findings'] and all(f['verdict'] == 'unknown' for f in b['findings']), b"
"$BUILDTEL" summarize --db "$DB" --json r1 >"$T/r1.json"
check "the first run's replay: no earlier run, as live" \
        $CSVCHECK json-equal "$T/r1.json" "$L/resources-r1.summary.json"
"$BUILDTEL" report --db "$DB" -o "$T/r2.html" r2 2>/dev/null
check "the second run's report: no verdict in its section" python3 - "$T/r2.html" <<'PY'
import sys
h = open(sys.argv[1]).read()
s = h[h.index('<section id="baseline">'):]
s = s[:s.index("</section>")]
assert "regression" not in s and "improvement" not in s, s
PY

# -- a run recorded with --no-db: no baseline live, none replayed
run --no-db -- 1 0.3
nodb=$n
expect_eq "a --no-db run has no baseline" "$($CSVCHECK json-get "$L/resources-r$nodb.summary.json" baseline)" "None"
"$BUILDTEL" summarize --db "$DB" --json "$L/resources-r$nodb.csv" >"$T/nodb.json"
check "its replay (the history does not hold it): the same summary, no baseline" \
        $CSVCHECK json-equal "$T/nodb.json" "$L/resources-r$nodb.summary.json"
finish
