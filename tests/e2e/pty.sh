#!/usr/bin/env bash
# A build whose output goes to a terminal gets one (issue 25: under
# buildtel `docker buildx build --progress=tty` failed, "provided file is not
# a console"): when stdout and stderr are one terminal, the build writes to
# a pty of its own that buildtel reads, passes on and parses; the bytes are
# the build's (no CR added), its size follows ours, and --no-pty, --live or
# output to a pipe keep the pipes. The outer terminal is script(1)'s.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { echo "script(1) is missing (bsdutils)"; exit 77; }
L="$T/logs"
# in_tty CMD: CMD in a terminal of 22 rows, 77 columns; its output in $T/tty.out
in_tty() {
        script -qec "stty cols 77 rows 22; $1" /dev/null >"$T/tty.out" 2>&1 </dev/null
}
bt="$BUILDTEL run --quiet --no-db --no-report --log-dir $L"

in_tty "$bt --run-id t1 -- sh -c 'test -t 1 && test -t 2 && echo TTY12; stty size; printf \"a\\nb\\r\\n\"; echo err >&2; exit 3'"
check "in a terminal: stdout and stderr are one" grep -q "^TTY12" "$T/tty.out"
check "in a terminal: its size is ours (22 77)" grep -q "^22 77" "$T/tty.out"
check "the log has the build's own bytes, no CR added" python3 -c '
import sys; d = open(sys.argv[1], "rb").read()
sys.exit(0 if d == b"TTY12\n22 77\na\nb\r\nerr\n" else print(repr(d)) or 1)' "$L/build-t1.log"
in_tty "$bt --run-id t2 -- sh -c 'exit 3'; echo exit=\$?"
check "in a terminal: the build's exit status (3)" grep -q "^exit=3" "$T/tty.out"

in_tty "$bt --run-id t3 --no-pty -- sh -c 'test -t 1 || echo PIPE1; test -t 2 || echo PIPE2'"
check "--no-pty: pipes" grep -q "^PIPE1" "$T/tty.out"
in_tty "$bt --run-id t4 -- sh -c 'test -t 1 || echo PIPE1' | cat"
check "stdout a pipe: pipes" grep -q "^PIPE1" "$T/tty.out"
# (--live draws only where TERM is not dumb: the bare-root check runs with
# TERM=dumb, where --live does nothing and the pty is used)
in_tty "TERM=xterm $bt --run-id t5 --live -- sh -c 'test -t 1 || echo PIPE1'"
check "--live: pipes (the line owns the terminal)" grep -q "PIPE1" "$T/tty.out"

# The outer terminal resized while the build runs: its pty follows within a
# tick, with SIGWINCH (the build's trap reads its own stdout's size, the
# pty's: stdin is the outer terminal, resized at once).
in_tty "$bt --run-id t6 --interval 0.1 -- sh -c 'trap \"sleep 0.5; stty size <&1; exit 0\" WINCH; stty -F /dev/tty rows 30 cols 90; sleep 5 & wait'"
check "resized: the build's terminal follows, with SIGWINCH (30 90)" grep -q "^30 90" "$T/tty.out"
finish
