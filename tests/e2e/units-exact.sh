#!/usr/bin/env bash
# Every compile a unit, its peak and CPU the kernel's own (issue 36): a
# ninja build of 16 short compiles and a link at the default 2 s interval
# (a scan would see few of them), each compile run under an oracle that
# reads its peak RSS from wait4 (ru_maxrss: the largest of gcc, cc1, as,
# as /usr/bin/time %M says). Then the same build as another user, where
# the kernel's accounting is not ours: sampled, and said so.
. "$(dirname "$0")/lib.sh"
need_root "the kernel's accounting (taskstats) needs CAP_NET_ADMIN"
command -v ninja >/dev/null && command -v gcc >/dev/null || { echo "needs ninja and gcc"; exit 77; }
P="$T/p"
mkdir -p "$P"
cat >"$P/oracle" <<'PY'
#!/usr/bin/python3
# oracle OUT CMD...: run CMD; append "OUT MAXRSS_KB" to $ORACLE
import os, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(os.environ["ORACLE"], "a") as f:
    print(sys.argv[1], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=f)
sys.exit(rc)
PY
chmod +x "$P/oracle"
# 16 sources of growing size: cc1's memory differs from one to the next
{
        printf 'rule cc\n  command = ./oracle $out gcc -O1 -c $in -o $out\n'
        printf 'rule link\n  command = gcc $in -o $out\n'
        objs=
        for i in $(seq 1 16); do
                python3 - "$i" >"$P/s$i.c" <<'PY'
import sys
k = int(sys.argv[1])
print("static const int t[] = {" + ",".join(str(j * 7 % 1000) for j in range(k * 3000)) + "};")
print("int f%d(int i) { return t[i %% %d]; }" % (k, k * 3000))
PY
                printf 'build s%d.o: cc s%d.c\n' "$i" "$i"
                objs="$objs s$i.o"
        done
        printf 'int main(void) { return 0; }\n' >"$P/main.c"
        printf 'build main.o: cc main.c\nbuild app: link main.o%s\n' "$objs"
} >"$P/build.ninja"

(cd "$P" && ORACLE="$P/oracle.txt" "$BUILDTEL" run --quiet --db "$T/h.db" --log-dir "$T/l" --run-id ex -- ninja -j2)
expect_eq "the build ran" "$?" 0
U="$T/l/resources-ex.units.csv"
S="$T/l/resources-ex.summary.txt"
if ! grep -q ',taskstats,' "$U"; then # a container without CAP_NET_ADMIN, a kernel without it
        echo "the kernel's accounting is not ours here: $(sed -n '/^units (/p' "$S")"
        exit 77
fi
sed -n '/^units/,/^$/p' "$S" | head -4
check "every unit the kernel's: 17 compiles and the link" python3 - "$U" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
kinds = sorted(r["kind"] for r in rows)
srcs = {r["source"] for r in rows}
print("# units:", len(rows), kinds.count("compile"), "compiles;", srcs)
sys.exit(not (kinds == ["compile"] * 17 + ["link"] and srcs == {"taskstats"}))
PY
check "each compile's peak is its oracle's (within 1 %)" python3 - "$U" "$P/oracle.txt" <<'PY'
import csv, sys
want = {}
for line in open(sys.argv[2]):
    out, kb = line.split()
    want[out[:-2] + ".c"] = int(kb)
bad = []
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["kind"] != "compile":
        continue
    got = float(r["peak_mb"]) * 1024
    w = want.get(r["name"])
    if w is None or abs(got - w) > 0.01 * w:
        bad.append((r["name"], round(got), w))
print("# compiles checked:", len(want), "off:", bad)
sys.exit(bool(bad) or len(want) != 17)
PY
check "each compile has its CPU and a wall inside the run" python3 - "$U" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
sys.exit(not all(float(r["cpu_s"]) > 0 and 0 <= float(r["first_elapsed_s"]) < float(r["last_elapsed_s"])
                 for r in rows))
PY
check "the units line: 18 of 18, every process accounted" grep -Eq "^units \(top 18 of 18 by peak RSS; peak [12] in flight; the build ran 18 commands; every process accounted by the kernel \(taskstats\): each unit's peak RSS and CPU exact\)" "$S"
"$BUILDTEL" summarize --json "$T/l/resources-ex.csv" >"$T/re.json"
check "summarize of the files gives the run's JSON (the units' source kept; the job's usual is the history's)" python3 - "$T/re.json" "$T/l/resources-ex.summary.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
a.pop("baseline"); b.pop("baseline")
sys.exit(not (a == b and {u["source"] for u in a["units"]} == {"taskstats"}))
PY
expect_eq "the history keeps each unit's source" \
        "$(sqlite3 "$T/h.db" "SELECT source, count(*) FROM units GROUP BY source")" "taskstats|18"
