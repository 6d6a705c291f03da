#!/usr/bin/env bash
# Every output of one run agrees: per-target duration, steps, cached,
# success and compiler-cache counts, and the run's duration, outcome and
# step totals, read back from the Prometheus textfile, `inspect --json`,
# the OTLP body the strict sink decoded (tests/otlp-sink/sink.js), and the
# run's summary.json and targets.json (tests/e2e/crosscheck.py compares);
# and `export` of the stored run sends what the live run sent.
# Runs: a three-target bake log of our own (tests/fixtures/crossout), fed
# with pauses so that durations are not zero, once exiting 0 and once 3;
# then, when ../shared/fixtures is there, each real-world BuildKit log.
. "$(dirname "$0")/lib.sh"
SINKDIR=$HERE/../otlp-sink
FIX=$HERE/../fixtures/crossout/bake-three.log
SHARED=$HERE/../../../shared/fixtures/realworld/buildkit-plain
command -v node >/dev/null || { echo "SKIP: node is not installed (tools/test installs nodejs)"; exit 77; }
[ -d "$SINKDIR/node_modules/@opentelemetry/otlp-transformer" ] ||
        { echo "SKIP: tests/otlp-sink/node_modules is missing: run 'npm ci' there (tools/test does)"; exit 77; }
unset OTEL_SDK_DISABLED OTEL_EXPORTER_OTLP_METRICS_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS TRACEPARENT \
        OTEL_RESOURCE_ATTRIBUTES OTEL_SERVICE_NAME http_proxy HTTP_PROXY https_proxy ALL_PROXY all_proxy
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
trap 'stop_sink; cleanup' EXIT


# one NAME CMD...: run CMD under buildtel with every output on, compare
# them; then export the stored run and compare that with what went live.
n=0
one() {
        local name=$1 d rc
        shift
        n=$((n + 1))
        d=$T/r$n
        mkdir -p "$d/tf"
        start_sink "$d/sink"
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --quiet --db "$d/h.db" \
                --textfile-dir "$d/tf" --job x --log-dir "$d/logs" --run-id "x$n" --interval 0.2 --cgroup none \
                -- "$@" >/dev/null 2>"$d/err"
        rc=$?
        stop_sink
        echo "# $name: exit $rc"
        "$BUILDTEL" inspect --db "$d/h.db" --json "x$n" >"$d/inspect.json" 2>>"$d/err" ||
                { bad "$name: inspect --json: $(cat "$d/err")"; return; }
        check "$name: every output agrees" python3 "$HERE/crosscheck.py" "$d/tf/buildtel-x.prom" "$d/inspect.json" \
                "$d/sink/rec.jsonl" "$d/logs/resources-x$n.summary.json" "$d/logs/resources-x$n.targets.json"
        start_sink "$d/sink2"
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$d/h.db" \
                --log-dir "$d/nofiles" "x$n" >/dev/null 2>>"$d/err"
        expect_eq "$name: export from the history: status" "$?" 0
        stop_sink
        check "$name: the stored run exports what the live run sent" python3 "$HERE/otlpcheck.py" same \
                "$d/sink/rec.jsonl" "$d/sink2/rec.jsonl" build.duration build.target.steps
}

# Pauses after each step's end line: the targets' durations differ.
FEED='awk '\''{ print; fflush() } /^#[0-9]+ (DONE|CACHED|ERROR)/ { system("sleep 0.04") }'\'' "$0"'
one "own log, exit 0" sh -c "$FEED; exit 0" "$FIX"
one "own log, exit 3" sh -c "$FEED; exit 3" "$FIX"
# The figures the fixture implies, in targets.json (the outputs agree with it).
check "own log: api built, web failed, docs follows the exit status" python3 - "$T/r1/logs/resources-x1.targets.json" "$T/r2/logs/resources-x2.targets.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ta, tb = ({t["name"]: t for t in d["targets"]} for d in (a, b))
# web's FROM prints a bare DONE: it did nothing, so it counts as cached
want = {"api": (4, 1, True), "web": (3, 2, False), "docs": (2, 2, True)}
for n, (s, c, ok) in want.items():
    assert (ta[n]["steps"], ta[n]["cached"], ta[n]["success"]) == (s, c, ok), (n, ta[n])
