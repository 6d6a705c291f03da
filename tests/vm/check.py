#!/usr/bin/env python3
"""tools/vm-check's judge: reads what tests/vm/cases.sh left in the guest's
/var/lib/vm-check (dumped to DIR) and prints "ok CASE" or "FAIL CASE: why"
per case, then "vm-check: N passed, N failed". Exit 1 on any failure.
Usage: check.py DIR USER"""
import csv
import json
import os
import re
import sys

D = sys.argv[1]
USER = sys.argv[2] if len(sys.argv) > 2 else "vmuser"
HOG_MB = 300.0
REMEDY = re.compile(r"enable-linger|systemd-run|sudo")
misses = []  # this case's misses so far: a case reports all of them


class Miss(Exception):
    """A miss that ends the case (a file it needs is not there)."""


def read(*p):
    try:
        with open(os.path.join(D, *p), encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        raise Miss("no " + os.path.join(*p))


def cg0(text):
    """The cgroup v2 path in a /proc/PID/cgroup text."""
    for line in text.splitlines():
        if line.startswith("0::"):
            return line[3:]
    raise Miss("no 0:: line in " + repr(text[:80]))


def want(cond, why):
    if not cond:
        misses.append(why)
    return bool(cond)


def load(case):
    rc = int(read(case, "rc"))
    try:
        with open(os.path.join(D, case, "resources-%s.summary.json" % case)) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        raise Miss("exit %d and no summary (%s): %s" % (rc, e.__class__.__name__, tail(case)))
    return rc, summary


def tail(case):
    """What buildtel said that explains a miss: its notes, warnings and errors."""
    try:
        lines = read(case, "out.log").splitlines()
    except Miss:
        return "(no output)"
    said = [l for l in lines if re.match(r"buildtel( run)?: (note|warning|error|cannot)|buildtel run:", l)]
    return (" | ".join(said or lines[-2:]))[:400]


def csv_modes(case):
    with open(os.path.join(D, case, "resources-%s.csv" % case), newline="") as f:
        return {row.get("cg_mode", "") for row in csv.DictReader(f)}


def reported_cgroup(obj):
    """A cgroup path the summary names for the build, if it names one."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "cgroup" in k and isinstance(v, str) and v.startswith("/"):
                return v
            r = reported_cgroup(v)
            if r:
                return r
    return None


def in_own_cgroup(case, summary, allow_estimates):
    """The build's figures are its own: it ran in a cgroup that is not the
    caller's (and is the one the summary names, where it names one), and the
    CSV says the same mode on every row; or, where allowed, the figures are
    plainly labelled estimates."""
    b = summary["build"]
    mode = b.get("mode")
    modes = csv_modes(case)
    want(modes == {mode}, "summary mode %s but the CSV's cg_mode is %s" % (mode, sorted(modes)))
    if mode == "none":
        # As a user, estimates do where no delegated cgroup can be had, with
        # one note naming the remedy (issue 19, point 2).
        if want(allow_estimates, "mode none (estimates) where a delegated cgroup is to be had: "
                + tail(case)):
            want("memory" in (b.get("estimates") or []), "mode none but memory not labelled an estimate")
            want(REMEDY.search(read(case, "out.log")),
                 "mode none and no note naming a remedy (enable-linger, systemd-run, sudo): " + tail(case))
        return "estimates"
    caller = cg0(read(case, "caller.cgroup"))
    build = cg0(read(case, "build.cgroup"))
    want(build != caller, "mode %s, but the build ran in the caller's cgroup %s" % (mode, caller))
    rep = reported_cgroup(summary)
    if rep:
        want(build == rep or build.startswith(rep + "/"),
             "the build ran in %s, the summary names %s" % (build, rep))
    return "cgroup %s (%s)" % (build, mode)


def peak_ok(summary):
    p = summary["build"].get("mem_peak_mb")
    v = p.get("value") if isinstance(p, dict) else None
    if want(isinstance(v, (int, float)), "no build memory peak"):
        want(abs(v - HOG_MB) <= HOG_MB * 0.05, "build peak %.1f MiB, not within 5%% of %.0f" % (v, HOG_MB))
        return "%.1f MiB" % v
    return "unknown"


def hog_case(case, allow_estimates):
    rc, s = load(case)
    want(rc == 0, "exit %d: %s" % (rc, tail(case)))
    v = peak_ok(s)
    where = in_own_cgroup(case, s, allow_estimates)
    return "peak %s, %s" % (v, where)


def memmax_case(case):
    rc, s = load(case)
    if not want(rc == 137, "exit %d, not 137: %s" % (rc, tail(case))):
        return ""
    b = s["build"]
    want(b.get("mode") != "none", "mode none under --memory-max")
    want(b.get("oom_kills") == 1, "oom_kills %r, not 1" % b.get("oom_kills"))
    victims = [e.get("victim") for e in b.get("oom_events") or []]
    named = [v for v in victims if isinstance(v, dict) and "memhog" in (v.get("label") or "")]
    want(named, "OOM victim not named (oom_events victims: %r)" % victims)
    in_own_cgroup(case, s, False)
    return "137, 1 OOM kill, victim %s" % (named[0].get("label") if named else "?")


def make_case(case):
    rc, s = load(case)
    want(rc == 0, "exit %d: %s" % (rc, tail(case)))
    want(read(case, "build.cgroup"), "the link step did not run")
    units = [u for u in s.get("units") or [] if u.get("kind") == "compile"]
    want(len(units) >= 4, "%d compile units seen, not 4" % len(units))
    cpu = (s["build"].get("cpu_user_s") or 0) + (s["build"].get("cpu_sys_s") or 0)
    want(cpu > 0, "build cpu %.3f s" % cpu)
    want(s["build"].get("cpu_user_s") is not None, "no build cpu figure")
    where = in_own_cgroup(case, s, False)
    return "%d units, cpu %.2f s, %s" % (len(units), cpu, where)


class Skip(Exception):
    """A case this guest could not run (its host gave it no dockerd)."""


def kernel_kills():
    """The kernel's oom-kill lines in the guest: (task_memcg, task, pid)."""
    pat = re.compile(r"oom-kill:.*task_memcg=([^,]*),task=(.*),pid=(\d+),")
    return [(m.group(1), m.group(2), int(m.group(3)))
            for m in map(pat.search, read("dmesg.txt").splitlines()) if m]


def docker_case(case="root-docker"):
    """One buildx build from the root service, dockerd with the systemd
    driver: each RUN step against the watcher's reading of its exec cgroup
    and the OOM step's victim against the kernel's own line."""
    if os.path.exists(os.path.join(D, case, "skipped")):
        raise Skip(read(case, "skipped"))
    info = read(case, "docker-info")
    want(info.startswith("systemd 2"), "dockerd's cgroup driver and version: " + info)
    rc = int(read(case, "rc"))
    want(rc == 0, "exit %d: %s" % (rc, tail(case)))
    try:
        with open(os.path.join(D, case, "watch.json")) as f:
            watch = json.load(f)
        with open(os.path.join(D, case, "resources-%s.targets.json" % case)) as f:
            steps = json.load(f).get("buildkit_steps") or []
    except (OSError, ValueError) as e:
        raise Miss("no watcher reading or targets.json (%s): %s" % (e, tail(case)))

    def step(tok):
        st = [x for x in steps if tok in x.get("name", "")]
        if not want(st and st[0].get("exec"), "the step %s not measured: %s" % (tok, tail(case))):
            return None, watch.get(tok) or {}
        return st[0]["exec"], watch.get(tok) or {}

    said = []
    ex, w = step("vmstep-hold")
    if ex:
        p, wp = ex.get("mem_peak_bytes") or 0, w.get("peak") or 0
        want(wp > 0, "the watcher read no peak for the 300 MiB step (%r)" % w)
        want(wp and abs(p - wp) <= 0.05 * wp, "the 300 MiB step's peak %.1f MiB, the watcher's %.1f MiB"
             % (p / 2**20, wp / 2**20))
        want(abs(p / 2**20 - HOG_MB) <= HOG_MB * 0.1, "the 300 MiB step's peak %.1f MiB" % (p / 2**20))
        said.append("300 MiB step %.1f MiB (watcher %.1f) in %s" % (p / 2**20, wp / 2**20,
                                                                  ",".join(w.get("cgroups") or ["?"])))
    ex, w = step("vmstep-cc")
    if ex:
        want((ex.get("cpu_s") or 0) > 0, "the compile step's cpu %r" % ex.get("cpu_s"))
        want((ex.get("mem_peak_bytes") or 0) > 0, "the compile step's peak %r" % ex.get("mem_peak_bytes"))
        said.append("compile step cpu %.2f s, peak %.1f MiB (watcher %.1f)" % (
            ex.get("cpu_s") or 0, (ex.get("mem_peak_bytes") or 0) / 2**20, (w.get("peak") or 0) / 2**20))
    ex, w = step("vmstep-oom")
    want(w.get("capped"), "the watcher did not cap the OOM step: %r" % w)
    kills = [k for k in kernel_kills() if k[0] in (w.get("cgroups") or [])]
    if want(kills, "no oom-kill line of the kernel's in the OOM step's cgroup %r in dmesg.txt"
            % w.get("cgroups")):
        kernel = "%s (pid %d)" % (kills[0][1], kills[0][2])
        if ex:
            want(ex.get("oom_victim") == kernel, "the OOM step's victim %r, the kernel killed %r"
                 % (ex.get("oom_victim"), kernel))
            want((ex.get("oom_kills") or 0) >= 1, "the OOM step's kills %r" % ex.get("oom_kills"))
            said.append("OOM step kills %s victim %s (kernel: %s, watcher oom_kill %s)" % (
                ex.get("oom_kills"), ex.get("oom_victim"), kernel, w.get("oom_kill")))
    return "; ".join(said)


SIZE = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
RECORD = re.compile(r"step \(BuildKit's record\): cpu ([\d.]+) s, peak ([\d.]+) (\w+), .*?: (.*)$")


def record_agrees(case="root-docker-record"):
    """buildtel import-buildx of a build under --cgroup-parent: BuildKit's
    own usage of each RUN step agrees with the exec cgroups' figures buildtel
    read (peak and CPU within 5 %)."""
    if os.path.exists(os.path.join(D, "root-docker", "skipped")):
        raise Skip(read("root-docker", "skipped"))
    rc = int(read(case, "rc"))
    want(rc == 0, "exit %d: %s" % (rc, tail(case)))
    rec = {}
    for m in map(RECORD.search, read(case, "record.txt").splitlines()):
        if m:
            rec[m.group(4)] = (float(m.group(1)), float(m.group(2)) * SIZE[m.group(3)])
    with open(os.path.join(D, case, "resources-%s.targets.json" % case)) as f:
        steps = [s for s in json.load(f).get("buildkit_steps") or [] if s.get("exec")]
    said = []
    for tok in ("vmstep-hold", "vmstep-cc"):
        r = [v for k, v in rec.items() if tok in k]
        ex = [s["exec"] for s in steps if tok in s.get("name", "")]
        if not want(r and ex, "%s: record %r, measured %r: %s" % (tok, r, ex, read(case, "record.txt"))):
            continue
        (cpu, peak), ex = r[0], ex[0]
        want(ex.get("source") == "exec-cgroup", "%s measured from %r" % (tok, ex.get("source")))
        want(abs(ex["mem_peak_bytes"] - peak) <= 0.05 * peak, "%s: peak %.1f MiB, the record's %.1f MiB"
             % (tok, ex["mem_peak_bytes"] / 2**20, peak / 2**20))
        want(abs(ex["cpu_s"] - cpu) <= 0.05 * cpu + 0.01, "%s: cpu %.3f s, the record's %.3f s"
             % (tok, ex["cpu_s"], cpu))
        said.append("%s peak %.1f/%.1f MiB cpu %.3f/%.3f s" % (tok, ex["mem_peak_bytes"] / 2**20,
                                                              peak / 2**20, ex["cpu_s"], cpu))
    # under the systemd driver's own exec cgroups, BuildKit's samples are
    # empty (what it records is said, not judged: a later BuildKit may fix it)
    said.append("systemd driver: " + (read("root-docker", "record.txt").splitlines() + ["?"])[1].strip())
    return "exec cgroup / BuildKit's record: " + "; ".join(said)


def docker_record():
    """No exec of the build readable (BUILDTEL_TEST_NO_EXECS): the steps'
    figures come from BuildKit's record, say so, and match the watcher."""
    case = "root-docker-record-fill"
    if os.path.exists(os.path.join(D, "root-docker", "skipped")):
        raise Skip(read("root-docker", "skipped"))
    rc = int(read(case, "rc"))
    want(rc == 0, "exit %d: %s" % (rc, tail(case)))
    with open(os.path.join(D, case, "watch.json")) as f:
        watch = json.load(f)
    with open(os.path.join(D, case, "resources-%s.targets.json" % case)) as f:
        steps = {t: s["exec"] for s in json.load(f).get("buildkit_steps") or []
                 for t in ("vmstep-hold", "vmstep-cc", "vmstep-oom") if t in s.get("name", "") and s.get("exec")}
    want(len(steps) == 3, "steps with figures: %r: %s" % (sorted(steps), tail(case)))
    want(all(x.get("source") == "buildkit-record" and x.get("execs") == 0 for x in steps.values()),
         "sources %r" % [(x.get("source"), x.get("execs")) for x in steps.values()])
    want("BuildKit's own record gave the figures of 3" in read(case, "out.log"), "no note of the record: "
         + tail(case))
    p, wp = (steps.get("vmstep-hold") or {}).get("mem_peak_bytes") or 0, (watch.get("vmstep-hold") or {}).get("peak") or 0
    want(wp and abs(p - wp) <= 0.05 * wp, "the 300 MiB step's peak %.1f MiB, the watcher's %.1f MiB"
         % (p / 2**20, wp / 2**20))
    k = (steps.get("vmstep-oom") or {}).get("oom_kills") or 0
    want(k >= 1, "the OOM step's kills by the record: %r" % k)
    return "from BuildKit's record: 300 MiB step %.1f MiB (watcher %.1f), OOM step kills %.0f" % (
        p / 2**20, wp / 2**20, k)


def docker_two():
    """Two builds at once on the one dockerd: each run measured only its own
    step, at the watcher's peak, and B's build never counted A's 200 MiB."""
    if os.path.exists(os.path.join(D, "root-docker", "skipped")):
        raise Skip(read("root-docker", "skipped"))
    try:
        with open(os.path.join(D, "root-docker-two", "watch.json")) as f:
            watch = json.load(f)
    except (OSError, ValueError) as e:
        raise Miss("no watcher reading (%s)" % e)
    said, peaks = [], {}
    for tag, mib in (("A", 200), ("B", 60)):
        case = "root-docker-two" + tag
        rc = int(read(case, "rc"))
        want(rc == 0, "build %s: exit %d: %s" % (tag, rc, tail(case)))
        try:
            with open(os.path.join(D, case, "resources-%s.targets.json" % case)) as f:
                steps = [s for s in json.load(f).get("buildkit_steps") or [] if s.get("exec")]
            _, summary = load(case)
        except (OSError, ValueError) as e:
            raise Miss("build %s: no targets.json (%s): %s" % (tag, e, tail(case)))
        names = [s.get("name", "") for s in steps]
        if not want(len(steps) == 1 and "vmtwo" + tag in names[0],
                    "build %s measured %r, not its own step alone" % (tag, names)):
            continue
        ex, w = steps[0]["exec"], watch.get("vmtwo" + tag) or {}
        p, wp = ex.get("mem_peak_bytes") or 0, w.get("peak") or 0
        want(wp > 0, "the watcher read no peak for build %s's step (%r)" % (tag, w))
        want(wp and abs(p - wp) <= 0.05 * wp, "build %s's step peak %.1f MiB, the watcher's %.1f MiB"
             % (tag, p / 2**20, wp / 2**20))
        want(abs(p / 2**20 - mib) <= mib * 0.15, "build %s's step peak %.1f MiB, it held %d MiB"
             % (tag, p / 2**20, mib))
        want(ex.get("execs") == 1, "build %s: %r exec cgroups, not its own one" % (tag, ex.get("execs")))
        peaks[tag] = (summary.get("buildkit_execs") or {}).get("mem_peak_bytes") or 0
        said.append("%s %.1f MiB (watcher %.1f)" % (tag, p / 2**20, wp / 2**20))
    if len(peaks) == 2:
        want(peaks["B"] < peaks["A"] / 2, "B's execs' peak %.1f MiB counts A's (%.1f MiB)"
             % (peaks["B"] / 2**20, peaks["A"] / 2**20))
    return "two builds at once, each its own step: " + ", ".join(said)


def guest():
    want(read("guest", "cgroupfs") == "cgroup2fs", "/sys/fs/cgroup is " + read("guest", "cgroupfs"))
    want(read("guest", "v1-mounts") == "0", "v1 hierarchies mounted in the guest")
    want(read("guest", "user-manager") == "active", "user@UID.service of %s not active" % USER)
    return "kernel %s, pure v2, controllers: %s" % (read("guest", "uname"), read("guest", "controllers"))


def no_v1_note():
    bad = []
    seen = 0
    for case in sorted(os.listdir(D)):
        try:
            out = read(case, "out.log")
        except Miss:
            continue
        seen += 1
        if "from v1" in out or "--cgroup=hybrid" in out:
            bad.append(case)
    want(seen, "no case's output")
    want(not bad, "a note about v1 where no v1 exists: " + ", ".join(bad))
    return "%d cases' output" % seen


def user_service():
    r = read("user-service", "unit-result")
    want(r == "Result=success", "vm-user-case.service " + r)
    return hog_case("user-service", True)


def user_scope():
    r = read("user-scope-memmax", "systemd-run.rc")
    want(os.path.exists(os.path.join(D, "user-scope-memmax", "rc")),
         "systemd-run --user --scope exit %s: %s" % (r, read("user-scope-memmax", "systemd-run.log")[-300:]))
    return memmax_case("user-scope-memmax")


def caller_unchanged():
    path = read("caller", "path")
    before = (read("caller", "type.before"), read("caller", "subtree.before"))
    after = (read("caller", "type.after"), read("caller", "subtree.after"))
    want(before == after, "%s was %s / subtree_control '%s', is %s / '%s'"
         % (path, before[0], before[1], after[0], after[1]))
    return "%s: %s, subtree_control '%s'" % (path, before[0], before[1])


CASES = [
    ("guest", guest),
    ("root-300m", lambda: hog_case("root-300m", False)),
    ("root-memmax", lambda: memmax_case("root-memmax")),
    ("root-make", lambda: make_case("root-make")),
    ("user-runuser", lambda: hog_case("user-runuser", True)),
    ("user-service", user_service),
    ("user-scope-memmax", user_scope),
    ("control-300m", lambda: hog_case("control-300m", False)),
    ("root-docker", docker_case),
    ("root-docker-record", record_agrees),
    ("root-docker-record-fill", docker_record),
    ("root-docker-two", docker_two),
    ("no-v1-note", no_v1_note),
    ("caller-unchanged", caller_unchanged),
]


def main():
    passed = failed = 0
    if not os.path.exists(os.path.join(D, "done")):
        print("FAIL guest: the cases did not finish (no %s/done)" % D)
        failed += 1
    for name, fn in CASES:
        del misses[:]
        try:
            what = fn()
            if misses:
                print("FAIL %s: %s" % (name, "; ".join(misses)))
                failed += 1
            else:
                print("ok %s%s" % (name, ": " + what if what else ""))
                passed += 1
        except Skip as e:
            print("SKIP %s: %s" % (name, e))
        except Miss as e:
            print("FAIL %s: %s" % (name, "; ".join(misses + [str(e)])))
            failed += 1
        except (KeyError, TypeError, ValueError) as e:
            print("FAIL %s: unexpected output (%s: %s)" % (name, e.__class__.__name__, e))
            failed += 1
    try:  # a benchmark's figure, not a check
        print("bench bkexec (pure v2, TCG): " + read("bench", "bkexec.txt").splitlines()[-1])
    except (Miss, IndexError):
        pass
    print("vm-check: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
