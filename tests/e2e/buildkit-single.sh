#!/usr/bin/env bash
# A real BuildKit (tools/buildkit: dockerd 28.5 + buildx 0.29 from Debian,
# private to this test): a multi-stage build of our own, cold, hot and with
# one file changed, in plain and rawjson; its steps and cached equal the
# build graph from the live stream and from its history record alike; the
# steps' durations are BuildKit's; the context of a rawjson run is readable;
# a failing step; import-buildx with both ref forms; and the builder label
# of Docker 20.10's client agreeing between the textfile and `inspect`.
. "$(dirname "$0")/lib.sh"
buildkit_up
buildkit_need_history
J="python3 $HERE/csvcheck.py json-get"
P=$T/proj
mkdir -p "$P"
# 9 steps: base 1/4 .. 4/4, build 1/3 .. 3/3, stage-2 2/3 and 3/3 (stage-2's
# FROM is base's, one vertex). The base image is local: its FROM does nothing.
cat >"$P/Dockerfile" <<'EOF'
FROM local/busybox AS base
RUN echo base > /base.txt
COPY lib.txt /src/lib.txt
RUN cat /src/lib.txt > /lib.out

FROM base AS build
COPY app.txt /src/app.txt
RUN cat /src/app.txt /lib.out > /app.out
RUN sleep 1 && echo built

