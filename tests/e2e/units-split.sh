#!/usr/bin/env bash
# One source compiled two ways at once is two units, each with its own peak
# (issue 21: nlohmann/json builds each test for several C++ standards; the
# units table added their peaks, 82 % above the largest process). Checked
# against an independent watcher reading /proc/PID/status every 0.1 s.
. "$(dirname "$0")/lib.sh"
command -v c++ >/dev/null || { echo "no c++ compiler"; exit 77; }
L="$T/logs"
mkdir -p "$T/src"
cd "$T/src" || exit 1
cat >x.cpp <<'CPP'
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>
int main()
{
        std::map<std::string, std::vector<std::regex>> m;
        m["a"].emplace_back("a+b");
        std::cout << std::regex_match("aab", m["a"][0]) << "\n";
}
CPP

# The watcher: the largest VmRSS of each compiler process, by its -std=.
python3 - "$T/watch.txt" "$T/stop" "$T/src" <<'PY' &
import os, sys, time
peak = {}
here = os.path.realpath(sys.argv[3])  # only this test's compilers, not the machine's
while not os.path.exists(sys.argv[2]):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            if comm != "cc1plus" or os.path.realpath(f"/proc/{pid}/cwd") != here:
                continue
            args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            std = [a[5:].decode() for a in args if a.startswith(b"-std=")]
            for line in open(f"/proc/{pid}/status"):
                k = None
                if line.startswith("VmRSS:"):
                    k = std[0] if std else "?"
                elif line.startswith("RssAnon:"):
                    k = "anon"
                if k:
                    peak[k] = max(peak.get(k, 0), int(line.split()[1]) / 1024)
        except OSError:
            pass
    time.sleep(0.1)
with open(sys.argv[1], "w") as f:
    for k, v in peak.items():
        f.write(f"{k} {v:.1f}\n")
PY
watcher=$!

"$BUILDTEL" run --quiet --no-db --no-report --interval 0.1 --log-dir "$L" --run-id s1 -- \
        sh -c 'c++ -std=gnu++11 -c x.cpp -o a.o & c++ -std=gnu++17 -c x.cpp -o b.o & wait'
expect_eq "the build ran" "$?" 0
touch "$T/stop"
wait "$watcher"
U="$L/resources-s1.units.csv"
cat "$U" "$T/watch.txt"
expect_eq "two units of x.cpp" "$(grep -c ',x.cpp \[' "$U")" 2
for std in gnu++11 gnu++17; do
        got=$(awk -F, -v n="x.cpp [$std]" '$3 == n {print $6}' "$U")
        want=$(awk -v s="$std" '$1 == s {print $2}' "$T/watch.txt")
        echo "$std: buildtel ${got:-none} MiB, the watcher's cc1plus ${want:-none} MiB"
        check "x.cpp [$std] is a unit" test -n "$got"
        check "the watcher saw the $std compile" test -n "$want"
        # Its own peak: the compiler (and its small driver), not both compiles.
        check "x.cpp [$std]'s peak is its compiler's (>= 80 %)" \
                ge "$got" "$(awk -v w="${want:-0}" 'BEGIN{print 0.8 * w}')"
        check "x.cpp [$std]'s peak is not two compiles' (<= watcher + 16 MiB)" \
                ge "$(awk -v w="${want:-0}" 'BEGIN{print w + 16}')" "${got:-1e9}"
done
# The largest process's own anon beside its RSS (never above it), as the
# watcher's largest RssAnon of a compiler.
anon=$(python3 -c 'import csv,sys; print(max([float(r["top_proc_anon_mb"]) for r in csv.DictReader(open(sys.argv[1])) if r["top_proc_anon_mb"]] or [0]))' "$L/resources-s1.csv")
want=$(awk '$1 == "anon" {print $2}' "$T/watch.txt")
echo "largest process's anon: buildtel $anon MiB, the watcher's largest RssAnon ${want:-none} MiB"
check "top_proc_anon_mb is the compiler's RssAnon (within 20 % / 8 MiB)" python3 - "$anon" "${want:-0}" <<'PY'
import sys
got, want = map(float, sys.argv[1:])
sys.exit(not (want > 0 and 0.8 * want - 8 <= got <= want + 8))
PY
check "top_proc_anon_mb is never above top_proc_mb" python3 - "$L/resources-s1.csv" <<'PY'
import csv, sys
sys.exit(any(r["top_proc_anon_mb"] and float(r["top_proc_anon_mb"]) > float(r["top_proc_mb"]) + 0.1
             for r in csv.DictReader(open(sys.argv[1]))))
PY
check "the running column names both, once: x.cpp x2" python3 - "$L/resources-s1.csv" <<'PY'
import csv, sys
r = [row["running"] for row in csv.DictReader(open(sys.argv[1]))]
sys.exit("x.cpp x2" not in r)
PY
finish
