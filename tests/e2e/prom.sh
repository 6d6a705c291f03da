#!/usr/bin/env bash
# The Prometheus textfile and the Pushgateway, with the real programs on
# 127.0.0.1: promtool, node_exporter's textfile collector, a Pushgateway.
. "$(dirname "$0")/lib.sh"
for p in promtool prometheus-node-exporter prometheus-pushgateway curl; do
        command -v "$p" >/dev/null || { echo "missing $p (Debian: prometheus, prometheus-node-exporter, prometheus-pushgateway, curl)"; exit 77; }
done
FIX="$(cd "$HERE/../fixtures/buildmetrics" && pwd)"
L="$T/logs" TF="$T/tf"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# promtool: clean, or only the seed's own _steps_total gauge name.
promcheck() {
        local out rc
        out=$(promtool check metrics <"$1" 2>&1); rc=$?
        [ $rc -eq 0 ] && return 0
        [ $rc -eq 3 ] && [ -z "$(printf '%s\n' "$out" | grep -v '_steps_total non-counter metrics should not have "_total" suffix')" ]
}

"$BUILDTEL" run --quiet --log-dir "$L" --run-id m --textfile-dir "$TF" --metric-prefix rocm -- cat "$FIX/bake-multi.log" >/dev/null 2>&1
expect_eq "a failing bake passes its status through" "$?" 0
# the default name derives from the run's job (here derived: cwd and argv)
PF=$(ls "$TF"/buildtel-*.prom 2>/dev/null)
expect_eq "one default textfile, buildtel-JOB.prom" "$(printf '%s\n' "$PF" | grep -c .)" 1
check "textfile written" test -s "$PF"
check "promtool check metrics" promcheck "$PF"
# app's steps: base 1/3, base 2/3 (two vertices, one step), build 3/3
check "rocm_ prefix" grep -q '^rocm_build_steps_total{target="app",builder="ci-builder",buildtel_job="[^"]*"} 3$' "$PF"
check "tools failed" grep -q '^rocm_build_target_success{target="tools",builder="ci-builder",buildtel_job="[^"]*"} 0$' "$PF"
check "sccache of the marker step" grep -q '^rocm_build_sccache_hits{target="app",builder="ci-builder",buildtel_job="[^"]*"} 6$' "$PF"
check "no sccache series for tools" sh -c "! grep -q 'sccache_hits{target=\"tools\"' '$PF'"
check "no timestamps" sh -c "! grep -Eq '^[a-z_]+(\{.*\})? [^ ]+ [0-9]+$' '$PF'"
check "file mode 0644" test "$(stat -c %a "$PF")" = 644
check "no temp file left" test "$(ls -A "$TF" | wc -l)" -eq 1

# Quotes, backslashes and newlines in target names.
printf '#1 [we"ird\\\\na internal] load\n#1 DONE 0.0s\n\n#2 [we"ird\\\\na 1/1] RUN x\n#2 DONE 0.1s\n' >"$T/weird.log"
"$BUILDTEL" run --quiet --log-dir "$L" --run-id w --job w --textfile-dir "$TF" --prom-file weird.prom -- cat "$T/weird.log" >/dev/null 2>&1
check "escaped label value" grep -qF 'build_steps_total{target="we\"ird\\\\na",builder="",buildtel_job="w"} 1' "$TF/weird.prom"
check "promtool on escaped names" promcheck "$TF/weird.prom"
"$BUILDTEL" run --quiet --log-dir "$L" --run-id nl --textfile-dir "$TF" --prom-file nl.prom --targets 'a
b' -- true >/dev/null 2>&1
check "newline escaped" grep -qF 'target="a\nb"' "$TF/nl.prom"
check "promtool on a newline name" promcheck "$TF/nl.prom"

# The build's own resource figures (issue 3's cgroup totals), in base units.
"$BUILDTEL" run --quiet --log-dir "$L" --run-id io --textfile-dir "$TF" --prom-file io.prom -- \
        sh -c "dd if=/dev/zero of='$T/io.bin' bs=1M count=4 oflag=direct 2>/dev/null" >/dev/null 2>&1
wb=$(sed -n 's/^build_io_write_bytes{builder="",buildtel_job="[^"]*"} //p' "$TF/io.prom")
check "io_write_bytes counts the 4 MiB written ($wb)" ge "${wb:-0}" 4194304
check "cpu_user_seconds present" grep -q '^build_cpu_user_seconds{builder="",buildtel_job="[^"]*"} [0-9.e-]*$' "$TF/io.prom"
check "oom_kills 0" grep -q '^build_oom_kills{builder="",buildtel_job="[^"]*"} 0$' "$TF/io.prom"
check "pressure stall present" grep -q '^build_pressure_io_some_seconds{builder="",buildtel_job="[^"]*"} ' "$TF/io.prom"
check "promtool on the resource gauges" promcheck "$TF/io.prom"

