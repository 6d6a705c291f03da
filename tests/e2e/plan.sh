#!/usr/bin/env bash
# buildtel plan (issue 37): a real CMake + ninja project with two heavy
# sources (a large initializer: cc1plus needs about twice the others) in
# their own target beside four light ones, built once under buildtel to
# fill the job's ledger; the plan for a memory where the heavy ones may not
# all run at once must name them, pool them, and its CMake snippet, pasted
# into CMakeLists.txt, must put exactly their compiles in a ninja pool and
# still build.
. "$(dirname "$0")/lib.sh"
need_root "the kernel's accounting of processes (taskstats): exact units"
for t in cmake ninja g++; do
        command -v $t >/dev/null || { echo "$t is missing (tools/deps.sh installs it)"; exit 77; }
done
P=$T/p
mkdir -p "$P"
cd "$P" || exit 1
for h in 1 2; do
        /usr/bin/python3 -c "print('int big$h[] = {' + ','.join(str(i) for i in range(150000)) + '};')" \
                >heavy$h.cpp
done
for l in 1 2 3; do echo "int light$l(int x) { return x + $l; }" >light$l.cpp; done
echo 'int main() { return 0; }' >main.cpp
cat >CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.16)
project(plantest CXX)
add_library(heavylib STATIC heavy1.cpp heavy2.cpp)
add_executable(app main.cpp light1.cpp light2.cpp light3.cpp)
target_link_libraries(app heavylib)
CM
cmake -G Ninja -S . -B b >"$T/cmake.log" 2>&1 || { cat "$T/cmake.log"; exit 1; }
"$BUILDTEL" run --quiet --job plantest --db "$T/h.db" --log-dir "$T/l" --run-id p1 -- ninja -C b -j1 >/dev/null
expect_eq "the build under buildtel" "$?" 0
check "its units are exact (taskstats)" grep -q ',taskstats,' "$T/l/resources-p1.units.csv" ||
        { echo "no exact units: the kernel's accounting is not ours here"; exit 77; }

# a memory where the two heavy ones cannot run together beside the rest:
# the heaviest, and three light ones, and a MiB
read -r M < <(/usr/bin/python3 - "$T/l/resources-p1.units.csv" <<'PY'
import csv, os, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "compile"]
heavy = sorted(float(r["peak_mb"]) for r in rows if os.path.basename(r["name"]).startswith("heavy"))
light = sorted(float(r["peak_mb"]) for r in rows if not os.path.basename(r["name"]).startswith("heavy"))
print("# heavy", heavy, "light", light, file=sys.stderr)
print(int(heavy[-1] + 3 * light[-1] + 1 + 10))
PY
)
"$BUILDTEL" plan --db "$T/h.db" --job plantest --memory "${M}M" --cpus 4 --headroom 10M >"$T/plan.txt" 2>&1
expect_eq "plan exits 0" "$?" 0
cat "$T/plan.txt"
"$BUILDTEL" plan --db "$T/h.db" --memory "${M}M" --cpus 4 --headroom 10M --json >"$T/plan.json"
check "plan --json: the -j that fits is below 4, a pool lets 4 run, the heavy ones are the two" \
        /usr/bin/python3 - "$T/plan.json" <<'PY'
import json, os, sys
p = json.load(open(sys.argv[1]))
names = sorted(os.path.basename(h["name"]) for h in p["heavy"])
print("#", p["j_fit"], p["pool_depth"], p["j_with_pool"], names)
sys.exit(not (p["job"] == "plantest" and p["j_fit"] < 4 and p["pool_depth"] >= 1 and
              p["j_with_pool"] == 4 and names == ["heavy1.cpp", "heavy2.cpp"] and
              p["steps"][0]["fits"] and not p["steps"][3]["fits"]))
PY
check "the text names the -j that fits and the pool" grep -q "^heavy units (each above its share" "$T/plan.txt"
check "the CMake snippet: JOB_POOLS" grep -q '^set_property(GLOBAL APPEND PROPERTY JOB_POOLS heavy=1)$' "$T/plan.txt"
check "the CMake snippet: their target (CMake before 4.2)" \
        grep -q '^set_property(TARGET "heavylib" PROPERTY JOB_POOL_COMPILE heavy)$' "$T/plan.txt"
check "the CMake snippet: their sources (CMake 4.2)" grep -q "^set_property(SOURCE \"$P/heavy[12].cpp\" \"$P/heavy[12].cpp\" PROPERTY JOB_POOL_COMPILE heavy)$" "$T/plan.txt"

# pasted: only the heavy compiles in the pool, and it builds
sed -n '/^CMake (CMakeLists.txt/,/^$/p' "$T/plan.txt" | sed 1d >>CMakeLists.txt
cmake -S . -B b >>"$T/cmake.log" 2>&1
expect_eq "cmake takes the pasted snippet" "$?" 0
check "build.ninja (its rules): the pool, depth 1" sh -c "cat b/build.ninja b/CMakeFiles/rules.ninja | grep -A1 '^pool heavy$' | grep -q 'depth = 1'"
check "build.ninja: the heavy compiles in it, no other" /usr/bin/python3 - b/build.ninja <<'PY'
import re, sys
edges = re.split(r"\n(?=build )", open(sys.argv[1]).read())
pooled = sorted(re.match(r"build (\S+)", e).group(1) for e in edges if re.search(r"^  pool = heavy$", e, re.M))
print("#", pooled)
sys.exit(not (len(pooled) == 2 and all("heavylib.dir/heavy" in p for p in pooled)))
PY
ninja -C b -t clean >/dev/null && ninja -C b -j4 >"$T/ninja.log" 2>&1
expect_eq "and the project builds with it" "$?" 0
"$BUILDTEL" plan --db "$T/h.db" --job no-such-job >"$T/none.txt" 2>&1
expect_eq "a job with no runs: exit 1" "$?" 1
check "with one line that says so" grep -q "^buildtel plan: job 'no-such-job' has no measured units" "$T/none.txt"
finish
