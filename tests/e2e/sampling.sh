#!/usr/bin/env bash
# Real sampling of a real machine: memory that a child touches shows up,
# compilers are counted by name, and the final sample follows the exit.
. "$(dirname "$0")/lib.sh"
L="$T/logs"

"$BUILDTEL" run --quiet --log-dir "$L" --run-id mem --interval 0.1 -- "$MEMHOG" 1024 1 >/dev/null
expect_eq "memhog status" "$?" 0
rise=$($CSVCHECK stat "$L/resources-mem.csv" mem_used_mb rise)
check "mem_used rises by at least 0.9 GiB while 1 GiB is touched (rose $rise MiB)" ge "$rise" 921.6
rows=$($CSVCHECK stat "$L/resources-mem.csv" epoch count)
check "about 10 samples a second for ~1 s ($rows rows)" ge "$rows" 8
peak=$($CSVCHECK json-get "$L/resources-mem.summary.json" memory.peak_used_mb.value)
max=$($CSVCHECK stat "$L/resources-mem.csv" mem_used_mb max)
check "summary peak equals the CSV maximum ($peak vs $max)" awk -v a="$peak" -v b="$max" 'BEGIN{exit !(a == b)}'

mkdir -p "$T/bin"
cp "$(command -v sleep)" "$T/bin/cc1plus"
"$BUILDTEL" run --quiet --log-dir "$L" --run-id cc --interval 0.1 -- "$T/bin/cc1plus" 0.6
n=$($CSVCHECK stat "$L/resources-cc.csv" compilers max)
check "a process named cc1plus is counted ($n)" ge "$n" 1
last=$($CSVCHECK stat "$L/resources-cc.csv" compilers last)
expect_eq "the final sample, after the exit, counts no cc1plus of ours" "$last" "0.0"

cp "$(command -v sleep)" "$T/bin/mycc"
"$BUILDTEL" run --quiet --log-dir "$L" --run-id cc2 --interval 0.1 --compilers mycc,other -- "$T/bin/mycc" 0.5
n=$($CSVCHECK stat "$L/resources-cc2.csv" compilers max)
check "--compilers adds names ($n)" ge "$n" 1

# No fork or exec per tick: 2 s at 0.05 s, the build is the only child.
"$BUILDTEL" run --quiet --log-dir "$L" --run-id nofork --interval 0.05 -- sleep 2 &
bt=$!
sleep 1
kids=$(ps -o pid= --ppid $bt | wc -l)
wait $bt
expect_eq "buildtel has only the build as a child while sampling" "$kids" 1
rows=$($CSVCHECK stat "$L/resources-nofork.csv" epoch count)
check "interval 0.05 over 2 s gives about 40 rows ($rows)" ge "$rows" 35

# The last row is the final sample, taken right after the exit.
el=$($CSVCHECK stat "$L/resources-nofork.csv" elapsed_s last)
check "final sample at the exit ($el s)" ge "$el" 2.0
cpu=$($CSVCHECK stat "$L/resources-nofork.csv" cpu_pct max)
check "cpu_pct within 0..100 ($cpu)" awk -v c="$cpu" 'BEGIN{exit !(c >= 0 && c <= 100)}'
finish
