#!/usr/bin/env bash
# Hardening, round 4 (issue 33): a full history disk never touches the
# build. One case per run: harden4.sh CASE. (The other areas of the issue:
# harden4-tty.sh, harden4-dir.sh, harden4-runc.sh, harden4-misc.sh.)
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4.sh CASE}
need_root() { [ "$(id -u)" = 0 ] || { echo "needs root: $1"; exit 77; }; }

# The build: 2 s of long lines (each sample's context is one), then exit 3.
build() {
        sh -c 'i=0; while [ $i -lt 200 ]; do i=$((i + 1));
                printf "line %05d %0200d\n" $i 0; sleep 0.01; done; exit 3'
}
export -f build 2>/dev/null

# High: with the history's file system nearly full (from a few KiB to more
# than buildtel's reserve free at the start), buildtel's own inserts fill
# it. At every size: the build's own status, its output whole, no broken
# pipe, the run's files written, and the row (if any) never 'incomplete'.
# Before the fix, a reserve that could not be had left a closed fd number
# in the sink; the build's output pipe took that number and the give-up
# closed it: the build died of SIGPIPE (141).
case_diskfull() {
        need_root "mount a tmpfs"
        local m="$T/m" sz st rows state out=0 full=0 sized=0
        mkdir -p "$m"
        build >"$T/want" 2>/dev/null
        for sz in 152 184 200 232 320 384 512; do
                mount -t tmpfs -o size=${sz}k tmpfs "$m" || { echo "cannot mount a tmpfs"; exit 77; }
                "$BUILDTEL" run --db "$m/h.db" --log-dir "$T/l" --run-id "s$sz" --interval 0.05 -- \
                        bash -c build >"$T/out" 2>"$T/err"
                st=$?
                expect_eq "${sz} KiB: the build's own status" "$st" 3 || cat "$T/err"
                check "${sz} KiB: its output whole" cmp -s "$T/out" "$T/want"
                check "${sz} KiB: no broken pipe" sh -c "! grep -q 'Broken pipe' '$T/err'"
                check "${sz} KiB: the CSV written" test -s "$T/l/resources-s$sz.csv"
                check "${sz} KiB: the summary written" test -s "$T/l/resources-s$sz.summary.json"
                grep -q "No space left on device; this run is not in the history" "$T/err" && full=$((full + 1))
                rows=$(sqlite3 "$m/h.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
                state=$("$BUILDTEL" status --db "$m/h.db" --json 2>/dev/null |
                        python3 -c 'import json,sys; r = json.load(sys.stdin); print(r[0]["result"] if r else "")' 2>/dev/null)
                if [ "${rows:-0}" -gt 0 ]; then
                        # the row went in: it is complete or says the disk filled
                        case $state in
                        "exit 3") out=$((out + 1)) ;;
                        "not recorded: disk full")
                                sized=$((sized + 1))
                                check "${sz} KiB: the warning names what the row reads" \
                                        grep -q "(its row reads as not recorded: disk full)" "$T/err" ;;
                        *) bad "${sz} KiB: the row reads '$state'" ;;
                        esac
                fi
                echo "# ${sz} KiB: rows ${rows:-0}, '$state'"
                umount "$m"
        done
        # the sizes cover every path: no room at the start, filled mid-run
        check "some sizes had no room for the history at all" test "$full" -gt "$sized"
        check "some rows were written, then their disk filled" test "$sized" -gt 0
        echo "# complete rows: $out, filled mid-run: $sized, refused or cut: $full"
}

"case_$case" || true
finish
