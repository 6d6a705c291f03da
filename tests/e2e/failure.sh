#!/usr/bin/env bash
# A failed build names its failure on every surface (issue 35, item 2):
# the failed target (make's innermost rule, ninja's FAILED edge) and the
# compiler's first and last error lines, in the end-of-run lines on
# stderr, summary.txt/json, the report's Result card, the job summary,
# status, inspect (text and JSON), a replay of the history (summarize),
# and the OTLP run span's status; a build that succeeds names none.
# Real builds: gcc through make -j2 and through ninja.
. "$(dirname "$0")/lib.sh"
SINKDIR=$(dirname "$0")/../otlp-sink
DB="$T/h.db"
L="$T/l"
command -v cc >/dev/null || { echo "no C compiler"; exit 77; }
J() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: d = d[k] if not isinstance(d, list) else d[int(k)]
print(d)' "$@"; }

# --- make -j2: good.c builds, bad.c fails with two errors; -k goes on
mkdir -p "$T/mk"
printf 'int good(void) { return 0; }\n' >"$T/mk/good.c"
printf 'int bad(void) { return undeclared_x; }\nint worse(void) { return undeclared_y; }\n' >"$T/mk/bad.c"
printf 'all: good.o bad.o\n%%.o: %%.c\n\tcc -c $< -o $@\n' >"$T/mk/Makefile"
unset OTEL_SDK_DISABLED OTEL_EXPORTER_OTLP_TRACES_ENDPOINT OTEL_EXPORTER_OTLP_METRICS_ENDPOINT \
        OTEL_EXPORTER_OTLP_PROTOCOL OTEL_EXPORTER_OTLP_TRACES_PROTOCOL TRACEPARENT
# the OTLP part needs the strict sink (node and tests/otlp-sink's modules)
OTLP=; PORT=
if command -v node >/dev/null && [ -d "$SINKDIR/node_modules/protobufjs" ]; then
        OTLP=1; start_sink "$T/sink"
else
        echo "no node or tests/otlp-sink/node_modules ('npm ci' there): the OTLP part is left out"
