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
# collect2 waits on its ld: two links at once are 2 compilers, not 4 (issue 35)
cp /bin/sleep "$T/collect2"; cp /bin/sleep "$T/ld"
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id links --interval 0.1 -- sh -c \
        "'$T/collect2' 1 & '$T/ld' 1 & '$T/collect2' 1 & '$T/ld' 1 & wait"
expect_eq "two links (collect2 + ld each): peak compilers 2" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu"]["peak_compilers"]["value"])' "$T/l/resources-links.summary.json")" 2
# The CPUs were the limit (issue 35): three busy loops per core wait for CPU;
# a sleeping build never does, and gets no such reading.
if [ "$(id -u)" = 0 ] && grep -q cgroup2 /proc/self/mountinfo; then
        n=$(( $(nproc) * 3 ))
        "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id busy --interval 0.2 -- sh -c \
                "for i in \$(seq $n); do timeout 2 sh -c 'while :; do :; done' & done; wait" >/dev/null 2>"$T/busy.err"
        check "$n busy loops: the CPU-wait reading" grep -Eq '^buildtel: the build waited for CPU [0-9]+ % of its wall time .*: the CPUs were the limit' "$T/busy.err"
        "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id sleepy --interval 0.2 -- sleep 1.5 >/dev/null 2>"$T/sleepy.err"
        check "a sleeping build: no CPU-wait reading" sh -c "! grep -q 'waited for CPU' '$T/sleepy.err'"
