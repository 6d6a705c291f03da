#!/usr/bin/env bash
# OTLP export against a strict sink on 127.0.0.1 (tests/otlp-sink/sink.js,
# Node with @opentelemetry/otlp-transformer's protobuf definitions).
#   otlp.sh protobuf|json     what is sent: names, units, values, times, attributes,
#                             resource, TRACEPARENT exemplars; headers never written
#   otlp.sh down|hang|400|503 a collector that misbehaves
#   otlp.sh export            a run sent later from its files
#   otlp.sh export-db         a run sent later from the history database, as it was sent live
#   otlp.sh export-states     unknown, running and incomplete runs
. "$(dirname "$0")/lib.sh"
CASE=${1:?case}
SINKDIR=$HERE/../otlp-sink
OTLPCHECK="python3 $HERE/otlpcheck.py"
command -v node >/dev/null || { echo "SKIP: node is not installed (tools/test installs nodejs)"; exit 77; }
[ -d "$SINKDIR/node_modules/@opentelemetry/otlp-transformer" ] ||
        { echo "SKIP: tests/otlp-sink/node_modules is missing: run 'npm ci' there (tools/test does)"; exit 77; }
L="$T/logs"
REC="$T/sink/rec.jsonl"
mkdir -p "$T/sink"
SINK_PID=
stop_sink() { [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null; SINK_PID=; }
trap 'stop_sink; cleanup' EXIT
start_sink() { # start_sink MODE: sets PORT
        rm -f "$T/sink/port"
        node "$SINKDIR/sink.js" --port-file "$T/sink/port" --record "$REC" --mode "$1" 2>"$T/sink/err" &
        SINK_PID=$!
        for _ in $(seq 100); do [ -s "$T/sink/port" ] && break; sleep 0.05; done
        PORT=$(cat "$T/sink/port" 2>/dev/null)
        [ -n "$PORT" ] || { echo "FAIL the sink did not start: $(cat "$T/sink/err")"; exit 1; }
}
# Secrets in the headers, raw and decoded: no file or output may hold them.
export OTEL_EXPORTER_OTLP_HEADERS="x-api-key=s3cr3t%2Dkey%2042,authorization=Bearer%20zz9plural"
SECRETS=(s3cr3t "zz9plural" "s3cr3t%2Dkey" "s3cr3t-key 42")
TP_TRACE=4bf92f3577b34da6a3ce929d0e0e4736
TP_SPAN=00f067aa0ba902b7
export TRACEPARENT="00-$TP_TRACE-$TP_SPAN-01"
export OTEL_SERVICE_NAME=ci-builds
export OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci%20one,service.name=overridden"
unset OTEL_SDK_DISABLED OTEL_EXPORTER_OTLP_METRICS_ENDPOINT http_proxy HTTP_PROXY https_proxy ALL_PROXY all_proxy

no_secrets() { # no_secrets FILE...: none holds a header value
        local s
        for s in "${SECRETS[@]}"; do
                if grep -rqF -- "$s" "$@"; then echo "  '$s' found in: $(grep -rlF -- "$s" "$@" | tr '\n' ' ')"; return 1; fi
        done
}

case $CASE in
protobuf | json)
        start_sink ok
        if [ "$CASE" = json ]; then
                export OTEL_EXPORTER_OTLP_PROTOCOL=http/json OTEL_EXPORTER_OTLP_COMPRESSION=gzip
                ct=application/json enc=gzip
        else
                export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
                ct=application/x-protobuf enc=
        fi
        # The generic endpoint gets /v1/metrics (one slash, whatever it ends in).
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT/" "$BUILDTEL" run --no-db --log-dir "$L" --run-id o1 \
                --interval 0.1 --otlp-interval 0.4 --cgroup none --job "web image" -- sh -c '
                echo "#1 [internal] load build definition from Dockerfile"
                echo "#1 DONE 0.0s"
                echo "#5 [web 1/2] FROM docker.io/library/alpine:3.19"
                echo "#5 CACHED"
                echo "#6 [web 2/2] RUN make -j2"
                sleep 1.1
                echo "#6 DONE 1.1s"
                exit 3' >"$T/out" 2>"$T/err"
        expect_eq "the build's status passes through" "$?" 3
        stop_sink
        cat >"$T/expect.json" <<EOF
{"content_type": "$ct", "encoding": "$enc",
 "headers": {"x-api-key": "s3cr3t-key 42", "authorization": "Bearer zz9plural"},
 "resource": {"service.name": "ci-builds", "service.version": "$("$BUILDTEL" --version | cut -d' ' -f2)",
              "host.name": "$(hostname)", "deployment.environment": "ci one", "build.run.kind": "run",
              "buildtel.job": "web image"},
 "trace": {"trace_id": "$TP_TRACE", "span_id": "$TP_SPAN"},
 "gauges": [["build.host.memory.usage", "mem_used_mb", 1048576, "By"],
            ["build.host.memory.available", "mem_avail_mb", 1048576, "By"],
            ["build.host.load.1m", "load1", 1, "1"],
            ["build.host.cpu.utilization", "cpu_pct", 0.01, "1"],
            ["build.host.disk.available", "disk_avail_gb", 1073741824, "By"],
            ["container.memory.usage", "cg_mem_mb", 1048576, "By"]],
 "sums": [["container.cpu.time", "cg_cpu_user_s", 1, "s", "cpu.mode", "user"],
          ["container.cpu.time", "cg_cpu_sys_s", 1, "s", "cpu.mode", "system"]],
 "finals": [["build.duration", "s", "duration", {"cicd.pipeline.result": "failure", "build.exit_code": "3"}],
            ["build.target.steps", "{step}", "2", {"target": "default", "builder": ""}],
            ["build.target.steps.cached", "{step}", "1", {"target": "default", "builder": ""}]]}
