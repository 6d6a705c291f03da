# Shared by the end-to-end tests. They run the real buildtel binary ($BUILDTEL)
# on real child processes and check the real files it writes.
set -u
: "${BUILDTEL:?BUILDTEL must name the buildtel binary}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CSVCHECK="python3 $HERE/csvcheck.py"
T=$(mktemp -d "${TMPDIR:-/tmp}/buildtel-e2e.XXXXXX")
# Never the machine's real node_exporter directory from a test.
export BUILDTEL_TEXTFILE_DIR="$T/textfile"
FAILS=0
CHECKS=0
BUILDKIT_DIR=
cleanup() {
        [ -n "$BUILDKIT_DIR" ] && "$HERE/../../tools/buildkit" stop "$BUILDKIT_DIR"
        # BUILDTEL_E2E_KEEP=1: a failed test's files stay, for a look
        if [ "${BUILDTEL_E2E_KEEP:-}" = 1 ] && [ "$FAILS" -gt 0 ]; then
                echo "# kept: $T" >&2
        else
                rm -rf "$T"
        fi
}
trap cleanup EXIT
# Runs record into a history database: keep the tests' out of the user's.
export XDG_STATE_HOME="$T/state"

ok() { CHECKS=$((CHECKS + 1)); printf 'ok   %s\n' "$*"; }
# bad, and so check and expect_eq, return 1: `check ... || show-why` runs
# show-why on a failure only.
bad() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$*"; return 1; }
check() { # check DESCRIPTION COMMAND...
        local d=$1; shift
        if "$@"; then ok "$d"; else bad "$d"; fi
}
expect_eq() { # expect_eq DESCRIPTION GOT WANT
        if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}
need_root() { [ "$(id -u)" = 0 ] || { echo "needs root: $1"; exit 77; }; }
# nobytes FILE... -- ESCAPED: none of the files holds the bytes (printf form)
nobytes() {
        local b f
        b=${*: -1}
        for f in "${@:1:$#-2}"; do
                LC_ALL=C grep -qF -- "$(printf "$b")" "$f" && return 1
        done
        return 0
}
finish() {
        printf '%d checks, %d failed\n' "$CHECKS" "$FAILS"
        [ "$FAILS" -eq 0 ]
        exit $?
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}'; }
lt() { awk -v x="$1" -v y="$2" 'BEGIN{exit !(x < y)}'; }
ge() { awk -v x="$1" -v y="$2" 'BEGIN{exit !(x >= y)}'; }
# buildkit_up [DIR]: start a private real dockerd + buildx (tools/buildkit) in
# DIR (default $T/bk), export its DOCKER_HOST, DOCKER_CONFIG and PATH (the
# newer docker client first), and stop it when the test exits. Exits 77 with
# tools/buildkit's reason when no daemon can be had. Base image: local/busybox;
# RUN steps need --network=none (bake: network = "none").
buildkit_up() {
        local envs rc
        BUILDKIT_DIR=${1:-$T/bk}
        envs=$("$HERE/../../tools/buildkit" start "$BUILDKIT_DIR")
        rc=$?
        if [ $rc -ne 0 ]; then
                BUILDKIT_DIR=
                [ $rc -eq 77 ] && { echo "SKIP: no real BuildKit"; exit 77; }
                echo "FAIL: tools/buildkit start exited $rc"
                exit 1
        fi
        while IFS= read -r l; do export "$l"; done <<<"$envs"
}
# buildkit_need_history: skip (77) when the daemon's buildx has no history
# (trixie's buildx 0.13, the fallback when sid cannot be had).
buildkit_need_history() {
        docker buildx history ls --format json >/dev/null 2>&1 ||
                { echo "SKIP: this buildx ($(docker buildx version 2>&1)) has no 'history ls --format json'"; exit 77; }
}
# Move this shell into cgroups of its own in every hierarchy buildtel uses
# (v2, and v1 memory, cpuacct, blkio, pids): other buildtels on the machine
# (older ones kill what a dead run left) then do not see our runs under the
# shared <own cgroup>/buildtel. unisolate moves it back.
ISO=()
isolate() {
        local id ctl path mnt self
        # Read once: a re-read after the first move would name the new cgroups.
        self=$(cat /proc/self/cgroup)
        while IFS=: read -r id ctl path; do
                if [ "$id" = 0 ]; then
                        mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
                else
                        case ",$ctl," in
                        *,memory,* | *,cpuacct,* | *,blkio,* | *,pids,*) ;;
                        *) continue ;;
                        esac
                        mnt=$(awk -v c="$ctl" '$9 == "cgroup" && ("," $NF ",") ~ ("," c ",") {print $5; exit}' \
                                /proc/self/mountinfo)
                fi
                [ -n "$mnt" ] && [ -d "$mnt${path%/}" ] || continue
                mkdir "$mnt${path%/}/harden-$$" || return 1
                ISO+=("$mnt${path%/}")
                echo $$ >"$mnt${path%/}/harden-$$/cgroup.procs" || return 1
        done <<<"$self"
}
unisolate() {
        local d
        for d in "${ISO[@]}"; do
                echo $$ >"$d/cgroup.procs" 2>/dev/null
                find "$d/harden-$$" -depth -type d -exec rmdir {} + 2>/dev/null
        done
}

