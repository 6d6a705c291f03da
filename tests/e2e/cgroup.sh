#!/usr/bin/env bash
# The build's own accounting on the real cgroups of this machine: fidelity
# of CPU, memory peak and IO, the process tree, OOM kills under
# --memory-max, clean-up, and each mode the machine supports.
. "$(dirname "$0")/lib.sh"
: "${CGLOAD:?CGLOAD must name the cgload helper}"
L="$T/logs"
if [ "$(id -u)" != 0 ]; then echo "needs root to make cgroups (uid $(id -u))"; exit 77; fi
if ! grep -q cgroup /proc/self/mountinfo; then echo "no cgroup filesystem mounted"; exit 77; fi
# Files are plain CSV/JSON; j FILE PATH prints one value.
j() { $CSVCHECK json-get "$1" "$2"; }
# cpu RUNID: the build's user + system CPU; cgload burn counts its own
# process CPU time (CLOCK_PROCESS_CPUTIME_ID), user and system alike (the
# loop's clock_gettime calls are system time, and on a loaded host the
# interrupts a tick lands in too: user alone was 0.44 s of a 0.5 s burn
# once in CI).
cpu() { awk -v u="$(j "$L/resources-$1.summary.json" build.cpu_user_s)" \
        -v s="$(j "$L/resources-$1.summary.json" build.cpu_sys_s)" 'BEGIN { printf "%.3f", u + s }'; }
near() { awk -v x="$1" -v w="$2" -v f="$3" 'BEGIN{d=x-w; if(d<0)d=-d; exit !(d <= f*w)}'; }
# Run ids carry our pid: other suites may run this test at the same time.
P="e$$"
cgdirs() { find /sys/fs/cgroup -mindepth 1 -type d -name "run-$P$1-*" 2>/dev/null; }
# Alive and not a zombie (pid 1 here may be slow to reap what it inherits).
alive() { local st; st=$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null); [ -n "$st" ] && [ "$st" != Z ]; }
run() { "$BUILDTEL" run --quiet --no-db --log-dir "$L" "$@"; }

mode=$(run --run-id probe -- true; j "$L/resources-probe.summary.json" build.mode)
echo "auto picks: $mode"
hybrid=0; v1=0
grep -q " - cgroup2 " /proc/self/mountinfo && grep -q " - cgroup .*[ ,]memory" /proc/self/mountinfo && hybrid=1
grep -q " - cgroup .*[ ,]memory" /proc/self/mountinfo && v1=1

# Fidelity: 512 MiB touched, then exit, with no tick inside. The kernel's
# peak catches it; the baseline is the same program touching nothing. The
# interval is far longer than the touch (a loaded CI host once took over
# 5 s to touch it, and a tick fell inside).
run --run-id base --interval 60 -- "$CGLOAD" alloc 0
base=$(j "$L/resources-base.summary.json" build.mem_peak_mb.value)
run --run-id m512 --interval 60 -- "$CGLOAD" alloc 512
peak=$(j "$L/resources-m512.summary.json" build.mem_peak_mb.value)
want=$(awk -v b="$base" 'BEGIN{print 512 + b}')
check "memory peak $peak MiB within 5% of 512 + baseline $base MiB" near "$peak" "$want" 0.05
rows=$($CSVCHECK stat "$L/resources-m512.csv" epoch count)
expect_eq "no tick fell inside: the start and the final sample only" "$rows" 2

run --run-id burn --interval 5 -- "$CGLOAD" burn 2.0
cpu=$(cpu burn)
check "2.0 s of CPU burned: $cpu s counted, within 5%" near "$cpu" 2.0 0.05

run --run-id io --interval 5 -- "$CGLOAD" write 256 "$T/w.dat"
wr=$(j "$L/resources-io.summary.json" build.io_write_mb)
rm -f "$T/w.dat"
check "256 MiB written with fsync: $wr MiB counted (>= 95%)" ge "$wr" 243.2

# Process tree: a double-forked grandchild is the build's too.
run --run-id dfork --interval 5 -- "$CGLOAD" dfork 1 200
# cgload burns 1 s of the process's CPU time, user and system together
# (CLOCK_PROCESS_CPUTIME_ID): under load the kernel's tick-based split put
# 6 % of it in system time (user 0.941 s in a suite at 3 at once).
cpu=$(cpu dfork)
peak=$(j "$L/resources-dfork.summary.json" build.mem_peak_mb.value)
check "double-forked grandchild: its CPU counted ($cpu s, user and system)" ge "$cpu" 0.95
check "double-forked grandchild: its memory counted ($peak MiB)" ge "$peak" 200

