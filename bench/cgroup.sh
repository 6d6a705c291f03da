#!/usr/bin/env bash
# The build's own accounting: CPU per sample with a cgroup (only the build's
# pids are read) against a full /proc walk, with 1,000 idle background
# processes; and against CCTools resource_monitor on the same workloads:
# CPU per sample and each tool's error on a known memory peak.
#   bench/cgroup.sh BUILDTEL CGLOAD WORKDIR
set -eu
BT=$1 CG=$2 W=$3
cpu_of() { # cpu_of CMD...: CPU seconds (user+sys, children included)
        local TIMEFORMAT='%U %S'
        { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.4f", $1 + $2 }'
}
per() { awk -v c="$1" -v n="$2" 'BEGIN{printf "%.1f", c / n * 1e6}'; }

coproc IDLE { exec "$CG" idle 1000; }
read -r _ <&"${IDLE[0]}"
# its children die with it (PR_SET_PDEATHSIG)
trap 'kill $IDLE_PID 2>/dev/null' EXIT
echo "with 1,000 idle background processes: $(ls /proc | grep -c '^[0-9]') processes"

# One tick, spaced as a run spaces them: the recorder's whole tick against
# the same host, cgroup and /proc/PID files read raw (bench/tick.c).
TICK=$(dirname "$BT")/bench/bench-tick
if [ -x "$TICK" ]; then
        python3 "$(dirname "$0")/pairs.py" --name "tick with a cgroup, 1,000 idle processes: buildtel / raw reads" \
                --metric 'out:([0-9.]+) us CPU per tick' --unit us --ratio b/a --goal-max 1.5 --runs 5 \
                --a "$TICK raw-cgroup 200 0.05" --b "$TICK cgroup 200 0.05" | tee -a "${PAIRS_LOG:-/dev/null}"
fi

secs=10 iv=0.05
n=$(awk -v s=$secs -v i=$iv 'BEGIN{print int(s / i) + 2}')
c=$(cpu_of "$BT" run --quiet --no-db --log-dir "$W" --interval $iv -- sleep $secs)
c=$(awk -v c="$c" 'BEGIN{print c - 0.002}') # sleep's own
echo "run, cgroup (only the build's pids): $(per "$c" "$n") us CPU per sample at ${iv}s over ${secs}s"
c=$(cpu_of "$BT" run --quiet --no-db --cgroup=none --log-dir "$W" --interval $iv -- sleep $secs)
echo "run --cgroup=none (walks all of /proc for the tree): $(per "$c" "$n") us CPU per sample"
sleep $((secs + 1)) &
sp=$!
c=$(cpu_of "$BT" watch --quiet --no-db --pid $sp --log-dir "$W" --interval $iv)
echo "watch (no cgroup; compilers over all of /proc): $(per "$c" "$n") us CPU per sample"
kill $IDLE_PID 2>/dev/null || true
wait $IDLE_PID 2>/dev/null || true
trap - EXIT

echo
echo "== peak memory against a known allocation (512 MiB touched)"
if ! command -v resource_monitor >/dev/null; then echo "resource_monitor missing (coop-computing-tools)"; exit 0; fi
"$BT" run --quiet --no-db --log-dir "$W" --run-id base --interval 1 -- "$CG" alloc 0
base=$("$BT" summarize --json "$W/resources-base.csv" | python3 -c 'import json,sys; print(json.load(sys.stdin)["build"]["mem_peak_mb"]["value"])')
for load in "hold 1 s:grow 512" "exit at once:alloc 512"; do
        name=${load%%:*} args=${load#*:}
        "$BT" run --quiet --no-db --log-dir "$W" --run-id pk --interval 1 -- "$CG" $args
        bt=$("$BT" summarize --json "$W/resources-pk.csv" | python3 -c 'import json,sys; print(json.load(sys.stdin)["build"]["mem_peak_mb"]["value"])')
        rm -rf "$W/rm"
        resource_monitor -i 1 -O "$W/rm" -- "$CG" $args >/dev/null 2>&1 || true
        rmv=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["memory"]; print(m[0] if isinstance(m, list) else m)' "$W/rm.summary")
        # grow touches 512 MiB in 16 MiB steps
        want=$(awk -v b="$base" 'BEGIN{print 512 + b}')
        echo "$name: want $want MiB; buildtel $bt MiB ($(awk -v x="$bt" -v w="$want" 'BEGIN{printf "%+.1f%%", (x - w) / w * 100}')), resource_monitor $rmv MB ($(awk -v x="$rmv" -v w="$want" 'BEGIN{printf "%+.1f%%", (x - w) / w * 100}'))"
done
c=$(cpu_of resource_monitor -i 1 -O "$W/rm2" -- sleep 20)
echo "resource_monitor -i 1 -- sleep 20: $(per "$c" 20) us CPU per sample (its shortest interval is 1 s)"
c=$(cpu_of "$BT" run --quiet --no-db --log-dir "$W" --interval 1 -- sleep 20)
echo "buildtel run --interval 1 -- sleep 20: $(per "$c" 21) us CPU per sample, start-up included"
