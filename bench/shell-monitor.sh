#!/usr/bin/env bash
# What seed-style shell monitors do per tick: fork df, pgrep and tail|grep.
# Runs N ticks back to back (no sleep) so that only the work is timed.
n=${1:-200}
log=${2:-/dev/null}
for ((i = 0; i < n; i++)); do
        df -P . | tail -n 1 >/dev/null
        pgrep -c -x 'cc1plus|cc1|clang|rustc|ld' >/dev/null
        tail -n 50 "$log" | grep -E '^\[[0-9]+/[0-9]+\]' | tail -n 1 >/dev/null
        read -r load _ </proc/loadavg
        free -m >/dev/null
done
