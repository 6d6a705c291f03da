#!/usr/bin/env bash
# buildtel compare: two real runs in a real history (a memory hog of 50 MiB
# for 0.5 s, then 200 MiB for 1.5 s), compared by id and with --last; the
# grown memory peak leads the text; the JSON's figures are each run's
# summary.json's; --job NAME --last (runs of two jobs made with run --job);
# an unknown run, too few runs, a garbage database and bad
# usage each say one line with their exit status.
. "$(dirname "$0")/lib.sh"
for tool in python3 sqlite3; do
        command -v $tool >/dev/null || { echo "needs $tool"; exit 77; }
done
: "${MEMHOG:?MEMHOG must name tests/helpers/memhog}"
DB="$T/h.db"
L="$T/logs"
J="python3 $HERE/csvcheck.py json-get"

"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id small --interval 0.1 -- "$MEMHOG" 50 0.5 >/dev/null
expect_eq "run small" "$?" 0

# one run: --last has nothing to compare it with
"$BUILDTEL" compare --db "$DB" --last >"$T/o" 2>"$T/e"
expect_eq "--last with one run: status 1" "$?" 1
check "--last with one run: one line, says why" \
        sh -c "test \$(wc -l <'$T/e') -eq 1 && grep -q 'fewer than two finished runs' '$T/e' && test ! -s '$T/o'"

"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id big --interval 0.1 -- "$MEMHOG" 200 1.5 >/dev/null
expect_eq "run big" "$?" 0

# text, by id
"$BUILDTEL" compare --db "$DB" small big >"$T/c.txt" 2>"$T/e"
expect_eq "compare small big" "$?" 0
cat "$T/c.txt"
check "the header names A and B" sh -c "grep -q '^A: small ' '$T/c.txt' && grep -q '^B: big ' '$T/c.txt'"
# the run section comes first (its +300 % beats every other change); the
# build's memory peaks lead it, after at most the CPU rows (the hog's CPU
# time grows with the pages it touches, about as much: +200 % to +560 %
# seen, as the machine's load has it)
lead_ok() { # lead_ok FIGURE...: both peaks come first, only cpu_* before them
        printf '%s\n' "$@" | awk '
                /^build_(anon|mem)_peak_mb$/ { if (++peaks == 2) exit 0; next }
                /^cpu_/ { next }
                { exit 1 }
                END { if (peaks < 2) exit 1 }'
}
check "the first section is the run's" sh -c "sed -n 4p '$T/c.txt' | grep -q '^run '"
# shellcheck disable=SC2046
check "both memory peaks lead the run section, after at most the CPU rows" \
        lead_ok $(sed -n '5,8p' "$T/c.txt" | awk '{print $1}')
row=$(grep '^  build_mem_peak_mb ' "$T/c.txt")
check "build_mem_peak_mb: about +300 % ($row)" \
        sh -c "echo '$row' | awk '{p = \$NF; sub(/%/, \"\", p); p += 0; exit !(p > 200 && p < 400)}'"
check "duration is among the changes" grep -q '^  duration_s ' "$T/c.txt"
check "the commands differ, both shown" \
        sh -c "grep -q '^    A  .*memhog 50 0.5' '$T/c.txt' && grep -q '^    B  .*memhog 200 1.5' '$T/c.txt'"
check "the same host is not listed" sh -c "! grep -q '^  host\$' '$T/c.txt'"

# JSON: the values are the runs' own summary.json's
"$BUILDTEL" compare --db "$DB" --json small big >"$T/c.json"
expect_eq "compare --json" "$?" 0
fig() { # fig FIGURE a|b: the value of the run section's FIGURE
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sections"]:
    for r in s["rows"]:
        if s["section"] == "run" and r["figure"] == sys.argv[2]:
            print(r[sys.argv[3]]); sys.exit(0)
sys.exit(1)' "$T/c.json" "$1" "$2"
}
expect_eq "json: a is small" "$($J "$T/c.json" a.run_id)" small
expect_eq "json: b is big" "$($J "$T/c.json" b.run_id)" big
expect_eq "json: the first section is run" "$($J "$T/c.json" sections.0.section)" run
# shellcheck disable=SC2046
check "json: the build's memory peaks lead, after at most the CPU rows" \
        lead_ok $(for i in 0 1 2 3; do $J "$T/c.json" sections.0.rows.$i.figure; done)
