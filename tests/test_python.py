#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python loader (python/vmsampler.py) and `vmsampler tail` against the
real binary:
  - the pure-Python decoder returns the numbers `vmsampler dump` prints,
    value for value;
  - load('run.vms') and load(dump's CSV) give the same DataFrame (and the
    same rows without pandas);
  - Ring(path).follow() sees every frame of a running `vmsampler --ring`,
    the same numbers as the .vms it wrote, and ends when the writer exits;
  - a damaged stream: FormatError naming the record and offset dump
    names, every frame before it returned;
  - `vmsampler tail RING --columns ...` prints, live, the rows dump prints
    for those columns."""
import csv
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
sys.path.insert(0, os.path.join(SRC, 'python'))
import vmsampler  # noqa: E402

try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


FIXTURES = os.environ.get('VMS_FIXTURES', os.path.join(SRC, 'tests', 'fixtures'))
PROC_ROOT = None


def setUpModule():
    """The sampler reads a proc root whose stat and loadavg are the live
    ones (changing every tick, so the delta encoding is exercised) and whose
    diskstats and net/dev are fixtures: on the live /proc, a guest's tap or
    a loop device appearing mid-run (another test, CI's guests) would start
    a new schema generation and these comparisons would be about that."""
    global PROC_ROOT
    PROC_ROOT = tempfile.mkdtemp(prefix='vms-pyroot.')
    os.symlink('/proc/stat', os.path.join(PROC_ROOT, 'stat'))
    os.symlink('/proc/loadavg', os.path.join(PROC_ROOT, 'loadavg'))
    os.mkdir(os.path.join(PROC_ROOT, 'net'))
    for src, dst in (('roots/sysstat-root1-discard-short-line/diskstats', 'diskstats'),
                     ('roots/sysstat-root1-virbr/net/dev', 'net/dev')):
        with open(os.path.join(FIXTURES, src), 'rb') as fi, \
                open(os.path.join(PROC_ROOT, dst), 'wb') as fo:
            fo.write(fi.read())


def tearDownModule():
    subprocess.run(['rm', '-rf', PROC_ROOT])


def sampler(*args):
    """The sampler's command line on the test proc root."""
    return [BIN, '-q', '--proc-root', PROC_ROOT] + list(args)


def fmt(raw, scale):
    """A raw value as vmsampler's CSV prints it."""
    if raw is None:
        return ''
    if not scale:
        return str(raw)
    return '%d.%0*d' % (raw // 10 ** scale, scale, raw % 10 ** scale)


def dump_rows(path, *extra):
    out = subprocess.run([BIN, 'dump', path] + list(extra), capture_output=True, text=True)
    rows = list(csv.reader(io.StringIO(out.stdout)))
    return out.returncode, rows, out.stderr


class Loader(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        os.environ['TZ'] = 'UTC'

    def tearDown(self):
        subprocess.run(['rm', '-rf', self.tmp])

    def p(self, name):
        return os.path.join(self.tmp, name)

    def sample(self, name, n=30, *extra):
        subprocess.run(sampler('-i', '10ms', '-n', str(n), '-o', self.p(name), *extra), check=True)

    def test_decoder_matches_dump(self):
        self.sample('run.vms', 40)
        rc, rows, err = dump_rows(self.p('run.vms'))
        self.assertEqual(rc, 0, err)
        header, body = rows[0], rows[1:]
        frames = list(vmsampler.read_frames(self.p('run.vms')))
        self.assertEqual(len(frames), 40)
        self.assertEqual(len(body), 40)
        checked = 0
        for f, row in zip(frames, body):
            d = dict(zip(header, row))
            self.assertEqual(d['seq'], str(f.seq))
            self.assertEqual(d['t_mono_ns'], str(f.t_mono_ns))
            self.assertEqual(d['flags'], str(f.flags))
            for c, v in zip(f.schema.cols, f.values):
                self.assertEqual(d[c.name], fmt(v, c.scale), c.name)
                checked += 1
        self.assertGreater(checked, 40 * 10)

    def test_load_vms_equals_load_csv(self):
        self.sample('run.vms', 25)
        with open(self.p('run.csv'), 'w') as fh:
            subprocess.run([BIN, 'dump', self.p('run.vms')], stdout=fh, check=True)
        a = vmsampler.load(self.p('run.vms'), pandas=False)
        b = vmsampler.load(self.p('run.csv'), pandas=False)
        self.assertEqual(len(a), 25)
        for x, y in zip(a, b):
            y = {k: v for k, v in y.items() if k != 'time'}
            x = {k: v for k, v in x.items() if k != 't_real_ns'}
            self.assertEqual(x, y)
        if not HAVE_PANDAS:
            print('pandas not installed: DataFrame comparison not run', file=sys.stderr)
            return
        import pandas as pd
        da = vmsampler.load(self.p('run.vms'))
        db = vmsampler.load(self.p('run.csv'))
        self.assertEqual(da.shape[0], 25)
        pd.testing.assert_frame_equal(da, db, check_dtype=False)
        self.assertEqual(str(da['cpu.all.user'].dtype), 'UInt64')
        self.assertTrue(da.index.is_monotonic_increasing)

    def test_damaged_stream(self):
        self.sample('run.vms', 30)
        with open(self.p('run.vms'), 'rb') as fh:
            data = bytearray(fh.read())
        data[len(data) // 2] ^= 0x10
        with open(self.p('bad.vms'), 'wb') as fh:
            fh.write(data)
        rc, rows, err = dump_rows(self.p('bad.vms'))
        self.assertEqual(rc, 1)
        m = re.search(r'record (\d+) at offset (\d+)', err)
        self.assertIsNotNone(m, err)
        got = []
        with self.assertRaises(vmsampler.FormatError) as cm:
            for f in vmsampler.read_frames(self.p('bad.vms')):
                got.append(f)
        self.assertEqual(cm.exception.record, int(m.group(1)))
        self.assertEqual(cm.exception.offset, int(m.group(2)))
        self.assertEqual(len(got), len(rows) - 1)

    def wait_for(self, path):
        for _ in range(500):
            if os.path.exists(path):
                return
            time.sleep(0.01)
        self.fail('%s never appeared' % path)

    def test_ring_follow_every_frame(self):
        ring = self.p('ring')
        proc = subprocess.Popen(sampler('-i', '10ms', '-n', '80', '--ring', ring, '-o', self.p('r.vms')))
        self.wait_for(ring)
        r = vmsampler.Ring(ring)
        t0 = time.monotonic()
        seen = []
        for f in r.follow():
            seen.append(f)
            self.assertLess(time.monotonic() - t0, 30)
        proc.wait()
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(r.gone, 'exited')
        self.assertEqual(r.missed, 0)
        self.assertEqual([f.seq for f in seen], list(range(1, 81)))
        ref = list(vmsampler.read_frames(self.p('r.vms')))
        self.assertEqual(len(ref), 80)
        for a, b in zip(seen, ref):
            self.assertEqual(a.values, b.values)
            self.assertEqual(a.schema.names, b.schema.names)
            self.assertEqual(a.t_real_ns, b.t_real_ns)
        # a finished ring still loads: its last 64 frames (less those of a
        # generation whose schema left the ring's schema area, if the set
        # of disks or interfaces changed during the run)
        snap = vmsampler.Ring(ring)
        rows = list(snap.frames())
        self.assertEqual(len(rows) + snap.missed, 64)
        self.assertEqual(rows[-1].seq, 80)
        for f in rows:
            self.assertEqual(f.values, ref[f.seq - 1].values)
        self.assertEqual(len(vmsampler.load(ring, pandas=False)), len(rows))

    def test_tail_live(self):
        ring = self.p('ring')
        proc = subprocess.Popen(sampler('-i', '10ms', '-n', '50', '--ring', ring, '-o', self.p('t.vms')))
        self.wait_for(ring)
        t = subprocess.run([BIN, 'tail', ring, '--columns', 'cpu.all.*,load.*'], capture_output=True,
                           text=True, timeout=60)
        proc.wait()
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn('exited', t.stderr)
        rows = list(csv.reader(io.StringIO(t.stdout)))
        header, body = rows[0], rows[1:]
        self.assertTrue(all(re.match(r'(cpu\.all\.|load\.)', h) for h in header[9:]), header)
        rc, drows, err = dump_rows(self.p('t.vms'))
        dh, dbody = drows[0], drows[1:]
        self.assertEqual(len(dbody), 50)
        # tail attached after the first frames; it printed the ones the ring held
        first = int(body[0][0])
        self.assertEqual([int(r[0]) for r in body], list(range(first, 51)))
        for row in body:
            d = dict(zip(dh, dbody[int(row[0]) - 1]))
            for h, v in zip(header, row):
                self.assertEqual(d[h], v, h)
        # rates: the same as dump --rates for those columns
        t = subprocess.run([BIN, 'tail', ring, '--no-follow', '--rates', '--columns', 'cpu.all.%*'],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(t.returncode, 0, t.stderr)
        rows = list(csv.reader(io.StringIO(t.stdout)))
        rc, drows, err = dump_rows(self.p('t.vms'), '--rates')
        dh = drows[0]
        dmap = {r[0]: dict(zip(dh, r)) for r in drows[1:]}
        self.assertGreater(len(rows), 10)
        for row in rows[1:]:
            d = dmap[row[0]]
            for h, v in zip(rows[0], row):
                if h != 'rate_flags':  # tail starts mid-run: its first row has no gap flag
                    self.assertEqual(d[h], v, h)

    def test_tail_sigint_and_writer_killed(self):
        import signal
        ring = self.p('ring')
        writer = subprocess.Popen(sampler('-i', '10ms', '--ring', ring, '-o', '/dev/null'))
        self.wait_for(ring)
        # SIGINT: a clean stop, exit 0, the rows so far
        tail = subprocess.Popen([BIN, 'tail', ring, '-c', 'load.1m'], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        tail.send_signal(signal.SIGINT)
        out, err = tail.communicate(timeout=10)
        self.assertEqual(tail.returncode, 0, err)
        self.assertGreater(len(out.splitlines()), 5)
        # the writer dies: tail reads what is left, says so, exits 1, soon
        tail = subprocess.Popen([BIN, 'tail', ring, '--new'], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        writer.kill()
        writer.wait()
        t0 = time.monotonic()
        err = tail.communicate(timeout=20)[1]
        self.assertEqual(tail.returncode, 1, err)
        self.assertIn('died', err)
        self.assertLess(time.monotonic() - t0, 10)
        # its ring is stale now: a new sampler replaces it
        r = subprocess.run(sampler('-i', '10ms', '-n', '3', '--ring', ring, '-o', '/dev/null'),
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_ring_creation_refused(self):
        target = self.p('precious')
        with open(target, 'w') as fh:
            fh.write('keep me\n')
        os.symlink(target, self.p('link'))
        cases = [(self.p('link'), 'symbolic link'), (target, 'not a vmsampler ring')]
        ring = self.p('ring')
        live = subprocess.Popen(sampler('-i', '10ms', '--ring', ring, '-o', '/dev/null'))
        try:
            self.wait_for(ring)
            cases.append((ring, 'running vmsampler (pid %d)' % live.pid))
            for path, why in cases:
                r = subprocess.run(sampler('-n', '1', '--ring', path, '-o', '/dev/null'), capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 2, path)  # a refusal: a configuration error
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(why, r.stderr)
        finally:
            live.terminate()
            live.wait()
        with open(target) as fh:
            self.assertEqual(fh.read(), 'keep me\n')
        self.assertEqual(os.stat(ring).st_mode & 0o777, 0o640)


if __name__ == '__main__':
    unittest.main(verbosity=2)
