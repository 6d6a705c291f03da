#!/usr/bin/env bash
# Hardening, round 3 (issue 20): output paths that are not regular files,
# hostile history rows and run ids, trace modes, option errors, a database
# that fills. One case per run: harden3.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden3.sh CASE}
other_uid() { id -u nobody 2>/dev/null || echo 65534; }

# A recorded run r1 (files in $T/l, a row in $T/h.db).
record() {
        "$BUILDTEL" run --db "$T/h.db" --log-dir "$T/l" --run-id "${1:-r1}" --interval 0.05 -- \
                sh -c 'echo hello; sleep 0.2' >/dev/null 2>"$T/rec.err" || { cat "$T/rec.err"; bad "record"; }
}

# High: -o PATH never replaces a device, a FIFO, or what a symlink names.
# Each writer: report -o, export --trace -o.
writers() { # writers PATH: run every writer on PATH; sets w_err
        "$BUILDTEL" report --db "$T/h.db" -o "$1" r1 2>"$T/w1.err"
        echo "report $?" >"$T/w.status"
        "$BUILDTEL" export --trace --db "$T/h.db" -o "$1" r1 2>"$T/w2.err"
        echo "trace $?" >>"$T/w.status"
}
case_outpath() {
        need_root "mknod"
        local d="$T/dev" p
        record
        mkdir -p "$d"
        mknod "$d/null" c 1 3 || { echo "cannot mknod"; exit 77; }
        writers "$d/null"
        expect_eq "a char device stays one" "$(stat -c %F "$d/null")" "character special file"
        expect_eq "both wrote through it" "$(cat "$T/w.status" | tr '\n' ' ')" "report 0 trace 0 "
        check "no temp file left beside it" test -z "$(ls -A "$d" | grep -v '^null$')"

        # A symlink to a device: the device is written, the link stays.
        ln -s "$d/null" "$d/link"
        writers "$d/link"
        check "the symlink stays a symlink" test -L "$d/link"
        expect_eq "to the same device" "$(stat -L -c %F "$d/link")" "character special file"
        expect_eq "both wrote through the link" "$(cat "$T/w.status" | tr '\n' ' ')" "report 0 trace 0 "

        # A FIFO with a reader: it gets the bytes, and stays a FIFO.
        mkfifo "$d/fifo"
        cat "$d/fifo" >"$T/fifo.out" &
        local rd=$!
        "$BUILDTEL" report --db "$T/h.db" -o "$d/fifo" r1 2>"$T/f.err"
        expect_eq "report into a FIFO" "$?" 0
        wait "$rd"
        check "the reader got the HTML report" grep -q '</html>' "$T/fifo.out"
        cat "$d/fifo" >"$T/fifo2.out" &
        rd=$!
        "$BUILDTEL" export --trace --db "$T/h.db" -o "$d/fifo" r1 2>"$T/f2.err"
        expect_eq "trace into a FIFO" "$?" 0
        wait "$rd"
        check "the reader got the trace" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/fifo2.out"
        expect_eq "still a FIFO" "$(stat -c %F "$d/fifo")" "fifo"
        # With no reader: a clear one-line error, not a hang, not a file.
        timeout 10 "$BUILDTEL" report --db "$T/h.db" -o "$d/fifo" r1 2>"$T/f3.err"
        expect_eq "no reader: an error status" "$?" 1
        check "no reader: said in one line" grep -q "cannot write '$d/fifo': a FIFO with no reader" "$T/f3.err"
        expect_eq "no reader: one line" "$(wc -l <"$T/f3.err")" 1
        expect_eq "no reader: still a FIFO" "$(stat -c %F "$d/fifo")" "fifo"

        # A socket or a block device: refused, left as it is.
        python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
        "$BUILDTEL" report --db "$T/h.db" -o "$d/sock" r1 2>"$T/s.err"
        expect_eq "a socket: refused" "$?" 1
        check "a socket: said" grep -q "not a regular file, a FIFO or a character device" "$T/s.err"
        expect_eq "a socket: left" "$(stat -c %F "$d/sock")" "socket"
        if mknod "$d/blk" b 7 250 2>/dev/null; then
                "$BUILDTEL" export --trace --db "$T/h.db" -o "$d/blk" r1 2>"$T/b.err"
                expect_eq "a block device: refused" "$?" 1
                expect_eq "a block device: left" "$(stat -c %F "$d/blk")" "block special file"
        fi
        # A directory: refused.
        mkdir "$d/dir"
        "$BUILDTEL" report --db "$T/h.db" -o "$d/dir" r1 2>"$T/dd.err"
        expect_eq "a directory: refused" "$?" 1
        # A regular file and a symlink to one: replaced whole, as before.
        echo old >"$d/file"
        ln -s "$d/file" "$d/flink"
        writers "$d/file"
        check "a regular file: replaced by the trace" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/file"
        expect_eq "a regular file: 0600" "$(stat -c %a "$d/file")" 600
        # -o - is stdout.
        "$BUILDTEL" report --db "$T/h.db" -o - r1 >"$T/stdout.html" 2>/dev/null
        check "report -o - writes stdout" grep -q '</html>' "$T/stdout.html"
        "$BUILDTEL" export --trace --db "$T/h.db" -o - r1 >"$T/stdout.json" 2>/dev/null
        check "trace -o - writes stdout" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/stdout.json"

        # run --trace-file and the run's report, where trace-ID.json and
        # report-ID.html are devices; --prom-file a FIFO with no reader.
        mkdir -p "$T/l2" "$T/tf"
        mknod "$T/l2/trace-t2.json" c 1 3
        mknod "$T/l2/report-t2.html" c 1 3
        mkfifo "$T/tf/t.prom"
        "$BUILDTEL" run --no-db --log-dir "$T/l2" --run-id t2 --trace-file --textfile-dir "$T/tf" \
                --prom-file t.prom -- true >/dev/null 2>"$T/t2.err"
        expect_eq "run --trace-file: the build's status" "$?" 0
        expect_eq "trace-t2.json stays a device" "$(stat -c %F "$T/l2/trace-t2.json")" "character special file"
        expect_eq "report-t2.html stays a device" "$(stat -c %F "$T/l2/report-t2.html")" "character special file"
        expect_eq "t.prom stays a FIFO" "$(stat -c %F "$T/tf/t.prom")" "fifo"
}

