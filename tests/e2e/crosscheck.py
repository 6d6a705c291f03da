#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# One run, every output: the per-target figures (duration, steps, cached,
# success, compiler-cache counts) and the run's totals (duration, outcome,
# steps, cached) must be the same values in the Prometheus textfile, in
# `buildtel inspect --json`, in the OTLP body the strict sink decoded, and
# in the run's targets.json and summary.json. Values are compared exactly
# (floats as parsed, no tolerance) except summary.json's duration_s, which
# that file has always kept in milliseconds.
#   crosscheck.py PROM INSPECT.json OTLP.jsonl SUMMARY.json TARGETS.json
import json, re, sys

from otlpcheck import attrs, ok, records
import otlpcheck


def unescape(s):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def prom(path):
    """target -> {figure: value}, and the invocation figures."""
    per, inv = {}, {}
    names = {"duration_seconds": "duration", "steps_total": "steps", "steps_cached": "cached",
             "target_success": "success", "sccache_hits": "sccache_hits",
             "sccache_misses": "sccache_misses", "ccache_hits": "ccache_hits",
             "ccache_misses": "ccache_misses", "layer_cache_hit_ratio": "ratio"}
    for line in open(path, encoding="utf-8"):
        m = re.match(r'^build_(\w+)\{(.*)\} (\S+)$', line.rstrip("\n"))
        if not m:
            continue
        labels = {k: unescape(v) for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2))}
        v = float(m.group(3))
        if "target" in labels and m.group(1) in names:
            per.setdefault(labels["target"], {})[names[m.group(1)]] = v
        elif "target" not in labels:
            inv[m.group(1)] = v
    return per, inv


