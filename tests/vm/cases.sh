#!/bin/bash
# tools/vm-check's cases, run at boot by vm-check.service: root, no
# Delegate= (the way CI runner services run), on a pure cgroup v2 guest.
# Each case leaves its files in /var/lib/vm-check/CASE/ (run-case.sh); the
# host reads them back and judges them (tests/vm/check.py). Ends with
# /var/lib/vm-check/done; the unit powers the guest off.
set -u
R=/var/lib/vm-check
L=/usr/local/lib/vm-check
U=vmuser
HOG=/usr/local/bin/hog
exec > >(tee -a "$R/cases.log") 2>&1
uid=$(id -u "$U")
log() { echo "vm-check: +${SECONDS}s $*"; }

# What this guest is: the check means nothing on a hybrid one.
mkdir -p "$R/guest"
uname -r >"$R/guest/uname"
stat -fc %T /sys/fs/cgroup >"$R/guest/cgroupfs"
grep -c ' cgroup ' /proc/mounts >"$R/guest/v1-mounts"
cat /sys/fs/cgroup/cgroup.controllers >"$R/guest/controllers"

# Issue 40's cost: a tick following 20 exec cgroups, beside one following
# none (bench/bkexec.c; a benchmark, not a check: TCG's speed). Booted
# hybrid (tools/vm-check --hybrid-bench), the guest runs it alone.
bench() {
        log "bench-bkexec"
        mkdir -p "$R/bench"
        /src/buildtel/build/bench/bench-bkexec 7 50 >"$R/bench/bkexec.txt" 2>&1
}
if grep -qw 'systemd.unified_cgroup_hierarchy=0' /proc/cmdline; then
        systemctl stop docker.service containerd.service >/dev/null 2>&1 # quiet, as at the end
        bench
        touch "$R/done"
        sync
        exit 0
fi

# The caller's own cgroup, before any case.
self=$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$R/caller"
echo "$self" >"$R/caller/path"
cat "/sys/fs/cgroup$self/cgroup.type" >"$R/caller/type.before"
cat "/sys/fs/cgroup$self/cgroup.subtree_control" >"$R/caller/subtree.before"
log "caller $self: $(cat "$R/caller/type.before"), subtree_control '$(cat "$R/caller/subtree.before")'"

# The user's manager (linger) and its bus.
for _ in $(seq 240); do
        systemctl is-active -q "user@$uid.service" && [ -S "/run/user/$uid/bus" ] && break
        sleep 0.5
done
systemctl is-active "user@$uid.service" >"$R/guest/user-manager" 2>&1
log "user@$uid.service: $(cat "$R/guest/user-manager")"

# The make case's sources: four units of generated C.
M=/var/tmp/vm-make
mkdir -p "$M"
for i in 1 2 3 4; do
        {
                echo "int f$i(int x) { int s = 0;"
                for k in $(seq 300); do echo "s += (x * $k) ^ (s >> $((k % 13)));"; done
                echo "return s; }"
        } >"$M/u$i.c"
done
echo 'int main(void) { return 0; }' >>"$M/u1.c"
printf '%s\n' 'OBJS = u1.o u2.o u3.o u4.o' 'prog: $(OBJS)' \
        '	cat /proc/self/cgroup > "$$VM_CGROUP_FILE"' '	$(CC) -o $@ $(OBJS)' \
        '%.o: %.c' '	$(CC) -O2 -c $< -o $@' >"$M/Makefile"

for c in user-runuser user-service user-scope-memmax; do
        mkdir -p "$R/$c" && chown "$U:" "$R/$c"
done

log "root-300m"
$L/run-case.sh root-300m -- $HOG 300 3
log "root-memmax"
$L/run-case.sh root-memmax --memory-max 100M -- $HOG 300 3
log "root-make"
$L/run-case.sh root-make -- make -C "$M" -j2
log "user-runuser"
runuser -u "$U" -- $L/run-case.sh user-runuser -- $HOG 300 3
log "user-service"
systemctl start vm-user-case.service
systemctl show -p Result vm-user-case.service >"$R/user-service/unit-result"
log "user-scope-memmax"
runuser -u "$U" -- env XDG_RUNTIME_DIR="/run/user/$uid" \
        DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" \
        systemd-run --user --scope -p Delegate=yes --quiet -- \
        $L/run-case.sh user-scope-memmax --memory-max 100M -- $HOG 300 3 \
        >"$R/user-scope-memmax/systemd-run.log" 2>&1
echo $? >"$R/user-scope-memmax/systemd-run.rc"

# The control: from the root cgroup, where buildtel's v2 mode was right
# before issue 19, the same checks pass (else the harness is wrong).
log "control-300m"
(echo "$BASHPID" >/sys/fs/cgroup/cgroup.procs && exec $L/run-case.sh control-300m -- $HOG 300 3)

