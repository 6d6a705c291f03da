#!/usr/bin/env python3
"""A strict reader of buildtel's Chrome trace (Trace Event Format).

tracecheck.py FILE: checks every event's fields and types per phase,
non-negative times, slices nesting per lane (no partial overlap within one
pid/tid), numeric counters, metadata naming every process and lane.
Prints the counts as one JSON object ({"X:target": 2, "C": 40, ...,
"counters": [...], "instants": [...]}) and exits 1 with the problems."""
import json
import math
import sys

COMMON = {"name": str, "ph": str, "ts": int, "pid": int}
PER_PH = {
    "X": {"tid": int, "dur": int, "cat": str, "args": dict},
    "C": {"args": dict},  # a process's counter: no tid
    "i": {"tid": int, "s": str, "args": dict},
    "M": {"tid": int, "args": dict},
}
META = {"process_name": ("name", str), "thread_name": ("name", str),
        "process_sort_index": ("sort_index", int), "thread_sort_index": ("sort_index", int)}


# Counters whose series add up (the build's anon + file; the host's used +
# available is about its total): the only ones allowed several series.
STACKABLE = {"build memory by kind (MiB)", "host memory (MiB)"}


def typed(v, t):
    return isinstance(v, t) and not isinstance(v, bool)


def bad_constant(c):
    raise ValueError("not JSON: " + c)


def check(doc, errs):
    if not isinstance(doc, dict) or set(doc) != {"traceEvents", "displayTimeUnit"}:
        errs.append("top level: want exactly traceEvents and displayTimeUnit")
        return {}
    if doc["displayTimeUnit"] != "ms":
        errs.append("displayTimeUnit is not ms")
    counts, slices, named_p, named_t, used_p = {}, {}, set(), set(), set()
    counters, instants, step_lane_target = set(), [], {}
    for n, ev in enumerate(doc["traceEvents"]):
        where = "event %d" % n
        if not isinstance(ev, dict) or ev.get("ph") not in PER_PH:
            errs.append("%s: not an event of a known phase: %r" % (where, ev))
            continue
        want = dict(COMMON, **PER_PH[ev["ph"]])
        if set(ev) != set(want):
            errs.append("%s: keys %s, want %s" % (where, sorted(ev), sorted(want)))
            continue
        for k, t in want.items():
            if not typed(ev[k], t):
                errs.append("%s: %s is not %s" % (where, k, t.__name__))
        if ev["ts"] < 0:
            errs.append("%s: negative ts" % where)
        ph, args = ev["ph"], ev["args"]
        key = ph + (":" + ev["cat"] if ph == "X" else "")
        counts[key] = counts.get(key, 0) + 1
        if ph == "X":
            if ev["dur"] < 0:
                errs.append("%s: negative dur" % where)
            slices.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], ev["dur"], ev["name"]))
            used_p.add(ev["pid"])
            if ev["cat"] == "step":
                if args.get("cached") is True:
                    counts["X:step:cached"] = counts.get("X:step:cached", 0) + 1
                # a target's steps have lanes of their own
                lt = step_lane_target.setdefault((ev["pid"], ev["tid"]), args.get("target"))
                if lt != args.get("target"):
                    errs.append("%s: step of %r on a lane of %r" % (where, args.get("target"), lt))
        elif ph == "C":
            used_p.add(ev["pid"])
            counters.add(ev["name"])
            if not args:
                errs.append("%s: a counter with no values" % where)
            for k, v in args.items():
                if not (typed(v, int) or typed(v, float)) or not math.isfinite(v):
                    errs.append("%s: counter %s=%r is not a finite number" % (where, k, v))
            # The Trace Event Format draws the series of one counter event
            # as a stacked area chart: series share an event only where
            # their sum means something.
            if len(args) > 1 and ev["name"] not in STACKABLE:
                errs.append("%s: counter %r stacks %s" % (where, ev["name"], sorted(args)))
        elif ph == "i":
            if ev["s"] not in ("g", "p", "t"):
                errs.append("%s: instant scope %r" % (where, ev["s"]))
            instants.append(ev["name"])
        else:
            if ev["name"] not in META or set(args) != {META[ev["name"]][0]} or \
                    not typed(args[META[ev["name"]][0]], META[ev["name"]][1]):
                errs.append("%s: bad metadata %r" % (where, ev))
            elif ev["name"] == "process_name":
                named_p.add(ev["pid"])
            elif ev["name"] == "thread_name":
                named_t.add((ev["pid"], ev["tid"]))
    for lane, ss in slices.items():
        if lane not in named_t:
            errs.append("lane %r has slices but no thread_name" % (lane,))
        stack = []
        for ts, dur, name in sorted(ss, key=lambda s: (s[0], -s[1])):
            while stack and ts >= stack[-1][1]:
                stack.pop()
            if stack and ts + dur > stack[-1][1]:
                errs.append("lane %r: %r [%d, %d] overlaps %r partly" %
                            (lane, name, ts, ts + dur, stack[-1][2]))
            stack.append((ts, ts + dur, name))
    for p in used_p - named_p:
        errs.append("pid %d has events but no process_name" % p)
    counts["counters"] = sorted(counters)
    counts["instants"] = instants
    counts["lanes"] = {"%d" % p: len([1 for (q, _) in slices if q == p]) for p in used_p}
    return counts


def slice_set(doc):
    """The X slices as facts, lanes aside: category, name, start, duration
    and args, sorted: two traces of one run compare equal on them."""
    out = []
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X":
            out.append([ev["cat"], ev["name"], ev["ts"], ev["dur"],
                        json.dumps(ev["args"], sort_keys=True)])
    return sorted(out)


def main():
    errs = []
    slices_only = sys.argv[1] == "--slices"
    with open(sys.argv[2 if slices_only else 1], "rb") as f:
        doc = json.loads(f.read().decode("utf-8"), parse_constant=bad_constant)
    if slices_only:
        for s in slice_set(doc):
            print(json.dumps(s))
        return
    counts = check(doc, errs)
    print(json.dumps(counts, sort_keys=True))
    for e in errs[:20]:
        print("tracecheck: " + e, file=sys.stderr)
    sys.exit(1 if errs else 0)


if __name__ == "__main__":
    main()
