#!/usr/bin/env bash
# On a ninja build the summary leads with what was running at the peak, the
# printed line second (issue 21: ninja prints an edge when it finishes, so at
# nlohmann/json's peaks the context was a `[105/168] Linking ...` edge that
# had ended 15-19 s before, while the peak unit was still compiling).
. "$(dirname "$0")/lib.sh"
command -v ninja >/dev/null || { echo "no ninja on this machine"; exit 77; }
L="$T/logs"
P="$T/proj"
mkdir -p "$P"
cd "$P" || exit 1
# A "compiler" named cc1: the big source waits 1.5 s (the four small ones,
# 0.3 s each on the other slot, are done by then: touching 2 GiB took
# 0.2-0.8 s here, and a peak while s3.c still ran named it too), then holds
# 2 GiB (memhog, its child) for 3 s and finishes last (2 GiB so that the host's peak, which the
# headline is, is this build's whatever the tests beside it hold: the
# suite's largest allocation elsewhere is 1 GiB); the small ones finish early, and ninja prints
# each of their lines as it finishes.
cat >cc1 <<SH
#!/bin/sh
case "\$1" in
big.c) sleep 1.5; "$MEMHOG" 2048 3 ;;
*) sleep 0.3 ;;
esac
touch "\$2"
SH
chmod +x cc1
{
        printf 'rule cc\n  command = ./cc1 $in $out\n  description = CC $out\n'
        printf 'build big.o: cc big.c\n'
        for i in 1 2 3 4; do printf 'build s%d.o: cc s%d.c\n' "$i" "$i"; done
} >build.ninja
touch big.c s1.c s2.c s3.c s4.c
"$BUILDTEL" run --no-db --no-report --interval 0.1 --log-dir "$L" --run-id p1 -- \
        ninja -j2 >"$T/out" 2>"$T/err"
expect_eq "the build ran" "$?" 0
cat "$T/err"
check "ninja printed the small edges before the big one" \
        sh -c "grep -n 'CC' '$T/out' | tail -1 | grep -q big.o"
line=$(grep '^buildtel: peak memory' "$T/err")
echo "$line"
check "the peak names the unit running then, first: big.c" \
        sh -c 'printf "%s\n" "$1" | grep -Eq "at \+[0-9.]+s(, stage [^,]*)?, running big\.c"' sh "$line"
check "and the printed line second, as the last printed" \
        sh -c 'printf "%s\n" "$1" | grep -Eq "running big\.c \(last printed: \[[0-9]+/5\] CC s[0-9]\.o\)"' sh "$line"
check "the summary's text says the same" grep -q "running big.c" "$L/resources-p1.summary.txt"
finish
