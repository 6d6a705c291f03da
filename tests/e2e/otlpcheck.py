#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Assertions on what the strict OTLP sink (tests/otlp-sink/sink.js) recorded
# against the files buildtel wrote for the same run.
#   otlpcheck.py data RECORD.jsonl CSV RUN.json EXPECT.json
#   otlpcheck.py count RECORD.jsonl [STATUS]    number of requests (with that status)
#   otlpcheck.py same LIVE.jsonl EXPORT.jsonl [NAME...]
#                                               an export sent what the live run sent
import csv, json, sys

fails = 0


def ok(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def records(path, signal="/v1/metrics"):
    """The requests to one signal's path (the spans have tests of their own:
    otlp-trace.sh)."""
    try:
        return [r for r in map(json.loads, open(path)) if r["path"] == signal]
    except FileNotFoundError:
        return []


def run_spans(path):
    """The (trace id, span id) of the run spans sent."""
    ids = set()
    for r in records(path, "/v1/traces"):
        for rs in (r.get("request") or {}).get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for sp in ss.get("spans", []):
                    if sp["name"].startswith("buildtel run "):
                        ids.add((sp["traceId"], sp["spanId"]))
    return ids


def run_span_ids(path):
    return {s for _, s in run_spans(path)}


def attrs(lst):
    out = {}
    for kv in lst or []:
        v = kv["value"]
        out[kv["key"]] = next(iter(v.values())) if v else None
    return out


def ms_ns(epoch):
    # buildtel sends whole milliseconds, as the CSV keeps them
    return str(round(float(epoch) * 1000) * 1000000)


def as_csv(v, scale, like):
    """v in the CSV column's unit, written as the CSV writes it: the decimals
    of `like` (the CSV's text), no minus sign on a zero."""
    dec = len(like.split(".")[1]) if "." in like else 0
    t = "%.*f" % (dec, float(v) / scale)
    return t[1:] if t.startswith("-") and not t.strip("-0.") else t


def data(rec_path, csv_path, run_path, expect_path, min_requests=2):
    recs = records(rec_path)
    exp = json.load(open(expect_path))
    run = json.load(open(run_path))
    rows = list(csv.DictReader(open(csv_path, newline="")))
    ok(len(recs) >= min_requests, f"at least {min_requests} export(s) ({len(recs)})")
    ok(all(r["status"] == 200 for r in recs), "every request decoded and answered 200: " +
       "; ".join(r.get("error", "") for r in recs if r["status"] != 200))
    ok(all(r["path"] == "/v1/metrics" for r in recs), "POST to /v1/metrics")
    ok(all(r["contentType"] == exp["content_type"] for r in recs), f"Content-Type {exp['content_type']}")
    ok(all(r["contentEncoding"] == exp["encoding"] for r in recs), f"Content-Encoding '{exp['encoding']}'")
    for k, v in exp["headers"].items():
        ok(all(r["headers"].get(k) == v for r in recs), f"header {k} sent, percent-decoded")
    metrics = {}  # name -> list of (metric, request index)
    for i, r in enumerate(recs):
        rms = r["request"]["resourceMetrics"]
        ok(len(rms) == 1, "one resource")
        res = attrs(rms[0]["resource"].get("attributes"))
        for k, v in exp["resource"].items():
            ok(res.get(k) == v, f"request {i}: resource {k} = {v!r} (got {res.get(k)!r})")
        ok(res.get("build.run.id") == run["run_id"], f"request {i}: resource build.run.id")
        sm = rms[0]["scopeMetrics"][0]
        ok(sm["scope"].get("name") == "buildtel", "scope name buildtel")
        for m in sm["metrics"]:
            metrics.setdefault(m["name"], []).append((m, i))

    tp = exp.get("trace")
    if tp:
        # the exemplars name the run span, the child of the TRACEPARENT
        runs = run_span_ids(rec_path)
        ok(len(runs) == 1 and tp["span_id"] not in runs, f"one run span, not the caller's: {runs}")
        tp = dict(tp, span_id=next(iter(runs), tp["span_id"]))
    npoints = 0
    for name, ms in metrics.items():
        for m, i in ms:
            body = m.get("gauge") or m.get("sum")
            for dp in body["dataPoints"]:
                npoints += 1
                a = attrs(dp.get("attributes"))
                if tp:
                    ex = dp.get("exemplars", [])
                    good = (len(ex) == 1 and ex[0].get("traceId") == tp["trace_id"] and
                            ex[0].get("spanId") == tp["span_id"] and
                            ex[0].get("timeUnixNano") == dp["timeUnixNano"] and
                            a.get("trace_id") == tp["trace_id"] and a.get("span_id") == tp["span_id"])
                    if not good:
                        ok(False, f"{name}: exemplar and attributes carry the TRACEPARENT ids: {dp}")
                        return
    if tp:
        ok(npoints > 0, f"all {npoints} data points carry the trace id and the run span's id as an exemplar and attributes")

    # Gauges: one point per CSV row, same time, and the value as read: in
    # the column's unit and at its precision it is the CSV's text; bytes are
    # whole bytes (exact, not the CSV's rounded MiB or GiB multiplied back).
    for name, col, scale, unit in exp["gauges"]:
        pts = [dp for m, i in metrics.get(name, []) for dp in m["gauge"]["dataPoints"]]
        units = {m["unit"] for m, i in metrics.get(name, [])}
        ok(units == {unit}, f"{name}: unit {unit} ({units})")
        want = [(ms_ns(r["epoch"]), r[col]) for r in rows if r[col] != ""]
        got = [(dp["timeUnixNano"], as_csv(dp["asDouble"], scale, w))
               for dp, (t, w) in zip(pts, want)]
        first = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
        ok(len(pts) == len(want) and got == want,
           f"{name}: {len(want)} points, times and values of the CSV's {col}" +
           ("" if len(pts) == len(want) and got == want else
            f"\n  {len(pts)} points sent, {len(want)} rows; from #{first}:"
            f"\n  got  {[(dp['timeUnixNano'], dp['asDouble']) for dp in pts[first:first + 4]]}"
            f"\n  want {want[first:first + 4]}"))
        if exp.get("from_files"):
            # sent again from the CSV: its values are all there is
            exact = [dp["asDouble"] for dp in pts] == [float(v) * scale for t, v in want]
            ok(exact, f"{name}: the CSV's values x {scale}")
        elif unit == "By":
            frac = [dp["asDouble"] for dp in pts if not float(dp["asDouble"]).is_integer()]
            ok(not frac, f"{name}: whole bytes, as read ({frac[:4]})")
    # Sums: the final request holds the last row's value since the start.
    last = rows[-1]
    final = len(recs) - 1
    for name, col, scale, unit, akey, aval in exp["sums"]:
        ms = [m for m, i in metrics.get(name, []) if i == final]
        ok(len(ms) == 1 and ms[0]["unit"] == unit, f"{name}: in the final export, unit {unit}")
        if len(ms) != 1:
            continue
        s = ms[0]["sum"]
        ok(s.get("aggregationTemporality") == 2 and s.get("isMonotonic") is True,
           f"{name}: cumulative, monotonic")
        dps = [dp for dp in s["dataPoints"] if attrs(dp.get("attributes")).get(akey) == aval]
        ok(len(dps) == 1, f"{name}{{{akey}={aval}}}: one point")
        if dps and last[col] != "":
            dp = dps[0]
            ok(as_csv(dp["asDouble"], scale, last[col]) == last[col],
               f"{name}{{{akey}={aval}}} = last {col} x {scale}, before the CSV's rounding ({dp['asDouble']})")
            ok(dp["startTimeUnixNano"] == ms_ns(run["start_epoch"]), f"{name}: start time is the run's start")
            ok(dp["timeUnixNano"] == ms_ns(last["epoch"]), f"{name}: time is the last sample's")
    # Totals and targets: final request only.
    for name, unit, value, want_attrs in exp["finals"]:
        ms = [m for m, i in metrics.get(name, []) if i == final]
        ok(len(ms) == 1 and ms[0]["unit"] == unit, f"{name}: in the final export, unit {unit}")
        if len(ms) != 1:
            continue
        dps = [dp for dp in ms[0]["gauge"]["dataPoints"]
               if all(attrs(dp.get("attributes")).get(k) == v for k, v in want_attrs.items())]
        ok(len(dps) == 1, f"{name}{want_attrs}: one point")
        if not dps:
            continue
        got = dps[0].get("asDouble", dps[0].get("asInt"))
        if value == "duration":
            value = run["end_epoch"] - run["start_epoch"]
        ok(str(got) == str(value) if isinstance(value, str) else abs(float(got) - value) < 1e-9,
           f"{name}{want_attrs} = {value!r} (got {got!r})")
        ok(dps[0]["timeUnixNano"] == ms_ns(run["end_epoch"]), f"{name}: time is the run's end")
    for name in exp.get("absent", []):
        ok(name not in metrics, f"{name} not sent")


def canon(v, ids=None):
    """v as text; with ids (trace id, span id: the run span's), those ids
    read RUN-TRACE and RUN-SPAN: without a TRACEPARENT a live run and its
    export are two traces, each with the data points naming its own span."""
    t = json.dumps(v, sort_keys=True)
    if ids:
        t = t.replace(ids[0], "RUN-TRACE").replace(ids[1], "RUN-SPAN")
    return t


def summed(recs, ids=None):
    """Every point of a record set: gauges from all requests (a live run
    spreads its samples over its exports), sums from the final request
    (each export carries them as of its latest sample). Returns
    {(name, unit, description, kind, temporality, monotonic): sorted points}
    and the resource of the final request."""
    out = {}
    for i, r in enumerate(recs):
        rms = r["request"]["resourceMetrics"][0]
        for m in rms["scopeMetrics"][0]["metrics"]:
            kind = "gauge" if "gauge" in m else "sum"
            if kind == "sum" and i != len(recs) - 1:
                continue
            body = m[kind]
            key = (m["name"], m.get("unit"), m.get("description"), kind,
                   body.get("aggregationTemporality"), body.get("isMonotonic"))
            out.setdefault(key, []).extend(canon(dp, ids) for dp in body["dataPoints"])
    res = attrs(recs[-1]["request"]["resourceMetrics"][0]["resource"].get("attributes")) if recs else {}
    return {k: sorted(v) for k, v in out.items()}, res


def same(live_path, exp_path, must):
    """The export of a stored run sends what the live run sent: every
    metric, unit, point, value, time, attribute and exemplar, and the same
    resource; must names metrics that have to be among them."""
    live, exp = records(live_path), records(exp_path)
    ok(live and all(r["status"] == 200 for r in live), f"live run: {len(live)} request(s), all 200")
    ok(exp and all(r["status"] == 200 for r in exp), f"export: {len(exp)} request(s), all 200")
    if not live or not exp:
        return
    la, lb = run_spans(live_path), run_spans(exp_path)
    ok(len(la) == 1 and len(lb) == 1, f"one run span each: {la} {lb}")
    a, ra = summed(live, next(iter(la), None))
    b, rb = summed(exp, next(iter(lb), None))
    ok(ra == rb, "same resource" + ("" if ra == rb else f"\n  live   {ra}\n  export {rb}"))
    ok(sorted(a) == sorted(b), f"same {len(a)} metrics (names, units, descriptions, kinds)" +
       ("" if sorted(a) == sorted(b) else
        f"\n  live only   {sorted(set(a) - set(b))}\n  export only {sorted(set(b) - set(a))}"))
    npts = 0
    for k in sorted(set(a) & set(b)):
        npts += len(a[k])
        if a[k] != b[k]:
            ok(False, f"{k[0]}: same points\n  live   {a[k][:3]}\n  export {b[k][:3]}")
    ok(True, f"{npts} points compared")
    names = {k[0] for k in a}
    for n in must:
        ok(n in names, f"{n} among them")


def main():
    if sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3], sys.argv[4:])
        print(f"{fails} failed")
        sys.exit(1 if fails else 0)
    if sys.argv[1] in ("data", "data-any"):
        data(*sys.argv[2:6], min_requests=2 if sys.argv[1] == "data" else 1)
        print(f"{fails} failed")
        sys.exit(1 if fails else 0)
    if sys.argv[1] == "count":
        recs = records(sys.argv[2])
        if len(sys.argv) > 3:
            recs = [r for r in recs if str(r["status"]) == sys.argv[3]]
        print(len(recs))
        return
    if sys.argv[1] == "gap":  # seconds between request 1 and 2
        recs = records(sys.argv[2])
        print(f"{recs[1]['t'] - recs[0]['t']:.3f}" if len(recs) > 1 else "-1")
        return
    sys.exit(2)


if __name__ == "__main__":
    main()