# M1: top shows only the run's own log: a database row naming a FIFO, a
# file of another user's, a symlink, another file shows nothing (and never
# hangs top).
case_toplog() {
        command -v tmux >/dev/null || { echo "tmux is not installed"; exit 77; }
        need_root "a file owned by another uid"
        local SOCK="buildtel-h3-$$-$RANDOM" log="$T/l/build-r1.log"
        tm() { tmux -L "$SOCK" "$@"; }
        trap 'tmux -L "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
        export LANG=C.UTF-8 LC_ALL=C.UTF-8
        record
        echo "SECRET-shadow-line" >"$T/shadow"
        chmod 600 "$T/shadow"
        chown "$(other_uid)" "$T/shadow"
        echo "SECRET-mine" >"$T/mine.txt"
        mkdir -p "$T/other" "$T/fifo" "$T/link"
        cp "$T/shadow" "$T/other/build-r1.log"
        chown "$(other_uid)" "$T/other/build-r1.log"
        mkfifo "$T/fifo/build-r1.log"
        ln -s "$T/mine.txt" "$T/link/build-r1.log"
        local nshow=0
        show() { # show PATH: top's detail of r1 with build_log = PATH, into $T/pane.txt
                local t i
                nshow=$((nshow + 1))
                t="s$nshow"
                sqlite3 "$T/h.db" "UPDATE runs SET build_log = '$1' WHERE run_id = 'r1'"
                tm -f /dev/null new-session -d -x 100 -y 30 -s "$t" \
                        "$BUILDTEL top --db '$T/h.db'; echo TOP-EXIT=\$?; sleep 30"
                for i in $(seq 100); do # the list, then Enter: the detail
                        tm capture-pane -p -t "$t" | grep -q COMMAND && break
                        sleep 0.1
                done
                tm send-keys -t "$t" Enter
                for i in $(seq 100); do
                        tm capture-pane -p -t "$t" | grep -q '^run: ' && break
                        sleep 0.1
                done
                sleep 0.3
                tm capture-pane -p -t "$t" >"$T/pane.txt"
                tm send-keys -t "$t" q
                for i in $(seq 100); do
                        tm capture-pane -p -t "$t" | grep -q TOP-EXIT=0 && break
                        sleep 0.1
                done
                tm capture-pane -p -t "$t" | grep -q TOP-EXIT=0 || return 1
                tm kill-session -t "$t"
        }
        check "the run's own log: top quits" show "$log"
        check "the run's own log is shown" grep -q hello "$T/pane.txt"
        check "a FIFO: top quits (no hang)" show "$T/fifo/build-r1.log"
        check "a FIFO: no LOG" sh -c "! grep -q '^ *LOG' '$T/pane.txt'"
        check "another user's file: top quits" show "$T/other/build-r1.log"
        check "another user's file: not shown" sh -c "! grep -q SECRET '$T/pane.txt'"
        check "a symlink: top quits" show "$T/link/build-r1.log"
        check "a symlink: not shown" sh -c "! grep -q SECRET '$T/pane.txt'"
        check "another name: top quits" show "$T/mine.txt"
        check "another name: not shown" sh -c "! grep -q SECRET '$T/pane.txt'"
        check "/dev/zero: top quits" show /dev/zero
}