# summarize gives the run's own JSON, cgroup columns and all.
"$BUILDTEL" summarize --json "$L/resources-dfork.csv" >"$T/d.json"
check "summarize == the run's JSON with the build's figures" $CSVCHECK json-equal "$T/d.json" "$L/resources-dfork.summary.json"

# A CSV of an older buildtel (the seed's 14 columns) still summarizes.
cut -d, -f1-14 "$L/resources-burn.csv" >"$T/old.csv"
"$BUILDTEL" summarize --json "$T/old.csv" >"$T/old.json" 2>"$T/old.err"
expect_eq "a 14-column CSV summarizes" "$?" 0
expect_eq "... with no build figures" "$(j "$T/old.json" build)" "None"

# --cgroup=none: children that exited, and orphans, still count.
run --cgroup=none --run-id none1 --interval 5 -- sh -c "'$CGLOAD' burn 1; '$CGLOAD' burn 0.5"
cpu=$(cpu none1)
check "none: exited children's CPU counted ($cpu s of 1.5)" near "$cpu" 1.5 0.05
run --cgroup=none --run-id none2 --interval 5 -- "$CGLOAD" dfork 1 10
cpu=$(cpu none2)
check "none: an orphaned grandchild's CPU counted ($cpu s)" ge "$cpu" 0.95
expect_eq "none: marked as estimates" "$(j "$L/resources-none2.summary.json" build.estimates)" '["cpu", "memory", "io", "pids"]'
check "none: the summary text says estimates" grep -q "estimates" "$L/resources-none2.summary.txt"
"$BUILDTEL" run --no-db --log-dir "$L" --run-id none3 --cgroup=none --memory-max 1G -- true 2>"$T/e"
expect_eq "none with --memory-max: refused" "$?" 125

# OOM: capped at 256M, a process growing to 1 GiB is killed in the cgroup.
"$BUILDTEL" run --no-db --log-dir "$L" --run-id oom --interval 0.05 --memory-max 256M -- "$CGLOAD" grow 1024 >"$T/o" 2>"$T/oom.err"
expect_eq "--memory-max 256M, 1 GiB: exit 137" "$?" 137
expect_eq "oom_kills = 1" "$(j "$L/resources-oom.summary.json" build.oom_kills)" 1
expect_eq "the victim is named" "$(j "$L/resources-oom.summary.json" build.oom_events.0.victim.label)" "cgload grow 1024"
check "a warning on stderr at once" grep -q "warning: OOM kill in the build's cgroup (1 so far)" "$T/oom.err"
check "the victim in the short summary" grep -Eq "victim( \(the kernel's report\)| \(last seen\))?: cgload grow 1024" "$T/oom.err"
peak=$(j "$L/resources-oom.summary.json" build.mem_peak_mb.value)
check "the peak stays at the cap ($peak MiB)" near "$peak" 256 0.02

# The name the build's own process ended under, read from its zombie: a
# wrapper script that exec'd the work is named by the work (with no kernel
# report to read, the summary names the SIGKILLed build by it).
run --run-id ec -- sh -c "exec '$CGLOAD' alloc 0"
expect_eq "run.json: the exec'd name the build ended under" "$(j "$L/resources-ec.run.json" exit_comm)" cgload

# The culprit at the peak: the largest process, labelled.
run --run-id top --interval 0.05 -- sh -c "'$CGLOAD' grow 160"
expect_eq "the culprit at the peak" "$(j "$L/resources-top.summary.json" build.mem_peak_mb.process.label)" "cgload grow 160"
expect_eq "top_proc column" "$($CSVCHECK stat "$L/resources-top.csv" top_proc last-str)" ""
check "top_proc column names it while it runs" grep -q "cgload grow 160" "$L/resources-top.csv"

# compilers counts the build's own processes, not the host's.
cp /bin/sleep "$T/cc1plus"
"$T/cc1plus" 30 &
outside=$!
run --run-id comp --interval 0.05 -- sh -c "'$T/cc1plus' 0.4"
kill $outside
expect_eq "compilers: only the build's cc1plus" "$($CSVCHECK stat "$L/resources-comp.csv" compilers max)" 1.0

