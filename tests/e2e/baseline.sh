#!/usr/bin/env bash
# Each run against its job's usual (issue 23 item 2), on a real SQLite
# history: six similar runs then a much slower one (flagged, with the
# figure and the usual, in summary.json and on stderr), a run within the
# noise (not flagged), a job with one earlier run (unknown), a failed run
# (not in the successes' window), and a target whose layer cache collapses
# (a BuildKit plain log replayed by a script: flagged with the target and
# the step the cache broke at).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
DB="$T/h.db"
L="$T/logs"
n=0
# run JOB CMD...: one recorded run; its stderr in $T/err-$n
run() {
        local job=$1; shift
        n=$((n + 1))
        GITHUB_STEP_SUMMARY="$T/gs-$n.md" "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id "r$n" --interval 0.2 --job "$job" \
                --textfile-dir "$T/tf-$n" \
                -- "$@" >/dev/null 2>"$T/err-$n"
}
# finding N FIGURE [TARGET]: "verdict|usual|value|runs|cause" of run N, the
# figures to whole units (ratios to whole percent)
finding() {
        python3 - "$L/resources-r$1.summary.json" "$2" "${3:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["baseline"]
tgt = sys.argv[3] or None
f = [f for f in b["findings"] if f["figure"] == sys.argv[2] and f["target"] == tgt]
if not f:
    print("none|%d" % b["runs"])
else:
    f = f[0]
    m = 100 if sys.argv[2].endswith("_ratio") else 1
    r = lambda v: "null" if v is None else "%.0f" % (v * m)
    print("|".join([f["verdict"], r(f["usual"]), r(f["value"]), str(b["runs"]), str(f["cause"])]))
PY
}

# -- six similar runs, then a much slower one
for i in 1 2 3 4 5 6; do run steady sleep 0.3; done
expect_eq "the sixth run has five earlier ones, within noise" \
        "$(finding 6 duration_s | cut -d'|' -f1,4)" "within noise|5"
run steady sleep 7
slow=$n
expect_eq "the slower run: a regression of duration_s over 6 runs" \
        "$(finding $slow duration_s | cut -d'|' -f1,4)" "regression|6"
# its value is its own wall: 7 s of sleep, rounded (8 on a machine at a load of 20)
v=$(finding $slow duration_s | cut -d'|' -f3)
check "the slower run's duration is its own ($v s)" test "$v" -ge 7 -a "$v" -le 9
check "the slower run says so on stderr, with both figures" \
        grep -q '^buildtel: slower than usual: 7\.[0-9]s against 0\.[0-9]s (+[0-9]* %, last 6 runs)' "$T/err-$slow"
check "the report: the section with the small multiples and the finding" python3 - "$L/report-r$slow.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
s = h[h.index('<section id="baseline">'):]
s = s[:s.index("</section>")]
assert "Against the usual of job steady" in s, s[:200]
assert s.count("<svg") >= 2 and s.count('fill="#c0392b"') >= 2, s[:400]
row = re.search(r"<tr><td>duration_s</td><td>–</td><td>7\.\ds</td><td>0\.\ds</td><td>\+\d+ %</td><td>regression</td>", s)
assert row, s
PY
check "the job summary: the flagged finding" \
        grep -Eq '^\| duration_s \| – \| 7\.[0-9]s \| 0\.[0-9]s \| \+[0-9]+ % \| regression \|' "$T/gs-$slow.md"
