#!/usr/bin/env bash
# The files: strict CSV, summarize == the run's own summary, a killed run
# still summarizes, fallbacks say so and lose nothing, watch ends on time.
. "$(dirname "$0")/lib.sh"
L="$T/logs"

"$BUILDTEL" run --log-dir "$L" --run-id a --interval 0.1 -- sh -c 'echo "x, \"y\""; sleep 0.5; echo "[1/1] Linking, with \"quotes\""; sleep 0.3' >/dev/null 2>"$T/err"
check "CSV passes a strict RFC 4180 reader" $CSVCHECK strict "$L/resources-a.csv"
check "summary txt written" test -s "$L/resources-a.summary.txt"
check "summary json written" test -s "$L/resources-a.summary.json"
check "the file paths are printed at the end" grep -q "resources-a.csv" "$T/err"
"$BUILDTEL" summarize --json "$L/resources-a.csv" >"$T/a.json"
expect_eq "summarize --json status" "$?" 0
check "summarize gives JSON identical to the run's own" $CSVCHECK json-equal "$T/a.json" "$L/resources-a.summary.json"
"$BUILDTEL" summarize "$L/resources-a.csv" >"$T/a.txt"
check "summarize text equals the run's summary.txt" cmp -s "$T/a.txt" "$L/resources-a.summary.txt"

# Other thresholds: summarize takes the same ones.
"$BUILDTEL" run --quiet --log-dir "$L" --run-id b --interval 0.1 --near-oom-mb 1000000 --low-disk-gb 100000 -- sleep 0.3
"$BUILDTEL" summarize --json --near-oom-mb 1000000 --low-disk-gb 100000 "$L/resources-b.csv" >"$T/b.json"
check "same thresholds, same JSON" $CSVCHECK json-equal "$T/b.json" "$L/resources-b.summary.json"
n=$($CSVCHECK json-get "$T/b.json" warnings.near_oom.count)
check "near-OOM samples counted with a huge threshold ($n)" ge "$n" 1

# kill -9 of buildtel mid-run leaves a CSV that summarizes without error.
"$BUILDTEL" run --quiet --log-dir "$L" --run-id k --interval 0.05 -- sleep 30 &
bt=$!
# killed once it has written its start and a few rows (a loaded machine can
# take over a second to get there)
for _ in $(seq 100); do
        [ -s "$L/resources-k.run.json" ] && [ "$(wc -l <"$L/resources-k.csv" 2>/dev/null || echo 0)" -ge 4 ] && break
        sleep 0.1
done
kill -9 $bt
wait $bt 2>/dev/null
pkill -f "^sleep 30$" 2>/dev/null
"$BUILDTEL" summarize "$L/resources-k.csv" >"$T/k.txt" 2>"$T/k.err"
expect_eq "summarize after kill -9" "$?" 0
check "the killed run reads as incomplete" grep -qi "incomplete" "$T/k.txt"
# A torn last row and junk rows are skipped and counted, never fatal.
cp "$L/resources-k.csv" "$T/torn.csv"
printf 'garbage,"unterminated\r\nnot,a,row\r\n1764,2026-' >>"$T/torn.csv"
"$BUILDTEL" summarize --json "$T/torn.csv" >"$T/torn.json" 2>"$T/torn.err"
expect_eq "summarize of a torn CSV" "$?" 0
check "skipped rows reported" grep -q "skipped" "$T/torn.err"
"$BUILDTEL" summarize /dev/null/nope.csv 2>"$T/e1"
expect_eq "missing file: status 1" "$?" 1
check "missing file: one clear line" test "$(wc -l <"$T/e1")" -eq 1
printf 'not a csv at all\n' >"$T/junk.csv"
"$BUILDTEL" summarize "$T/junk.csv" 2>"$T/e2"
expect_eq "not a buildtel CSV: status 1" "$?" 1

# An existing run id is rewritten, with a note.
"$BUILDTEL" run --log-dir "$L" --run-id a -- true 2>"$T/err"
check "rewriting a run id says so" grep -q "note: run id 'a' exists" "$T/err"

# A log directory named that cannot be written is a bad option (125, one
# line, the build not run: its files would be elsewhere than asked); the
# default one falls back, says so, and loses nothing (issue 39, item 7).
mkdir -p "$T/ro"; chmod 555 "$T/ro"
if [ "$(id -u)" = 0 ]; then
        # root ignores permission bits: use a path under a file instead.
        touch "$T/file"; ro="$T/file/logs"
else
        ro="$T/ro/logs"