for r in small:a big:b; do
        id=${r%:*} side=${r#*:}
        S="$L/resources-$id.summary.json"
        expect_eq "json $side: build_mem_peak_mb = $id's summary build.mem_peak_mb" \
                "$(fig build_mem_peak_mb $side)" "$($J "$S" build.mem_peak_mb.value)"
        expect_eq "json $side: build_anon_peak_mb = $id's summary build.mem_anon_peak_mb" \
                "$(fig build_anon_peak_mb $side)" "$($J "$S" build.mem_anon_peak_mb.value)"
        expect_eq "json $side: duration_s = $id's summary run.duration_s (ms)" \
                "$(printf '%.3f' "$(fig duration_s $side)")" "$(printf '%.3f' "$($J "$S" run.duration_s)")"
        expect_eq "json $side: cpu_s = $id's summary build.cpu_user_s + cpu_sys_s" \
                "$(printf '%.3f' "$(fig cpu_s $side)")" \
                "$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["build"]; print("%.3f" % (b["cpu_user_s"] + b["cpu_sys_s"]))' "$S")"
        expect_eq "json $side: oom_kills = $id's summary build.oom_kills" \
                "$(fig oom_kills $side)" "$($J "$S" build.oom_kills)"
done
a=$(fig build_mem_peak_mb a) b=$(fig build_mem_peak_mb b) c=$(fig build_mem_peak_mb change)
check "json: change = b - a ($b - $a = $c)" awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN{d = b - a - c; exit !(d < 1e-9 && d > -1e-9)}'
check "json: 200 MiB against 50 MiB" sh -c "awk -v a='$a' -v b='$b' 'BEGIN{exit !(a > 45 && a < 80 && b > 195 && b < 240)}'"

# --last: the same two, the older as A
"$BUILDTEL" compare --db "$DB" --last --json >"$T/l.json"
expect_eq "compare --last --json" "$?" 0
expect_eq "--last: A is the older" "$($J "$T/l.json" a.run_id)" small
expect_eq "--last: B is the newer" "$($J "$T/l.json" b.run_id)" big
"$BUILDTEL" compare --db "$DB" --last >"$T/l.txt"
check "--last text = compare small big" cmp -s "$T/l.txt" "$T/c.txt"

# --job NAME --last: the last two of that job, not the later run of another
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id j1a --job j1 --interval 0.1 -- "$MEMHOG" 20 0.3 >/dev/null
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id j1b --job j1 --interval 0.1 -- "$MEMHOG" 60 0.3 >/dev/null
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id other --job j2 --interval 0.1 -- true
"$BUILDTEL" compare --db "$DB" --job j1 --last --json >"$T/j.json"
expect_eq "--job j1 --last" "$?" 0
expect_eq "--job j1 --last: A" "$($J "$T/j.json" a.run_id)" j1a
expect_eq "--job j1 --last: B (not the later run of job j2)" "$($J "$T/j.json" b.run_id)" j1b
check "--job j1 --last: the job among the facts, the same" \
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for s in d["sections"] for r in s["rows"] if r["figure"] == "job"][0]
sys.exit(not (r["a"] == r["b"] == "j1" and r["status"] == "same"))' "$T/j.json"
"$BUILDTEL" compare --db "$DB" --job j2 --last 2>"$T/e"
expect_eq "--job with one run: status 1" "$?" 1
check "--job with one run: one line" \
        sh -c "test \$(wc -l <'$T/e') -eq 1 && grep -q 'of job j2' '$T/e'"
"$BUILDTEL" compare --db "$DB" --job nosuchjob --last 2>"$T/e"
expect_eq "--job of no runs: status 1" "$?" 1
"$BUILDTEL" compare --db "$DB" --job j1 small big 2>"$T/e"
expect_eq "--job without --last: status 2" "$?" 2

