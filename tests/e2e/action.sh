#!/usr/bin/env bash
# The GitHub Action (action.yml, action/*.sh) with GitHub's environment files
# faked: install from source (the suite's own build, meson install into a
# root of its own), a build that passes and one that fails under run.sh
# (outputs, job summary, exit status), and the pull request comment posted,
# then updated, through a fake GitHub API on 127.0.0.1. Takes the source
# root as $1.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: action.sh SOURCE-ROOT}
/usr/bin/python3 -c 'import yaml' 2>/dev/null ||
        { echo "python3's yaml is missing (Debian package python3-yaml)"; exit 77; }
command -v meson >/dev/null || { echo "meson is missing"; exit 77; }

# action.yml: every script it runs exists, every input it reads is declared,
# every output it names is one run.sh writes.
check "action.yml is whole: scripts, inputs, outputs" /usr/bin/python3 - "$SRC" <<'PY'
import os, re, sys, yaml
src = sys.argv[1]
a = yaml.safe_load(open(os.path.join(src, "action.yml")))
ok = a["runs"]["using"] == "composite"
text = open(os.path.join(src, "action.yml")).read()
for m in re.findall(r"inputs\.([a-z-]+)", text):
    ok &= m in a["inputs"] or print("undeclared input", m) is not None and False
written = set(re.findall(r'echo "([a-z-]+)=', open(os.path.join(src, "action/run.sh")).read()))
for m in re.findall(r"steps\.run\.outputs\.([a-z-]+)", text):
    ok &= m in written or print("output not written", m) is not None and False
for s in a["runs"]["steps"]:
    for m in re.findall(r'action/([a-z]+\.sh)', s.get("run", "")):
        ok &= os.access(os.path.join(src, "action", m), os.X_OK)
sys.exit(not ok)
PY

# GitHub's environment, faked.
G=$T/gh
mkdir -p "$G/tmp" "$G/ws"
export GITHUB_ACTION_PATH=$SRC GITHUB_ACTIONS=true RUNNER_TEMP=$G/tmp
export GITHUB_PATH=$G/path GITHUB_OUTPUT=$G/output GITHUB_ENV=$G/env GITHUB_STEP_SUMMARY=$G/summary.md
export GITHUB_WORKFLOW=ci GITHUB_JOB=build GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1
export GITHUB_REPOSITORY=o/r GITHUB_TOKEN=t0ken GITHUB_EVENT_PATH=$G/event.json
export XDG_STATE_HOME=$G/state
touch "$GITHUB_PATH" "$GITHUB_OUTPUT" "$GITHUB_ENV" "$GITHUB_STEP_SUMMARY"
out() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }

# install: source, from the suite's build directory (built already: meson
# install copies), into a root under RUNNER_TEMP, its bin on GITHUB_PATH.
INPUT_INSTALL=source BUILDTEL_ACTION_BUILD=$(dirname "$BUILDTEL") \
        bash "$SRC/action/install.sh" >"$T/install.log" 2>&1
expect_eq "install.sh (source) exits 0" "$?" 0 || cat "$T/install.log"
bin=$(tail -n 1 "$GITHUB_PATH")
check "GITHUB_PATH names the installed bin" test -x "$bin/buildtel"
expect_eq "the installed buildtel is the suite's" "$("$bin/buildtel" --version)" "$("$BUILDTEL" --version)"
check "the man page is installed beside it" sh -c "find '$G/tmp/buildtel-root' -name 'buildtel.1*' | grep -q ."
export PATH=$bin:$PATH
INPUT_INSTALL=nonsense bash "$SRC/action/install.sh" >"$T/bad.log" 2>&1
expect_eq "install.sh: a bad INPUT_INSTALL fails" "$?" 1
check "with one ::error line" grep -q "^::error title=buildtel install::install: 'nonsense' is none of" "$T/bad.log"
(PATH=/usr/bin:/bin INPUT_INSTALL=path bash "$SRC/action/install.sh") >"$T/nopath.log" 2>&1
expect_eq "install.sh (path) with no buildtel on PATH fails" "$?" 1
INPUT_INSTALL=path bash "$SRC/action/install.sh" >"$T/path.log" 2>&1
expect_eq "install.sh (path) with buildtel on PATH" "$?" 0

# run: a build that passes.
cd "$G/ws" || exit 1
printf 'all:\n\t@echo compiled-ok\n' >Makefile
INPUT_RUN='make all' bash "$SRC/action/run.sh" >"$T/run1.out" 2>"$T/run1.err"
expect_eq "run.sh exits with the build's 0" "$?" 0
check "the build's output passes through" grep -qx compiled-ok "$T/run1.out"
id1=$(out run-id)
expect_eq "outputs: run-id" "$id1" gh-4242-1-build
expect_eq "outputs: exit-code" "$(out exit-code)" 0
expect_eq "outputs: outcome" "$(out outcome)" ok
check "outputs: report, a file" test -s "$(out report)"
check "outputs: log-dir holds the run's CSV" test -s "$(out log-dir)/resources-$id1.csv"
check "the job summary is appended" grep -q . "$GITHUB_STEP_SUMMARY"
"$BUILDTEL" status >"$T/status.txt" 2>&1
check "the history under XDG_STATE_HOME has the run" grep -q "$id1" "$T/status.txt"

