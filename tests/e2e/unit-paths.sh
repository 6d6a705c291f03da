#!/bin/bash
# Unit names relative to the project (issue 26): a real out-of-tree ninja
# build, its build directory two levels below the project (cc -c
# ../../src/util.c, as meson and cmake write it), with a second source
# directory holding a file of the same name (lib/util.c), a source given
# with ./ and a/../ parts, and one given absolute. buildtel resolves each
# against the compiler's cwd: the summary, the report and `summarize` name
# the units without ../, the two util.c apart, and summary.json and
# units.csv keep the name as given and the resolved path. Run from the
# project (names below it) and from the build dir (the project is then the
# common directory of the sources). Then ../x.c compiled in a/build and in
# b/build is two units, a/x.c and b/x.c, and src/main.c reached from two
# directories one.
. "$(dirname "$0")/lib.sh"
command -v ninja >/dev/null || { echo "ninja is missing"; exit 77; }
command -v cc >/dev/null || { echo "cc is missing"; exit 77; }
mkdir -p "$T/proj"
P=$(realpath "$T/proj") # what /proc/PID/cwd reads
L=$T/logs
mkdir -p "$P/src/gen" "$P/lib" "$P/out/sub" "$L"
# (ninja cleans the paths of \$in: the dotted one is in its command)
# a unit that takes a compiler a few tenths of a second: many functions
gen() { # gen FILE FUNCTIONS
        awk -v n="$2" -v p="f$RANDOM" 'BEGIN { for (i = 0; i < n; i++)
                printf "int %s_%d(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * %d ^ (s >> 3); return s; }\n", p, i, i
        }' >"$1"
}
gen "$P/src/util.c" 800
gen "$P/lib/util.c" 800
gen "$P/src/main.c" 800
gen "$P/src/extra.c" 800
gen "$P/src/abs.c" 800
cat >"$P/out/sub/build.ninja" <<NINJA
rule cc
  command = cc -O0 -c \$in -o \$out
build util.o: cc ../../src/util.c
build lutil.o: cc ../../lib/util.c
build main.o: cc ../../src/main.c
rule cc_dotted
  command = cc -O0 -c ../../src/./gen/../extra.c -o \$out
build extra.o: cc_dotted
build abs.o: cc $P/src/abs.c
NINJA

names() { # names SUMMARY.txt: the unit names of its units section
        sed -n '/^units (top/,/^$/p' "$1" | awk 'NR > 1 && NF >= 4 { print $4 }' | sort
}
want=$(printf '%s\n' abs.c extra.c lib/util.c main.c src/util.c | sort)

# 1: from the project's root
(cd "$P" && "$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id root --interval 0.05 \
        -- ninja -C out/sub -j 2 >"$T/out" 2>"$T/err")
expect_eq "the build exits 0" "$?" 0
S=$L/resources-root.summary.txt
sed -n '/^units (top/,/^$/p' "$S"
got=$(names "$S")
expect_eq "the summary's unit names, below the project" "$(echo $got)" "$(echo $want)"
check "no unit name with ../" bash -c '! sed -n "/^units (top/,/^\$/p" "$1" | grep -q "\.\./"' _ "$S"
U=$L/resources-root.units.csv
cat "$U"
row() { grep "^compile,cc1,$1," "$U" | grep -c ",$2"; }
expect_eq "units.csv keeps the name as given and the path" "$(row '\.\./\.\./lib/util\.c' "$P/lib/util\.c")" 1
expect_eq "units.csv: ./ and a/../ resolved" "$(row '\.\./\.\./src/\./gen/\.\./extra\.c' "$P/src/extra\.c")" 1
python3 - "$L/resources-root.summary.json" "$P" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); p = sys.argv[2]
u = {x["path"]: x["name"] for x in s["units"] if x["tool"] == "cc1"}
print(u)
ok = u.get(p + "/lib/util.c") == "../../lib/util.c" and u.get(p + "/src/util.c") == "../../src/util.c" \
    and u.get(p + "/src/abs.c") == p + "/src/abs.c" \
    and u.get(p + "/src/extra.c") == "../../src/./gen/../extra.c"
print("ok   summary.json: name as given, resolved path" if ok else "FAIL summary.json: " + repr(u))
sys.exit(0 if ok else 1)
PY
expect_eq "summary.json keeps both" "$?" 0
R=$L/report-root.html
check "the report's units table: lib/util.c, its path on hover" \
        grep -q "<td title=\"$P/lib/util.c\">lib/util.c</td>" "$R"
check "the report's units table: src/util.c" grep -q ">src/util.c</td>" "$R"
check "the report names no unit with ../" bash -c '! grep -o "<td title=\"[^\"]*\">[^<]*</td>" "$1" | grep -q ">[^<]*\.\./"' _ "$R"
# recomputed from the files: the same names
(cd "$P" && "$BUILDTEL" summarize "$L/resources-root.csv" >"$T/re.txt" 2>"$T/re.err")
expect_eq "summarize exits 0" "$?" 0
expect_eq "summarize names them as the run did" "$(names "$T/re.txt" | xargs)" "$(echo $want)"

# 2: from the build dir: every source is outside it, so the project is
# their common directory
ninja -C "$P/out/sub" -t clean >/dev/null
(cd "$P/out/sub" && "$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id sub --interval 0.05 \
        -- ninja -j 2 >"$T/out" 2>"$T/err")
expect_eq "the build from the build dir exits 0" "$?" 0
sed -n '/^units (top/,/^$/p' "$L/resources-sub.summary.txt"
expect_eq "the names from the build dir" "$(names "$L/resources-sub.summary.txt" | xargs)" \
        "$(echo $want)"

# 3: one text, two files (../x.c from a/build and from b/build), and one
# file reached two ways (../../src/main.c from out/sub, src/main.c from
# the project): two units for the first, one for the second
mkdir -p "$P/a/build" "$P/b/build"
gen "$P/a/x.c" 800
gen "$P/b/x.c" 800
(cd "$P" && "$BUILDTEL" run --quiet --db "$T/h.db" --no-report --log-dir "$L" --run-id two --interval 0.05 \
        -- sh -c '(cd a/build && cc -O0 -c ../x.c -o x.o) & (cd b/build && cc -O0 -c ../x.c -o x.o) &
                (cd out/sub && cc -O0 -c ../../src/main.c -o m.o) & cc -O0 -c src/main.c -o m.o & wait' \
        >"$T/out" 2>"$T/err")
expect_eq "the third build exits 0" "$?" 0
sed -n '/^units (top/,/^$/p' "$L/resources-two.summary.txt"
expect_eq "../x.c twice is a/x.c and b/x.c; main.c once" \
        "$(names "$L/resources-two.summary.txt" | xargs)" "a/x.c b/x.c main.c"
"$BUILDTEL" status --db "$T/h.db" >"$T/status" 2>&1
cat "$T/status"
check "status names the largest unit as the summary does" \
        grep -Eq "^two: largest unit cc1 (a/x\.c|b/x\.c|main\.c), " "$T/status"
"$BUILDTEL" inspect --db "$T/h.db" two >"$T/inspect" 2>&1
check "inspect too" grep -Eq "largest unit .* cc1 (a/x\.c|b/x\.c|main\.c)\$" "$T/inspect"
finish