# A container build as CI runs it (issue "Container builds where CI runs",
# item 1): the guest's dockerd (docker.service, systemd cgroup driver,
# started at boot; tools/vm-check installs it when the host can give one)
# runs one buildx build of three RUN steps in the exec cgroups it makes
# itself (/system.slice/system.slice:docker:<id>, no --cgroup-parent): a
# step holding 300 MiB, a compile, and a dd of 600 MiB in a step whose
# cgroup the watcher caps at 200 MiB, so the kernel kills it. The watcher
# reads the exec cgroups on its own; check.py judges buildtel's steps
# against it and against the kernel's oom-kill lines (dmesg.txt).
if [ -x /opt/docker/usr/bin/docker ]; then
        log "root-docker"
        K=$R/root-docker
        D=/var/tmp/vm-docker
        mkdir -p "$K" "$D"
        printf '%s\n' 'int sq(int x) { return x * x; }' 'int main(void) { return sq(3) - 9; }' >"$D/small.c"
        printf '%s\n' 'FROM local/debian-gcc' 'COPY small.c /src/small.c' \
                'RUN echo vmstep-hold; head -c 300m /dev/zero | tail >/dev/null; sleep 2' \
                'RUN echo vmstep-cc; gcc -O2 -o /tmp/small /src/small.c && /tmp/small; sleep 1' \
                'RUN echo vmstep-oom; sleep 3; dd if=/dev/zero of=/dev/null bs=600M count=1 || echo killed; sleep 1' \
                >"$D/Dockerfile"
        export DOCKER_CONFIG=/etc/vm-docker PATH=/opt/docker/usr/bin:$PATH
        # dockerd starts at boot, alongside the cases above; under TCG it
        # may still be starting. Its own log: /var/lib/vm-check/dockerd.log.
        end=$((SECONDS + 120))
        until timeout 30 docker version >/dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 1; done
        timeout 30 docker info --format '{{.CgroupDriver}} {{.CgroupVersion}} {{.ServerVersion}}' \
                >"$K/docker-info" 2>&1
        log "dockerd: $(cat "$K/docker-info")"
        sync
        $L/docker-watch.py "$K/watch.json" vmstep-hold vmstep-cc vmstep-oom:200M &
        W=$!
        $L/run-case.sh root-docker -- docker buildx build --no-cache --network=none --progress=plain "$D"
        kill "$W"
        wait "$W"
        # BuildKit's own record of each step (issue 40 item 2): under
        # dockerd's systemd driver its samples hold nothing (BuildKit looks
        # for /sys/fs/cgroup/system.slice:docker:<id>, not where the exec
        # is), so the same build again under --cgroup-parent, where they
        # do: its steps measured in their exec cgroups and by BuildKit, for
        # check.py to hold against each other (import-buildx prints the
        # record's), then once more with no exec ours (as with a builder
        # out of reach): its figures are the record's, said so.
        rec() { # CASE [ENV...]: the build under /vmrec, the watcher beside it
                mkdir -p "$R/$1"
                $L/docker-watch.py "$R/$1/watch.json" vmstep-hold vmstep-cc vmstep-oom:200M &
                W=$!
                env "${@:2}" $L/run-case.sh "$1" -- docker buildx build --no-cache --network=none \
                        --cgroup-parent=/vmrec --progress=plain "$D"
                kill "$W"
                wait "$W"
                ref=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["targets"][0]["ref"])' \
                        "$R/$1/resources-$1.targets.json")
                timeout 300 /src/buildtel/build/buildtel import-buildx "$ref" >"$R/$1/record.txt" 2>&1
        }
        log "root-docker-record"
        rec root-docker-record
        log "root-docker-record-fill"
        rec root-docker-record-fill BUILDTEL_TEST_NO_EXECS=1
        ref=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["targets"][0]["ref"])' \
                "$K/resources-root-docker.targets.json")
        timeout 300 /src/buildtel/build/buildtel import-buildx "$ref" >"$K/record.txt" 2>&1
        sync
        # Two builds on the one daemon at once (issue 40): each run follows
        # its own step's exec cgroup, not the other's.
        log "root-docker-two"
        for x in A:200m B:60m; do
                mkdir -p "$D/two${x%%:*}"
                printf '%s\n' 'FROM local/debian-gcc' \
                        "RUN echo vmtwo${x%%:*}; head -c ${x##*:} /dev/zero | tail >/dev/null; sleep 4" \
                        >"$D/two${x%%:*}/Dockerfile"
        done
        mkdir -p "$R/root-docker-two"
        $L/docker-watch.py "$R/root-docker-two/watch.json" vmtwoA vmtwoB &
        W=$!
        $L/run-case.sh root-docker-twoA -- docker buildx build --no-cache --network=none \
                --progress=plain "$D/twoA" &
        A=$!
        $L/run-case.sh root-docker-twoB -- docker buildx build --no-cache --network=none \
                --progress=plain "$D/twoB" &
        wait "$A" $!
        kill "$W"
        wait "$W"
        sync
else
        log "root-docker: no dockerd in this guest"
        mkdir -p "$R/root-docker" && echo "the host gave no dockerd (tools/buildkit)" >"$R/root-docker/skipped"
fi

bench

cat "/sys/fs/cgroup$self/cgroup.type" >"$R/caller/type.after"
cat "/sys/fs/cgroup$self/cgroup.subtree_control" >"$R/caller/subtree.after"
log "caller $self after: $(cat "$R/caller/type.after"), subtree_control '$(cat "$R/caller/subtree.after")'"
journalctl -b --no-pager -o short-monotonic >"$R/journal.txt" 2>&1
dmesg >"$R/dmesg.txt" 2>&1
log "done"
touch "$R/done"
sync
