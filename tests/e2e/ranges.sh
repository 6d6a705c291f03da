#!/usr/bin/env bash
# Numbers out of range in the files buildtel reads back (issue 15): a CSV
# row, a run.json, history rows. Each is skipped and counted, or left out
# with a note, and never reaches a conversion that is undefined: under the
# ASan+UBSan build no sanitizer may report anything.
. "$(dirname "$0")/lib.sh"
L="$T/logs"
mkdir -p "$L"
HDR='epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context'
GOOD='1764500000,,0,1,10,100,1000,9,0,50,50,0,,'
# Sanitizers report on stderr; make UBSan print a stack and fail the run.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
clean() { # clean FILE: no sanitizer report in it
        ! grep -Eq 'runtime error|Sanitizer|sanitizer' "$1"
}
summarize_both() { # summarize_both WHAT CSV OUT NOTE: text and JSON, each exits 0,
        # with no sanitizer report and NOTE on stderr; into OUT.text, OUT.json
        local fmt opt
        for fmt in text json; do
                opt=; [ $fmt = json ] && opt=--json
                "$BUILDTEL" summarize $opt "$2" >"$3.$fmt" 2>"$3.$fmt.err"
                expect_eq "$1 ($fmt): summarize status" "$?" 0
                check "$1 ($fmt): no sanitizer report" clean "$3.$fmt.err"
                check "$1 ($fmt): $4" grep -q "$4" "$3.$fmt.err"
        done
}

# 1. The fuzzer's CSV: an epoch of 1e21 (the number reader takes 62 digits).
printf '%s\r\n%s\r\n%s\r\n' "$HDR" '1000000000000000000000,,0,1,,,,,,,,,,' "$GOOD" >"$T/epoch.csv"
summarize_both "CSV epoch 1e21" "$T/epoch.csv" "$T/epoch" "1 torn or junk rows skipped"
expect_eq "CSV epoch 1e21: skipped_rows" "$($CSVCHECK json-get "$T/epoch.json" skipped_rows)" 1
expect_eq "CSV epoch 1e21: the good row counts" "$($CSVCHECK json-get "$T/epoch.json" samples)" 1
check "CSV epoch 1e21: text counts it" grep -q "samples: 1 (skipped rows: 1)" "$T/epoch.text"

# Every seed column out of its range, one row each: all skipped.
{
        printf '%s\r\n' "$HDR"
        printf '%s\r\n' '-1,,0,1,,,,,,,,,,' '253402300800,,0,1,,,,,,,,,,' \
                '1764500000,,-5,1,,,,,,,,,,' '1764500000,,0,5000000,,,,,,,,,,' \
                '1764500000,,0,1,101,,,,,,,,,' '1764500000,,0,1,,9999999999999,,,,,,,,' \
                '1764500000,,0,1,,,,,,,,99999999,,' "$GOOD"
} >"$T/cols.csv"
"$BUILDTEL" summarize --json "$T/cols.csv" >"$T/cols.json" 2>"$T/cols.err"
expect_eq "columns out of range: summarize status" "$?" 0
check "columns out of range: no sanitizer report" clean "$T/cols.err"
expect_eq "columns out of range: skipped_rows" "$($CSVCHECK json-get "$T/cols.json" skipped_rows)" 7

# 2. A run.json of {"start_epoch":1e300} beside a good CSV.
printf '%s\r\n%s\r\n' "$HDR" "$GOOD" >"$L/resources-big.csv"
printf '{"start_epoch":1e300}\n' >"$L/resources-big.run.json"
summarize_both "run.json start 1e300" "$L/resources-big.csv" "$T/big" \
        "is not a run record; run facts left out"
expect_eq "run.json start 1e300: start is null" "$($CSVCHECK json-get "$T/big.json" run.start)" None
check "run.json start 1e300: text start unknown" grep -q "^start: *?$" "$T/big.text"

# 3. History rows out of range: a real recorded run, its rows then edited.
DB="$T/h.db"
"$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id h --interval 0.1 -- sleep 0.3
expect_eq "recorded into the history" "$?" 0
python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE runs SET start_epoch = 1e300, end_epoch = -1e300, exit_code = 99999,"
           " ncpu = -1, interval = 1e300, pid = -5")
db.execute("UPDATE samples SET epoch = 1e300, mem_used_mb = -1e300, cpu_pct = 1e300,"
           " elapsed_s = 1e300")
db.commit()
PY
for c in "summarize h" "summarize --json h" "status" "status --json" "inspect h" "inspect --json h"; do
        set -- $c
        cmd=$1; shift
        "$BUILDTEL" $cmd --db "$DB" "$@" >"$T/hist.out" 2>"$T/hist.err"
        expect_eq "history out of range, $c: status" "$?" 0
        check "history out of range, $c: no sanitizer report" clean "$T/hist.err"
done
"$BUILDTEL" summarize --json --db "$DB" h >"$T/hist.json" 2>/dev/null
expect_eq "history out of range: start read as unknown" "$($CSVCHECK json-get "$T/hist.json" run.start)" None
expect_eq "history out of range: no peak from the bad rows" \
        "$($CSVCHECK json-get "$T/hist.json" memory.peak_used_mb)" None
finish