# M3: run ids from run.json and the database name files in their directory
# only, and are printed clean.
case_runid() {
        record r1
        # the directories a climbing id goes through, so that it would land
        mkdir -p "$T/escape" "$T/art/a/b/report-x" "$T/art/a/b/trace-x"
        # run.json: an id that climbs out, with an escape sequence
        cp "$T/l/resources-r1.csv" "$T/art/a/b/resources-x.csv"
        python3 - "$T/l/resources-r1.run.json" "$T/art/a/b/resources-x.run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["run_id"] = "x/../../../../escape/pwn\u001b]0;owned\u0007"
json.dump(j, open(sys.argv[2], "w"))
PY
        (cd "$T/art/a/b" && "$BUILDTEL" report resources-x.csv >/dev/null 2>"$T/r.err")
        expect_eq "report of the file" "$?" 0
        (cd "$T/art/a/b" && "$BUILDTEL" export --trace --no-db resources-x.csv >/dev/null 2>"$T/t.err")
        expect_eq "trace of the file" "$?" 0
        check "nothing written outside" test -z "$(ls -A "$T/escape")"
        check "nothing written above" test -z "$(find "$T/art" -maxdepth 2 -type f)"
        check "the report is in the file's directory" sh -c "ls '$T/art/a/b' | grep -q '^report-x_.*\\.html$'"
        check "the trace is in the cwd" sh -c "ls '$T/art/a/b' | grep -q '^trace-x_.*\\.json$'"
        check "no escape printed" nobytes "$T/r.err" "$T/t.err" -- '\033'
        # the database: a row whose id climbs out
        sqlite3 "$T/h.db" "UPDATE runs SET run_id = '../../../escape/db'||char(27)||'[2J' WHERE run_id = 'r1'"
        mkdir -p "$T/cwd/x/report-.." "$T/cwd/x/trace-.."
        (cd "$T/cwd/x" && "$BUILDTEL" report --db "$T/h.db" >/dev/null 2>"$T/r2.err")
        expect_eq "report of the row" "$?" 0
        (cd "$T/cwd/x" && "$BUILDTEL" export --trace --db "$T/h.db" >/dev/null 2>"$T/t2.err")
        expect_eq "trace of the row" "$?" 0
        check "nothing written outside (db)" test -z "$(ls -A "$T/escape")"
        check "both in the cwd" test "$(find "$T/cwd/x" -maxdepth 1 -type f | wc -l)" = 2
        check "no escape printed (db)" nobytes "$T/r2.err" "$T/t2.err" -- '\033'
        "$BUILDTEL" status --db "$T/h.db" >"$T/hist.txt" 2>&1
        check "status prints it clean" nobytes "$T/hist.txt" -- '\033'
}

