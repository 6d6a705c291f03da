#!/usr/bin/env bash
# run --live against a hostile build (issue 20), in a tmux pane:
# M2: a source named with a C1 control (U+009B, an 8-bit CSI) shows as '?'
#     on the line, never as the control;
# L2: the line is never drawn inside the build's unfinished escape sequence,
#     and a build that resets the scroll region gets no copies of the line.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
SOCK="buildtel-lh-$$-$RANDOM"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
L="$T/logs"
STATUS='avail (build'

tm new-session -d -s lh -x 100 -y 24 "env -i PATH=$PATH HOME=$T BUILDTEL_TEXTFILE_DIR=$T/textfile TERM=screen XDG_STATE_HOME=$T/state LANG=C.UTF-8 bash --norc --noprofile"
tm set-option -g status off
sleep 0.3
tm send-keys -t lh "PS1='$ '; cd $T" Enter
rows() { tm display -p -t lh '#{pane_height}'; }
lower() { tm display -p -t lh '#{scroll_region_lower}'; }
bottom() { tm capture-pane -p -t lh | sed -n "$(rows)p"; }
wait_for() { # wait_for TEXT SECONDS
        local i
        for i in $(seq $(($2 * 10))); do
                tm capture-pane -p -t lh | grep -qF "$1" && return 0
                sleep 0.1
        done
        return 1
}

# M2: a "compiler" (comm cc1) that compiles u<U+009B>2J.c for 3 s.
printf '#!/bin/sh\nsleep 3\n' >"$T/cc1"
chmod +x "$T/cc1"
printf '#!/bin/sh\n./cc1 "$(printf "u\\302\\2332J.c")"\necho compiled\n' >"$T/c1.sh"
chmod +x "$T/c1.sh"
tm send-keys -t lh "clear; for i in 1 2 3 4 5; do echo keep-\$i; done; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id c1 -- ./c1.sh; echo DONE-\$?" Enter
check "c1: the unit shows on the line, its control as '?'" wait_for 'u?2J.c' 10
b=$(bottom)
case "$b" in *"$STATUS"*) ok "c1: the line is on the bottom row" ;; *) bad "c1: bottom row is '$b'" ;; esac
case "$b" in *'u?2J.c'*) ok "c1: the line names the unit with a '?'" ;; *) bad "c1: bottom row is '$b'" ;; esac
check "c1: the screen was not cleared (CSI 2J did not run)" wait_for keep-1 1
check "c1: done" wait_for DONE-0 20
tm capture-pane -p -t lh >"$T/c1pane.txt"
check "c1: no U+009B reached the pane" sh -c "! LC_ALL=C grep -qF -- \"\$(printf '\\302\\233')\" '$T/c1pane.txt'"

# L2a: the build writes half a CSI, waits past two redraws, then the rest.
cat >"$T/half.sh" <<'SH'
#!/bin/sh
echo start; sleep 0.6
printf 'A\033[1'; sleep 2.5
printf ';31mRED\033[0m tail\n'; sleep 0.6
printf 'B\033]0;a title'; sleep 2.5
printf '\007after-osc\n'; sleep 0.6
printf 'C\342\202'; sleep 2.5
printf '\254-euro\n'; sleep 0.6
SH
chmod +x "$T/half.sh"
tm send-keys -t lh "clear; $BUILDTEL run --live --interval 0.2 --no-db --log-dir $L --run-id half -- ./half.sh; echo DONE-\$?" Enter
check "half: done" wait_for DONE-0 30
pane=$(tm capture-pane -p -t lh)
case "$pane" in *"ARED tail"*) ok "half: the CSI took effect (ARED tail)" ;; *) bad "half: no 'ARED tail' in: $pane" ;; esac
case "$pane" in *";31m"*) bad "half: ';31m' shows as text" ;; *) ok "half: no ';31m' as text" ;; esac
case "$pane" in *"Bafter-osc"*) ok "half: the OSC stayed whole (Bafter-osc)" ;; *) bad "half: no 'Bafter-osc' in: $pane" ;; esac
case "$pane" in *"a title"*) bad "half: the OSC's text shows" ;; *) ok "half: the OSC's text does not show" ;; esac
case "$pane" in *"C€-euro"*) ok "half: the split character stayed whole (C€-euro)" ;; *) bad "half: no 'C€-euro' in: $pane" ;; esac

# L2b: the build resets the scroll region, then prints 40 lines slowly:
# the line comes back in a region, and no copy of it scrolls into the output.
cat >"$T/reset.sh" <<'SH'
#!/bin/sh
for i in $(seq 5); do echo "before $i"; sleep 0.1; done
sleep 0.8
printf '\033[r'
for i in $(seq 40); do echo "after reset $i"; sleep 0.06; done
SH
chmod +x "$T/reset.sh"
tm send-keys -t lh "clear; tmux -L $SOCK clear-history -t lh 2>/dev/null; $BUILDTEL run --live --quiet --interval 0.2 --no-db --log-dir $L --run-id reset -- ./reset.sh; echo DONE-\$?" Enter
check "reset: output starts" wait_for "after reset 20" 20
sleep 0.5
case "$(bottom)" in *"$STATUS"*) ok "reset: the line is back on the bottom row" ;; *) bad "reset: bottom row is '$(bottom)'" ;; esac
expect_eq "reset: the region is set again" "$(lower)" "$(($(rows) - 2))"
check "reset: done" wait_for DONE-0 20
copies=$(tm capture-pane -p -S - -t lh | grep -cF "$STATUS")
expect_eq "reset: no copy of the line in the output and history" "$copies" 0
finish
