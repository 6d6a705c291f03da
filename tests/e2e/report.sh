#!/bin/bash
# The report of a real run (issue 12): a BuildKit log of our own, a memory
# spike (memhog) and a tiny real ninja build with --ninja-log, then
# `buildtel report`; headless Chromium renders the page (screenshot, DOM,
# console), the file names no URL; the GitHub Actions job summary is
# appended, its tables well formed; ::warning:: lines come after the build's
# output.
. "$(dirname "$0")/lib.sh"
: "${MEMHOG:?MEMHOG must name the memhog helper}"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
command -v ninja >/dev/null || { echo "ninja is missing"; exit 77; }
FIX=$HERE/../fixtures/report/bake.log
L=$T/logs
N=$T/nj
mkdir -p "$L" "$N"
cat >"$N/build.ninja" <<'NINJA'
rule work
  command = sleep $secs && touch $out
build a.o: work
  secs = 0.3
build b.o: work
  secs = 0.5
build c.o: work
  secs = 0.2
build app: work a.o b.o c.o
  secs = 0.1
NINJA
FEED='awk '\''{ print; fflush() } /^#[0-9]+ (DONE|CACHED)/ { system("sleep 0.05") }'\'' "$1"'
SUM=$T/step-summary.md
printf '# earlier step\n\nkept\n' >"$SUM"

GITHUB_STEP_SUMMARY=$SUM GITHUB_ACTIONS=true "$BUILDTEL" run --log-dir "$L" --run-id rep \
        --interval 0.1 --near-oom-mb 1000000 --ninja-log "$N/.ninja_log" -- \
        sh -c "$FEED"'; echo "spike: memhog 600 MiB"; "$2" 600 1.2; ninja -C "$3" -j2; echo build-done' \
        sh "$FIX" "$MEMHOG" "$N" >"$T/out" 2>"$T/err"
expect_eq "run exit" "$?" 0
check "build output passed through" grep -q '^build-done$' "$T/out"
check "report path printed" grep -q "^buildtel: report: $L/report-rep.html$" "$T/err"
check "report written" test -s "$L/report-rep.html"
check "::warning:: near-OOM on stderr" grep -q '^::warning title=buildtel near-OOM::' "$T/err"
check "warnings after the build's output" awk '/^::warning/ { w = 1 } w && /^#[0-9]/ { exit 1 }' "$T/err"

# Markdown: appended, tables with one column count per table
check "summary appended, not overwritten" grep -q '^kept$' "$SUM"
check "summary names the run" grep -q '^## buildtel report: run rep$' "$SUM"
check "summary has a targets table" grep -q '^| app | built |' "$SUM"
check "summary has the peaks" grep -q '^| host memory used | [0-9.]* [KMG]iB |' "$SUM"
check "summary lists the artifacts" grep -q '^- report-rep.html$' "$SUM"
check "Markdown tables well formed (one column count, a separator row)" python3 -c '
import re, sys
rows, bad, tables = [], 0, 0
def flush():
    global bad, tables
    if not rows:
        return
    tables += 1
    counts = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
    if len(counts) != 1 or len(rows) < 2 or not re.fullmatch(r"\|( *:?-+:? *\|)+", rows[1]):
        bad += 1
    rows.clear()
for line in open(sys.argv[1]).read().split("\n"):
    if line.startswith("|"):
        rows.append(line)
    else:
        flush()
flush()
sys.exit(bad or tables < 3)' "$SUM"

# the run's own page (re-rendering below writes report-rep.html again)
cp "$L/report-rep.html" "$T/run.html"
check "ninja edges drawn on lanes, by ninja's clock" grep -q "Slowest ninja edges (.ninja_log, ninja's clock, placed on the run's" "$T/run.html"
check "the ninja edge b.o named" grep -q "<title>b.o: " "$T/run.html"