# L1: trace files are 0600 whatever the umask, like the run's other files.
case_tracemode() {
        record r1
        (umask 022 && "$BUILDTEL" export --trace --db "$T/h.db" -o "$T/t.json" r1 2>/dev/null)
        expect_eq "export --trace -o" "$(stat -c %a "$T/t.json")" 600
        (umask 022 && "$BUILDTEL" run --no-db --log-dir "$T/l3" --run-id t3 --trace-file -- true 2>/dev/null)
        expect_eq "run --trace-file" "$(stat -c %a "$T/l3/trace-t3.json")" 600
        local f bad=0
        for f in "$T"/l3/*; do [ "$(stat -c %a "$f")" = 600 ] || { bad=$((bad + 1)); echo "$f"; }; done
        expect_eq "every file of the run 0600" "$bad" 0
}

# L8 (and the clang UBSan suite): a run with no slices, traced.
case_emptytrace() {
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id e --trace-file -- true >/dev/null 2>"$T/err"
        expect_eq "run --trace-file -- true" "$?" 0
        check "no sanitizer report" sh -c "! grep -q 'runtime error' '$T/err'"
        check "the trace parses" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/l/trace-e.json"
}

# One error for a bad option value, not two.
case_interval() {
        "$BUILDTEL" run --interval 0 -- true 2>"$T/err"
        expect_eq "status: buildtel's own usage error" "$?" 125
        check "the error says why" grep -q -- "--interval takes seconds" "$T/err"
        check "no 'option not handled'" sh -c "! grep -q 'option not handled' '$T/err'"
        "$BUILDTEL" run --run-id ../x -- true 2>"$T/err2"
        check "--run-id: no 'option not handled'" sh -c "! grep -q 'option not handled' '$T/err2'"
}

# L4: the job summary makes a log line's link or image inert.
case_mdlinks() {
        local s="$T/summary.md"
        : >"$s"
        GITHUB_STEP_SUMMARY="$s" "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id md --interval 0.05 \
                --stage '[x](http://e) ![y](http://e/i.png)' -- sh -c 'sleep 0.3' >/dev/null 2>&1
        check "the summary was written" test -s "$s"
        check "the stage is in it" grep -qF 'x' "$s"
        # the table rows (the summary's text is in a code fence: inert)
        grep '^|' "$s" >"$T/rows.md"
        check "the stage is in the table" grep -qF 'http://e/i.png' "$T/rows.md"
        check "no live link" sh -c "! grep -qF '[x](' '$T/rows.md'"
        check "no live image" sh -c "! grep -qF '![y](' '$T/rows.md'"
        check "escaped" grep -qF '\[x\]\(http://e\) \!\[y\]' "$T/rows.md"
}

# L6: the database fills mid-run (SQLITE_FULL): the start row says so
# (not recorded: disk full), not 'incomplete' (what a killed buildtel leaves).
case_dbfull() {
        need_root "mount a tmpfs"
        local m="$T/full" st
        mkdir -p "$m"
        mount -t tmpfs -o size=1m tmpfs "$m" || { echo "cannot mount a tmpfs"; exit 77; }
        # the row goes in with the first sample; then the build fills the disk
        "$BUILDTEL" run --db "$m/h.db" --log-dir "$T/l" --run-id full --interval 0.05 -- \
                sh -c 'sleep 0.5; head -c 2m /dev/zero >"$1/fill" 2>/dev/null; sleep 3; exit 3' sh "$m" \
                >/dev/null 2>"$T/err"
        st=$?
        rm -f "$m/fill"
        expect_eq "the build's status" "$st" 3
        check "the failure is said" grep -q "database or disk is full\|No space left" "$T/err"
        check "and what the row reads as" grep -q "reads as not recorded: disk full" "$T/err"
        expect_eq "the row's state" "$(sqlite3 "$m/h.db" "SELECT state FROM runs WHERE run_id = 'full'")" disk-full
        "$BUILDTEL" status --db "$m/h.db" >"$T/hist.txt" 2>&1
        check "status shows it" grep -q "not recorded: disk full" "$T/hist.txt"
        check "not incomplete" sh -c "! grep -q incomplete '$T/hist.txt'"
        umount "$m"
}

# M2: C1 controls (U+0080-U+009F as UTF-8), bidi overrides and bad bytes
# from the build never reach the terminal in the summary, summarize,
# status or top --once: '?' each.
case_c1text() {
        local st
        st=$(printf 'st\302\233 2J\342\200\256x\377')
        "$BUILDTEL" run --db "$T/h.db" --log-dir "$T/l" --run-id c1 --interval 0.05 --stage "$st" -- \
                sh -c 'sleep 0.3' >/dev/null 2>"$T/err"
        "$BUILDTEL" summarize "$T/l/resources-c1.csv" >"$T/sum.txt" 2>&1
        "$BUILDTEL" status --db "$T/h.db" >>"$T/sum.txt" 2>&1
        "$BUILDTEL" top --once --db "$T/h.db" >>"$T/sum.txt" 2>&1
        check "the stage is shown, cleaned" grep -qF 'stage st? 2J?x?' "$T/err"
        local f
        for f in "$T/err" "$T/sum.txt"; do
                check "no C1 CSI in ${f##*/}" nobytes "$f" -- '\302\233'
                check "no RLO in ${f##*/}" nobytes "$f" -- '\342\200\256'
                check "no bad byte in ${f##*/}" nobytes "$f" -- '\377'
        done
}

