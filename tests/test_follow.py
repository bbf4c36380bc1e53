#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Following a file that ends or is replaced (issue 23, item 6), with the
real sampler on this host's /proc (host sources only, 100 ms) and the real
`vmsampler export --file` (127.0.0.1, a free port) and `vmsampler tail`:
  - rotation by size and by time: export started on the run's first file
    goes on in the next ones; a frame of a later file appears on /metrics
    with the values `vmsampler dump` of that file has for it
    (node_context_switches_total = stat.ctxt, node_load1 = load.1m), and
    tail prints every frame of every file once, in order (the dumps of the
    files, concatenated);
  - the sampler stopped: within a bounded time /metrics (still 200) says
    vmsampler_export_source_up 0 with the age of the last frame, and
    serves none of the sampler's series (no stale values as fresh);
  - the sampler restarted with the same -o (no rotation): the sampler
    rewrites the file in place (same inode, a new file header, from seq
    1); export goes on with the new run's frames (values as dump of the
    new file), no CRC error, no exit; tail prints both runs.
Each of these failed before: export and tail stayed on the first file
forever (up to date in appearance: HTTP 200, the old frame), and the
rewritten file ended them with "record header CRC mismatch"."""
import csv
import http.server
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
INTERVAL = '100ms'
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_export import stop_all, wait_for  # noqa: E402
NAME = re.compile(r'^run-\d{8}T\d{6}Z(_\d{3})?\.vms$')


def host_only():
    ver = subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout
    return ('sources:\n  netdev: {include: [lo]}\n' +
            ''.join('  %s: {enabled: false}\n' % s for s in ('libvirt', 'perf') if '%s: yes' % s in ver))


def export_built():
    ver = subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout
    return 'export: yes' in ver


def scrape(port):
    """(status, {name: [(labels, value)]}) of /metrics"""
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=10) as r:
            status, body = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {}
    except urllib.error.URLError as e:
        raise AssertionError('export does not answer (did it exit?): %s' % e)
    out = {}
    for line in body.splitlines():
        if not line or line.startswith('#'):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)', line)
        assert m, line
        out.setdefault(m.group(1), []).append((m.group(2) or '', float(m.group(3))))
    return status, out


def gauge(metrics, name):
    v = metrics.get(name)
    return v[0][1] if v else None


def rw_built():
    ver = subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout
    return 'remote write: yes' in ver


class Receiver:
    """a remote-write receiver on 127.0.0.1 (a free port) that takes every
    request (204) and counts them"""
    def __init__(self):
        rec = self
        self.requests = 0

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers['Content-Length']))
                rec.requests += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass
        self.srv = http.server.HTTPServer(('127.0.0.1', 0), H)
        self.url = 'http://127.0.0.1:%d/api/v1/write' % self.srv.server_address[1]
        self.t = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.t.start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def dump(path):
    """{seq: row} of `vmsampler dump path` (what is there now)"""
    out = subprocess.run([BIN, 'dump', path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(out.stdout.splitlines()))
    return {int(r[0]): dict(zip(rows[0], r)) for r in rows[1:]}


class Follow(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='vms-follow-')
        self.conf = os.path.join(self.tmp, 'c.yaml')
        with open(self.conf, 'w') as f:
            f.write(host_only())
        self.out = os.path.join(self.tmp, 'run.vms')
        self.procs = []

    def tearDown(self):
        stop_all(self.procs)
        for p in self.procs:
            p.err.close()
            p.out.close()
        subprocess.run(['rm', '-rf', self.tmp])

    def start(self, args, name):
        err = open(os.path.join(self.tmp, name + '.err'), 'w+')
        out = open(os.path.join(self.tmp, name + '.out'), 'w+')
        p = subprocess.Popen(args, stdout=out, stderr=err)
        p.err, p.out = err, out
        self.procs.append(p)
        return p

    def sampler(self, *extra):
        return self.start([BIN, '-c', self.conf, '-i', INTERVAL, '-o', self.out] + list(extra),
                          'sampler%d' % len(self.procs))

    def export(self, path, *extra):
        p = self.start([BIN, 'export', '--file', path, '--listen', '127.0.0.1:0'] + list(extra), 'export')

        def port():
            p.err.seek(0)
            text = p.err.read()
            self.assertIsNone(p.poll(), 'export exited: ' + text)
            m = re.search(r'serving http://127\.0\.0\.1:(\d+)/metrics', text)
            return int(m.group(1)) if m else None
        return p, wait_for(port, what='export to listen')

    def tailed(self, tail):
        """(seq, last column) of each row tail printed so far"""
        tail.out.seek(0)
        rows = [r for r in csv.reader(tail.out.read().splitlines()) if r and r[0] != 'seq']
        return [(int(r[0]), r[-1]) for r in rows]

    def files(self):
        return sorted(n for n in os.listdir(self.tmp) if NAME.match(n))

    def stderr_of(self, p):
        p.err.seek(0)
        return p.err.read()

    def check_frame(self, port, paths, seqs):
        """a scrape whose frame is one of seqs, its values those of the
        dump of the one of paths() that holds it"""
        def got():
            st, m = scrape(port)
            seq = gauge(m, 'vmsampler_frame_sequence')
            return (m, int(seq)) if st == 200 and seq is not None and int(seq) in seqs else None
        m, seq = wait_for(got, 20, 'a frame (seqs %d..) on /metrics' % min(seqs))

        def row_of():
            for path in paths():
                r = dump(path).get(seq)
                if r:
                    return r
        row = wait_for(row_of, 10, 'frame %d in the dumps' % seq)
        self.assertEqual(gauge(m, 'node_context_switches_total'), float(row['stat.ctxt']))
        self.assertAlmostEqual(gauge(m, 'node_load1'), float(row['load.1m']), places=6)
        self.assertEqual(gauge(m, 'vmsampler_export_source_up'), 1)
        return seq

    def rotation(self, when):
        s = self.sampler('--rotate', when)
        first = wait_for(lambda: self.files(), 10, 'the first file')[0]
        ex, port = self.export(os.path.join(self.tmp, first))
        tail = self.start([BIN, 'tail', '-c', 'stat.ctxt', os.path.join(self.tmp, first)], 'tail')
        wait_for(lambda: len(self.files()) >= 3, 30, 'three files')
        # a frame of the third file or a later one (the first two closed)
        done = max(dump(os.path.join(self.tmp, self.files()[1])))
        self.check_frame(port, lambda: [os.path.join(self.tmp, n) for n in self.files()[2:]],
                         set(range(done + 1, done + 100000)))
        s.send_signal(signal.SIGTERM)
        self.assertEqual(s.wait(timeout=20), 0)
        # tail: every frame of every file once, in order, as dump has them
        want = []
        for n in self.files():
            d = dump(os.path.join(self.tmp, n))
            want += [(seq, d[seq]['stat.ctxt']) for seq in sorted(d)]

        def tailed():
            return self.tailed(tail)
        wait_for(lambda: len(tailed()) >= len(want), 10, 'tail to print every frame')
        self.assertEqual(tailed(), want)
        self.assertEqual(want[0][0], 1)
        self.assertEqual([w[0] for w in want], list(range(1, len(want) + 1)))
        self.assertIsNone(ex.poll(), self.stderr_of(ex))
        self.assertIn('continuing in', self.stderr_of(ex))

    def test_rotate_size(self):
        self.rotation('8K')

    def test_rotate_time(self):
        self.rotation('1s')

    def test_remote_write_rotation(self):
        """remote write of a rotated file goes on in the next files: every
        frame of every file acknowledged (vmsampler_export_rw_frames_total
        against the dumps of the files)"""
        if not rw_built():
            self.skipTest('no remote write in this build')
        rec = Receiver()
        try:
            s = self.sampler('--rotate', '8K')
            first = wait_for(lambda: self.files(), 10, 'the first file')[0]
            ex, port = self.export(os.path.join(self.tmp, first), '--remote-write', rec.url, '--rw-batch', '5')
            wait_for(lambda: len(self.files()) >= 3, 30, 'three files')
            s.send_signal(signal.SIGTERM)
            self.assertEqual(s.wait(timeout=20), 0)
            total = sum(len(dump(os.path.join(self.tmp, n))) for n in self.files())
            wait_for(lambda: gauge(scrape(port)[1], 'vmsampler_export_rw_frames_total') == total, 15,
                     'remote write to deliver all %d frames' % total)
            self.assertGreater(rec.requests, 0)
            self.assertIsNone(ex.poll(), self.stderr_of(ex))
        finally:
            rec.close()

    def test_sampler_stopped_is_stale(self):
        s = self.sampler()
        wait_for(lambda: os.path.exists(self.out) and os.path.getsize(self.out) > 0, 10, 'the file')
        ex, port = self.export(self.out)
        wait_for(lambda: gauge(scrape(port)[1], 'vmsampler_export_source_up') == 1, 10, 'source up')
        s.send_signal(signal.SIGTERM)
        self.assertEqual(s.wait(timeout=20), 0)
        stopped = time.monotonic()
        # 3 intervals, at least 1 s: well within 5 s
        wait_for(lambda: gauge(scrape(port)[1], 'vmsampler_export_source_up') == 0, 5, 'source up 0')
        self.assertLess(time.monotonic() - stopped, 5)
        st, m = scrape(port)
        self.assertEqual(st, 200)
        self.assertEqual(gauge(m, 'vmsampler_export_source_up'), 0)
        self.assertGreaterEqual(gauge(m, 'vmsampler_export_last_frame_age_seconds'), 0.3)
        sampler_series = [n for n in m if not n.startswith('vmsampler_export_')]
        self.assertEqual(sampler_series, [], 'stale series still served')
        self.assertIsNone(ex.poll())

    def test_sampler_restarted_same_output(self):
        s = self.sampler()
        wait_for(lambda: len(dump(self.out)) >= 5 if os.path.exists(self.out) else False, 10, 'frames')
        ex, port = self.export(self.out)
        tail = self.start([BIN, 'tail', '-c', 'stat.ctxt', self.out], 'tail')
        wait_for(lambda: len(dump(self.out)) >= 25, 20, 'frames')
        s.send_signal(signal.SIGTERM)
        self.assertEqual(s.wait(timeout=20), 0)
        first_run = dump(self.out)
        ino = os.stat(self.out).st_ino
        with open(self.out, 'rb') as f:
            head = f.read(32)
        # export read the stopped run to its end
        wait_for(lambda: gauge(scrape(port)[1], 'vmsampler_frame_sequence') == max(first_run), 5,
                 'the last frame of the first run')
        # and so did tail: the new run truncates the file, and what a
        # reader had not read by then is gone (the sampler's -o is its own)
        wait_for(lambda: len(self.tailed(tail)) >= len(first_run), 10, 'tail to print the first run')
        s2 = self.sampler()
        def head_now():
            with open(self.out, 'rb') as f:
                return f.read(32)
        # what the sampler does: the same file, rewritten from its start
        # with a new file header (its creation time)
        wait_for(lambda: len(head_now()) == 32 and head_now() != head, 10, 'the new run to write')
        self.assertEqual(os.stat(self.out).st_ino, ino)
        # a frame of the new run (seq from 1 again, fewer than the old run
        # had) on /metrics with the values the new file holds
        wait_for(lambda: len(dump(self.out)) >= 10, 20, 'frames of the new run')
        new_seqs = set(range(5, len(first_run)))
        self.check_frame(port, lambda: [self.out], new_seqs)
        self.assertIsNone(ex.poll(), self.stderr_of(ex))
        self.assertNotIn('CRC', self.stderr_of(ex))
        self.assertIn('rewritten', self.stderr_of(ex))
        s2.send_signal(signal.SIGTERM)
        self.assertEqual(s2.wait(timeout=20), 0)
        second_run = dump(self.out)
        want = ([(q, first_run[q]['stat.ctxt']) for q in sorted(first_run)] +
                [(q, second_run[q]['stat.ctxt']) for q in sorted(second_run)])

        def tailed():
            return self.tailed(tail)
        wait_for(lambda: len(tailed()) >= len(want), 10, 'tail to print both runs')
        self.assertEqual(tailed(), want)
        self.assertIsNone(tail.poll(), self.stderr_of(tail))


if __name__ == '__main__':
    if not os.access(BIN, os.X_OK):
        print('SKIP: no vmsampler binary at ' + BIN, file=sys.stderr)
        sys.exit(77)
    if not export_built():
        print('SKIP: this build has no export (libmicrohttpd)', file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2)