fi
TMPDIR="$T/tmp" "$BUILDTEL" run --log-dir "$ro" --run-id fb -- sh -c 'echo out' >"$T/o" 2>"$T/err"
expect_eq "unwritable --log-dir: status 125" "$?" 125
expect_eq "unwritable --log-dir: one line" "$(cat "$T/err")" "buildtel: --log-dir '$ro': $( [ "$(id -u)" = 0 ] && echo 'Not a directory' || echo 'Permission denied')"
expect_eq "unwritable --log-dir: the build did not run" "$(cat "$T/o")" ""
check "unwritable --log-dir: no fallback made" test ! -e "$T/tmp/buildtel-$(id -u)/logs/resources-fb.csv"
"$BUILDTEL" watch --log-dir "$ro" --pid $$ >/dev/null 2>"$T/err"
expect_eq "watch, unwritable --log-dir: status 1, one line" "$? $(wc -l <"$T/err")" "1 1"
rs="$ro/state"
TMPDIR="$T/tmp" XDG_STATE_HOME="$rs" "$BUILDTEL" run --run-id fb -- sh -c 'echo out' >"$T/o" 2>"$T/err"
expect_eq "unwritable default: the build still runs" "$?" 0
expect_eq "unwritable default: output intact" "$(cat "$T/o")" "out"
check "unwritable default: the fallback is named" grep -q "writing to '$T/tmp/buildtel-$(id -u)/logs' instead" "$T/err"
check "unwritable default: files in the fallback" test -s "$T/tmp/buildtel-$(id -u)/logs/resources-fb.csv"
check "unwritable default: the history's fallback is named" \
        grep -q "the history in '$T/tmp/buildtel-$(id -u)/history.db' instead" "$T/err"
check "unwritable default: the run is in that history" \
        sh -c "TMPDIR='$T/tmp' XDG_STATE_HOME='$rs' '$BUILDTEL' inspect fb | grep -q '^run  *fb '"
expect_eq "unwritable default: no warning of a history lost" "$(grep -c 'not in the history' "$T/err")" 0

# Default directory from XDG_STATE_HOME.
XDG_STATE_HOME="$T/state" "$BUILDTEL" run --quiet --run-id x -- true
check "XDG_STATE_HOME/buildtel/logs is the default" test -s "$T/state/buildtel/logs/resources-x.csv"
HOME="$T/home" XDG_STATE_HOME= "$BUILDTEL" run --quiet --run-id y -- true
check "~/.local/state/buildtel/logs without XDG_STATE_HOME" test -s "$T/home/.local/state/buildtel/logs/resources-y.csv"

# A generated run id sorts by time.
"$BUILDTEL" run --log-dir "$T/gen" -- true 2>/dev/null
id=$(ls "$T/gen" | sed -n 's/^resources-\(.*\)\.csv$/\1/p')
check "generated run id is UTC time + suffix ($id)" sh -c "echo '$id' | grep -Eq '^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$'"

# watch ends at the pid's exit (its pidfd), not at the next tick, and
# summarizes. The interval is long so that waiting for a tick would show as
# 30 s, whatever the machine's load does to start-up (no timed assertion).
sleep 1.5 &
sp=$!
start=$(now)
"$BUILDTEL" watch --pid $sp --log-dir "$L" --run-id w --interval 30 2>/dev/null
st=$?
el=$(since "$start")
expect_eq "watch status" "$st" 0
check "watch ended at the exit, not at the next tick 30 s on ($el s)" lt "$el" 15
check "watch wrote a summary" test -s "$L/resources-w.summary.json"
check "watch CSV is strict" $CSVCHECK strict "$L/resources-w.csv"
"$BUILDTEL" watch --pid 999999 --log-dir "$L" 2>/dev/null
expect_eq "watch of no such pid: status 1" "$?" 1

# watch --stage-log-dir follows the newest log.
mkdir -p "$T/sl"
( printf '#5 [app builder 2/4] RUN make\n' >"$T/sl/a.log"; sleep 0.6
  printf '[7/9] Building C object x.c.o\n' >>"$T/sl/a.log"; sleep 0.6
  printf '#9 [app final 1/2] COPY . .\n' >"$T/sl/b.log"; sleep 0.6 ) &
wp=$!
"$BUILDTEL" watch --pid $wp --log-dir "$L" --run-id sl --interval 0.1 --stage-log-dir "$T/sl" 2>/dev/null
check "stage-log-dir: first stage seen" grep -q "app/builder" "$L/resources-sl.csv"
check "stage-log-dir: context from the followed file" grep -q "Building C object x.c.o" "$L/resources-sl.csv"
expect_eq "stage-log-dir: switched to the newer file" "$($CSVCHECK stat "$L/resources-sl.csv" stage last-str)" "app/final"

# watch writes its summary on SIGTERM too.
sleep 30 &
sp=$!
"$BUILDTEL" watch --pid $sp --log-dir "$L" --run-id wt --interval 0.1 2>/dev/null &
wb=$!
sleep 0.5
kill -TERM $wb
wait $wb
expect_eq "watch on SIGTERM exits 143" "$?" 143
check "watch on SIGTERM writes its summary" test -s "$L/resources-wt.summary.json"
kill $sp

# libcurl is loaded only when an HTTP sink is on (the build's parent is buildtel)
n=$("$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id nocurl -- sh -c 'grep -c libcurl /proc/$PPID/maps' 2>/dev/null)
expect_eq "no HTTP sink: libcurl is not mapped" "$n" 0
n=$(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 "$BUILDTEL" run --quiet --no-db --log-dir "$L" \
        --run-id curl -- sh -c 'grep -c libcurl /proc/$PPID/maps' 2>/dev/null)
check "OTLP on: libcurl is loaded ($n mappings)" test "${n:-0}" -gt 0

# help and version
check "--version" sh -c "'$BUILDTEL' --version | grep -q '^buildtel [0-9]'"
check "--help lists run" sh -c "'$BUILDTEL' --help | grep -q 'run '"
check "help run documents exit codes" sh -c "'$BUILDTEL' help run | grep -q '127'"
"$BUILDTEL" bogus 2>/dev/null
expect_eq "unknown command: status 2" "$?" 2
finish
