#!/usr/bin/env bash
# sccache's word on each compile (issue "Every process accounted", item 3):
# a make build of 24 sources through the real sccache, its server started
# by the build itself (local disk cache in $T, a private port), cold then
# warm. buildtel sets the build's SCCACHE_ERROR_LOG and SCCACHE_LOG, so
# the server logs each compile's verdict: cold, every unit a miss and the
# -j reading said; warm, every unit a hit, and the hits are left out of the
# -j reading (too few units remain to say it). Then a server started
# before the build: the verdicts are not ours, and the summary says so.
. "$(dirname "$0")/lib.sh"
need_root "the kernel's accounting (taskstats) of every compile needs CAP_NET_ADMIN"
for p in sccache gcc make sqlite3 python3; do
        command -v "$p" >/dev/null || { echo "missing $p"; exit 77; }
done
unset SCCACHE_LOG SCCACHE_ERROR_LOG SCCACHE_RECACHE SCCACHE_BUCKET SCCACHE_REDIS SCCACHE_GHA_ENABLED
export SCCACHE_DIR="$T/sccache" SCCACHE_IDLE_TIMEOUT=0 SCCACHE_CONF="$T/sccache.conf"
: >"$SCCACHE_CONF"
trap 'sccache --stop-server >/dev/null 2>&1; cleanup' EXIT
P="$T/p" L="$T/l"
mkdir -p "$P"
objs=
for i in $(seq 1 24); do
        printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" >"$P/s$i.c"
        objs="$objs s$i.o"
done
printf 'all:%s\n%%.o: %%.c\n\t$(CC) -O1 -c $< -o $@\n' "$objs" >"$P/Makefile"
# the build as CI runs it: its own server first, stopped at the end
cat >"$T/build.sh" <<EOF
set -e
sccache --start-server
make -C "$P" -j2 CC="sccache gcc"
sccache --stop-server >/dev/null
EOF
# run_sc NAME: the build; again on another port (a new run) when sccache's
# own start failed (lib.sh's sccache_start says why). RUN names the run.
run_sc() {
        local try rc
        for try in 1 2 3; do
                RUN=$1-$try
                SCCACHE_SERVER_PORT=$(sccache_port)
                export SCCACHE_SERVER_PORT
                rm -f "$P"/*.o
                "$BUILDTEL" run --quiet --db "$T/h.db" --log-dir "$L" --run-id "$RUN" -- sh "$T/build.sh" \
                        >"$T/$RUN.out" 2>&1
                rc=$?
                grep -q -E "sccache: error: (Timed out waiting for server startup|Server startup failed)" \
                        "$T/$RUN.out" || break
                echo "# sccache's own start failed (try $try): $(grep -m1 'sccache: error' "$T/$RUN.out")"
        done
        return $rc
}
# every_unit RUN VERDICT: every unit of the run has it, and every source
# is a unit (or one of the compilers gone before they could be read). The
# server's probe of each compiler it finds (a compile of
# /tmp/sccacheXXXX/testfile.c) is no compile of the build: it has none.
every_unit() {
        python3 - "$L/resources-$1.units.csv" "$L/resources-$1.run.json" "$2" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
probes = [r for r in rows if r["name"].endswith("/testfile.c")]
rows = [r for r in rows if r not in probes]
if any(r["cache"] for r in probes):
    sys.exit("a probe has a verdict")
unread = json.load(open(sys.argv[2]))["processes"].get("unread", 0)
names = {r["name"].split(" [")[0] for r in rows}
print("# units:", len(rows), "sources:", len(names), "verdicts:", sorted({r["cache"] for r in rows}), "unread:", unread)
sys.exit(not (rows and all(r["cache"] == sys.argv[3] for r in rows) and len(names) + unread >= 24))
PY
}

run_sc cold
expect_eq "cold: the build ran" "$?" 0
if ! grep -q ',taskstats,' "$L/resources-$RUN.units.csv"; then
        echo "the kernel's accounting is not ours here"
        exit 77
fi
S="$L/resources-$RUN.summary.txt"
grep -m1 ' sccache::compiler::compiler\] \[s1.o\]: Cache miss' "$L/resources-$RUN.sccache.log"
check "cold: the server's log is the run's own file, a line per compile" \
        test "$(grep -c ']: Cache miss in ' "$L/resources-$RUN.sccache.log")" = 24
check "cold: every unit a miss" every_unit "$RUN" miss
check "cold: the build's output has none of sccache's log" sh -c "! grep -q 'DEBUG sccache' '$T/$RUN.out' '$L/build-$RUN.log'"
check "cold: the summary says so" grep -Eq '^  [0-9.]+ [KMG]iB  .* s1?[0-9].c .*, cache miss$' "$S"
check "cold: 24 misses, the -j reading said" grep -q 'the 95th-percentile unit needs' "$S"
check "cold: no line that the verdicts are unknown" sh -c "! grep -q '^  sccache: ' '$S'"
id_cold=$RUN

run_sc warm
expect_eq "warm: the build ran" "$?" 0
S="$L/resources-$RUN.summary.txt"
check "warm: every unit a hit" every_unit "$RUN" hit
check "warm: the summary says so" grep -Eq '^  [0-9.]+ [KMG]iB  .*, cache hit$' "$S"
check "warm: the hits are out of the -j reading (none left to say it)" \
        sh -c "! grep -q 'the 95th-percentile unit needs' '$S'"
expect_eq "the history keeps each run's verdicts" \
        "$(sqlite3 "$T/h.db" "SELECT r.run_id, group_concat(DISTINCT u.cache) FROM units u JOIN runs r ON r.id = u.run WHERE r.run_id IN ('$id_cold', '$RUN') GROUP BY r.run_id ORDER BY r.id")" \
        "$id_cold|miss
$RUN|hit"
"$BUILDTEL" summarize --json "$L/resources-$RUN.csv" >"$T/re.json"
check "summarize of the files says the same" python3 - "$T/re.json" "$L/resources-$RUN.summary.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
a.pop("baseline"); b.pop("baseline")
sys.exit(not (a == b and {u["cache"] for u in a["units"] if not u["name"].endswith("/testfile.c")} == {"hit"}))
PY

# A server already running (started outside the build): its log is not
# the run's, no unit gets a verdict, and the summary says it in one line.
sccache_start "$T/pre.err" sccache --start-server || { echo "sccache --start-server failed: $(cat "$T/pre.err")"; exit 1; }
rm -f "$P"/*.o
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id pre -- make -C "$P" -j2 CC="sccache gcc" >"$T/pre.out" 2>&1
expect_eq "server before the build: the build ran" "$?" 0
sccache --stop-server >/dev/null 2>&1
grep '^  sccache: ' "$L/resources-pre.summary.txt"
check "server before the build: the summary says the verdicts are unknown" \
        grep -q '^  sccache:        which compile hit is unknown: its server was not started by the build' "$L/resources-pre.summary.txt"
check "server before the build: no unit claims a verdict" python3 - "$L/resources-pre.units.csv" <<'PY'
import csv, sys
sys.exit(any(r["cache"] for r in csv.DictReader(open(sys.argv[1], newline=""))))
PY
check "server before the build: no log file of ours" test ! -e "$L/resources-pre.sccache.log"
finish
