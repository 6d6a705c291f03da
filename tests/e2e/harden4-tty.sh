#!/usr/bin/env bash
# Hardening, round 4 (issue 33): Ctrl-C, Ctrl-\ and Ctrl-Z under a real
# terminal (a tmux pane running an interactive bash), as a person types them.
# A build that dies of SIGINT (SIGQUIT) ends buildtel by the same signal once
# its files are written, so the shell stops a list, a loop or a script; a
# status of 130 by itself stays a status. After Ctrl-Z and `bg` the shell
# keeps its terminal; after `fg` the build gets it back. One case per run:
# harden4-tty.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4-tty.sh CASE}
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
SOCK="buildtel-h4tty-$$-$RANDOM"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
# What runs in the pane ends on the SIGHUP of kill-server: let the
# buildtels among it finish their files before $T goes. On meson's timeout
# (SIGTERM) too: bash runs no EXIT trap when a signal kills it.
stop_tmux() {
        local i
        tmux -L "$SOCK" kill-server 2>/dev/null
        rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
        for i in $(seq 50); do pgrep -f "$T" >/dev/null || break; sleep 0.1; done
}
trap 'stop_tmux; cleanup' EXIT
trap 'exit 143' TERM
trap 'exit 129' HUP
L="$T/logs"
BT="$BUILDTEL"

pane() { tm capture-pane -p -S -500 -t h4; }
dead() { [ "$(tm display -p -t h4 '#{pane_dead}' 2>/dev/null)" != 0 ]; }
alive() { ! dead; }
wait_for() { # wait_for ERE SECONDS: a line of the pane matches (not once the shell is gone)
        local i
        for i in $(seq $(($2 * 10))); do
                pane 2>/dev/null | grep -qE "$1" && return 0
                dead && return 1
                sleep 0.1
        done
        return 1
}
wait_n() { # wait_n ERE N SECONDS: N lines of the pane match
        local i
        for i in $(seq $(($3 * 10))); do
                [ "$(pane 2>/dev/null | grep -cE "$1")" -ge "$2" ] && return 0
                sleep 0.1
        done
        return 1
}
wait_file() { # wait_file PATH SECONDS
        local i
        for i in $(seq $(($2 * 10))); do
                [ -e "$1" ] && return 0
                sleep 0.1
        done
        return 1
}
type_line() { tm send-keys -t h4 -l "$1"; tm send-keys -t h4 Enter; }
# The shell's $? after what ran, on a line of its own ("ST-<n>"); empty when
# the shell never got there (it is gone, or still running the rest).
status_line() {
        type_line 'echo "S""T-$?"'
        wait_for '^ST-[0-9]+$' "${1:-20}" || { pane | sed 's/^/# pane: /' >&2; return 0; }
        pane | grep -E '^ST-[0-9]+$' | tail -1 | sed 's/^ST-//'
}
no_line() { # no_line DESCRIPTION ERE: no line of the pane matches
        if pane | grep -qE "$2"; then bad "$1: $(pane | grep -E "$2" | head -1)"; else ok "$1"; fi
}
files() { # files RUN-ID WHAT: its CSV and summary were written
        check "$2: the CSV" test -s "$L/resources-$1.csv"
        check "$2: the summary" test -s "$L/resources-$1.summary.json"
}

# An interactive bash in a pane of its own, in $T, ready for input.
tm new-session -d -s h4 -x 150 -y 50 \
        "env -i PATH=$PATH HOME=$T BUILDTEL_TEXTFILE_DIR=$T/textfile TERM=screen XDG_STATE_HOME=$T/state LANG=C.UTF-8 HISTFILE= bash --norc --noprofile -i"
