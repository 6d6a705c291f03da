#!/usr/bin/env bash
# Hardening (issue 11): hostile local users, odd process states, bad files.
# One case per run: harden.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden.sh CASE}

# A uid that is not ours, for files another user planted.
other_uid() { id -u nobody 2>/dev/null || echo 65534; }

# 1: the /tmp fallback directory is refused unless it is ours and private;
# outputs never follow a planted symlink. HOME=/proc/x makes the default
# directory unwritable, so the run falls back to $TMPDIR/buildtel-UID/logs.
case_tmpdir() {
        local tmp="$T/tmp" fb victim="$T/victim.txt" u
        u=$(id -u)
        fb="$tmp/buildtel-$u"
        if [ "$u" -ne 0 ]; then
                echo "needs root to plant a directory owned by another user"
                exit 77
        fi
        mkdir -p "$fb/logs"
        echo precious >"$victim"
        ln -s "$victim" "$fb/logs/build-nightly.log"
        ln -s "$victim" "$fb/logs/resources-nightly.csv"
        chown -R "$(other_uid)" "$fb"
        env -u XDG_STATE_HOME HOME=/proc/x TMPDIR="$tmp" "$BUILDTEL" run --run-id nightly -- echo secret \
                >/dev/null 2>"$T/err1"
        expect_eq "run status with a foreign fallback dir" "$?" 0
        expect_eq "the victim is untouched" "$(cat "$victim")" precious
        check "the foreign directory is refused, in one line" grep -q "refusing '$fb'" "$T/err1"

        # Ours, but writable by others: refused too.
        rm -rf "$fb"
        mkdir -p "$fb/logs"
        chmod 1777 "$fb"
        env -u XDG_STATE_HOME HOME=/proc/x TMPDIR="$tmp" "$BUILDTEL" run --run-id w -- true 2>"$T/err2"
        check "a world-writable directory is refused" grep -q "refusing '$fb'" "$T/err2"
        check "nothing written in it" test ! -e "$fb/logs/resources-w.csv"

        # Ours and private, with a planted symlink (as an earlier takeover
        # would leave): the output does not follow it.
        chmod 0700 "$fb" "$fb/logs"
        ln -s "$victim" "$fb/logs/build-nightly.log"
        env -u XDG_STATE_HOME HOME=/proc/x TMPDIR="$tmp" "$BUILDTEL" run --run-id nightly -- echo secret \
                >/dev/null 2>"$T/err3"
        expect_eq "the victim is untouched through a symlink in our own dir" "$(cat "$victim")" precious

        # A fresh fallback: created private, files 0600 (item 9).
        rm -rf "$fb"
        env -u XDG_STATE_HOME HOME=/proc/x TMPDIR="$tmp" "$BUILDTEL" run --run-id f -- echo hi >/dev/null 2>"$T/err4"
        check "the fallback is used and said" grep -q "writing to '$fb/logs'" "$T/err4"
        expect_eq "fallback top dir mode" "$(stat -c %a "$fb")" 700
        expect_eq "fallback logs dir mode" "$(stat -c %a "$fb/logs")" 700
        expect_eq "build log mode" "$(stat -c %a "$fb/logs/build-f.log")" 600
}