# L3: --ninja-log read in chunks, never whole. A 280 MB append (past the
# old 256 MiB cap) gives every edge of the run at a small peak RSS; then a
# later small ninja run appended, export --trace --ninja-log reads the
# whole 280 MB log for that run's one edge, at a small peak RSS too.
# peak_rss OUT CMD...: CMD's exit status and peak RSS (KiB) into OUT.
peak_rss() {
        python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write("%d %d\n" % (ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
PY
}
case_ninjarss() {
        local log="$T/.ninja_log" n=300000 size rss st t0 t1
        printf '# ninja log v5\n0\t1\t0\tseed.o\tabc\n' >"$log"
        # 300,000 edges of ~930 bytes (long output names), end times rising
        cat >"$T/gen.sh" <<'SH'
awk -v n="$2" 'BEGIN { p = sprintf("%0900d", 0)
        for (i = 1; i <= n; i++) printf "%d\t%d\t0\tobj/%s%d.o\t%x\n", i, i + 5 + i % 7, p, i, i }' >>"$1"
SH
        t0=$(date +%s.%N)
        peak_rss "$T/rss" "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id big --ninja-log "$log" -- \
                sh "$T/gen.sh" "$log" "$n" 2>"$T/err"
        t1=$(date +%s.%N)
        size=$(stat -c %s "$log")
        read -r rss st <"$T/rss"
        echo "run: log $size bytes; buildtel peak RSS ${rss} KiB; $(awk "BEGIN { print $t1 - $t0 }") s"
        expect_eq "run status" "$st" 0
        check "the append is past 256 MiB" test "$size" -gt $((256 << 20))
        check "every edge of the run counted" grep -q ".ninja_log: $n edges this run" "$T/err"
        check "peak RSS under 64 MiB (was the size of the append)" test "$rss" -lt 65536
        grep -- "--ninja-log" "$T/err" && bad "a note about the log"

        # a later ninja run (its end times start over), one edge
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id small --ninja-log "$log" -- \
                sh -c 'printf "2\t7\t0\tlate.o\tfe\n" >>"$1"' sh "$log" >/dev/null 2>"$T/err2"
        expect_eq "second run status" "$?" 0
        check "the second run's one edge" grep -q ".ninja_log: 1 edges this run" "$T/err2"
        t0=$(date +%s.%N)
        peak_rss "$T/rss2" "$BUILDTEL" export --trace --no-db --log-dir "$T/l" --ninja-log "$log" \
                -o "$T/small.json" small 2>"$T/exp.err"
        t1=$(date +%s.%N)
        read -r rss st <"$T/rss2"
        echo "export --trace: peak RSS ${rss} KiB; $(awk "BEGIN { print $t1 - $t0 }") s"
        cat "$T/exp.err"
        expect_eq "export status" "$st" 0
        check "the late run's edge in the trace" grep -q 'late\.o' "$T/small.json"
        check "no edge of the big run in it" test -z "$(grep -o 'obj/0000' "$T/small.json" | head -1)"
        check "export peak RSS under 64 MiB (was the log's size)" test "$rss" -lt 65536
        rm -f "$log"
}

"case_$case"
finish
