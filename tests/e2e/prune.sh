#!/usr/bin/env bash
# Retention (issue 26): `buildtel prune` removes the oldest finished runs'
# files and history rows together, never a running run nor a file it did
# not write; `run` applies its default limit at the end; a build log over
# 1 MiB is gzip-compressed and still read by top's detail (one over 32 MiB
# after buildtel exits, in the background; binary output not at all).
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is missing: tools/deps.sh"; exit 77; }
DB="$T/h.db"
L="$T/logs"
q() { sqlite3 "$DB" "$1"; }
files_of() { ls "$L" | grep -c -- "-$1\." ; }
runs4() { # runs4 PREFIX: four finished runs, oldest first
        for i in 1 2 3 4; do
                "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id "$1$i" --keep-runs 0 \
                        --keep-size 0 -- sh -c "echo build $i" >/dev/null
        done
}

runs4 a
echo "not buildtel's" >"$L/notes-a1.txt"
echo "not buildtel's either" >"$L/resources-a1.csv.bak"
expect_eq "four runs recorded" "$(q 'SELECT count(*) FROM runs')" 4
check "a1 has its files" test "$(files_of a1)" -ge 5

"$BUILDTEL" prune --db "$DB" --log-dir "$L" --keep 2 --dry-run >"$T/dry.out"
expect_eq "--dry-run: status" "$?" 0
check "--dry-run names a1 and a2" grep -q 'would remove a1' "$T/dry.out"
expect_eq "--dry-run removes no row" "$(q 'SELECT count(*) FROM runs')" 4
check "--dry-run removes no file" test "$(files_of a1)" -ge 5

"$BUILDTEL" prune --db "$DB" --log-dir "$L" --keep 2 >"$T/keep.out"
expect_eq "prune --keep 2: status" "$?" 0
cat "$T/keep.out"
expect_eq "prune --keep 2: the two newest rows stay" "$(q 'SELECT group_concat(run_id) FROM (SELECT run_id FROM runs ORDER BY start_epoch)')" "a3,a4"
expect_eq "prune --keep 2: no sample of a1, a2 left" "$(q 'SELECT count(*) FROM samples WHERE run NOT IN (SELECT id FROM runs)')" 0
expect_eq "prune --keep 2: a1's files gone" "$(ls "$L" | grep -E '^(resources|build|report|trace)-a1\.' | grep -vc '\.bak$')" 0
expect_eq "prune --keep 2: a2's files gone" "$(ls "$L" | grep -E -- '-a2\.' | wc -l)" 0
check "prune --keep 2: a3's files stay" test "$(files_of a3)" -ge 5
check "prune --keep 2: a4's files stay" test "$(files_of a4)" -ge 5
check "a file buildtel did not write stays" test -f "$L/notes-a1.txt"
check "a near name buildtel did not write stays" test -f "$L/resources-a1.csv.bak"
check "the summary line" grep -q '^removed 2 runs' "$T/keep.out"

# --older-than: a3 ended three days ago (as the row says)
q "UPDATE runs SET start_epoch = start_epoch - 259200, end_epoch = end_epoch - 259200 WHERE run_id = 'a3'"
"$BUILDTEL" prune --db "$DB" --log-dir "$L" --older-than 2d >/dev/null
expect_eq "--older-than 2d: a3 goes, a4 stays" "$(q 'SELECT group_concat(run_id) FROM runs')" "a4"
expect_eq "--older-than 2d: a3's files gone" "$(ls "$L" | grep -E -- '-a3\.' | wc -l)" 0
"$BUILDTEL" prune --db "$DB" --older-than soon 2>/dev/null
expect_eq "--older-than junk: usage" "$?" 2

# --max-size: four runs with 300 KB logs each; 700K keeps the newest two
rm -rf "$L" "$DB"
for i in 1 2 3 4; do
        "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id s$i --keep-runs 0 --keep-size 0 \
                -- head -c 300000 /dev/zero >/dev/null
done
"$BUILDTEL" prune --db "$DB" --log-dir "$L" --max-size 700K >"$T/size.out"
cat "$T/size.out"
expect_eq "--max-size 700K: the newest two stay" "$(q 'SELECT group_concat(run_id) FROM (SELECT run_id FROM runs ORDER BY start_epoch)')" "s3,s4"
check "--max-size 700K: s2's log gone" test ! -e "$L/build-s2.log"
check "--max-size 700K: s3's log stays" test -f "$L/build-s3.log"

