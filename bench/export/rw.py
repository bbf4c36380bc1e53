#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/export/rw.py [--build DIR] [--windows N] [--window S] [--interval I]
[--frames F] [--vms M]: what `vmsampler export --remote-write` costs.

1. The sampler, with and without a pusher attached to its ring.  One
   sampler run (`vmsampler -i I --ring R -o run.vms`, this host's /proc) is
   cut into N windows of S seconds cycling through three conditions:
   "alone" (no reader of the ring), "rw slow" (`vmsampler export --ring R
   --remote-write URL` to a receiver that holds every request 2 s before
   its 204) and "rw dead" (the same to a port where nobody listens:
   connection refused, retried with back-off).  Afterwards `vmsampler dump
   run.vms` gives each frame's own columns, late_ns and self_cpu_ns; per
   condition, over the frames inside its windows (the first second of a
   window left out): tick lateness p50 / p99 and the sampler's CPU per
   tick; and the pusher's own CPU per second (/proc/PID/stat).  Same run,
   alternating, so that the machine's drift is shared.
2. The pusher's cost per frame at 60 VMs: a synthetic run of F frames of a
   host with M VMs (bench/report/report_gen -n F -m M: about 2,400
   columns) pushed with `export --file --no-follow` (the default batch of
   60 frames) to a receiver that answers 204 at once and counts the bytes
   it gets; the exporter's CPU (its rusage) per frame, its samples per
   frame (from the receiver's Content-Length and the number of requests is
   not enough: export --listen is not used here, so samples are read back
   from the file's schema: `vmsampler export --file F --listen` scraped
   once) and bytes on the wire per frame.
Prints Markdown tables; everything started is stopped, nothing installed."""
import argparse
import http.server
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import by_window, pct, proc_cpu  # noqa: E402  (bench/export/run.py)


class Sink:
    """A remote-write receiver that holds each request `delay` seconds and
    answers 204; counts requests and body bytes."""

    def __init__(self, delay=0.0):
        sink = self
        self.delay, self.requests, self.bytes = delay, 0, 0

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def do_POST(self):
                n = int(self.headers['Content-Length'])
                self.rfile.read(n)
                time.sleep(sink.delay)
                sink.requests += 1
                sink.bytes += n
                self.send_response(204)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = 'http://127.0.0.1:%d/api/v1/write' % self.srv.server_address[1]

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def dead_url():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    return 'http://127.0.0.1:%d/api/v1/write' % port


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def sampler_part(a, bin_, tmp, procs):
    ring, run = os.path.join(tmp, 'ring'), os.path.join(tmp, 'run.vms')
    slow = Sink(delay=2.0)
    conds = ('alone', 'rw slow', 'rw dead')
    windows, pcpu, psecs = [], {c: 0.0 for c in conds}, {c: 0.0 for c in conds}
    try:
        s = subprocess.Popen([bin_, '-i', a.interval, '--ring', ring, '-o', run, '-q'])
        procs.append(s)
        while not os.path.exists(ring):
            time.sleep(0.05)
        time.sleep(2)
        for w in range(a.windows):
            cond = conds[w % len(conds)]
            t0 = time.time_ns()
            if cond == 'alone':
                time.sleep(a.window)
            else:
                url = slow.url if cond == 'rw slow' else dead_url()
                e = subprocess.Popen([bin_, 'export', '--ring', ring, '--remote-write', url],
                                     stderr=subprocess.DEVNULL)
                procs.append(e)
                c0, w0 = proc_cpu(e.pid), time.monotonic()
                time.sleep(a.window)
                pcpu[cond] += proc_cpu(e.pid) - c0
                psecs[cond] += time.monotonic() - w0
                stop(e)
                procs.remove(e)
            windows.append((cond, t0 + 1_000_000_000, time.time_ns()))
        stop(s)
        procs.remove(s)
    finally:
        slow.close()
    res = by_window(bin_, run, windows, conds)
    print('| condition | frames | tick late p50 | tick late p99 | sampler CPU per tick (mean) | pusher CPU |')
    print('|---|---:|---:|---:|---:|---:|')
    for cond in conds:
        late, cpu = res[cond]
        extra = '–' if cond == 'alone' else '%.2f ms/s' % (pcpu[cond] * 1e3 / psecs[cond])
        print('| %s | %d | %.0f µs | %.0f µs | %.0f µs | %s |' % (
            cond, len(late), pct(late, 50), pct(late, 99), statistics.mean(cpu), extra))
    print('\n%d windows of %.0f s cycling, interval %s, %s; load average %s' % (
        a.windows, a.window, a.interval, os.uname().release, open('/proc/loadavg').read().split()[:3]))


def series_of(bin_, path):
    """Samples of the file's last frame as a scrape gives them."""
    e = subprocess.Popen([bin_, 'export', '--file', path, '--listen', '127.0.0.1:0'], stderr=subprocess.PIPE,
                         text=True)
    try:
        line = e.stderr.readline()
        port = int(line.split('127.0.0.1:')[1].split('/')[0])
        for _ in range(600):
            try:
                with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=30) as r:
                    body = r.read().decode()
                break
            except OSError:
                time.sleep(0.1)
        return sum(1 for ln in body.splitlines() if ln and not ln.startswith('#'))
    finally:
        stop(e)
        e.stderr.close()


def per_frame_part(a, bin_, tmp):
    gen = os.path.join(a.build, 'report_gen')
    if not os.access(gen, os.X_OK):
        subprocess.run(['ninja', '-C', a.build, 'report_gen'], check=True, stdout=subprocess.DEVNULL)
    f = os.path.join(tmp, 'vms60.vms')
    subprocess.run([gen, '-n', str(a.frames), '-m', str(a.vms), f], check=True, stdout=subprocess.DEVNULL)
    n = series_of(bin_, f)
    sink = Sink()
    try:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([bin_, 'export', '--file', f, '--remote-write', sink.url, '--no-follow'], check=True,
                       stderr=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    finally:
        sink.close()
    print('\n| run | frames | samples per frame (a scrape) | exporter CPU per frame | per sample | '
          'bytes on the wire per frame | requests | wall |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    print('| report_gen -n %d -m %d | %d | %d | %.2f ms | %.0f ns | %.0f B | %d | %.1f s |' % (
        a.frames, a.vms, a.frames, n, cpu * 1e3 / a.frames, cpu * 1e9 / a.frames / n,
        sink.bytes / a.frames, sink.requests, wall))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(HERE, '..', '..', 'build'))
    ap.add_argument('--windows', type=int, default=9)
    ap.add_argument('--window', type=float, default=15.0)
    ap.add_argument('--interval', default='100ms')
    ap.add_argument('--frames', type=int, default=1800)
    ap.add_argument('--vms', type=int, default=60)
    ap.add_argument('--only', choices=('sampler', 'per-frame'))
    a = ap.parse_args()
    bin_ = os.path.join(a.build, 'vmsampler')
    tmp = tempfile.mkdtemp(prefix='vms-bench-rw-')
    procs = []
    try:
        if a.only != 'per-frame':
            sampler_part(a, bin_, tmp, procs)
        if a.only != 'sampler':
            per_frame_part(a, bin_, tmp)
    finally:
        for p in procs:
            stop(p)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