# run: a build that fails, named by INPUT_JOB, with INPUT_ARGS.
printf 'all:\n\t@echo broken >&2; exit 3\n' >Makefile
: >"$GITHUB_OUTPUT"
INPUT_RUN='make all' INPUT_JOB='matrix gcc' INPUT_ARGS='--interval 0.5 --no-report' \
        bash "$SRC/action/run.sh" >"$T/run2.out" 2>"$T/run2.err"
expect_eq "run.sh exits with the build's status (make: 2)" "$?" 2
id2=$(out run-id)
expect_eq "a job name with a blank makes a valid run id" "$id2" gh-4242-1-matrix_gcc
expect_eq "outputs: exit-code 2" "$(out exit-code)" 2
expect_eq "outputs: outcome" "$(out outcome)" "exit 2"
expect_eq "--no-report from INPUT_ARGS: no report output" "$(out report)" ""
"$BUILDTEL" status --job 'matrix gcc' >"$T/status2.txt" 2>&1
check "INPUT_JOB is the run's job" grep -q "$id2" "$T/status2.txt"
: >"$GITHUB_OUTPUT"
INPUT_RUN='no-such-command-here' bash "$SRC/action/run.sh" >/dev/null 2>&1
expect_eq "a command that cannot start: bash's 127" "$?" 127

# comment: a fake GitHub API on 127.0.0.1 that keeps the comments it is sent.
cat >"$T/api.py" <<'PY'
import json, sys, http.server, urllib.parse
comments, log = [], open(sys.argv[1], "a")
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code); self.send_header("Content-Length", str(len(b))); self.end_headers()
        self.wfile.write(b)
    def body(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))
    def note(self):
        print(self.command, self.path, self.headers.get("Authorization"), file=log, flush=True)
    def do_GET(self):
        self.note()
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        page = int(q.get("page", ["1"])[0])
        self.reply(200, comments[(page - 1) * 100:page * 100])
    def do_POST(self):
        self.note()
        c = {"id": 900 + len(comments), "body": self.body()["body"]}
        comments.append(c); self.reply(201, c)
        json.dump(comments, open(sys.argv[1] + ".json", "w"))
    def do_PATCH(self):
        self.note()
        c = next(c for c in comments if self.path.endswith("/%d" % c["id"]))
        c["body"] = self.body()["body"]; self.reply(200, c)
        json.dump(comments, open(sys.argv[1] + ".json", "w"))
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_port, flush=True)
s.serve_forever()
PY
# someone else's comments first: 150 of them, so ours is on page 2
/usr/bin/python3 "$T/api.py" "$T/api.log" >"$T/api.port" &
api_pid=$!
trap 'kill $api_pid 2>/dev/null; cleanup' EXIT
for i in $(seq 50); do [ -s "$T/api.port" ] && break; sleep 0.1; done
export GITHUB_API_URL=http://127.0.0.1:$(cat "$T/api.port")
for i in $(seq 150); do
        curl -s -o /dev/null -X POST --data '{"body":"lgtm"}' "$GITHUB_API_URL/repos/o/r/issues/7/comments"
done
echo '{"pull_request": {"number": 7}}' >"$GITHUB_EVENT_PATH"
RUN_ID=$id1 bash "$SRC/action/comment.sh" >"$T/c1.log" 2>&1
expect_eq "comment.sh exits 0" "$?" 0 || cat "$T/c1.log"
check "it posted one comment on #7 with the token" \
        grep -q "^POST /repos/o/r/issues/7/comments Bearer t0ken" <(tail -n 3 "$T/api.log")
check "the comment holds the marker and the run's job summary" /usr/bin/python3 - "$T/api.log.json" "$id1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))[-1]["body"]
sys.exit(not (c.startswith("<!-- buildtel: ci/build -->") and sys.argv[2] in c))
PY
RUN_ID=$id1 bash "$SRC/action/comment.sh" >"$T/c2.log" 2>&1
expect_eq "comment.sh again exits 0" "$?" 0
check "the second time it updates ours, found on page 2 (no new comment)" /usr/bin/python3 - "$T/api.log" "$T/api.log.json" <<'PY'
import json, sys
log = open(sys.argv[1]).read().splitlines()
sys.exit(not (log[-1].startswith("PATCH /repos/o/r/issues/comments/1050 ") and
              "page=2" in log[-2] and len(json.load(open(sys.argv[2]))) == 151))
PY
kill $api_pid 2>/dev/null
wait $api_pid 2>/dev/null
RUN_ID=$id1 bash "$SRC/action/comment.sh" >"$T/c3.log" 2>&1
expect_eq "an API that is down: comment.sh still exits 0" "$?" 0
check "with a warning" grep -q '^::warning title=buildtel comment::' "$T/c3.log"
echo '{"push": {}}' >"$GITHUB_EVENT_PATH"
RUN_ID=$id1 bash "$SRC/action/comment.sh" >"$T/c4.log" 2>&1
check "not a pull request: a warning, exit 0" sh -c "[ $? = 0 ] && grep -q 'not a pull request' '$T/c4.log'"
finish
