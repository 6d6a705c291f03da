#!/usr/bin/env bash
# The run history database: runs and samples recorded (cross-checked with
# the sqlite3 CLI), read back by status/inspect/layers/summarize with their
# --json parsed, a SIGKILLed run marked incomplete, two runs at once, and
# the faults: a lock held past the busy timeout, an unwritable directory, a
# full disk (a tmpfs this test mounts: full from the start, and filled by
# the build after its run row was written), a garbage file; the builder and
# revision a buildx build reports.
. "$(dirname "$0")/lib.sh"
for tool in sqlite3 python3 mount; do
        command -v $tool >/dev/null || { echo "needs $tool"; exit 77; }
done
DB="$T/h.db"
L="$T/logs"
J="python3 $HERE/csvcheck.py json-get"
q() { sqlite3 "$DB" "$1"; }

# -- two known runs, and the database agrees with their CSVs
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id a --interval 0.1 -- sh -c 'sleep 0.4; exit 3'
expect_eq "run with --db keeps the build's status" "$?" 3
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id b --interval 0.1 -- sh -c 'echo "[1/2] Building C object x.c.o"; sleep 0.3' >/dev/null
expect_eq "run a: finished, exit 3 (sqlite3)" "$(q "select state, exit_code from runs where run_id = 'a'")" "finished|3"
expect_eq "WAL mode (sqlite3)" "$(q 'pragma journal_mode')" "wal"
expect_eq "schema version (sqlite3)" "$(q 'pragma user_version')" "15"
rows=$($CSVCHECK stat "$L/resources-a.csv" epoch count)
expect_eq "run a: every CSV row is a sample row (sqlite3)" \
        "$(q "select count(*) from samples s join runs r on r.id = s.run where r.run_id = 'a'")" "$rows"
expect_eq "run a: samples count in the run row" "$(q "select samples from runs where run_id = 'a'")" "$rows"
# the database keeps the figure as read (exact), the CSV rounds it to whole MiB
expect_eq "run a: first mem_used_mb is the CSV's before its rounding (sqlite3)" \
        "$(q "select abs(mem_used_mb - $($CSVCHECK stat "$L/resources-a.csv" mem_used_mb first)) <= 0.5 from samples s join runs r on r.id = s.run where r.run_id = 'a' order by seq limit 1")" 1
expect_eq "run b: the context column is stored" \
        "$(q "select context from samples s join runs r on r.id = s.run where r.run_id = 'b' order by seq desc limit 1")" \
        "[1/2] Building C object x.c.o"
expect_eq "new CSV columns become SQL columns (cg_mode, sqlite3)" \
        "$(q "select count(*) from pragma_table_xinfo('samples') where name = 'cg_mode'")" 1
expect_eq "run a: the cgroup mode is the CSV's" "$(q "select cgroup_mode from runs where run_id = 'a'")" \
        "$($CSVCHECK stat "$L/resources-a.csv" cg_mode last-str)"
expect_eq "iso is derived from epoch" \
        "$(q "select iso = strftime('%Y-%m-%dT%H:%M:%fZ', epoch, 'unixepoch') from samples limit 1")" "1"

# status
"$BUILDTEL" status --db "$DB" --json >"$T/st.json"
expect_eq "status --json" "$?" 0
expect_eq "status: newest first" "$($J "$T/st.json" 0.id)" "b"
expect_eq "status: a's result" "$($J "$T/st.json" 1.result)" "exit 3"
expect_eq "status: b's result" "$($J "$T/st.json" 0.result)" "ok"
expect_eq "status: b's builder" "$($J "$T/st.json" 0.builder)" "sh"
expect_eq "status: a's peak memory = the summary's" "$(printf '%.0f' "$($J "$T/st.json" 1.mem_used_peak_mb)")" \
        "$(printf '%.0f' "$($J "$L/resources-a.summary.json" memory.peak_used_mb.value)")"
