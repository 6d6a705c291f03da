#!/usr/bin/env bash
# The options are declared once, in the table of src/cmd/cmd-common.c: it
# drives parsing and `help CMD`, and the man page must agree with it. Every
# option of the table (and its alias) has a definition line in the man page
# with the same argument, and every option a definition line names is in
# the table. Usage: options.sh doc/buildtel.1.scd
. "$(dirname "$0")/lib.sh"
MAN=${1:?the man page source}

"$BUILDTEL" help --dump-options >"$T/opts.tsv"
expect_eq "help --dump-options status" "$?" 0
check "the table lists options" test -s "$T/opts.tsv"

python3 - "$T/opts.tsv" "$MAN" >"$T/check.out" 2>&1 <<'PY'
import re, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
man = open(sys.argv[2]).read().split('\n')
# a definition: "*--name* _ARG_" with its text indented on the next line
defs = [l for l, nxt in zip(man, man[1:] + ['']) if l.startswith('*--') and nxt.startswith('\t')]
bad = 0
names = set()
def man_arg(a):
    return re.sub(r'[A-Z]+', lambda m: '_' + m.group() + '_', a)
for cmd, name, arg, alias in rows:
    for n in [name] + ([alias] if alias else []):
        names.add(n)
        # an optional argument "[=X]" is written on: *--name*[=_X_]
        want = '*' + n + '*' + ((man_arg(arg) if arg.startswith('[') else ' ' + man_arg(arg)) if arg else '')
        if not any(want in d and (arg or (want + ' _') not in d) for d in defs):
            print(f'{cmd} {n}: no man page line with "{want}"')
            bad += 1
for d in defs:
    for n in re.findall(r'\*(--[a-z0-9-]+)\*', d):
        if n not in names:
            print(f'man page defines {n}, which the option table does not have')
            bad += 1
print(f'{len(rows)} table rows, {len(defs)} man page option lines, {bad} disagreements')
sys.exit(1 if bad else 0)
PY
rc=$?
cat "$T/check.out"
expect_eq "the man page and the option table agree" "$rc" 0

# The table drives `help CMD`: every run option is listed there (or in
# `help otlp`).
"$BUILDTEL" help run >"$T/run.txt"
"$BUILDTEL" help otlp >>"$T/run.txt"
missing=$(awk -F'\t' '$1 == "run" {print $2}' "$T/opts.tsv" | while read -r o; do
        grep -q -- "^  $o" "$T/run.txt" || echo "$o"; done)
expect_eq "help run and help otlp list every run option of the table" "$missing" ""
# and getopt: an option of another command is refused, one of ours taken.
"$BUILDTEL" summarize --grace 1 x.csv 2>/dev/null
expect_eq "summarize refuses run's --grace" "$?" 2
"$BUILDTEL" run --no-db --log-dir "$T/l" --grace 0 -- true 2>/dev/null
expect_eq "run takes --grace" "$?" 0

# Options before and after operands, as git and systemctl take them; run
# alone stops at COMMAND (what follows is the command's).
H="$T/h.db"
"$BUILDTEL" run --quiet --no-report --db "$H" --log-dir "$T/l" --run-id optrun -- true
expect_eq "a run recorded for the operand checks" "$?" 0
"$BUILDTEL" report optrun --db "$H" -o "$T/x.html" 2>"$T/report.err"
expect_eq "report RUN --db H -o x.html" "$?" 0
check "report RUN --db H -o x.html writes x.html" grep -q "optrun" "$T/x.html"
"$BUILDTEL" report --db "$H" optrun --format markdown -o - >"$T/x.md"
expect_eq "report --db H RUN --format markdown -o -" "$?" 0
check "the markdown names the run" grep -q "optrun" "$T/x.md"
"$BUILDTEL" inspect optrun --db "$H" >"$T/inspect.txt" 2>"$T/inspect.err"
expect_eq "inspect RUN --db H" "$?" 0
check "inspect RUN --db H shows the run" grep -q "optrun" "$T/inspect.txt"
"$BUILDTEL" inspect optrun --json --db "$H" >"$T/inspect.json"
expect_eq "inspect RUN --json --db H" "$?" 0
check "inspect RUN --json is JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/inspect.json"
"$BUILDTEL" inspect optrun optrun --db "$H" 2>/dev/null
expect_eq "inspect takes one RUN at most, wherever the options are" "$?" 2
"$BUILDTEL" status --db "$H" --limit 1 --json >"$T/status.json"
expect_eq "status --limit from the table" "$?" 0
"$BUILDTEL" status --limit 0 --db "$H" 2>"$T/limit.err"
expect_eq "status --limit 0 is bad usage" "$?" 2
check "the table's --limit check says why" grep -q -- "--limit takes" "$T/limit.err"
"$BUILDTEL" report -- --db 2>/dev/null
expect_eq "-- ends the options (--db is then a run id that is not there)" "$?" 1
out=$("$BUILDTEL" run --quiet --no-db --no-report --log-dir "$T/l" -- sh -c 'echo "$1"' sh --interval)
expect_eq "run: options after COMMAND are the command's" "$out" "--interval"
finish
