#!/usr/bin/env bash
# OTLP traces (/v1/traces) against the strict sink (tests/otlp-sink/sink.js):
# a real run over a BuildKit log whose build exits 1, under a given
# TRACEPARENT; the span tree, ids, CI/CD semconv names and values, error
# status; the build's own TRACEPARENT (the run span, with export on; the
# caller's, untouched, with export off).
. "$(dirname "$0")/lib.sh"
SINKDIR=$HERE/../otlp-sink
command -v node >/dev/null || { echo "SKIP: node is not installed (tools/test installs nodejs)"; exit 77; }
[ -d "$SINKDIR/node_modules/protobufjs" ] ||
        { echo "SKIP: tests/otlp-sink/node_modules is missing: run 'npm ci' there (tools/test does)"; exit 77; }
L="$T/logs"
REC="$T/sink/rec.jsonl"
mkdir -p "$T/sink" "$T/w"
SINK_PID=
stop_sink() { [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null; SINK_PID=; }
trap "stop_sink; ${KEEP:+:} cleanup" EXIT
start_sink() {
        rm -f "$T/sink/port" "$REC"
        node "$SINKDIR/sink.js" --port-file "$T/sink/port" --record "$REC" --mode ok 2>"$T/sink/err" &
        SINK_PID=$!
        for _ in $(seq 200); do [ -s "$T/sink/port" ] && break; sleep 0.05; done
        PORT=$(cat "$T/sink/port" 2>/dev/null)
        [ -n "$PORT" ] || { echo "FAIL the sink did not start: $(cat "$T/sink/err")"; exit 1; }
}
unset CCACHE_STATSLOG OTEL_SDK_DISABLED OTEL_EXPORTER_OTLP_METRICS_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \
        OTEL_EXPORTER_OTLP_PROTOCOL OTEL_EXPORTER_OTLP_TRACES_PROTOCOL TRACEPARENT TRACESTATE \
        GITHUB_WORKFLOW GITHUB_RUN_ID CI_PIPELINE_NAME CI_PIPELINE_ID http_proxy HTTP_PROXY ALL_PROXY all_proxy
FIX=$HERE/../fixtures/buildmetrics/bake-compile.log
TP_TRACE=4bf92f3577b34da6a3ce929d0e0e4736
TP_SPAN=00f067aa0ba902b7
BUILD='echo "BUILD_TP=${TRACEPARENT-}"; echo "BUILD_TS=${TRACESTATE-}"; cat "$0"; exit 1'
# A work tree of its own: vcs.ref.head.revision is its HEAD.
git -C "$T/w" init -q && git -C "$T/w" -c user.name=t -c user.email=t@t commit -q --allow-empty -m x
REV=$(git -C "$T/w" rev-parse HEAD)
[ -n "$REV" ] || { echo "FAIL the work tree's revision: git is needed (tools/deps.sh installs it)"; exit 1; }

run_case() { # run_case NAME VAR=VALUE...: the build with export on; the record in rec-NAME
        local name=$1; shift
        start_sink
        (cd "$T/w" && env "$@" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" \
                "$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id "$name" --interval 0.1 --cgroup none \
                ${BT_OPTS:-} -- sh -c "$BUILD" "$FIX" >"$T/out-$name" 2>"$T/err-$name")
        expect_eq "$name: the build's status passes through" "$?" 1
        stop_sink
        mv "$REC" "$T/rec-$name.jsonl"
        expect_eq "$name: nothing on stderr" "$(cat "$T/err-$name")" ""
}
spans() { # spans NAME: the checks of otlptrace.py against exp-NAME.json
        python3 "$HERE/otlptrace.py" "$T/rec-$1.jsonl" "$L/resources-$1.run.json" "$T/out-$1" "$T/exp-$1.json"
}

# 1. protobuf, under the caller's trace, in a GitHub Actions job
run_case pb TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01" TRACESTATE="congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" \
        GITHUB_WORKFLOW="CI build" GITHUB_RUN_ID=4242
cat >"$T/exp-pb.json" <<JSON
{"content_type": "application/x-protobuf", "argv0": "sh",
 "parent": {"trace_id": "$TP_TRACE", "span_id": "$TP_SPAN"},
 "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
 "result": "failure", "error_type": "1", "vcs_rev": "$REV",
 "ci": {"cicd.pipeline.name": "CI build", "cicd.pipeline.run.id": "4242"},
 "targets": ["lib", "cli"], "steps": {"lib": [6, 2], "cli": [2, 1]}, "step_spans": 15,
 "cached_steps": ["[cli base 6/6] COPY --from=lib /out /", "[lib base 3/6] WORKDIR /src",
                  "[lib base 2/6] RUN apt-get update && apt-get install -y --no-install-recommends gcc make sccache"]}
JSON
check "protobuf: span tree, ids, semconv, error status, the build's TRACEPARENT" spans pb

# 2. JSON for the spans only (the traces protocol variable), GitLab CI
run_case json TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01" OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json \
        OTEL_EXPORTER_OTLP_COMPRESSION=gzip \
        CI_PIPELINE_NAME=nightly CI_PIPELINE_ID=77
sed -e 's|application/x-protobuf|application/json|' -e 's|"tracestate": "[^"]*"|"tracestate": ""|' \
        -e 's|"cicd.pipeline.name": "CI build", "cicd.pipeline.run.id": "4242"|"cicd.pipeline.name": "nightly", "cicd.pipeline.run.id": "77"|' \
        "$T/exp-pb.json" >"$T/exp-json.json"
check "json: the same spans in the OTLP JSON mapping" spans json
check "json: the metrics stay protobuf" grep -q '"path":"/v1/metrics","contentType":"application/x-protobuf"' "$T/rec-json.jsonl"
check "json: the spans gzip'd too" grep -q '"path":"/v1/traces","contentType":"application/json","contentEncoding":"gzip"' "$T/rec-json.jsonl"

# 3. no TRACEPARENT: a trace of our own; a stray TRACESTATE is not passed on
run_case root TRACESTATE=stray=1
sed -e 's|"parent": {[^}]*}|"parent": null|' -e 's|"tracestate": "[^"]*"|"tracestate": ""|' \
        -e 's|"ci": {[^}]*}|"ci": {}|' "$T/exp-pb.json" >"$T/exp-root.json"
check "no TRACEPARENT: a root run span with a random trace id, named in the build's TRACEPARENT" spans root
check "  and the metric exemplars name the run span" python3 - "$T/rec-root.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
span = [s for r in recs if r["path"] == "/v1/traces"
        for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"].startswith("buildtel run")][0]
ex = [e for r in recs if r["path"] == "/v1/metrics"
      for m in r["request"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
      for dp in (m.get("gauge") or m.get("sum"))["dataPoints"] for e in dp.get("exemplars", [])]
sys.exit(not ex or any(e["traceId"] != span["traceId"] or e["spanId"] != span["spanId"] for e in ex))
PY

# 3b. --trace-max-spans: targets first, then steps
BT_OPTS="--trace-max-spans 3" run_case cap
check "--trace-max-spans 3: the run span, both targets and the first step" python3 - "$T/rec-cap.jsonl" <<'PY'
import json, sys
sp = [s for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/v1/traces"
      for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]]
sys.exit([s["name"] for s in sp] != ["buildtel run sh", "target lib", "target cli",
                                     "[internal] load local bake definitions"])
PY

# 3c. export --otlp re-sends the run from the history: the same spans
DB="$T/h.db"
BT_OPTS="--db $DB" run_case live TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01"
start_sink
TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" \
        "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" live >/dev/null 2>"$T/err-export"
expect_eq "export --otlp: status" "$?" 0
stop_sink
mv "$REC" "$T/rec-export.jsonl"
check "export --otlp: the live run's spans (ids, parents, names, times, attributes, status), steps included" \
        python3 - "$T/rec-live.jsonl" "$T/rec-export.jsonl" <<'PY'
import json, sys
def spans(p):
    return [s for r in map(json.loads, open(p)) if r["path"] == "/v1/traces"
            for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]]
a, b = spans(sys.argv[1]), spans(sys.argv[2])
if a != b or len(a) < 10:
    for x, y in zip(a, b):
        if x != y:
            print("live  ", x, "\nexport", y)
            break
    print(len(a), len(b))
    sys.exit(1)
PY

# 3d. ninja edges from --ninja-log: the slowest, on the run's clock
NL="$T/w/.ninja_log"
printf 'rule r\n  command = true\nbuild a.o: r\nbuild b.o: r\nbuild c.o: r a.o\n' >"$T/w/build.ninja"
start_sink
(cd "$T/w" && OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --quiet --db "$T/n.db" \
        --log-dir "$L" --run-id ninja --cgroup none --ninja-log "$NL" --trace-max-spans 2 -- sh -c \
        "sleep 0.3; printf '# ninja log v5\n0\t100\t0\ta.o\t1\n0\t250\t0\tb.o\t2\n100\t300\t0\tc.o\t3\n' >'$NL'" \
        >/dev/null 2>"$T/err-ninja")
expect_eq "ninja: status" "$?" 0
stop_sink
check "ninja: the 2 slowest edges as children, ending when the log was written" python3 - "$REC" "$L/resources-ninja.run.json" "$NL" <<'PY'
import json, os, sys
sp = [s for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/v1/traces"
      for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]]