"$BUILDTEL" status --db "$DB" >"$T/st.txt"
check "status text: a header and two runs" test "$(wc -l <"$T/st.txt")" -eq 3
check "status text names run a with its result" grep -Eq '^a +.* exit 3 ' "$T/st.txt"
"$BUILDTEL" status --db "$DB" --limit 1 --json >"$T/st1.json"
expect_eq "status --limit 1" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/st1.json")" 1
"$BUILDTEL" status --db "$DB" --since 2099-01-01 --json >"$T/st2.json"
expect_eq "status --since the future: none" "$(cat "$T/st2.json")" "[]"
"$BUILDTEL" status --db "$DB" --since 1h --json >"$T/st3.json"
expect_eq "status --since 1h: both" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/st3.json")" 2
"$BUILDTEL" status --db "$DB" --since yesterday 2>"$T/e"
expect_eq "status --since junk: status 2" "$?" 2

# summarize RUN: the same summary as the run wrote, from the database
"$BUILDTEL" summarize --db "$DB" --json a >"$T/sa.json"
expect_eq "summarize RUN --json" "$?" 0
check "summarize RUN --json equals the run's summary.json" $CSVCHECK json-equal "$T/sa.json" "$L/resources-a.summary.json"
"$BUILDTEL" summarize --db "$DB" a >"$T/sa.txt"
check "summarize RUN text equals the run's summary.txt" cmp -s "$T/sa.txt" "$L/resources-a.summary.txt"
"$BUILDTEL" summarize --db "$DB" nosuchrun 2>"$T/e"
expect_eq "summarize of an unknown run: status 1" "$?" 1
check "summarize of an unknown run: one line" test "$(wc -l <"$T/e")" -eq 1

# inspect, with the git revision of the working directory
mkdir -p "$T/repo/.git/refs/heads" "$T/repo/src"
echo "ref: refs/heads/topic" >"$T/repo/.git/HEAD"
echo "0123456789abcdef0123456789abcdef01234567" >"$T/repo/.git/refs/heads/topic"
(cd "$T/repo/src" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id g --interval 0.1 -- make --version >/dev/null)
"$BUILDTEL" inspect --db "$DB" --json >"$T/in.json"
expect_eq "inspect --json (latest)" "$?" 0
expect_eq "inspect: the latest run" "$($J "$T/in.json" id)" "g"
expect_eq "inspect: revision from .git" "$($J "$T/in.json" vcs_rev)" "0123456789abcdef0123456789abcdef01234567"
expect_eq "inspect: ref" "$($J "$T/in.json" vcs_ref)" "refs/heads/topic"
expect_eq "inspect: builder" "$($J "$T/in.json" builder)" "make"
expect_eq "inspect: samples = CSV rows" "$($J "$T/in.json" samples)" "$($CSVCHECK stat "$L/resources-g.csv" epoch count)"
"$BUILDTEL" inspect --db "$DB" a >"$T/in.txt"
check "inspect text: result" grep -q '^result  *exit 3$' "$T/in.txt"
check "inspect text: peak memory line" grep -q 'memory used' "$T/in.txt"

# layers: targets of known builds (as the build-metrics model stores them)
q "insert into targets (run, name, steps, cached, node) select id, 'app', 10, 9, 'node-a' from runs where run_id = 'a';
   insert into targets (run, name, steps, cached, node) select id, 'app', 10, 2, 'node-b' from runs where run_id = 'b';
   insert into targets (run, name, steps, cached, node) select id, 'web', 4, 4, 'node-a' from runs where run_id = 'b';"
