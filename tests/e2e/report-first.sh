#!/bin/bash
# The report's first screen and its one time axis (issue 26): a real
# out-of-tree ninja build (the sources two directories up, as meson and
# cmake write them: cc -c ../../src/uNN.c) of 24 small units and one larger
# one that runs alone at the end, under buildtel. Headless Chromium lays
# the page out at 1280 and 800 px: the result and the build's peak are in
# the first screen above any chart, every chart and lane has its time axis
# at one x, the tick labels are round numbers, the units are named without
# "../", the -j reading names the CPU limit, the parallelism reading names
# the unit that ran alone. `buildtel report RUN` (no --ninja-log) from the
# history draws the ninja lanes.
. "$(dirname "$0")/lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
command -v ninja >/dev/null || { echo "ninja is missing"; exit 77; }
command -v cc >/dev/null || { echo "cc is missing"; exit 77; }
[ -x "$CHROMIUM" ] || { echo "chromium ($CHROMIUM) is missing"; exit 77; }
NCPU=$(nproc)
P=$T/proj
L=$T/logs
mkdir -p "$P/src" "$P/out/sub" "$L"
# a unit that takes a compiler a few tenths of a second: many functions
gen() { # gen FILE FUNCTIONS (named after the file)
        awk -v n="$2" -v p="$(basename "$1" .c)" 'BEGIN { for (i = 0; i < n; i++)
                printf "int %s_%d(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * %d ^ (s >> 3); return s; }\n", p, i, i
        }' >"$1"
}
# big.c must compile alone for more than the parallelism reading's 2 s
# (model/jobs.h PAR_MIN_S) whatever this machine's speed: 4000 functions
# took 1.2 s here on 2026-12-03, and the reading was rightly not worth
# showing. Sized from a timed compile of 1000 for about 4.5 s (4000 to
# 40000 functions).
gen "$T/cal.c" 1000
t0=$(date +%s%N)
cc -O0 -c "$T/cal.c" -o "$T/cal.o"
ms=$((($(date +%s%N) - t0) / 1000000))
NBIG=$((4500 * 1000 / (ms > 0 ? ms : 1)))
[ "$NBIG" -lt 4000 ] && NBIG=4000
[ "$NBIG" -gt 40000 ] && NBIG=40000
echo "big.c: $NBIG functions (1000 compiled in $ms ms)"
{
        echo 'rule cc'
        echo '  command = cc -O0 -c $in -o $out'
        echo 'rule link'
        echo '  command = ld -r -o $out $in'
        objs=
        for i in $(seq -w 1 24); do
                gen "$P/src/u$i.c" 150
                echo "build u$i.o: cc ../../src/u$i.c"
                objs="$objs u$i.o"
        done
        gen "$P/src/big.c" "$NBIG"
        echo "build big.o: cc ../../src/big.c ||$objs"
        echo "build app.o: link$objs big.o"
} >"$P/out/sub/build.ninja"

# no --ninja-log: run finds out/sub/.ninja_log from `ninja -C DIR` itself
"$BUILDTEL" run --quiet --log-dir "$L" --run-id first --interval 0.05 \
        -- ninja -C "$P/out/sub" -j "$NCPU" >"$T/out" 2>"$T/err"
expect_eq "the build exits 0" "$?" 0
check "report written" test -s "$L/report-first.html"
check "units seen" test -s "$L/resources-first.units.csv"
check "the full path kept in the units file" grep -q '\.\./\.\./src/u01\.c' "$L/resources-first.units.csv"
check "the summary names units without ../" bash -c '! sed -n "/^units (top/,\$p" "$1" | grep -q "\.\./"' _ "$L/resources-first.summary.txt"
check "the summary's -j reading names the CPU limit" grep -q "the $NCPU CPUs are the limit: -j $NCPU" "$L/resources-first.summary.txt"
grep -E 'CPUs|in flight' "$L/resources-first.summary.txt"
# one -j reading, told the same in the summary and the report (the report
# once planned for the host's RAM where the summary took the cap)
jr=$(sed -n 's/.*<li id="r-jobs">-j: \([^<]*\)<.*/\1/p' "$L/report-first.html")
check "the report's -j reading is the summary's (${jr:-none})" grep -qF "${jr:-no reading}" "$L/resources-first.summary.txt"

# from the history, without --ninja-log
"$BUILDTEL" report -o "$T/db.html" first 2>"$T/rerr"
expect_eq "report RUN exits 0" "$?" 0

chrome() {
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --hide-scrollbars --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" \
                --enable-logging=stderr --v=0 "$@"
}
# The probe: the layout as a user's browser makes it, written into the DOM.
PROBE='<script>(function(){var R=function(e){return e.getBoundingClientRect();};
var firstSvg=document.querySelector("#timeline svg"),top=firstSvg?R(firstSvg).top:1e9;
var res=document.getElementById("a-result"),pk=document.getElementById("a-peak");
var xs=[].map.call(document.querySelectorAll("#timeline svg line.x0"),function(l){return Math.round(R(l).left*10)/10;});
var tk=[].map.call(document.querySelectorAll("#timeline text.tk"),function(t){return t.textContent;});
var ty={};[].forEach.call(document.querySelectorAll("#timeline svg"),function(g,i){
 var v=[].map.call(g.querySelectorAll("text.ty"),function(t){return t.textContent;});if(v.length)ty[i]=v;});
