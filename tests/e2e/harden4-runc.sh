#!/usr/bin/env bash
# Hardening, round 4 (issue 33): a fake runc. An unprivileged user (nobody)
# runs a script named dockerd that starts one named runc with argv
# "runc --bundle DIR run x", and that one a child in a cgroup of its own
# (root moves it there here; a user with a delegated cgroup, as systemd
# gives user@.service, can do it alone). buildtel, as root, following a
# BuildKit build, must neither open DIR/config.json (a FIFO: a hang) nor
# take the step's command from it (a regular file of that user's).
#   fifo        run -- docker ...: finishes promptly with the build's status
#   watch       watch --pid P --stage-log-dir: the same, through watch
#   file        run: the user's config.json names no step
#   root        the control: the same tree run by root is BuildKit's to
#               buildtel, and its step is named from the config.json
# One case per run: harden4-runc.sh CASE.
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4-runc.sh CASE}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (to be the victim, and to make the cgroup)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
getent group nogroup >/dev/null || { echo "SKIP: no group nogroup"; exit 77; }
OWNER=nobody # who runs the fake tree and owns its files
STEP="make h4tok$$" # the step's command: this run's alone (cases run side by side)
asnobody() {
        if [ "$OWNER" = root ]; then "$@"; else setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; fi
}

U=$T/u # the user's directory
CG=()  # the cgroup directories made
FAKE=
cleanup4() {
        [ -n "$FAKE" ] && kill -- -"$FAKE" 2>/dev/null
        sleep 0.2
        for d in "${CG[@]}"; do rmdir "$d/x$$" "$d" 2>/dev/null; done
        cleanup
}
trap cleanup4 EXIT

# mkcg: a cgroup h4r-PID with xPID inside (an exec id unique on the machine)
# under this shell's own, in v1 memory and v2 where mounted: the fake runc's
# child goes into xPID.
mkcg() {
        local id ctl path mnt
        while IFS=: read -r id ctl path; do
                if [ "$id" = 0 ]; then
                        mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
                else
                        case ",$ctl," in *,memory,*) ;; *) continue ;; esac
                        mnt=$(awk '$9 == "cgroup" && ("," $NF ",") ~ /,memory,/ {print $5; exit}' /proc/self/mountinfo)
                fi
                [ -n "$mnt" ] && [ -d "$mnt${path%/}" ] || continue
                mkdir -p "$mnt${path%/}/h4r-$$/x$$" || continue
                CG+=("$mnt${path%/}/h4r-$$")
        done </proc/self/cgroup
        [ ${#CG[@]} -gt 0 ] || { echo "SKIP: cannot make a cgroup"; exit 77; }
}

# fake KIND: the user's dockerd -> runc; runc starts its child once $U/go
# exists (after buildtel did: an exec older than buildtel is never ours).
# KIND fifo: DIR/config.json a FIFO; file: a regular file naming the step.
fake() {
        chmod 711 "$T"
        mkdir -p "$U/b"
        [ "$OWNER" = root ] || chown -R nobody:nogroup "$U"
        if [ "$1" = fifo ]; then
                asnobody mkfifo "$U/b/config.json"
        else
                printf '{"ociVersion":"1.0.2","process":{"args":["/bin/sh","-c","%s"],"cwd":"/"}}\n' "$STEP" |
                        asnobody tee "$U/b/config.json" >/dev/null
        fi
        printf '#!/bin/bash\n"%s/runc" --bundle "%s/b" run x &\nwait\n' "$U" "$U" >"$U/dockerd"
        printf '#!/bin/bash\nwhile [ ! -e "%s/go" ]; do sleep 0.05; done\nsleep 60 &\necho $! >"%s/child.pid"\nwait\n' \
                "$U" "$U" >"$U/runc"
        chmod 755 "$U/dockerd" "$U/runc"
        [ "$OWNER" = root ] || chown nobody:nogroup "$U/dockerd" "$U/runc"
        if [ "$OWNER" = root ]; then
                setsid "$U/dockerd" </dev/null >/dev/null 2>&1 &
        else
                setsid setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/dockerd" </dev/null >/dev/null 2>&1 &
        fi
        FAKE=$!
        mkcg
        for _ in $(seq 100); do pgrep -P "$FAKE" -x runc >/dev/null && break; sleep 0.05; done
        expect_eq "$OWNER's dockerd is named so" "$(cat /proc/$FAKE/comm)" dockerd
        check "it runs a child named runc" test -n "$(pgrep -P "$FAKE" -x runc)"
}

# place: once the child exists, into xPID (a delegated cgroup of the user's)
place() {
        local d
        for _ in $(seq 200); do [ -s "$U/child.pid" ] && break; sleep 0.05; done
        for d in "${CG[@]}"; do cat "$U/child.pid" >"$d/x$$/cgroup.procs"; done
}

# A fake docker client: tells the user's runc to go, prints a BuildKit
# plain log with the RUN step, waits 4 s, exits 3; it has no history.
write_docker() {
        mkdir -p "$T/bin"
        cat >"$T/bin/docker" <<SH
#!/bin/sh
case "\$*" in *history*) exit 1 ;; esac # buildtel asks buildx's history after the build
touch "$U/go"
echo '#1 [internal] load build definition from Dockerfile'
echo '#1 DONE 0.0s'
echo
echo '#4 [1/2] FROM docker.io/local/busybox:latest'
echo '#4 DONE 0.0s'
echo
echo '#5 [2/2] RUN $STEP'
sleep 4
echo '#5 DONE 4.0s'
exit 3
SH
        chmod +x "$T/bin/docker"
}

