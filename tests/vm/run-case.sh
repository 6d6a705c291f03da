#!/bin/bash
# One buildtel run of tools/vm-check in the guest, as whoever calls it (root
# in vm-check.service, the user through runuser, a User= service or a user
# scope): run-case.sh NAME [BUILDTEL-RUN-OPTION...] -- COMMAND...
# Writes /var/lib/vm-check/NAME/: caller.cgroup (where buildtel started),
# build.cgroup (where the build says it ran: hog and the make case's link
# step write their own /proc/self/cgroup there), buildtel's --log-dir files,
# out.log (its stdout and stderr), rc (its exit status).
set -u
name=$1
shift
d=/var/lib/vm-check/$name
mkdir -p "$d" || exit 1
cat /proc/self/cgroup >"$d/caller.cgroup"
id >"$d/id"
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
done
shift
export VM_CGROUP_FILE=$d/build.cgroup
timeout -k 5 300 /src/buildtel/build/buildtel run --log-dir "$d" --run-id "$name" --no-db \
        --no-report --interval 0.5 --textfile-dir "$d" --near-oom-mb 0 --low-disk-gb 0 \
        "${opts[@]}" -- "$@" >"$d/out.log" 2>&1 </dev/null
rc=$?
echo "$rc" >"$d/rc"
echo "vm-check: $name: exit $rc"
tail -n 8 "$d/out.log"
exit 0