# Each mode this machine supports, for real.
if [ $hybrid = 1 ]; then
        run --cgroup=hybrid --run-id mh --interval 5 -- sh -c "'$CGLOAD' burn 0.5; '$CGLOAD' alloc 100"
        expect_eq "hybrid: mode" "$(j "$L/resources-mh.summary.json" build.mode)" hybrid
        check "hybrid: cpu ($(cpu mh) s)" ge "$(cpu mh)" 0.45
        check "hybrid: memory" ge "$(j "$L/resources-mh.summary.json" build.mem_peak_mb.value)" 100
        expect_eq "hybrid: the build's own pressure" "$(j "$L/resources-mh.summary.json" build.pressure.source)" cgroup
fi
if [ $v1 = 1 ]; then
        run --cgroup=v1 --run-id m1 --interval 5 -- sh -c "'$CGLOAD' burn 0.5; '$CGLOAD' alloc 100"
        expect_eq "v1: mode" "$(j "$L/resources-m1.summary.json" build.mode)" v1
        check "v1: cpu from cpuacct ($(cpu m1) s)" ge "$(cpu m1)" 0.45
        check "v1: memory" ge "$(j "$L/resources-m1.summary.json" build.mem_peak_mb.value)" 100
        expect_eq "v1: pressure is host-wide" "$(j "$L/resources-m1.summary.json" build.pressure.source)" host
fi
if grep -q " - cgroup2 " /proc/self/mountinfo; then
        "$BUILDTEL" run --no-db --log-dir "$L" --cgroup=v2 --run-id m2 --interval 5 -- "$CGLOAD" burn 0.5 2>"$T/v2.err"
        expect_eq "v2: mode" "$(j "$L/resources-m2.summary.json" build.mode)" v2
        check "v2: cpu from cpu.stat ($(cpu m2) s)" ge "$(cpu m2)" 0.45
        if [ $hybrid = 1 ]; then
                check "v2 on a hybrid host: says memory stays empty" grep -q "no memory controller" "$T/v2.err"
        fi
fi

