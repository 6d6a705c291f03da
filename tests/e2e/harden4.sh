#!/usr/bin/env bash
# Hardening, round 4 (issue 33): a full history disk never touches the
# build. One case per run: harden4.sh CASE. (The other areas of the issue:
# harden4-tty.sh, harden4-dir.sh, harden4-runc.sh, harden4-misc.sh.)
. "$(dirname "$0")/lib.sh"
case=${1:?usage: harden4.sh CASE}

# The build: 2 s of long lines (each sample's context is one), then exit 3.
build() {
        sh -c 'i=0; while [ $i -lt 200 ]; do i=$((i + 1));
                printf "line %05d %0200d\n" $i 0; sleep 0.01; done; exit 3'
}
export -f build 2>/dev/null

# High: with the history's file system nearly full (from a few KiB to more
# than buildtel's reserve free at the start), buildtel's own inserts fill
# it. At every size: the build's own status, its output whole, no broken
# pipe, the run's files written, and the row (if any) never 'incomplete'.
# Before the fix, a reserve that could not be had left a closed fd number
# in the sink; the build's output pipe took that number and the give-up
# closed it: the build died of SIGPIPE (141).
case_diskfull() {
        need_root "mount a tmpfs"
        local m="$T/m" sz st rows state out=0 full=0 sized=0
        mkdir -p "$m"
        build >"$T/want" 2>/dev/null
        for sz in 152 184 200 232 320 384 512; do
                mount -t tmpfs -o size=${sz}k tmpfs "$m" || { echo "cannot mount a tmpfs"; exit 77; }
                "$BUILDTEL" run --db "$m/h.db" --log-dir "$T/l" --run-id "s$sz" --interval 0.05 -- \
                        bash -c build >"$T/out" 2>"$T/err"
                st=$?
                expect_eq "${sz} KiB: the build's own status" "$st" 3 || cat "$T/err"
                check "${sz} KiB: its output whole" cmp -s "$T/out" "$T/want"
                check "${sz} KiB: no broken pipe" sh -c "! grep -q 'Broken pipe' '$T/err'"
                check "${sz} KiB: the CSV written" test -s "$T/l/resources-s$sz.csv"
                check "${sz} KiB: the summary written" test -s "$T/l/resources-s$sz.summary.json"
                grep -q "No space left on device; this run is not in the history" "$T/err" && full=$((full + 1))
                rows=$(sqlite3 "$m/h.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
                state=$("$BUILDTEL" status --db "$m/h.db" --json 2>/dev/null |
                        python3 -c 'import json,sys; r = json.load(sys.stdin); print(r[0]["result"] if r else "")' 2>/dev/null)
                if [ "${rows:-0}" -gt 0 ]; then
                        # the row went in: it is complete or says the disk filled
                        case $state in
                        "exit 3") out=$((out + 1)) ;;
                        "not recorded: disk full")
                                sized=$((sized + 1))
                                check "${sz} KiB: the warning names what the row reads" \
                                        grep -q "(its row reads as not recorded: disk full)" "$T/err" ;;
                        *) bad "${sz} KiB: the row reads '$state'" ;;
                        esac
                fi
                echo "# ${sz} KiB: rows ${rows:-0}, '$state'"
                umount "$m"
        done
        # the sizes cover every path: no room at the start, filled mid-run
        check "some sizes had no room for the history at all" test "$full" -gt "$sized"
        check "some rows were written, then their disk filled" test "$sized" -gt 0
        echo "# complete rows: $out, filled mid-run: $sized, refused or cut: $full"
}

# The streamed trace is an unnamed O_TMPFILE, linked at the end by
# AT_EMPTY_PATH. Where the kernel refuses that (no CAP_DAC_READ_SEARCH
# before Linux 6.10; this host's may allow it), its bytes are copied to a
# named temp instead: a shim makes linkat(AT_EMPTY_PATH) fail as such a
# kernel does, and says so in a file when it did.
case_tracecopy() {
        command -v gcc >/dev/null || { echo "needs gcc for the shim"; exit 77; }
        cat >"$T/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int linkat(int ofd, const char *op, int nfd, const char *np, int flags)
{
        static int (*real)(int, const char *, int, const char *, int);
        if (flags & AT_EMPTY_PATH) {
                int fd = open(getenv("SHIM_MARK"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                if (fd >= 0) { (void)!write(fd, "x", 1); close(fd); }
                errno = ENOENT;
                return -1;
        }
        real = real ? real : (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
        return real(ofd, op, nfd, np, flags);
}
C
        gcc -shared -fPIC -o "$T/shim.so" "$T/shim.c" -ldl || { echo "cannot build the shim"; exit 77; }
        SHIM_MARK="$T/mark" LD_PRELOAD="$T/shim.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
                "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id tc --trace-file --interval 0.05 -- \
                sh -c 'echo hello; sleep 0.3' >/dev/null 2>"$T/err"
        expect_eq "the build's status" "$?" 0 || cat "$T/err"
        check "the kernel's refusal was met" test -s "$T/mark"
        check "the trace is there, whole JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))['traceEvents']" "$T/l/trace-tc.json"
        check "no temp file left" test -z "$(ls -A "$T/l" | grep '^\.')"
        expect_eq "its mode is the run files'" "$(stat -c %a "$T/l/trace-tc.json")" "$(stat -c %a "$T/l/resources-tc.csv")"
}

# A replay reads the run's side files (run.json, targets, units) beside
# its CSV: a FIFO planted as one of them is passed over, never waited on.
case_sidefifo() {
        "$BUILDTEL" run --no-db --log-dir "$T/l" --run-id sf --interval 0.05 -- sh -c 'sleep 0.3' \
                >/dev/null 2>&1 || bad "record"
        rm -f "$T/l/resources-sf.run.json" "$T/l/resources-sf.units.csv"
        mkfifo "$T/l/resources-sf.run.json" "$T/l/resources-sf.units.csv"
        timeout -k 2 20 "$BUILDTEL" report -o "$T/r.html" "$T/l/resources-sf.csv" >/dev/null 2>"$T/err"
        expect_eq "report of the CSV ends" "$?" 0 || cat "$T/err"
        timeout -k 2 20 "$BUILDTEL" summarize "$T/l/resources-sf.csv" >/dev/null 2>>"$T/err"
        expect_eq "summarize of the CSV ends" "$?" 0 || cat "$T/err"
        # the trace needs the run's record: it says so and ends
        timeout -k 2 20 "$BUILDTEL" export --trace -o "$T/t.json" "$T/l/resources-sf.csv" >/dev/null 2>"$T/err"
        expect_eq "export --trace of the CSV ends, refused" "$?" 1 || cat "$T/err"
        check "saying why" grep -q "resources-sf.run.json' is missing or not a run record" "$T/err"
        check "the FIFOs stay FIFOs" test -p "$T/l/resources-sf.run.json"
}

"case_$case" || true
finish
