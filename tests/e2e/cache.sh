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
SCCACHE_SERVER_PORT=$(sccache_port)
export SCCACHE_SERVER_PORT SCCACHE_IDLE_TIMEOUT=120
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
sccache_start "$T/sc-start.err" sccache --start-server || { echo "sccache --start-server failed: $(cat "$T/sc-start.err")"; exit 1; }
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

# A run keeps the stats blocks its log printed (never by running sccache
# itself: that would start a server): the first and the last of each tool,
# counters as printed, sizes where the layout has them.
ccache --print-stats >"$T/cc-before.tsv"
sccache --show-stats --stats-format=json >"$T/sc-before.json"
cat >"$T/build.sh" <<'BUILD'
ccache --print-stats
ccache gcc -c "$1/a.c" -o "$1/a.o"
ccache gcc -c "$1/b.c" -o "$1/b2.o"
ccache -s
sccache --show-stats --stats-format=json
sccache gcc -c "$1/b.c" -o "$1/b.o"
sccache --show-stats
BUILD
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/logs" --run-id stats -- sh "$T/build.sh" "$T" >"$T/run.out"
expect_eq "run printing stats: its status" "$?" 0
run_q() { sqlite3 "$DB" "select $1 from cache_snapshots c join runs r on r.id = c.run where r.run_id = 'stats' order by tool, origin"; }
expect_eq "run: first and last block of each tool, as printed (sqlite3)" \
        "$(run_q "tool, origin, hits, misses" | tr '\n' ' ')" \
        "ccache|log-first|2|1 ccache|log-last|3|2 sccache|log-first|2|1 sccache|log-last|3|1 "
expect_eq "run: ccache's size and files from --print-stats, in bytes (sqlite3)" \
        "$(run_q "size_bytes, files" | head -1)" \
        "$(awk -F'\t' '$1 == "cache_size_kibibyte" {s = $2 * 1024} $1 == "files_in_cache" {f = $2} END {print s "|" f}' "$T/cc-before.tsv")"
expect_eq "run: sccache's size from its JSON (sqlite3)" "$(run_q "size_bytes" | sed -n 3p)" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cache_size"])' "$T/sc-before.json")"
expect_eq "run: ccache -s gives the limit (5 GB by default)" "$(run_q "max_size_bytes" | sed -n 2p)" 5000000000
expect_eq "run: taken while the run ran (sqlite3)" \
        "$(sqlite3 "$DB" "select count(*) from cache_snapshots c join runs r on r.id = c.run where r.run_id = 'stats' and c.taken_epoch between r.start_epoch and r.end_epoch")" 4
"$BUILDTEL" inspect --db "$DB" --json stats >"$T/in.json"
expect_eq "inspect --json: the run's snapshots" \
        "$(python3 -c 'import json,sys; print(" ".join("%s/%s/%d/%d" % (c["tool"], c["origin"], c["hits"], c["misses"]) for c in json.load(open(sys.argv[1]))["compiler_cache"]))' "$T/in.json")" \
        "ccache/log-first/2/1 ccache/log-last/3/2 sccache/log-first/2/1 sccache/log-last/3/1"
"$BUILDTEL" inspect --db "$DB" stats >"$T/in.txt"
check "inspect text: the ccache rows" grep -Eq '^  ccache +log-last +3 +2 ' "$T/in.txt"
# `buildtel cache` counts from its own previous snapshot, not the run's
"$BUILDTEL" cache --db "$DB" --json >"$T/c3.json"
expect_eq "cache after the run: ccache +1 hit since the previous call" "$($J "$T/c3.json" 0.delta.hits)" 1
expect_eq "cache after the run: ccache +1 miss" "$($J "$T/c3.json" 0.delta.misses)" 1
expect_eq "cache after the run: sccache +1 hit" "$($J "$T/c3.json" 1.delta.hits)" 1
expect_eq "cache after the run: of which the run's log accounts for (ccache)" \
        "$($J "$T/c3.json" 0.delta.runs.runs)/$($J "$T/c3.json" 0.delta.runs.hits)/$($J "$T/c3.json" 0.delta.runs.misses)" "1/1/1"
expect_eq "cache after the run: of which the run's log accounts for (sccache)" \
        "$($J "$T/c3.json" 1.delta.runs.runs)/$($J "$T/c3.json" 1.delta.runs.hits)/$($J "$T/c3.json" 1.delta.runs.misses)" "1/1/0"
expect_eq "before any run, no run accounts for a change" "$($J "$T/c1.json" 0.delta.runs.runs)/$($J "$T/c1.json" 0.delta.runs.hits)" "0/None"

PATH=/nonexistent "$BUILDTEL" cache --db "$DB" 2>"$T/e"
expect_eq "no tool on PATH: status 1" "$?" 1
check "no tool on PATH: says so" grep -q "neither ccache nor sccache is on PATH" "$T/e"
finish
