#!/usr/bin/env bash
# Hardening, round 4 (issue 33): a --log-dir that other users can write.
# Another user (nobody) plants FIFOs, files and symlinks under the run's
# file names; buildtel never blocks on them, never writes into them, never
# follows them. One case per run: harden4-dir.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4-dir.sh CASE}
need_root "files planted by another user"
OTHER=$(id -u nobody 2>/dev/null || echo 65534)
command -v setpriv >/dev/null || { echo "needs setpriv (util-linux)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "needs /usr/bin/python3 (the other user cannot run root's)"; exit 77; }
AS_OTHER=(setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups --)
as_other() { "${AS_OTHER[@]}" "$@"; } # in the background: "${AS_OTHER[@]}", so $! is its pid
# The fallback of a refused directory: $TMPDIR/buildtel-UID/logs.
export TMPDIR="$T/tmp"
FB="$TMPDIR/buildtel-$(id -u)/logs"
chmod 711 "$T" # the other user reaches the shared directories in it
shared() { mkdir -p "$1" && chmod "$2" "$1"; } # shared DIR MODE
# run DIR ID [SCRIPT]: a run bounded in time (a hang is status 124 or 137);
# its status in $rc, its stderr in $T/err
run() {
        timeout -k 3 20 "$BUILDTEL" run --no-db --log-dir "$1" --run-id "$2" --interval 0.05 \
                --trace-file -- sh -c "${3:-echo secret-output; sleep 0.3}" >/dev/null 2>"$T/err"
        rc=$?
        [ "$rc" -eq 0 ] || cat "$T/err"
}
# said_report: the report the run names on stderr is whole, out of $1
said_report() {
        local rep
        rep=$(sed -n 's/^buildtel: report: //p' "$T/err")
        check "the report is where stderr says ('$rep')" sh -c 'test -f "$1" && grep -q "</html>" "$1"' sh "$rep" &&
                check "and not in '$1'" test "${rep#"$1"/}" = "$rep"
}

# A FIFO of another user's under each streamed or final name, a reader
# behind it: nothing reaches the reader, the run ends, the files are
# written elsewhere and stderr says where.
case_fifo() {
        local d="$T/shared" k f rd n=0
        shared "$d" 1777
        for k in report-ID.html resources-ID.csv build-ID.log trace-ID.json; do
                n=$((n + 1))
                f="$d/${k/ID/f$n}"
                as_other mkfifo "$f"
                "${AS_OTHER[@]}" timeout 25 cat "$f" >"$T/got$n" &
                rd=$!
                run "$d" "f$n"
                expect_eq "$k: the run ends with the build's status" "$rc" 0
                check "$k: still the other user's FIFO" test -p "$f" -a "$(stat -c %u "$f")" = "$OTHER"
                timeout 5 sh -c ': >"$1"' sh "$f" # ends the reader
                wait "$rd"
                expect_eq "$k: its reader got nothing" "$(wc -c <"$T/got$n")" 0
                check "$k: stderr names it" grep -q "'${k/ID/f$n}'" "$T/err"
                said_report "$d"
        done
        # A reader that never reads, its pipe shrunk to a page: the old
        # report write blocked for good (SIGTERM blocked for the signalfd).
        f="$d/report-h.html"
        as_other mkfifo "$f"
        "${AS_OTHER[@]}" /usr/bin/python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
time.sleep(30)' "$f" >/dev/null 2>&1 &
        rd=$!
        run "$d" h
        expect_eq "a reader that never reads: no hang" "$rc" 0
        kill "$rd" 2>/dev/null
        wait "$rd" 2>/dev/null
        # No reader at all: the old CSV open blocked for good.
        as_other mkfifo "$d/resources-n.csv"
        run "$d" n
        expect_eq "no reader: no hang" "$rc" 0
        said_report "$d"
}

# The same FIFOs planted while the build runs (the names were free at the
# start): the report and the trace are not written into them, and the run
# says so.
case_fifolate() {
        local d="$T/shared" f g rd
        shared "$d" 1777
        f="$d/report-late.html" g="$d/trace-late.json"
        (sleep 0.5; as_other mkfifo "$f" "$g"; as_other timeout 25 cat "$f" "$g" >"$T/got") &
        rd=$!
        run "$d" late 'sleep 1.5'
        expect_eq "the run ends with the build's status" "$rc" 0
        check "still FIFOs" test -p "$f" -a -p "$g"
        timeout 5 sh -c ': >"$1"; : >"$2"' sh "$f" "$g"
        wait "$rd"
        expect_eq "their reader got nothing" "$(wc -c <"$T/got")" 0
        check "the run says the report's name is taken" grep -q "^buildtel: note: report: .*not ours" "$T/err"
        check "and the trace's" grep -q "cannot write the trace '$g': .*not ours" "$T/err"
        check "and names no report" sh -c "! grep -q '^buildtel: report: ' '$T/err'"
        check "the other files are there" test -s "$d/resources-late.csv" -a -s "$d/resources-late.summary.txt"
}

# `report CSV` and `export --trace CSV` name their files themselves
# (report-<id>.html beside the CSV, trace-<id>.json here): FIFOs of another
# user's there are refused in a line, not written through, no hang.
case_replay() {
        local d="$T/shared" rd
        shared "$d" 1777
        run "$d" r
        rm -f "$d/report-r.html" "$d/trace-r.json"
        as_other mkfifo "$d/report-r.html" "$d/trace-r.json"
        "${AS_OTHER[@]}" timeout 25 cat "$d/report-r.html" "$d/trace-r.json" >"$T/got" &
        rd=$!
        (cd "$d" && timeout -k 3 20 "$BUILDTEL" report resources-r.csv 2>"$T/err1"
                echo "report $?" >"$T/st"
                timeout -k 3 20 "$BUILDTEL" export --trace --no-db resources-r.csv 2>"$T/err2"
                echo "trace $?" >>"$T/st")
        expect_eq "both refuse, no hang" "$(tr '\n' ' ' <"$T/st")" "report 1 trace 1 "
        check "report: said in one line" grep -qx "buildtel report: cannot write 'report-r.html': .*not ours.*" "$T/err1"
        check "trace: said in one line" grep -qx "buildtel export: cannot write the trace './trace-r.json': .*not ours.*" "$T/err2"
        timeout 5 sh -c ': >"$1"; : >"$2"' sh "$d/report-r.html" "$d/trace-r.json"
        wait "$rd"
        expect_eq "their reader got nothing" "$(wc -c <"$T/got")" 0
        check "still FIFOs" test -p "$d/report-r.html" -a -p "$d/trace-r.json"
}

# Regular files of another user's under the names: not written into, not
# replaced (the rename of a whole file as much as the truncate of a stream).
case_planted() {
        local d="$T/shared" k f n=0
        shared "$d" 1777
        for k in build-ID.log resources-ID.csv resources-ID.summary.txt report-ID.html; do
                n=$((n + 1))
                f="$d/${k/ID/p$n}"
                as_other sh -c 'echo planted >"$1" && chmod 666 "$1"' sh "$f"
                run "$d" "p$n"
                expect_eq "$k: the build's status" "$rc" 0
                expect_eq "$k: its content unchanged" "$(cat "$f")" planted
                expect_eq "$k: still the other user's" "$(stat -c %u "$f")" "$OTHER"
                check "$k: stderr names it" grep -q "'${k/ID/p$n}'" "$T/err"
                check "$k: the build log is in the fallback" grep -q secret-output "$FB/build-p$n.log"
                said_report "$d"
        done
}

# A symlink under the names to a root-only file: the file is untouched,
# the link left as it is.
case_symlink() {
        local d="$T/shared" k f n=0
        shared "$d" 1777
        echo precious >"$T/secret"
        chmod 600 "$T/secret"
        for k in build-ID.log resources-ID.csv resources-ID.run.json report-ID.html trace-ID.json; do
                n=$((n + 1))
                f="$d/${k/ID/s$n}"
                as_other ln -s "$T/secret" "$f"
                run "$d" "s$n"
                expect_eq "$k: the build's status" "$rc" 0
                expect_eq "$k: the root-only file unchanged" "$(cat "$T/secret")" precious
                expect_eq "$k: the link is left" "$(stat -c %u "$f") $(readlink "$f")" "$OTHER $T/secret"
                check "$k: stderr names it" grep -q "'${k/ID/s$n}'" "$T/err"
                said_report "$d"
        done
}

# Writable by others and not sticky: refused in one line, and the run falls
# back as it does from an unwritable directory.
case_open() {
        local m d
        for m in 0777 0770; do
                d="$T/open$m"
                shared "$d" "$m"
                chgrp "$(id -gn nobody)" "$d" # a group not the user's own
                run "$d" "o$m"
                expect_eq "$m: the build's status" "$rc" 0
                expect_eq "$m: one line says it" \
                        "$(grep -c "^buildtel: note: log directory '$d' is writable by others and not sticky; writing to '$FB' instead$" "$T/err")" 1
                check "$m: nothing written in it" test -z "$(ls -A "$d")"
                check "$m: the CSV is in the fallback" test -s "$FB/resources-o$m.csv"
                said_report "$d"
        done
}

# A group-writable directory of ours whose group is our user private group
# (gid = uid: umask 002 on RHEL and Fedora) is not shared: no fallback.
case_upg() {
        local d="$T/upg"
        [ "$(id -u)" = "$(id -g)" ] || { echo "needs gid = uid (a user private group)"; exit 77; }
        shared "$d" 0775
        run "$d" u
        expect_eq "the build's status" "$rc" 0
        check "no fallback" sh -c "! grep -q 'writing to\|not sticky' '$T/err'"
        check "the CSV is in it" test -s "$d/resources-u.csv"
        # the same directory with another group is shared: refused
        chgrp "$(id -gn nobody)" "$d"
        run "$d" u2
        check "another group's: refused" grep -q "is writable by others and not sticky" "$T/err"
}

# A sticky shared directory where every name is ours: as before, and a
# rerun of the id replaces our own files, said.
case_sticky() {
        local d="$T/sticky" f bad=0
        shared "$d" 1777
        run "$d" s
        expect_eq "the build's status" "$rc" 0
        check "no fallback" sh -c "! grep -q 'writing to\|not sticky' '$T/err'"
        expect_eq "the report is there" "$(sed -n 's/^buildtel: report: //p' "$T/err")" "$d/report-s.html"
        for f in build-s.log resources-s.csv resources-s.run.json resources-s.summary.txt \
                resources-s.summary.json report-s.html trace-s.json; do
                [ "$(stat -c %U:%a "$d/$f" 2>&1)" = root:600 ] || { bad=1; echo "not root:600: $f"; }
        done
        expect_eq "every file there, ours, 0600" "$bad" 0
        run "$d" s 'echo second-run; sleep 0.3'
        expect_eq "a rerun: the build's status" "$rc" 0
        check "a rerun: said" grep -q "run id 's' exists in '$d': its files are rewritten" "$T/err"
        check "a rerun: no fallback" sh -c "! grep -q 'writing to' '$T/err'"
        expect_eq "a rerun: the log is the new one" "$(cat "$d/build-s.log")" second-run
        check "a rerun: the CSV is the new one" test "$(wc -l <"$d/resources-s.csv")" -ge 2
        check "no temp file left" test -z "$(ls -A "$d" | grep '^\.')"
}

"case_$case"
finish
