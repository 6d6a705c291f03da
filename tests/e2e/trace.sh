#!/bin/bash
# The Chrome trace of a real run: a BuildKit log (tests/fixtures/trace/
# buildkit.log, printed with pauses so its targets take time) and a real
# ninja build of a tiny C project with --ninja-log, under `buildtel run
# --trace-file`; then `export --trace` of the same run from the history
# database and from its files. Every trace is read back by tracecheck.py,
# a strict reader (fields and types per phase, non-negative durations,
# slices nesting per lane, numeric counters, metadata).
. "$(dirname "$0")/lib.sh"
TRACECHECK="python3 $HERE/tracecheck.py"
FIX="$HERE/../fixtures/trace"

command -v ninja >/dev/null || { echo "SKIP: no ninja on this machine"; exit 77; }
CC=$(command -v cc || command -v gcc) || { echo "SKIP: no C compiler"; exit 77; }

# The strict reader must be able to fail: a partial overlap in one lane.
printf '%s' '{"traceEvents":[{"name":"a","ph":"X","ts":0,"pid":1,"tid":0,"dur":10,"cat":"x","args":{}},
{"name":"b","ph":"X","ts":5,"pid":1,"tid":0,"dur":10,"cat":"x","args":{}},
{"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"p"}},
{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"t"}}],"displayTimeUnit":"ms"}' >"$T/bad.json"
if $TRACECHECK "$T/bad.json" >/dev/null 2>&1; then bad "tracecheck accepts a partial overlap"; else ok "tracecheck rejects a partial overlap"; fi

# A tiny C project: 6 objects, a library, a program; -j3 for concurrency.
P="$T/proj"
mkdir -p "$P"
# each unit big enough (-O2 over 300 functions) for the process scans to see
for i in 1 2 3 4 5 6; do
        for k in $(seq 300); do
                printf 'int f%d_%d(int a) { int s = 0; for (int i = 0; i < a; i++) s += i * %d; return s; }\n' "$i" "$k" "$k"
        done >"$P/f$i.c"
        printf 'int f%d(void) { return f%d_1(3); }\n' "$i" "$i" >>"$P/f$i.c"
done
printf 'int f1(void);\nint main(void) { return f1() == 42; }\n' >"$P/main.c"
{
        printf 'cc = %s\n' "$CC"
        printf 'rule cc\n  command = $cc -O2 -c $in -o $out\n'
        printf 'rule ar\n  command = ar rcs $out $in\n'
        printf 'rule link\n  command = $cc $in -o $out\n'
        for i in 1 2 3 4 5 6; do printf 'build f%d.o: cc f%d.c\n' "$i" "$i"; done
        printf 'build main.o: cc main.c\n'
        printf 'build libf.a: ar f1.o f2.o f3.o f4.o f5.o f6.o\n'
        printf 'build prog: link main.o libf.a\n'
} >"$P/build.ninja"

L="$T/logs"
# The log with a pause after each finished step, then the ninja build.
"$BUILDTEL" run --quiet --interval 0.1 --log-dir "$L" --run-id tr1 --targets app,lib \
        --ninja-log "$P/.ninja_log" --trace-file -- \
        sh -c 'while IFS= read -r l; do printf "%s\n" "$l"; case $l in *DONE*|*CACHED*) sleep 0.15;; esac; done <"$1"; ninja -C "$2" -j3 >/dev/null' \
        sh "$FIX/buildkit.log" "$P" >/dev/null 2>"$T/run.err"
expect_eq "run exits 0" "$?" "0"
check "trace-<run-id>.json beside the CSV" test -s "$L/trace-tr1.json"

counts=$($TRACECHECK "$L/trace-tr1.json" 2>"$T/check.err")
check "the run's trace reads strictly" test $? -eq 0
cat "$T/check.err"
field() { # field KEY: a figure of the counts
        python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(c.get(sys.argv[2], 0))' "$counts" "$1"
}
expect_eq "one run slice" "$(field X:run)" "1"
expect_eq "a slice per target (app, lib)" "$(field X:target)" "2"
expect_eq "a slice per ninja edge (9)" "$(field X:ninja)" "9"
expect_eq "a slice per BuildKit vertex of the log (9)" "$(field X:step)" "9"
expect_eq "the CACHED steps marked cached in args (2)" "$(field X:step:cached)" "2"
check "counters follow the samples" ge "$(field C)" 20
for c in "host memory (MiB)" "build memory (MiB)" "CPU (%)" "load" "disk available (GiB)" "compilers"; do
        check "counter track '$c'" python3 -c 'import json,sys; sys.exit(sys.argv[2] not in json.loads(sys.argv[1])["counters"])' "$counts" "$c"
