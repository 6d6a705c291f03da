#!/usr/bin/env bash
# A generated ninja project for the "real build" pair: N C files (default
# 100), each a few templated functions so one compile takes a tenth of a
# second or so at -O2, linked into one program.
#   bench/gen-ninja.sh DIR [N]
set -eu
d=$1 n=${2:-100}
mkdir -p "$d"
for i in $(seq 1 "$n"); do
        {
                echo "#include <stddef.h>"
                for k in 1 2 3 4 5 6; do
                        cat <<C
static unsigned long f${k}_$i(const unsigned char *p, size_t n)
{
        unsigned long h = $i$k;
        for (size_t j = 0; j < n; j++) {
                h = (h ^ p[j]) * 1099511628211ul;
                if ((h & 7) == $k)
                        h += j * $k;
                switch (h & 15) {
                case 0: h ^= h >> 3; break; case 1: h += 17; break;
                case 2: h *= 3; break; case 3: h -= j; break;
                case 4: h ^= 0x5bd1e995; break; case 5: h = (h << 7) | (h >> 57); break;
                default: h += $i;
                }
        }
        return h;
}
C
                done
                echo "unsigned long u$i(const unsigned char *p, size_t n)"
                echo "{ return f1_$i(p, n) + f2_$i(p, n) + f3_$i(p, n) + f4_$i(p, n) + f5_$i(p, n) + f6_$i(p, n); }"
        } >"$d/u$i.c"
done
{
        echo "#include <stdio.h>"
        echo "#include <stddef.h>"
        for i in $(seq 1 "$n"); do echo "unsigned long u$i(const unsigned char *, size_t);"; done
        echo "int main(void) { static const unsigned char b[64]; unsigned long s = 0;"
        for i in $(seq 1 "$n"); do echo "s += u$i(b, sizeof(b));"; done
        echo "printf(\"%lu\\n\", s); return 0; }"
} >"$d/main.c"
{
        echo "cflags = -O2 -fno-inline"
        echo "rule cc"
        echo "  command = gcc \$cflags -c \$in -o \$out"
        echo "  description = CC \$out"
        echo "rule link"
        echo "  command = gcc \$in -o \$out"
        echo "  description = LINK \$out"
        objs=""
        for i in $(seq 1 "$n"); do echo "build u$i.o: cc u$i.c"; objs="$objs u$i.o"; done
        echo "build main.o: cc main.c"
        echo "build app: link main.o$objs"
} >"$d/build.ninja"