# a running run in the middle is never pruned
rm -rf "$L" "$DB"
runs4 b
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id live --keep-runs 0 -- sleep 20 >/dev/null &
bg=$!
for _ in $(seq 100); do [ "$(q "SELECT state FROM runs WHERE run_id = 'live'" 2>/dev/null)" = running ] && break; sleep 0.1; done
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id b5 --keep-runs 0 -- true
"$BUILDTEL" status --db "$DB" >"$T/st.txt"
check "status: live is running" grep -q '^live .* running' "$T/st.txt"
"$BUILDTEL" prune --db "$DB" --log-dir "$L" --keep 1 >"$T/run.out"
cat "$T/run.out"
expect_eq "--keep 1 with a running run: it and the newest stay" "$(q 'SELECT group_concat(run_id) FROM (SELECT run_id FROM runs ORDER BY start_epoch)')" "live,b5"
check "the running run's log stays" test -f "$L/build-live.log"
check "the running run's CSV stays" test -f "$L/resources-live.csv"
"$BUILDTEL" prune --db "$DB" --log-dir "$L" --keep 0 --older-than 1s --max-size 1 >/dev/null
expect_eq "every limit at once: the running run stays" "$(q "SELECT count(*) FROM runs WHERE run_id = 'live'")" 1
kill -TERM "$bg" 2>/dev/null
wait "$bg" 2>/dev/null

# run's own limit at its end: one line, this run kept
rm -rf "$L" "$DB"
runs4 c
BUILDTEL_KEEP_RUNS=3 "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id c5 -- true 2>"$T/end.err"
check "run says it pruned" grep -q '^buildtel: pruned 2 old runs' "$T/end.err"
expect_eq "BUILDTEL_KEEP_RUNS=3: three newest rows" "$(q 'SELECT group_concat(run_id) FROM (SELECT run_id FROM runs ORDER BY start_epoch)')" "c3,c4,c5"
"$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id c6 --keep-runs 1 --keep-size 1K -- true 2>"$T/end2.err"
expect_eq "--keep-size below this run's files: this run stays" "$(q 'SELECT group_concat(run_id) FROM runs')" "c6"
check "this run's files stay" test -f "$L/resources-c6.csv"
"$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id c7 --keep-runs 0 --keep-size 0 -- true 2>"$T/end3.err"
check "0 keeps all: no prune line" sh -c "! grep -q pruned '$T/end3.err'"
"$BUILDTEL" run --db "$DB" --log-dir "$L" --keep-runs x -- true 2>/dev/null
check "--keep-runs x: refused" test "$?" -ne 0

# a 3 MB log is compressed, the row names the .gz, top and summarize read it
rm -rf "$L" "$DB"
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id big -- python3 -c '
for i in range(60000): print("line %06d of a long build log, fifty bytes long" % i)
print("THE LAST LINE")' >/dev/null
check "the big log is compressed" test -f "$L/build-big.log.gz"
check "the plain big log is gone" test ! -e "$L/build-big.log"
check "the .gz is much smaller than 3 MB" test "$(stat -c %s "$L/build-big.log.gz")" -lt 1000000
expect_eq "gunzip gives the log back" "$(gzip -dc "$L/build-big.log.gz" | wc -c)" 3000014
expect_eq "the row names the .gz" "$(q "SELECT build_log FROM runs WHERE run_id = 'big'")" "$L/build-big.log.gz"
"$BUILDTEL" top --once --db "$DB" big >"$T/top.txt"
expect_eq "top --once RUN: status" "$?" 0
check "top's detail shows the last lines of the .gz" grep -q 'THE LAST LINE' "$T/top.txt"
check "top's detail shows the line before" grep -q 'line 059999 of a long' "$T/top.txt"
"$BUILDTEL" summarize --db "$DB" big >"$T/sum.txt"
expect_eq "summarize RUN of the compressed run" "$?" 0
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id small -- echo small >/dev/null
check "a small log stays plain" test -f "$L/build-small.log"
"$BUILDTEL" prune --db "$DB" --log-dir "$L" --keep 1 >/dev/null
check "prune removes the .gz too" test ! -e "$L/build-big.log.gz"

# A log over 32 MiB is compressed after buildtel exits, by a detached
# buildtel-gzip that holds none of the caller's pipes: the pipeline below
# ends while it works (40 MB of text take it about half a second).
rm -rf "$L" "$DB"
python3 -c '
import sys
line = b"[%06d/999999] cc -O2 -c src/some/long/path/file.c -o build/file.o\n"
sys.stdout.buffer.write(b"".join(line % i for i in range(600000)))' >"$T/huge.txt"
want=$(sha256sum <"$T/huge.txt" | cut -d' ' -f1)
# The reader at the pipeline's end notes the instant of EOF (buildtel's exit)
# and what is there then: a check from this shell afterwards can come after
# the compression has ended, on a loaded machine.
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id huge -- cat "$T/huge.txt" | python3 -c '
import os, sys, time
while sys.stdin.buffer.read(1 << 20):
    pass
print("%.6f %d %d" % (time.time(), os.path.exists(sys.argv[1]), os.path.exists(sys.argv[1] + ".gz")))' \
        "$L/build-huge.log" >"$T/eof"