run_docker() { # run_docker ID: buildtel run around the fake client, timed; sets rc, took
        local t0
        write_docker
        t0=$(now)
        PATH="$T/bin:$PATH" timeout -k 5 30 "$BUILDTEL" run --no-db --interval 0.1 --log-dir "$T/l" \
                --run-id "$1" -- docker buildx build --progress=plain . >"$T/$1.out" 2>"$T/$1.err" &
        local bt=$!
        place
        wait "$bt"
        rc=$?
        took=$(since "$t0")
}

case_fifo() {
        fake fifo
        run_docker f1
        expect_eq "run ends with the build's own status, not a timeout" "$rc" 3
        check "promptly ($took s)" lt "$took" 12
        check "the build's output passed through" grep -qF "RUN $STEP" "$T/f1.out"
        expect_eq "the FIFO is still there, unread" "$(stat -c %F "$U/b/config.json")" fifo
}

case_watch() {
        local t0 wp
        fake fifo
        mkdir -p "$T/sl"
        printf '#5 [2/2] RUN %s\n' "$STEP" >"$T/sl/build.log"
        sleep 5 &
        wp=$!
        t0=$(now)
        timeout -k 5 30 "$BUILDTEL" watch --pid "$wp" --no-db --interval 0.1 --log-dir "$T/l" --run-id w1 \
                --stage-log-dir "$T/sl" >"$T/w1.out" 2>"$T/w1.err" &
        local bt=$!
        sleep 0.5
        touch "$U/go"
        place
        wait "$bt"
        rc=$?
        took=$(since "$t0")
        expect_eq "watch ends with 0, not a timeout" "$rc" 0
        check "promptly ($took s)" lt "$took" 12
        check "it wrote its CSV" test -s "$T/l/resources-w1.csv"
}

case_file() {
        fake file
        run_docker r1
        expect_eq "run ends with the build's own status" "$rc" 3
        check "promptly ($took s)" lt "$took" 12
        local J="$T/l/resources-r1.targets.json" n
        check "targets.json written" test -s "$J"
        n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for s in d.get("buildkit_steps", []) if s.get("exec")))' "$J")
        expect_eq "no step took the user's process as its exec" "$n" 0
        check "the summary measured no step" test -z "$(grep 'RUN steps measured in their exec' "$T/l/resources-r1.summary.txt")"
        check "nor did the terminal" test -z "$(grep 'step peak' "$T/r1.err")"
}

case_root() {
        OWNER=root
        fake file
        run_docker r1
        expect_eq "run ends with the build's own status" "$rc" 3
        local n
        n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for s in d.get("buildkit_steps", []) if s.get("exec")))' "$T/l/resources-r1.targets.json")
        expect_eq "root's tree: the step has its exec" "$n" 1
        check "root's tree: the summary names it" grep -qF "RUN $STEP, target" "$T/r1.err"
}

case "$case" in
fifo | watch | file | root) "case_$case" ;;
*) echo "unknown case $case"; exit 2 ;;
esac
finish