tm set-option -g status off
tm set-window-option -t h4 remain-on-exit on
# set -b: a job's stop is told at once, not at the next prompt
type_line "PS1='\$ '; set -b; cd '$T'; echo 'RE''ADY'"
wait_for '^READY$' 20 || { echo "FAIL the shell in tmux did not start"; pane; exit 1; }
SHPID=$(tm display -p -t h4 '#{pane_pid}')
# The terminal's foreground process group, seen from the shell.
tty_fg() { ps -o tpgid= -p "$SHPID" 2>/dev/null | tr -d ' '; }
wait_tty_fg() { # wait_tty_fg FILE SECONDS: the terminal is the group of the pid in FILE
        local i
        for i in $(seq $(($2 * 10))); do
                [ "$(tty_fg)" = "$(cat "$1" 2>/dev/null)" ] && return 0
                sleep 0.1
        done
        return 1
}
# wait_build FILE STATE SECONDS: the process whose pid is in FILE (the
# build's sh wrote its $$ there) is stopped (STATE T) or runs (STATE R).
wait_build() {
        local i st
        for i in $(seq $(($3 * 10))); do
                st=$(ps -o stat= -p "$(cat "$1" 2>/dev/null)" 2>/dev/null)
                case $2,$st in T,T* | R,[RSD]*) return 0 ;; esac
                sleep 0.1
        done
        return 1
}

# Ctrl-C while the build runs: stop the list there.
case_int() {
        type_line "'$BT' run --no-db --log-dir '$L' --run-id int -- sh -c 'echo STAR\"\"TED; exec sleep 30'; echo \"AF\"\"TER-\$?\""
        check "int: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-c
        expect_eq "int: \$? in the shell" "$(status_line)" 130
        no_line "int: the list stopped (no AFTER)" '^AFTER'
        files int int
        expect_eq "int: the run's record is finished" \
                "$($CSVCHECK json-get "$L/resources-int.run.json" finished)" "True"
}

# Ctrl-C in a loop typed at the prompt: the loop ends.
case_intloop() {
        type_line "for i in 1 2; do '$BT' run --no-db --log-dir '$L' --run-id loop\$i -- sh -c 'echo STAR\"\"TED; exec sleep 30'; echo \"AF\"\"TER-\$?\"; done"
        check "intloop: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-c
        expect_eq "intloop: \$? in the shell" "$(status_line)" 130
        no_line "intloop: the loop stopped (no AFTER)" '^AFTER'
        check "intloop: no second run" test ! -e "$L/resources-loop2.csv"
        files loop1 intloop
}

# Ctrl-C in a script (bash without job control: it sees the keyboard's
# SIGINT only if its own process group gets it): the script ends, its
# loop with it.
case_intscript() {
        cat >"$T/script.sh" <<SH
for i in 1 2; do
        '$BT' run --no-db --log-dir '$L' --run-id scr\$i -- sh -c 'echo STARTED; exec sleep 30'
        echo "AFTER-\$?"
done
echo SCRIPT-END
SH
        type_line "bash '$T/script.sh'"
        check "intscript: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-c
        expect_eq "intscript: \$? in the shell" "$(status_line)" 130
        no_line "intscript: the script stopped (no AFTER)" '^AFTER'
        no_line "intscript: the script stopped (no SCRIPT-END)" '^SCRIPT-END'
        check "intscript: no second run" test ! -e "$L/resources-scr2.csv"
        files scr1 intscript
        # the same with bash -c, as the issue typed it
        type_line "bash -c \"'$BT' run --no-db --log-dir '$L' --run-id scr3 -- sh -c 'echo STAR\"\"TED3; exec sleep 30'; echo AF\"\"TER3-\\\$?\""
        check "intscript: bash -c: the build started" wait_for '^STARTED3$' 20
        tm send-keys -t h4 C-c
        expect_eq "intscript: bash -c: \$?" "$(status_line)" 130
        no_line "intscript: bash -c stopped (no AFTER3)" '^AFTER3'
        files scr3 "intscript: bash -c"
}