EOF
        check "the sink got what buildtel recorded" $OTLPCHECK data "$REC" "$L/resources-o1.csv" \
                "$L/resources-o1.run.json" "$T/expect.json"
        check "no warning on stderr" bash -c "! grep -q warning '$T/err'"
        check "no header value in any file buildtel wrote, nor its output" no_secrets "$L" "$T/out" "$T/err"
        ;;
down)
        # A port nothing listens on: a sink started and stopped.
        start_sink ok
        stop_sink
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --no-db --log-dir "$L" --run-id d \
                --interval 0.1 --otlp-interval 0.2 -- sh -c 'echo one; sleep 1; echo two' >"$T/out" 2>"$T/err"
        expect_eq "status is the build's" "$?" 0
        expect_eq "output untouched" "$(cat "$T/out")" "$(printf 'one\ntwo')"
        expect_eq "reported once" "$(grep -c 'OTLP' "$T/err")" 1
        check "the report names the endpoint and the cause" grep -q "warning: OTLP export to http://127.0.0.1:$PORT/v1/metrics failed: Couldn't connect" "$T/err"
        check "the files are written" test -s "$L/resources-d.summary.json"
        check "no header value anywhere" no_secrets "$L" "$T/out" "$T/err"
        ;;
hang)
        # Accepts and never answers. Output flows while an export hangs: the
        # build prints 'ping' only once the sink holds a request, and waits
        # for the test to read it through buildtel before it ends.
        start_sink hang
        mkfifo "$T/go"
        export OTEL_EXPORTER_OTLP_TIMEOUT=2000
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --no-db --log-dir "$L" --run-id h \
                --interval 0.1 --otlp-interval 0.2 -- sh -c "
                while [ ! -s '$REC' ]; do sleep 0.05; done
                echo ping; read x <'$T/go'; echo pong" >"$T/out" 2>"$T/err" &
        bt=$!
        got=
        for _ in $(seq 200); do grep -q ping "$T/out" 2>/dev/null && { got=1; break; }; sleep 0.05; done
        check "output passes while the collector hangs (ping read through buildtel)" test -n "$got"
        exit_at=$(now)
        echo go >"$T/go"
        wait $bt
        expect_eq "status is the build's" "$?" 0
        d=$(since "$exit_at")
        # the final export waits at most the timeout (2 s); generous slack for a loaded machine
        check "exit delayed by at most the timeout (${d}s after the build ended)" lt "$d" 6
        expect_eq "output untouched" "$(cat "$T/out")" "$(printf 'ping\npong')"
        expect_eq "reported once" "$(grep -c 'OTLP' "$T/err")" 1
        check "the report says it timed out" grep -qE "OTLP export to http://127.0.0.1:$PORT/v1/metrics (failed: Timeout|timed out)" "$T/err"
        check "no header value anywhere" no_secrets "$L" "$T/out" "$T/err"
        ;;