expect_eq "a huge log: the build's status" "${PIPESTATUS[0]}" 0
read -r eof plain_then gz_then <"$T/eof"
expect_eq "at the pipeline's end the plain log is there, no .gz yet" "$plain_then $gz_then" "1 0"
expect_eq "the row names the .gz it becomes" "$(q "SELECT build_log FROM runs WHERE run_id = 'huge'")" \
        "$L/build-huge.log.gz"
for _ in $(seq 300); do test -e "$L/build-huge.log.gz.tmp" || break; sleep 0.2; done
check "then the .gz is there" test -f "$L/build-huge.log.gz"
gz_done=$(stat -c %.Y "$L/build-huge.log.gz" 2>/dev/null || echo 0)
check "the compression outlived the run: the .gz written after the pipeline ended ($gz_done > $eof)" \
        awk -v a="$gz_done" -v b="$eof" 'BEGIN{exit !(a > b)}'
check "and no .gz.tmp" test ! -e "$L/build-huge.log.gz.tmp"
check "and the plain log is gone" test ! -e "$L/build-huge.log"
expect_eq "gunzip gives the log back" "$(gzip -dc "$L/build-huge.log.gz" | sha256sum | cut -d' ' -f1)" "$want"
"$BUILDTEL" top --once --db "$DB" huge >"$T/top2.txt"
check "top's detail reads the .gz" grep -q '599999/999999' "$T/top2.txt"
rm -f "$T/huge.txt"

# Output that does not compress: its first MiB says so, nothing starts.
head -c $((33 << 20)) /dev/urandom >"$T/rand"
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id rnd -- cat "$T/rand" >/dev/null
check "random output stays plain" test -f "$L/build-rnd.log"
check "random output: no .gz" test ! -e "$L/build-rnd.log.gz"
check "random output: no .gz.tmp" test ! -e "$L/build-rnd.log.gz.tmp"
expect_eq "random output: the row names the plain log" \
        "$(q "SELECT build_log FROM runs WHERE run_id = 'rnd'")" "$L/build-rnd.log"
rm -f "$T/rand"
# A job with no run left loses its textfile (issue 39, item 7): node_exporter
# would serve its last figures for ever. Another job's stays, and a job's
# file while a run of it is kept.
TF="$T/tf"
for j in gone:1 gone:2 stays:1; do
        "$BUILDTEL" run --quiet --db "$T/tf.db" --log-dir "$L" --textfile-dir "$TF" --job "${j%%:*}" \
                --run-id "tf-${j/:/-}" --keep-runs 0 --keep-size 0 -- true
        sleep 1.1 # start times a second apart: the oldest go first
done
GF=$(ls "$TF" | grep '^buildtel-gone')
SF=$(ls "$TF" | grep '^buildtel-stays')
check "each job has its textfile ($GF, $SF)" test -n "$GF" -a -n "$SF"
"$BUILDTEL" prune --db "$T/tf.db" --log-dir "$L" --textfile-dir "$TF" --keep 2 >"$T/tf1.out"
check "one run of job gone left: its textfile stays" test -f "$TF/$GF"
"$BUILDTEL" prune --db "$T/tf.db" --log-dir "$L" --textfile-dir "$TF" --keep 1 --dry-run >"$T/tf2.out"
check "--dry-run names the textfile" grep -q "would remove $TF/$GF (job gone has no run left)" "$T/tf2.out"
check "--dry-run leaves it" test -f "$TF/$GF"
"$BUILDTEL" prune --db "$T/tf.db" --log-dir "$L" --textfile-dir "$TF" --keep 1 >"$T/tf3.out"
cat "$T/tf3.out"
check "the job's last run pruned: its textfile is gone" test ! -e "$TF/$GF"
check "prune says so" grep -q "removed $TF/$GF (job gone has no run left)" "$T/tf3.out"
check "the other job's textfile stays" test -f "$TF/$SF"
# With no collector's directory and none given, no textfile at all, and not
# a word. This machine's collector directories (node_exporter is a test
# package) are hidden under empty tmpfs mounts in a mount namespace of its own.
mkdir "$T/nt"
hide=
for d in /var/lib/node_exporter /var/lib/prometheus; do
        [ -d "$d" ] && hide="$hide mount -t tmpfs none $d &&"
done
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
        (cd "$T/nt" && env -u BUILDTEL_TEXTFILE_DIR unshare -m --propagation private sh -c \
                "$hide \"\$0\" run --db '$T/nt.db' --log-dir '$T/nt/l' --run-id nt -- true" "$BUILDTEL") 2>"$T/nt.err"
        expect_eq "no textfile directory: the run's status" "$?" 0
        expect_eq "no textfile directory: nothing said" "$(grep -c textfile "$T/nt.err")" 0
        check "no textfile directory: the run is recorded" test -s "$T/nt/l/resources-nt.csv"
        expect_eq "no textfile directory: no .prom anywhere under the run" "$(find "$T/nt" -name '*.prom' | wc -l)" 0
else
        echo "# not root: the collector's directories cannot be hidden; the no-directory case is not checked"
fi

finish
