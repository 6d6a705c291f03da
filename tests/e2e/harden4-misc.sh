#!/usr/bin/env bash
# Hardening, round 4 (issue 33), the rest: what the other harden4 scripts'
# areas leave. One case per run: harden4-misc.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4-misc.sh CASE}
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is not installed"; exit 77; }
record() { # record RUN-ID [SECONDS]: a run into $T/h.db, files in $T/l
        "$BUILDTEL" run --db "$T/h.db" --log-dir "$T/l" --run-id "$1" --interval 0.05 -- \
                sh -c "echo hello; sleep ${2:-0.4}" >/dev/null 2>"$T/rec.err" || { cat "$T/rec.err"; bad "record $1"; }
}
# no_sanitizer FILE: no ASan/UBSan report in it
no_sanitizer() { ! grep -q -E 'runtime error|AddressSanitizer|UndefinedBehaviorSanitizer' "$1"; }

# L: top reads each sample's figures in its column's range: ±1e308 and
# the infinities (SQLite stores no NaN: a NaN reads back NULL) in a row
# neither reach a NaN-to-int cast (UBSan) nor print 300 digits.
case_topnum() {
        local v q f
        record r1
        record r2
        # r2 shows its stage changes (no log), r1 its log
        sqlite3 "$T/h.db" "UPDATE runs SET build_log = NULL WHERE run_id = 'r2'"
        for v in 1e308 -1e308 9e999 -9e999 -1.5e300; do
                q="UPDATE samples SET elapsed_s = $v, cpu_pct = $v, mem_used_mb = $v, mem_avail_mb = $v,
                   cg_mem_mb = $v, cg_psi_mem_some_s = $v WHERE run IN
                   (SELECT id FROM runs WHERE run_id IN ('r1', 'r2')) AND seq IN"
                sqlite3 "$T/h.db" "$q (SELECT max(seq) FROM samples s WHERE s.run = samples.run);" ||
                        bad "update to $v"
                "$BUILDTEL" top --once --db "$T/h.db" >"$T/list.txt" 2>"$T/list.err"
                expect_eq "$v last: top --once exits 0" "$?" 0
                "$BUILDTEL" top --once r1 --db "$T/h.db" >"$T/d1.txt" 2>"$T/d1.err"
                expect_eq "$v last: top --once r1 exits 0" "$?" 0
                "$BUILDTEL" top --once r2 --db "$T/h.db" >"$T/d2.txt" 2>"$T/d2.err"
                expect_eq "$v last: top --once r2 exits 0" "$?" 0
                # and in every other row, the sparkline's scale
                sqlite3 "$T/h.db" "$q (SELECT seq FROM samples WHERE seq % 2 = 0);"
                "$BUILDTEL" top --once --db "$T/h.db" >>"$T/list.txt" 2>>"$T/list.err"
                expect_eq "$v in half the rows: top --once exits 0" "$?" 0
                "$BUILDTEL" top --once r2 --db "$T/h.db" >>"$T/d2.txt" 2>>"$T/d2.err"
                for f in list d1 d2; do
                        check "$v: $f: no sanitizer report" no_sanitizer "$T/$f.err"
                        check "$v: $f: no number of 13 digits or more" \
                                sh -c "! grep -E '[0-9]{13}' '$T/$f.txt'"
                        check "$v: $f: no inf or nan" sh -c "! grep -i -w -E 'inf|nan|infG|nanG' '$T/$f.txt'"
                done
                expect_eq "$v: both runs listed, twice" "$(grep -c '^  sh -c ech' "$T/list.txt")" 4
                check "$v: r2's stage lines" grep -q '^RECENT' "$T/d2.txt"
                check "$v: r1's log" grep -q 'hello' "$T/d1.txt"
        done
}

