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
"$BUILDTEL" run --interval 0.01 -- true 2>/dev/null
expect_eq "a bad option gives 125" "$?" 125

BUILDTEL=0 "$BUILDTEL" run --log-dir "$T/off" -- sh -c 'exit 7'
expect_eq "BUILDTEL=0 keeps the status" "$?" 7
check "BUILDTEL=0 writes no files" test ! -e "$T/off"
"$BUILDTEL" run --off --log-dir "$T/off2" -- sh -c 'exit 9'
expect_eq "--off keeps the status" "$?" 9
check "--off writes no files" test ! -e "$T/off2"
finish