# report from the files and from the history
"$BUILDTEL" report -o "$T/from-csv.html" "$L/resources-rep.csv" 2>"$T/rerr"
expect_eq "report FILE.csv exit" "$?" 0
"$BUILDTEL" report -o "$T/from-db.html" rep 2>>"$T/rerr"
expect_eq "report RUN exit" "$?" 0
"$BUILDTEL" report --format markdown rep >"$T/md" 2>>"$T/rerr"
expect_eq "report --format markdown exit" "$?" 0
check "markdown to stdout" grep -q '^| app | built |' "$T/md"
rm -f "$L/report-rep.html"
(cd "$T" && "$BUILDTEL" report "$L/resources-rep.csv" 2>>"$T/rerr")
check "default output beside the CSV" test -s "$L/report-rep.html"
"$BUILDTEL" report -o - "$L/resources-rep.csv" >"$T/stdout.html" 2>>"$T/rerr"
check "-o - writes stdout" grep -q '</html>' "$T/stdout.html"
"$BUILDTEL" run --quiet --no-report --log-dir "$L" --run-id norep -- true
check "--no-report writes none" test ! -e "$L/report-norep.html"

for f in "$T/run.html" "$L/report-rep.html" "$T/from-csv.html" "$T/from-db.html"; do
        check "no URL in $(basename "$f")" bash -c '! grep -Eq "https?://" "$1"' _ "$f"
        check "src/href only to # or data: in $(basename "$f")" \
                bash -c '! grep -Eo "(src|href)=\"[^\"]*\"" "$1" | grep -Ev "=\"(#|data:)"' _ "$f"
        check "only inline script in $(basename "$f")" bash -c '! grep -Eqi "<script[^>]*src" "$1" && [ "$(grep -oi "<script" "$1" | wc -l)" -le 1 ]' _ "$f"
done
check "targets drawn" grep -q 'Targets (start to end' "$T/from-csv.html"
# targets.json keeps the run's edges with their times: the same lanes
check "ninja edges from the files, on lanes by ninja's clock" grep -q "Slowest ninja edges (.ninja_log, ninja's clock, placed on the run's" "$T/from-csv.html"
check "units from the files" grep -q 'Compile units by peak memory\|Host memory' "$T/from-csv.html"

# BuildKit steps, ninja lanes and compiler-cache deltas: a second run of our
# own multi-target log (sccache stats printed twice) and a ninja build; the
# live page and the page from the history show the same.
rm -f "$N/.ninja_log" "$N"/*.o "$N/app"
"$BUILDTEL" run --quiet --log-dir "$L" --run-id steps --interval 0.1 --ninja-log "$N/.ninja_log" -- \
        sh -c "$FEED"'; ninja -C "$2" -j2 >/dev/null' sh "$HERE/../fixtures/report/steps-cc.log" "$N" >/dev/null 2>&1
expect_eq "the steps run exits 0" "$?" 0
cp "$L/report-steps.html" "$T/steps-live.html"
"$BUILDTEL" report -o "$T/steps-db.html" steps 2>>"$T/rerr"
expect_eq "report RUN of the steps run exits 0" "$?" 0
check "the live page draws the BuildKit steps" grep -q '<h3>BuildKit steps (.*9 of 9 shown' "$T/steps-live.html"
check "a cached step marked on its bar" grep -q 'url(#stepcached)"><title>\[svc base 1/3\] FROM docker.io/library/debian:12 (svc): [^<]*, cached</title>' "$T/steps-live.html"
check "the steps sit on lanes per target" grep -q '<text x="2" y="[0-9]*">cli</text>' "$T/steps-live.html"
sect() { # the part of a page from its bars to its totals: targets, steps, edges, tables but the totals
        sed -n '/<div id="bars">/,/<h3>The build.s totals/p' "$1" | sed 's/^.*<div id="bars">//; s/<h3>The build.s totals.*//'
}
sect "$T/steps-live.html" >"$T/steps-live.sect"
sect "$T/steps-db.html" >"$T/steps-db.sect"
check "the history's page has the targets, steps, ninja lanes and cache deltas of the live one" cmp -s "$T/steps-live.sect" "$T/steps-db.sect"
diff "$T/steps-live.sect" "$T/steps-db.sect" | head -20
check "ninja lanes from the history, by ninja's clock" grep -q "Slowest ninja edges (.ninja_log, ninja's clock, placed on the run's" "$T/steps-db.html"
check "compiler-cache deltas from the history (sccache 11 hits, 5 misses)" grep -q '<tr><td>sccache</td><td class="n">2</td><td class="n">+11</td><td class="n">+5</td>' "$T/steps-db.html"

