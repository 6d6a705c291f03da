#!/usr/bin/env bash
# buildtel compare: two real runs in a real history (a memory hog of 50 MiB
# for 0.5 s, then 200 MiB for 1.5 s), compared by id and with --last; the
# run's own rows lead the text (outcome, wall time, CPU time, the memory
# peaks, in that order), with people's labels; the JSON's figures are each
# run's summary.json's; two like builds (make -j2 of the same C files, run
# twice): the run's rows first, no unit row before them, no raw key in the
# text, the units by the names the summary shows, the sampling noise
# folded into one line; --job NAME --last (runs of two jobs made with run
# --job); an unknown run, too few runs, a garbage database and bad usage
# each say one line with their exit status.
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
check "the header names A and B and their outcomes" \
        sh -c "grep -Eq '^A: small .*  ok\$' '$T/c.txt' && grep -Eq '^B: big .*  ok\$' '$T/c.txt'"
# run_lead FILE: the first section is the run's, and its rows are the run's
# own in the order of what matters
run_lead() {
        sed -n 4p "$1" | grep -q '^run ' &&
                test "$(sed -n '5,9p' "$1" | cut -c1-20 | sed 's/  *$//')" = "$(printf '%s\n' \
                        '  outcome' '  wall time' '  CPU time' '  memory peak' '  anon memory peak')"
}
check "the run's rows lead: outcome, wall time, CPU time, the memory peaks" run_lead "$T/c.txt"
row=$(grep '^  memory peak ' "$T/c.txt")
check "memory peak: about +300 % ($row)" \
        sh -c "echo '$row' | awk '{p = \$NF; sub(/%/, \"\", p); p += 0; exit !(p > 200 && p < 400)}'"
check "memory peak: in MiB, as fmt_size writes it ($row)" \
        sh -c "echo '$row' | grep -Eq ' [0-9.]+ MiB +[0-9.]+ MiB +\+[0-9.]+ MiB '"
check "the wall time is there, 1.5 s longer within the 5 s floor: noise" \
        grep -Eq '^  wall time .* noise$' "$T/c.txt"
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
expect_eq "json: the run's rows in order, by their stable keys" \
        "$(for i in 0 1 2 3 4; do $J "$T/c.json" sections.0.rows.$i.figure; done | tr '\n' ' ')" \
        "outcome duration_s cpu_s build_mem_peak_mb build_anon_peak_mb "
expect_eq "json: a row's label" "$($J "$T/c.json" sections.0.rows.1.label)" "wall time"
expect_eq "json: a row's noise" "$($J "$T/c.json" sections.0.rows.1.noise)" True
expect_eq "json: the peak is no noise" "$($J "$T/c.json" sections.0.rows.3.noise)" False
expect_eq "json: the quantum, the runs' interval" "$($J "$T/c.json" quantum_s)" 0.1
expect_eq "json: A's outcome" "$($J "$T/c.json" a.outcome)" ok
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

# two like builds: make -j2 of the same C files twice (each about a second
# of gcc -O2, seen by several samples), the sources given by their absolute
# paths (the units table shows them relative to the project; f1.c and
# sub/f1.c are two files)
if command -v gcc >/dev/null && command -v make >/dev/null; then
        M="$T/like" D5="$T/h5.db"
        mkdir -p "$M/sub"
        for f in f1 f2 f3 f4 f5 f6 sub/f1; do
                for k in $(seq 150); do
                        printf 'int h%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d ^ (s >> 3); return s; }\n' "$k" "$k"
                done >"$M/$f.c"
        done
        printf 'SRC = $(wildcard $(CURDIR)/*.c) $(CURDIR)/sub/f1.c\nall: $(SRC:.c=.o)\n%%.o: %%.c\n\tgcc -O2 -c -o $@ $<\nclean:\n\trm -f *.o sub/*.o\n' >"$M/Makefile"
        for r in like1 like2; do
                make -C "$M" clean >/dev/null
                (cd "$M" && "$BUILDTEL" run --quiet --db "$D5" --log-dir "$L" --run-id $r --interval 0.2 -- make -j2 >/dev/null)
                expect_eq "like build $r" "$?" 0
        done
        "$BUILDTEL" compare --db "$D5" --last >"$T/like.txt"
        expect_eq "compare --last, like builds" "$?" 0
        cat "$T/like.txt"
        check "like builds: the header's outcomes" \
                sh -c "grep -Eq '^A: like1 .*  ok\$' '$T/like.txt' && grep -Eq '^B: like2 .*  ok\$' '$T/like.txt'"
        check "like builds: the run's rows first, in order" run_lead "$T/like.txt"
        check "like builds: no unit row before the run's" \
                sh -c "sed -n '1,/^  anon memory peak /p' '$T/like.txt' | grep -Eq '\\.c ' && exit 1 || exit 0"
        # the rows above the facts (the facts are the command's own texts)
        sed '/^facts$/,$d' "$T/like.txt" >"$T/like-rows.txt"
        check "like builds: no raw key in the text" \
                sh -c "! grep -Eq '_s |_mb |_pct |_ratio |oom_kills|appeared|gone' '$T/like-rows.txt'"
        "$BUILDTEL" compare --db "$D5" --last --json >"$T/like.json"
        expect_eq "compare --last --json, like builds" "$?" 0
        check "like builds: the units by the names the summary shows (none absolute, f1.c and sub/f1.c)" \
                python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
