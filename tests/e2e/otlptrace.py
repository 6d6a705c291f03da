#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Assertions on the spans the strict OTLP sink (tests/otlp-sink/sink.js)
# recorded for one `buildtel run`.
#   otlptrace.py RECORD.jsonl RUN.json BUILD-OUTPUT EXPECT.json
# EXPECT: content_type, parent (trace_id, span_id or null), tracestate,
# result, error_type, ci (name, run_id), targets (names that must be there).
import json, re, sys

fails = 0


def ok(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def attrs(lst):
    return {kv["key"]: next(iter(kv["value"].values())) for kv in lst or []}


def main():
    rec_path, run_path, out_path, exp_path = sys.argv[1:5]
    exp = json.load(open(exp_path))
    run = json.load(open(run_path))
    recs = [json.loads(l) for l in open(rec_path)]
    tr = [r for r in recs if r["path"] == "/v1/traces"]
    ok(len(tr) == 1, f"one request to /v1/traces ({len(tr)})")
    if not tr:
        return
    r = tr[0]
    ok(r["status"] == 200, "decoded strictly, answered 200: " + r.get("error", ""))
    ok(r["contentType"] == exp["content_type"], f"Content-Type {exp['content_type']} ({r['contentType']})")
    if r["status"] != 200:
        return
    rss = r["request"]["resourceSpans"]
    ok(len(rss) == 1 and len(rss[0]["scopeSpans"]) == 1, "one resource, one scope")
    res = attrs(rss[0]["resource"]["attributes"])
    ok(res.get("build.run.id") == run["run_id"], "resource build.run.id is the run's")
    ss = rss[0]["scopeSpans"][0]
    ok(ss["scope"].get("name") == "buildtel", "scope buildtel")
    spans = ss["spans"]
    roots = [s for s in spans if s["name"].startswith("buildtel run ")]
    ok(len(roots) == 1, f"one run span ({len(roots)})")
    if not roots:
        return
    rs = roots[0]
    tid = rs["traceId"]
    ok(re.fullmatch(r"[0-9a-f]{32}", tid) and tid != "0" * 32, "trace id: 32 hex, not zero")
    ok(re.fullmatch(r"[0-9a-f]{16}", rs["spanId"]) and rs["spanId"] != "0" * 16, "run span id: 16 hex, not zero")
    p = exp["parent"]
    if p:
        ok(tid == p["trace_id"], f"trace id is the caller's ({tid})")
        ok(rs.get("parentSpanId") == p["span_id"], f"run span's parent is the caller's span ({rs.get('parentSpanId')})")
        ok(rs["spanId"] != p["span_id"], "run span has an id of its own")
    else:
        ok(not rs.get("parentSpanId"), "no TRACEPARENT: the run span is a root")
    ok(rs.get("traceState", "") == (exp.get("tracestate") or ""), f"traceState kept ({rs.get('traceState')!r})")
    ok(rs["name"] == "buildtel run " + exp["argv0"], f"name {rs['name']!r}")
    ok(rs.get("kind") == 1, "kind INTERNAL")
    a = attrs(rs["attributes"])
    ok(a.get("cicd.pipeline.task.name") == exp["argv0"], "cicd.pipeline.task.name")
    ok(a.get("cicd.pipeline.task.run.id") == run["run_id"], "cicd.pipeline.task.run.id is the run id")
    ok(a.get("cicd.pipeline.task.run.result") == exp["result"],
       f"cicd.pipeline.task.run.result {a.get('cicd.pipeline.task.run.result')!r}")
    ok(a.get("error.type") == exp["error_type"], f"error.type {a.get('error.type')!r}")
    for k, v in (exp.get("ci") or {}).items():
        ok(a.get(k) == v, f"{k} = {v!r} ({a.get(k)!r})")
    if exp.get("vcs_rev"):
        ok(a.get("vcs.ref.head.revision") == exp["vcs_rev"], f"vcs.ref.head.revision {a.get('vcs.ref.head.revision')!r}")
    st = rs.get("status", {})
    want = 2 if exp["result"] != "success" else 0
    ok(st.get("code", 0) == want, f"status code {want} ({st})")
    t0, t1 = int(rs["startTimeUnixNano"]), int(rs["endTimeUnixNano"])
    ok(abs(t0 / 1e9 - run["start_epoch"]) < 0.001 and abs(t1 / 1e9 - run["end_epoch"]) < 0.001,
       "run span: the run's start and end")
    kids = [s for s in spans if s is not rs]
    ids = [s["spanId"] for s in spans]
    ok(len(set(ids)) == len(ids), f"{len(ids)} distinct span ids")
    ok(all(s["traceId"] == tid for s in spans), "every span in the one trace")
    tspans = [s for s in kids if "build.target.name" in attrs(s["attributes"])]
    steps = [s for s in kids if "build.step.name" in attrs(s["attributes"])]
    ok(all(s.get("parentSpanId") == rs["spanId"] for s in tspans), "target spans: children of the run span")
    byid = {s["spanId"]: s for s in spans}
    ok(all(s.get("parentSpanId") in byid for s in kids), "every span's parent is in the trace")
    # BuildKit steps: "[lib base 2/6] ..." under lib's target span
    tname = {s["spanId"]: attrs(s["attributes"])["build.target.name"] for s in tspans}
    under = all(re.match(r"\[(\S+)", s["name"]) and
                (tname.get(s["parentSpanId"]) == re.match(r"\[(\S+)", s["name"]).group(1).rstrip("]")
                 or (s["parentSpanId"] == rs["spanId"] and re.match(r"\[(\S+)", s["name"]).group(1) == "internal]"))
                for s in steps)
    ok(under, "step spans: under their target's span (the bake's own under the run span)")
    cached = sorted(s["name"] for s in steps if attrs(s["attributes"]).get("build.step.cached") is True)
    if "step_spans" in exp:
        ok(len(steps) == exp["step_spans"], f"{exp['step_spans']} step spans ({len(steps)})")
        ok(cached == sorted(exp["cached_steps"]), f"cached steps marked: {cached}")
    ok(all(t0 <= int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"]) <= t1 + 10**6 for s in kids),
       "children: start <= end, inside the run span")
    names = {attrs(s["attributes"]).get("build.target.name") for s in kids}
    for t in exp["targets"]:
        ok(t in names, f"target span for {t}")
    tgt = {attrs(s["attributes"]).get("build.target.name"): s for s in kids}
    for t, (steps, cached) in (exp.get("steps") or {}).items():
        ta = attrs(tgt.get(t, {}).get("attributes"))
        ok(ta.get("build.target.steps") == str(steps) and ta.get("build.target.steps.cached") == str(cached),
           f"{t}: {steps} steps, {cached} cached ({ta})")
    # the build's environment, as it printed it
    out = open(out_path).read()
    m = re.search(r"^BUILD_TP=(.*)$", out, re.M)
    got = m.group(1) if m else None
    ok(got == f"00-{tid}-{rs['spanId']}-01", f"the build's TRACEPARENT names the run span ({got})")
    m = re.search(r"^BUILD_TS=(.*)$", out, re.M)
    ok(m and m.group(1) == (exp.get("tracestate") or ""), f"the build's TRACESTATE ({m and m.group(1)!r})")


main()
print(f"{fails} failed")
sys.exit(1 if fails else 0)
