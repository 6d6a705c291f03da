#!/usr/bin/env bash
# A run's job (issue 23): --job, $BUILDTEL_JOB, the CI's variables, the
# derived default; stored in the history (read with the sqlite3 CLI), in
# run.json, the default textfile name and its buildtel_job label, and
# `status --job`.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "missing sqlite3 (Debian: sqlite3)"; exit 77; }
DB="$T/h.db" L="$T/logs" TF="$T/tf"
# none of the CI's own variables leak in from where the test runs
CLEAN=(env -u BUILDTEL_JOB -u GITHUB_WORKFLOW -u GITHUB_JOB -u CI_PROJECT_PATH -u CI_JOB_NAME)
bt() { "${CLEAN[@]}" "$BUILDTEL" "$@"; }
job_of() { sqlite3 "$DB" "SELECT COALESCE(job, '(null)') FROM runs WHERE run_id = '$1'"; }

# ---- two jobs on one node: two textfiles ----
bt run --quiet --db "$DB" --log-dir "$L" --run-id a1 --job alpha --textfile-dir "$TF" -- true
expect_eq "alpha: exit 0" "$?" 0
bt run --quiet --db "$DB" --log-dir "$L" --run-id b1 --job 'beta/x y' --textfile-dir "$TF" -- sh -c 'exit 3'
expect_eq "beta: the build's status passes through" "$?" 3
bt run --quiet --db "$DB" --log-dir "$L" --run-id a2 --job alpha --textfile-dir "$TF" -- sleep 0.2
expect_eq "alpha again: exit 0" "$?" 0
ls "$TF" >"$T/files"
expect_eq "two textfiles, one a job" "$(grep -c '\.prom$' "$T/files")" 2
check "alpha's file is buildtel-alpha.prom" test -s "$TF/buildtel-alpha.prom"
BF=$(ls "$TF"/buildtel-beta_x_y-*.prom 2>/dev/null)
check "beta's file: made safe, with a hash of the job ($BF)" test -s "$BF"
check "alpha's series carry buildtel_job=\"alpha\"" \
        grep -q '^build_invocation_success{builder="",buildtel_job="alpha"} 1$' "$TF/buildtel-alpha.prom"
check "beta's series carry its job as is" \
        grep -q '^build_invocation_success{builder="",buildtel_job="beta/x y"} 0$' "$BF"
expect_eq "every series of alpha's file has the label" \
        "$(grep -v '^#' "$TF/buildtel-alpha.prom" | grep -vc 'buildtel_job="alpha"')" 0
check "--prom-file still wins" \
        bt run --quiet --db "$DB" --log-dir "$L" --run-id a3 --job alpha --textfile-dir "$TF" --prom-file own.prom -- true
check "  written there" grep -q 'buildtel_job="alpha"' "$TF/own.prom"
if command -v promtool >/dev/null; then
        for f in "$TF/buildtel-alpha.prom" "$BF"; do
                check "promtool check metrics $(basename "$f")" sh -c "promtool check metrics <'$f' 2>&1 | grep -v '_steps_total non-counter' | { ! grep -q .; }"
        done
fi

# ---- the job in the history and in run.json ----
expect_eq "history: a1's job" "$(job_of a1)" alpha
expect_eq "history: b1's job" "$(job_of b1)" 'beta/x y'
check "run.json has the job" grep -q '"job": "alpha"' "$L/resources-a1.run.json"
expect_eq "schema version" "$(sqlite3 "$DB" 'PRAGMA user_version')" 15
bt inspect --db "$DB" b1 >"$T/in.txt"
expect_eq "inspect text: the job's line, below the run's" "$(sed -n 2p "$T/in.txt")" "job          beta/x y"
bt inspect --db "$DB" --json b1 >"$T/in.json"
expect_eq "inspect --json: the job" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["job"])' "$T/in.json")" "beta/x y"
check "the index on (job, start_epoch)" sh -c "sqlite3 '$DB' \"SELECT sql FROM sqlite_master WHERE name = 'runs_job'\" | grep -q 'job, start_epoch'"

