#!/usr/bin/env bash
# Real compiler caches: a small C project built through real ccache and
# real sccache (local disk caches in $T, a private sccache server on a free
# port), cold then warm, under `buildtel run`. The build script prints the
# cache's stats before and after the build, as CI scripts do; what buildtel
# reports must equal the deltas of the cache's own counters, read by this
# test around each run. A plain make build has no BuildKit target, so the
# figures belong to the target "default".
. "$(dirname "$0")/lib.sh"
for p in ccache sccache gcc make python3; do
        command -v "$p" >/dev/null || { echo "missing $p (Debian: ccache, sccache, gcc, make, python3)"; exit 77; }
done
SCCACHE_PID_PORT=
trap '[ -n "$SCCACHE_PID_PORT" ] && SCCACHE_SERVER_PORT=$SCCACHE_PID_PORT sccache --stop-server >/dev/null 2>&1; rm -rf "$T"' EXIT

P="$T/proj" L="$T/logs" TF="$T/tf"
mkdir -p "$P"
for i in 1 2 3 4; do
        printf '#include "p.h"\nint f%d(int x) { return x * %d + P_BASE; }\n' "$i" "$i" >"$P/f$i.c"
done
printf '#define P_BASE 7\nint f1(int);\nint f2(int);\nint f3(int);\nint f4(int);\n' >"$P/p.h"
printf '#include <stdio.h>\n#include "p.h"\nint main(void) { printf("%%d\\n", f1(1) + f2(2) + f3(3) + f4(4)); return 0; }\n' >"$P/main.c"
cat >"$P/Makefile" <<'EOF'
OBJS = f1.o f2.o f3.o f4.o main.o
app: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c p.h
	$(CC) -O1 -c -o $@ $<
clean:
	rm -f app $(OBJS)
EOF

# hits misses of a cache's own counters, now.
ccache_now() {
        ccache --print-stats | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" {h += $2} $1 == "cache_miss" {m = $2} END {print h + 0, m + 0}'
}
sccache_now() {
        sccache --show-stats --stats-format=json | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(sum(s["cache_hits"]["counts"].values()), sum(s["cache_misses"]["counts"].values()))'
}
# hits misses that buildtel wrote for target "default", from the targets
# JSON and from the Prometheus textfile (they must agree).
reported() { # reported RUN-ID TOOL
        python3 - "$L/resources-$1.targets.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["targets"] if t["name"] == "default"]
c = t[0][sys.argv[2]] if len(t) == 1 else None
print("%d %d" % (c["hits"], c["misses"]) if c else "none")
EOF
}
prom_reported() { # prom_reported FILE TOOL
        local h m
        h=$(sed -n "s/^build_$2_hits{target=\"default\",builder=\"\",buildtel_job=\"[^\"]*\"} //p" "$1")
        m=$(sed -n "s/^build_$2_misses{target=\"default\",builder=\"\",buildtel_job=\"[^\"]*\"} //p" "$1")
        echo "$h $m"
}
delta() { # delta "H0 M0" "H1 M1"
        set -- $1 $2
        echo "$(($3 - $1)) $(($4 - $2))"
}

# ---- ccache ----
unset CCACHE_DISABLE CCACHE_LOGFILE CCACHE_RECACHE CCACHE_READONLY
export CCACHE_DIR="$T/ccache" CCACHE_CONFIGPATH="$T/ccache.conf"
: >"$CCACHE_CONFIGPATH"
cat >"$T/build-ccache.sh" <<EOF
set -e
ccache --print-stats
make -C "$P" clean >/dev/null
make -C "$P" CC="ccache gcc"
ccache \$1
EOF
run_cc() { # run_cc RUN-ID STATS-OPTION
        "$BUILDTEL" run --quiet --log-dir "$L" --run-id "$1" --textfile-dir "$TF" --prom-file "$1.prom" \
                -- sh "$T/build-ccache.sh" "$2" >"$T/$1.out" 2>&1
}
b0=$(ccache_now)
run_cc cc-cold -s
expect_eq "ccache cold build exits 0" "$?" 0
b1=$(ccache_now)
expect_eq "ccache cold: 0 hits, 5 misses by ccache's counters" "$(delta "$b0" "$b1")" "0 5"
expect_eq "ccache cold: buildtel reports the delta" "$(reported cc-cold ccache)" "$(delta "$b0" "$b1")"
expect_eq "ccache cold: the textfile agrees" "$(prom_reported "$TF/cc-cold.prom" ccache)" "$(delta "$b0" "$b1")"
run_cc cc-warm --print-stats
expect_eq "ccache warm build exits 0" "$?" 0
b2=$(ccache_now)
expect_eq "ccache warm: 5 hits, 0 misses by ccache's counters" "$(delta "$b1" "$b2")" "5 0"
expect_eq "ccache warm: buildtel reports the delta, not the cumulative counters" \
        "$(reported cc-warm ccache)" "$(delta "$b1" "$b2")"
