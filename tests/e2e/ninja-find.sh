#!/usr/bin/env bash
# run finds .ninja_log by itself (issue 26): `ninja -C DIR`, `cmake --build
# DIR` with a Ninja generator, `meson compile -C DIR`; --ninja-log still
# overrides; other commands read none.
. "$(dirname "$0")/lib.sh"
command -v ninja >/dev/null || { echo "ninja is missing (the build needs it)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is missing: tools/deps.sh"; exit 77; }
DB="$T/h.db"
P="$T/proj/out"
mkdir -p "$P"
cat >"$P/build.ninja" <<'NINJA'
rule slow
  command = sleep $t && touch $out
build fast.o: slow
  t = 0.1
build slow.o: slow
  t = 0.5
build all: phony fast.o slow.o
default all
NINJA
edges() { sqlite3 "$DB" "SELECT group_concat(output) FROM (SELECT output FROM ninja_edges e JOIN runs r ON e.run = r.id WHERE r.run_id = '$1' AND slow = 1 ORDER BY seq)"; }

(cd "$T/proj" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id n1 -- ninja -C out >/dev/null)
expect_eq "ninja -C DIR: status" "$?" 0
expect_eq "ninja -C DIR: its edges, slowest first, without --ninja-log" "$(edges n1)" "slow.o,fast.o"
check "the targets file has the edges" grep -q '"slow.o"' "$T/l/resources-n1.targets.json"
rm "$P"/*.o
(cd "$P" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id n2 -- ninja >/dev/null)
expect_eq "ninja in the build dir: this run's edges" "$(edges n2)" "slow.o,fast.o"
(cd "$P" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id n3 -- ninja >/dev/null)
expect_eq "ninja with nothing to do: no edges" "$(edges n3)" ""

# a fake `cmake` and `meson` that run ninja: the argv is what counts
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec ninja -C "$2"\n' >"$T/bin/cmake"
printf '#!/bin/sh\nexec ninja -C "$3"\n' >"$T/bin/meson"
chmod +x "$T/bin/cmake" "$T/bin/meson"
rm "$P"/*.o
(cd "$T/proj" && PATH="$T/bin:$PATH" "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id c1 -- cmake --build out >/dev/null)
expect_eq "cmake --build DIR (build.ninja there): its edges" "$(edges c1)" "slow.o,fast.o"
rm "$P"/*.o
(cd "$T/proj" && PATH="$T/bin:$PATH" "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id m1 -- meson compile -C out >/dev/null)
expect_eq "meson compile -C DIR: its edges" "$(edges m1)" "slow.o,fast.o"
mkdir -p "$T/proj/make"
(cd "$T/proj" && PATH="$T/bin:$PATH" "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id c2 -- cmake --build make >/dev/null 2>"$T/c2.err")
expect_eq "cmake --build DIR without build.ninja: no ninja log, no note" "$(grep -c 'ninja-log\|ninja_log' "$T/c2.err")" 0
expect_eq "cmake --build DIR without build.ninja: no edges" "$(edges c2)" ""

# --ninja-log overrides: the build writes another log, that one is read
mkdir -p "$T/proj/out2" "$T/other"
cat >"$T/proj/out2/build.ninja" <<NINJA
rule other
  command = printf '# ninja log v5\\n0\\t700\\t0\\tother.o\\tdeadbeef\\n' >$T/other/.ninja_log && touch \$out
build x.o: other
NINJA
(cd "$T/proj" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id o1 --ninja-log "$T/other/.ninja_log" -- ninja -C out2 >/dev/null)
expect_eq "--ninja-log overrides the found one" "$(edges o1)" "other.o"
(cd "$T/proj" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id s1 -- sh -c 'ninja -C out' >/dev/null)
expect_eq "a shell string is not parsed: no edges" "$(edges s1)" ""

# The edges running at a peak, from .ninja_log (issue 21): memhog is no
# compiler, so no row's running column names it; the build's memory peak
# is placed against the log's edges at the end: hog.o ran then.
: "${MEMHOG:?MEMHOG must name the memhog helper}"
mkdir -p "$T/proj/peak"
cat >"$T/proj/peak/build.ninja" <<NINJA
rule hog
  command = $MEMHOG 300 2 && touch \$out
rule quick
  command = touch \$out
build small.o: quick
build hog.o: hog
NINJA
(cd "$T/proj" && "$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id p1 --interval 0.25 -- ninja -j1 -C peak >/dev/null)
expect_eq "a memhog edge: status" "$?" 0
j() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
expect_eq "the build's peak names the edge running then" \
        "$(j "$T/l/resources-p1.summary.json" 'd["build"]["mem_peak_mb"]["running"]')" hog
check "the short summary names it" grep -q "running hog" "$T/l/resources-p1.summary.txt"
finish