# Ctrl-\: buildtel ends by SIGQUIT too (bash says "Quit", and goes on
# with the list, as it does for any command killed by SIGQUIT), without a
# core file of its own.
case_quit() {
        local cores=0
        mkdir -p "$T/q/b"
        # With a core file name (not a pipe to a collector), allow cores
        # here: the build's (it is the build's own affair) lands in q/b,
        # buildtel's would land in q.
        case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
        '|'* | '') echo "# core_pattern is a pipe: no core file check" ;;
        *) cores=1 ;;
        esac
        [ $cores = 1 ] && type_line "ulimit -c unlimited"
        type_line "cd '$T/q' && '$BT' run --no-db --log-dir '$L' --run-id quit -- sh -c 'cd b; echo STAR\"\"TED; exec sleep 30'; echo \"AF\"\"TER-\$?\""
        check "quit: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 'C-\'
        check "quit: the list goes on, with 131" wait_for '^AFTER-131$' 20
        check "quit: the shell saw buildtel die of SIGQUIT" wait_for '^Quit' 1
        files quit quit
        no_line "quit: buildtel did not dump core" 'core dumped'
        if [ $cores = 1 ]; then
                check "quit: no core file of buildtel's" test -z "$(find "$T/q" -maxdepth 1 -name 'core*')"
        fi
}

# A build that exits 130 by itself (no signal): a status like any other.
case_exit130() {
        type_line "'$BT' run --no-db --log-dir '$L' --run-id e1 -- sh -c 'exit 130'; echo \"AF\"\"TER-\$?\""
        check "exit130: the list went on, with 130" wait_for '^AFTER-130$' 20
        type_line "bash -c \"'$BT' run --no-db --log-dir '$L' --run-id e2 -- sh -c 'exit 130'; echo AF\"\"TER2-\\\$?\""
        check "exit130: bash -c went on, with 130" wait_for '^AFTER2-130$' 20
        files e1 exit130
}

# bench: Ctrl-C in its first run ends the bench by SIGINT, that run's files
# written, no second run.
case_bench() {
        type_line "'$BT' bench --runs 3 --no-db --log-dir '$L' --interval 0.2 -- 'touch \"$T/started\"; exec sleep 30'; echo \"AF\"\"TER-\$?\""
        check "bench: the build started" wait_file "$T/started" 30
        tm send-keys -t h4 C-c
        expect_eq "bench: \$? in the shell" "$(status_line)" 130
        no_line "bench: the list stopped (no AFTER)" '^AFTER'
        expect_eq "bench: one run's CSV" "$(ls "$L"/resources-*.csv 2>/dev/null | grep -vc units)" 1
        expect_eq "bench: one run's summary" "$(ls "$L"/resources-*.summary.json 2>/dev/null | wc -l)" 1
}

# watch: Ctrl-C ends the watch by SIGINT, its files written.
case_watch() {
        type_line "sleep 60 & P=\$!; '$BT' watch --pid \$P --no-db --log-dir '$L' --run-id w --interval 0.2; echo \"AF\"\"TER-\$?\""
        check "watch: attached" wait_file "$L/resources-w.csv" 30
        tm send-keys -t h4 C-c
        expect_eq "watch: \$? in the shell" "$(status_line)" 130
        no_line "watch: the list stopped (no AFTER)" '^AFTER'
        files w watch
        type_line 'kill %1'
}

# Ctrl-Z, then bg: the shell keeps its terminal, the build runs on in the
# background to its end (it waits for a file: no race with a timer).
case_stopbg() {
        type_line "'$BT' run --no-db --log-dir '$L' --run-id bg -- sh -c 'echo \$\$ >bpid; echo STAR\"\"TED; while [ ! -e go ]; do sleep 0.1; done; echo DO\"\"NE'"
        check "stopbg: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-z
        check "stopbg: the job stopped" wait_for 'Stopped' 20
        type_line bg
        check "stopbg: the build continued" wait_build "$T/bpid" R 20
        expect_eq "stopbg: the terminal stays the shell's" "$(tty_fg)" "$SHPID"
        type_line 'echo "ALI""VE"'
        check "stopbg: the shell is alive after bg" wait_for '^ALIVE$' 20
        touch "$T/go"
        check "stopbg: the build went on in the background" wait_for '(^|\$ )DONE$' 20
        type_line 'wait %1; echo "WA""IT-$?"'
        check "stopbg: wait: status 0" wait_for '^WAIT-0$' 20
        check "stopbg: the pane's shell still runs" alive
        files bg stopbg
}

