#!/usr/bin/env bash
# buildtel bench (issue 23): hyperfine's loop where each run is a whole
# buildtel run. Three runs of one command (times near the command's, three
# history rows, the build's output kept off the terminal but in its log);
# two commands compared (the slower named, the ratio, a small p); --prepare
# before each run and --cleanup after each series; the exports; bad input.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is missing: tools/deps.sh"; exit 77; }
DB="$T/h.db"
L="$T/logs"
q() { sqlite3 "$DB" "$1"; }
jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# One command, three runs. Its output must not reach the terminal.
"$BUILDTEL" bench --runs 3 --db "$DB" --log-dir "$L" --export-json "$T/one.json" \
        -- 'printf "LOUD-%s\n" OUTPUT; printf "LOUD-%s\n" ERR >&2; sleep 0.2' >"$T/one.out" 2>"$T/one.err"
expect_eq "bench --runs 3: status" "$?" 0
cat "$T/one.out"
check "the text has hyperfine's Time line" grep -q 'Time (mean ± σ):' "$T/one.out"
check "and its Range line with 3 runs" grep -q 'Range (min … max):.*3 runs' "$T/one.out"
check "the build's output is not on stdout or stderr" \
        sh -c "! grep -q 'LOUD-OUTPUT\|LOUD-ERR' '$T/one.out' '$T/one.err'"
check "but in the runs' build logs" test "$(cat "$L"/build-*.log | grep -c 'LOUD-OUTPUT\|LOUD-ERR')" -eq 6
expect_eq "three times in the JSON" "$(jq_py "$T/one.json" 'print(len(d["results"][0]["times"]))')" 3
check "each time is within 0.19 s .. 1.5 s (sleep 0.2)" jq_py "$T/one.json" \
        'sys.exit(0 if all(0.19 <= t <= 1.5 for t in d["results"][0]["times"]) else 1)'
check "hyperfine's fields are there" jq_py "$T/one.json" \
        'r=d["results"][0]; sys.exit(0 if all(k in r for k in ("command","mean","stddev","median","min","max","times","user","system","exit_codes")) else 1)'
check "min <= median <= max, mean within" jq_py "$T/one.json" \
        'r=d["results"][0]; sys.exit(0 if r["min"] <= r["median"] <= r["max"] and r["min"] <= r["mean"] <= r["max"] else 1)'
# from each run's own model (the recorder's finish), not a stopwatch here
check "each run's CPU time and memory peak are known" jq_py "$T/one.json" \
        'r=d["results"][0]; sys.exit(0 if all(x is not None for x in r["user_times"] + r["system_times"] + r["mem_peak_mb"]) else 1)'
expect_eq "a sleep is hot (nothing compiled, no layers)" \
        "$(jq_py "$T/one.json" 'print(",".join(d["results"][0]["classes"]))')" "hot,hot,hot"
expect_eq "the history has three rows" "$(q 'SELECT count(*) FROM runs')" 3
ids=$(jq_py "$T/one.json" 'print(" ".join(d["results"][0]["run_ids"]))')
for id in $ids; do
        expect_eq "run $id is in the history, finished with 0" \
                "$(q "SELECT exit_code FROM runs WHERE run_id = '$id'")" 0
done
check "each run has its CSV and summary" test "$(ls "$L"/resources-*.summary.json | wc -l)" -eq 3

# Two commands, --prepare before each run, --cleanup after each series.
rm -f "$T/prep" "$T/clean"
"$BUILDTEL" bench -r 5 --warmup 1 --db "$DB" --log-dir "$L" --no-report \
        --prepare "echo x >>'$T/prep'" --cleanup "echo y >>'$T/clean'" \
        --export-json "$T/two.json" --export-markdown "$T/two.md" \
        -- 'sleep 0.1' 'sleep 0.4' >"$T/two.out" 2>"$T/two.err"
expect_eq "bench with two commands: status" "$?" 0
cat "$T/two.out" "$T/two.md"
expect_eq "--prepare ran before each of the 12 runs (warmups too)" "$(wc -l <"$T/prep")" 12
expect_eq "--cleanup ran after each series" "$(wc -l <"$T/clean")" 2
expect_eq "warmups are runs too: 3 + 12 rows" "$(q 'SELECT count(*) FROM runs')" 15
check "the summary names the faster" grep -q '^  sleep 0.1 ran' "$T/two.out"
check "and says the second is slower" grep -q "'sleep 0.4' is .*x ± .* slower than 'sleep 0.1'" "$T/two.out"
expect_eq "the comparison: sleep 0.4 against sleep 0.1" \
        "$(jq_py "$T/two.json" 'c=d["comparison"][0]; print(c["command"], "/", c["reference"])')" \
        "sleep 0.4 / sleep 0.1"
