#!/usr/bin/env bash
# status, inspect and top show the build's own peak, not the host's
# (issue 26): a 300 MiB build reads ~300 MiB, `sh -c true` reads next to
# nothing whatever the host uses.
. "$(dirname "$0")/lib.sh"
: "${MEMHOG:?MEMHOG must name the memhog helper}"
DB="$T/h.db"
J() { python3 -c 'import json,sys; r = [x for x in json.load(sys.stdin) if x["id"] == sys.argv[1]][0]; print(r[sys.argv[2]])' "$@"; }

"$BUILDTEL" run --quiet --interval 0.2 --db "$DB" --log-dir "$T/l" --run-id hog -- "$MEMHOG" 300 2 >/dev/null
expect_eq "the 300 MiB build: status" "$?" 0
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id tiny -- sh -c true
"$BUILDTEL" status --db "$DB" --json >"$T/st.json"
peak=$(J hog build_mem_peak_mb <"$T/st.json")
anon=$(J hog build_anon_peak_mb <"$T/st.json")
echo "hog: build peak $peak MiB, anon $anon MiB, host $(J hog mem_used_peak_mb <"$T/st.json") MiB"
check "status --json: the build's peak is ~300 MiB ($peak)" awk -v v="$peak" 'BEGIN{exit !(v >= 295 && v <= 340)}'
check "status --json: its anon peak is ~300 MiB ($anon)" awk -v v="$anon" 'BEGIN{exit !(v >= 280 && v <= 340)}'
tiny=$(J tiny build_mem_peak_mb <"$T/st.json")
check "sh -c true: the build's peak is small ($tiny MiB)" awk -v v="$tiny" 'BEGIN{exit !(v < 64)}'
"$BUILDTEL" status --db "$DB" >"$T/st.txt"
cat "$T/st.txt"
check "status: the build-peak column" grep -q 'BUILD PEAK' "$T/st.txt"
check "status: the host's peak apart" grep -q 'HOST PEAK' "$T/st.txt"
check "status text: hog ~300 MiB" grep -Eq '^hog .* (29[5-9]|3[0-3][0-9]) MiB' "$T/st.txt"
"$BUILDTEL" inspect --db "$DB" hog >"$T/in.txt"
check "inspect: the build's own peak" grep -Eq 'build memory \(kernel\) +(29[5-9]|3[0-3][0-9]) MiB' "$T/in.txt"
check "inspect: the host's apart" grep -q 'host memory used' "$T/in.txt"
"$BUILDTEL" top --once --db "$DB" hog >"$T/top.txt"
check "top's detail: the build's peak" grep -Eq '^PEAK build (29[5-9]|3[0-3][0-9]) MiB' "$T/top.txt"

# durations rounded as the summary rounds them (119.7 s: "2m00s", not
# the truncated "1m59s"; an hour and more with seconds: "1h02m03s")
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is missing: tools/deps.sh"; exit 77; }
sqlite3 "$DB" "UPDATE runs SET end_epoch = start_epoch + 119.7 WHERE run_id = 'tiny';
               UPDATE runs SET end_epoch = start_epoch + 3723.4 WHERE run_id = 'hog'"
"$BUILDTEL" status --db "$DB" >"$T/st2.txt"
check "status rounds 119.7 s to 2m00s" grep -Eq '^tiny .* 2m00s ' "$T/st2.txt"
check "status shows 3723.4 s as 1h02m03s" grep -Eq '^hog .* 1h02m03s ' "$T/st2.txt"
finish
