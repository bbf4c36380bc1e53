#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/export/run.py [--build DIR] [--windows N] [--window S] [--interval I]
[--scrape S]: does `vmsampler export` cost the sampler anything?

One sampler run (`vmsampler -i I --ring R -o run.vms`, this host's /proc)
is cut into N windows of S seconds, alternating: "alone" (no reader of the
ring) and "export" (`vmsampler export --ring R` on 127.0.0.1, scraped every
--scrape seconds with Prometheus' Accept header and gzip, as Prometheus
does).  Afterwards `vmsampler dump run.vms` gives each frame's own
columns: late_ns (how late its tick ran) and self_cpu_ns (the sampler's
CPU since the frame before).  Per condition, over the frames whose time
falls inside its windows (the first second of a window left out): tick
lateness p50 / p99 and the sampler's CPU per tick; and the exporter's own
CPU (utime + stime of its process, /proc/PID/stat) per scrape and per
second.  Same run, same sampler, alternating, so that the machine's drift
is shared by both conditions.  Prints a Markdown table; nothing is
installed, everything started is stopped."""
import argparse
import csv
from datetime import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ACCEPT = ('application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;'
          'q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1')
HZ = os.sysconf('SC_CLK_TCK')


def pct(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def by_window(bin_, run, windows, conds):
    """{cond: ([tick lateness µs], [sampler CPU per tick µs])} of the frames
    of the .vms file run, each by its wall time (dump's ISO time) in one of
    windows [(cond, start ns, end ns)]."""
    out = subprocess.run([bin_, 'dump', run], capture_output=True, text=True, check=True)
    rows = list(csv.reader(out.stdout.splitlines()))
    head = rows[0]
    il, ic = head.index('late_ns'), head.index('self_cpu_ns')
    res = {c: ([], []) for c in conds}
    for r in rows[1:]:
        t = datetime.fromisoformat(r[1]).timestamp() * 1e9
        for cond, a0, a1 in windows:
            if a0 <= t < a1:
                if r[il]:
                    res[cond][0].append(int(r[il]) / 1000)
                if r[ic]:
                    res[cond][1].append(int(r[ic]) / 1000)
    return res


def proc_cpu(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ  # utime + stime, s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(HERE, '..', '..', 'build'))
    ap.add_argument('--windows', type=int, default=8)
    ap.add_argument('--window', type=float, default=15.0)
    ap.add_argument('--interval', default='100ms')
    ap.add_argument('--scrape', type=float, default=1.0)
    a = ap.parse_args()
    bin_ = os.path.join(a.build, 'vmsampler')
    tmp = tempfile.mkdtemp(prefix='vms-bench-export-')
    ring, run = os.path.join(tmp, 'ring'), os.path.join(tmp, 'run.vms')
    procs = []
    windows = []  # (condition, t_start_ns, t_end_ns) wall time
    exp_cpu, scrapes, exp_secs = 0.0, 0, 0.0
    try:
        s = subprocess.Popen([bin_, '-i', a.interval, '--ring', ring, '-o', run, '-q'])
        procs.append(s)
        while not os.path.exists(ring):
            time.sleep(0.05)
        time.sleep(2)
        for w in range(a.windows):
            cond = 'export' if w % 2 else 'alone'
            t0 = time.time_ns()
            if cond == 'alone':
                time.sleep(a.window)
            else:
                err = open(os.path.join(tmp, 'export.err'), 'w+')
                e = subprocess.Popen([bin_, 'export', '--ring', ring, '--listen', '127.0.0.1:0'], stderr=err)
                procs.append(e)
                port = None
                while port is None:
                    err.seek(0)
                    line = err.read()
                    if 'serving' in line:
                        port = int(line.split('127.0.0.1:')[1].split('/')[0])
                    time.sleep(0.02)
                url = 'http://127.0.0.1:%d/metrics' % port
                c0, w0 = proc_cpu(e.pid), time.monotonic()
                end = time.monotonic() + a.window
                nxt = time.monotonic()
                while time.monotonic() < end:
                    req = urllib.request.Request(url, headers={'Accept': ACCEPT, 'Accept-Encoding': 'gzip'})
                    try:
                        with urllib.request.urlopen(req, timeout=5) as r:
                            r.read()
                            scrapes += 1
                    except OSError:
                        pass
                    nxt += a.scrape
                    time.sleep(max(0.0, nxt - time.monotonic()))
                exp_cpu += proc_cpu(e.pid) - c0
                exp_secs += time.monotonic() - w0
                e.send_signal(signal.SIGTERM)
                e.wait(timeout=10)
                procs.remove(e)
            windows.append((cond, t0 + 1_000_000_000, time.time_ns()))
        s.send_signal(signal.SIGTERM)
        s.wait(timeout=10)
        procs.remove(s)
        res = by_window(bin_, run, windows, ('alone', 'export'))
        print('| condition | frames | tick late p50 | tick late p99 | sampler CPU per tick (mean) | exporter CPU (following the ring + scrapes) |')
        print('|---|---:|---:|---:|---:|---|')
        for cond in ('alone', 'export'):
            late, cpu = res[cond]
            extra = '–'
            if cond == 'export' and scrapes:
                extra = '%.2f ms per scrape, %.2f ms/s (%d scrapes every %.1f s)' % (
                    exp_cpu * 1e3 / scrapes, exp_cpu * 1e3 / exp_secs, scrapes, a.scrape)
            print('| %s | %d | %.0f µs | %.0f µs | %.0f µs | %s |' % (
                cond, len(late), pct(late, 50), pct(late, 99), statistics.mean(cpu), extra))
        print('\n%d windows of %.0f s, alternating, interval %s, %s; load average %s' % (
            a.windows, a.window, a.interval, os.uname().release, open('/proc/loadavg').read().split()[:3]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