# ---- the defaults: BUILDTEL_JOB, GitHub, GitLab, derived ----
"${CLEAN[@]}" BUILDTEL_JOB=envjob "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id e1 -- true
expect_eq "BUILDTEL_JOB" "$(job_of e1)" envjob
"${CLEAN[@]}" BUILDTEL_JOB=envjob "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id e2 --job opt -- true
expect_eq "--job wins over BUILDTEL_JOB" "$(job_of e2)" opt
"${CLEAN[@]}" BUILDTEL_JOB=envjob GITHUB_WORKFLOW=CI GITHUB_JOB=build "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id e3 -- true
expect_eq "BUILDTEL_JOB wins over GitHub's" "$(job_of e3)" envjob
"${CLEAN[@]}" GITHUB_WORKFLOW='CI build' GITHUB_JOB=linux CI_PROJECT_PATH=g/p CI_JOB_NAME=t "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id gh -- true
expect_eq "GitHub Actions: workflow/job" "$(job_of gh)" 'CI build/linux'
"${CLEAN[@]}" CI_PROJECT_PATH=group/proj CI_JOB_NAME='test: [x86]' "$BUILDTEL" run --quiet --db "$DB" --log-dir "$L" --run-id gl --textfile-dir "$TF" -- true
expect_eq "GitLab CI: project/job" "$(job_of gl)" 'group/proj/test: [x86]'
check "GitLab's job names its textfile" sh -c "ls '$TF' | grep -q '^buildtel-group_proj_test___x86_-[0-9a-f]\{8\}\.prom$'"
mkdir -p "$T/src/proj" "$T/other/proj"
(cd "$T/src/proj" && bt run --quiet --db "$DB" --log-dir "$L" --run-id d1 -- sh -c 'exit 0')
(cd "$T/src/proj" && bt run --quiet --db "$DB" --log-dir "$L" --run-id d2 -- sh -c 'exit 0')
(cd "$T/other/proj" && bt run --quiet --db "$DB" --log-dir "$L" --run-id d3 -- sh -c 'exit 0')
(cd "$T/src/proj" && bt run --quiet --db "$DB" --log-dir "$L" --run-id d4 -- sh -c 'exit 1')
d1=$(job_of d1)
check "derived: cwd's basename, argv[0]'s, a hash ($d1)" sh -c "printf '%s' '$d1' | grep -Eq '^proj:sh-[0-9a-f]{8}$'"
expect_eq "derived: stable across runs" "$(job_of d2)" "$d1"
check "derived: another directory is another job ($(job_of d3))" test "$(job_of d3)" != "$d1"
check "derived: another command is another job ($(job_of d4))" test "$(job_of d4)" != "$d1"

# ---- watch --job ----
sleep 1 &
SP=$!
bt watch --quiet --db "$DB" --log-dir "$L" --run-id w1 --job watched --pid $SP >/dev/null 2>&1
expect_eq "watch --job" "$(job_of w1)" watched

# ---- status --job ----
bt status --db "$DB" --job alpha >"$T/st" 2>"$T/st.err"
expect_eq "status --job: exit 0" "$?" 0
expect_eq "status --job: the job above the table" "$(head -1 "$T/st")" "job: alpha"
expect_eq "status --job: alpha's three runs" "$(grep -Ec '^a[123] ' "$T/st")" 3
check "status --job: newest first" sh -c "grep -E '^a[123] ' '$T/st' | awk '{print \$1}' | tr '\n' ' ' | grep -qx 'a3 a2 a1 '"
check "status --job: no other job's run" sh -c "! grep -Eq '^(b1|e1|gh|d1) ' '$T/st'"
bt status --db "$DB" --job alpha --limit 1 >"$T/st1"
expect_eq "status --job --limit 1" "$(grep -Ec '^a[123] ' "$T/st1")" 1
bt status --db "$DB" --job 'beta/x y' --json >"$T/st.json"
expect_eq "status --job --json" "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(x["id"] + "=" + x["job"] for x in r))' "$T/st.json")" "b1=beta/x y"
bt status --db "$DB" --job nosuch >"$T/st0"
expect_eq "status --job of no run" "$(cat "$T/st0")" "no runs recorded for that job"
bt status --db "$DB" --json >"$T/all.json"
expect_eq "status --json: each run's job" "$(python3 -c 'import json,sys; r={x["id"]: x["job"] for x in json.load(open(sys.argv[1]))}; print(r["gh"], r["e2"])' "$T/all.json")" "CI build/linux opt"
bt run --quiet --db "$DB" --log-dir "$L" --run-id bad --job '' -- true 2>"$T/empty.err"
check "--job '' is refused" test $? -ne 0
check "  saying so" grep -q -- '--job is empty' "$T/empty.err"
sqlite3 "$DB" "UPDATE runs SET job = NULL WHERE run_id = 'd4'"
bt inspect --db "$DB" d4 >"$T/in0.txt"
check "inspect text: a run of no job (an older row) has no job line" sh -c "grep -q '^run ' '$T/in0.txt' && ! grep -q '^job ' '$T/in0.txt'"
finish
