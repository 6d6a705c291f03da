#!/usr/bin/env bash
# OTLP export against a strict sink on 127.0.0.1 (tests/otlp-sink/sink.js,
# Node with @opentelemetry/otlp-transformer's protobuf definitions).
#   otlp.sh protobuf|json     what is sent: names, units, values, times, attributes,
#                             resource, TRACEPARENT exemplars; headers never written
#   otlp.sh down|hang|400|503 a collector that misbehaves
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
                --interval 0.1 --otlp-interval 0.4 --cgroup none -- sh -c '
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
              "host.name": "$(hostname)", "deployment.environment": "ci one", "build.run.kind": "run"},
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
        check "export says what it sent" grep -q "run e: [0-9]* samples sent to http://127.0.0.1:$PORT/v1/metrics" "$T/out"
        cat >"$T/expect.json" <<EOF
{"content_type": "application/json", "encoding": "",
 "headers": {"x-api-key": "s3cr3t-key 42"},
 "resource": {"service.name": "ci-builds", "host.name": "$(hostname)", "build.run.kind": "run"},
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
*) echo "unknown case $CASE"; exit 2 ;;
esac
finish
