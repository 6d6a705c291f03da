#!/usr/bin/env bash
# buildtel bench's classes on a real compiler cache: a small C project
# built through real ccache (a fresh cache in $T), `make clean` as
# --prepare. The first run compiles everything (misses: cold), the next
# two take every object from the cache (hits: warm). The build prints the
# cache's stats before and after, as CI scripts do.
. "$(dirname "$0")/lib.sh"
for p in ccache gcc make python3; do
        command -v "$p" >/dev/null || { echo "missing $p (Debian: ccache, gcc, make, python3)"; exit 77; }
done
P="$T/proj" L="$T/logs"
mkdir -p "$P"
for i in 1 2 3 4; do
        printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" >"$P/f$i.c"
done
printf 'int f1(int);\nint main(void) { return f1(0); }\n' >"$P/main.c"
cat >"$P/Makefile" <<'MK'
OBJS = f1.o f2.o f3.o f4.o main.o
app: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c
	$(CC) -O1 -c -o $@ $<
clean:
	rm -f app $(OBJS)
MK
unset CCACHE_DISABLE CCACHE_LOGFILE CCACHE_RECACHE CCACHE_READONLY
export CCACHE_DIR="$T/ccache" CCACHE_CONFIGPATH="$T/ccache.conf"
: >"$CCACHE_CONFIGPATH"

"$BUILDTEL" bench --runs 3 --no-db --no-report --log-dir "$L" --export-json "$T/b.json" \
        --prepare "make -s -C '$P' clean" \
        -- "ccache --print-stats; make -s -C '$P' CC='ccache gcc'; ccache --print-stats" \
        >"$T/b.out" 2>"$T/b.err"
expect_eq "bench status" "$?" 0
cat "$T/b.out" "$T/b.err"
expect_eq "cold, then warm twice" \
        "$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["results"][0]["classes"]))' "$T/b.json")" \
        "cold,warm,warm"
expect_eq "the first run: 5 misses, no hit; then 5 hits each" \
        "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["compiler_cache_hits"], r["compiler_cache_misses"])' "$T/b.json")" \
        "[0, 5, 5] [5, 0, 0]"
check "the text lists both classes" grep -q 'cold *1 run' "$T/b.out"
finish