# L: prune removes a run whose buildtel was SIGKILLed (incomplete), as its
# help says, and such a run's --trace-file leaves no hidden temp file.
case_killed() {
        local bt child i st
        mkdir -p "$T/l"
        # the killed run's cgroup stays until a later run: in cgroups of our
        # own, other buildtels on the machine do not see it
        trap 'unisolate; cleanup' EXIT
        isolate || echo "# no private cgroups: the killed run's is beside the others'"
        "$BUILDTEL" run --db "$T/h.db" --log-dir "$T/l" --run-id dead --interval 0.05 --trace-file -- \
                sh -c 'echo $$ >"$1"; exec sleep 60' sh "$T/child.pid" >/dev/null 2>"$T/dead.err" &
        bt=$!
        for i in $(seq 200); do
                [ -s "$T/child.pid" ] &&
                        [ "$(sqlite3 "$T/h.db" "SELECT count(*) FROM samples" 2>/dev/null)" -gt 3 ] 2>/dev/null &&
                        break
                sleep 0.05
        done
        child=$(cat "$T/child.pid" 2>/dev/null)
        check "the run is under way" test -n "$child"
        kill -9 "$bt"
        wait "$bt" 2>/dev/null
        [ -n "$child" ] && kill -9 "$child" 2>/dev/null
        ls -A "$T/l" >"$T/ls-killed.txt"
        echo "# left by the killed run: $(tr '\n' ' ' <"$T/ls-killed.txt")"
        "$BUILDTEL" status --db "$T/h.db" >"$T/status.txt" 2>&1
        check "status: incomplete" grep -q incomplete "$T/status.txt"
        record fin 0.1
        "$BUILDTEL" run --db "$T/h.db" --log-dir "$T/l" --run-id traced --interval 0.05 --trace-file -- \
                sh -c 'sleep 0.3' >/dev/null 2>"$T/traced.err"
        expect_eq "a traced run: exit 0" "$?" 0
        check "its trace parses" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/l/trace-traced.json"
        expect_eq "its trace is 0600" "$(stat -c %a "$T/l/trace-traced.json")" 600
        "$BUILDTEL" prune --db "$T/h.db" --log-dir "$T/l" --keep 2 >"$T/prune.txt" 2>&1
        st=$?
        cat "$T/prune.txt"
        expect_eq "prune: exit 0" "$st" 0
        check "prune says it removed the killed run" grep -q '^removed dead ' "$T/prune.txt"
        expect_eq "its row is gone" "$(sqlite3 "$T/h.db" "SELECT count(*) FROM runs WHERE run_id = 'dead'")" 0
        expect_eq "its samples are gone" "$(sqlite3 "$T/h.db" "SELECT count(*) FROM samples WHERE run NOT IN (SELECT id FROM runs)")" 0
        check "its files are gone" test -z "$(ls -A "$T/l" | grep -e '-dead[._]')"
        check "no hidden trace temp file is left" test -z "$(ls -A "$T/l" | grep '^\.trace-')"
        check "the other runs stay" test -s "$T/l/trace-traced.json"
        expect_eq "two rows stay" "$(sqlite3 "$T/h.db" "SELECT count(*) FROM runs")" 2
}

# L: watch --stage-log-dir in a directory another user owns follows no
# symlink, no hard link to our file, only that user's own files: the
# root-only secret never reaches the run's files.
case_stagelink() {
        need_root "a directory and a symlink owned by nobody"
        local d="$T/sl" wp
        mkdir -p "$d" "$T/l"
        printf '#5 [app SECRETSTAGE 2/4] RUN make\nSECRET-root-only\n' >"$T/secret"
        chmod 600 "$T/secret"
        # nobody's own log, older than the links
        printf '#3 [app visible 1/4] RUN ok\n[1/9] Building C object visible.o\n' >"$d/a.log"
        touch -d '-1 hour' "$d/a.log"
        chown -R nobody "$d"
        ln -s "$T/secret" "$d/b.log"
        chown -h nobody "$d/b.log"
        # what protected_hardlinks=0 would let nobody make
        ln "$T/secret" "$d/c.log" 2>/dev/null
        mkfifo "$d/d.log" && chown nobody "$d/d.log"
        sleep 1.5 &
        wp=$!
        timeout -k 5 20 "$BUILDTEL" watch --pid $wp --db "$T/h.db" --log-dir "$T/l" --run-id sl --interval 0.1 \
                --stage-log-dir "$d" >"$T/out.txt" 2>"$T/err.txt"
        expect_eq "watch: exit 0" "$?" 0
        check "the secret is in no file of the run" sh -c "! grep -r -l SECRET '$T/l' '$T/out.txt' '$T/err.txt'"
        check "nor in the history" sh -c "! grep -a -l SECRET '$T'/h.db*"
        check "nobody's own log is followed" grep -q 'app/visible' "$T/l/resources-sl.csv"
        check "the secret stays root's, 0600" test "$(stat -c %U:%a "$T/secret")" = root:600
}

# L: prune prints the database's build_log directory clean: no ESC, BEL
# or C1 byte reaches the terminal ('?' each).
case_prunetext() {
        local dir
        record r1 0.1
        record r2 0.1
        dir=$(printf '%s/l/x\033]0;owned\007\033[2J\302\233y' "$T")
        sqlite3 "$T/h.db" "UPDATE runs SET build_log = '$dir/build-r1.log' WHERE run_id = 'r1'"
        "$BUILDTEL" prune --dry-run --db "$T/h.db" --log-dir "$T/l" --keep 1 >"$T/dry.txt" 2>&1
        expect_eq "prune --dry-run: exit 0" "$?" 0
        "$BUILDTEL" prune --db "$T/h.db" --log-dir "$T/l" --keep 1 >"$T/prune.txt" 2>&1
        expect_eq "prune: exit 0" "$?" 0
        check "dry run names r1" grep -q '^would remove r1 ' "$T/dry.txt"
        check "prune names r1" grep -q '^removed r1 ' "$T/prune.txt"
        check "the directory is shown cleaned" grep -qF "$T/l/x?]0;owned??[2J?y)" "$T/prune.txt"
        local f
        for f in "$T/dry.txt" "$T/prune.txt"; do
                check "no ESC in ${f##*/}" nobytes "$f" -- '\033'
                check "no BEL in ${f##*/}" nobytes "$f" -- '\007'
                check "no C1 CSI in ${f##*/}" nobytes "$f" -- '\302\233'
        done
}

"case_$case"
finish
