#!/usr/bin/env bash
# A real BuildKit (tools/buildkit, private to this test): a bake of two
# targets of our own that share a stage. The live streams print a shared
# step under one target only; each target's own history record (replayed
# by `buildx history logs`) has all of its steps. Plain and rawjson, with
# and without --metadata-file: identical per-target steps and cached, equal
# to the build graph (app 5 steps, tools 4). And the seed's sccache
# attribution: app's RUN step prints a stats block and tees it to its marker
# file; app gets those hits and misses from the live stream and from its
# replayed record alike (a --progress=quiet build has only the record).
. "$(dirname "$0")/lib.sh"
buildkit_up
buildkit_need_history
P=$T/proj
mkdir -p "$P"
cat >"$P/Dockerfile" <<'EOF'
FROM local/busybox AS common
RUN echo common > /common.txt
COPY shared.txt /shared.txt

FROM common AS app
COPY app.txt /app.txt
RUN h=$(cat /app.txt); printf 'Compile requests %s\nCompile requests executed %s\nCache hits %s\nCache hits (C/C++) %s\nCache misses 5\nCache misses (C/C++) 5\nCache timeouts 0\n' $((h + 5)) $((h + 5)) $h $h | tee /tmp/app-sccache-stats.txt

FROM common AS tools
RUN cat /common.txt /shared.txt > /tools.txt
EOF
cat >"$P/docker-bake.hcl" <<'EOF'
group "default" {
  targets = ["app", "tools"]
}
target "app" {
  target = "app"
  network = "none"
}
target "tools" {
  target = "tools"
  network = "none"
}
EOF
echo s >"$P/shared.txt"
hits=1
echo $hits >"$P/app.txt"
MARK=(--sccache-marker app=/tmp/app-sccache-stats.txt)
# bt NAME PROGRESS [ARGS...]: one bake under buildtel; targets.json in $T/NAME.json
bt() {
        local name=$1 progress=$2 s
        shift 2
        s=$(now)
        (cd "$P" && "$BUILDTEL" run --quiet --no-report --no-db --log-dir "$T/logs" --run-id "$name" \
                "${MARK[@]}" --interval 0.1 -- docker buildx bake --progress="$progress" "$@" \
                >"$T/$name.out" 2>"$T/$name.err")
        RC=$?
        echo "# $name: exit $RC, $(since "$s") s"
        # buildtel's notes (a history that could not be had, ...), for a
        # check that fails
        grep -i 'history' "$T/$name.err" | sed "s/^/# $name: /"
        cp "$T/logs/resources-$name.targets.json" "$T/$name.json" 2>/dev/null
}
# steps NAME: "app a/b tools c/d", and app's sccache hits/misses
steps() { python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["targets"]}
sc = t.get("app", {}).get("sccache") or {}
print(" ".join("%s %s/%s" % (n, t[n]["steps"], t[n]["cached"]) for n in sorted(t)), "sccache %s/%s" % (sc.get("hits"), sc.get("misses")))' "$T/$1.json"; }

