#!/usr/bin/env bash
# run --memory-guard (issue 37): six "compiles" of 200 MiB each (a stand-in
# cc1plus that holds the memory) under a 640 MiB cap at -j6. Once at -j1 to
# fill the job's ledger; then the bare run, which must be OOM-killed (else
# this test proves nothing); then with the guard: exit 0, no OOM kill, every
# object made, compiles held back and said so in every surface.
. "$(dirname "$0")/lib.sh"
need_root "the kernel's accounting of processes (taskstats) and a capped cgroup"
: "${MEMHOG:?MEMHOG must name the memhog helper}"
command -v ninja >/dev/null || { echo "ninja is missing (Debian package ninja-build)"; exit 77; }
W=$T/w
L=$T/l
mkdir -p "$W"
cd "$W" || exit 1
cat >cc1plus <<SH
#!/bin/sh
# cc1plus SRC -o OUT: a compile that needs 200 MiB
"$MEMHOG" 200 0.3 >/dev/null && echo obj >"\$3"
SH
chmod +x cc1plus
{
        printf 'rule cc\n  command = ./cc1plus $in -o $out\n'
        for i in 1 2 3 4 5 6; do
                echo "int u$i;" >"u$i.cpp"
                echo "build u$i.o: cc u$i.cpp"
        done
} >build.ninja
bt() { "$BUILDTEL" run --quiet --job guard --db "$T/h.db" --log-dir "$L" "$@"; }

bt --run-id ledger -- ninja -j1 >/dev/null
expect_eq "the -j1 run fills the ledger" "$?" 0
check "taskstats measured the units (exact)" grep -q ',taskstats,' "$L/resources-ledger.units.csv" ||
        { echo "no exact units: the kernel's accounting is not ours here"; exit 77; }

rm -f ./*.o
bt --run-id bare --memory-max 640M -- ninja -j6 >/dev/null 2>&1
rc=$?
oom=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["build"]["oom_kills"])' \
        "$L/resources-bare.summary.json")
check "the control: the bare -j6 run under 640M is OOM-killed (exit $rc, $oom kills)" \
        sh -c "[ $rc -ne 0 ] && [ ${oom:-0} -ge 1 ]"

rm -f ./*.o
t0=$(now)
bt --run-id guarded --memory-max 640M --memory-guard=40M -- ninja -j6 >"$T/g.out" 2>"$T/g.err"
expect_eq "guarded: exit 0 ($(since "$t0") s)" "$?" 0 || cat "$T/g.err"
expect_eq "guarded: every object made" "$(ls ./*.o | wc -l)" 6
check "guarded: no OOM kill" /usr/bin/python3 - "$L/resources-guarded.summary.json" <<'PY'
import json, sys
sys.exit(json.load(open(sys.argv[1]))["build"]["oom_kills"] != 0)
PY
grep '^  memory guard:' "$L/resources-guarded.summary.txt"
check "guarded: summary.json says what it held" /usr/bin/python3 - "$L/resources-guarded.summary.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["memory_guard"]
print("#", g)
sys.exit(not (g["units"] == 6 and g["from_ledger"] == 6 and 1 <= g["held"] <= 5 and
              g["held_s"] > 0 and g["longest_s"] > 0 and g["longest"].startswith("u") and
              g["headroom_mb"] == 40 and g["limit_mb"] == 640))
PY
check "guarded: summary.txt's line" grep -Eq \
        '^  memory guard:   held [1-5] of 6 compiles and links back, [0-9.]+ s in all, the longest [0-9.]+ s \(u[1-6]\.cpp\); headroom 40\.0 MiB under the cap of 640 MiB; 6 with a usual peak' \
        "$L/resources-guarded.summary.txt"
# the same from the files and from the history
"$BUILDTEL" summarize "$L/resources-guarded.csv" >"$T/s-files.txt" 2>&1
"$BUILDTEL" summarize --db "$T/h.db" guarded >"$T/s-db.txt" 2>&1
line=$(grep '^  memory guard:' "$L/resources-guarded.summary.txt")
check "summarize of the files says the same" grep -qxF "$line" "$T/s-files.txt"
check "summarize of the history says the same" grep -qxF "$line" "$T/s-db.txt"
check "the report says it" grep -q "the memory guard held [1-5] of 6 compiles back" "$L/report-guarded.html"
"$BUILDTEL" report --db "$T/h.db" --format markdown guarded >"$T/g.md" 2>&1
check "the job summary says it" grep -Eq '^\| memory guard \| held [1-5] of 6 compiles back, [0-9.]+s in all \|$' "$T/g.md"
check "no compile of ours is left stopped" sh -c \
        "! ps -eo stat,comm | awk '\$1 ~ /^T/ && (\$2 == \"cc1plus\" || \$2 == \"memhog\")' | grep -q ."

# the plan for that cap: the -j that fits, every unit heavy, pooled at it
"$BUILDTEL" plan --db "$T/h.db" --job guard --memory 640M --cpus 6 --headroom 40M --json >"$T/plan.json"
check "plan --memory 640M: -j 2 fits (2 x 200 MiB), all six heavy, a pool of 2" /usr/bin/python3 - "$T/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print("#", p["j_fit"], p["pool_depth"], p["heavy_count"], [h["name"] for h in p["heavy"]])
sys.exit(not (p["j_fit"] in (2, 3) and p["heavy_count"] == 6 and len(p["heavy"]) == 6 and
              p["pool_depth"] == p["j_fit"] and "depth = %d" % p["j_fit"] in p["snippets"]["ninja"]))
PY

# a bad headroom: a one-line error, exit 125 (run's own, never a build's status)
"$BUILDTEL" run --no-db --memory-guard=lots -- true >"$T/bad.out" 2>&1
expect_eq "--memory-guard=lots: exit 125" "$?" 125
check "with a clear error" grep -q "^buildtel run: --memory-guard" "$T/bad.out"
# not root: said, and the build runs unguarded
if id nobody >/dev/null 2>&1; then
        chmod 755 "$T"
        mkdir -p "$T/n" && chown nobody "$T/n" # a --log-dir given must be writable (125)
        runuser -u nobody -- env XDG_STATE_HOME="$T/n" "$BUILDTEL" run --no-db --no-report \
                --log-dir "$T/n" --memory-guard -- true >"$T/nobody.out" 2>&1
        expect_eq "as nobody: the build runs" "$?" 0
        check "as nobody: it says the guard is off" grep -q -- "--memory-guard: needs the kernel's accounting" "$T/nobody.out"
fi
finish
