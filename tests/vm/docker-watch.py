#!/usr/bin/env python3
"""docker-watch.py OUT TOKEN[:CAP]...: the docker case's independent reader, in
the guest. Until SIGTERM, every 0.1 s: each process whose command line holds
a TOKEN (a RUN step's shell), the cgroup /proc/PID/cgroup names for it when
that is an exec cgroup (BuildKit's, not a runc on its way), and that
cgroup's memory.peak, memory.current and memory.events oom_kill, the largest
seen per token. A TOKEN:CAP caps its step: CAP goes to the memory.max of
its exec cgroup when first seen (the step waits for it), as a CI job's
limit would. Writes OUT (JSON) whenever a figure grows."""
import json
import os
import signal
import sys
import time

out = sys.argv[1]
caps = dict((a.split(":") + [""])[:2] for a in sys.argv[2:])
toks = list(caps)
res = {}
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))


def num(path, key=None):
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if key is None:
                    return int(w[0]) if w and w[0].isdigit() else 0
                if len(w) == 2 and w[0] == key:
                    return int(w[1])
    except (OSError, ValueError):
        pass
    return 0


def write():
    with open(out + ".new", "w") as f:
        json.dump(res, f, indent=1)
    os.replace(out + ".new", out)


while not stop:
    changed = False
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/cgroup" % pid) as f:
                cg = [l[3:].strip() for l in f if l.startswith("0::")][0]
        except (OSError, IndexError):
            continue
        tok = next((t for t in toks if t.encode() in cmd), None)
        if not tok or not ("/buildkit/" in cg or "docker:" in cg):
            continue
        r = res.setdefault(tok, {"cgroups": [], "peak": 0, "current": 0, "oom_kill": 0})
        d = "/sys/fs/cgroup" + cg
        if cg not in r["cgroups"]:
            r["cgroups"].append(cg)
            changed = True
            if caps[tok]:
                try:
                    with open(d + "/memory.max", "w") as f:
                        f.write(caps[tok])
                    r["capped"] = caps[tok]
                except OSError as e:
                    r["cap_error"] = str(e)
        for k, v in (("peak", num(d + "/memory.peak")), ("current", num(d + "/memory.current")),
                     ("oom_kill", num(d + "/memory.events", "oom_kill"))):
            if v > r[k]:
                r[k] = v
                changed = True
    if changed:
        write()
    time.sleep(0.1)
write()
