#!/usr/bin/env bash
# When our stdout or stderr is a pipe or /dev/null, the build's output goes
# on by the kernel (tee(2) to the pipe, splice(2) into the build log) and the
# parse reads it back from the log; to a terminal or a file it is read and
# written. Both ways: the same bytes everywhere, the same figures, and the
# same answers to a reader that goes away, a disk that fills, a stdout that
# does not block.
. "$(dirname "$0")/lib.sh"
L="$T/logs"
sha() { sha256sum | cut -d' ' -f1; }
log_of() { if [ -f "$1.gz" ]; then gzip -dc "$1.gz"; else cat "$1"; fi; }

head -c $((48 << 20)) /dev/urandom >"$T/rand"
want=$(sha <"$T/rand")
got=$("$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id pipe -- cat "$T/rand" | sha)
expect_eq "stdout a pipe: 48 MiB of random bytes arrive identical" "$got" "$want"
expect_eq "stdout a pipe: the build log holds them" "$(log_of "$L/build-pipe.log" | sha)" "$want"
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id null -- cat "$T/rand" >/dev/null
expect_eq "stdout /dev/null: the build log holds them" "$(log_of "$L/build-null.log" | sha)" "$want"
got=$("$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id err -- sh -c 'cat "$1" >&2' sh "$T/rand" 2>&1 >/dev/null | sha)
expect_eq "stderr a pipe: the bytes arrive identical" "$got" "$want"
expect_eq "stderr a pipe: the build log holds them" "$(log_of "$L/build-err.log" | sha)" "$want"
rm -f "$L"/build-*

# Our output pipe grown to the child's 1 MiB (fewer waits on the reader),
# never shrunk: the reader asks its pipe's size once it has every byte.
pipesz='import fcntl, sys
n = sum(len(b) for b in iter(lambda: sys.stdin.buffer.read(1 << 16), b""))
print(n, fcntl.fcntl(0, 1032))'  # F_GETPIPE_SZ
got=$("$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id wide -- cat "$T/rand" | python3 -c "$pipesz")
expect_eq "stdout a pipe: every byte, through a pipe grown to 1 MiB" "$got" "$((48 << 20)) 1048576"
got=$("$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id wide2 -- sh -c 'echo hi >&2' 2>&1 >/dev/null |
        python3 -c "$pipesz")
expect_eq "stderr a pipe: grown to 1 MiB too" "$got" "3 1048576"
got=$(python3 - "$BUILDTEL" "$L" "$T/fifo" <<'PY'
import fcntl, os, subprocess, sys
bt, logs, fifo = sys.argv[1:]
os.mkfifo(fifo)
r = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
try:  # F_SETPIPE_SZ: a pipe already larger than buildtel's 1 MiB
    fcntl.fcntl(r, 1031, 4 << 20)
except PermissionError:  # past fs.pipe-max-size: raised for this one call
    mx = "/proc/sys/fs/pipe-max-size"
    old = open(mx).read()
    open(mx, "w").write(str(4 << 20))
    try:
        fcntl.fcntl(r, 1031, 4 << 20)
    finally:
        open(mx, "w").write(old)
with open(fifo, "wb") as w:
    subprocess.run([bt, "run", "--quiet", "--no-db", "--log-dir", logs, "--run-id", "big",
                    "--", "echo", "hi"], stdout=w, check=True)
print(os.read(r, 100).decode().strip(), fcntl.fcntl(r, 1032))  # F_GETPIPE_SZ
PY
)
expect_eq "a pipe already larger (4 MiB) is left so" "$got" "hi $((4 << 20))"
rm -f "$L"/build-* "$T/fifo"

# Both streams into one pipe, interleaved: each line whole and in order.
"$BUILDTEL" run --quiet --no-db --log-dir "$L" --run-id both -- \
        sh -c 'for i in $(seq 1 3000); do echo "o$i"; echo "e$i" >&2; done' 2>&1 | cat >"$T/both"
expect_eq "2>&1 | cat: stdout lines in order" "$(grep '^o' "$T/both" | sha)" "$(seq 1 3000 | sed 's/^/o/' | sha)"
expect_eq "2>&1 | cat: stderr lines in order" "$(grep '^e' "$T/both" | sha)" "$(seq 1 3000 | sed 's/^/e/' | sha)"
expect_eq "2>&1 | cat: the log holds all 6000 lines" "$(log_of "$L/build-both.log" | wc -l)" 6000

# The same figures whichever way the bytes went: a BuildKit bake log of
# our own (tests/fixtures), 40 copies, to a file, to /dev/null, to a pipe.
F="$HERE/../fixtures/buildmetrics/bake-compile.log"
for i in $(seq 40); do cat "$F"; done >"$T/text"
"$BUILDTEL" run --quiet --no-db --no-report --log-dir "$L" --run-id file -- cat "$T/text" >"$T/text.out"
"$BUILDTEL" run --quiet --no-db --no-report --log-dir "$L" --run-id null2 -- cat "$T/text" >/dev/null
"$BUILDTEL" run --quiet --no-db --no-report --log-dir "$L" --run-id pipe2 -- cat "$T/text" | cat >/dev/null
cmp -s "$T/text.out" "$T/text"
check "to a file: the bytes arrive identical" test $? -eq 0
figures() { # the targets' steps, cached and cache counts; the last sample's stage and context
        python3 - "$L" "$1" <<'PY'
import csv, json, sys
d, rid = sys.argv[1], sys.argv[2]
t = json.load(open(f"{d}/resources-{rid}.targets.json"))
rows = list(csv.DictReader(open(f"{d}/resources-{rid}.csv")))
tg = [(x["name"], x["steps"], x["cached"], x.get("sccache"), x.get("ccache")) for x in t["targets"]]
print(json.dumps([tg, rows[-1]["stage"], rows[-1]["context"]], sort_keys=True))
PY
}
ref=$(figures file)
check "the file run has two targets and a context" python3 -c '
import json, sys
tg, stage, ctx = json.loads(sys.argv[1])
sys.exit(0 if len(tg) >= 2 and stage and ctx else 1)' "$ref"
expect_eq "/dev/null: the same targets, steps, cached, stage and context" "$(figures null2)" "$ref"
expect_eq "a pipe: the same targets, steps, cached, stage and context" "$(figures pipe2)" "$ref"
rm -f "$L"/build-* "$T/text.out"

# A stdout left non-blocking by whoever made it (some CI runners): the
# build's output waits for the slow reader, nothing is lost.
python3 - "$BUILDTEL" "$L" "$T/rand" "$want" <<'PY'
import fcntl, hashlib, os, subprocess, sys, time
bt, logs, src, want = sys.argv[1:5]
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen([bt, "run", "--quiet", "--no-db", "--log-dir", logs, "--", "cat", src],
                     stdout=w)
os.close(w)
h = hashlib.sha256()
n = 0
while True:
    b = os.read(r, 65536)
    if not b:
        break
    h.update(b)
    n += len(b)
    if n < (4 << 20):
        time.sleep(0.002)  # slow at first: the pipe fills
p.wait()
sys.exit(0 if p.returncode == 0 and h.hexdigest() == want else 1)
PY
check "a non-blocking stdout pipe with a slow reader: every byte, in order" test $? -eq 0

# The reader goes away: the build dies of SIGPIPE, as without buildtel.
"$BUILDTEL" run --quiet --no-db --log-dir "$L" -- cat "$T/rand" | head -c 100 >/dev/null
expect_eq "| head -c 100: the build dies of SIGPIPE" "${PIPESTATUS[0]}" 141

# A full disk under the log: the output reaches the pipe whole, the build's
# status is its own, and buildtel says the log failed.
if mkdir -p "$T/full" && mount -t tmpfs -o size=1m tmpfs "$T/full" 2>/dev/null; then
        got=$("$BUILDTEL" run --no-db --no-report --log-dir "$T/full/logs" --run-id f -- \
                cat "$T/rand" 2>"$T/full.err" | sha)
        expect_eq "a full log disk: stdout a pipe still gets every byte" "$got" "$want"
        check "a full log disk: the log is cut short" \
                test "$(stat -c %s "$T/full/logs/build-f.log" 2>/dev/null || echo 0)" -lt $((48 << 20))
        check "a full log disk: buildtel says so" grep -qi 'build log' "$T/full.err"
        umount "$T/full"
else
        echo "# no tmpfs to fill: the full-disk case is not run"
fi
finish