expect_eq "ccache warm: the textfile agrees" "$(prom_reported "$TF/cc-warm.prom" ccache)" "$(delta "$b1" "$b2")"
check "ccache: no sccache series" sh -c "! grep -q sccache_hits '$TF/cc-warm.prom'"
check "ccache: the stats went through to the terminal" grep -q '^direct_cache_hit' "$T/cc-warm.out"
# CI's other idiom: zero first, stats at the end only.
sed -i 's/^ccache --print-stats$/ccache -z/' "$T/build-ccache.sh"
echo 'int f5(void) { return 5; }' >>"$P/f4.c"
run_cc cc-zero -s
b3=$(ccache_now)
expect_eq "ccache -z then -s: buildtel reports the counters since zero" "$(reported cc-zero ccache)" "$b3"
expect_eq "ccache -z then -s: one miss (f4.c changed), four hits" "$b3" "4 1"

# ---- sccache ----
unset SCCACHE_LOG SCCACHE_RECACHE SCCACHE_BUCKET SCCACHE_REDIS SCCACHE_GHA_ENABLED
export SCCACHE_DIR="$T/sccache" SCCACHE_IDLE_TIMEOUT=0 SCCACHE_CONF="$T/sccache.conf"
: >"$SCCACHE_CONF"
sccache_start "$T/sc-start.err" sccache --start-server || { echo "sccache --start-server failed: $(cat "$T/sc-start.err")"; exit 1; }
SCCACHE_PID_PORT=$SCCACHE_SERVER_PORT
cat >"$T/build-sccache.sh" <<EOF
set -e
sccache --show-stats
make -C "$P" clean >/dev/null
make -C "$P" CC="sccache gcc"
sccache --show-stats
EOF
run_sc() {
        "$BUILDTEL" run --quiet --log-dir "$L" --run-id "$1" --textfile-dir "$TF" --prom-file "$1.prom" \
                -- sh "$T/build-sccache.sh" >"$T/$1.out" 2>&1
}
s0=$(sccache_now)
run_sc sc-cold
expect_eq "sccache cold build exits 0" "$?" 0
s1=$(sccache_now)
expect_eq "sccache cold: 0 hits, 5 misses by sccache's counters" "$(delta "$s0" "$s1")" "0 5"
expect_eq "sccache cold: buildtel reports the delta" "$(reported sc-cold sccache)" "$(delta "$s0" "$s1")"
expect_eq "sccache cold: the textfile agrees" "$(prom_reported "$TF/sc-cold.prom" sccache)" "$(delta "$s0" "$s1")"
run_sc sc-warm
expect_eq "sccache warm build exits 0" "$?" 0
s2=$(sccache_now)
expect_eq "sccache warm: 5 hits, 0 misses by sccache's counters" "$(delta "$s1" "$s2")" "5 0"
expect_eq "sccache warm: buildtel reports the delta, not the server's totals" \
        "$(reported sc-warm sccache)" "$(delta "$s1" "$s2")"
expect_eq "sccache warm: the textfile agrees" "$(prom_reported "$TF/sc-warm.prom" sccache)" "$(delta "$s1" "$s2")"
check "sccache: no marker step, so flagged as a guess" \
        grep -q '^build_sccache_stats_guess{target="default",builder="",buildtel_job="[^"]*"} 1$' "$TF/sc-warm.prom"
sccache --stop-server >/dev/null 2>&1
SCCACHE_PID_PORT=
finish