"$BUILDTEL" layers --db "$DB" --json >"$T/ly.json"
expect_eq "layers --json" "$?" 0
expect_eq "layers: app from its latest build" "$($J "$T/ly.json" 0.run)" "b"
expect_eq "layers: app ratio" "$($J "$T/ly.json" 0.ratio)" "0.2"
expect_eq "layers: app node changed" "$($J "$T/ly.json" 0.node_changed)" "True"
expect_eq "layers: app previous node" "$($J "$T/ly.json" 0.previous_node)" "node-a"
expect_eq "layers: web did not change node" "$($J "$T/ly.json" 1.node_changed)" "False"
"$BUILDTEL" layers --db "$DB" >"$T/ly.txt"
check "layers text flags the node change" grep -q 'node changed (was node-a)' "$T/ly.txt"
"$BUILDTEL" inspect --db "$DB" --json b >"$T/ib.json"
expect_eq "inspect: steps summed over targets" "$($J "$T/ib.json" steps)" 14
expect_eq "inspect: cached steps" "$($J "$T/ib.json" cached_steps)" 6
# the shape of the --json outputs: keys and their order are an interface
keys() { python3 -c 'import json,sys; v = json.load(open(sys.argv[1])); [v := v[int(k)] if isinstance(v, list) else v[k] for k in sys.argv[2:]]; print(",".join(v))' "$@"; }
run_keys="db_id,id,kind,argv,cwd,host,builder,start_epoch,end_epoch,duration_s,state,exit_code,term_signal,pid,ncpu,interval,cgroup_mode,estimates,vcs_rev,vcs_ref,samples,samples_dropped,mem_total_mb,mem_used_peak_mb,mem_used_peak_elapsed_s,mem_used_peak_stage,mem_used_peak_context,mem_avail_min_mb,swap_used_peak_mb,disk_avail_min_gb,load1_peak,cpu_pct_peak,cpu_pct_avg,compilers_peak,near_oom_samples,low_disk_samples,build_mem_peak_mb,build_anon_peak_mb,unit_peak_name,unit_peak_tool,unit_peak_mb,jobs_reading,nodes,result,job,failure"
expect_eq "status --json: the keys of a run" "$(keys "$T/st.json" 0)" "$run_keys"
expect_eq "inspect --json: the keys of a run" "$(keys "$T/ib.json")" "$run_keys,steps,cached_steps,targets,compiler_cache"
expect_eq "inspect --json: the keys of a target" "$(keys "$T/ib.json" targets 0)" \
        "name,duration_s,steps,cached,cached_ratio,success,cc_hits,cc_misses,node,ref"
expect_eq "layers --json: the keys of a target" "$(keys "$T/ly.json" 0)" \
        "target,run,start_epoch,steps,cached,ratio,node,previous_node,previous_run,node_changed,duration_s,success"

