#!/usr/bin/env bash
# One outcome word on every surface that reads the history (issue 35): a
# build killed by SIGPIPE reads SIGPIPE (never "signal 1": top's column cut
# "signal 13"), a build that failed after an OOM kill reads OOM-killed, and
# top's BUILD column of a finished run is its peak as `status` prints it,
# its OOM column the kills.
. "$(dirname "$0")/lib.sh"
: "${MEMHOG:?MEMHOG must name the memhog helper}"
DB="$T/h.db"
J() { python3 -c 'import json,sys; r = [x for x in json.load(sys.stdin) if x["id"] == sys.argv[1]][0]; print(r[sys.argv[2]])' "$@"; }
row() { grep -E "^$1 " "$2"; }

"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id piped -- sh -c 'kill -PIPE $$'
expect_eq "SIGPIPE: buildtel's status is the shell's 128+13" "$?" 141
"$BUILDTEL" status --db "$DB" --json >"$T/st.json"
expect_eq "status --json: SIGPIPE" "$(J piped result <"$T/st.json")" SIGPIPE
"$BUILDTEL" status --db "$DB" >"$T/st.txt"
check "status: SIGPIPE in its row" sh -c "grep -E '^piped ' '$T/st.txt' | grep -qw SIGPIPE"
COLUMNS=120 "$BUILDTEL" top --once --db "$DB" >"$T/top.txt"
cat "$T/top.txt"
check "top: SIGPIPE whole in its row" grep -qw 'SIGPIPE' "$T/top.txt"
check "top: no 'signal' cut" sh -c "! grep -q 'signal' '$T/top.txt'"
"$BUILDTEL" inspect --db "$DB" piped >"$T/in.txt"
check "inspect: result SIGPIPE" grep -Eq '^result +SIGPIPE$' "$T/in.txt"
expect_eq "summary.json: run.outcome SIGPIPE" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["outcome"])' "$T/l/resources-piped.summary.json")" SIGPIPE

if [ "$(id -u)" = 0 ] && grep -q cgroup2 /proc/self/mountinfo; then
        GITHUB_STEP_SUMMARY="$T/step.md" "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id oom \
                --interval 0.05 --memory-max 96M -- sh -c "'$MEMHOG' 400 0.5; exit 2" >/dev/null 2>"$T/err.txt"
        expect_eq "OOM: the build's own exit 2" "$?" 2
        check "stderr: OOM-killed, then the build's status" grep -q '^buildtel: .*, OOM-killed (exit 2)$' "$T/err.txt"
        check "summary.txt: OOM-killed" grep -Eq '^exit: +OOM-killed \(exit 2\)$' "$T/l/resources-oom.summary.txt"
        expect_eq "summary.json: run.outcome" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["outcome"])' "$T/l/resources-oom.summary.json")" OOM-killed
        check "report: the Result card says OOM-killed" grep -q 'id="a-result"><div class="k">Result</div><div class="v bad">OOM-killed<' "$T/l/report-oom.html"
        check "job summary: outcome OOM-killed" grep -q '^| outcome | OOM-killed (exit 2) |$' "$T/step.md"
        "$BUILDTEL" status --db "$DB" --json >"$T/st.json"
        expect_eq "status --json: OOM-killed" "$(J oom result <"$T/st.json")" OOM-killed
        "$BUILDTEL" status --db "$DB" >"$T/st.txt"
        cat "$T/st.txt"
        check "status: OOM-killed in its row" sh -c "grep -E '^oom ' '$T/st.txt' | grep -qw OOM-killed"
        "$BUILDTEL" inspect --db "$DB" oom >"$T/in.txt"
        check "inspect: result OOM-killed" grep -Eq '^result +OOM-killed$' "$T/in.txt"
        "$BUILDTEL" inspect --db "$DB" --json oom >"$T/in.json"
        expect_eq "inspect --json: OOM-killed" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"])' "$T/in.json")" OOM-killed
        COLUMNS=120 "$BUILDTEL" top --once --db "$DB" >"$T/top.txt"
        cat "$T/top.txt"
        line=$(grep -F 'OOM-killed' "$T/top.txt" | head -1)
        check "top: OOM-killed in a row" test -n "$line"
        # the status row's BUILD PEAK (the 7th column; "96.0 MiB" is 2 words)
        peak=$(python3 -c 'import json,sys,subprocess
r=[x for x in json.load(open(sys.argv[1])) if x["id"]=="oom"][0]
print(r["build_mem_peak_mb"])' "$T/st.json")
        shown=$(grep -E '^oom ' "$T/st.txt" | grep -oE '[0-9.]+ (B|KiB|MiB|GiB)' | head -1)
        echo "status: build peak $peak MiB, shown '$shown'; top row: $line"
        check "top: the BUILD column is the peak as status prints it ($shown)" grep -qF "$shown" <<<"$line"
        check "top: the OOM column counts the kill" grep -Eq '(GiB|MiB|KiB| B) +[-0-9%]+ +[-0-9%]+ +1( |$)' <<<"$line"
else
        echo "not root or no cgroup v2: the OOM part is left out"
fi
finish
