#!/usr/bin/env bash
# The fleet view (contrib/): the Prometheus rules checked and unit-tested by
# promtool, each alert's tests shown to fail on a broken rule; then a real
# Prometheus scraping a real node_exporter that serves the textfiles of two
# real `buildtel run`s, on 127.0.0.1: the alerts those runs call for appear,
# and every query of the Grafana dashboard returns data.
. "$(dirname "$0")/lib.sh"
: "${CGLOAD:?CGLOAD must name the cgload helper}"
for p in prometheus promtool prometheus-node-exporter curl python3 ccache gcc; do
        command -v "$p" >/dev/null || { echo "missing $p (Debian: prometheus, prometheus-node-exporter, curl, python3, ccache, gcc)"; exit 77; }
done
if [ "$(id -u)" != 0 ] || ! grep -q cgroup /proc/self/mountinfo; then
        echo "needs root and a cgroup filesystem (the build's OOM kills and --memory-max)"; exit 77
fi
C="$(cd "$HERE/../../contrib" && pwd)"
FIX="$(cd "$HERE/../fixtures/buildmetrics" && pwd)"
RULES="$C/prometheus/buildtel.rules.yml"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
t0=$(now)

# ---- the rules, alone ----
promtool check rules "$RULES" >"$T/check" 2>&1
rc=$?
check "promtool check rules" test $rc -eq 0
[ $rc -eq 0 ] || cat "$T/check"
promtool test rules "$C/prometheus/buildtel.rules.test.yml" >"$T/unit" 2>&1
rc=$?
check "promtool test rules" test $rc -eq 0
[ $rc -eq 0 ] || cat "$T/unit"

# Each alert's tests fail when its rule is broken (so none of them passes
# whatever the rule says).
mutant() { # mutant DESCRIPTION SED-SCRIPT
        mkdir -p "$T/m"
        sed "$2" "$RULES" >"$T/m/buildtel.rules.yml"
        cp "$C/prometheus/buildtel.rules.test.yml" "$T/m/"
        if cmp -s "$RULES" "$T/m/buildtel.rules.yml"; then bad "mutant '$1' changed nothing"; return; fi
        promtool test rules "$T/m/buildtel.rules.test.yml" >"$T/m/out" 2>&1
        check "unit tests catch: $1" test $? -ne 0
}
mutant "baselines with the last hour" 's/ offset 1h//'
mutant "no for:" '/^ *for: /d'
mutant "cache drop of 60 points" 's/avg_over_time_7d - 0\.2/avg_over_time_7d - 0.6/g'
mutant "layer cache left out" 's/build_layer_cache_hit_ratio < /build_layer_cache_hit_ratio > 2 * /'
mutant "ccache left out" 's/build_ccache_hit_ratio < /build_ccache_hit_ratio > 2 * /'
mutant "mean instead of median" 's/quantile_over_time(0\.5, build_duration_seconds\[7d\] offset 1h)/avg_over_time(build_duration_seconds[7d] offset 1h)/'
mutant "no minute floor" 's/_7d > 60$/_7d > 0/'
mutant "job's usual: a mean" 's/quantile_over_time(0\.5, build_invocation_duration_seconds/avg_over_time(build_invocation_duration_seconds/'
mutant "job's usual per builder, not per job" 's/quantile by (buildtel_job) (0\.5, \(quantile_over_time(.*offset 1h)\))$/\1/'
mutant "job slower at 3 times" 's/group_left 1\.5 \*/group_left 3 */'
mutant "job: no minute floor" 's/group_left buildtel_job:build_invocation_duration_seconds:median_over_time_7d > 60$/group_left buildtel_job:build_invocation_duration_seconds:median_over_time_7d > 0/'
mutant "silent after 2 days" 's/24 \* 3600/48 * 3600/'
mutant "silence per builder label" 's/max by (job, instance) (max_over_time(build_last_run_timestamp_seconds\[7d\]))/max_over_time(build_last_run_timestamp_seconds[7d])/'
mutant "OOM kills over 2" 's/build_oom_kills > 0/build_oom_kills > 2/'
mutant "near-OOM over 20" 's/build_near_oom_samples > 0/build_near_oom_samples > 20/'
mutant "low disk over 20" 's/build_low_disk_samples > 0/build_low_disk_samples > 20/'
mutant "failures never" 's/build_invocation_success == 0/build_invocation_success < 0/'