# the BuildKit builder the log named, not the front end in argv; and the
# revision of the build context from buildx history when the working
# directory is no git checkout (.git wins when there is one). No BuildKit
# daemon runs here: a stand-in `docker` prints what `docker buildx history
# inspect --format json REF` prints (the fetch itself is unit-tested).
mkdir -p "$T/nogit" "$T/fakebin"
cat >"$T/fakebin/docker" <<'DOCKER'
#!/bin/sh
[ "$*" = "buildx history inspect --format json x3tig9yrbzg2bp0ahn840m9hs" ] || exit 1
echo '{"Name":"app","Ref":"x3tig9yrbzg2bp0ahn840m9hs","VCSRevision":"6f1c8e3a9b","Status":"completed","Duration":62233706155,"NumCompletedSteps":3,"NumTotalSteps":3,"NumCachedSteps":1}'
DOCKER
chmod +x "$T/fakebin/docker"
cat >"$T/bake.sh" <<'BAKE'
echo '#0 building with "ci-builder" instance using docker-container driver'
echo '#1 [app 1/2] FROM docker.io/library/debian:12'
echo '#1 DONE 0.1s'
echo '#2 [app 2/2] RUN make'
echo '#2 DONE 0.2s'
echo '{"app": {"buildx.build.ref": "ci-builder/ci-builder0/x3tig9yrbzg2bp0ahn840m9hs"}}' >"$2"
BAKE
(cd "$T/nogit" && PATH="$T/fakebin:$PATH" "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id bx \
        --interval 0.1 -- sh "$T/bake.sh" --metadata-file "$T/meta.json" >/dev/null)
"$BUILDTEL" inspect --db "$DB" --json bx >"$T/bx.json"
expect_eq "buildx: the builder the log named" "$($J "$T/bx.json" builder)" "ci-builder"
expect_eq "buildx: the revision from buildx history" "$($J "$T/bx.json" vcs_rev)" "6f1c8e3a9b"
expect_eq "buildx: no ref from buildx history" "$($J "$T/bx.json" vcs_ref)" "None"
(cd "$T/repo/src" && PATH="$T/fakebin:$PATH" "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id bxg \
        --interval 0.1 -- sh "$T/bake.sh" --metadata-file "$T/meta.json" >/dev/null)
"$BUILDTEL" inspect --db "$DB" --json bxg >"$T/bxg.json"
expect_eq "buildx in a git checkout: .git's revision" "$($J "$T/bxg.json" vcs_rev)" \
        "0123456789abcdef0123456789abcdef01234567"
expect_eq "buildx in a git checkout: .git's ref" "$($J "$T/bxg.json" vcs_ref)" "refs/heads/topic"
expect_eq "buildx in a git checkout: the builder the log named" "$($J "$T/bxg.json" builder)" "ci-builder"
expect_eq "the build's pid is stored (the row predates the build)" \
        "$(q "select pid from runs where run_id = 'bx'")" "$($J "$L/resources-bx.run.json" pid)"

# -- a SIGKILLed buildtel: the run stays, as incomplete
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id k --interval 0.05 -- sleep 31 &
bt=$!
sleep 2.6 # past the first batch (rows go in every 2 s)
child=$(ps -o pid= --ppid $bt)
kill -9 $bt
wait $bt 2>/dev/null
[ -n "$child" ] && kill $child 2>/dev/null
"$BUILDTEL" status --db "$DB" --json >"$T/sk.json"
expect_eq "SIGKILLed run is incomplete" "$($J "$T/sk.json" 0.result)" "incomplete"
check "the killed run kept its first batch of samples" test "$(q "select count(*) from samples s join runs r on r.id = s.run where r.run_id = 'k'")" -ge 20

# -- two runs at once on one database, both complete
for i in 1 2; do
        "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id c$i --interval 0.05 -- sleep 1.5 &
done
wait
for i in 1 2; do
        expect_eq "concurrent run c$i finished" "$(q "select state from runs where run_id = 'c$i'")" "finished"
        expect_eq "concurrent run c$i: all samples" \
                "$(q "select count(*) from samples s join runs r on r.id = s.run where r.run_id = 'c$i'")" \
                "$($CSVCHECK stat "$L/resources-c$i.csv" epoch count)"
done

# -- faults: the build runs, its files are written, one warning
fault() { # fault NAME DB: a run against DB
        "$BUILDTEL" run --db "$2" --log-dir "$L" --run-id "$1" --interval 0.1 -- sh -c 'echo out; sleep 0.3; exit 5' >"$T/$1.out" 2>"$T/$1.err"
        expect_eq "$1: the build's status" "$?" 5
        expect_eq "$1: output intact" "$(cat "$T/$1.out")" "out"
        check "$1: CSV written" test -s "$L/resources-$1.csv"
        check "$1: summary written" test -s "$L/resources-$1.summary.json"
        expect_eq "$1: exactly one warning" "$(grep -c 'warning' "$T/$1.err")" 1
        check "$1: the warning names the database" grep -q "history database '$2'" "$T/$1.err"
}
# hold_lock SQL SECONDS: another process runs SQL on $DB and keeps its
# transaction open for SECONDS; returns once it holds the lock ($locker)
hold_lock() {
        rm -f "$DB.locked"
        python3 - "$DB" "$1" "$2" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.executescript(sys.argv[2])
open(sys.argv[1] + ".locked", "w").close()
time.sleep(float(sys.argv[3]))
c.execute("ROLLBACK")
PY
        locker=$!
        for _ in $(seq 100); do [ -e "$DB.locked" ] && break; sleep 0.05; done
}
# a lock held by another process past the busy timeout
hold_lock "BEGIN EXCLUSIVE" 8
fault locked "$DB"
check "locked: says locked" grep -q "locked" "$T/locked.err"
kill $locker 2>/dev/null; wait $locker 2>/dev/null
# ...while the readers go on: status opens and reads a file a run is
# writing to (WAL; an up-to-date file needs no write lock to open)
hold_lock "BEGIN IMMEDIATE; UPDATE runs SET samples = samples" 6
"$BUILDTEL" status --db "$DB" --json >"$T/sl.json" 2>"$T/sl.err"
expect_eq "status while a run holds the write lock: reads" "$?/$(cat "$T/sl.err")" "0/"
check "status while a run holds the write lock: the runs" test "$($J "$T/sl.json" 0.id)" != ""
kill $locker 2>/dev/null; wait $locker 2>/dev/null
# an unwritable place (root ignores permission bits: a path under a file)
touch "$T/file"
fault unwritable "$T/file/h.db"
# a garbage file
head -c 4096 /dev/urandom >"$T/garbage.db"
fault garbage "$T/garbage.db"
check "garbage: says it is not a history database" grep -q "not a buildtel history database" "$T/garbage.err"
"$BUILDTEL" status --db "$T/garbage.db" 2>"$T/gs.err"
expect_eq "status on a garbage file: status 1" "$?" 1
expect_eq "status on a garbage file: one line naming the file" \
        "$(grep -c "history database '$T/garbage.db': not a buildtel history database" "$T/gs.err")/$(wc -l <"$T/gs.err")" "1/1"
# a full disk: a small tmpfs of our own, filled up
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
        head -c 1M /dev/zero >"$T/full/fill" 2>/dev/null
        fault full "$T/full/h.db"
        check "full: says no space" grep -q "No space left" "$T/full.err"
        umount "$T/full"
        # ...and one that fills up mid-run, after the run row was written: the
        # build itself fills it once the row is there (the recorder inserts
        # the row before the build starts; the loop only guards that).
        mount -t tmpfs -o size=1m tmpfs "$T/full"
        cat >"$T/fill.sh" <<'FILL'
until [ "$(sqlite3 "$1" "select count(*) from runs where run_id = 'fullmid'" 2>/dev/null)" = 1 ]; do sleep 0.05; done
head -c 4M /dev/zero >"${1%/*}/fill" 2>/dev/null
echo out
sleep 0.3
exit 5
FILL
        check "mid-run full: the log dir is on another filesystem" test "$(stat -c %d "$L")" != "$(stat -c %d "$T/full")"
        "$BUILDTEL" run --db "$T/full/h.db" --log-dir "$L" --run-id fullmid --interval 0.05 \
                -- sh "$T/fill.sh" "$T/full/h.db" >"$T/fm.out" 2>"$T/fm.err"
        expect_eq "mid-run full: the build's status" "$?" 5
        expect_eq "mid-run full: output intact" "$(cat "$T/fm.out")" "out"
        expect_eq "mid-run full: exactly one warning, no space" \
                "$(grep -c 'warning' "$T/fm.err")/$(grep -c "history database '$T/full/h.db': No space left" "$T/fm.err")" "1/1"
        check "mid-run full: CSV written, with the samples after the disk filled" \
                test "$($CSVCHECK stat "$L/resources-fullmid.csv" epoch count)" -ge 6
        expect_eq "mid-run full: summary written, with the build's status" \
                "$($J "$L/resources-fullmid.summary.json" run.exit_code)" 5
        rm -f "$T/full/fill"
        # (issue 20 L6: not 'incomplete', which says buildtel was killed)
        expect_eq "mid-run full: the row written before the disk filled stays, as not recorded: disk full" \
                "$("$BUILDTEL" status --db "$T/full/h.db" --json | python3 -c 'import json,sys; r = json.load(sys.stdin)[0]; print(r["id"], r["result"])')" \
                "fullmid not recorded: disk full"
        umount "$T/full"
else
        echo "needs to mount a tmpfs (root)"; exit 77
fi
"$BUILDTEL" status --db "$T/none.db" 2>"$T/e"
expect_eq "status without a database: status 1" "$?" 1
check "status without a database: says so" grep -q "does not exist" "$T/e"

# --no-db records nothing; the default is under XDG_STATE_HOME
XDG_STATE_HOME="$T/state" "$BUILDTEL" run --quiet --no-db --log-dir "$L" -- true
check "--no-db: no database" test ! -e "$T/state/buildtel/history.db"
XDG_STATE_HOME="$T/state" "$BUILDTEL" run --quiet --log-dir "$L" --run-id x -- true
check "default database under XDG_STATE_HOME" test -s "$T/state/buildtel/history.db"
XDG_STATE_HOME="$T/state" "$BUILDTEL" status --json >"$T/x.json"
expect_eq "status reads the default database" "$($J "$T/x.json" 0.id)" "x"
# watch records too
sleep 0.6 &
XDG_STATE_HOME="$T/state" "$BUILDTEL" watch --quiet --pid $! --log-dir "$L" --run-id w --interval 0.1
expect_eq "watch is recorded" "$(sqlite3 "$T/state/buildtel/history.db" "select kind, state from runs where run_id = 'w'")" "watch|finished"
finish
