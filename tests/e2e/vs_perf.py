#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vs_perf.py - the real binary against perf stat, over the same window.

Runs `$VMS_BIN -i 1s -o OUT.csv` (perf enabled, the default configuration)
next to `perf stat -a -e context-switches -I 100 -x,` for about 7 s while
`perf bench sched pipe` keeps a context-switch load on the host, and checks
that vmsampler's host-wide perf.all.context-switches agrees with perf stat's
count over the same window within 2 %.

Aligning the windows.  vmsampler's frames carry the CLOCK_MONOTONIC time
of their read (t_mono_ns) and cumulative counts.  perf stat prints, after
each interval, the interval's count and its end as seconds since it started
counting.  Its start on CLOCK_MONOTONIC is estimated from when each line
arrives: arrival = start + timestamp + printing delay (>= 0), so the
smallest arrival - timestamp over all lines is the best estimate (printing
and reading delays are well under a millisecond).  The window is
vmsampler's own: from its first frame after perf started to its last frame
before perf stopped, whole 1 s intervals as the product reports them.
perf's count over it is the sum of its intervals, cut at the window's ends
by linear interpolation.  perf's interval is 100 ms rather than 1 s for
that cut: the count's rate changes from second to second on a busy host
(by 30 % here when other tests run), so interpolating within a whole
second of it, at either side, could be off by more than the 2 % checked;
within 100 ms the rate hardly moves.

Per VM.  `--vm NAME=PID` compares vm.NAME.perf.context-switches with
`perf stat -e context-switches -p PID` instead (all threads of the QEMU
process, and those they create, as vmsampler counts them), with no load of
its own: for a host where the per-VM source fills the VM table, e.g. vmlab
guests.  With `--harness`, the sampler is $VMS_VMRUN (tests/perf_vmrun.c:
the real loop with NAME=PID put in the VM table as the per-VM source would)
instead of $VMS_BIN, so any process can be checked today.  `--vm-load`
does that on a load of its own: `perf bench sched pipe -T` (two threads
ping-ponging in one process) registered as VM "bench".  Without these, the
host-wide comparison runs.  A VM's groups are read every 10 s by default
(sources.perf.vm_interval), its columns empty in between: the per-VM
comparison runs 31 s by default, so that three of its frames fall inside
perf's window, and compares the two 10 s intervals between them.

