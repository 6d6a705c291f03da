#!/usr/bin/env python3
"""Interleaved pairs: run a peer command A and buildtel's command B one after
the other, N times (A B, B A, A B ...: the order alternates), and report the
median of the N ratios with their min and max. A sequential batch of A then B measures the machine's
drift as much as the programs; a pair shares the machine's state of the
moment, and the median of the pairs' ratios discards the outliers.

  pairs.py --name NAME --metric wall|cpu|out:REGEX --ratio a/b|b/a \
           [--goal-min X | --goal-max X] [--runs N] [--warmup N] \
           [--prepare CMD] [--touch MIB] --a CMD --b CMD

Each CMD is run with /bin/sh -c (the commands are bench/run's own, fixed
text), stdout and stderr to /dev/null unless the metric reads stdout.
  wall       the wall time of the command
  cpu        user+system CPU of the command and its children
  out:REGEX  a number the command prints (the first group of REGEX)
--touch MIB writes a file of MIB in 1 MiB writes and deletes it, then
writes as many MiB of anonymous memory and frees them, just before every
timed run (after --prepare), the same for both sides; the file in $TMPDIR.
On a VM whose free memory is handed back to the host (virtio-balloon free
page reporting), a run whose pages land on memory the host took back pays
the host's faults, seen in the guest as system time, with the same
/proc/vmstat counts: 280 MiB written to two files in 128 KiB writes (large
folios) took 0.19 s, then 1.8-2.7 s, while 8 KiB writes stayed at 0.26 s.
Memory just written and freed is backed, and is used first.
The ratio is a/b (the peer's figure over buildtel's: a throughput, higher
is better) or b/a (buildtel's over the peer's: a cost, lower is better).
Prints one line "pairs: NAME: median R (min M, max X) over N pairs: a ...,
b ... [goal ...: met|MISSED]" and exits 0; with --json FILE appends a JSON
record. A missed goal is said, never failed: this is no test."""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run_one(cmd, metric):
    out = subprocess.PIPE if metric.startswith('out:') else subprocess.DEVNULL
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(['/bin/sh', '-c', cmd], stdout=out, stderr=subprocess.DEVNULL)
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f'exit {p.returncode}: {cmd}')
    if metric == 'wall':
        return t1 - t0
    if metric == 'cpu':
        return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    m = re.search(metric[4:], p.stdout.decode('utf-8', 'replace'))
    if not m:
        raise RuntimeError(f'no match for {metric[4:]!r} in the output of: {cmd}')
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--name', required=True)
    ap.add_argument('--metric', default='wall')
    ap.add_argument('--ratio', choices=['a/b', 'b/a'], default='a/b')
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--prepare', default=None, help='run before every command, not timed')
    ap.add_argument('--touch', type=int, default=0, metavar='MIB',
                    help='write a file of MIB and delete it, then as much memory, '
                         'before every command, not timed')
    ap.add_argument('--goal-min', type=float)
    ap.add_argument('--goal-max', type=float)
    ap.add_argument('--unit', default='s')
    ap.add_argument('--json')
    ap.add_argument('--a', required=True)
    ap.add_argument('--b', required=True)
    o = ap.parse_args()

    def prep():
        if o.prepare:
            subprocess.run(['/bin/sh', '-c', o.prepare], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if o.touch:
            chunk = b'\1' * (1 << 20)
            # deleted on close; a buffered file writes each MiB whole
            with tempfile.NamedTemporaryFile(prefix='pairs-touch.') as f:
                for _ in range(o.touch):
                    f.write(chunk)
                f.flush()
            touched = b'\1' * (o.touch << 20)  # and as many anonymous pages
            del touched

    try:
        for _ in range(o.warmup):
            prep(); run_one(o.a, o.metric)
            prep(); run_one(o.b, o.metric)
        A, B, R = [], [], []
        for i in range(o.runs):
            # A B, then B A: what a pair's first run leaves behind (a cache
            # warmed, pages freed that the host then takes back) falls on
            # each side as often.
            if i % 2 == 0:
                prep(); a = run_one(o.a, o.metric)
                prep(); b = run_one(o.b, o.metric)
            else:
                prep(); b = run_one(o.b, o.metric)
                prep(); a = run_one(o.a, o.metric)
            A.append(a); B.append(b)
            R.append(a / b if o.ratio == 'a/b' else b / a)
    except RuntimeError as e:
        print(f'pairs: {o.name}: failed: {e}')
        return 0
    med = statistics.median(R)
    goal = ''
    met = None
    if o.goal_min is not None:
        met = med >= o.goal_min
        goal = f' [goal >= {o.goal_min:g}: {"met" if met else "MISSED"}]'
    elif o.goal_max is not None:
        met = med <= o.goal_max
        goal = f' [goal <= {o.goal_max:g}: {"met" if met else "MISSED"}]'
    # Beside the goal's median, the two sides' best runs: on a machine
    # whose runs are now and then twice as slow, whichever program it is,
    # the speed of each undisturbed.
    best = min(A) / min(B) if o.ratio == 'a/b' else min(B) / min(A)
    print(f'pairs: {o.name}: {o.ratio} median {med:.3f} (min {min(R):.3f}, max {max(R):.3f}) '
          f'over {o.runs} pairs; a median {statistics.median(A):.4g} {o.unit}, '
          f'b median {statistics.median(B):.4g} {o.unit}; best of each {best:.3f}{goal}')
    if o.json:
        with open(o.json, 'a') as f:
            f.write(json.dumps({'name': o.name, 'ratio': o.ratio, 'median': med,
                                'min': min(R), 'max': max(R), 'a': A, 'b': B,
                                'goal_min': o.goal_min, 'goal_max': o.goal_max,
                                'met': met}) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