# watch --stage-log-dir: the followed log's lines reach the same parsers.
mkdir -p "$T/stagelogs"
sleep 2 &
SP=$!
"$BUILDTEL" watch --quiet --pid $SP --stage-log-dir "$T/stagelogs" --log-dir "$L" --run-id wt --textfile-dir "$TF" --prom-file watch.prom >/dev/null 2>&1 &
WP=$!
sleep 0.5
cat "$FIX/bake-multi.log" >"$T/stagelogs/build.log"
wait $WP
expect_eq "watch exits 0" "$?" 0
check "watch: targets from the followed log" grep -q '^build_steps_total{target="app",builder="ci-builder",buildtel_job="[^"]*"} 3$' "$TF/watch.prom"
check "watch: promtool" promcheck "$TF/watch.prom"

# A real node_exporter reads the directory.
NP=$(free_port)
prometheus-node-exporter --web.listen-address=127.0.0.1:$NP --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$TF" >"$T/ne.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do curl -sf "127.0.0.1:$NP/metrics" >"$T/scrape" 2>/dev/null && break; sleep 0.1; done
check "node_exporter exports the series" grep -q '^rocm_build_steps_cached{builder="ci-builder",buildtel_job="[^"]*",target="app"} 1$' "$T/scrape"
check "node_textfile_scrape_error 0" grep -q '^node_textfile_scrape_error 0$' "$T/scrape"

# 10,000 reads while buildtel rewrites the file in a loop: never a partial file.
( for i in $(seq 40); do "$BUILDTEL" run --quiet --log-dir "$L" --run-id r --textfile-dir "$TF" --prom-file loop.prom -- cat "$FIX/bake-multi.log" >/dev/null 2>&1; done; touch "$T/loop.done" ) &
LOOP=$!
"$BUILDTEL" run --quiet --log-dir "$L" --run-id r0 --textfile-dir "$TF" --prom-file loop.prom -- cat "$FIX/bake-multi.log" >/dev/null 2>&1
python3 - "$TF/loop.prom" "$T/loop.done" <<'PY' >"$T/reads"
import sys, os
path, done = sys.argv[1], sys.argv[2]
bad = reads = 0
while reads < 10000 or not os.path.exists(done):
    with open(path, 'rb') as f:
        b = f.read()
    reads += 1
    if not b.endswith(b'\n') or b'build_low_disk_samples{' not in b or not b.startswith(b'# HELP build_duration_seconds'):
        bad += 1
    if reads > 2000000:
        break
print(reads, bad)
PY
wait $LOOP
read -r nreads nbad <"$T/reads"
check "read the file at least 10000 times ($nreads)" ge "$nreads" 10000
expect_eq "partial files seen" "$nbad" 0

# A real Pushgateway receives the push.
GP=$(free_port)
prometheus-pushgateway --web.listen-address=127.0.0.1:$GP --persistence.file="" >"$T/gw.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do curl -sf "127.0.0.1:$GP/metrics" >/dev/null 2>&1 && break; sleep 0.1; done
"$BUILDTEL" run --quiet --log-dir "$L" --run-id p --job ci-p --textfile-dir "$TF" --pushgateway "http://127.0.0.1:$GP" --push-job ci/job -- cat "$FIX/bake-multi.log" >/dev/null 2>"$T/push.err"
expect_eq "push: status unchanged" "$?" 0
curl -sf "127.0.0.1:$GP/metrics" >"$T/gw"
check "pushgateway exposes the push" grep -q '^build_steps_total{builder="ci-builder",buildtel_job="ci-p",instance="'"$(hostname)"'",job="ci/job",target="app"} 3$' "$T/gw"
check "no warning on success" test ! -s "$T/push.err"
# Another job of the same host: a group of its own, the first one stays.
"$BUILDTEL" run --quiet --log-dir "$L" --run-id p2 --job ci-q --textfile-dir "$TF" --pushgateway "http://127.0.0.1:$GP" --push-job ci/job -- cat "$FIX/bake-multi.log" >/dev/null 2>&1
curl -sf "127.0.0.1:$GP/metrics" >"$T/gw2"
check "pushgateway: the second job's group" grep -q '^build_steps_total{builder="ci-builder",buildtel_job="ci-q",instance="'"$(hostname)"'",job="ci/job",target="app"} 3$' "$T/gw2"
check "pushgateway: the first job's group stays" grep -q '^build_steps_total{builder="ci-builder",buildtel_job="ci-p",instance="'"$(hostname)"'",job="ci/job",target="app"} 3$' "$T/gw2"

# Pushgateway down: status unchanged, one warning line.
DP=$(free_port)
"$BUILDTEL" run --quiet --log-dir "$L" --run-id d --textfile-dir "$TF" --pushgateway "http://127.0.0.1:$DP" -- sh -c 'exit 3' >/dev/null 2>"$T/down.err"
expect_eq "push down: the build's status" "$?" 3
expect_eq "push down: one warning line" "$(grep -c 'warning: push to' "$T/down.err")" 1
expect_eq "push down: nothing else on stderr" "$(wc -l <"$T/down.err")" 1
finish