# errors: one line each, nothing on stdout, the database untouched
before=$(sqlite3 "$DB" "select count(*) from runs")
"$BUILDTEL" compare --db "$DB" small nosuchrun >"$T/o" 2>"$T/e"
expect_eq "unknown run: status 1" "$?" 1
expect_eq "unknown run: the line" "$(cat "$T/e")" "buildtel compare: no run 'nosuchrun' in the history"
check "unknown run: nothing on stdout" test ! -s "$T/o"
expect_eq "the runs are all still there" "$(sqlite3 "$DB" "select count(*) from runs")" "$before"
"$BUILDTEL" compare --db "$DB" small 2>"$T/e"
expect_eq "one run given: status 2" "$?" 2
check "one run given: one line" test "$(wc -l <"$T/e")" -eq 1
"$BUILDTEL" compare --db "$DB" --last small 2>"$T/e"
expect_eq "--last and a run: status 2" "$?" 2
"$BUILDTEL" compare --db "$T/none.db" a b 2>"$T/e"
expect_eq "a missing database: status 1" "$?" 1
check "a missing database: one line" sh -c "test \$(wc -l <'$T/e') -eq 1 && grep -q 'does not exist' '$T/e'"
check "a missing database is not created" test ! -e "$T/none.db"
head -c 4096 /dev/urandom >"$T/garbage.db"
cp "$T/garbage.db" "$T/garbage.orig"
"$BUILDTEL" compare --db "$T/garbage.db" a b 2>"$T/e"
expect_eq "a garbage database: status 1" "$?" 1
check "a garbage database: one line" test "$(wc -l <"$T/e")" -eq 1
check "a garbage database is left as it was" cmp -s "$T/garbage.db" "$T/garbage.orig"
"$BUILDTEL" compare --db "$DB" --bogus a b 2>"$T/e"
expect_eq "an unknown option: status 2" "$?" 2
# targets, BuildKit steps and compile units: two builds that differ in each
# (a plain BuildKit log, --targets; a "compiler" named cc1 whose a.c runs
# longer in the second, b.c only in the first, c.c only in the second)
D2="$T/h2.db"
P="$T/proj"
mkdir -p "$P"
cat >"$P/cc1" <<'SH'
#!/bin/sh
case "$1" in
a.c) sleep "$A_SECS" ;;
*) sleep 0.4 ;;
esac
touch "$2"
SH
chmod +x "$P/cc1"
touch "$P/a.c" "$P/b.c" "$P/c.c"
printf '#1 [app 1/2] FROM docker.io/library/debian:12\n#1 DONE 0.1s\n#2 [app 2/2] RUN make\n#2 DONE 0.2s\n#3 [lib 1/1] RUN x\n#3 DONE 0.1s\n' >"$P/t1.log"
printf '#1 [app 1/2] FROM docker.io/library/debian:12\n#1 CACHED\n#2 [app 2/2] RUN make\n#2 DONE 0.2s\n#4 [new 1/1] RUN y\n#4 DONE 0.1s\n' >"$P/t2.log"
(cd "$P" && A_SECS=0.5 "$BUILDTEL" run --quiet --db "$D2" --log-dir "$L" --run-id u1 --targets app,lib \
        --interval 0.1 -- sh -c 'cat t1.log; ./cc1 a.c a.o; ./cc1 b.c b.o' >/dev/null)
(cd "$P" && A_SECS=1.5 "$BUILDTEL" run --quiet --db "$D2" --log-dir "$L" --run-id u2 --targets app,new \
        --interval 0.1 -- sh -c 'cat t2.log; ./cc1 a.c a.o; ./cc1 c.c c.o' >/dev/null)
"$BUILDTEL" compare --db "$D2" --json u1 u2 >"$T/u.json"
expect_eq "compare u1 u2 --json" "$?" 0
row() { # row SECTION SUBJECT FIGURE KEY
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sections"]:
    for r in s["rows"]:
        if s["section"] == sys.argv[2] and (r["subject"] or "") == sys.argv[3] and r["figure"] == sys.argv[4]:
            print(r[sys.argv[5]]); sys.exit(0)
print("none")' "$T/u.json" "$@"
}
expect_eq "target lib is gone" "$(row target lib steps status)" gone
expect_eq "target new appeared" "$(row target new steps status)" appeared
expect_eq "target app: its steps, 2 in both" "$(row target app steps a) $(row target app steps b)" "2 2"
expect_eq "step [lib 1/1] RUN x is gone" "$(row step '[lib 1/1] RUN x' duration_s status)" gone
expect_eq "step [new 1/1] RUN y appeared" "$(row step '[new 1/1] RUN y' duration_s status)" appeared
expect_eq "unit b.c is gone" "$(row unit b.c peak_mb status)" gone
expect_eq "unit c.c appeared" "$(row unit c.c peak_mb status)" appeared
da=$(row unit a.c duration_s a) db=$(row unit a.c duration_s b)
check "unit a.c took longer: $da s then $db s" sh -c "awk -v a='$da' -v b='$db' 'BEGIN{exit !(a >= 0.3 && b >= a + 0.7)}'"
expect_eq "unit a.c: changed" "$(row unit a.c duration_s status)" changed
"$BUILDTEL" compare --db "$D2" u1 u2 >"$T/u.txt"
check "text: a unit section with a.c, b.c, c.c" \
        sh -c "grep -q '^unit ' '$T/u.txt' && grep -q '^  a.c duration_s ' '$T/u.txt' && grep -Eq '^  b.c .* gone\$' '$T/u.txt' && grep -Eq '^  c.c .* appeared\$' '$T/u.txt'"