# Clean-up: nothing left after 100 runs ...
for i in $(seq 1 100); do run --run-id "${P}c$i" -- true || break; done
expect_eq "100 runs: all exit 0" "$i" 100
expect_eq "100 runs: no cgroup left" "$(for i in $(seq 1 100); do cgdirs "c$i"; done | wc -l)" 0
# ... nor after SIGTERM, and what the build left running goes with it.
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id "${P}term" --interval 0.1 -- sh -c 'sleep 300 & sleep 300' &
bt=$!
for _ in $(seq 1 50); do [ -n "$(cgdirs term)" ] && break; sleep 0.1; done
check "the run's cgroup exists while it runs" test -n "$(cgdirs term)"
procs=$(cat $(cgdirs term | head -1)/cgroup.procs 2>/dev/null | tr '\n' ' ')
kill -TERM $bt
wait $bt
expect_eq "after SIGTERM: no cgroup left" "$(cgdirs term | wc -l)" 0
left=0; for p in $procs; do alive "$p" && left=$((left + 1)); done
expect_eq "after SIGTERM: the build's processes are gone" "$left" 0
# A SIGKILLed buildtel's build runs on (issue 20 M4): the next, unrelated
# run leaves its cgroup alone and says so; once empty, a later run removes it.
trap 'unisolate; cleanup' EXIT
isolate || { echo "cannot make a private cgroup for the test"; exit 77; }
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id "${P}killed" --interval 0.1 -- sleep 30 &
bt=$!
# Its build has joined: the cgroup is made before the build is spawned.
for _ in $(seq 1 50); do [ -n "$(cgdirs killed)" ] && [ -n "$(cat "$(cgdirs killed | head -1)/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.1; done
procs=$(cat $(cgdirs killed | head -1)/cgroup.procs 2>/dev/null | tr '\n' ' ')
kill -KILL $bt
wait $bt 2>/dev/null
check "a SIGKILLed run leaves its cgroup" test -n "$(cgdirs killed)"
"$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}next" -- true >/dev/null 2>"$T/next.err"
left=0; for p in $procs; do alive "$p" && left=$((left + 1)); done
expect_eq "the next run does not kill the orphaned build (sleep 30 alive)" "$left" 1
check "... says so" grep -q "run-${P}killed-$bt of a buildtel that is gone still holds processes" "$T/next.err"
check "... and leaves its cgroup" test -n "$(cgdirs killed)"
for p in $procs; do kill "$p" 2>/dev/null; done
for _ in $(seq 1 50); do left=0; for p in $procs; do alive "$p" && left=1; done; [ $left = 0 ] && break; sleep 0.1; done
run --run-id "${P}next2" -- true
expect_eq "once empty, a later run removes it" "$(cgdirs killed | wc -l)" 0
unisolate
trap cleanup EXIT

# L7: a cgroup below the run's own (a nested buildtel SIGKILLed inside the
# build) goes with the run.
run --run-id "${P}outer" -- sh -c "'$BUILDTEL' run --quiet --no-db --log-dir '$L' --run-id ${P}inner -- sleep 30 & sleep 1; kill -9 \$!"
expect_eq "nested: the inner run's cgroup is gone with the outer's" "$(cgdirs inner | wc -l)" 0
expect_eq "nested: the outer's too" "$(cgdirs outer | wc -l)" 0

# A forced join failure: the run falls back to none with one note, and its
# figures are the tree's, not zeros.
BUILDTEL_TEST_CGROUP_UNJOINABLE=1 "$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}uj" --interval 5 -- "$CGLOAD" burn 0.5 >/dev/null 2>"$T/uj.err"
expect_eq "unjoinable: the build's status" "$?" 0
expect_eq "unjoinable: one note" "$(grep -c "could not join its cgroup" "$T/uj.err")" 1
expect_eq "unjoinable: mode none" "$(j "$L/resources-${P}uj.summary.json" build.mode)" none
check "unjoinable: cpu counted from the tree ($(cpu "${P}uj") s)" ge "$(cpu "${P}uj")" 0.45
check "unjoinable: the summary says estimates" grep -q "estimates" "$L/resources-${P}uj.summary.txt"
expect_eq "unjoinable: no cgroup left" "$(cgdirs uj | wc -l)" 0
BUILDTEL_TEST_CGROUP_UNJOINABLE=1 "$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}ujm" --memory-max 1G -- sleep 5 >/dev/null 2>"$T/ujm.err"
expect_eq "unjoinable with --memory-max: 125" "$?" 125
check "... says the limit cannot hold" grep -q "no memory limit holds" "$T/ujm.err"

# An OOM kill before the first tick: the kernel's report names the victim.
if [ -r /dev/kmsg ]; then
        "$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}oomfast" --interval 5 --memory-max 100M -- "$CGLOAD" grow 1024 >/dev/null 2>"$T/of.err"
        expect_eq "fast OOM: 137" "$?" 137
        expect_eq "fast OOM: the victim from the kernel" "$(j "$L/resources-${P}oomfast.summary.json" build.oom_events.0.victim.label)" cgload
        expect_eq "fast OOM: ... said so" "$(j "$L/resources-${P}oomfast.summary.json" build.oom_events.0.victim_source)" kernel
        check "fast OOM: named in the short summary" grep -q "victim (the kernel's report): cgload (pid" "$T/of.err"
fi

# Daemons the build started that detached keep running (issue 20); with
# --kill-leftovers they go.
if command -v sccache >/dev/null; then
        export SCCACHE_DIR="$T/sccache"
        sccache_start "$T/sc.err" "$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}sc" -- sccache --start-server
        expect_eq "the server started (the build's status)" "$?" 0
        spid=$(grep -o "left running: sccache (pid [0-9]*)" "$T/sc.err" | grep -o "[0-9]*")
        check "the sccache server is named as left running" test -n "$spid" || sed 's/^/# /' "$T/sc.err"
        check "... and runs on" alive "${spid:-0}"
        check "... outside the build's cgroup" test -z "$(grep "run-${P}sc" "/proc/${spid:-0}/cgroup" 2>/dev/null)"
        expect_eq "... whose cgroup is gone" "$(cgdirs sc | wc -l)" 0
        check "sccache --stop-server stops it" sh -c 'sccache --stop-server >/dev/null 2>&1'
        sccache_start "$T/sck.err" "$BUILDTEL" run --no-db --log-dir "$L" --run-id "${P}sck" --kill-leftovers -- sccache --start-server
        expect_eq "--kill-leftovers: the server started (the build's status)" "$?" 0
        check "--kill-leftovers: no note" test -z "$(grep "left running" "$T/sck.err")"
        check "--kill-leftovers: the server is gone" sh -c '! sccache --stop-server >/dev/null 2>&1'
        unset SCCACHE_DIR SCCACHE_SERVER_PORT
else
        echo "sccache is not installed: the leftover-daemon case is not run"
fi
finish