400)
        start_sink 400
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --no-db --log-dir "$L" --run-id r \
                --interval 0.1 -- sh -c 'echo built' >"$T/out" 2>"$T/err"
        expect_eq "status is the build's" "$?" 0
        stop_sink
        expect_eq "one request (the final export), not retried" "$($OTLPCHECK count "$REC")" 1
        expect_eq "it was well-formed and rejected on purpose" "$($OTLPCHECK count "$REC" 400)" 1
        expect_eq "reported once" "$(grep -c 'OTLP' "$T/err")" 1
        check "the report gives the status" grep -q "OTLP export to http://127.0.0.1:$PORT/v1/metrics failed: HTTP 400$" "$T/err"
        check "no header value anywhere" no_secrets "$L" "$T/out" "$T/err"
        ;;
503)
        start_sink 503-once
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --no-db --log-dir "$L" --run-id s \
                --interval 0.1 -- sh -c 'echo built' >"$T/out" 2>"$T/err"
        expect_eq "status is the build's" "$?" 0
        stop_sink
        expect_eq "two requests: a 503, then the retry" "$($OTLPCHECK count "$REC")" 2
        expect_eq "the retry got 200" "$($OTLPCHECK count "$REC" 200)" 1
        gap=$($OTLPCHECK gap "$REC")
        check "Retry-After: 1 honoured (retry ${gap}s later)" ge "$gap" 0.95
        check "nothing reported: it got through" bash -c "! grep -q OTLP '$T/err'"
        ;;
export)
        # A run recorded with no collector, sent later from its files.
        "$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id e --interval 0.1 -- sh -c 'sleep 0.5; exit 0'
        start_sink ok
        export OTEL_EXPORTER_OTLP_PROTOCOL=http/json
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --log-dir "$L" e >"$T/out" 2>"$T/err"
        expect_eq "export status" "$?" 0
        stop_sink
        check "export says what it sent, from the files (no database)" grep -q "run e: [0-9]* samples from its files sent to http://127.0.0.1:$PORT/v1/metrics" "$T/out"
        cat >"$T/expect.json" <<EOF
{"content_type": "application/json", "encoding": "", "from_files": true,
 "headers": {"x-api-key": "s3cr3t-key 42"},
 "resource": {"service.name": "ci-builds", "host.name": "$(hostname)", "build.run.kind": "run",
              "buildtel.job": "$($CSVCHECK json-get "$L/resources-e.run.json" job)"},
 "trace": {"trace_id": "$TP_TRACE", "span_id": "$TP_SPAN"},
 "gauges": [["build.host.memory.usage", "mem_used_mb", 1048576, "By"],
            ["container.memory.usage", "cg_mem_mb", 1048576, "By"]],
 "sums": [["container.cpu.time", "cg_cpu_user_s", 1, "s", "cpu.mode", "user"]],
 "finals": [["build.duration", "s", "duration", {"cicd.pipeline.result": "success", "build.exit_code": "0"}]]}
