#!/usr/bin/env bash
# A compile with warnings: the context stays the work line (issue 21: the
# (the warnings come after the work line has stopped holding the context)
# context read `while |             ^~~~~~~~`, a gcc gutter line).
. "$(dirname "$0")/lib.sh"
command -v c++ >/dev/null || { echo "no c++ compiler"; exit 77; }
L="$T/logs"
mkdir -p "$T/src"
cd "$T/src" || exit 1
cat >w.h <<'CPP'
static int unused_in_header(int a) { int b = a; return 0; }
CPP
cat >w.cpp <<'CPP'
#include "w.h"
int f(int x)
{
        int y = 0;
        while (x = x - 1)
                ;
        return x;
}
CPP
"$BUILDTEL" run --quiet --no-db --no-report --interval 0.1 --log-dir "$L" --run-id d1 -- \
        sh -c 'echo "[1/2] Building CXX object w.o"; sleep 0.5; c++ -Wall -Wextra -c w.cpp -o w.o; sleep 0.5'
expect_eq "the build ran" "$?" 0
C="$L/resources-d1.csv"
check "the compiler warned (the test has diagnostics to ignore)" python3 - "$L" <<'PY'
import glob, sys
logs = glob.glob(sys.argv[1] + "/*.log")
sys.exit(not any("warning:" in open(f, errors="replace").read() for f in logs))
PY
check "no row's context is a diagnostic, and the last is the work line" python3 - "$C" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ctx = [r["context"] for r in rows]
print(sorted(set(ctx)))
bad = [c for c in ctx if re.search(r"warning:|\^~|^\s*\||In file included|note:|\d+ \|", c)]
sys.exit(bool(bad) or not rows or ctx[-1] != "[1/2] Building CXX object w.o")
PY
finish
