#!/usr/bin/env bash
# Replay: a run's summary recomputed from its CSV (`summarize FILE.csv`) and
# from the history database (`summarize RUN`) goes through the same pipeline
# as the live run (a replay source feeding the recorder) and gives the same
# bytes as the summary the live run wrote: JSON and text, for a run in its
# own cgroup that fails, one that forks and writes, and a `watch`. The JSON
# whole, its "baseline" included: the CSV replay reads it from the history
# the run was recorded in (--db), as the live run did.
. "$(dirname "$0")/lib.sh"
: "${CGLOAD:?CGLOAD must name the cgload helper}"
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
L="$T/logs"
DB="$T/h.db"

same() { # same ID: both replays, both forms, byte for byte
        local id=$1
        "$BUILDTEL" summarize --db "$DB" --json "$L/resources-$id.csv" >"$T/$id.csv.json"
        expect_eq "$id: summarize FILE.csv --json status" "$?" 0
        check "$id: summarize FILE.csv --json is the live summary.json, byte for byte" \
                $CSVCHECK json-equal "$T/$id.csv.json" "$L/resources-$id.summary.json"
        "$BUILDTEL" summarize --db "$DB" --json "$id" >"$T/$id.db.json"
        expect_eq "$id: summarize RUN --json status" "$?" 0
        check "$id: summarize RUN --json is the live summary.json, byte for byte" \
                $CSVCHECK json-equal "$T/$id.db.json" "$L/resources-$id.summary.json"
        "$BUILDTEL" summarize "$L/resources-$id.csv" >"$T/$id.csv.txt"
        check "$id: summarize FILE.csv text is the live summary.txt" \
                cmp "$T/$id.csv.txt" "$L/resources-$id.summary.txt"
        "$BUILDTEL" summarize --db "$DB" "$id" >"$T/$id.db.txt"
        check "$id: summarize RUN text is the live summary.txt" \
                cmp "$T/$id.db.txt" "$L/resources-$id.summary.txt"
}

# A build that fails, with a stage and context, in its cgroup (or its
# process tree where there is none), with thresholds that fire.
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id fail --interval 0.1 \
        --near-oom-mb 1000000 --low-disk-gb 100000 -- \
        sh -c 'echo "#1 [build 1/2] RUN make"; "$0" alloc 64; echo "[3/9] Building C object a.c.o"; sleep 0.3; exit 7' "$CGLOAD" >/dev/null
expect_eq "the failing run keeps its status" "$?" 7
n=$($CSVCHECK json-get "$L/resources-fail.summary.json" warnings.near_oom.count)
check "the live summary counted near-OOM samples ($n)" ge "$n" 1
"$BUILDTEL" summarize --db "$DB" --json --near-oom-mb 1000000 --low-disk-gb 100000 fail >"$T/fail.th.json"
check "fail: the same thresholds give the same bytes" $CSVCHECK json-equal "$T/fail.th.json" "$L/resources-fail.summary.json"
"$BUILDTEL" summarize --db "$DB" --json fail >"$T/fail.def.json"
"$BUILDTEL" summarize --db "$DB" --json "$L/resources-fail.csv" >"$T/fail.defcsv.json"
check "fail: default thresholds, CSV and history replays agree" cmp "$T/fail.def.json" "$T/fail.defcsv.json"
"$BUILDTEL" summarize --db "$DB" --json --near-oom-mb 1000000 --low-disk-gb 100000 "$L/resources-fail.csv" >"$T/fail.thcsv.json"
check "fail: the CSV replay with its thresholds gives the same bytes" $CSVCHECK json-equal "$T/fail.thcsv.json" "$L/resources-fail.summary.json"

# A build that forks, burns CPU and writes.
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id work --interval 0.1 -- \
        sh -c '"$0" burn 0.4 & "$0" write 16 "$1"; wait' "$CGLOAD" "$T/w.dat"
expect_eq "the working run succeeds" "$?" 0
same work

# A watch: the watched-pid source into the same pipeline.
sleep 1.2 &
pid=$!
"$BUILDTEL" watch --quiet --db "$DB" --log-dir "$L" --run-id watched --interval 0.1 --pid $pid
expect_eq "watch ends with the pid" "$?" 0
wait $pid 2>/dev/null
rows=$($CSVCHECK stat "$L/resources-watched.csv" epoch count)
check "watch took several samples ($rows)" ge "$rows" 5
same watched
finish
