#!/usr/bin/env bash
# The build's exit status comes back exactly; buildtel's own failures use
# 126/127 as shells do.
. "$(dirname "$0")/lib.sh"
L="$T/logs"

for code in 0 1 2 126 127 255; do
        "$BUILDTEL" run --quiet --log-dir "$L" -- sh -c "exit $code"
        expect_eq "exit $code passes through" "$?" "$code"
done
for sig in TERM KILL; do
        "$BUILDTEL" run --quiet --log-dir "$L" -- sh -c "kill -$sig \$\$"
        got=$?
        want=$((128 + $(kill -l $sig)))
        expect_eq "death by SIG$sig gives $want" "$got" "$want"
done
"$BUILDTEL" run --quiet --log-dir "$L" -- "$CRASH" 2>/dev/null
expect_eq "a real SIGSEGV gives 139" "$?" 139

"$BUILDTEL" run --quiet --log-dir "$L" -- /nonexistent/command 2>"$T/err"
expect_eq "command not found gives 127" "$?" 127
check "not-found message names the command" grep -q "cannot run '/nonexistent/command'" "$T/err"
"$BUILDTEL" run --quiet --log-dir "$L" -- no-such-command-buildtel 2>/dev/null
expect_eq "command not found on PATH gives 127" "$?" 127
printf 'echo hi\n' >"$T/noexec"; chmod 644 "$T/noexec"
"$BUILDTEL" run --quiet --log-dir "$L" -- "$T/noexec" 2>/dev/null
expect_eq "not executable gives 126" "$?" 126
# A command that cannot start is not a run: one line, the shell's status,
# and nothing made: no history row, no file in the log or textfile dir.
for cmd in no-such-command-buildtel /nonexistent/command "$T/noexec" "$T"; do
        rm -rf "$T/nr" && mkdir -p "$T/nr/tf"
        "$BUILDTEL" run --db "$T/nr/h.db" --log-dir "$T/nr/logs" --textfile-dir "$T/nr/tf" \
                -- "$cmd" -j2 >"$T/nr/out" 2>"$T/nr/err"
        got=$?
        case "$cmd" in no-such*|/nonexistent*) want=127 ;; *) want=126 ;; esac
        expect_eq "never started ($cmd): $want" "$got" "$want"
        expect_eq "never started ($cmd): one line on stderr" "$(wc -l <"$T/nr/err")" 1
        check "never started ($cmd): the line names it" grep -q "^buildtel: cannot run '$cmd': " "$T/nr/err"
        expect_eq "never started ($cmd): nothing on stdout" "$(wc -c <"$T/nr/out")" 0
        check "never started ($cmd): no history database" test ! -e "$T/nr/h.db"
        check "never started ($cmd): no log dir" test ! -e "$T/nr/logs"
        expect_eq "never started ($cmd): no textfile" "$(ls -A "$T/nr/tf")" ""
done
# with a history already there: still no row for it
"$BUILDTEL" run --quiet --db "$T/h2.db" --log-dir "$T/l2" -- true
"$BUILDTEL" run --quiet --db "$T/h2.db" --log-dir "$T/l2" -- mkae-buildtel -j2 2>/dev/null
expect_eq "never started: the history keeps only the real run" \
        "$(sqlite3 "$T/h2.db" 'SELECT count(*) FROM runs')" 1
"$BUILDTEL" status --db "$T/h2.db" >"$T/st" 2>&1
check "never started: not in status" sh -c "! grep -q mkae '$T/st'"

"$BUILDTEL" run --interval 0.01 -- true 2>/dev/null
expect_eq "a bad option gives 125" "$?" 125

BUILDTEL=0 "$BUILDTEL" run --log-dir "$T/off" -- sh -c 'exit 7'
expect_eq "BUILDTEL=0 keeps the status" "$?" 7
check "BUILDTEL=0 writes no files" test ! -e "$T/off"
"$BUILDTEL" run --off --log-dir "$T/off2" -- sh -c 'exit 9'
expect_eq "--off keeps the status" "$?" 9
check "--off writes no files" test ! -e "$T/off2"
finish
