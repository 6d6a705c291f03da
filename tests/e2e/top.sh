#!/usr/bin/env bash
# buildtel top as a person uses it, in tmux: a real `buildtel run` of a
# ~10 s build printing ninja-like lines into a temp history database; top in
# a second pane shows it running with its context, Enter opens its detail
# (targets, units, the last lines of its build log),
# q quits and leaves the pane clean; --once prints plain text; after the
# build ends the run is in the recent list.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "tmux is not installed (apt-get install tmux)"; exit 77; }
DB="$T/h.db"
SOCK="buildtel-top-$$-$RANDOM"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
export LANG=C.UTF-8 LC_ALL=C.UTF-8

cat >"$T/build.sh" <<'SH'
for i in $(seq 1 10); do echo "[$i/10] Building CXX object obj/unit$i.o"; sleep 1; done
SH
tm -f /dev/null new-session -d -x 80 -y 24 -s top \
        "$BUILDTEL run --db '$DB' --log-dir '$T/logs' --interval 0.5 -- sh '$T/build.sh'; sleep 60"
tm split-window -t top -v "sleep 60"
# wait for the run's row and a sample with a context
for _ in $(seq 1 40); do
        "$BUILDTEL" top --once --db "$DB" 2>/dev/null | grep -q '/10\]' && break
        sleep 0.25
done
"$BUILDTEL" top --once --db "$DB" >"$T/once.txt"
expect_eq "top --once exits 0" "$?" 0
check "--once shows the run as running" grep -q '1 running, 0 recent' "$T/once.txt"
check "--once shows its context" grep -q '\[[0-9]*/10\] Buil' "$T/once.txt"
COLUMNS=132 "$BUILDTEL" top --once --db "$DB" >"$T/once132.txt"
check "--once at 132 columns shows the whole context" grep -q '/10\] Building CXX object obj/unit' "$T/once132.txt"
check "--once has no escape codes" sh -c "! grep -q \"$(printf '\033')\" '$T/once.txt'"
check "--once fits 80 columns" python3 -c 'import sys; sys.exit(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")) > 80)' "$T/once.txt"

tm resize-pane -t top.1 -y 24 2>/dev/null
tm respawn-pane -k -t top.1 "$BUILDTEL top --db '$DB'; echo TOP-EXIT=\$?; sleep 60"
sleep 2
tm capture-pane -p -t top.1 >"$T/pane1.txt"
check "top shows the running build" grep -q 'running' "$T/pane1.txt"
check "top shows its context" grep -q '\[[0-9]*/10\] Buil' "$T/pane1.txt"
tm send-keys -t top.1 Enter
sleep 1.5
tm capture-pane -p -t top.1 >"$T/pane2.txt"
check "Enter opens the detail (targets, units)" grep -q 'UNITS running' "$T/pane2.txt"
check "the detail shows the build log's last lines" grep -q '^ *LOG' "$T/pane2.txt"
check "the detail shows the run's lines" grep -q 'Building CXX object obj/unit' "$T/pane2.txt"
tm send-keys -t top.1 Escape
sleep 1
tm capture-pane -p -t top.1 >"$T/pane3.txt"
check "Esc goes back to the list" grep -q 'COMMAND' "$T/pane3.txt"
tm send-keys -t top.1 q
sleep 1
tm capture-pane -p -t top.1 >"$T/pane4.txt"
check "q quits with status 0" grep -q 'TOP-EXIT=0' "$T/pane4.txt"
check "the pane is clean after q" sh -c "! grep -q 'COMMAND\|RECENT' '$T/pane4.txt'"

# the build ends: the run moves to the recent list
for _ in $(seq 1 60); do
        "$BUILDTEL" top --once --db "$DB" | grep -q '0 running, 1 recent' && break
        sleep 0.5
done
"$BUILDTEL" top --once --db "$DB" >"$T/once2.txt"
check "the finished run is in the recent list" grep -q -- '-- recent --' "$T/once2.txt"
check "its result is ok" grep -q ' ok ' "$T/once2.txt"
check "the list has the keys' help line" grep -q '^keys: up/down select, Enter details, Esc back, q quit' "$T/pane3.txt"
check "--once has no keys line" sh -c "! grep -q '^keys:' '$T/once2.txt'"

# No history yet (issue 35): top opens empty and waits; the first run
# recorded appears without a restart. --once says so and exits 0; a RUN
# named still needs the history.
NO_COLOR=1 "$BUILDTEL" top --once --db "$T/none.db" >"$T/none.txt" 2>&1
expect_eq "--once, no history yet: exit 0" "$?" 0
check "--once, no history yet: says so" grep -q "^no run recorded yet (no history at $T/none.db)" "$T/none.txt"
NO_COLOR=1 "$BUILDTEL" top --once --db "$T/none.db" somerun >/dev/null 2>&1
expect_eq "--once RUN, no history: an error" "$?" 1
check "--once created no database" test ! -e "$T/none.db"
tm respawn-pane -k -t top.1 "$BUILDTEL top --db '$T/new.db'; echo TOP-EXIT=\$?; sleep 60"
sleep 1.5
tm capture-pane -p -t top.1 >"$T/wait1.txt"
check "no history yet: top waits" grep -q "^no run recorded yet: waiting for the first ($T/new.db)" "$T/wait1.txt"
check "no history yet: the keys line says q" grep -q '^keys: q quit' "$T/wait1.txt"
"$BUILDTEL" run --quiet --db "$T/new.db" --log-dir "$T/logs" --run-id first -- true
for _ in $(seq 1 20); do
        tm capture-pane -p -t top.1 | grep -q '0 running, 1 recent' && break
        sleep 0.5
done
tm capture-pane -p -t top.1 >"$T/wait2.txt"
check "the first run appears without a restart" grep -q '0 running, 1 recent' "$T/wait2.txt"
tm send-keys -t top.1 q
sleep 1
check "q quits the waiting top with 0" sh -c "tmux -L $SOCK capture-pane -p -t top.1 | grep -q 'TOP-EXIT=0'"
finish
