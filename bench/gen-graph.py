#!/usr/bin/env python3
"""A generated ninja build of N edges and the .ninja_log of one run of it at
-j J, for the critical-path analysis's cost (bench-critpath; issue 38):
100 generated headers, N - 200 compiles (each needing one header), 99
libraries of an equal share of the objects, and one link of them all. The
log's times are a list schedule at -j J of each edge's made-up duration, so
the chain that sets the wall is known only to the analysis.
  bench/gen-graph.py DIR [N] [J]"""
import os, random, sys

d = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
j = int(sys.argv[3]) if len(sys.argv) > 3 else 32
rnd = random.Random(38)
os.makedirs(d, exist_ok=True)
edges = []  # (output, rule, inputs, duration ms)
for h in range(100):
    edges.append(("gen/h%d.h" % h, "gen", ["gen/h%d.in" % h], rnd.randint(5, 400)))
nobj = n - 200
for i in range(nobj):
    edges.append(("obj/src/dir%d/file%d.c.o" % (i % 300, i), "cc",
                  ["src/dir%d/file%d.c" % (i % 300, i), "gen/h%d.h" % (i % 100)],
                  rnd.randint(50, 4000)))
libs = []
for lib in range(99):
    objs = ["obj/src/dir%d/file%d.c.o" % (i % 300, i) for i in range(lib, nobj, 99)]
    libs.append("lib/lib%d.a" % lib)
    edges.append((libs[-1], "ar", objs, rnd.randint(100, 2000)))
edges.append(("bin/app", "link", libs, 5000))
with open(os.path.join(d, "build.ninja"), "w") as f:
    f.write("rule gen\n  command = touch $out\nrule cc\n  command = touch $out\n"
            "rule ar\n  command = touch $out\nrule link\n  command = touch $out\n")
    for out, rule, ins, _ in edges:
        f.write("build %s: %s %s\n" % (out, rule, " ".join(ins)))
    f.write("build all: phony bin/app\ndefault all\n")
# the schedule: in order, each edge when its inputs are done and a job is free
done, free = {}, [0] * j
with open(os.path.join(d, ".ninja_log"), "w") as f:
    f.write("# ninja log v5\n")
    for out, rule, ins, dur in edges:
        ready = max([done.get(i, 0) for i in ins] + [0])
        k = min(range(j), key=lambda x: max(free[x], ready))
        start = max(free[k], ready)
        free[k] = done[out] = start + dur
        f.write("%d\t%d\t0\t%s\t%016x\n" % (start, start + dur, out, rnd.getrandbits(64)))
print("%s: %d edges, -j %d, wall %.1f s" % (d, len(edges), j, max(done.values()) / 1e3))
