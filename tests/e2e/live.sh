#!/usr/bin/env bash
# run --live as a person uses it, in a tmux pane: the status line on the
# bottom row while the build's lines scroll above, the log byte for byte
# the build's output, the terminal clean after exit, a resize and a
# Ctrl-Z / fg on the way; and nothing at all when stderr is not a terminal.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
SOCK="buildtel-live-$$-$RANDOM"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
L="$T/logs"
STATUS='avail (build'

# The build: 60 lines, slowly, and some memory of its own. A bash script:
# dash runs a command through vfork(), and a Ctrl-Z that lands between its
# vfork and the exec stops the child while the parent waits for it in the
# kernel (D, kernel_clone), so the job never stops, with or without
# buildtel (a bare `while :; do /bin/true; done` under dash hung 11 of 40
# Ctrl-Zs here; CI's ASan run hit it once in e2e-live's suspend case).
cat >"$T/build.sh" <<SH
#!/bin/bash
"$MEMHOG" 64 \${2:-4} >/dev/null &
for i in \$(seq 60); do echo "line \$i of the build, é 日本"; sleep \${1:-0.05}; done
wait
SH
chmod +x "$T/build.sh"
"$T/build.sh" 0 0 >"$T/ref.out"

tm new-session -d -s live -x 100 -y 24 "env -i PATH=$PATH HOME=$T BUILDTEL_TEXTFILE_DIR=$T/textfile TERM=screen XDG_STATE_HOME=$T/state bash --norc --noprofile"
tm set-option -g status off
sleep 0.3
tm send-keys -t live "PS1='$ '; cd $T" Enter
rows() { tm display -p -t live '#{pane_height}'; }
lower() { tm display -p -t live '#{scroll_region_lower}'; }
bottom() { tm capture-pane -p -t live | sed -n "$(rows)p"; }
wait_for() { # wait_for TEXT SECONDS
        local i
        for i in $(seq $(($2 * 10))); do
                tm capture-pane -p -t live | grep -qF "$1" && return 0
                sleep 0.1
        done
        return 1
}
run_live() { # run_live ID SLEEP
        tm send-keys -t live "clear; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id $1 -- ./build.sh $2 8; echo DONE-\$?" Enter
}
show() { # the pane and the processes, when a check failed
        tm capture-pane -p -t live | sed 's/^/  pane| /'
        ps -eo pid,ppid,pgid,tpgid,stat,wchan:20,args | grep -E 'build[.]sh|buildtel run|memhog' | sed 's/^/  ps| /'
        local p
        for p in $(pgrep -f 'build[.]sh'); do
                echo "  $p: $(grep -E '^(State|SigPnd|ShdPnd|SigBlk)' /proc/$p/status | tr '\n\t' '  ')"
                sed "s/^/  $p stack| /" /proc/$p/stack 2>/dev/null
        done
}
clean_after() { # clean_after WHAT [MARKER]
        check "$1: the build's status passed on" wait_for "${2:-DONE-0}" 30
        sleep 0.3
        expect_eq "$1: no scroll region left" "$(lower)" "$(($(rows) - 1))"
        check "$1: no status line left" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"
        check "$1: the log holds the build's bytes" cmp "$L/build-$1.log" "$T/ref.out"
}

# 1. Lines scroll above, the status line stays on the bottom row.
run_live plain 0.05
check "plain: output starts" wait_for "line 5 of" 10
sleep 0.5
b1=$(bottom)
case "$b1" in *"$STATUS"*) ok "plain: the status line is on the bottom row: $b1" ;; *) bad "plain: bottom row is '$b1'" ;; esac
case "$b1" in *"mem "*G*) ok "plain: it shows memory figures" ;; *) bad "plain: no memory figure in '$b1'" ;; esac
expect_eq "plain: the region ends above the bottom row" "$(lower)" "$(($(rows) - 2))"
top1=$(tm capture-pane -p -t live | grep -F 'line ' | tail -n1)
sleep 0.6
top2=$(tm capture-pane -p -t live | grep -F 'line ' | tail -n1)
check "plain: lines scroll above it ($top1 -> $top2)" test "$top1" != "$top2"
case "$(bottom)" in *"$STATUS"*) ok "plain: still on the bottom row while scrolling" ;; *) bad "plain: gone from the bottom row" ;; esac
clean_after plain
# The bottom row scrolls as usual afterwards.
tm send-keys -t live "clear; for i in \$(seq 30); do echo after \$i; done" Enter
sleep 0.5
expect_eq "after: the last line of output just above the prompt on the bottom row" \
        "$(tm capture-pane -p -t live | sed -n "$(($(rows) - 1))p")" "after 30"

