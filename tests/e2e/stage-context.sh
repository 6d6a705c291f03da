#!/usr/bin/env bash
# Replayed ninja, make and BuildKit output gives the expected stage and
# context in the CSV.
. "$(dirname "$0")/lib.sh"
L="$T/logs"

replay() { # replay NAME FILE [buildtel options...]: print FILE, then idle for a few ticks
        local name=$1 file=$2; shift 2
        "$BUILDTEL" run --quiet --log-dir "$L" --run-id "$name" --interval 0.1 "$@" -- \
                sh -c 'cat "$1"; sleep 0.4' sh "$file" >/dev/null 2>&1
}
last() { $CSVCHECK stat "$L/resources-$1.csv" "$2" last-str; }

cat >"$T/ninja.txt" <<'LOG'
[1/3] Building C object CMakeFiles/app.dir/src/a.c.o
warning: something noisy
[2/3] Building C object CMakeFiles/app.dir/src/b.c.o
[3/3] Linking C executable app
LOG
replay ninja "$T/ninja.txt"
expect_eq "ninja: context is the last [n/m] line" "$(last ninja context)" "[3/3] Linking C executable app"
expect_eq "ninja: no stage" "$(last ninja stage)" ""

printf '%s\n' "[ 25%] Building CXX object lib/CMakeFiles/lib.dir/x.cpp.o" \
        "In file included from x.cpp:1:" "[ 50%] Linking CXX static library liblib.a" \
        "make[2]: Leaving directory '/src'" >"$T/make.txt"
replay make "$T/make.txt"
expect_eq "make: context is the last [ nn%] line" "$(last make context)" "[ 50%] Linking CXX static library liblib.a"

cat >"$T/bk.txt" <<'LOG'
#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 1.53kB done
#1 DONE 0.0s

#12 [pytorch builder 3/9] RUN pip install -r requirements.txt, "quoted"
#12 0.512 Collecting numpy
#12 DONE 1.2s

#13 [pytorch] exporting to image
#13 DONE 0.1s
LOG
replay bk "$T/bk.txt"
expect_eq "buildkit: stage from the step header" "$(last bk stage)" "pytorch/builder"
expect_eq "buildkit: context is the RUN step" "$(last bk context)" '#12 [pytorch builder 3/9] RUN pip install -r requirements.txt, "quoted"'
check "the CSV with commas and quotes in context is strict RFC 4180" $CSVCHECK strict "$L/resources-bk.csv"

printf '::group::Build wheels\n\033[1;32mcompiling\033[0m stuff\r\n' >"$T/gha.txt"
replay gha "$T/gha.txt"
expect_eq "GitHub Actions group sets the stage" "$(last gha stage)" "Build wheels"
expect_eq "ANSI and CR removed from context" "$(last gha context)" "compiling stuff"

printf 'step: fetch\nstep: compile\nworking\n' >"$T/re.txt"
replay re "$T/re.txt" --stage-regex '^step: (.*)$'
expect_eq "--stage-regex first capture" "$(last re stage)" "compile"
replay fixed "$T/re.txt" --stage release-build
expect_eq "--stage NAME" "$(last fixed stage)" "release-build"

head -c 4000 /dev/zero | tr '\0' 'x' >"$T/long.txt"; echo >>"$T/long.txt"
replay long "$T/long.txt"
n=$(last long context | wc -c)
check "context capped at 512 bytes ($n)" lt "$n" 514
finish