done
# Series read back as their viewer draws them (one counter event's series
# are stacked): the build's total alone on its track, equal to the CSV's
# cg_mem_mb, never drawn on top of its anon/file split.
check "the build memory total reads back alone, as the CSV's cg_mem_mb" python3 - \
        "$L/trace-tr1.json" "$L/resources-tr1.csv" <<'PY'
import csv, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
rows = {round(float(r["elapsed_s"]) * 1e6): r for r in csv.DictReader(open(sys.argv[2]))}
tot = [e for e in ev if e["ph"] == "C" and e["name"] == "build memory (MiB)"]
split = [e for e in ev if e["ph"] == "C" and e["name"] == "build memory by kind (MiB)"]
assert tot, "no build memory counter"
for e in tot:
    assert list(e["args"]) == ["cgroup"], e
    r = min(rows, key=lambda t: abs(t - e["ts"]))
    assert abs(float(rows[r]["cg_mem_mb"]) - e["args"]["cgroup"]) < 0.01, (e, rows[r]["cg_mem_mb"])
for e in split:
    assert "cgroup" not in e["args"] and set(e["args"]) <= {"anon", "file"}, e
print(len(tot), "total events,", len(split), "split events")
PY
check "compile units seen by the process scans are slices" ge "$(field X:unit)" 1
check "ninja edges ran on more than one lane" python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["lanes"]["3"] < 2)' "$counts"
# the edges sit inside the run, after the log's targets
python3 - "$L/trace-tr1.json" <<'PY' >"$T/place.out" 2>&1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
run = [e for e in ev if e["ph"] == "X" and e["cat"] == "run"][0]
edges = [e for e in ev if e["ph"] == "X" and e["cat"] == "ninja"]
tg = [e for e in ev if e["ph"] == "X" and e["cat"] == "target"]
end = run["ts"] + run["dur"]
assert all(e["ts"] + e["dur"] <= end + 50000 for e in edges), "an edge past the run's end"
assert min(e["ts"] for e in edges) + 100000 >= max(t["ts"] for t in tg), "edges before the log"
assert all(t["dur"] > 0 for t in tg), "a target without time"
PY
check "ninja edges placed inside the run, after the BuildKit log ($(cat "$T/place.out"))" test ! -s "$T/place.out"