units = {r["subject"] for s in d["sections"] if s["section"] == "unit" for r in s["rows"]}
shown = {u["shown"] for u in json.load(open(sys.argv[2]))["units"] if u["kind"] == "compile"}
print(sorted(units), sorted(shown))
sys.exit(not (units and shown <= units and not any(u.startswith("/") for u in units)
              and {"f1.c", "sub/f1.c"} <= units))' "$T/like.json" "$L/resources-like2.summary.json"
        # the noise the text folds is the JSON's, one line a section
        check "like builds: each section's noise folded into its count" \
                python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
for s in d["sections"]:
    if s["section"] in ("run", "facts"):
        continue
    n = sum(1 for r in s["rows"] if r["noise"])
    body = re.search(r"^%s .*?(?=^\S|\Z)" % s["section"], text, re.S | re.M)
    got = re.search(r"^  (\d+) changes? within noise \(--all lists them\)$", body.group(0), re.M) if body else None
    if (int(got.group(1)) if got else 0) != n:
        sys.exit("%s: %d noise rows, text says %s" % (s["section"], n, got and got.group(0)))' "$T/like.json" "$T/like.txt"
        "$BUILDTEL" compare --db "$D5" --last --all >"$T/like-all.txt"
        expect_eq "compare --last --all" "$?" 0
        check "--all: the noise listed, not folded" \
                sh -c "! grep -q 'within noise' '$T/like-all.txt' && test \$(grep -c ' noise\$' '$T/like-all.txt') -ge \$(grep -c ' noise\$' '$T/like.txt')"
else
        echo "no gcc or make: the like builds are left out"
fi

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
cat "$T/u.txt"
check "text: a unit section with a.c, b.c, c.c" \
        sh -c "grep -q '^unit ' '$T/u.txt' && grep -q '^  a.c wall time ' '$T/u.txt' && grep -Eq '^  b.c .* only in A\$' '$T/u.txt' && grep -Eq '^  c.c .* only in B\$' '$T/u.txt'"
# the steps' chain is a critical path (issue 38): its section after the targets'
check "text: sections in order: run, target, path, step, unit, facts" \
        sh -c "test \"\$(grep -E '^[a-z]+( |\$)' '$T/u.txt' | cut -d' ' -f1 | tr '\n' ' ')\" = 'run target path step unit facts '"
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
        expect_eq "the outcome: ok, then OOM-killed (issue 35)" "$(row run '' outcome a), $(row run '' outcome b)" "ok, OOM-killed"
        "$BUILDTEL" compare --db "$D4" fits killed >"$T/oom.txt"
        check "text: the header's outcomes side by side" \
                sh -c "grep -Eq '^A: fits .*  ok\$' '$T/oom.txt' && grep -Eq '^B: killed .*  OOM-killed\$' '$T/oom.txt'"
        check "text: OOM kills 0 -> 1" grep -Eq '^  OOM kills +0 +1 +\+1 ' "$T/oom.txt"
else
        echo "not root or no cgroup v2: the OOM part is left out"
fi
finish