# With --metric-prefix rocm the README's sed gives rules that still pass.
mkdir -p "$T/rocm"
sed 's/\bbuild_/rocm_build_/g' "$RULES" >"$T/rocm/buildtel.rules.yml"
sed 's/\bbuild_/rocm_build_/g' "$C/prometheus/buildtel.rules.test.yml" >"$T/rocm/buildtel.rules.test.yml"
check "rocm_ rules: every name prefixed" sh -c "! grep -Eq '[^_]build_[a-z]' '$T/rocm/buildtel.rules.yml' && grep -q rocm_build_oom_kills '$T/rocm/buildtel.rules.yml'"
promtool test rules "$T/rocm/buildtel.rules.test.yml" >"$T/rocm/out" 2>&1
check "rocm_ rules: promtool test rules" test $? -eq 0
echo "rules: $(since "$t0") s"

# ---- two real runs into one textfile directory ----
# A BuildKit bake (builder ci-builder: targets app and tools, sccache) with
# thresholds no machine meets, so near-OOM and low-disk samples are counted.
TF="$T/tf" L="$T/logs"
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id bake --job bake --textfile-dir "$TF" --prom-file bake.prom \
        --near-oom-mb 1048576 --low-disk-gb 1000000 -- cat "$FIX/bake-multi.log" >/dev/null 2>&1
expect_eq "bake run: exit status" "$?" 0
# A plain build (no builder label, target default): one ccache miss and one
# hit of a real ccache, then a process OOM-killed in the build's cgroup.
mkdir -p "$T/src" && printf 'int f(int x) { return x + 1; }\n' >"$T/src/a.c"
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id local --job local --textfile-dir "$TF" --prom-file local.prom \
        --memory-max 128M -- sh -c 'export CCACHE_DIR="$1/ccache"; ccache -z && ccache gcc -c -o "$1/a1.o" "$1/a.c" &&
        ccache gcc -c -o "$1/a2.o" "$1/a.c" && ccache -s && exec "$2" grow 512' sh "$T/src" "$CGLOAD" >"$T/local.out" 2>&1
expect_eq "local run: OOM-killed, 137" "$?" 137
check "local run: ccache ratio 0.5" grep -q '^build_ccache_hit_ratio{target="default",builder="",buildtel_job="local"} 0.5$' "$TF/local.prom"
check "local run: an OOM kill" grep -q '^build_oom_kills{builder="",buildtel_job="local"} [1-9]' "$TF/local.prom"

echo "runs: $(since "$t0") s"
# ---- a real node_exporter and a real Prometheus ----
NP=$(free_port) PP=$(free_port)
prometheus-node-exporter --web.listen-address=127.0.0.1:$NP --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$TF" >"$T/ne.log" 2>&1 &
PIDS+=($!)
cat >"$T/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NP']
EOC
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address=127.0.0.1:$PP \
        --web.console.templates="$T/none" --web.console.libraries="$T/none" >"$T/prom.log" 2>&1 &
