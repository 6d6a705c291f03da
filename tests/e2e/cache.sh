#!/usr/bin/env bash
# buildtel cache against a real ccache and a real sccache (its server
# started by this test on 127.0.0.1, on a port of its own, and stopped by
# it): hits and misses of known compilations, stored snapshots, and the
# change since the previous `buildtel cache`.
. "$(dirname "$0")/lib.sh"
for tool in ccache sccache gcc sqlite3 python3; do
        command -v $tool >/dev/null || { echo "needs $tool"; exit 77; }
done
DB="$T/h.db"
J="python3 $HERE/csvcheck.py json-get"
export CCACHE_DIR="$T/ccache" SCCACHE_DIR="$T/sccache"
export SCCACHE_SERVER_PORT=$((20000 + $$ % 20000)) SCCACHE_IDLE_TIMEOUT=120
stop_sccache() { sccache --stop-server >/dev/null 2>&1; rm -rf "$T"; }
trap stop_sccache EXIT
printf 'int f(void) { return 42; }\n' >"$T/a.c"
printf 'int g(void) { return 7; }\n' >"$T/b.c"

# only ccache on PATH: one tool
mkdir -p "$T/bin"
ln -s "$(command -v ccache)" "$T/bin/ccache"
PATH="$T/bin" "$BUILDTEL" cache --db "$DB" --json >"$T/c0.json"
expect_eq "cache with ccache only" "$?" 0
expect_eq "one tool" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/c0.json")" 1
expect_eq "ccache: no hits yet" "$($J "$T/c0.json" 0.hits)" 0
expect_eq "ccache: first snapshot has no delta" "$($J "$T/c0.json" 0.delta)" "None"

ccache gcc -c "$T/a.c" -o "$T/a.o"
ccache gcc -c "$T/a.c" -o "$T/a.o"
sccache --start-server >/dev/null 2>&1
sccache gcc -c "$T/b.c" -o "$T/b.o"
sccache gcc -c "$T/b.c" -o "$T/b.o"
"$BUILDTEL" cache --db "$DB" --json >"$T/c1.json"
expect_eq "cache --json" "$?" 0
expect_eq "ccache first" "$($J "$T/c1.json" 0.tool)" "ccache"
expect_eq "ccache: 1 hit" "$($J "$T/c1.json" 0.hits)" 1
expect_eq "ccache: 1 miss" "$($J "$T/c1.json" 0.misses)" 1
expect_eq "ccache: hit rate" "$($J "$T/c1.json" 0.hit_rate)" 0.5
expect_eq "ccache: delta hits since the previous call" "$($J "$T/c1.json" 0.delta.hits)" 1
expect_eq "ccache: delta misses" "$($J "$T/c1.json" 0.delta.misses)" 1
check "ccache: a size" test "$($J "$T/c1.json" 0.size_bytes)" -gt 0
expect_eq "sccache second" "$($J "$T/c1.json" 1.tool)" "sccache"
expect_eq "sccache: 1 hit" "$($J "$T/c1.json" 1.hits)" 1
expect_eq "sccache: 1 miss" "$($J "$T/c1.json" 1.misses)" 1
expect_eq "sccache: first snapshot, no delta" "$($J "$T/c1.json" 1.delta)" "None"

ccache gcc -c "$T/a.c" -o "$T/a.o"
sccache gcc -c "$T/b.c" -o "$T/b.o"
"$BUILDTEL" cache --db "$DB" >"$T/c2.txt"
expect_eq "cache text" "$?" 0
check "text: ccache 2 hits, +1 since the last call" grep -Eq '^ccache +2 \(\+1\) +1 \(\+0\) +66\.7%' "$T/c2.txt"
check "text: sccache 2 hits, +1" grep -Eq '^sccache +2 \(\+1\) +1 \(\+0\)' "$T/c2.txt"
expect_eq "snapshots stored (sqlite3)" \
        "$(sqlite3 "$DB" "select tool, count(*), max(hits) from cache_snapshots where origin = 'cache' group by tool order by tool" | tr '\n' ' ')" \
        "ccache|3|2 sccache|2|2 "
check "the raw output is kept" test "$(sqlite3 "$DB" "select count(*) from cache_snapshots where raw like '%direct_cache_hit%'")" -eq 3

PATH=/nonexistent "$BUILDTEL" cache --db "$DB" 2>"$T/e"
expect_eq "no tool on PATH: status 1" "$?" 1
check "no tool on PATH: says so" grep -q "neither ccache nor sccache is on PATH" "$T/e"
finish
