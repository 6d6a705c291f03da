#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The Grafana dashboard (contrib/grafana/buildtel.json) against a real
# Prometheus: its shape, its variables' queries, and every panel's PromQL
# returning data with the variables set to All ('.*') and to real values.
#   dashcheck.py DASHBOARD.json http://127.0.0.1:PORT
import json, re, sys, urllib.parse, urllib.request

fails = 0


def ok(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def api(base, path, params):
    url = base + path + "?" + urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("%s: %s" % (url, body))
    return body["data"]


def subst(expr, values):
    """Grafana's $name and ${name}; anything else with a $ stays and fails."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m.group(1) or m.group(2), m.group(0)), expr)


def grafana_regex(vals):
    """A multi-value variable as Grafana's Prometheus data source writes it in
    a =~ matcher: each value regex-escaped (backslashes doubled for the PromQL
    string), several in (a|b)."""
    esc = [re.sub(r"([\\^$*+?.()|{}\[\]'])", r"\\\\\1", v) for v in vals]
    return esc[0] if len(esc) == 1 else "(" + "|".join(esc) + ")"


def panels(d):
    for p in d["panels"]:
        yield p
        for q in p.get("panels", []):
            yield q


def main():
    dash = json.load(open(sys.argv[1]))
    base = sys.argv[2]
    ok(30 <= dash.get("schemaVersion", 0) <= 41, "schemaVersion %s" % dash.get("schemaVersion"))
    tvars = {v["name"]: v for v in dash["templating"]["list"]}
    ok(tvars.get("DS_PROMETHEUS", {}).get("type") == "datasource", "a DS_PROMETHEUS data source variable")
    for name in ("instance", "builder", "target"):
        ok(tvars.get(name, {}).get("type") == "query", "template variable %s" % name)

    exprs = []
    ids = set()
    for p in panels(dash):
        ok(p["id"] not in ids, "panel id %d unique" % p["id"])
        ids.add(p["id"])
        if p["type"] == "row":
            continue
        ok(p.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", "%s: data source ${DS_PROMETHEUS}" % p["title"])
        ok(len(p.get("targets", [])) > 0, "%s: has queries" % p["title"])
        for t in p.get("targets", []):
            ok(t.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", "%s %s: data source" % (p["title"], t["refId"]))
            exprs.append(("%s %s" % (p["title"], t["refId"]), t["expr"]))

    # The variables' own queries, in order (each may use the ones before).
    values = {"prefix": ""}
    real = {"prefix": ""}
    for name in ("instance", "builder", "target"):
        v = tvars[name]
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        ok(q == v.get("definition"), "%s: definition and query agree" % name)
        m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", q)
        ok(m is not None, "%s: a label_values() query" % name)
        if not m:
            continue
        got = api(base, "/api/v1/label/%s/values" % m.group(2), {"match[]": subst(m.group(1), real)})
        ok(len(got) > 0, "%s: values %s" % (name, got))
        ok(v.get("includeAll") and v.get("allValue") == ".*", "%s: All is .* (builds with no builder label too)" % name)
        values[name] = ".*"
        # builder stays All in the real pass: label_values() cannot list a
        # build with no builder label, and All is what shows it.
        real[name] = grafana_regex(got) if got and name != "builder" else ".*"

    for label, vals in (("All", values), ("real values", real)):
        for what, expr in exprs:
            q = subst(expr, vals)
            if "$" in q:
                ok(False, "%s: variable left in %s" % (what, q))
                continue
            try:
                res = api(base, "/api/v1/query", {"query": q})["result"]
            except Exception as e:  # the query is wrong: say what Prometheus said
                ok(False, "%s (%s): %s" % (what, label, e))
                continue
            ok(len(res) > 0, "%s (%s): %d series from %s" % (what, label, len(res), q))
    return 0 if fails == 0 else 1


sys.exit(main())