"$BUILDTEL" summarize --db "$T/h.db" ex >"$T/re-db.txt"
check "summarize from the history says the same units line" bash -c "grep '^units (' '$T/re-db.txt' | cmp -s - <(grep '^units (' '$S')"

# Issue 36's own test: 200 short compiles under make -j2 at the default
# 2 s interval, each run under /usr/bin/time -f %M (the largest RSS of the
# compile's processes): every one a unit, each peak within 10 % (or 2 MiB)
# of time's, the shortest living a few tens of ms.
M="$T/m"
mkdir -p "$M/t"
for i in $(seq 1 200); do printf 'int g%d(int x) { return x * %d; }\n' "$i" "$i" >"$M/c$i.c"; done
printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard c*.c))\nall: $(OBJS)\n%%.o: %%.c\n\t/usr/bin/time -f %%M -o t/$@ gcc -O0 -c $< -o $@\n' >"$M/Makefile"
(cd "$M" && "$BUILDTEL" run --quiet --no-db --log-dir "$T/l" --run-id mk -- make -s -j2)
expect_eq "200 compiles: the build ran" "$?" 0
check "200 compiles: each a unit, its peak time's %M (10 % or 2 MiB)" python3 - "$T/l/resources-mk.units.csv" "$M/t" <<'PY'
import csv, os, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["kind"] == "compile"]
bad, walls = [], []
for r in rows:
    with open(os.path.join(sys.argv[2], r["name"][:-2] + ".o")) as f:
        w = int(f.read().split()[-1])
    got = float(r["peak_mb"]) * 1024
    walls.append(float(r["last_elapsed_s"]) - float(r["first_elapsed_s"]))
    if r["source"] != "taskstats" or abs(got - w) > max(0.1 * w, 2048):
        bad.append((r["name"], round(got), w, r["source"]))
print("# units:", len(rows), "off:", bad[:5], "shortest %.3f s" % min(walls or [0]))
sys.exit(len(rows) != 200 or bool(bad) or len({r["name"] for r in rows}) != 200)
PY

# Every process of the build counted, by name: 17 cc1, 18 gcc (the link's
# too); the delays unmeasured while kernel.task_delayacct is 0, and said so
check "the kernel's account of every process, by name" python3 - "$T/l/resources-ex.run.json" "$(cat /proc/sys/kernel/task_delayacct)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["processes"]
by = {k["comm"]: k for k in p["by_name"]}
print("# processes:", p["ended"], "ended, cpu", p["cpu_s"], {c: k["count"] for c, k in by.items()})
sys.exit(not (p["ended"] >= 50 and by["cc1"]["count"] == 17 and by["cc1"]["peak_mb"] > 20
              and p["delayacct"] == (sys.argv[2] == "1")))
PY
if [ "$(cat /proc/sys/kernel/task_delayacct)" = 0 ]; then
        check "delay accounting off: the summary says the one line that would show it" grep -q '^  waiting:        unmeasured (`sysctl kernel.task_delayacct=1` would show' "$S"
fi
check "the summary's processes line" grep -Eq '^  processes:      peak [0-9]+; [0-9]+ ended \(the kernel.s account\), cpu [0-9.]+ s$' "$S"
# With delay accounting on (set for this case only, as the user would):
# four CPU burners on the CPUs there are wait for them.
old_delay=$(cat /proc/sys/kernel/task_delayacct)
trap 'echo "$old_delay" >/proc/sys/kernel/task_delayacct; cleanup' EXIT
if echo 1 >/proc/sys/kernel/task_delayacct 2>/dev/null; then
        burn='i=0; while [ $i -lt 400000 ]; do i=$((i + 1)); done'
        n=$(( $(nproc) * 2 ))
        "$BUILDTEL" run --quiet --no-db --log-dir "$T/l" --run-id dl -- \
                sh -c "for k in \$(seq $n); do sh -c '$burn' & done; wait"
        echo "$old_delay" >/proc/sys/kernel/task_delayacct
        grep '^  waiting:' "$T/l/resources-dl.summary.txt"
        check "delay accounting on: the build's wait for CPU (twice the CPUs busy)" python3 - "$T/l/resources-dl.run.json" "$T/l/resources-dl.summary.txt" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))["processes"]
m = re.search(r"^  waiting:        for CPU ([0-9.]+) s, for IO", open(sys.argv[2]).read(), re.M)
sys.exit(not (p["delayacct"] and p["delay_cpu_s"] > 0.2 and m and abs(float(m.group(1)) - p["delay_cpu_s"]) < 0.06))
PY
fi

