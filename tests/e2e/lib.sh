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