prom=$(ls "$T/tf-$slow"/*.prom)
check "the textfile: the usual wall time, with the job label" \
        grep -Eq '^build_usual_duration_seconds\{builder="[^"]*",buildtel_job="steady"\} 0\.[0-9]+$' "$prom"
check "the textfile: the ratio to it is above 7" python3 -c "
import re, sys
v = [float(l.split()[-1]) for l in open('$prom') if l.startswith('build_duration_ratio_to_usual{')]
assert len(v) == 1 and v[0] > 7, v"
check "the textfile: one regression, over 6 runs" sh -c "grep -q '^build_baseline_regressions{.*} 1\$' '$prom' &&
        grep -q '^build_baseline_runs{.*} 6\$' '$prom'"
if command -v promtool >/dev/null; then
        check "promtool check metrics accepts the textfile" sh -c "promtool check metrics <'$prom' 2>&1 | grep -v -i 'counter\|lint' | { ! grep -q .; }"
fi
check "its memory peaks are within noise" \
        test "$(finding $slow mem_peak_mb | cut -d'|' -f1)" = "within noise"
# -- within the noise: the slow run does not move the median
run steady sleep 0.4
# (the usual: whole seconds; 0.3 s runs pass half a second on a loaded machine)
f=$(finding $n duration_s)
expect_eq "a run within the noise is not flagged" "$(echo "$f" | cut -d'|' -f1,4)" "within noise|7"
check "its usual under 2 s ($(echo "$f" | cut -d'|' -f2))" test "$(echo "$f" | cut -d'|' -f2)" -lt 2
check "and says nothing about its usual on stderr" sh -c "! grep -q 'usual' '$T/err-$n'"
check "the job summary says it is within the noise" grep -q '^7 earlier runs. Every figure is within the noise of its usual' "$T/gs-$n.md"
# -- a failed run is compared with failed runs only: none yet
run steady sh -c 'sleep 0.3; exit 3'
expect_eq "a failed run's window holds no successful run" "$(finding $n duration_s | cut -d'|' -f1,2,4,5)" "unknown|null|0|None"
# -- one earlier run: unknown, never a verdict
run once sleep 0.2
check "a job's first run says nothing about a usual" sh -c "! grep -q 'usual' '$T/err-$n'"
run once sleep 6
expect_eq "one earlier run: unknown" "$(finding $n duration_s | cut -d'|' -f1,4)" "unknown|1"
check "one earlier run: nothing on stderr about a usual (it changes no decision)" sh -c "! grep -q 'usual' '$T/err-$n'"
check "no finding of that run has a verdict" python3 -c "
import json, sys
b = json.load(open('$L/resources-r$n.summary.json'))['baseline']
assert b['findings'] and all(f['verdict'] == 'unknown' for f in b['findings']), b"

# -- a target whose layer cache collapses: a BuildKit plain log of one
# target of 4 steps, CACHED ones first
write_bk_log "$T/bk.sh"
for i in 1 2 3 4; do run img "$T/bk.sh" 4; done
expect_eq "a fully cached image is within noise" "$(finding $n target_cache_ratio default | cut -d'|' -f1-3)" \
        "within noise|100|100"
run img "$T/bk.sh" 1
expect_eq "the collapsed layer cache: flagged with its target and where it broke" \
        "$(finding $n target_cache_ratio default)" \
        "regression|100|25|4|not cached from [app 2/4] RUN make deps on"
check "and on stderr" grep -q '^buildtel: layer cache of default: 25 % against 100 % (-75 %, last 4 runs)' "$T/err-$n"
check "the report: the target's small multiples, the flagged layer cache first" python3 - "$L/report-r$n.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
s = h[h.index('<section id="baseline">'):]
s = s[:s.index("</section>")]
named = s[s.index('<div class="sm-named"><h3>Per target, unit and step</h3>'):]
caps = re.findall(r"<figcaption>([^<]*)</figcaption>", named)
assert caps and caps[0] == "default layer cache", caps
# the steps that ran (a cached step's time is the gap between its two
# lines on buildtel's clock: near 0, yet not 0 on a loaded machine, so
# whether it gets a chart is not checked)
assert "step [app 2/4] RUN make deps time" in caps, caps
# each: 4 earlier runs and this one, this one's bar marked
fig = named[:named.index("</figure>")]
assert fig.count("<rect ") == 5 and fig.count('fill="#c0392b"') == 1, fig
PY
# the history holds each run once: a run's own row is never in its window
expect_eq "every run is in the history, finished" \
        "$(python3 -c "
import sqlite3; c = sqlite3.connect('$DB')
print(c.execute(\"select count(*) from runs where state = 'finished'\").fetchone()[0])")" "$n"
finish
