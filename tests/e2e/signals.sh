#!/usr/bin/env bash
# Signals to buildtel reach the build's process group; the files are written
# anyway. Processes left holding the pipes do not hang buildtel.
. "$(dirname "$0")/lib.sh"
L="$T/logs"

cat >"$T/trap.sh" <<'SH'
trap 'echo got-term >"$1"; exit 143' TERM
echo started
while :; do sleep 0.05; done
SH
"$BUILDTEL" run --log-dir "$L" --run-id sig --interval 0.1 -- sh "$T/trap.sh" "$T/marker" >"$T/out" 2>"$T/err" &
bt=$!
for i in $(seq 1 50); do grep -q started "$T/out" 2>/dev/null && break; sleep 0.1; done
kill -TERM $bt
wait $bt
expect_eq "SIGTERM: buildtel exits with the build's status" "$?" 143
check "SIGTERM reached the build" grep -q got-term "$T/marker"
check "summary written after SIGTERM" test -s "$L/resources-sig.summary.json"
check "short summary on stderr" grep -q "buildtel: csv:" "$T/err"
expect_eq "run record says finished" "$($CSVCHECK json-get "$L/resources-sig.run.json" finished)" "True"

# SIGINT, SIGHUP and SIGQUIT go to the whole process group (a grandchild too).
# Job control on: a non-interactive shell would start background jobs with
# SIGINT and SIGQUIT ignored, and an ignored signal is passed on by nobody.
# env --default-signal: the test itself may have been started with them
# ignored (under nohup: SIGHUP), which buildtel and the build rightly keep,
# and no shell can undo.
set -m
for s in INT HUP QUIT; do
        rm -f "$T/gc" "$T/out2"
        env --default-signal=INT,HUP,QUIT "$BUILDTEL" run --quiet --log-dir "$L" -- sh -c "sh -c 'trap \"echo $s >$T/gc; exit 0\" $s; echo up; while :; do sleep 0.05; done'" >"$T/out2" 2>/dev/null &
        bt=$!
        for i in $(seq 1 50); do grep -q up "$T/out2" 2>/dev/null && break; sleep 0.1; done
        kill -$s $bt
        # at most 10 s: a signal not passed on fails here, not at meson's timeout
        for i in $(seq 1 100); do kill -0 $bt 2>/dev/null || break; sleep 0.1; done
        kill -0 $bt 2>/dev/null && { kill -KILL -- -$bt 2>/dev/null; kill -KILL $bt 2>/dev/null; }
        wait $bt
        check "SIG$s reaches a grandchild in the build's group" grep -q "$s" "$T/gc"
done
set +m

# Something left behind holding the pipes: back within grace + 1 s.
start=$(date +%s.%N)
"$BUILDTEL" run --quiet --log-dir "$L" --grace 1 -- sh -c 'sleep 1000 & echo $! >"$1"; echo done' sh "$T/bgpid" >/dev/null
st=$?
el=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')
kill "$(cat "$T/bgpid")" 2>/dev/null
expect_eq "status with a straggler" "$st" 0
check "returned within grace + 1 s ($el s)" awk -v e="$el" 'BEGIN{exit !(e < 2.0)}'

start=$(date +%s.%N)
"$BUILDTEL" run --quiet --log-dir "$L" -- sh -c 'sleep 1000 & echo $! >"$1"' sh "$T/bgpid" >/dev/null
el=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')
kill "$(cat "$T/bgpid")" 2>/dev/null
check "default grace of 2 s ($el s)" awk -v e="$el" 'BEGIN{exit !(e < 3.0)}'
finish