EOF
        check "the sink got what the files hold" $OTLPCHECK data-any "$REC" "$L/resources-e.csv" \
                "$L/resources-e.run.json" "$T/expect.json"
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --log-dir "$L" e >"$T/out" 2>"$T/err"
        expect_eq "export to a collector that is gone: status 1" "$?" 1
        expect_eq "one line says why" "$(wc -l <"$T/err")" 1
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --log-dir "$L" nosuchrun 2>"$T/err"
        expect_eq "no such run: status 1" "$?" 1
        check "no header value anywhere" no_secrets "$L" "$T/out" "$T/err"
        ;;
export-db)
        # A build whose BuildKit log is known (two targets of builder
        # ci-builder: lib 6 steps, 2 cached, sccache 212 hits and 88 misses;
        # cli 2 steps, 1 cached), recorded in the history database.
        command -v sqlite3 >/dev/null || { echo "SKIP: needs sqlite3"; exit 77; }
        FIX=$HERE/../fixtures/buildmetrics/bake-compile.log
        DB=$T/h.db
        export OTEL_EXPORTER_OTLP_PROTOCOL=http/json
        # 1. exported live, to have what a live run sends
        start_sink ok
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" \
                --run-id live-1 --interval 0.1 --otlp-interval 0.25 --cgroup none -- sh -c "cat '$FIX'; sleep 0.7" >/dev/null 2>"$T/err"
        expect_eq "live run: status" "$?" 0
        stop_sink
        mv "$REC" "$T/live.jsonl"
        check "live run: several exports (the samples spread over them)" test "$($OTLPCHECK count "$T/live.jsonl")" -ge 2
        # its files go: the export must read the database
        mkdir "$T/gone" && mv "$L"/*live-1* "$T/gone/"
        start_sink ok
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" live >"$T/out" 2>"$T/err"
        expect_eq "export of the stored run (id prefix): status" "$?" 0
        stop_sink
        check "export says it sent the run and its targets from the history" \
                grep -q "^buildtel export: run live-1: [0-9]* samples and the targets from the history sent to http://127.0.0.1:$PORT/v1/metrics$" "$T/out"
        expect_eq "export: nothing on stderr" "$(cat "$T/err")" ""
        check "the export sent what the live run sent: metrics, units, points, values, times, attributes, exemplars, resource" \
                $OTLPCHECK same "$T/live.jsonl" "$REC" build.duration build.samples build.target.duration \
                build.target.steps build.target.steps.cached build.target.compiler_cache.hits \
                build.target.compiler_cache.misses build.target.compiler_cache.hit_ratio \
                build.host.memory.usage container.cpu.time
        printf '%s' '{"content_type": "application/json", "encoding": "", "headers": {}, "resource": {},
                "gauges": [["build.host.memory.usage", "mem_used_mb", 1048576, "By"]], "sums": [], "finals": []}' >"$T/expect.json"
        check "and every sample of its CSV" $OTLPCHECK data-any "$REC" "$T/gone/resources-live-1.csv" \
                "$T/gone/resources-live-1.run.json" "$T/expect.json"

        # 2. recorded with no collector, exported later: exact known values
        rm -f "$REC"
        "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id quiet-2 --interval 0.1 --job ci/bake -- cat "$FIX" >/dev/null
        expect_eq "run without a collector: status" "$?" 0
        expect_eq "the database holds the targets' builder and sccache counts (sqlite3)" \
                "$(sqlite3 "$DB" "select t.name, t.builder, t.steps, t.cached, t.sccache_hits, t.sccache_misses, t.ccache_hits is null from targets t join runs r on r.id = t.run where r.run_id = 'quiet-2' order by t.rowid" | tr '\n' ' ')" \
                "lib|ci-builder|6|2|212|88|1 cli|ci-builder|2|1|||1 "
        start_sink ok
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" quiet-2 >"$T/out" 2>"$T/err"
        expect_eq "export: status" "$?" 0
        stop_sink
        expect_eq "one request" "$($OTLPCHECK count "$REC")" 1
        cat >"$T/expect.json" <<EOF
{"content_type": "application/json", "encoding": "",
 "headers": {"x-api-key": "s3cr3t-key 42"},
 "resource": {"service.name": "ci-builds", "host.name": "$(hostname)", "build.run.kind": "run",
              "buildtel.job": "ci/bake"},
 "trace": {"trace_id": "$TP_TRACE", "span_id": "$TP_SPAN"},
 "gauges": [["build.host.memory.usage", "mem_used_mb", 1048576, "By"],
            ["build.host.load.1m", "load1", 1, "1"]],
 "sums": [["container.cpu.time", "cg_cpu_user_s", 1, "s", "cpu.mode", "user"]],
 "finals": [["build.duration", "s", "duration", {"cicd.pipeline.result": "success", "build.exit_code": "0"}],
            ["build.target.steps", "{step}", "6", {"target": "lib", "builder": "ci-builder"}],
            ["build.target.steps.cached", "{step}", "2", {"target": "lib", "builder": "ci-builder"}],
            ["build.target.steps", "{step}", "2", {"target": "cli", "builder": "ci-builder"}],
            ["build.target.steps.cached", "{step}", "1", {"target": "cli", "builder": "ci-builder"}],
            ["build.target.compiler_cache.hits", "{hit}", "212", {"target": "lib", "builder": "ci-builder", "build.compiler_cache": "sccache"}],
            ["build.target.compiler_cache.misses", "{miss}", "88", {"target": "lib", "builder": "ci-builder", "build.compiler_cache": "sccache"}],
            ["build.target.compiler_cache.hit_ratio", "1", 0.7066666666666667, {"target": "lib", "builder": "ci-builder", "build.compiler_cache": "sccache"}],
            ["build.samples", "{sample}", "$($CSVCHECK stat "$L/resources-quiet-2.csv" epoch count)", {}]]}
EOF
        check "exact targets, totals and samples of the stored run" $OTLPCHECK data-any "$REC" \
                "$L/resources-quiet-2.csv" "$L/resources-quiet-2.run.json" "$T/expect.json"
        check "cli has no compiler-cache metric" python3 -c "
import json, sys
for r in map(json.loads, open('$REC')):
    if r['path'] != '/v1/metrics':
        continue
    for m in r['request']['resourceMetrics'][0]['scopeMetrics'][0]['metrics']:
        if m['name'].startswith('build.target.compiler_cache'):
            for dp in m['gauge']['dataPoints']:
                if any(a['key'] == 'target' and a['value']['stringValue'] == 'cli' for a in dp['attributes']):
                    sys.exit(1)"
        # the same run from its files (a CSV path) still works, its targets
        # from its .targets.json as the history's from its rows
        rm -f "$REC"
        start_sink ok
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" "$BUILDTEL" export --otlp --db "$DB" "$L/resources-quiet-2.csv" >"$T/out" 2>"$T/err"
        expect_eq "export of a CSV path: status" "$?" 0
        stop_sink
        check "it says it read the files, targets too" grep -q "^buildtel export: run quiet-2: [0-9]* samples and the targets from its files sent to" "$T/out"
        check "the targets from its files: lib's and cli's steps" python3 -c "
import json, sys
seen = set()
for r in map(json.loads, open('$REC')):
    for rm in r['request'].get('resourceMetrics', []):
        for sm in rm['scopeMetrics']:
            for m in sm['metrics']:
                if m['name'] == 'build.target.steps':
                    for dp in m['gauge']['dataPoints']:
                        seen |= {a['value']['stringValue'] for a in dp['attributes'] if a['key'] == 'target'}
sys.exit(seen != {'lib', 'cli'})"
        check "no header value anywhere" no_secrets "$L" "$T/out" "$T/err" "$DB"
        ;;
export-states)
        # What export refuses: an unknown run, a running one, an incomplete one.
        command -v sqlite3 >/dev/null || { echo "SKIP: needs sqlite3"; exit 77; }
        DB=$T/h.db
        start_sink ok
        export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT"
        "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id done-1 --interval 0.1 -- true
        "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" nosuchrun >"$T/out" 2>"$T/err"
        expect_eq "unknown run: status 1" "$?" 1
        expect_eq "unknown run: one line naming the database and the file looked for" "$(cat "$T/err")" \
                "buildtel export: no run 'nosuchrun' in the history database '$DB', nor its file '$L/resources-nosuchrun.csv'"
        "$BUILDTEL" export --otlp --db "$T/none.db" --log-dir "$L" nosuchrun 2>"$T/err"
        expect_eq "no database either: status 1, one line" "$?/$(wc -l <"$T/err")" "1/1"
        check "  and no database was created" test ! -e "$T/none.db"
        echo "not a database" >"$T/junk.db"
        "$BUILDTEL" export --otlp --db "$T/junk.db" --log-dir "$L" done-1 2>"$T/err"
        expect_eq "a garbage database: status 1, one line" "$?/$(wc -l <"$T/err")" "1/1"
        check "  naming the file" grep -q "history database '$T/junk.db'" "$T/err"
        "$BUILDTEL" export --otlp --no-db --log-dir "$L" done-1 >"$T/out" 2>"$T/err"
        expect_eq "--no-db: from the files" "$?" 0
        check "  says so" grep -q "run done-1: [0-9]* samples from its files" "$T/out"
        # a run still running
        mkfifo "$T/go"
        "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id busy --interval 0.1 -- sh -c "read x <'$T/go'" &
        bt=$!
        for _ in $(seq 100); do [ "$(sqlite3 "$DB" "select state from runs where run_id = 'busy'" 2>/dev/null)" = running ] && break; sleep 0.05; done
        n0=$($OTLPCHECK count "$REC")
        "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" busy >"$T/out" 2>"$T/err"
        expect_eq "running run: status 1" "$?" 1
        expect_eq "running run: one line" "$(cat "$T/err")" "buildtel export: run busy is still running; export it once it has finished"
        expect_eq "running run: nothing sent" "$($OTLPCHECK count "$REC")" "$n0"
        echo go >"$T/go"
        wait $bt
        # a run whose buildtel was killed: its row never completed, and its
        # recorder is gone (made so here rather than waiting for a batch)
        sqlite3 "$DB" "update runs set state = 'running', end_epoch = null, exit_code = null, recorder_pid = 0, summary_json = null where run_id = 'busy'"
        "$BUILDTEL" export --otlp --db "$DB" --log-dir "$L" busy >"$T/out" 2>"$T/err"
        expect_eq "incomplete run: status 1" "$?" 1
        expect_eq "incomplete run: one line" "$(cat "$T/err")" \
                "buildtel export: run busy is incomplete (its buildtel ended without completing it); --incomplete sends what it has"
        "$BUILDTEL" export --otlp --incomplete --db "$DB" --log-dir "$L" busy >"$T/out" 2>"$T/err"
        expect_eq "--incomplete: status 0" "$?" 0
        check "  says so" grep -q "run busy (incomplete): [0-9]* samples from the history sent" "$T/out"
        stop_sink
        python3 - "$REC" >"$T/chk" <<'PY'
import json, sys
r = [r for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/v1/metrics"][-1]
rm = r["request"]["resourceMetrics"][0]
res = {a["key"]: a["value"].get("stringValue") for a in rm["resource"]["attributes"]}
names = {m["name"] for m in rm["scopeMetrics"][0]["metrics"]}
print(r["status"], res.get("build.run.id"), res.get("build.run.state"),
      "build.duration" in names, "build.samples" in names, "build.host.memory.usage" in names)
PY
        expect_eq "  marked build.run.state=incomplete; samples and totals, no duration" "$(cat "$T/chk")" \
                "200 busy incomplete False True True"
        ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
finish