fi
(cd "$T/mk" && env GITHUB_STEP_SUMMARY="$T/step.md" ${OTLP:+OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT"} \
        "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id mk --interval 0.1 -- make -k -j2 \
        >"$T/mk.out" 2>"$T/mk.err")
expect_eq "make: the build's own status" "$?" 2
stop_sink
cat "$T/mk.err"
E1="bad.c:1:24: error: 'undeclared_x' undeclared"
E2="bad.c:2:26: error: 'undeclared_y' undeclared"
# gcc quotes with ‘’ in a UTF-8 locale, '' in C: match either
Q() { sed "s/'/[‘’']/g" <<<"$1"; }
check "stderr: the failed target, after the outcome line" grep -q '^buildtel:   failed: bad.o (make)$' "$T/mk.err"
check "stderr: the first error" grep -Eq "^buildtel:   first error: $(Q "$E1")" "$T/mk.err"
check "stderr: the last error" grep -Eq "^buildtel:   last error: $(Q "$E2")" "$T/mk.err"
check "stderr: outcome line first" sh -c "grep -n '' '$T/mk.err' | grep -B1 'failed: bad.o' | head -1 | grep -q 'exit 2'"
check "summary.txt: failed" grep -q '^  failed: bad.o (make)$' "$L/resources-mk.summary.txt"
check "summary.txt: first error" grep -Eq "^  first error: $(Q "$E1")" "$L/resources-mk.summary.txt"
S="$L/resources-mk.summary.json"
expect_eq "summary.json: run.failure.target" "$(J "$S" run failure target)" bad.o
expect_eq "summary.json: run.failure.tool" "$(J "$S" run failure tool)" make
check "summary.json: first error" grep -Eq "^$(Q "$E1")" <<<"$(J "$S" run failure first_error)"
check "summary.json: last error" grep -Eq "^$(Q "$E2")" <<<"$(J "$S" run failure last_error)"
check "report: the Result card names the failure" grep -q 'id="a-result">.*failed: bad.o (make)</div><div class="d"><code>bad.c:1:24: error' "$L/report-mk.html"
check "job summary: a failed row" grep -Eq "^\| failed \| bad.o \(make\)<br>$(Q "$E1")" "$T/step.md"
"$BUILDTEL" status --db "$DB" >"$T/st.txt"
cat "$T/st.txt"
check "status: the newest run's failure under the table" grep -Eq "^mk: failed bad.o \(make\): $(Q "$E1").* \.\.\. $(Q "$E2")" "$T/st.txt"
"$BUILDTEL" inspect --db "$DB" mk >"$T/in.txt"
check "inspect: a failed line after the result" sh -c "grep -A1 '^result ' '$T/in.txt' | grep -Eq '^failed +bad.o \(make\): $(Q "$E1")'"
"$BUILDTEL" inspect --db "$DB" --json mk >"$T/in.json"
expect_eq "inspect --json: failure.target" "$(J "$T/in.json" failure target)" bad.o
check "inspect --json: failure.first_error" grep -Eq "^$(Q "$E1")" <<<"$(J "$T/in.json" failure first_error)"
"$BUILDTEL" summarize --db "$DB" mk >"$T/re.txt" 2>&1
check "summarize (a replay of the history): the failure" grep -q '^  failed: bad.o (make)$' "$T/re.txt"
[ -z "$OTLP" ] || python3 - "$T/sink/rec.jsonl" "$E1" <<'PY' || bad "OTLP: the run span's status names the failure"
import json, re, sys
sp = [s for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/v1/traces"
      for rs in r["request"]["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]
      if s["name"].startswith("buildtel run ")]
assert len(sp) == 1, sp
st = sp[0].get("status", {})
a = {x["key"]: list(x["value"].values())[0] for x in sp[0]["attributes"]}
want = re.sub("'", "[‘’']", sys.argv[2])
print("span status:", st, "attrs:", {k: v for k, v in a.items() if k.startswith("build.")})
assert st.get("code") == 2
assert re.match("exit 2: bad.o failed: " + want, st.get("message", "")), st
assert a.get("build.failed.target") == "bad.o" and a.get("build.outcome") == "exit 2", a
assert re.match(want, a.get("build.error.first", "")), a
PY
[ -n "$OTLP" ] && [ $? = 0 ] && ok "OTLP: the run span's status and attributes name the failure"

# --- ninja: the FAILED edge, its first output
if command -v ninja >/dev/null; then
        mkdir -p "$T/nj"
        cp "$T/mk/good.c" "$T/mk/bad.c" "$T/nj/"
        printf 'rule cc\n  command = cc -c $in -o $out\nbuild good.o: cc good.c\nbuild bad.o: cc bad.c\n' >"$T/nj/build.ninja"
        (cd "$T/nj" && "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id nj --interval 0.1 -- ninja -j2 \
                >/dev/null 2>"$T/nj.err")
        expect_eq "ninja: the build's own status" "$?" 1
        check "ninja stderr: the FAILED edge" grep -q '^buildtel:   failed: bad.o (ninja)$' "$T/nj.err"
        expect_eq "ninja summary.json: target" "$(J "$L/resources-nj.summary.json" run failure target)" bad.o
        # the units seen set against the commands run (.ninja_log: 1 edge,
        # the one that built; ninja's [2/2]: 2), live and in every replay
        # (as root the kernel accounts every process: then no unit is unseen)
        if grep -q ',taskstats' "$L/resources-nj.units.csv"; then
                unseen="; every process accounted by the kernel \(taskstats\): each unit's peak RSS and CPU exact"
        else
                unseen=": those shorter than a sample interval go unseen"
        fi
        check "ninja: the units line sets the units seen against the 2 commands run" grep -Eq "^units \(top [0-9]+ of [0-9]+ by peak RSS; .*; the build ran 2 commands$unseen\)" "$L/resources-nj.summary.txt"
        expect_eq "ninja summary.json: commands_ran" "$(J "$L/resources-nj.summary.json" commands_ran)" 2
        "$BUILDTEL" summarize "$L/resources-nj.csv" >"$T/nj-file.txt" 2>/dev/null
        check "ninja: summarize of the CSV says the same units line" bash -c "grep '^units (' '$L/resources-nj.summary.txt' | cmp -s - <(grep '^units (' '$T/nj-file.txt')"
        "$BUILDTEL" summarize --db "$DB" nj >"$T/nj-db.txt" 2>/dev/null
        check "ninja: summarize from the history says the same units line" bash -c "grep '^units (' '$L/resources-nj.summary.txt' | cmp -s - <(grep '^units (' '$T/nj-db.txt')"
        "$BUILDTEL" inspect --db "$DB" nj >"$T/in.txt"
        check "ninja inspect: failed bad.o (ninja)" grep -Eq '^failed +bad.o \(ninja\): ' "$T/in.txt"
else
        echo "no ninja: its part is left out"
fi

# --- success: no failure anywhere, though the output has an error-like line
(cd "$T/mk" && "$BUILDTEL" run --db "$DB" --log-dir "$L" --run-id ok -- sh -c 'echo "x.c:1:1: error: not really"; exit 0' \
        >/dev/null 2>"$T/ok.err")
expect_eq "success: status 0" "$?" 0
check "success: no failed line on stderr" sh -c "! grep -q 'failed:\|error:' '$T/ok.err'"
expect_eq "success: summary.json run.failure null" "$(J "$L/resources-ok.summary.json" run failure)" None
"$BUILDTEL" inspect --db "$DB" ok >"$T/in.txt"
check "success: inspect has no failed line" sh -c "! grep -q '^failed ' '$T/in.txt'"
finish
