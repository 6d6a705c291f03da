#!/bin/bash
# The report of a 24-hour run at 1 s (86,400 rows): its size (issue 12:
# under 1 MiB), the time `buildtel report` takes to write it, and the time
# headless Chromium takes to render it (a screenshot; the issue asks under
# 1 s in a browser: the figure below includes Chromium's own start).
# usage: bench/report.sh BUILDTEL [ROWS]
set -eu
BT=${1:?usage: bench/report.sh BUILDTEL [ROWS]}
ROWS=${2:-86400}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The header is the binary's own (a real run), the rows a day of a build:
# memory rising and falling with one spike, CPU busy, stages every hour.
"$BT" run --quiet --no-db --no-report --log-dir "$T" --run-id hdr -- true
python3 - "$T/resources-hdr.csv" "$T/resources-day.csv" "$ROWS" <<'PY'
import math, sys
hdr = open(sys.argv[1], newline="").readline().rstrip("\r\n").split(",")
rows = int(sys.argv[3])
out = open(sys.argv[2], "w", newline="")
out.write(",".join(hdr) + "\r\n")
t0 = 1.8e9
for i in range(rows):
    used = 6000 + 4000 * math.sin(i / 3600.0) ** 2 + (12000 if i == rows // 2 else 0)
    v = {"epoch": "%.3f" % (t0 + i), "iso": "", "elapsed_s": "%.3f" % i,
         "load1": "%.2f" % (4 + math.sin(i / 600.0)), "cpu_pct": "%.1f" % (50 + 40 * math.sin(i / 97.0)),
         "mem_used_mb": "%.0f" % used, "mem_avail_mb": "%.0f" % (24000 - used),
         "mem_pct": "%.1f" % (used / 240), "swap_used_mb": "0", "disk_avail_gb": "%.2f" % (80 - i / 3600.0),
         "disk_pct": "50.0", "compilers": str(i % 9), "stage": "stage-%d" % (i // 3600),
         "context": "[%d/%d] Building CXX object obj%d.o" % (i, rows, i), "cg_mode": "v2",
         "cg_mem_mb": "%.1f" % (used / 2), "cg_mem_peak_mb": "%.1f" % (used / 2),
         "cg_mem_anon_mb": "%.1f" % (used / 3), "cg_mem_file_mb": "%.1f" % (used / 6)}
    out.write(",".join(v.get(c, "") for c in hdr) + "\r\n")
PY
cp "$T/resources-hdr.run.json" "$T/resources-day.run.json"
s=$(date +%s.%N)
"$BT" report -o "$T/day.html" "$T/resources-day.csv" 2>/dev/null
e=$(date +%s.%N)
size=$(stat -c %s "$T/day.html")
printf 'rows %d  csv %d bytes  report %d bytes (%.2f MiB, limit 1 MiB: %s)  buildtel report %.3f s\n' \
        "$ROWS" "$(stat -c %s "$T/resources-day.csv")" "$size" "$(echo "$size / 1048576" | bc -l)" \
        "$([ "$size" -lt 1048576 ] && echo ok || echo OVER)" "$(echo "$e - $s" | bc -l)"
if [ -x "$CHROMIUM" ]; then
        chrome() {
                "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                        --disable-background-networking --disable-component-update --disable-sync \
                        --user-data-dir="$(mktemp -d "$T/c.XXXXXX")" --window-size=1280,2400 "$@" \
                        >/dev/null 2>&1
        }
        echo '<!DOCTYPE html><title>empty</title>' >"$T/empty.html"
        s=$(date +%s.%N); chrome --screenshot="$T/e.png" "file://$T/empty.html"; e=$(date +%s.%N)
        base=$(echo "$e - $s" | bc -l)
        s=$(date +%s.%N); chrome --screenshot="$T/d.png" "file://$T/day.html"; e=$(date +%s.%N)
        full=$(echo "$e - $s" | bc -l)
        printf 'chromium screenshot: empty page %.2f s, the report %.2f s (render ~%.2f s)\n' \
                "$base" "$full" "$(echo "$full - $base" | bc -l)"
else
        echo "chromium missing: render time not measured"
fi
