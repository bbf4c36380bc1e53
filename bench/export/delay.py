#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/export/delay.py [--build DIR] [--frames N] [--interval I] [--poll S]:
the delay from a tick to its value being queryable in Prometheus, pull and
push, in one run.

One sampler (`vmsampler -i I --ring R`, this host's /proc) and two Debian
Prometheus 2.42 servers on 127.0.0.1 (free ports, temporary TSDBs):
  - pull: `vmsampler export --ring R --listen 127.0.0.1:0`, scraped by the
    first Prometheus with scrape_interval 1s (Prometheus' own default
    scrape offset within the second; nothing is aligned by hand);
  - push: `vmsampler export --ring R --remote-write URL` into the second
    Prometheus (--web.enable-remote-write-receiver).
A poller asks each Prometheus' HTTP API every --poll seconds for the
instant value of vmsampler_frame_timestamp_seconds (the frame's wall time:
its tick, taken before it reads /proc).  For each frame, its delay is the
wall time when a query's answer first carried that frame's timestamp,
minus the frame's tick time (the answer's arrival: the poll period and the
query's own time are included, an upper bound).  Frames a scrape never saw
(the next frame came first) are counted, not timed.  After N frames seen
by the push side: median, p99 and max of each.  Prints a Markdown table;
everything started is stopped, nothing installed."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests'))
from run import pct  # noqa: E402  (bench/export/run.py)
from test_export import free_port  # noqa: E402  (tests/test_export.py)


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


class Procs:
    """What a benchmark starts (stderr to DIR/NAME.log), all stopped by stop()."""

    def __init__(self, tmp, env=None):
        self.tmp, self.env, self.procs = tmp, env, []

    def start(self, args, name):
        log = open(os.path.join(self.tmp, name + '.log'), 'w+')
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log, env=self.env)
        self.procs.append((p, log, name))
        return p, log

    def export(self, bin_, ring, name):
        """`vmsampler export --ring RING --listen 127.0.0.1:0`: (process, port)"""
        p, log = self.start([bin_, 'export', '--ring', ring, '--listen', '127.0.0.1:0'], name)

        def port():
            log.seek(0)
            m = re.search(r'serving http://127\.0\.0\.1:(\d+)/metrics', log.read())
            return int(m.group(1)) if m else None
        return p, wait_for(port, 60, 'export to listen')

    def exited(self):
        """one line for each that exited, with the end of its log"""
        out = []
        for p, log, name in self.procs:
            if p.poll() is not None:
                log.seek(0)
                out.append('%s exited %d: %s' % (name, p.returncode, log.read()[-500:]))
        return out

    def stop(self):
        for p, _, _ in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p, _, _ in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = pred()
            if v:
                return v
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError('timed out waiting for ' + what)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(HERE, '..', '..', 'build'))
    ap.add_argument('--frames', type=int, default=60)
    ap.add_argument('--interval', default='1s')
    ap.add_argument('--poll', type=float, default=0.02)
    a = ap.parse_args()
    bin_ = os.path.join(a.build, 'vmsampler')
    prom = shutil.which('prometheus')
    if not prom:
        print('prometheus is not installed (Debian package prometheus)', file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix='vms-bench-delay-')
    procs = Procs(tmp)
    start = procs.start

    try:
        ring = os.path.join(tmp, 'ring')
        start([bin_, '-i', a.interval, '--ring', ring, '-q'], 'sampler')
        wait_for(lambda: os.path.exists(ring), 30, 'the ring')

        _, port = procs.export(bin_, ring, 'export-pull')

        ports = {'pull': free_port(), 'push': free_port()}
        cfg = os.path.join(tmp, 'pull.yml')
        with open(cfg, 'w') as f:
            f.write('global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n'
                    'scrape_configs:\n  - job_name: vmsampler\n    static_configs:\n'
                    '      - targets: ["127.0.0.1:%d"]\n' % port)
        empty = os.path.join(tmp, 'push.yml')
        with open(empty, 'w') as f:
            f.write('global:\n  scrape_interval: 1m\n')
        for side, conf, extra in (('pull', cfg, []), ('push', empty, ['--web.enable-remote-write-receiver'])):
            start([prom, '--config.file=' + conf, '--storage.tsdb.path=' + os.path.join(tmp, 'tsdb-' + side),
                   '--web.listen-address=127.0.0.1:%d' % ports[side]] + extra, 'prometheus-' + side)
        base = {s: 'http://127.0.0.1:%d' % p for s, p in ports.items()}
        for s in base:
            wait_for(lambda: get(base[s] + '/-/ready')[0] == 200, 90, 'prometheus (%s) to be ready' % s)
        start([bin_, 'export', '--ring', ring, '--remote-write', base['push'] + '/api/v1/write'], 'export-push')

        first_seen = {'pull': {}, 'push': {}}  # frame time (s) -> wall time its value was first answered
        stop = threading.Event()
        q = '/api/v1/query?' + urllib.parse.urlencode({'query': 'vmsampler_frame_timestamp_seconds'})

        def poller(side):
            while not stop.is_set():
                t_next = time.monotonic() + a.poll
                try:
                    st, body = get(base[side] + q)
                    now = time.time()
                    res = json.loads(body)['data']['result']
                    if st == 200 and res:
                        ft = float(res[0]['value'][1])
                        first_seen[side].setdefault(ft, now)
                except (OSError, ValueError, KeyError):
                    pass
                time.sleep(max(0.0, t_next - time.monotonic()))

        ths = [threading.Thread(target=poller, args=(s,), daemon=True) for s in ('pull', 'push')]
        for t in ths:
            t.start()
        # the first frames seen only tell when the poller started: left out
        wait_for(lambda: len(first_seen['push']) >= 3 and len(first_seen['pull']) >= 3, 120, 'first frames')
        t0 = time.time() + 1
        wait_for(lambda: sum(1 for ft in first_seen['push'] if ft > t0) >= a.frames,
                 a.frames * 3 + 60, '%d frames' % a.frames)
        t1 = max(first_seen['push'])
        stop.set()
        for t in ths:
            t.join(timeout=10)
        for line in procs.exited():
            print(line, file=sys.stderr)
        if procs.exited():
            return 1
        # every frame of the window, from the push side (it gets them all)
        frames = sorted(ft for ft in first_seen['push'] if t0 < ft <= t1)
        print('| path | frames | seen | delay median | delay p99 | delay max |')
        print('|---|---:|---:|---:|---:|---:|')
        for side, label in (('pull', 'pull: export --listen, scrape_interval 1s'),
                            ('push', 'push: export --remote-write')):
            d = [(first_seen[side][ft] - ft) * 1e3 for ft in frames if ft in first_seen[side]]
            print('| %s | %d | %d | %.0f ms | %.0f ms | %.0f ms |' % (
                label, len(frames), len(d), pct(d, 50), pct(d, 99), max(d)))
        print('\ninterval %s, poll every %.0f ms, Prometheus %s, %s; load average %s' % (
            a.interval, a.poll * 1e3, subprocess.run([prom, '--version'], capture_output=True, text=True)
            .stdout.split()[2], os.uname().release, open('/proc/loadavg').read().split()[:3]))
    finally:
        procs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
