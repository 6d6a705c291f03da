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
cleanup() { rm -rf "$T"; }
trap cleanup EXIT
# Runs record into a history database: keep the tests' out of the user's.
export XDG_STATE_HOME="$T/state"

ok() { CHECKS=$((CHECKS + 1)); printf 'ok   %s\n' "$*"; }
bad() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$*"; }
check() { # check DESCRIPTION COMMAND...
        local d=$1; shift
        if "$@"; then ok "$d"; else bad "$d"; fi
}
expect_eq() { # expect_eq DESCRIPTION GOT WANT
        if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
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