ratio=$(jq_py "$T/two.json" 'print(d["comparison"][0]["ratio"])')
p=$(jq_py "$T/two.json" 'print(d["comparison"][0]["p_value"])')
echo "ratio $ratio p $p"
# 4 for the sleeps alone; each run also holds buildtel's own tens of ms
# (its cgroup, samples, files; ~100 ms on a loaded 2-core machine), which
# pulls the ratio toward 1: the ratio is checked loosely, the difference of
# the medians (the 0.3 s between the sleeps) more tightly
check "the ratio is about 4 (1.8 .. 5)" sh -c "ge() { awk -v x=\$1 -v y=\$2 'BEGIN{exit !(x >= y)}'; }; ge $ratio 1.8 && ge 5 $ratio"
check "the medians differ by about 0.3 s (0.2 .. 0.6)" jq_py "$T/two.json" \
        'r=d["results"]; x=r[1]["median"]-r[0]["median"]; print("median difference", x); sys.exit(0 if 0.2 <= x <= 0.6 else 1)'
check "p is small (< 0.05; exact 0.0079 for 5 against 5)" awk -v p="$p" 'BEGIN{exit !(p < 0.05)}'
check "the markdown table has hyperfine's header" grep -q '^| Command | Mean \[ms\] | Min \[ms\] | Max \[ms\] | Relative |' "$T/two.md"
check "and a row per command" sh -c "grep -q '^| \`sleep 0.1\` |.*| 1.00 |' '$T/two.md' && grep -q '^| \`sleep 0.4\` |' '$T/two.md'"

# --parameter-scan over -j (issue 37): two 60 MiB jobs, one then both at once
: "${MEMHOG:?MEMHOG must name the memhog helper}"
mkdir -p "$T/scan"
printf 'all: a b\na b:\n\t@"%s" 60 1 >/dev/null\n' "$MEMHOG" >"$T/scan/Makefile"
(cd "$T/scan" && "$BUILDTEL" bench --runs 1 --interval 0.2 --db "$DB" --log-dir "$L" --no-report --parameter-scan j 1 2 \
        --export-json "$T/scan.json" --export-markdown "$T/scan.md" -- 'make -j{j}' >"$T/scan.out" 2>"$T/scan.err")
expect_eq "--parameter-scan j 1 2: exit 0" "$?" 0 || cat "$T/scan.err"
check "the markdown: two Mermaid charts against j" sh -c "[ \$(grep -c '^xychart-beta' '$T/scan.md') = 2 ] &&
        grep -q 'x-axis \\[\"1\", \"2\"\\]' '$T/scan.md' && grep -q 'title \"wall time (s) against j\"' '$T/scan.md'"
check "a row per -j with wall, cpu and peaks" sh -c "grep -A3 '^Parameter j' '$T/scan.out' | grep -Eq '^  2 +[0-9.]+s +[0-9.]+s +[0-9.]+ MiB'"
check "the JSON: each command with its parameter; both at once hold more" /usr/bin/python3 - "$T/scan.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print("#", [(x["command"], x["parameters"], x["mem_peak_mb"]) for x in r])
sys.exit(not (len(r) == 2 and r[0]["command"] == "make -j1" and r[0]["parameters"] == {"j": "1"} and
              r[1]["parameters"] == {"j": "2"} and
              r[1]["mem_peak_mb"][0] > r[0]["mem_peak_mb"][0] + 30))
PY
"$BUILDTEL" bench --runs 1 --db "$DB" --log-dir "$L" --parameter-list j 1,3 -- 'make -j4' 2>"$T/nopat.err"
expect_eq "a command without {j}: usage status" "$?" 2
check "and says so" grep -q "does not hold {j}" "$T/nopat.err"
"$BUILDTEL" bench --runs 1 --db "$DB" --log-dir "$L" --parameter-scan j 3 1 -- 'make -j{j}' 2>"$T/badscan.err"
expect_eq "MIN > MAX: usage status" "$?" 2

# Bad input: one clear line, a nonzero status.
"$BUILDTEL" bench --db "$DB" --log-dir "$L" 2>"$T/none.err"
expect_eq "no command: usage status" "$?" 2
check "no command: says so" grep -q 'bench: no command given' "$T/none.err"
"$BUILDTEL" bench --runs 0 --db "$DB" --log-dir "$L" -- true 2>"$T/zero.err"
expect_eq "--runs 0: usage status" "$?" 2
check "--runs 0: says why" grep -q -- '--runs takes a count from 1' "$T/zero.err"
n0=$(q 'SELECT count(*) FROM runs')
"$BUILDTEL" bench --runs 3 --db "$DB" --log-dir "$L" -- 'exit 3' >/dev/null 2>"$T/fail.err"
expect_eq "a failing command stops the bench with its status" "$?" 3
check "and says how to go on" grep -q -- "'exit 3' exited with status 3.*-i/--ignore-failure" "$T/fail.err"
expect_eq "after its first run" "$(q 'SELECT count(*) FROM runs')" $((n0 + 1))
"$BUILDTEL" bench -i --runs 2 --db "$DB" --log-dir "$L" --export-json "$T/ign.json" -- 'exit 3' >/dev/null
expect_eq "-i: the bench goes on" "$?" 0
expect_eq "-i: both exit codes in the JSON" "$(jq_py "$T/ign.json" 'print(d["results"][0]["exit_codes"])')" "[3, 3]"
"$BUILDTEL" bench --runs 1 --db "$DB" --log-dir "$L" --prepare 'exit 4' -- true 2>"$T/prep.err"
check "a failing --prepare stops the bench, nonzero" test $? -ne 0
check "and says which" grep -q "the prepare command 'exit 4' failed" "$T/prep.err"
finish