PIDS+=($!)
P="http://127.0.0.1:$PP"
q() { curl -sf --max-time 5 "$P/api/v1/query" --data-urlencode "query=$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'; }

# Scraped: every series of both files is in Prometheus.
want=$(grep -hc '^build_' "$TF"/*.prom | awk '{s += $1} END {print s}')
got=
for _ in $(seq 150); do
        got=$(q 'count({__name__=~"build_.+",job="node"})' 2>/dev/null)
        [ "$got" = "$want" ] && break
        sleep 0.2
done
expect_eq "Prometheus scraped every series of both textfiles" "$got" "$want"
[ "$got" = "$want" ] || tail -n 5 "$T/prom.log" "$T/ne.log"
expect_eq "the textfile collector read both files cleanly" "$(q 'node_textfile_scrape_error')" 0
echo "scraped: $(since "$t0") s"

# The rules loaded, and the runs group evaluated against the real series:
# what the two runs call for is there, with their labels.
alerts() {
        curl -sf --max-time 5 "$P/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    print(l["alertname"], l.get("builder", "-"), l.get("severity"), a["state"])' | sort
}
for _ in $(seq 100); do
        alerts >"$T/alerts" 2>/dev/null
        [ "$(wc -l <"$T/alerts")" -ge 5 ] && break
        sleep 0.2
done
check "OOM kill of the local run: firing" grep -qx 'BuildtelOOMKill - critical firing' "$T/alerts"
check "near-OOM of the bake: pending" grep -qx 'BuildtelNearOOM ci-builder warning pending' "$T/alerts"
check "low disk of the bake: pending" grep -qx 'BuildtelLowDisk ci-builder warning pending' "$T/alerts"
check "failed local run: pending" grep -qx 'BuildtelInvocationFailed - warning pending' "$T/alerts"
# an OOM kill is a near-OOM moment too (issue 35: never 0 near-OOM beside a kill)
check "near-OOM of the OOM-killed local run: pending" grep -qx 'BuildtelNearOOM - warning pending' "$T/alerts"
expect_eq "no other alert" "$(wc -l <"$T/alerts")" 5
curl -sf --max-time 5 "$P/api/v1/rules" | python3 -c '
import json, sys
g = {x["name"]: x for x in json.load(sys.stdin)["data"]["groups"]}
print(sorted(g), sum(len(x["rules"]) for x in g.values()),
      sorted(set(r["health"] for r in g["buildtel-runs"]["rules"])))' >"$T/rules"
expect_eq "Prometheus loaded both groups, 14 rules, the runs group healthy" "$(cat "$T/rules")" "['buildtel-runs', 'buildtel-trends'] 14 ['ok']"

# The baselines read real series: each recording rule, its hour's offset
# taken out (this Prometheus is seconds old), returns data.
awk '/^ *- record:/ {r = $3} /^ *expr:/ && r {sub(/^ *expr: */, ""); print r "\t" $0; r = ""}' "$RULES" >"$T/records"
expect_eq "six recording rules" "$(wc -l <"$T/records")" 6
while IFS=$'\t' read -r name expr; do
        n=$(q "count(${expr// offset 1h/})")
        check "$name: $n series from the real ones" test -n "$n"
done <"$T/records"

# ---- the dashboard ----
python3 "$HERE/dashcheck.py" "$C/grafana/buildtel.json" "$P" >"$T/dash" 2>&1
dash_rc=$?
grep -v "^ok " "$T/dash"
check "dashboard: $(grep -c '^ok ' "$T/dash") checks against the real Prometheus" test "$dash_rc" -eq 0
check "dashboard: every panel query ran in both passes" test "$(grep -c '^ok .* series from ' "$T/dash")" -eq \
        "$((2 * $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(p.get("targets",[])) for p in d["panels"]))' "$C/grafana/buildtel.json")))"
# The check bites: one misspelt metric in one panel fails it.
sed '0,/build_ccache_hit_ratio/s//build_ccache_hit_ration/' "$C/grafana/buildtel.json" >"$T/broken.json"
python3 "$HERE/dashcheck.py" "$T/broken.json" "$P" >"$T/broken" 2>&1
check "dashboard check fails on a query with no data" test $? -ne 0
expect_eq "... and names that one query, in both passes" "$(grep -c '^FAIL Compiler cache hit ratio B' "$T/broken")" 2
echo "total: $(since "$t0") s"
finish
