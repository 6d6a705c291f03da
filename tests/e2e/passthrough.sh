#!/usr/bin/env bash
# Output passes through byte for byte, binary safe, each stream on its own,
# and lands in the build log too. stdin reaches the build.
. "$(dirname "$0")/lib.sh"
L="$T/logs"
head -c $((96 << 20)) /dev/urandom >"$T/big"
want=$(sha256sum <"$T/big" | cut -d' ' -f1)

"$BUILDTEL" run --quiet --log-dir "$L" --run-id out -- cat "$T/big" >"$T/got.out" 2>"$T/got.err"
expect_eq "stdout status" "$?" 0
expect_eq "96 MiB of random bytes on stdout arrive identical" "$(sha256sum <"$T/got.out" | cut -d' ' -f1)" "$want"
check "nothing extra on stderr" test ! -s "$T/got.err"
# (random bytes do not compress: the log stays plain; read either form)
log_of() { if [ -f "$1.gz" ]; then gzip -dc "$1.gz"; else cat "$1"; fi; }
expect_eq "the build log holds the same bytes" "$(log_of "$L/build-out.log" | sha256sum | cut -d' ' -f1)" "$want"
check "random bytes: the log stays plain" test -f "$L/build-out.log"

"$BUILDTEL" run --quiet --log-dir "$L" --run-id err -- sh -c 'cat "$1" >&2' sh "$T/big" >"$T/got2.out" 2>"$T/got2.err"
expect_eq "96 MiB of random bytes on stderr arrive identical" "$(sha256sum <"$T/got2.err" | cut -d' ' -f1)" "$want"
check "nothing on stdout" test ! -s "$T/got2.out"
rm -f "$T/big" "$T/got.out" "$T/got2.err" "$L"/build-*.log "$L"/build-*.log.gz

# Interleaved small writes keep their order within each stream.
"$BUILDTEL" run --quiet --log-dir "$L" -- sh -c 'for i in $(seq 1 2000); do echo "o$i"; echo "e$i" >&2; done' >"$T/o" 2>"$T/e"
expect_eq "stdout lines in order" "$(seq 1 2000 | sed 's/^/o/' | sha256sum)" "$(sha256sum <"$T/o")"
expect_eq "stderr lines in order" "$(seq 1 2000 | sed 's/^/e/' | sha256sum)" "$(sha256sum <"$T/e")"

# A partial last line (no newline) is passed through too.
"$BUILDTEL" run --quiet --log-dir "$L" -- printf 'no newline' >"$T/p"
expect_eq "partial last line" "$(cat "$T/p")" "no newline"

# stdin: a pipe, and a terminal (a pty: the build reads what is typed).
got=$(printf 'typed line\nsecond\n' | "$BUILDTEL" run --quiet --log-dir "$L" -- head -n1)
expect_eq "head -n1 reads a line from stdin" "$got" "typed line"
python3 - "$BUILDTEL" "$L" <<'PY'
import os, pty, sys, time, select
bt, logs = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(bt, [bt, "run", "--quiet", "--log-dir", logs, "--", "head", "-n1"])
time.sleep(0.5)
os.write(fd, b"hello from the keyboard\n")
out = b""
end = time.time() + 10
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.5)
    if r:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
_, st = os.waitpid(pid, 0)
lines = out.replace(b"\r", b"").split(b"\n")
# the terminal echoes the typed line, then head prints it
sys.exit(0 if lines.count(b"hello from the keyboard") >= 2 and os.WEXITSTATUS(st) == 0 else 1)
PY
check "head -n1 reads a line typed at a terminal" test $? -eq 0

# A reader that goes away: the build sees a broken pipe, as without buildtel.
"$BUILDTEL" run --quiet --log-dir "$L" -- sh -c 'yes' | head -n 3 >/dev/null
st=${PIPESTATUS[0]}
expect_eq "yes | head: the build dies of SIGPIPE" "$st" 141
finish