# export --trace: from the history database (latest run by default) and
# from its files; the same events either way.
(cd "$T" && "$BUILDTEL" export --trace --ninja-log "$P/.ninja_log" >/dev/null 2>"$T/exp.err")
expect_eq "export --trace (latest run) exits 0" "$?" "0"
check "export --trace writes trace-<run-id>.json in the current directory" test -s "$T/trace-tr1.json"
db=$($TRACECHECK "$T/trace-tr1.json")
check "the database's trace reads strictly" test $? -eq 0
"$BUILDTEL" export --trace --no-db --log-dir "$L" --ninja-log "$P/.ninja_log" -o "$T/files.json" tr1 2>/dev/null
expect_eq "export --trace --no-db RUN -o FILE exits 0" "$?" "0"
files=$($TRACECHECK "$T/files.json")
check "the files' trace reads strictly" test $? -eq 0
expect_eq "export from the files gives the run's own trace's events" "$files" "$counts"
# The database keeps the targets' times and the steps (schema 6): the same
# events. Its samples are exact where the CSV rounds, so an unchanged
# counter (not repeated) may differ: compare the counter tracks, not their
# events; and the slices one by one (targets, steps, edges, units, run).
nocount='import json,sys; c=json.loads(sys.argv[1]); c.pop("C"); print(json.dumps(c, sort_keys=True))'
expect_eq "the database gives the same events" "$(python3 -c "$nocount" "$db")" "$(python3 -c "$nocount" "$counts")"
$TRACECHECK --slices "$L/trace-tr1.json" >"$T/live.slices"
$TRACECHECK --slices "$T/trace-tr1.json" >"$T/db.slices"
check "the database's slices (targets, steps, edges) are the live run's, one by one" cmp -s "$T/live.slices" "$T/db.slices"
# without --ninja-log, the edges the history kept (the slowest 2,000)
"$BUILDTEL" export --trace -o "$T/db-kept.json" tr1 2>"$T/kept.err"
expect_eq "export --trace RUN without --ninja-log exits 0" "$?" "0"
$TRACECHECK "$T/db-kept.json" >/dev/null
check "its trace reads strictly" test $? -eq 0
$TRACECHECK --slices "$T/db-kept.json" >"$T/kept.slices"
check "the history's own ninja edges give the live run's slices, one by one" cmp -s "$T/live.slices" "$T/kept.slices"
diff "$T/live.slices" "$T/kept.slices" | head -5
check "and the steps are among them" grep -q '"step", "\[app 2/3\] RUN make' "$T/db.slices"
check "export from the database says nothing of missing target times" sh -c "! grep -q \"no times of targets\" \"\$1\"" sh "$T/exp.err"
"$BUILDTEL" export --trace -o - "$L/resources-tr1.csv" 2>/dev/null | python3 -c 'import json,sys; json.load(sys.stdin)'
expect_eq "export --trace FILE.csv -o - writes JSON to stdout" "$?" "0"
# --ninja-log never loses what the history has (issue 21: after a later
# build appended to the log, export said "another build's, left out" and
# exported none). A second ninja build appends its edges to the log: the
# run's edges are matched by the run's time window (their records' mtimes),
# the later build's left out; the same with and without the database.
edges_of() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("X:ninja", 0))' "$1"; }
sleep 1.1
touch "$P/f1.c" "$P/f2.c"
ninja -C "$P" -j2 >/dev/null
check "the log holds a second build's records" test "$(grep -vc '^#' "$P/.ninja_log")" -gt 9
(cd "$T" && "$BUILDTEL" export --trace --ninja-log "$P/.ninja_log" -o "$T/appended.json" tr1 2>"$T/appended.err")
expect_eq "export --trace --ninja-log (appended log) exits 0" "$?" "0"
expect_eq "it keeps the run's 9 edges" "$(edges_of "$($TRACECHECK "$T/appended.json")")" "9"
$TRACECHECK --slices "$T/appended.json" | grep '^\["ninja"' >"$T/appended.slices"
grep '^\["ninja"' "$T/live.slices" >"$T/live.edges"
# placed by their outputs' mtimes now, not the file's: within 50 ms
check "the run's own edges, one by one (durations exact, starts within 50 ms)" python3 - \
        "$T/live.edges" "$T/appended.slices" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
sys.exit(not (len(a) == len(b) == 9 and all(
    x[1] == y[1] and x[3] == y[3] and abs(x[2] - y[2]) <= 50000 for x, y in zip(a, b))))
PY
"$BUILDTEL" export --trace --no-db --log-dir "$L" --ninja-log "$P/.ninja_log" -o "$T/appended2.json" tr1 2>/dev/null
expect_eq "from the files too: the run's 9 edges" "$(edges_of "$($TRACECHECK "$T/appended2.json")")" "9"
# a log holding only a later build's edges: none of them, and the history's own instead
grep -v '^#' "$P/.ninja_log" | tail -n 3 | { echo '# ninja log v5'; cat; } >"$T/other.ninja_log"
(cd "$T" && "$BUILDTEL" export --trace --ninja-log "$T/other.ninja_log" -o "$T/other.json" tr1 2>"$T/other.err")
expect_eq "a log of a later build only: the history's 9 edges" "$(edges_of "$($TRACECHECK "$T/other.json")")" "9"
check "and export says why" grep -q "another build's, left out" "$T/other.err"
"$BUILDTEL" export --trace --no-db --log-dir "$L" --ninja-log "$T/other.ninja_log" -o "$T/later.json" tr1 2>"$T/later.err"
expect_eq "without the history: the run's own 9 edges, from its targets.json" "$(edges_of "$($TRACECHECK "$T/later.json")")" "9"
"$BUILDTEL" export --trace --no-db --log-dir "$L" nosuch 2>/dev/null
expect_eq "export --trace of an unknown run fails" "$?" "1"
finish
