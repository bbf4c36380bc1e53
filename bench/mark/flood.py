#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/mark/flood.py - does a flood of marks disturb the tick?

Runs the sampler (the build's binary, a shared ring, --control) twice in
the same run, alternating, REPS times each: quiet, and with a client
sending 1,000 marks per second to its control socket (most are refused:
64 per interval are taken).  From each run's .vms: the ticks' lateness
(late_ns: p50, p99, max) and the sampler's own CPU per frame
(self_cpu_ns, median).  Prints a Markdown table and the ratio flood/quiet.

    python3 bench/mark/flood.py [BUILD_DIR] [--interval 100ms] [--frames 300] [--reps 3]
"""
import argparse
import csv
import io
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def flood(ctl, stop, rate, counts):
    period = 1.0 / rate
    nxt = time.monotonic()
    while not stop.is_set():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(ctl)
            s.send(b'flood')
            a = s.recv(128)
            counts['ok' if a.startswith(b'ok') else 'refused'] += 1
        except OSError:
            counts['failed'] += 1
        finally:
            s.close()
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)


def one(binary, tmp, interval, frames, rate):
    out = os.path.join(tmp, 'run.vms')
    ring = os.path.join(tmp, 'ring')
    for f in (out, ring, ring + '.ctl'):
        if os.path.exists(f):
            os.unlink(f)
    t0 = time.monotonic()
    p = subprocess.Popen([binary, '-q', '-i', interval, '-n', str(frames), '-o', out, '--ring', ring])
    while not os.path.exists(ring + '.ctl'):
        if p.poll() is not None or time.monotonic() - t0 > 30:
            raise SystemExit('%s made no control socket (an old build?)' % binary)
        time.sleep(0.01)
    stop = threading.Event()
    counts = {'ok': 0, 'refused': 0, 'failed': 0}
    t = None
    if rate:
        t = threading.Thread(target=flood, args=(ring + '.ctl', stop, rate, counts))
        t.start()
    p.wait()
    stop.set()
    if t:
        t.join()
    dump = subprocess.run([binary, 'dump', out], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(dump)))[5:]  # past the start
    late = [int(r['late_ns']) for r in rows]
    cpu = [int(r['self_cpu_ns']) for r in rows]
    return late, cpu, counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build', nargs='?', default='build')
    ap.add_argument('--interval', default='100ms')
    ap.add_argument('--frames', type=int, default=300)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--rate', type=int, default=1000)
    a = ap.parse_args()
    binary = os.path.abspath(os.path.join(a.build, 'vmsampler'))
    tmp = tempfile.mkdtemp(prefix='vms-flood.')
    res = {'quiet': ([], [], []), 'flood': ([], [], [])}
    try:
        for _ in range(a.reps):
            for name, rate in (('quiet', 0), ('flood', a.rate)):
                late, cpu, counts = one(binary, tmp, a.interval, a.frames, rate)
                res[name][0].extend(late)
                res[name][1].extend(cpu)
                res[name][2].append(counts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('| run (%d x %d frames at %s) | late p50 µs | late p99 µs | late max µs | self CPU/frame median µs | marks sent (taken/refused) |'
          % (a.reps, a.frames, a.interval))
    print('|---|---|---|---|---|---|')
    for name in ('quiet', 'flood'):
        late, cpu, counts = res[name]
        ok = sum(c['ok'] for c in counts)
        ref = sum(c['refused'] for c in counts)
        print('| %s | %.0f | %.0f | %.0f | %.1f | %s |' % (
            name, pct(late, 50) / 1e3, pct(late, 99) / 1e3, max(late) / 1e3, statistics.median(cpu) / 1e3,
            '%d (%d/%d)' % (ok + ref, ok, ref) if name == 'flood' else '-'))
    q, f = res['quiet'], res['flood']
    print()
    print('flood/quiet: late p50 %.2f, late p99 %.2f, self CPU per frame %.2f' % (
        pct(f[0], 50) / max(1, pct(q[0], 50)), pct(f[0], 99) / max(1, pct(q[0], 99)),
        statistics.median(f[1]) / max(1, statistics.median(q[1]))))


if __name__ == '__main__':
    main()
