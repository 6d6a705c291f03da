#!/usr/bin/env bash
# Every process accounted (issue 36): a build of N processes (default
# 20,000) of 40 ms each at -j8, a generated ninja file whose every edge is
# `sleep 0.04`. Measured:
#   - buildtel's own CPU per process that ended, and its peak RSS, read
#     from its own /proc entry by the build's last command (its parent),
#     with the kernel's per-process accounting (root: taskstats and the
#     process connector) and on the sampled path (as nobody), at N/10
#     and N processes: the RSS stays flat (per-unit state only);
#   - the build's wall time under buildtel against the bare build, as
#     interleaved pairs (bench/pairs.py; goal <= 1.01x).
#   bench/acct.sh BUILDTEL WORKDIR [N] [PAIRS]   (about 15 minutes at 20,000 and 3 pairs)
set -eu
BT=$1 W=$2 N=${3:-20000} RUNS=${4:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || echo "acct: not root: the kernel's accounting is not ours; both rows are the sampled path"

gen() { # gen DIR COUNT
        mkdir -p "$1"
        {
                printf 'rule p\n  command = sleep 0.04\n'
                seq 1 "$2" | sed 's/.*/build o&: p/'
        } >"$1/build.ninja"
}

# self LABEL DIR [command prefix]: one run; prints buildtel's CPU per
# process ended and its peak RSS.
self() {
        local label=$1 dir=$2 hz ended
        shift 2
        rm -rf "$W/u/l" "$dir/.ninja_log"
        "$@" "$BT" run --quiet --no-db --no-report --log-dir "$W/u/l" --run-id a -- \
                sh -c "ninja -C '$dir' -j8 >/dev/null; cat /proc/\$PPID/stat >'$W/self.stat'; cat /proc/\$PPID/status >'$W/self.status'"
        hz=$(getconf CLK_TCK)
        ended=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])).get("processes") or {}; print(p.get("ended") or 0)' \
                "$W/u/l/resources-a.summary.json")
        awk -v hz="$hz" -v label="$label" -v ended="$ended" -v n="$(grep -c '^build ' "$dir/build.ninja")" '
                FNR == NR { sub(/^.*\) /, ""); cpu = ($12 + $13) / hz; next }
                /^VmHWM:/ { hwm = $2 }
                END {
                        per = ended > 0 ? ended : 2 * n
                        note = ended > 0 ? "" : " (not counted: 2 per edge assumed)"
                        printf("acct: %-24s %6d edges, %6d processes ended%s: buildtel %.2f s CPU, %.1f us per process, peak RSS %.1f MiB\n", label, n, ended, note, cpu, cpu / per * 1e6, hwm / 1024)
                }' "$W/self.stat" "$W/self.status"
}

mkdir -p "$W/u"
small=$((N / 10))
gen "$W/acct-small" "$small"
gen "$W/acct" "$N"
echo "== buildtel's own cost per process, and its RSS at $small and $N processes"
self "kernel accounting" "$W/acct-small"
self "kernel accounting" "$W/acct"
if [ "$(id -u)" = 0 ]; then
        # the sampled path: a user's buildtel (no CAP_NET_ADMIN), in a
        # directory that user may write
        chmod 755 "$W" && chown -R nobody "$W/u" "$W/acct-small" "$W/acct" &&
                touch "$W/self.stat" "$W/self.status" && chown nobody "$W/self.stat" "$W/self.status"
        self "sampled (as nobody)" "$W/acct-small" runuser -u nobody --
        self "sampled (as nobody)" "$W/acct" runuser -u nobody --
fi
echo "== the build's wall, $N processes at -j8, under buildtel and bare"
python3 "$HERE/pairs.py" --name "acct: buildtel run ninja / ninja ($N x 40 ms at -j8)" --ratio b/a \
        --goal-max 1.01 --runs "$RUNS" --warmup 0 --prepare "rm -rf $W/l $W/acct/.ninja_log" \
        --a "ninja -C $W/acct -j8" \
        --b "$BT run --quiet --no-db --no-report --log-dir $W/l -- ninja -C $W/acct -j8"
rm -rf "$W/acct" "$W/acct-small" "$W/l" "$W/u" "$W/self.stat" "$W/self.status"