# Ctrl-Z, then fg: the build has the terminal again (it reads a line).
case_stopfg() {
        type_line "'$BT' run --no-db --log-dir '$L' --run-id fg -- sh -c 'echo \$\$ >bpid; echo STAR\"\"TED; read x; echo GOT-\$x'"
        check "stopfg: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-z
        check "stopfg: the job stopped" wait_for 'Stopped' 20
        type_line fg
        check "stopfg: after fg the terminal is the build's" wait_tty_fg "$T/bpid" 20
        type_line hello
        check "stopfg: the build read the terminal" wait_for '^GOT-hello$' 20
        expect_eq "stopfg: status" "$(status_line)" 0
        files fg stopfg
}

# Ctrl-Z, bg, then fg while the build runs: the terminal goes back to the
# build (it reads a line), and a build that reads in the background stops
# without taking the shell's terminal.
case_bgfg() {
        type_line "'$BT' run --no-db --log-dir '$L' --run-id bgfg -- sh -c 'echo \$\$ >bpid; echo STAR\"\"TED; while [ ! -e go ]; do sleep 0.1; done; echo REA\"\"DY; read x; echo GOT-\$x'"
        check "bgfg: the build started" wait_for '^STARTED$' 20
        tm send-keys -t h4 C-z
        check "bgfg: the job stopped" wait_for 'Stopped' 20
        type_line bg
        check "bgfg: the build continued" wait_build "$T/bpid" R 20
        expect_eq "bgfg: the terminal stays the shell's" "$(tty_fg)" "$SHPID"
        type_line 'echo "ALI""VE"'
        check "bgfg: the shell is alive after bg" wait_for '^ALIVE$' 20
        type_line fg
        check "bgfg: after fg the terminal is the build's" wait_tty_fg "$T/bpid" 20
        touch "$T/go"
        check "bgfg: the build runs after fg" wait_for '^READY$' 20
        type_line hello
        check "bgfg: the build read the terminal" wait_for '^GOT-hello$' 20
        expect_eq "bgfg: status" "$(status_line)" 0
        files bgfg bgfg
        # Stopped while reading, then bg: the read stops the build again
        # (SIGTTIN); buildtel stops with it and leaves the terminal be.
        type_line "'$BT' run --no-db --log-dir '$L' --run-id ttin -- sh -c 'echo \$\$ >bpid2; echo STAR\"\"TED2; read x; echo GOT2-\$x'"
        check "bgfg: the second build started" wait_for '^STARTED2$' 20
        tm send-keys -t h4 C-z
        check "bgfg: the second job stopped" wait_for 'Stopped.*ttin' 20
        type_line bg
        check "bgfg: it stopped again on reading" wait_n 'Stopped.*ttin' 2 20
        expect_eq "bgfg: the terminal stays the shell's" "$(tty_fg)" "$SHPID"
        type_line 'echo "ALI""VE2"'
        check "bgfg: the shell is alive" wait_for '^ALIVE2$' 20
        type_line fg
        check "bgfg: after fg the terminal is the second build's" wait_tty_fg "$T/bpid2" 20
        type_line hi
        check "bgfg: after fg it read the terminal" wait_for '^GOT2-hi$' 20
        expect_eq "bgfg: its status" "$(status_line)" 0
        files ttin bgfg
}

"case_$case"
# A failure shows the pane as it was.
[ "$FAILS" -gt 0 ] && pane 2>/dev/null | grep -v '^$' | sed 's/^/# pane: /'
finish