var units=[].map.call(document.querySelectorAll("#tables td[title]"),function(t){return t.textContent;});
var o={vh:innerHeight,top:top,res:res?R(res).bottom:-1,pk:pk?R(pk).bottom:-1,
 resText:res?res.textContent:"",pkText:pk?pk.textContent:"",xs:xs,tk:tk,ty:ty,units:units,
 jobs:(document.getElementById("r-jobs")||{}).textContent||"",
 par:(document.getElementById("r-par")||{}).textContent||"",
 lanes:document.querySelectorAll("#bars rect.f2").length};
document.body.setAttribute("data-probe",JSON.stringify(o));})();</script></body>'
for page in "$L/report-first.html" "$T/db.html"; do
        name=$(basename "$page" .html)
        PROBE=$PROBE python3 -c 'import os, sys; sys.stdout.write(open(sys.argv[1]).read().replace("</body>", os.environ["PROBE"]))' "$page" >"$T/$name-probe.html"
        for wd in 1280 800; do
                chrome --window-size=$wd,900 --screenshot="$T/$name-$wd.png" "file://$page" >/dev/null 2>>"$T/chrome.err"
                chrome --window-size=$wd,900 --dump-dom "file://$T/$name-probe.html" >"$T/$name-$wd.dom" 2>>"$T/chrome.err"
                check "$name at $wd px: screenshot" test -s "$T/$name-$wd.png"
                [ -n "${REPORT_SHOTS:-}" ] && mkdir -p "$REPORT_SHOTS" && cp "$T/$name-$wd.png" "$page" "$REPORT_SHOTS/"
                python3 - "$T/$name-$wd.dom" "$NCPU" "$name at $wd px" <<'PY' || FAILS=$((FAILS + 1))
import html, json, math, re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'data-probe="([^"]*)"', dom)
if not m:
    print("FAIL %s: no probe in the DOM" % sys.argv[3]); sys.exit(1)
o = json.loads(html.unescape(m.group(1)))
ncpu, what, bad = int(sys.argv[2]), sys.argv[3], 0
def check(ok, msg):
    global bad
    print(("ok   " if ok else "FAIL ") + what + ": " + msg)
    bad += 0 if ok else 1
check(0 < o["res"] <= min(o["top"], o["vh"]), "the result is in the first screen above any chart (%.0f, chart at %.0f, screen %d)" % (o["res"], o["top"], o["vh"]))
check(0 < o["pk"] <= min(o["top"], o["vh"]), "the build's peak is in the first screen above any chart (%.0f)" % o["pk"])
check("succeeded" in o["resText"], "the result says succeeded: " + o["resText"])
check(re.search(r"\d (MiB|GiB)", o["pkText"]) and "at +" in o["pkText"], "the peak has its value and time: " + o["pkText"])
check(len(o["xs"]) >= 4 and max(o["xs"]) - min(o["xs"]) < 0.5, "%d time axes at one x: %s" % (len(o["xs"]), sorted(set(o["xs"]))))
def tsec(s):
    if s == "0": return 0
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d)?)s)?", s)
    return None if not m or not any(m.groups()) else int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3) or 0)
ts = [tsec(t) for t in o["tk"]]
check(all(t is not None for t in ts), "time ticks read as durations: %s" % sorted(set(o["tk"]))[:12])
def round125(d):
    e = math.floor(math.log10(d)); m = d / 10 ** e
    return any(abs(m - k) < 1e-6 for k in (1, 2, 5, 10))
steps = sorted({round(b - a, 6) for a, b in zip(ts, ts[1:]) if None not in (a, b) and b > a})
check(len(steps) >= 1 and all(s in (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600) for s in steps), "time steps are round: %s" % steps)
for i, v in o["ty"].items():
    nums = [float(x) for x in v]
    d = sorted({round(b - a, 9) for a, b in zip(nums, nums[1:])})
    check(nums[0] == 0 and len(d) == 1 and round125(d[0]), "chart %s: y ticks from 0 in one 1-2-5 step: %s" % (i, v))
check(o["units"] and not any("../" in u for u in o["units"]), "units named without ../: %s" % o["units"][:6])
check(("the %d CPUs are the limit: -j %d" % (ncpu, ncpu)) in o["jobs"], "the -j reading names the CPU limit: " + o["jobs"])
check("big.c" in o["par"], "the parallelism reading names the unit that ran alone: " + o["par"])
check(o["lanes"] >= 20, "ninja edges on lanes: %d" % o["lanes"])
sys.exit(1 if bad else 0)
PY
        done
done
check "no console errors" bash -c '! grep -Ei "CONSOLE|Uncaught|SyntaxError" "$1"' _ "$T/chrome.err"
finish
