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

"case_$case"
finish