Needs root (host-wide counters at perf_event_paranoid 2) and perf
(linux-perf).  Exit status: 0 agreement, 1 disagreement or failure, 77
skipped (not root, no perf, a vmsampler without perf support, no harness)
unless VMS_REQUIRE_E2E is set: then those fail too.
"""
import argparse
import csv
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TOLERANCE = 0.02


def skip(why):
    if os.environ.get("VMS_REQUIRE_E2E"):
        raise SystemExit(f"FAIL: {why} (VMS_REQUIRE_E2E is set)")
    print(f"SKIP: {why}")
    sys.exit(77)


class PerfStat:
    """perf stat -I 1000 -x, with the arrival time of each interval line."""

    def __init__(self, args):
        self.lines = []  # (arrival_ns, timestamp_s, count)
        self.proc = subprocess.Popen(
            ["perf", "stat", "-x,", "-I", "100", "-e", "context-switches"] + args,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stderr:
            now = time.monotonic_ns()
            f = line.strip().split(",")
            # time,count,unit,event,... (or time,<not counted>,...)
            if len(f) < 4 or "context-switches" not in f[3]:
                continue
            try:
                self.lines.append((now, float(f[0]), int(f[1])))
            except ValueError:
                pass

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)
        self.thread.join(timeout=5)

    def intervals(self):
        """[(start_ns, end_ns, count)] on CLOCK_MONOTONIC."""
        if not self.lines:
            return []
        start = min(a - int(ts * 1e9) for a, ts, _ in self.lines)
        out, prev = [], 0.0
        for _, ts, count in sorted(self.lines, key=lambda x: x[1]):
            out.append((start + int(prev * 1e9), start + int(ts * 1e9), count))
            prev = ts
        return out


def read_frames(path, column):
    """[(t_mono_ns, value)] of one column of vmsampler's CSV, following the
    files it rolls to when the schema changes (out.csv, out.g2.csv, ...: a
    tap or disk appearing on the host mid-run does that)."""
    stem, ext = os.path.splitext(path)
    rolled = sorted(glob.glob(glob.escape(stem) + ".g*" + ext),
                    key=lambda p: int(p[len(stem) + 2:-len(ext)]))
    frames = []
    for p in [path] + rolled:
        with open(p, newline="") as f:
            rows = csv.reader(f)
            head = next(rows)
            if column not in head:
                raise SystemExit(f"FAIL: no column {column} in {p}: {head}")
            it, iv = head.index("t_mono_ns"), head.index(column)
            for row in rows:
                if row[iv] != "":
                    frames.append((int(row[it]), int(row[iv])))
    return frames


def perf_between(ivs, a, b):
    """perf's count from a to b: whole intervals, and the parts of the two
    it cuts in proportion to time."""
    total = 0.0
    for s, e, c in ivs:
        lo, hi = max(s, a), min(e, b)
        if hi > lo:
            total += c * (hi - lo) / (e - s)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vm", help="NAME=PID: compare vm.NAME.perf.context-switches")
    ap.add_argument("--harness", action="store_true",
                    help="run $VMS_VMRUN with NAME=PID in the VM table, not $VMS_BIN")
    ap.add_argument("--vm-load", action="store_true",
                    help="a threaded pipe ping-pong as the VM, through the harness")
    ap.add_argument("--seconds", type=int, default=None,
                    help="how long perf stat counts (default 7, 31 per VM)")
    opt = ap.parse_args()
    per_vm = bool(opt.vm or opt.vm_load)
    if opt.seconds is None:
        opt.seconds = 31 if per_vm else 7

    vms_bin = os.environ.get("VMS_BIN", "build/vmsampler")
    if os.geteuid() != 0:
        skip("needs root (host-wide counters at perf_event_paranoid 2)")
    if not shutil.which("perf"):
        skip("perf is not installed (linux-perf)")
    ver = subprocess.run([vms_bin, "--version"], capture_output=True, text=True).stdout
    if "perf: yes" not in ver:
        skip(f"{vms_bin} was built without perf support")

    vmrun = os.environ.get("VMS_VMRUN", "build/tests/perf_vmrun")
    if (opt.harness or opt.vm_load) and not os.access(vmrun, os.X_OK):
        skip(f"no harness {vmrun} (VMS_VMRUN)")
    tmp = tempfile.mkdtemp(prefix="vms-e2e.")
    out = os.path.join(tmp, "out.csv")
    load = None
    cpus = sorted(os.sched_getaffinity(0))
    if opt.vm_load:
        # the "VM": one process, two threads ping-ponging on one CPU
        load = subprocess.Popen(["perf", "bench", "sched", "pipe", "-T", "-l", "1000000000"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, {cpus[0]}))
        time.sleep(0.5)
        if len(cpus) > 1:
            os.sched_setaffinity(0, set(cpus[1:]))
        opt.vm = f"bench={load.pid}"
        opt.harness = True
    if opt.vm:
        name, pid = opt.vm.split("=", 1)
        column = f"vm.{name}.perf.context-switches"
        perf_args = ["-p", pid]
    else:
        column = "perf.all.context-switches"
        perf_args = ["-a"]
        # steady context switches: two processes ping-ponging over a pipe,
        # both on the first CPU (across CPUs the rate swings by 2x with
        # where the scheduler puts them); the rest stays off that CPU
        load_cpu = cpus[0]
        # (its own process group: perf bench forks the two ends, and
        # killing perf alone would leave them running)
        load = subprocess.Popen(["perf", "bench", "sched", "pipe", "-l", "1000000000"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, {load_cpu}))
        if len(cpus) > 1:
            os.sched_setaffinity(0, set(cpus[1:]))
        time.sleep(0.5)
    try:
        if opt.harness:
            vms = subprocess.Popen([vmrun, str(opt.seconds + 2), out, opt.vm], stderr=subprocess.PIPE,
                                   text=True)
        else:
            vms = subprocess.Popen([vms_bin, "-i", "1s", "-o", out], stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        stat = PerfStat(perf_args)
        time.sleep(opt.seconds)
        stat.stop()
        if opt.harness:
            err = vms.communicate(timeout=30)[1]  # it stops after one more frame
        else:
            time.sleep(1.2)  # one more frame after perf's last interval
            vms.send_signal(signal.SIGINT)
            err = vms.communicate(timeout=10)[1]
    finally:
        if load:
            os.killpg(load.pid, signal.SIGKILL)
            load.wait()
    if vms.returncode != 0:
        raise SystemExit(f"FAIL: vmsampler exited {vms.returncode}: {err}")

    frames = read_frames(out, column)
    ivs = stat.intervals()
    if not ivs:
        raise SystemExit("FAIL: perf stat printed no interval")
    inside = [f for f in frames if ivs[0][0] <= f[0] <= ivs[-1][1]]
    if len(inside) < (3 if per_vm else 4):
        raise SystemExit(f"FAIL: only {len(inside)} vmsampler frames inside perf's "
                         f"{len(ivs)} intervals ({len(frames)} frames)")
    (s, vs), (e, ve) = inside[0], inside[-1]
    perf_total = perf_between(ivs, s, e)
    vms_total = ve - vs
    diff = (vms_total - perf_total) / perf_total
    print(f"window {(e - s) / 1e9:.3f} s, {len(inside) - 1} vmsampler intervals: "
          f"perf stat {perf_total:.0f}, vmsampler {vms_total} ({column}), "
          f"difference {diff * 100:+.3f} %")
    for (a, va), (b, vb) in zip(inside, inside[1:]):
        p = perf_between(ivs, a, b)
        print(f"  [{a / 1e9:.3f}, {b / 1e9:.3f}]  perf {p:>10.0f}  vmsampler {vb - va:>10}  "
              f"{(vb - va - p) / p * 100:+.3f} %")
    shutil.rmtree(tmp)
    if abs(diff) > TOLERANCE:
        raise SystemExit(f"FAIL: differ by {diff * 100:+.2f} % (more than {TOLERANCE * 100:.0f} %)")
    print("OK")


if __name__ == "__main__":
    main()
