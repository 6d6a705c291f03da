#!/usr/bin/env bash
# Exactness (issue 9): the textfile's disk and memory bytes are the bytes
# the kernel reported, not the CSV's GiB/MiB rounded and multiplied back.
# The disk is a tmpfs of our own, which nothing else writes: its free space
# while the build holds a file of a known size is known to the byte.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
FS=$T/fs L=$T/logs TF=$T/tf
mkdir -p "$FS" "$TF"
mount -t tmpfs -o size=64m buildtel-e2e-exact "$FS" 2>"$T/mnt.err" || { echo "SKIP: cannot mount a tmpfs: $(cat "$T/mnt.err")"; exit 77; }
trap 'umount "$FS" 2>/dev/null; rm -rf "$T"' EXIT
statvfs() { python3 -c 'import os, sys; v = os.statvfs(sys.argv[1]); print(v.f_bavail * v.f_frsize)' "$1"; }

before=$(statvfs "$FS")
# 5 MiB and 12,345 bytes (not a whole page, nor 0.01 GiB): held for a few ticks
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id x --textfile-dir "$TF" --job x --disk-path "$FS" \
        --interval 0.1 -- sh -c "head -c 5255225 /dev/zero > '$FS/blob'; sleep 0.6" >/dev/null 2>"$T/err"
expect_eq "run: status" "$?" 0
during=$(statvfs "$FS")
check "the file took space" test "$during" -lt "$before"
val() { awk -v n="$1" '$1 ~ "^"n"[{ ]" { print $2 }' "$TF/buildtel-x.prom"; }
disk=$(val build_disk_min_available_bytes)
expect_eq "textfile: least disk available is statvfs's bytes while the file was there" \
        "$(python3 -c 'import sys; print(int(float(sys.argv[1])))' "$disk")" "$during"
check "  and not the CSV's GiB multiplied back" python3 -c "
import sys; v = float(sys.argv[1]); sys.exit(v == round(v / 2**30, 2) * 2**30)" "$disk"
check "the CSV has it at its own precision (0.01 GiB)" python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
sys.exit(min(float(r['disk_avail_gb']) for r in rows) != round(int(sys.argv[2]) / 2**30, 2))" \
        "$L/resources-x.csv" "$during"
mem=$(val build_memory_peak_used_bytes)
check "textfile: memory bytes are meminfo's kB, not whole MiB of the CSV" python3 -c "
import json, sys
v = float(sys.argv[1]); s = json.load(open(sys.argv[2]))
peak = s['memory']['peak_used_mb']['value']
sys.exit(not (v % 1024 == 0 and abs(v / 2**20 - peak) <= 0.5))" "$mem" "$L/resources-x.summary.json"
finish