# 2. A resize mid-run.
# Once the screen is full: the terminal takes the region down with the
# resize, and the build's lines that come before buildtel's next tick reach
# the bottom row; buildtel must lift the cursor off it, or every later line
# of the build is written over the status line.
run_live resize 0.04
check "resize: output starts" wait_for "line 26 of" 10
tm resize-window -t live -x 70 -y 16
# the line follows at buildtel's next tick (0.2 s; seconds on a loaded machine
# under ASan: once none within 5 s there)
for i in $(seq 150); do
        case "$(bottom)" in *"$STATUS"*) [ "$(lower)" = 14 ] && break ;; esac
        sleep 0.1
done
# the build's lines go on: they scroll above the line, never over it
over=
for i in $(seq 12); do
        case "$(bottom)" in "line "*) over="$(bottom)"; break ;; esac
        sleep 0.04
done
expect_eq "resize: no line of the build on the bottom row" "$over" ""
expect_eq "resize: the pane is 16 rows" "$(rows)" 16
case "$(bottom)" in *"$STATUS"*) ok "resize: the status line on the new bottom row" ;; *) bad "resize: bottom row is '$(bottom)'" ;; esac
expect_eq "resize: the region follows" "$(lower)" 14
check "resize: the line fits 70 columns" sh -c "test \$(tmux -L $SOCK capture-pane -p -t live | sed -n 16p | wc -m) -le 71"
clean_after resize
tm resize-window -t live -x 100 -y 24
sleep 0.3

# 3. Ctrl-Z and fg.
run_live suspend 0.1
check "suspend: output starts" wait_for "line 5 of" 10
sleep 0.4
tm send-keys -t live C-z
if wait_for Stopped 5; then ok "suspend: the shell has the job stopped"; else bad "suspend: the shell has the job stopped"; show; fi
sleep 0.3
expect_eq "suspend: no region while stopped" "$(lower)" "$(($(rows) - 1))"
check "suspend: no status line while stopped" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"
tm send-keys -t live "fg" Enter
sleep 1.2
case "$(bottom)" in *"$STATUS"*) ok "suspend: back on the bottom row after fg" ;; *) bad "suspend: bottom row after fg is '$(bottom)'" ;; esac
expect_eq "suspend: the region is set again" "$(lower)" "$(($(rows) - 2))"
# (the shell ran the echo when the job stopped: the summary says it now)
clean_after suspend "s, exit 0"

# 3b. Ctrl-Z when the terminal stays ours (the build's stdin is elsewhere,
# so it runs in a process group the terminal does not stop): the line
# steps aside, the build stops with us, and both carry on after fg.
tm send-keys -t live "clear; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id tstp -- ./build.sh 0.1 8 </dev/null; echo DONE-\$?" Enter
check "tstp: output starts" wait_for "line 5 of" 10
sleep 0.4
tm send-keys -t live C-z
if wait_for Stopped 5; then ok "tstp: the shell has the job stopped"; else bad "tstp: the shell has the job stopped"; show; fi
sleep 0.3
expect_eq "tstp: no region while stopped" "$(lower)" "$(($(rows) - 1))"
check "tstp: no status line while stopped" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"
n1=$(wc -c <"$L/build-tstp.log")
sleep 1
n2=$(wc -c <"$L/build-tstp.log")
expect_eq "tstp: the build is stopped too (its log does not grow)" "$n2" "$n1"
tm send-keys -t live "fg" Enter
sleep 1.2
case "$(bottom)" in *"$STATUS"*) ok "tstp: back on the bottom row after fg" ;; *) bad "tstp: bottom row after fg is '$(bottom)'" ;; esac
expect_eq "tstp: the region is set again" "$(lower)" "$(($(rows) - 2))"
clean_after tstp "s, exit 0"