# ccache's word on each compile (its stats log, set for the build): a cold
# cache misses, a warm one hits, and a hit is a unit that compiled nothing
if command -v ccache >/dev/null; then
        C="$T/cc"
        mkdir -p "$C"
        for i in 1 2 3; do printf 'int g%d(int x) { return x * %d; }\n' $i $i >"$C/u$i.c"; done
        printf 'all: u1.o u2.o u3.o\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' >"$C/Makefile"
        # the user's own stats log, with a call of before: only this build's is read
        printf '# u1.c\ncache_miss\n' >"$C/user.log"
        # each compile a unit of that verdict; a hit lives a few ms: one whose
        # command line was gone before it could be read is said (unread), not
        # a unit; a loaded machine can miss all three, so a hit case runs
        # again (at most three times) until one is read
        cache_is() { # cache_is RUN VERDICT [quiet]
                python3 - "$T/l/resources-$1.units.csv" "$T/l/resources-$1.run.json" "$2" "${3:-}" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
unread = json.load(open(sys.argv[2]))["processes"].get("unread", 0)
if not sys.argv[4]:
    print("# units:", [(r["name"], r["cache"]) for r in rows], "unread:", unread)
sys.exit(not (rows and all(r["cache"] == sys.argv[3] for r in rows) and len(rows) + unread == 3))
PY
        }
        user_runs=0
        for r in cold warm user; do
                for a in 1 2 3; do
                        id=cc-$r
                        [ $a -gt 1 ] && id=cc-$r-$a
                        rm -f "$C"/*.o
                        if [ $r = user ]; then sl="$C/user.log"; user_runs=$((user_runs + 1)); else sl=; fi
                        (cd "$C" && env CCACHE_DIR="$C/cache" ${sl:+CCACHE_STATSLOG=$sl} "$BUILDTEL" run --quiet \
                                --db "$T/h.db" --log-dir "$T/l" --run-id "$id" -- make -j2 CC="ccache gcc" >/dev/null)
                        [ $r = cold ] || cache_is "$id" hit quiet && break
                done
                eval "id_$r=$id"
                grep -E '^  [0-9.]+ [KMG]iB  ' "$T/l/resources-$id.summary.txt" | sed "s/^/# $r: /"
        done
        check "ccache cold: three units, each a miss" cache_is cc-cold miss
        check "ccache warm: three units, each a hit" cache_is "$id_warm" hit
        check "ccache, the user's stats log: only this build's calls (hits)" cache_is "$id_user" hit
        check "ccache: the stats log is the run's own file" test -s "$T/l/resources-cc-cold.ccache.log"
        check "ccache: the user's stats log grew, and no file of ours was made" sh -c "[ \$(grep -c '^# ' '$C/user.log') = $((1 + 3 * user_runs)) ] && [ ! -e '$T/l/resources-$id_user.ccache.log' ]"
        check "ccache: the summary says which hit" grep -Eq '^  [0-9.]+ [KMG]iB  ccache u[123].c  .*, cache hit$' "$T/l/resources-$id_warm.summary.txt"
        check "ccache: a miss is the compile's, one unit with its preprocessor (cc1 at its peak)" grep -Eq '^  [0-9.]+ MiB  cc1 u[123].c  .*, cache miss$' "$T/l/resources-cc-cold.summary.txt"
        expect_eq "ccache: the history keeps it" \
                "$(sqlite3 "$T/h.db" "SELECT group_concat(DISTINCT u.cache) FROM units u JOIN runs r ON r.id = u.run WHERE r.run_id = '$id_warm'")" hit
        "$BUILDTEL" summarize --json "$T/l/resources-$id_warm.csv" >"$T/ccw.json"
        check "ccache: summarize of the files says the same" python3 - "$T/ccw.json" "$T/l/resources-$id_warm.summary.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
a.pop("baseline"); b.pop("baseline")
sys.exit(not (a == b and {u["cache"] for u in a["units"]} == {"hit"}))
PY
fi

# As nobody: no CAP_NET_ADMIN, no kernel accounting; the scans' units, and
# the line says what they miss.
N="$T/n"
cp -r "$P" "$N"
rm -f "$N"/*.o "$N/app" "$N/.ninja_log" "$N/.ninja_deps"
chown -R nobody "$N"
chmod 755 "$T"
(cd "$N" && runuser -u nobody -- env ORACLE="$N/oracle.txt" XDG_STATE_HOME="$N/state" \
        "$BUILDTEL" run --quiet --no-db --log-dir "$N/l" --run-id nb -- ninja -j2)
expect_eq "as nobody: the build ran" "$?" 0
sed -n '/^units/p' "$N/l/resources-nb.summary.txt"
check "as nobody: sampled, and the line says the short ones go unseen" grep -Eq "^units \(top [0-9]+ of [0-9]+ by peak RSS; .*; the build ran 18 commands: those shorter than a sample interval go unseen\)" "$N/l/resources-nb.summary.txt"
check "as nobody: no unit claims the kernel's figures" sh -c "! grep -q ',taskstats' '$N/l/resources-nb.units.csv'"
finish