def otlp(path):
    recs = records(path)
    ok(len(recs) >= 1 and all(r["status"] == 200 for r in recs), f"the sink took {len(recs)} request(s), all 200")
    final = recs[-1]["request"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
    per, tot = {}, {}
    names = {"build.target.duration": "duration", "build.target.steps": "steps",
             "build.target.steps.cached": "cached", "build.target.success": "success"}
    for m in final:
        for dp in (m.get("gauge") or m.get("sum"))["dataPoints"]:
            a = attrs(dp.get("attributes"))
            v = dp["asDouble"] if "asDouble" in dp else int(dp["asInt"])
            if m["name"] in names:
                per.setdefault(a["target"], {})[names[m["name"]]] = v
            elif m["name"].startswith("build.target.compiler_cache.") and not m["name"].endswith("ratio"):
                k = a["build.compiler_cache"] + "_" + m["name"].rsplit(".", 1)[1]
                per.setdefault(a["target"], {})[k] = v
            elif not m["name"].startswith("build.target."):
                tot[m["name"]] = (v, a)
    return per, tot


def cc(t, what):
    """the compiler cache of a target as the history's cc_hits column keeps it"""
    s = t.get("sccache_" + what)
    return s if s is not None else t.get("ccache_" + what)


def main(prom_path, inspect_path, otlp_path, summary_path, targets_path):
    p_t, p_inv = prom(prom_path)
    ins = json.load(open(inspect_path))
    o_t, o_tot = otlp(otlp_path)
    summ = json.load(open(summary_path))
    try:
        tj = json.load(open(targets_path))
    except FileNotFoundError:
        tj = {"targets": [], "run": {}}

    i_t = {t["name"]: {"duration": t["duration_s"], "steps": t["steps"], "cached": t["cached"],
                       "ratio": t["cached_ratio"],
                       "success": t["success"], "cc_hits": t["cc_hits"], "cc_misses": t["cc_misses"]}
           for t in ins["targets"]}
    j_t = {}
    for t in tj["targets"]:
        d = {"duration": t.get("duration_s"), "steps": t.get("steps"), "cached": t.get("cached"),
             "success": t.get("success")}
        for tool in ("sccache", "ccache"):
            for what in ("hits", "misses"):
                d[tool + "_" + what] = t[tool][what] if t.get(tool) else None
        j_t[t["name"]] = d

    names = set(j_t)
    ok(len(names) == len(tj["targets"]), f"targets.json: {len(names)} distinct targets")
    for src, d in (("textfile", p_t), ("inspect", i_t), ("OTLP", o_t)):
        ok(set(d) <= names, f"{src}: no target that targets.json lacks ({sorted(set(d) - names)})")
    ok(set(i_t) == names, f"inspect: the same targets ({sorted(i_t)} vs {sorted(names)})")

    figures = ["duration", "steps", "cached", "success", "sccache_hits", "sccache_misses",
               "ccache_hits", "ccache_misses"]
    for n in sorted(names):
        want = j_t[n]
        succ = want["success"]
        # targets.json: true / false / null; the others: 1 / 0 / absent
        want_num = dict(want, success=None if succ is None else int(succ))
        for src, d in (("textfile", p_t), ("OTLP", o_t)):
            got = {f: d.get(n, {}).get(f) for f in figures}
            bad = {f: (got[f], want_num[f]) for f in figures if got[f] != want_num[f]}
            ok(not bad, f"{src} {n!r}: {', '.join(f'{f}={want_num[f]!r}' for f in figures[:4])}"
               + ("" if not bad else f"; differs (got, want): {bad}"))
        # the layer-cache ratio: textfile and inspect, from the same counts
        ratio = p_t.get(n, {}).get("ratio")
        ok(ratio == i_t.get(n, {}).get("ratio") and
           ratio == (want["cached"] / want["steps"] if want["steps"] else None),
           f"layer-cache ratio {n!r}: textfile {ratio!r}, inspect {i_t.get(n, {}).get('ratio')!r}")
        got = i_t.get(n, {})
        wi = {"duration": want_num["duration"], "steps": want_num["steps"], "cached": want_num["cached"],
              "ratio": ratio,
              "success": want_num["success"], "cc_hits": cc(want, "hits"), "cc_misses": cc(want, "misses")}
        bad = {f: (got.get(f), wi[f]) for f in wi if got.get(f) != wi[f]}
        ok(not bad, f"inspect {n!r}: the same" + ("" if not bad else f"; differs (got, want): {bad}"))

    # The run's totals.
    run = tj.get("run", {})
    dur = run.get("duration_s")
    ok(dur is not None and dur == p_inv.get("invocation_duration_seconds") == ins["duration_s"]
       == o_tot.get("build.duration", (None,))[0],
       f"run duration {dur!r}: textfile {p_inv.get('invocation_duration_seconds')!r}, inspect "
       f"{ins['duration_s']!r}, OTLP {o_tot.get('build.duration', (None,))[0]!r}")
    ok(dur is not None and abs(summ["run"]["duration_s"] - dur) <= 0.0005,
       f"summary.json duration_s {summ['run']['duration_s']} is it in milliseconds")
    code = run.get("exit_code")
    oattr = o_tot.get("build.duration", (None, {}))[1]
    ok(code == summ["run"]["exit_code"] == ins["exit_code"] and str(code) == oattr.get("build.exit_code"),
       f"exit code {code!r}: summary {summ['run']['exit_code']!r}, inspect {ins['exit_code']!r}, "
       f"OTLP {oattr.get('build.exit_code')!r}")
    outcome = run.get("outcome")
    ok(oattr.get("cicd.pipeline.result") == outcome,
       f"outcome {outcome!r}: OTLP {oattr.get('cicd.pipeline.result')!r}")
    want_succ = {"success": 1, "failure": 0, "cancellation": 0}.get(outcome)
    ok(p_inv.get("invocation_success") == want_succ,
       f"textfile invocation_success {p_inv.get('invocation_success')!r} for {outcome!r}")
    for key, pk, ik, on in (("steps", "invocation_steps", "steps", "build.steps"),
                            ("cached", "invocation_steps_cached", "cached_steps", "build.steps.cached")):
        w = tj.get(key)
        ok(w is not None and w == p_inv.get(pk) == ins[ik] == o_tot.get(on, (None,))[0],
           f"run {key} {w!r}: textfile {p_inv.get(pk)!r}, inspect {ins[ik]!r}, OTLP {o_tot.get(on, (None,))[0]!r}")
    print(f"{'FAILED' if otlpcheck.fails else 'passed'}: {otlpcheck.fails} difference(s)")
    sys.exit(1 if otlpcheck.fails else 0)


if __name__ == "__main__":
    main(*sys.argv[1:6])