assert tb["docs"]["success"] is False and tb["api"]["success"] is True, tb
assert ta["api"]["sccache"] == {"hits": 3, "misses": 1}, ta["api"]
assert all(t["duration_s"] > 0 for t in ta.values()), ta
assert (a["steps"], a["cached"], a["run"]["outcome"], b["run"]["outcome"]) == (9, 5, "success", "failure"), a
PY
# The sources disagree: the --metadata-file names another builder, and
# buildx history (a stand-in `docker`: the real one is in buildkit-*.sh)
# has its own duration for api and its own record of api's steps (its
# replayed log: 6 steps, 2 cached), and calls web completed where the log
# shows its step failing; web's record has no log to replay.
# History wins for what it has, the log gives the rest, in every output.
mkdir -p "$T/fakebin"
cat >"$T/fakebin/docker" <<'DOCKER'
#!/bin/sh
case "$*" in
"buildx history inspect --format json q8rzb3kd0c2k5ue1m4wdt7h0a")
        echo '{"Name":"api","Ref":"q8rzb3kd0c2k5ue1m4wdt7h0a","Status":"completed","Duration":12345678901,"NumCompletedSteps":6,"NumTotalSteps":6,"NumCachedSteps":2}' ;;
"buildx history inspect --format json v2y6c9s0f3j8n1p5r7t4x0zbm")
        echo '{"Name":"web","Ref":"v2y6c9s0f3j8n1p5r7t4x0zbm","Status":"completed"}' ;;
"buildx history logs q8rzb3kd0c2k5ue1m4wdt7h0a")
        # buildx replays the record on stderr: api's own 6 steps, 2 cached
        cat "$(dirname "$0")/api.replay" >&2 ;;
*) exit 1 ;;
esac
DOCKER
{
        echo '#1 [internal] load build definition from Dockerfile'
        echo '#1 DONE 0.0s'
        i=2
        for st in "base 1/3] FROM docker.io/library/python:3.12" "base 2/3] RUN pip install -r req.txt" \
                "base 3/3] COPY . ." "api 1/3] RUN make" "api 2/3] RUN make test" "api 3/3] RUN make dist"; do
                echo
                echo "#$i [$st"
                if [ $i -le 3 ]; then echo "#$i CACHED"; else echo "#$i 0.101 working"; echo "#$i DONE 1.5s"; fi
                i=$((i + 1))
        done
} >"$T/fakebin/api.replay"
chmod +x "$T/fakebin/docker"
PATH="$T/fakebin:$PATH" one "own log, metadata file and buildx history" \
        sh -c "$FEED; exit 0" "$FIX" --metadata-file "$HERE/../fixtures/crossout/metadata.json"
check "history wins for what it has, the log gives the rest, the metadata file names" \
        python3 - "$T/r$n/logs/resources-x$n.targets.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["targets"]}
assert (t["api"]["duration_s"], t["api"]["steps"], t["api"]["cached"], t["api"]["success"]) == (12.345678901, 6, 2, True), t["api"]
assert (t["web"]["steps"], t["web"]["cached"], t["web"]["success"]) == (3, 2, True), t["web"]
assert 0 < t["web"]["duration_s"] < 10, t["web"]
assert (t["api"]["builder"], t["web"]["builder"], t["docs"]["builder"]) == ("meta-builder", "meta-builder", "cross-builder"), d
assert t["api"]["ref"] == "q8rzb3kd0c2k5ue1m4wdt7h0a" and t["docs"]["ref"] == ""
PY
# No BuildKit in the log (--progress=quiet): the targets come from the
# metadata file, their figures from buildx history or nowhere.
PATH="$T/fakebin:$PATH" one "quiet log, metadata file and buildx history" \
        sh -c 'echo "building quietly"; exit 0' sh --metadata-file "$HERE/../fixtures/crossout/metadata.json"
check "quiet: history's figures, the rest absent, the run's totals history's sum" \
        python3 - "$T/r$n/logs/resources-x$n.targets.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["targets"]}
assert sorted(t) == ["api", "web"], d
assert (t["api"]["duration_s"], t["api"]["steps"], t["api"]["cached"], t["api"]["success"]) == (12.345678901, 6, 2, True), t["api"]
assert (t["web"]["duration_s"], t["web"]["steps"], t["web"]["cached"], t["web"]["success"]) == (None, None, None, True), t["web"]
assert (d["steps"], d["cached"]) == (6, 2), d
PY
if [ -d "$SHARED" ]; then
        for f in "$SHARED"/*; do
                [ -f "$f" ] && one "$(basename "$f")" cat "$f"
        done
else
        echo "# $SHARED is not here: the real-world logs are not replayed"
fi
finish