# records N: for a check that fails, the step vertices of the newest N
# records (history logs: each one's name line and how it ended)
records() {
        local ref
        for ref in $(docker buildx history ls --format json 2>/dev/null | head -n "$1" |
                python3 -c 'import json, sys
for l in sys.stdin:
    print(json.loads(l)["ref"].split("/")[-1])'); do
                docker buildx history logs "$ref" 2>&1 | awk -v r="$ref" '
                        /^#[0-9]+ \[/ && !/\[internal\]/ { n[$1] = $0; next }
                        $1 in n && ($2 == "CACHED" || $2 == "DONE" || $2 ~ /^ERROR/ || $2 == "CANCELED") { e[$1] = $2 }
                        $1 in n && $2 != "CACHED" && $2 != "DONE" { o[$1] = o[$1] " | " substr($0, length($1) + 2) }
                        END { for (k in n) printf "# record %s: %s: %s%s\n", r, n[k], (k in e ? e[k] : "(no end)"), o[k] }'
        done
}
# fully NAME: the hot build's check, with its records when it fails
fully() {
        local got
        got=$(steps "$1")
        expect_eq "$2" "$got" "app 5/5 tools 4/4 sccache None/None"
        [ "$got" = "app 5/5 tools 4/4 sccache None/None" ] || records 2
}

bt cold plain
expect_eq "cold: exit 0" "$RC" 0
# the critical path of a bake: the target whose chain ended last, its steps
# its own (issue 38)
expect_eq "cold: the critical path names the target that set the whole" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p, steps = d["critical_path"], d["buildkit_steps"]
last = max((s for s in steps if s["step"] and s["target"] in ("app", "tools") and s["end_s"] is not None),
           key=lambda s: s["end_s"])
print(p["target"] == last["target"], all(s["name"].startswith("[" + p["target"] + " ") for s in p["steps"]))' "$T/cold.json")" "True True"
check "cold: every step of the graph, per target" python3 - "$T/cold.json" <<'PY'
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["targets"]}
assert (t["app"]["steps"], t["tools"]["steps"]) == (5, 4), t
PY
# (a note that the steps were too short to find their exec cgroups is
# another matter: the cold steps are printf and cat)
notes=$(grep note "$T/cold.err" | grep -i history)
check "cold: no note about the history (it was there)${notes:+: $notes}" test -z "$notes"
# Hot: every source, every target fully cached.
for mode in plain rawjson; do
        bt "hot-$mode" $mode
        fully "hot-$mode" "hot, $mode: fully cached"
        bt "hotmeta-$mode" $mode --metadata-file "$T/meta-$mode.json"
        fully "hotmeta-$mode" "hot, $mode, --metadata-file: fully cached"
done
# One file of app changed before each build: app's own two steps run, the
# shared stage is cached; its marker step prints hits = the file's number.
for mode in plain rawjson; do
        for meta in no yes; do
                hits=$((hits + 1))
                echo $hits >"$P/app.txt"
                if [ $meta = yes ]; then
                        bt "ch-$mode-meta" $mode --metadata-file "$T/m-$mode.json"
                        expect_eq "changed, $mode, --metadata-file" "$(steps "ch-$mode-meta")" "app 5/3 tools 4/4 sccache $hits/5"
                else
                        bt "ch-$mode" $mode
                        expect_eq "changed, $mode" "$(steps "ch-$mode")" "app 5/3 tools 4/4 sccache $hits/5"
                fi
        done
done
check "changed, plain: the targets' refs from history ls" python3 - "$T/ch-plain.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["targets"]
assert all(len(x["ref"]) == 25 for x in t), t
PY
# --progress=quiet: no live stream, only the records (through the metadata file).
hits=$((hits + 1))
echo $hits >"$P/app.txt"
bt quiet quiet --metadata-file "$T/mq.json"
expect_eq "quiet: the records alone give the same, sccache included" "$(steps quiet)" "app 5/3 tools 4/4 sccache $hits/5"
# The live stream alone: the same bake where the builder's history cannot
# be had (as with Docker 20.10's daemon, "unknown method ListenBuildHistory":
# a `docker` in front of the real one fails its history subcommand, the
# build itself is real). app's stats come from its marker step in the
# stream; a note says the steps are the stream's.
mkdir -p "$T/nohist"
REAL_DOCKER=$(command -v docker)
printf '#!/bin/sh\n[ "$1 $2" = "buildx history" ] && { echo "ERROR: unknown method ListenBuildHistory" >&2; exit 1; }\nexec %s "$@"\n' \
        "$REAL_DOCKER" >"$T/nohist/docker"
chmod +x "$T/nohist/docker"
hits=$((hits + 1))
echo $hits >"$P/app.txt"
PATH="$T/nohist:$PATH" bt live plain
check "live stream alone: app's sccache from its marker step" python3 - "$T/live.json" "$hits" <<'PY'
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["targets"]}
assert t["app"]["sccache"] == {"hits": int(sys.argv[2]), "misses": 5}, t
assert t["app"]["sccache_guess"] is False and t["app"]["ref"] == "", t
PY
check "live stream alone: a note says the history was not there" grep -q 'note: buildx history: 0 of 2 targets replayed' "$T/live.err"
echo "# live stream alone: $(steps live)"
# A log replayed with cat is no build of ours: no note about its history.
(unset DOCKER_HOST; "$BUILDTEL" run --quiet --no-report --no-db --log-dir "$T/logs" --run-id cat \
        "${MARK[@]}" -- cat "$T/logs/build-ch-plain.log" >/dev/null 2>"$T/cat.err")
check "a replayed log: no note" test ! -s "$T/cat.err"
finish