check "text: a target and a step section" sh -c "grep -q '^target ' '$T/u.txt' && grep -q '^step ' '$T/u.txt'"
# compiler cache: a real ccache (its own directory in $T), cold then warm,
# each run's log printing its stats first and last
if command -v ccache >/dev/null && command -v gcc >/dev/null && command -v make >/dev/null; then
        C="$T/ccproj" D3="$T/h3.db"
        mkdir -p "$C"
        for i in 1 2 3; do printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" >"$C/f$i.c"; done
        printf 'all: f1.o f2.o f3.o\n%%.o: %%.c\n\t$(CC) -c -o $@ $<\nclean:\n\trm -f *.o\n' >"$C/Makefile"
        export CCACHE_DIR="$T/ccache" CCACHE_CONFIGPATH="$T/ccache.conf"
        unset CCACHE_DISABLE CCACHE_RECACHE CCACHE_READONLY CCACHE_LOGFILE
        : >"$CCACHE_CONFIGPATH"
        printf 'set -e\nccache --print-stats\nmake -C "%s" clean >/dev/null\nmake -C "%s" CC="ccache gcc" >/dev/null\nccache --print-stats\n' \
                "$C" "$C" >"$T/cc.sh"
        "$BUILDTEL" run --quiet --db "$D3" --log-dir "$L" --run-id cold --interval 0.1 -- sh "$T/cc.sh" >/dev/null
        expect_eq "ccache cold build" "$?" 0
        "$BUILDTEL" run --quiet --db "$D3" --log-dir "$L" --run-id warm --interval 0.1 -- sh "$T/cc.sh" >/dev/null
        expect_eq "ccache warm build" "$?" 0
        "$BUILDTEL" compare --db "$D3" --json cold warm >"$T/u.json"
        expect_eq "compare cold warm" "$?" 0
        expect_eq "ccache hits: 0 then 3" "$(row cache ccache hits a) $(row cache ccache hits b)" "0 3"
        expect_eq "ccache misses: 3 then 0" "$(row cache ccache misses a) $(row cache ccache misses b)" "3 0"
        expect_eq "ccache hit ratio: 0 then 1" "$(row cache ccache hit_ratio a) $(row cache ccache hit_ratio b)" "0.0 1.0"
        "$BUILDTEL" compare --db "$D3" cold warm >"$T/cc.txt"
        check "text: the cache section with ccache hits" grep -Eq '^  ccache hits +0 +3 +\+3 ' "$T/cc.txt"
else
        echo "no ccache, gcc or make: the compiler-cache part is left out"
fi
# an OOM kill: the same cap, a hog that fits, then one that does not
if [ "$(id -u)" = 0 ] && grep -q cgroup2 /proc/self/mountinfo; then
        D4="$T/h4.db"
        "$BUILDTEL" run --quiet --db "$D4" --log-dir "$L" --run-id fits --interval 0.05 --memory-max 128M -- "$MEMHOG" 16 0.3 >/dev/null
        expect_eq "under the cap: exit 0" "$?" 0
        "$BUILDTEL" run --quiet --db "$D4" --log-dir "$L" --run-id killed --interval 0.05 --memory-max 128M -- "$MEMHOG" 512 0.3 >/dev/null 2>&1
        expect_eq "over the cap: exit 137" "$?" 137
        "$BUILDTEL" compare --db "$D4" --json fits killed >"$T/u.json"
        expect_eq "compare fits killed" "$?" 0
        expect_eq "oom_kills: the summaries' (0, then 1)" "$(row run '' oom_kills a) $(row run '' oom_kills b)" \
                "$($J "$L/resources-fits.summary.json" build.oom_kills) $($J "$L/resources-killed.summary.json" build.oom_kills)"
        expect_eq "oom_kills: 0 then 1" "$(row run '' oom_kills a) $(row run '' oom_kills b)" "0 1"
        expect_eq "the result: ok, then OOM-killed (issue 35)" "$(row facts '' result a), $(row facts '' result b)" "ok, OOM-killed"
        "$BUILDTEL" compare --db "$D4" fits killed >"$T/oom.txt"
        check "text: oom_kills 0 -> 1" grep -Eq '^  oom_kills +0 +1 +\+1 ' "$T/oom.txt"
else
        echo "not root or no cgroup v2: the OOM part is left out"
fi
finish
