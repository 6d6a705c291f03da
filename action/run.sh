#!/usr/bin/env bash
# The action's build: INPUT_RUN under `buildtel run`, by bash -eo pipefail.
# buildtel itself appends the job summary ($GITHUB_STEP_SUMMARY) and prints
# the annotations; this step writes the outputs and exits with the build's
# own status, so the job fails as the build did (the steps after it run
# with `if: always()`).
set -u
dir=${RUNNER_TEMP:-/tmp}/buildtel-files
mkdir -p "$dir" || exit 1
# One id a job and attempt, in --run-id's alphabet.
id=gh-${GITHUB_RUN_ID:-0}-${GITHUB_RUN_ATTEMPT:-1}-${INPUT_JOB:-${GITHUB_JOB:-job}}
id=$(printf '%s' "$id" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-64)
args=()
read -r -a args <<<"${INPUT_ARGS:-}"
[ -n "${INPUT_JOB:-}" ] && args+=(--job "$INPUT_JOB")
buildtel run --log-dir "$dir" --run-id "$id" "${args[@]}" -- bash -eo pipefail -c "${INPUT_RUN:?the build command}"
rc=$?
sum=$dir/resources-$id.summary.json
outcome=
[ -f "$sum" ] && outcome=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["outcome"])' "$sum" 2>/dev/null)
{
        # A command that never started is not a run: no id to name then.
        [ -f "$sum" ] && echo "run-id=$id"
        echo "exit-code=$rc"
        echo "outcome=$outcome"
        [ -f "$dir/report-$id.html" ] && echo "report=$dir/report-$id.html"
        echo "log-dir=$dir"
} >>"${GITHUB_OUTPUT:?}"
exit $rc
