#!/usr/bin/env bash
# The critical path (issue 38): a generated ninja project with a known
# chain (gen.h -> b.o -> app) beside independent edges; a diamond; the
# summary, its JSON, the report's lanes, the trace, the history and
# compare; make says it has no graph.
. "$(dirname "$0")/lib.sh"
command -v ninja >/dev/null || { echo "ninja is missing (the build needs it)"; exit 77; }
command -v make >/dev/null || { echo "make is missing (the build needs it)"; exit 77; }
DB="$T/h.db"
P="$T/p/out"
mkdir -p "$P"
touch "$P/gen.in" "$P/b.c" "$P/a.c" "$P/x.c"
project() { # project A_SECONDS
        cat >"$P/build.ninja" <<NINJA
rule gen
  command = sleep \$t && touch \$out
rule cc
  command = sleep \$t && touch \$out
rule link
  command = sleep \$t && touch \$out
build gen.h: gen gen.in
  t = 1.0
build b.o: cc b.c | gen.h
  t = 1.0
build a.o: cc a.c
  t = $1
build x1.o: cc x.c
  t = 0.2
build x2.o: cc x.c
  t = 0.2
build x3.o: cc x.c
  t = 0.3
build app: link a.o b.o
  t = 0.5
build all: phony app x1.o x2.o x3.o
default all
NINJA
        rm -f "$P"/*.o "$P/gen.h" "$P/app"
}
js() { python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['critical_path']; print(eval(sys.argv[2]))" "$@"; }

project 0.3
(cd "$T/p" && "$BUILDTEL" run --quiet --db "$DB" --job cp --log-dir "$T/l" --run-id r1 --trace-file -- ninja -C out -j 4 >/dev/null)
expect_eq "ninja: status" "$?" 0
S="$T/l/resources-r1.summary.json"
expect_eq "the path is the chain, in order" "$(js "$S" '",".join(s["name"] for s in p["steps"])')" "gen.h,b.o,app"
expect_eq "each step's rule, from ninja's graph" "$(js "$S" '",".join(s["rule"] for s in p["steps"])')" "gen,cc,link"
check "its length is the chain's: 2.5 s of sleeps (under 3.2 s)" \
        ge "$(js "$S" 'p["length_s"]')" 2.5
check "its length is under 3.2 s" lt "$(js "$S" 'p["length_s"]')" 3.2
check "no step waited long (slack under 0.3 s)" lt "$(js "$S" 'max(s["slack_s"] for s in p["steps"])')" 0.3
check "the length is the wall: nothing else ran longer" \
        lt "$(js "$S" 'p["wall_s"] - p["length_s"]')" 0.3
expect_eq "-j is the command's" "$(js "$S" 'p["jobs"]')" 4
expect_eq "the longest stretch under -j waited for a path edge" \
        "$(js "$S" 'p["under_jobs"][0]["waited_for"] in ("gen.h","b.o","app")')" True
expect_eq "weighted time by rule: gen, cc, link" \
        "$(js "$S" '",".join(sorted(r["name"] for r in p["by_rule"]))')" "cc,gen,link"
check "the edge of most weighted time is on the path" \
        grep -q . <(js "$S" 'p["weighted"][0]["name"] in ("gen.h","b.o","app") or None' | grep True)
TXT="$T/l/resources-r1.summary.txt"
expect_eq "summary.txt: the section lists the chain in order" \
        "$(sed -n '/^critical path$/,/weighted/p' "$TXT" | grep -o ' \(gen.h\|b.o\|app\) (' | tr -d ' (' | paste -sd,)" "gen.h,b.o,app"
check "summary.txt: the reading names it" grep -q -- '- the critical path, 3 edges' "$TXT"
expect_eq "the report marks the path's edges on the lanes" \
        "$(grep -o 'class="f2 cp"' "$T/l/report-r1.html" | wc -l)" 3
expect_eq "the trace marks them" "$(grep -o '"critical_path":true' "$T/l/trace-r1.json" | wc -l)" 3
expect_eq "targets.json holds the same path" \
        "$(js "$T/l/resources-r1.targets.json" '",".join(s["name"] for s in p["steps"])')" "gen.h,b.o,app"
# read back from the history: the same section
"$BUILDTEL" summarize --db "$DB" r1 >"$T/sum.txt" 2>&1
check "summarize RUN: the path from the history" grep -q -- '- the critical path, 3 edges' "$T/sum.txt"

# a.o now the longest: the path moves, and compare says so
project 3.0
(cd "$T/p" && "$BUILDTEL" run --quiet --db "$DB" --job cp --log-dir "$T/l" --run-id r2 -- ninja -C out -j 4 >/dev/null)
expect_eq "the path moved to a.o -> app" \
        "$(js "$T/l/resources-r2.summary.json" '",".join(s["name"] for s in p["steps"])')" "a.o,app"
"$BUILDTEL" compare --db "$DB" r1 r2 >"$T/cmp.txt" 2>&1
check "compare: the path's length" grep -q '^  critical path ' "$T/cmp.txt"
check "compare: a.o joined the path" grep -q '^  a.o wall time .*only in B' "$T/cmp.txt"
check "compare: gen.h left it" grep -q '^  gen.h wall time .*only in A' "$T/cmp.txt"

# a diamond: d waits for b and c; c ended later: a, c, d
mkdir -p "$T/d"
cat >"$T/d/build.ninja" <<'NINJA'
rule s
  command = sleep $t && touch $out
build a: s src
  t = 0.3
build b: s a
  t = 0.2
build c: s a
  t = 0.8
build d: s b c
  t = 0.2
NINJA
touch "$T/d/src"
"$BUILDTEL" run --quiet --log-dir "$T/l" --run-id d1 -- ninja -C "$T/d" >/dev/null
expect_eq "a diamond: through the branch that ended last" \
        "$(js "$T/l/resources-d1.summary.json" '",".join(s["name"] for s in p["steps"])')" "a,c,d"

# make gives no graph: said, and the JSON holds null
printf 'all:\n\tsleep 0.2\n' >"$T/Makefile"
(cd "$T" && "$BUILDTEL" run --quiet --log-dir "$T/l" --run-id m1 -- make >/dev/null)
check "make: no graph, said" grep -q 'make gives no build graph' "$T/l/resources-m1.summary.txt"
expect_eq "make: critical_path null" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["critical_path"])' "$T/l/resources-m1.summary.json")" None
finish