FROM local/busybox
COPY --from=build /app.out /app.out
RUN wc -c /app.out
EOF
echo lib >"$P/lib.txt"
echo app0 >"$P/app.txt"
# Every docker command buildtel runs, logged by a wrapper ahead in PATH
mkdir -p "$T/wrap"
printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$T/docker-calls" "$(command -v docker)" >"$T/wrap/docker"
chmod +x "$T/wrap/docker"
export PATH="$T/wrap:$PATH"
# bt NAME PROGRESS: one build under buildtel, its targets.json in $T/NAME.json
bt() {
        local name=$1 progress=$2 s
        shift 2
        s=$(now)
        (cd "$P" && "$BUILDTEL" run --quiet --no-report --log-dir "$T/logs" --run-id "$name" \
                --interval 0.05 -- docker buildx build --network=none --progress="$progress" \
                -t bt-single "$@" . >"$T/$name.out" 2>"$T/$name.err")
        RC=$?
        echo "# $name: exit $RC, $(since "$s") s"
        cp "$T/logs/resources-$name.targets.json" "$T/$name.json" 2>/dev/null
}
# steps NAME: "steps/cached" of the one target, by every source it had
steps() { python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["targets"]
print(" ".join("%s/%s" % (x["steps"], x["cached"]) for x in t))' "$T/$1.json"; }
# replayed: the newest history record (the build just run) replayed and
# counted on its own by import-buildx
replayed() {
        local ref
        ref=$(docker buildx history ls --format json |
                python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["ref"])')
        "$BUILDTEL" import-buildx "$ref" | sed -n 's/.*completed, \([0-9]*\) steps (\([0-9]*\) cached.*/\1\/\2/p'
}

rm -f "$T/docker-calls"
bt cold plain
expect_eq "cold: 9 steps, the FROM of a local image cached" "$(steps cold)" "9/1"
# the critical path (issue 38): base's steps, build's (its first follows
# base's last: "FROM base" is no vertex), the COPY --from=build, the last RUN
expect_eq "cold: the critical path, stage by stage, in order" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["critical_path"]
print(" ".join(s["name"].split("]")[0][1:].replace(" ", ":") for s in p["steps"]),
      p["length_s"] <= p["wall_s"] + 0.01)' "$T/cold.json")" \
        "base:1/4 base:2/4 base:3/4 base:4/4 build:1/3 build:2/3 build:3/3 stage-2:2/3 stage-2:3/3 True"
# the live stream was whole: its record is neither inspected nor its log
# replayed (issue 40: each history call costs 0.3-0.7 s at the end of every
# build); history ls, the one call, finds its record
expect_eq "cold: one history call after a whole live stream" "$(grep -c '^buildx history' "$T/docker-calls")" 1 ||
        sed 's/^/# call: /' "$T/docker-calls"
check "cold: that call is history ls" grep -q '^buildx history ls' "$T/docker-calls"
expect_eq "cold: its history record replayed says the same" "$(replayed)" "9/1"
bt hot plain
expect_eq "hot: fully cached (the FROM prints a bare DONE)" "$(steps hot)" "9/9"
expect_eq "hot: its record says the same" "$(replayed)" "9/9"
bt hotjson rawjson
expect_eq "hot, rawjson: fully cached" "$(steps hotjson)" "9/9"
echo app1 >"$P/app.txt"
bt changed plain
expect_eq "one file changed: base's 3 steps and the FROM cached" "$(steps changed)" "9/4"
expect_eq "one file changed: its record says the same" "$(replayed)" "9/4"
echo app2 >"$P/app.txt"
bt changedjson rawjson
expect_eq "one file changed, rawjson" "$(steps changedjson)" "9/4"
expect_eq "one file changed, rawjson: its record says the same" "$(replayed)" "9/4"

# --progress=tty in a terminal (script's): the build gets a terminal of its
# own (before, buildx failed: "provided file is not a console"); the TTY UI
# is not parsed, the steps come from its history record: plain's figures.
tty_bt() {
        (cd "$P" && script -qec "'$BUILDTEL' run --quiet --no-report --log-dir '$T/logs' --run-id $1 \
                --interval 0.05 -- docker buildx build --network=none --progress=tty -t bt-single ." \
                /dev/null >"$T/$1.out" 2>&1 </dev/null)
        RC=$?
        cp "$T/logs/resources-$1.targets.json" "$T/$1.json" 2>/dev/null
}
if command -v script >/dev/null; then
        echo app-tty >"$P/app.txt"
        rm -f "$T/docker-calls"
        tty_bt changedtty
        check "tty: the stream is not read, the record's log is replayed" grep -q '^buildx history logs' "$T/docker-calls"
        expect_eq "one file changed, tty: exit 0" "$RC" 0 || tail -n 5 "$T/changedtty.out"
        check "tty: the TTY UI was drawn" grep -q "FINISHED" "$T/changedtty.out"
        expect_eq "one file changed, tty: the same steps" "$(steps changedtty)" "9/4"
        tty_bt hottty
        expect_eq "hot, tty: fully cached" "$(steps hottty)" "9/9"
else
        echo "FAIL script(1) is missing (bsdutils): the tty case cannot run"
        exit 1
fi

# BuildKit's own times: the 1 s step lasts what BuildKit says (plain's
# "#N DONE 1.1s", rawjson's completed - started), whenever its lines came.
for r in changed changedjson; do
        check "$r: the sleep step lasts BuildKit's own time" python3 - "$T/$r.json" "$T/logs/build-$r.log" <<'PY'
import json, re, sys
from datetime import datetime
s = [x for x in json.load(open(sys.argv[1]))["buildkit_steps"] if "RUN sleep 1" in x["name"]]
assert len(s) == 1, s
got = s[0]["end_s"] - s[0]["start_s"]
log = open(sys.argv[2], errors="replace").read()
m = re.search(r"^#(\d+) \[build 3/3\] RUN sleep 1", log, re.M)
if m:  # plain
    want = float(re.search(r"^#%s DONE (\d+\.\d)s$" % m.group(1), log, re.M).group(1))
    tol = 0.051
else:  # rawjson
    t = lambda v: datetime.fromisoformat(v[:26].rstrip("Z")).timestamp()
    for l in log.splitlines():
        if l.startswith("{") and "RUN sleep 1" in l:
            for v in json.loads(l).get("vertexes", []):
                if "RUN sleep 1" in v.get("name", "") and "completed" in v:
                    want = t(v["completed"]) - t(v["started"])
    tol = 0.002
assert got >= 1.0 and abs(got - want) <= tol, (got, want)
PY
done
# The context of the rawjson run: "#N [stage i/n] ..." with its stage, never JSON.
check "rawjson: the context column holds no JSON, and names steps" python3 - "$T/logs/resources-changedjson.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ctx = [r["context"] for r in rows if r["context"]]
assert ctx and not any(c.lstrip().startswith("{") for c in ctx), ctx
assert any(c.startswith("#") and "] " in c for c in ctx), ctx
assert any(r["stage"] for r in rows), [r["stage"] for r in rows]
PY
# (the peak may come before BuildKit's first line: no context then)
check "rawjson: the summary's context is none or a step, never JSON" python3 - "$T/logs/resources-changedjson.summary.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["build"]["mem_peak_mb"]
assert p["context"] == "" or (p["context"].startswith("#") and "{" not in p["context"]), p
PY

# A failing step: the status passes through, the step is named, the
# target failed; steps by the record as by the stream.
cat >"$T/fail.Dockerfile" <<'EOF'
FROM local/busybox
RUN echo before
RUN echo oops >&2 && exit 3
RUN echo never
EOF
bt fail plain -f "$T/fail.Dockerfile"
expect_eq "failing step: buildx's status passes through" "$RC" 1
check "failing step: named, target failed" python3 - "$T/fail.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [f["name"] for f in d["failed_steps"]] == ["[3/4] RUN echo oops >&2 && exit 3"], d["failed_steps"]
t = d["targets"][0]
assert (t["steps"], t["cached"], t["success"], t["failed"]) == (3, 1, False, 1), t
PY
check "failing step: the summary names it and its error (issue 35)" python3 - "$T/logs/resources-fail.summary.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["run"]["failure"]
print(f)
assert (f["target"], f["tool"]) == ("[3/4] RUN echo oops >&2 && exit 3", "buildkit"), f
assert "exit code: 3" in f["first_error"] and f["last_error"].startswith("ERROR: failed to") and "exit code: 3" in f["last_error"], f
PY

# import-buildx: the ref as history ls prints it and the bare id.
ref=$(docker buildx history ls --format json | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["ref"])')
"$BUILDTEL" import-buildx "$ref" >"$T/imp1" 2>&1
expect_eq "import-buildx $ref: exit 0" "$?" 0
"$BUILDTEL" import-buildx "${ref##*/}" >"$T/imp2" 2>&1
expect_eq "import-buildx bare id: exit 0" "$?" 0
expect_eq "both ref forms: the same record" "$(sed 's/^[^:]*://' "$T/imp1")" "$(sed 's/^[^:]*://' "$T/imp2")"
check "import-buildx: the failed build's steps by the one definition" grep -q ' 3 steps (1 cached' "$T/imp1"

# Docker 20.10's own client (BuildKit 0.8's printer: "#N sha256:..." lines,
# no "#0 building with"): the builder label is the front end everywhere.
if [ -x /usr/bin/docker ] && /usr/bin/docker version >/dev/null 2>&1; then
        echo app3 >"$P/app.txt"
        (cd "$P" && DOCKER_BUILDKIT=1 "$BUILDTEL" run --quiet --no-report --log-dir "$T/logs" --run-id old \
                --db "$T/h.db" --textfile-dir "$T/tf" --job single --interval 0.05 -- /usr/bin/docker build --network=none \
                --progress=plain -t bt-old . >/dev/null 2>"$T/old.err")
        expect_eq "20.10 client: exit 0" "$?" 0
        cp "$T/logs/resources-old.targets.json" "$T/old.json"
        expect_eq "20.10 client: the same steps and cached" "$(steps old)" "9/4"
        check "20.10 client: the textfile's builder label" grep -q '^build_steps_total{target="default",builder="docker build",buildtel_job="single"} 9$' "$T/tf/buildtel-single.prom"
        "$BUILDTEL" inspect --db "$T/h.db" --json old >"$T/old.inspect.json"
        expect_eq "20.10 client: inspect's builder" "$($J "$T/old.inspect.json" builder)" "docker build"
        check "20.10 client: no sha256 or DONE line as the context" python3 - "$T/logs/resources-old.csv" <<'PY'
import csv, re, sys
bad = [r["context"] for r in csv.DictReader(open(sys.argv[1], newline=""))
       if re.match(r"#\d+ (sha256:|DONE|CACHED)", r["context"])]
assert not bad, bad
PY
else
        echo "# /usr/bin/docker (Debian's 20.10 client) is not here: its builder label is not checked"
fi

# From a git checkout (the run knows its revision): after a whole stream
# history ls is the one call; its record's status and time are the target's
git -C "$P" init -q && git -C "$P" add -A &&
        git -C "$P" -c user.email=t@example.com -c user.name=t commit -qm x ||
        { echo "FAIL a git checkout: git is needed (tools/deps.sh installs it)"; exit 1; }
echo app-git >"$P/app.txt"
rm -f "$T/docker-calls"
bt gitrun plain
expect_eq "git checkout: exit 0" "$RC" 0
expect_eq "git checkout: the steps" "$(steps gitrun)" "9/4"
expect_eq "git checkout: one history call, ls" "$(grep -c '^buildx history' "$T/docker-calls")" 1 ||
        sed 's/^/# call: /' "$T/docker-calls"
check "git checkout: that call is history ls" grep -q '^buildx history ls' "$T/docker-calls"
check "git checkout: the target built, its duration BuildKit's record's (> 1 s: the sleep step)" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
sys.exit(not (t["success"] is True and t["ref"] and t["duration_s"] and 1.0 < t["duration_s"] < 30))' "$T/gitrun.json"
finish