# 2: started with SIGCHLD ignored, the run ends (no spin on ECHILD), keeps
# the build's status, and the build gets the disposition we were given.
ign_chld() { # ign_chld CMD...: exec CMD with SIGCHLD ignored
        python3 -c 'import signal, os, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
case_sigchld() {
        local t0 st
        t0=$(now)
        timeout -s KILL 20 bash -c "$(declare -f ign_chld); ign_chld \"\$@\"" _ \
                "$BUILDTEL" run --log-dir "$T/l" --run-id c -- sh -c 'sleep 0.3; exit 3' >/dev/null 2>"$T/err"
        st=$?
        expect_eq "exit status with SIGCHLD ignored" "$st" 3
        check "ends promptly ($(since "$t0") s)" lt "$(since "$t0")" 10
        timeout -s KILL 20 bash -c "$(declare -f ign_chld); ign_chld \"\$@\"" _ \
                "$BUILDTEL" run --log-dir "$T/l" --run-id d -- grep SigIgn /proc/self/status >"$T/out" 2>/dev/null
        # SIGCHLD is 17: bit 16 of the mask.
        local ign
        ign=$(awk '{print $2}' "$T/out")
        check "the build starts with SIGCHLD ignored, as we were ($ign)" \
                python3 -c "import sys; sys.exit(0 if int('$ign', 16) & (1 << 16) else 1)"
        "$BUILDTEL" run --log-dir "$T/l" --run-id e -- grep SigIgn /proc/self/status >"$T/out2" 2>/dev/null
        ign=$(awk '{print $2}' "$T/out2")
        check "normally the build starts with SIGCHLD default ($ign)" \
                python3 -c "import sys; sys.exit(1 if int('$ign', 16) & (1 << 16) else 0)"
}

# 3: a second run does not kill the first run's live build when the first
# buildtel is not named buildtel (a copy, a wrapper): liveness is by pid and
# start time, not by comm.
case_stale() {
        if [ "$(id -u)" != 0 ]; then echo "needs root to make cgroups"; exit 77; fi
        if ! grep -q cgroup /proc/self/mountinfo; then echo "no cgroup filesystem mounted"; exit 77; fi
        # Other buildtels on this machine (older ones judge by comm) would see
        # our runs under the shared <own cgroup>/buildtel: move this shell
        # into cgroups of its own, in every hierarchy.
        trap 'unisolate; cleanup' EXIT
        isolate || { echo "cannot make a private cgroup for the test"; exit 77; }
        cp "$BUILDTEL" "$T/bt-wrapped"
        "$T/bt-wrapped" run --quiet --no-db --log-dir "$T/l" --run-id first -- sleep 4 &
        local first=$! st
        sleep 1
        if ! find /sys/fs/cgroup -mindepth 1 -type d -name "run-first-$first" 2>/dev/null | grep -q .; then
                kill $first; wait $first
                echo "the first run got no cgroup here: nothing to check"
                exit 77
        fi
        "$BUILDTEL" run --quiet --no-db --log-dir "$T/l" --run-id second -- true
        expect_eq "second run status" "$?" 0
        wait $first
        st=$?
        expect_eq "the first run's build was not killed" "$st" 0
        check "the first run's cgroup is gone after it" \
                test -z "$(find /sys/fs/cgroup -mindepth 1 -type d -name "run-first-$first" 2>/dev/null)"
        # A dead owner's cgroup is still cleaned: kill -9 the wrapper mid-run.
        "$T/bt-wrapped" run --quiet --no-db --log-dir "$T/l" --run-id dead -- sleep 30 &
        local dead=$!
        sleep 1
        kill -9 $dead
        wait $dead 2>/dev/null
        # Its build runs on (issue 20 M4): left alone while it does ...
        "$BUILDTEL" run --quiet --no-db --log-dir "$T/l" --run-id third -- true 2>"$T/third.err"
        check "a dead run's cgroup that still holds its build is left" \
                test -n "$(find /sys/fs/cgroup -mindepth 1 -type d -name "run-dead-$dead" 2>/dev/null)"
        check "... with a note" grep -q "run-dead-$dead of a buildtel that is gone still holds processes" "$T/third.err"
        # ... and removed by the next run once it is empty.
        for p in $(cat $(find /sys/fs/cgroup -mindepth 1 -type d -name "run-dead-$dead" | head -1)/cgroup.procs); do kill "$p"; done
        sleep 0.3
        "$BUILDTEL" run --quiet --no-db --log-dir "$T/l" --run-id fourth -- true
        check "a dead run's empty cgroup is removed by the next run" \
                test -z "$(find /sys/fs/cgroup -mindepth 1 -type d -name "run-dead-$dead" 2>/dev/null)"
}

# 4: --metadata-file (in the build's argv) or --ninja-log naming a FIFO or
# /dev/stdout: no hang; a note says it is not a regular file.
case_fifo() {
        local st
        mkfifo "$T/fifo"
        timeout -s KILL 20 "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id m -- true --metadata-file "$T/fifo" \
                >/dev/null 2>"$T/err1"
        expect_eq "--metadata-file FIFO: run ends with the build's status" "$?" 0
        check "and says it is not a regular file" grep -q "metadata-file '$T/fifo': not a regular file" "$T/err1"
        # A FIFO there before the build is unchanged, so never read: the
        # build makes it.
        timeout -s KILL 20 "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id n --ninja-log "$T/fifo2" -- \
                mkfifo "$T/fifo2" >/dev/null 2>"$T/err2"
        expect_eq "--ninja-log FIFO: run ends with the build's status" "$?" 0
        check "and says it is not a regular file" grep -q "ninja-log '$T/fifo2': not a regular file" "$T/err2"
        # /dev/stdout is a pipe whose other end never writes.
        timeout -s KILL 20 "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id o -- true --metadata-file /dev/stdout \
                2>"$T/err3" | sleep 25 &
        local pid=$!
        local t0
        t0=$(now)
        while [ ! -s "$T/err3" ] || ! grep -q "csv:" "$T/err3"; do
                lt "$(since "$t0")" 22 || break
                sleep 0.2
        done
        check "--metadata-file /dev/stdout (a pipe): the run ends ($(since "$t0") s)" lt "$(since "$t0")" 15
        check "and says it is not a regular file" grep -q "metadata-file '/dev/stdout': not a regular file" "$T/err3"
        kill $pid 2>/dev/null
        pkill -P $$ -x sleep 2>/dev/null
        wait 2>/dev/null
}

# 14: a .ninja_log over 256 MiB: only this run's tail is read.
case_bigninja() {
        local log="$T/.ninja_log"
        printf '# ninja log v5\n' >"$log"
        truncate -s 300M "$log"
        printf '\n' >>"$log"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id big --ninja-log "$log" -- \
                sh -c 'printf "0\t10\t0\ta.o\t1\n5\t20\t0\tb.o\t2\n" >>"$1"' sh "$log" >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        check "the run's two edges are counted" grep -q ".ninja_log: 2 edges this run" "$T/err"
        check "no error about the log" test -z "$(grep -- "--ninja-log" "$T/err")"
}

# 5: more than 64 targets: each step is credited to its own target (a
# 64-bit mask shifted by the target index was undefined past 63).
case_targets70() {
        local k bad=0
        for ((k = 0; k < 70; k++)); do
                printf '#%d [t%d build 1/1] RUN echo %d\n#%d DONE 0.1s\n' $((k + 1)) $k $k $((k + 1))
        done >"$T/b.log"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id t70 -- cat "$T/b.log" >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        for ((k = 0; k < 70; k++)); do
                grep -q "target t$k: .*, 1 steps," "$T/err" || { bad=$((bad + 1)); echo "t$k: $(grep "target t$k:" "$T/err")"; }
        done
        expect_eq "targets without exactly their one step" "$bad" 0
}

# 6: one rawjson line over the 64 KiB line cap does not leave the JSON
# scanner inside it: the steps after it still count.
case_longjson() {
        python3 - "$T/raw.log" <<'PY2'
import sys
v = lambda d, n: '{"vertexes":[{"digest":"sha256:%s","name":"[t %s 1/1] RUN %s","started":"2026-01-01T00:00:00Z","completed":"2026-01-01T00:00:01Z"}]}' % (d, n, n)
with open(sys.argv[1], "w") as f:
    f.write(v("a1", "one") + "\n")
    f.write('{"logs":[{"vertex":"sha256:a1","data":"' + "QUFB" * 40000 + '"}]}\n')
    f.write(v("b2", "two") + "\n")
    f.write(v("c3", "three") + "\n")
PY2
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id lj -- cat "$T/raw.log" >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        check "all three steps are counted after the long line" grep -q "3 steps" "$T/err"
}

# 7: the build sees exactly the descriptors buildtel was given, OTLP on
# (libcurl's socketpair is not passed on).
case_fds() {
        local bare run
        # ls lists its own descriptors (plus the one it reads them with).
        bare=$(ls /proc/self/fd 7</dev/null | sort | tr '\n' ' ')
        run=$(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 OTEL_EXPORTER_OTLP_TIMEOUT=500 \
                "$BUILDTEL" run --no-db --quiet --log-dir "$T/l" --run-id fd -- ls /proc/self/fd 7</dev/null 2>/dev/null |
                sort | tr '\n' ' ')
        expect_eq "the build's descriptors equal a bare run's" "$run" "$bare"
        bare=$(ls /proc/self/fd | sort | tr '\n' ' ')
        run=$("$BUILDTEL" run --no-db --quiet --log-dir "$T/l" --run-id fd2 -- ls /proc/self/fd 2>/dev/null |
                sort | tr '\n' ' ')
        expect_eq "and without OTLP" "$run" "$bare"
}

# 15: started with fd 1 closed: the build sees it closed, as it would bare,
# and buildtel's own descriptors never land on it.
case_closed1() {
        local bare st
        sh -c 'echo hi' >&- 2>/dev/null
        bare=$?
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id c1 -- sh -c 'echo hi' >&- 2>"$T/err"
        st=$?
        expect_eq "echo to a closed stdout fails as bare" "$st" "$bare"
        check "the run still writes its files" test -s "$T/l/resources-c1.csv"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id c2 -- sh -c 'echo out; echo err >&2' >&- 2>"$T/err2"
        check "stderr still passes through" grep -qx err "$T/err2"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id c3 --off -- sh -c 'echo hi' >&- 2>/dev/null
        expect_eq "--off: the same as bare" "$?" "$bare"
}

# 12: a helper (docker buildx history, run at the end of a bake) starts with
# no blocked signals, SIGPIPE at its default, and only 0-2 open.
case_helper() {
        mkdir -p "$T/fakebin"
        # Shell builtins read the signal state (python would change it);
        # python, exec'd in the same process, lists the descriptors.
        cat >"$T/fakebin/docker" <<EOF2
#!/bin/sh
while read -r k v; do case \$k in SigBlk:|SigIgn:) echo "\$k \$v";; esac; done </proc/self/status >"$T/helper.status"
exec python3 -c 'import os; fds = " ".join(map(str, sorted(int(f) for f in os.listdir("/proc/self/fd")))); open("$T/helper.fds", "w").write(fds); print("{}")'
EOF2
        chmod +x "$T/fakebin/docker"
        echo '{"app": {"buildx.build.ref": "b/b0/x3tig9yrbzg2bp0ahn840m9hs"}}' >"$T/meta.json"
        OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 OTEL_EXPORTER_OTLP_TIMEOUT=500 PATH="$T/fakebin:$PATH" \
                "$BUILDTEL" run --no-db --quiet --log-dir "$T/l" --run-id h -- true --metadata-file "$T/meta.json" \
                >/dev/null 2>&1
        check "the helper ran" test -s "$T/helper.status"
        expect_eq "no signal blocked in the helper" "$(awk '/^SigBlk/ {print $2}' "$T/helper.status")" 0000000000000000
        local ign
        ign=$(awk '/^SigIgn/ {print $2}' "$T/helper.status")
        # SIGPIPE is 13: bit 12.
        check "SIGPIPE not ignored in the helper ($ign)" \
                python3 -c "import sys; sys.exit(1 if int('$ign', 16) & (1 << 12) else 0)"
        # 0-2, and the one listdir read them with.
        expect_eq "only 0-2 in the helper" "$(cat "$T/helper.fds")" "0 1 2 3"
}

