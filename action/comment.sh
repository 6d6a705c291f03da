#!/usr/bin/env bash
# On a pull request: one comment a job, the run's job summary (with its
# comparison against the job's usual when the history had runs), posted
# the first time and updated after. A comment that cannot be posted (a
# fork's read-only token) is a warning: the build's result stands.
set -u
api=${GITHUB_API_URL:-https://api.github.com}
repo=${GITHUB_REPOSITORY:?}
warn() { echo "::warning title=buildtel comment::$*"; exit 0; }
pr=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pull_request"]["number"])' \
        "${GITHUB_EVENT_PATH:?}" 2>/dev/null) || warn "not a pull request event"
marker="<!-- buildtel: ${GITHUB_WORKFLOW:-}/${GITHUB_JOB:-}${INPUT_JOB:+/$INPUT_JOB} -->"
md=$(buildtel report --format markdown "${RUN_ID:?}") || warn "no job summary for run $RUN_ID"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gh() { # gh METHOD PATH [BODY-FILE]: the response in $tmp/out, its status printed
        curl -sS -o "$tmp/out" -w '%{http_code}' -X "$1" ${3:+--data-binary "@$3"} \
                -H "Authorization: Bearer ${GITHUB_TOKEN:?}" -H 'Accept: application/vnd.github+json' \
                -H 'X-GitHub-Api-Version: 2022-11-28' "$api$2"
}
# Ours, if there: the first comment holding the marker, 100 a page, 10 pages.
id=
for page in 1 2 3 4 5 6 7 8 9 10; do
        code=$(gh GET "/repos/$repo/issues/$pr/comments?per_page=100&page=$page") || warn "the API is unreachable"
        [ "$code" = 200 ] || warn "listing the comments: HTTP $code"
        read -r n id < <(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
ids = [x["id"] for x in c if sys.argv[2] in (x.get("body") or "")]
print(len(c), ids[0] if ids else "")' "$tmp/out" "$marker")
        if [ -n "$id" ] || [ "${n:-0}" -lt 100 ]; then break; fi
done
printf '%s\n\n%s\n' "$marker" "$md" |
        python3 -c 'import json, sys; json.dump({"body": sys.stdin.read()}, sys.stdout)' >"$tmp/body"
if [ -n "$id" ]; then
        code=$(gh PATCH "/repos/$repo/issues/comments/$id" "$tmp/body") || warn "the API is unreachable"
        want=200
else
        code=$(gh POST "/repos/$repo/issues/$pr/comments" "$tmp/body") || warn "the API is unreachable"
        want=201
fi
[ "$code" = "$want" ] || warn "posting the comment: HTTP $code"
echo "buildtel action: the comment on #$pr ${id:+(updated)}" >&2