run = sp[0]
kids = [(s["name"], (int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6, s.get("parentSpanId")) for s in sp[1:]]
want = [("ninja b.o", 250.0, run["spanId"]), ("ninja c.o", 200.0, run["spanId"])]
mt = os.stat(sys.argv[3]).st_mtime
end = max(int(s["endTimeUnixNano"]) for s in sp[1:]) / 1e9
ok = [(n, round(d), p) for n, d, p in kids] == want and abs(end - mt) < 0.01
print(kids, end - mt)
sys.exit(not ok)
PY
# its build.ninja (c.o from a.o): the critical path a.o, c.o (issue 38); of
# the 2 spans kept, c.o's says so
check "ninja: the critical path's edge has build.critical_path, the other not" python3 - "$REC" <<'PY'
import json, sys
sp = [s for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/v1/traces"
      for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]]
cp = {s["name"]: any(a["key"] == "build.critical_path" and a["value"].get("boolValue") for a in s.get("attributes", []))
      for s in sp[1:]}
print(cp)
sys.exit(cp != {"ninja b.o": False, "ninja c.o": True})
PY
# same_edge_spans A B: the two recordings hold the same 2 edge spans (the
# run span's children), start and end alike
same_edge_spans() {
        python3 - "$1" "$2" <<'PY'
import json, sys
def kids(p):
    sp = [s for r in map(json.loads, open(p)) if r["path"] == "/v1/traces"
          for s in r["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    return [(s["name"], s["startTimeUnixNano"], s["endTimeUnixNano"]) for s in sp[1:]]
a, b = kids(sys.argv[1]), kids(sys.argv[2])
print(a, b)
sys.exit(a != b or len(a) != 2)
PY
}
mv "$REC" "$T/rec-ninja.jsonl"
start_sink
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$T/n.db" --trace-max-spans 2 \
        --log-dir "$L" ninja >/dev/null 2>"$T/err-nexport"
expect_eq "ninja: export --otlp: status" "$?" 0
stop_sink
check "ninja: the export sends the same edge spans from the history (no trace id given: its own trace)" \
        same_edge_spans "$T/rec-ninja.jsonl" "$REC"
# A later build appended to the log (issue 21): export --otlp --ninja-log
# still sends the run's own edges, from the history.
printf '0\t900\t0\tlater.o\t9\n' >>"$NL"
touch -d '+1 hour' "$NL"
mv "$REC" "$T/rec-nexport.jsonl"
start_sink
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$T/n.db" --trace-max-spans 2 \
        --ninja-log "$NL" --log-dir "$L" ninja >/dev/null 2>"$T/err-nappend"
expect_eq "ninja: export --otlp --ninja-log (appended): status" "$?" 0
stop_sink
check "ninja: an appended log loses none of the run's edge spans" \
        same_edge_spans "$T/rec-ninja.jsonl" "$REC"

# 4. export off: the build's environment is exactly the caller's
(cd "$T/w" && TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01" TRACESTATE=congo=1 "$BUILDTEL" run --quiet --no-db \
        --log-dir "$L" --cgroup none -- sh -c "$BUILD" "$FIX" >"$T/out-off" 2>/dev/null)
expect_eq "export off: the caller's TRACEPARENT, untouched" "$(grep '^BUILD_TP=' "$T/out-off")" \
        "BUILD_TP=00-$TP_TRACE-$TP_SPAN-01"
expect_eq "export off: the caller's TRACESTATE, untouched" "$(grep '^BUILD_TS=' "$T/out-off")" "BUILD_TS=congo=1"
(cd "$T/w" && "$BUILDTEL" run --quiet --no-db --log-dir "$L" --cgroup none -- sh -c 'env' >"$T/env-off" 2>/dev/null)
check "export off, no TRACEPARENT: the build has none" sh -c "! grep -q '^TRACE' '$T/env-off'"
env | grep -v '^_=\|^PWD=\|^OLDPWD=\|^SHLVL=' | sort >"$T/env-ours"
(cd "$T/w" && "$BUILDTEL" run --quiet --no-db --log-dir "$L" --cgroup none -- env >"$T/env-build" 2>/dev/null)
# ... but for those buildtel adds, ccache's stats log of the build and the
# log of an sccache server the build starts (the caller had none: their
# own would be kept)
check "export off: the build's environment is ours, variable for variable" \
        sh -c "grep -v '^_=' '$T/env-build' | grep -v '^PWD=\|^OLDPWD=\|^SHLVL=\|^CCACHE_STATSLOG=\|^SCCACHE_LOG=\|^SCCACHE_ERROR_LOG=' | sort | diff - '$T/env-ours'"
check "export off: and CCACHE_STATSLOG, the run's own file" \
        grep -Eqx "CCACHE_STATSLOG=$L/resources-[^/]+\.ccache\.log" "$T/env-build"
check "export off: and SCCACHE_ERROR_LOG, the run's own file, SCCACHE_LOG for the verdicts only" \
        sh -c "grep -Eqx 'SCCACHE_ERROR_LOG=$L/resources-[^/]+\.sccache\.log' '$T/env-build' && grep -qx 'SCCACHE_LOG=sccache::compiler::compiler=debug,sccache::server=debug' '$T/env-build'"
finish