# The strict OTLP sink (tests/otlp-sink), for a script that set SINKDIR:
# start_sink DIR records into DIR/rec.jsonl and sets PORT; stop_sink.
SINK_PID=
stop_sink() { [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null; SINK_PID=; }
start_sink() { # start_sink DIR
        mkdir -p "$1"
        node "$SINKDIR/sink.js" --port-file "$1/port" --record "$1/rec.jsonl" --mode ok 2>"$1/err" &
        SINK_PID=$!
        for _ in $(seq 100); do [ -s "$1/port" ] && break; sleep 0.05; done
        PORT=$(cat "$1/port" 2>/dev/null)
        [ -n "$PORT" ] || { echo "FAIL the sink did not start: $(cat "$1/err")"; exit 1; }
}

# write_bk_log FILE: a script printing a BuildKit plain log of one target
# of 4 steps, the first $1 of them CACHED, then a pause of ${2:-0} s.
write_bk_log() {
        cat >"$1" <<'SH'
#!/bin/sh
c=$1
echo '#1 [internal] load build definition from Dockerfile'
echo '#1 DONE 0.0s'
i=2
for st in "1/4] FROM docker.io/library/busybox" "2/4] RUN make deps" "3/4] RUN make" "4/4] COPY . ."; do
        echo
        echo "#$i [app $st"
        if [ $((i - 1)) -le "$c" ]; then echo "#$i CACHED"; else echo "#$i 0.101 working"; echo "#$i DONE 0.1s"; fi
        i=$((i + 1))
done
sleep "${2:-0}"
SH
        chmod +x "$1"
}
# sccache_port: a free loopback port below the kernel's ephemeral range, so
# that no outgoing connection (of this test or another running beside it)
# takes it before the server binds it; bind(0) gives one from that range.
sccache_port() {
        python3 - <<'PY'
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    s = socket.socket()
    port = random.randrange(20000, lo) if lo > 21000 else 0
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(s.getsockname()[1])
    break
PY
}
# sccache_start ERRFILE COMMAND...: run COMMAND, which starts an sccache
# server (`sccache --start-server`, or buildtel running it), its stdout to
# /dev/null and its stderr to ERRFILE, on a port of sccache_port (exported as SCCACHE_SERVER_PORT).
# When sccache itself says its server did not start, again on another port,
# three times at most: sccache 0.4's client binds the socket its server
# reports to after it spawns that server, and a server that is quicker
# under load finds no socket (ENOENT), exits, and leaves the client
# waiting 10 s ("Timed out waiting for server startup"); seen here 1 start
# in 60 with 3 at once on 2 CPUs. Returns COMMAND's status.
sccache_start() {
        local err=$1 try rc; shift
        for try in 1 2 3; do
                SCCACHE_SERVER_PORT=$(sccache_port)
                export SCCACHE_SERVER_PORT
                "$@" >/dev/null 2>"$err"
                rc=$?
                grep -q -E "sccache: error: (Timed out waiting for server startup|Server startup failed)" "$err" ||
                        break
                echo "# sccache's own start failed on port $SCCACHE_SERVER_PORT (try $try): $(grep -m1 "sccache: error" "$err")"
        done
        return $rc
}