fi
# a row the disk filled under, and one that failed to record: whole words in top's STATE
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id full -- true
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$T/l" --run-id unrec -- true
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE runs SET state=\"disk-full\" WHERE run_id=\"full\""); c.execute("UPDATE runs SET state=\"failed-to-record\" WHERE run_id=\"unrec\""); c.commit()' "$DB"
COLUMNS=120 "$BUILDTEL" top --once --db "$DB" >"$T/top2.txt"
check "top: 'disk full' whole in its row" grep -q ' disk full ' "$T/top2.txt"
check "top: 'unrecorded' whole in its row" grep -q ' unrecorded ' "$T/top2.txt"
check "top: no state cut (not recorded: / failed-to-r)" sh -c "! grep -q 'not recor\|failed-to' '$T/top2.txt'"
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
        # near-OOM is measured against the cap and never reads 0 beside a kill
        SJ="$T/l/resources-oom.summary.json"
        jq() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$SJ" "$1"; }
        expect_eq "summary.json: the cap kept (thresholds.memory_max_mb)" "$(jq 'd["thresholds"]["memory_max_mb"]')" 96.0
        check "summary.json: near-OOM samples >= 1 beside the kill" test "$(jq 'd["warnings"]["near_oom"]["count"]')" -ge 1
        check "summary.txt: the near-OOM rule names the cap" grep -Eq '^  near-OOM \(available < 4.00 GiB, or within 9.60 MiB of the 96.0 MiB cap, or an OOM kill\): [1-9][0-9]* samples' "$T/l/resources-oom.summary.txt"
        check "stderr: the cap reading" grep -q '^buildtel: the 96.0 MiB cap (--memory-max) was the limit: OOM kills 1; the build.s working memory (anon) peaked at .*: raise the cap, or run fewer of these at once$' "$T/err.txt"
        check "stderr: no reading blames -j or the host's RAM" sh -c "! grep -q 'RAM-bound\|more -j' '$T/err.txt'"
        check "report: the OOM card is near-OOM, never 'never near OOM'" sh -c "grep -o 'id=\"a-oom\".\{0,300\}' '$T/l/report-oom.html' | grep -q 'near-OOM for about' && ! grep -q 'never near OOM' '$T/l/report-oom.html'"
        check "report: the build memory chart draws the cap" grep -q '<line class="th"[^>]*><title>--memory-max 96 MiB, the cap</title>' "$T/l/report-oom.html"
        "$BUILDTEL" summarize --db "$DB" oom >"$T/re.txt"
        check "summarize from the history: the cap still rules near-OOM" grep -q 'or within 9.60 MiB of the 96.0 MiB cap' "$T/re.txt"
        expect_eq "run.json keeps the cap" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory_max_mb"])' "$T/l/resources-oom.run.json")" 96.0
        "$BUILDTEL" summarize "$T/l/resources-oom.csv" >"$T/re-file.txt" 2>/dev/null
        check "summarize of the CSV equals summary.txt, the cap's rule and reading too" cmp -s "$T/re-file.txt" "$T/l/resources-oom.summary.txt"
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
        # The memory headline (issue 35): a build whose working memory (200
        # MiB) ended before it wrote 400 MiB of page cache leads with its
        # working memory, and the kernel's peak says its page-cache share.
        "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id pc --interval 0.1 -- sh -c \
                "'$MEMHOG' 200 1; dd if=/dev/zero of='$T/pc.bin' bs=1M count=400 status=none; sleep 0.5" \
                >/dev/null 2>"$T/pc.err"
        line=$(grep '^buildtel: working memory' "$T/pc.err")
        echo "$line"
        anon=$(sed -n 's/^buildtel: working memory (anon) peak \([0-9.]*\) MiB.*/\1/p' <<<"$line")
        cache=$(sed -n "s/.*the kernel's peak [0-9.]* MiB, \([0-9.]*\) MiB of it page cache.*/\1/p" <<<"$line")
        check "the headline leads with the working memory, ~200 MiB ($anon)" awk -v v="${anon:-0}" 'BEGIN{exit !(v >= 180 && v <= 260)}'
        check "the kernel's peak says its page cache, >= 300 MiB ($cache)" awk -v v="${cache:-0}" 'BEGIN{exit !(v >= 300)}'
        check "report: the peak card leads with the working memory and names the page cache" grep -Eq 'id="a-peak"><div class="k">Working memory, peak</div><div class="v">[0-9.]+ MiB</div><div class="d">at [^<]*; the kernel.s peak [0-9.]+ MiB, [0-9.]+ MiB of it page cache<' "$T/l/report-pc.html"
        check "report: a chart that carries no information is folded (disk flat)" grep -q '<details class="flat"><summary>Disk available: flat over the run</summary>' "$T/l/report-pc.html"
        check "report: the build memory chart is not folded" sh -c "! grep -q 'summary>Build memory: flat' '$T/l/report-pc.html'"
        check "summary.txt: working memory before the kernel's peak" sh -c "grep -n -e '^  working memory:' -e '^  peak memory:' '$T/l/resources-pc.summary.txt' | head -1 | grep -q 'working memory'"
        # The victim by its unit's name, flavour and all (issue 35): one
        # source compiled twice, -std=gnu++17 then -std=c++20, each
        # OOM-killed under a 16 MiB cap; the units table tells them apart.
        if command -v g++ >/dev/null; then
                printf '#include <iostream>\n#include <regex>\nint main() { std::regex r("a+"); std::cout << 1; }\n' >"$T/x.cpp"
                (cd "$T" && "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id vic --interval 0.05 --memory-max 16M \
                        -- sh -c 'g++ -std=gnu++17 -c x.cpp -o x1.o; g++ -std=c++20 -c x.cpp -o x2.o' >/dev/null 2>"$T/vic.err")
                V="$T/l/resources-vic.summary.txt"
                sed -n '/^  peak memory/p;/OOM kills/,/^  io:/p;/^units/,/^$/p' "$V"
                if grep -q 'OOM kills 2,' "$V" && grep -q 'x.cpp \[gnu++17\]' "$V" && grep -q 'x.cpp \[c++20\]' "$V"; then
                        check "the first victim is the gnu++17 unit, as the table names it" grep -Eq '^  OOM kills 2, first by .*victim \(the kernel.s report\): cc1plus x.cpp \[gnu\+\+17\] ' "$V"
                        check "the second victim is the c++20 unit" grep -Eq '^    then by .*victim \(the kernel.s report\): cc1plus x.cpp \[c\+\+20\] ' "$V"
                        check "stderr: the victim by its unit's name" grep -q '^buildtel: OOM kills 2, .*cc1plus x.cpp \[gnu++17\]' "$T/vic.err"
                        "$BUILDTEL" summarize --db "$DB" vic >"$T/vic-re.txt"
                        check "the history's replay keeps both units of one path (two flavours) and both victims" sh -c "grep -c '^  [0-9.]* [KMG]iB  cc1plus x.cpp \[' '$T/vic-re.txt' | grep -qx 2 && grep -q 'first by .*cc1plus x.cpp \[gnu++17\]' '$T/vic-re.txt' && grep -q 'then by .*cc1plus x.cpp \[c++20\]' '$T/vic-re.txt'"
                        # the largest process at the peak sample is cc1plus
                        # or, a sample earlier or later, the g++ driver or
                        # as (not units): a compiler there goes by its
                        # unit's name, flavour and all
                        check "the peak line names the largest process, a compiler by its unit's name" sh -c "grep -Eq '^  peak memory: .*largest process ' '$V' && ! grep -Eq '^  peak memory: .*largest process cc1plus x.cpp [^[]' '$V'"
                else
                        echo "the compilers were not both seen and killed under 16 MiB here: the victim-name part is left out"
                fi
        fi
        # The kernel's victim by its unit's name from the exact accounting,
        # not the samples: a "compiler" OOM-killed between two samples of a
        # 10 s interval (acct needs root: taskstats).
        if [ "$(id -u)" = 0 ]; then
                cp "$MEMHOG" "$T/cc1plus"
                (cd "$T" && "$BUILDTEL" run --db "$DB" --log-dir "$T/l" --run-id acv --interval 10 --memory-max 32M \
                        -- sh -c "sleep 0.5; ./cc1plus 100 1 -c dd.cpp -o dd.o; exit 0" >/dev/null 2>"$T/acv.err")
                check "a victim no sample saw goes by its unit's name (taskstats)" grep -Eq '^  OOM kills 1, first by .*victim \(the kernel.s report\): cc1plus dd.cpp \(pid [0-9]+\)' "$T/l/resources-acv.summary.txt"
                check "the cap's reading gives the unit's exact peak beside the sampled anon" grep -Eq "the build's working memory \(anon\) peaked at .* as sampled; its largest unit, cc1plus dd.cpp, held [0-9.]+ MiB at its peak \(the kernel's figure\)" "$T/l/resources-acv.summary.txt"
                "$BUILDTEL" summarize --db "$DB" acv >"$T/acv-re.txt"
                check "and so in the history's replay" grep -q 'victim (the kernel.s report): cc1plus dd.cpp (pid' "$T/acv-re.txt"
        fi
else
        echo "not root or no cgroup v2: the OOM part is left out"
fi
finish