# 4. A program on the alternate screen: the line steps aside.
cat >"$T/alt.sh" <<'SH'
#!/bin/sh
printf 'before\n'; sleep 1
printf '\033[?1049hon the alternate screen\n'; sleep 1.5
printf '\033[?1049lback\n'; sleep 2.5
SH
chmod +x "$T/alt.sh"
tm send-keys -t live "clear; BUILDTEL_LIVE=1 $BUILDTEL run --interval 0.2 --no-db --log-dir $L --run-id alt -- ./alt.sh; echo DONE-\$?" Enter
check "alt: on the alternate screen" wait_for "on the alternate" 10
sleep 0.6
check "alt: no status line on the alternate screen" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"
expect_eq "alt: no region on the alternate screen" "$(lower)" "$(($(rows) - 1))"
check "alt: back" wait_for "back" 10
sleep 1.5
case "$(bottom)" in *"$STATUS"*) ok "alt: the line is back after the alternate screen" ;; *) bad "alt: bottom row is '$(bottom)'" ;; esac
check "alt: the build's status passed on" wait_for DONE-0 30

# 5. The build puts the terminal in raw mode: the line steps aside.
cat >"$T/raw.sh" <<'SH'
#!/bin/sh
echo cooked; sleep 1.2
stty raw -echo; echo "raw now"; sleep 1.5
stty sane; echo "cooked again"; sleep 2
SH
chmod +x "$T/raw.sh"
tm send-keys -t live "clear; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id raw -- ./raw.sh; echo DONE-\$?" Enter
check "raw: cooked first" wait_for "cooked" 10
sleep 0.8
case "$(bottom)" in *"$STATUS"*) ok "raw: the line while cooked" ;; *) bad "raw: bottom row while cooked is '$(bottom)'" ;; esac
check "raw: raw now" wait_for "raw now" 10
sleep 0.8
expect_eq "raw: no region while raw" "$(lower)" "$(($(rows) - 1))"
check "raw: cooked again" wait_for "cooked again" 10
sleep 0.8
case "$(bottom)" in *"$STATUS"*) ok "raw: the line back once cooked" ;; *) bad "raw: bottom row after is '$(bottom)'" ;; esac
check "raw: the build's status passed on" wait_for DONE-0 30

# 6. Ctrl-C: the build dies of it, the terminal is left clean. The build
# is a program that dies of SIGINT whenever it comes: a bash script that
# forks (build.sh's sleeps) can miss it, when the ^C lands in its child
# between fork and exec; the child goes on, exits 0, and bash takes that
# for a SIGINT handled (CI saw the script end normally once).
cat >"$T/intr.sh" <<SH
#!/bin/bash
for i in 1 2 3 4 5; do echo "line \$i of the build"; done
exec "$MEMHOG" 64 60
SH
chmod +x "$T/intr.sh"
tm send-keys -t live "clear; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id intr -- ./intr.sh; echo DONE-\$?" Enter
check "intr: output starts" wait_for "line 5 of" 10
sleep 1
tm send-keys -t live C-c
# buildtel dies of SIGINT as the build did: the shell stops the list (no
# DONE), and its $? is 130
tm send-keys -t live 'echo "$?-DONE"' Enter
check "intr: the shell sees the interrupt" wait_for "130-DONE" 10 || show
check "intr: the list stopped there" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -q '^DONE-'" || show
sleep 0.3
expect_eq "intr: no scroll region left" "$(lower)" "$(($(rows) - 1))"
check "intr: no status line left" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"

# 7. stderr to a file, stdout the pane: no escape sequence in the file.
tm send-keys -t live "clear; $BUILDTEL run --live --quiet --no-db --log-dir $L --run-id tofile -- ./build.sh 0.01 1 2>$T/err.txt; echo DONE-\$?" Enter
check "to a file: done" wait_for DONE-0 30
check "to a file: no escape sequence in stderr's file" sh -c "! grep -q \$'\\033' $T/err.txt"
check "to a file: no status line on the pane" sh -c "! tmux -L $SOCK capture-pane -p -t live | grep -qF '$STATUS'"

# 8. Not a terminal at all: byte-identical to the build's output.
BUILDTEL_LIVE=1 "$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id pipe -- "$T/build.sh" 0.001 1 >"$T/pipe.out" 2>"$T/pipe.err"
check "not a terminal: stdout identical" cmp "$T/pipe.out" "$T/ref.out"
check "not a terminal: nothing on stderr" test ! -s "$T/pipe.err"
finish