# 8: Pushgateway credentials never appear in a warning.
case_pushcreds() {
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id p --pushgateway 'http://u:s3cr3t@127.0.0.1:9/x?token=t0k3n' -- true \
                >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        check "the failed push is reported" grep -q "push to http://127.0.0.1:9/x failed" "$T/err"
        check "no password in the output" test -z "$(grep -e s3cr3t -e t0k3n "$T/err")"
}

# 9: build output holds secrets: files 0600 in 0700 directories (the
# history database too); the .prom file stays 0644 for node_exporter.
case_modes() {
        local f bad=0
        "$BUILDTEL" run --log-dir "$T/new/logs" --run-id m --textfile-dir "$T/tf" --prom-file m.prom -- echo hi >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        expect_eq "new log dir" "$(stat -c %a "$T/new/logs")" 700
        for f in "$T"/new/logs/*; do
                [ "$(stat -c %a "$f")" = 600 ] || { bad=$((bad + 1)); echo "$(stat -c %a "$f") $f"; }
        done
        expect_eq "files in the log dir not 0600" "$bad" 0
        check "there were files" test -s "$T/new/logs/build-m.log"
        expect_eq "history directory" "$(stat -c %a "$XDG_STATE_HOME/buildtel")" 700
        for f in "$XDG_STATE_HOME"/buildtel/*.db* "$XDG_STATE_HOME"/buildtel/*.sqlite*; do
                [ -e "$f" ] || continue
                expect_eq "history file $(basename "$f")" "$(stat -c %a "$f")" 600
        done
        expect_eq "the .prom file" "$(stat -c %a "$T/tf/m.prom")" 644
}

# 10: in `buildtel run -- CMD | less` the terminal stays with the pager; with
# stdout on the terminal the build gets it. Under script(1), a pty; the
# build's /proc/self/stat says its group and the terminal's foreground group.
case_pager() {
        command -v script >/dev/null || { echo "needs script (util-linux)"; exit 77; }
        fg_of() { # fg_of OUTPUT: "yes" when the build was the foreground group
                tr -d '\r' <"$1" | awk '/^[0-9]+ \(/ { sub(/^.*\) /, ""); split($0, f, " "); print (f[3] == f[6] ? "yes" : "no"); exit }'
        }
        script -qec "$BUILDTEL run --no-db --quiet --log-dir $T/l --run-id p1 -- cat /proc/self/stat | cat" /dev/null \
                >"$T/piped" </dev/null
        expect_eq "piped into a pager: the build is not the foreground" "$(fg_of "$T/piped")" no
        script -qec "$BUILDTEL run --no-db --quiet --log-dir $T/l --run-id p2 -- cat /proc/self/stat" /dev/null \
                >"$T/tty" </dev/null
        expect_eq "on the terminal: the build is the foreground" "$(fg_of "$T/tty")" yes
}

# 11: SIGTERM during the final exports (a collector that never answers) cuts
# them short, and buildtel still exits with the build's status.
case_termexport() {
        local port srv bt t0 st
        python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
c = []
while True:
    c.append(s.accept()[0])' >"$T/port" &
        srv=$!
        while [ ! -s "$T/port" ]; do sleep 0.05; done
        port=$(cat "$T/port")
        for how in otlp pushgw; do
                if [ $how = otlp ]; then
                        OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port OTEL_EXPORTER_OTLP_TIMEOUT=15000 \
                                "$BUILDTEL" run --no-db --quiet --log-dir "$T/l" --run-id te -- sh -c 'exit 3' \
                                >/dev/null 2>"$T/err-$how" &
                else
                        "$BUILDTEL" run --no-db --quiet --log-dir "$T/l" --run-id tp \
                                --pushgateway "http://127.0.0.1:$port" -- sh -c 'exit 3' >/dev/null 2>"$T/err-$how" &
                fi
                bt=$!
                sleep 1.5
                t0=$(now)
                kill -TERM $bt
                wait $bt
                st=$?
                expect_eq "$how: the build's status after SIGTERM in the export" "$st" 3
                check "$how: buildtel ends soon after the SIGTERM ($(since "$t0") s)" lt "$(since "$t0")" 3
        done
        kill $srv
        wait $srv 2>/dev/null
}

# 13: cache counters near 2^64 in the build's output: a ratio within 0-1 and
# no negative count anywhere.
case_cachecount() {
        # Out of range (over 2^53, model/ranges.h): the count is unknown, never
        # a wrapped -1 nor a ratio of 4.6e18.
        printf 'Compile requests 10\nCache hits 18446744073709551615\nCache misses 1\n' >"$T/cc.log"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id cc --textfile-dir "$T/tf" --job cc -- cat "$T/cc.log" \
                >/dev/null 2>"$T/err"
        expect_eq "run status" "$?" 0
        check "no absurd ratio shown" test -z "$(grep -E 'e\+[0-9]+%|[0-9]{4,}\.[0-9]%' "$T/err")"
        check "no negative count in the targets file" test -z "$(grep -o '"hits": *-[0-9]*' "$T/l/resources-cc.targets.json")"
        check "no ratio over 1 in the .prom" test -z "$(awk '/_hit_ratio/ && $NF > 1' "$T/tf/buildtel-cc.prom")"
        # 2^50 is in range: counted, and the ratio is right.
        printf 'Compile requests 10\nCache hits 1125899906842624\nCache misses 1\n' >"$T/cc2.log"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id cc2 --textfile-dir "$T/tf" --job cc -- cat "$T/cc2.log" \
                >/dev/null 2>"$T/err"
        check "the hit ratio shown is 100.0%" grep -q "hits / 1 misses (100.0%)" "$T/err"
        check "the .prom ratio is 1 (to 1e-9)" test -n "$(awk '/^build_sccache_hit_ratio\{/ && $NF > 0.999999999 && $NF <= 1' "$T/tf/buildtel-cc.prom")"
        check "hits are there" grep -q '"hits": *1125899906842624' "$T/l/resources-cc2.targets.json"
}

# 16: --prom-file refuses a name with a newline (or another control byte).
case_promname() {
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id pn --textfile-dir "$T/tf" --prom-file $'a\nb.prom' -- true \
                >/dev/null 2>"$T/err"
        expect_eq "a newline in --prom-file is a bad option" "$?" 125
        check "nothing written" test -z "$(ls "$T/tf" 2>/dev/null)"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id pn2 --textfile-dir "$T/tf" --prom-file $'a\tb.prom' -- true \
                >/dev/null 2>&1
        expect_eq "a tab too" "$?" 125
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id pn3 --textfile-dir "$T/tf" --prom-file 'ci job.prom' -- true \
                >/dev/null 2>&1
        expect_eq "a plain name with a space is fine" "$?" 0
}

# 18: on a full filesystem, the closing lines name no file that failed.
case_fullfs() {
        if [ "$(id -u)" != 0 ]; then echo "needs root to mount a tmpfs"; exit 77; fi
        mkdir -p "$T/full"
        mount -t tmpfs -o size=256k tmpfs "$T/full" || { echo "cannot mount a tmpfs"; exit 77; }
        "$BUILDTEL" run --no-db --log-dir "$T/full/logs" --run-id f --interval 0.05 -- \
                sh -c 'head -c 1048576 /dev/zero | tr "\0" x; sleep 0.3; exit 4' >/dev/null 2>"$T/err"
        expect_eq "the build's status" "$?" 4
        check "the failure is said" grep -q "No space left" "$T/err"
        # Each path is printed exactly when its file did not fail (a CSV row
        # may still fit in a page the file already has).
        local f
        for f in csv summary; do
                if grep -q "note: $f: " "$T/err"; then
                        check "$f failed: its path is not printed" test -z "$(grep "buildtel: $f: $T/full" "$T/err")"
                else
                        check "$f written: its path is printed" grep -q "buildtel: $f: $T/full" "$T/err"
                fi
        done
        check "the summary did fail here" grep -q "note: summary: No space left" "$T/err"
        umount "$T/full"
}

# 17: --csv-safe writes text a spreadsheet takes for a formula with a
# leading '; without it the CSV keeps the build's text as it was.
case_csvsafe() {
        stage_of() {
                python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(sorted(set(r["stage"] for r in rows if r["stage"]))[0] if rows else "")' "$1"
        }
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id s1 --stage '=HYPERLINK("x")' --interval 0.05 -- sleep 0.2 2>/dev/null
        expect_eq "plain: the stage as given" "$(stage_of "$T/l/resources-s1.csv")" '=HYPERLINK("x")'
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id s2 --csv-safe --stage '=HYPERLINK("x")' --interval 0.05 \
                -- sleep 0.2 2>/dev/null
        expect_eq "--csv-safe: a leading '" "$(stage_of "$T/l/resources-s2.csv")" "'=HYPERLINK(\"x\")"
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id s3 --csv-safe --stage 'app/build' --interval 0.05 \
                -- sleep 0.2 2>/dev/null
        expect_eq "--csv-safe: other text unchanged" "$(stage_of "$T/l/resources-s3.csv")" "app/build"
        local c i=0
        for c in + - @; do
                i=$((i + 1))
                "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id "c$i" --csv-safe --stage "${c}x" --interval 0.05 \
                        -- sleep 0.1 2>/dev/null
                expect_eq "--csv-safe: '$c'" "$(stage_of "$T/l/resources-c$i.csv")" "'${c}x"
        done
        check "the CSV still passes a strict reader" $CSVCHECK strict "$T/l/resources-s2.csv"
}

"case_$case"
finish
