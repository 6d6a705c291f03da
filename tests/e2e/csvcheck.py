#!/usr/bin/env python3
"""Strict checks of buildtel's files for the end-to-end tests.

  csvcheck.py strict FILE          RFC 4180: CRLF record ends, quoting, equal field counts,
                                   the seed's columns first and in order
  csvcheck.py stat FILE COL FN     FN in max,min,first,last,count,rise (max - first)
  csvcheck.py json-equal A B       two JSON files parse and are byte-identical (a
                                   summary whole, its "baseline" included: a replay
                                   derives it again from the runs before it)
  csvcheck.py json-get FILE PATH   print a value, PATH like memory.peak_used.value
"""
import csv, io, json, sys

SEED = ("epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,"
        "swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context").split(",")


def strict(path):
    data = open(path, "rb").read()
    if not data.endswith(b"\r\n"):
        sys.exit("last record does not end in CRLF")
    # Every LF must belong to a CRLF outside quotes or sit inside a quoted field.
    inq = False
    prev = b""
    for i in range(len(data)):
        c = data[i:i + 1]
        if c == b'"':
            inq = not inq
        elif c == b"\n" and not inq and prev != b"\r":
            sys.exit(f"bare LF at byte {i}")
        prev = c
    text = data.decode("utf-8", errors="surrogateescape")
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    if rows[0][:len(SEED)] != SEED:
        sys.exit(f"header {rows[0]!r} does not start with the seed's columns")
    n = len(rows[0])
    for i, r in enumerate(rows[1:], 2):
        if len(r) != n:
            sys.exit(f"record {i} has {len(r)} fields, header has {n}")
        float(r[0])
    print(f"{len(rows) - 1} rows, {n} columns")


def column(path, col):
    text = open(path, "rb").read().decode("utf-8", errors="surrogateescape")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return [r[col] for r in rows]


def stat(path, col, fn):
    vals = column(path, col)
    if fn == "count":
        print(len(vals)); return
    if fn == "last-str":
        print(vals[-1]); return
    nums = [float(v) for v in vals if v != ""]
    if fn == "max": print(max(nums))
    elif fn == "min": print(min(nums))
    elif fn == "first": print(nums[0])
    elif fn == "last": print(nums[-1])
    elif fn == "rise": print(max(nums) - nums[0])
    else: sys.exit("unknown fn " + fn)


def json_equal(a, b):
    da, db = open(a, "rb").read(), open(b, "rb").read()
    json.loads(da); json.loads(db)
    if da != db:
        la, lb = da.decode(errors="replace").splitlines(), db.decode(errors="replace").splitlines()
        i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        sys.exit(f"JSON differs at line {i + 1}:\n  {la[i] if i < len(la) else '(end)'}\n"
                 f"  {lb[i] if i < len(lb) else '(end)'}")


def json_get(path, dotted):
    v = json.load(open(path))
    for k in dotted.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    print(v if not isinstance(v, (dict, list)) else json.dumps(v))


cmd = sys.argv[1]
if cmd == "strict": strict(sys.argv[2])
elif cmd == "stat": stat(*sys.argv[2:5])
elif cmd == "json-equal": json_equal(*sys.argv[2:4])
elif cmd == "json-get": json_get(*sys.argv[2:4])
else: sys.exit("unknown command")
