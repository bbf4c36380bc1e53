#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end: a VM's perf IPC in `report --compare` (vm.ipc, issue 27)
on real hardware counters, against perf stat and the file's raw counters.

Two runs of the sampler, 12 s at 1 s each, whose one "VM" is a real
process (tests/fake_agent's "pid" scenario: the per-VM perf source counts
on its threads as on a QEMU's) with `sources.perf.vm: {event: instructions,
required: true}, {event: cycles, required: true}` read every tick:

  A: sha256sum /dev/zero   (compute: a high IPC)
  B: a Python loop of random reads over 256 MiB (cache and TLB misses:
     a lower one)

and next to each, `perf stat -e instructions,cycles -p PID` over the
whole run.  Checked:
  - each run's vm.ipc mean (report --compare --format json) equals the
    mean of Δinstructions / Δcycles of its intervals computed here from
    `vmsampler dump`'s raw counters (to 1e-9), and vmsampler.compare.compare()
    (Python, no C tools) gives the same row;
  - the file's instructions / cycles over the run's whole span is within
    3 % of perf stat's ratio for the same process (perf stat counts a
    little longer, from before the first frame to after the last, on a
    steady load);
  - the two loads' IPCs differ by more than 10 % and the change is marked
    real.

Needs root, perf (linux-perf) and a PMU that counts instructions and
cycles (not the development VM: `perf stat -e instructions` says <not
supported> there).  Exit 77 (skip) without them, a failure where
VMS_REQUIRE_PMU=1 (a host known to have one; CI's has not)."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BIN = os.environ.get("VMS_BIN") or os.path.join(SRC, "build", "vmsampler")
BUILD = os.environ.get("VMS_BUILD") or os.path.dirname(BIN)
AGENT = os.path.join(BUILD, "tests", "fake_agent")
N = 13  # frames: 12 intervals of 1 s
LOADS = {
    "a": ["sha256sum", "/dev/zero"],
    "b": [sys.executable, "-c",
          "import random\n"
          "b = bytearray(256 << 20)\n"
          "r = random.Random(1)\n"
          "n = len(b) - 1\n"
          "s = 0\n"
          "while True:\n"
          "    for _ in range(100000):\n"
          "        s += b[r.randint(0, n)]\n"],
}


def skip(why):
    if os.environ.get("VMS_REQUIRE_PMU") == "1":
        print("FAIL: %s (VMS_REQUIRE_PMU=1)" % why)
        sys.exit(1)
    print("SKIP: " + why)
    sys.exit(77)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def perf_counts(text):
    """{event: count} of perf stat -x, output; None for <not supported>"""
    out = {}
    for ln in text.splitlines():
        p = ln.split(",")
        ev = p[2].split(":")[0] if len(p) > 2 else ""
        if ev in ("instructions", "cycles"):
            out[ev] = int(p[0]) if p[0].isdigit() else None
    return out


def have_pmu():
    r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions,cycles", "--", "true"], capture_output=True,
                       text=True)
    c = perf_counts(r.stderr)
    return r.returncode == 0 and c.get("instructions") and c.get("cycles")


def record(tmp, name):
    load = subprocess.Popen(LOADS[name], stdout=subprocess.DEVNULL)
    try:
        conf = os.path.join(tmp, name + ".yaml")
        with open(conf, "w") as f:
            f.write('sources:\n  libvirt:\n    agent: "%s"\n    uri: "fake:pid"\n'
                    '  perf:\n    vm_interval: 0s\n'
                    '    vm: [{event: instructions, required: true}, {event: cycles, required: true}]\n' % AGENT)
        out = os.path.join(tmp, name + ".vms")
        time.sleep(1)  # the load's start-up (the Python one allocates)
        ps = subprocess.Popen(["perf", "stat", "-x,", "-e", "instructions,cycles", "-p", str(load.pid)],
                              stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
        r = subprocess.run([BIN, "-q", "-c", conf, "-i", "1s", "-n", str(N), "-o", out], capture_output=True,
                           text=True, env=dict(os.environ, FAKE_AGENT_PID=str(load.pid)))
        ps.send_signal(2)
        _, err = ps.communicate()
        if r.returncode:
            fail("vmsampler: exit %d: %s" % (r.returncode, r.stderr))
        return out, perf_counts(err)
    finally:
        load.kill()
        load.wait()


def raw_ipc(path):
    """per-interval Δinstructions / Δcycles from dump's raw counters, and
    the ratio over the whole span"""
    rows = list(csv.DictReader(io.StringIO(subprocess.run([BIN, "dump", path], capture_output=True, text=True,
                                                          check=True).stdout)))
    ins, cyc = "vm.standin.perf.instructions", "vm.standin.perf.cycles"
    have = [r for r in rows if r.get(ins) and r.get(cyc)]
    if len(have) < N - 1:
        fail("%s: %d frames with both counters" % (path, len(have)))
    x = []
    for p, c in zip(have, have[1:]):
        dc = int(c[cyc]) - int(p[cyc])
        if dc > 0:
            x.append((int(c[ins]) - int(p[ins])) / dc)
    whole = (int(have[-1][ins]) - int(have[0][ins])) / (int(have[-1][cyc]) - int(have[0][cyc]))
    return x, whole


def main():
    if os.geteuid() != 0:
        skip("not root (per-process hardware counters of another process)")
    if subprocess.run(["which", "perf"], capture_output=True).returncode:
        skip("no perf")
    if not os.access(AGENT, os.X_OK):
        skip("tests/fake_agent is not built")
    if not have_pmu():
        skip("no PMU: perf stat cannot count instructions and cycles here")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {k: record(tmp, k) for k in ("a", "b")}
        p = subprocess.run([BIN, "report", "--compare", runs["a"][0], runs["b"][0], "--format", "json"],
                           capture_output=True, text=True)
        if p.returncode:
            fail("report --compare: " + p.stderr)
        rows = [r for r in json.loads(p.stdout)["rows"] if r["quantity"] == "vm.ipc"]
        if len(rows) != 1 or rows[0]["entity"] != "standin":
            fail("vm.ipc rows: %r" % rows)
        row = rows[0]
        for k, side in (("a", "a"), ("b", "b")):
            x, whole = raw_ipc(runs[k][0])
            ref = runs[k][1]
            perf_ipc = ref["instructions"] / ref["cycles"]
            mean = sum(x) / len(x)
            print("run %s: vm.ipc mean %.4f (raw counters %.4f, %d intervals); whole run %.4f, perf stat %.4f"
                  % (k, row[side]["mean"], mean, len(x), whole, perf_ipc))
            if abs(row[side]["mean"] - mean) > 1e-9 * mean:
                fail("run %s: vm.ipc %.6f, the raw counters' %.6f" % (k, row[side]["mean"], mean))
            if abs(whole / perf_ipc - 1) > 0.03:
                fail("run %s: IPC %.4f, perf stat's %.4f: more than 3 %% apart" % (k, whole, perf_ipc))
        a, b = row["a"]["mean"], row["b"]["mean"]
        print("vm.ipc %.3f -> %.3f, delta %.3f, CI [%.3f, %.3f], real %s" % (a, b, row["delta"], row["ci_low"],
                                                                            row["ci_high"], row["real"]))
        if abs(b / a - 1) < 0.10:
            fail("the two loads' IPCs are within 10 %: the test's loads do not differ here")
        if not row["real"]:
            fail("a change of IPC from %.3f to %.3f not marked real" % (a, b))
        # the same row in Python, without the C tools
        sys.path.insert(0, os.path.join(SRC, "python"))
        try:
            from vmsampler.compare import compare
        except ImportError as e:
            print("(Python's compare not checked: %s)" % e)
        else:
            df = compare(runs["a"][0], runs["b"][0])
            pr = df[df.quantity == "vm.ipc"].iloc[0]
            for k in ("a_mean", "b_mean", "delta", "ci_low", "ci_high"):
                c = row["delta"] if k == "delta" else row[k] if k.startswith("ci") else row[k[0]]["mean"]
                if abs(pr[k] - c) > 1e-4:
                    fail("Python's vm.ipc %s %.6f, C's %.6f" % (k, pr[k], c))
    print("PASS")


if __name__ == "__main__":
    main()