# the peak: its value and context, as the summary has them
PEAK=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
p = s["memory"]["peak_used_mb"]
print("%.4g" % (p["value"] / 1024))
print(p.get("context") or "")' "$L/resources-rep.summary.json") || bad "summary.json peak"
VAL=$(sed -n 1p <<<"$PEAK")
CTX=$(sed -n 2p <<<"$PEAK")

if [ ! -x "$CHROMIUM" ]; then
        echo "chromium ($CHROMIUM) is missing: the rendering checks need it"
        [ "$FAILS" -eq 0 ] || finish
        exit 77
fi
chrome() {
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" --enable-logging=stderr --v=0 \
                --window-size=1280,2400 "$@"
}
chrome --screenshot="$T/shot.png" "file://$T/run.html" >/dev/null 2>"$T/chrome.err"
check "screenshot taken" test -s "$T/shot.png"
[ -n "${REPORT_SHOT:-}" ] && cp "$T/shot.png" "$REPORT_SHOT" && cp "$T/run.html" "${REPORT_SHOT%.png}.html"
chrome --dump-dom "file://$T/run.html" >"$T/dom.html" 2>>"$T/chrome.err"
check "DOM dumped" grep -q '</html>' "$T/dom.html"
check "the hover read-out set itself up (its script ran to the end)" grep -q '<body data-hover="on"' "$T/dom.html"
# a pointer over the middle of the first chart: the read-out names a time
# and the lines' values
sed 's|</body>|<script>var g=document.querySelector("svg.hv"),r=g.getBoundingClientRect();g.dispatchEvent(new MouseEvent("mousemove",{clientX:r.left+r.width/2,clientY:r.top+10}));document.body.setAttribute("data-readout",g.querySelector("text.hvt").textContent);</script></body>|' "$T/run.html" >"$T/hover.html"
chrome --dump-dom "file://$T/hover.html" >"$T/hover-dom.html" 2>>"$T/chrome.err"
check "the hover read-out shows the time and the values of the nearest point" grep -Eq 'data-readout="([0-9]+[hm])*[0-9]+s: total [0-9.e+-]+ (G|M)iB, kernel peak [0-9.e+-]+ (G|M)iB, anonymous [0-9.e+-]+ (G|M)iB, file [0-9.e+-]+ (G|M)iB"' "$T/hover-dom.html"
grep -o 'data-readout="[^"]*"' "$T/hover-dom.html"
check "the timeline's charts carry what the read-out needs" grep -q '<svg class="hv" data-tmax="[0-9.e+]*" data-ymax="[0-9.e+]*" data-unit="' "$T/dom.html"
check "no console errors" bash -c '! grep -Ei "CONSOLE|Uncaught|SyntaxError" "$1"' _ "$T/chrome.err"
check "no network request" bash -c '! grep -Ei "net::|ERR_(NAME|CONNECTION|INTERNET)" "$1"' _ "$T/chrome.err"
check "peak value $VAL GiB in the DOM" grep -qF "peak used $VAL GiB" "$T/dom.html"
check "peak context '$CTX' in the DOM" grep -qF "context $CTX" "$T/dom.html"
check "stage bands in the DOM" grep -q '<title>stage ' "$T/dom.html"
finish
