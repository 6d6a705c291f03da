#!/usr/bin/env bash
# Each unit's waits (issue "Every process accounted", item 5): with
# kernel.task_delayacct 1 (set here for the case, as the user would, and
# put back), a make build of 8 compiles beside CPU burners on every CPU:
# each unit has its waits for CPU, IO and memory in units.csv, the
# summary's units table and the history, a unit's wait within the build's
# whole; with 0, none is claimed and the summary says the one line that
# would show them. Runs alone: it changes a host-wide sysctl.
. "$(dirname "$0")/lib.sh"
need_root "the kernel's accounting (taskstats) needs CAP_NET_ADMIN"
for p in gcc make sqlite3 python3; do
        command -v "$p" >/dev/null || { echo "missing $p"; exit 77; }
done
[ -w /proc/sys/kernel/task_delayacct ] || { echo "kernel.task_delayacct is not writable here"; exit 77; }
old_delay=$(cat /proc/sys/kernel/task_delayacct)
trap 'echo "$old_delay" >/proc/sys/kernel/task_delayacct; cleanup' EXIT
P="$T/p" L="$T/l"
mkdir -p "$P"
objs=
for i in $(seq 1 8); do
        python3 - "$i" >"$P/w$i.c" <<'PY'
import sys
k = int(sys.argv[1])
print("static const int t[] = {" + ",".join(str(j * 7 % 1000) for j in range(20000)) + "};")
print("int f%d(int i) { return t[i %% 20000]; }" % k)
PY
        objs="$objs w$i.o"
done
printf 'all:%s\n%%.o: %%.c\n\t$(CC) -O1 -c $< -o $@\n' "$objs" >"$P/Makefile"
# the compiles beside a CPU burner per CPU: they wait for a CPU
burn='i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'
cat >"$T/build.sh" <<EOF
for k in \$(seq $(nproc)); do sh -c '$burn' & done
make -C "$P" -j2
wait
EOF
run() { # run ID DELAYACCT
        echo "$2" >/proc/sys/kernel/task_delayacct
        rm -f "$P"/*.o
        "$BUILDTEL" run --quiet --db "$T/h.db" --log-dir "$L" --run-id "$1" -- sh "$T/build.sh" >/dev/null
        local rc=$?
        echo "$old_delay" >/proc/sys/kernel/task_delayacct
        return $rc
}

run on 1
expect_eq "delay accounting on: the build ran" "$?" 0
if ! grep -q ',taskstats,' "$L/resources-on.units.csv"; then
        echo "the kernel's accounting is not ours here"
        exit 77
fi
grep -m3 ', waited cpu' "$L/resources-on.summary.txt"
check "delay accounting on: each unit's waits in units.csv, within the build's" python3 - \
        "$L/resources-on.units.csv" "$L/resources-on.run.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
p = json.load(open(sys.argv[2]))["processes"]
w = [[float(r[k]) for k in ("wait_cpu_s", "wait_io_s", "wait_mem_s")] for r in rows]
cpu = sum(x[0] for x in w)
print("# units:", len(rows), "their CPU wait:", round(cpu, 3), "the build's:", round(p["delay_cpu_s"], 3))
sys.exit(not (len(rows) >= 8 and all(min(x) >= 0 for x in w) and cpu > 0.05
              and cpu <= p["delay_cpu_s"] + 1e-6 and p["delayacct"]))
PY
# the compiler: cc1 with gcc, clang where CC is (the sanitizer suite's)
check "delay accounting on: the summary's units say what they waited" \
        grep -Eq '^  [0-9.]+ [KMG]iB  [^ ]+ w[1-8]\.c  .*, waited cpu [0-9.]+ io [0-9.]+ mem [0-9.]+ s$' "$L/resources-on.summary.txt"
expect_eq "delay accounting on: the history keeps each unit's waits" \
        "$(sqlite3 "$T/h.db" "SELECT count(*) = sum(u.wait_cpu_s IS NOT NULL AND u.wait_io_s IS NOT NULL AND u.wait_mem_s IS NOT NULL) FROM units u JOIN runs r ON r.id = u.run WHERE r.run_id = 'on'")" 1
"$BUILDTEL" summarize --json --db "$T/h.db" on >"$T/re.json"
check "delay accounting on: summarize from the history gives the run's waits" python3 - \
        "$T/re.json" "$L/resources-on.summary.json" <<'PY'
import json, sys
a, b = ([(u["name"], u["wait_cpu_s"], u["wait_io_s"], u["wait_mem_s"]) for u in json.load(open(f))["units"]]
        for f in sys.argv[1:])
sys.exit(not (a == b and all(x[1] is not None for x in a)))
PY

run off 0
expect_eq "delay accounting off: the build ran" "$?" 0
check "delay accounting off: no unit claims a wait" python3 - "$L/resources-off.units.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
sys.exit(not (rows and all(r["wait_cpu_s"] == r["wait_io_s"] == r["wait_mem_s"] == "" for r in rows)))
PY
check "delay accounting off: the summary says the one line that would show it" \
        grep -q '^  waiting:        unmeasured (`sysctl kernel.task_delayacct=1` would show' "$L/resources-off.summary.txt"
check "delay accounting off: no waits in the units table" sh -c "! grep -q ', waited cpu' '$L/resources-off.summary.txt'"
expect_eq "delay accounting off: the history has them unknown" \
        "$(sqlite3 "$T/h.db" "SELECT count(u.wait_cpu_s) FROM units u JOIN runs r ON r.id = u.run WHERE r.run_id = 'off'")" 0
expect_eq "the sysctl is as it was" "$(cat /proc/sys/kernel/task_delayacct)" "$old_delay"
finish
