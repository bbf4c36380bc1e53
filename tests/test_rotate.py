#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rotate, keep and compress (issue 13), against the real binary on this
host's /proc, its files read back by `vmsampler dump|report|tail`, the
Python loader and Debian's zstd command (an independent decompressor):
  - by time (binary) and by size (CSV): names STEM-YYYYmmddTHHMMSSZ.EXT
    that sort in the order written and name each file's first frame's
    second (UTC); every file decodes on its own (dump, a CSV header at each
    start); the dumps of all files, concatenated, are seqs 1..N once each,
    with lost_frames 0; size: each file ends at the first frame boundary
    at or past the size;
  - keep by total size and by age deletes the oldest files of the
    output's own pattern only (other files in the directory stay), never
    the open one;
  - compress zstd: only .zst are left, each equal to what zstd -d makes
    of it, and dump (also --rates), report, tail --no-follow and the
    Python loader read the .zst exactly as the decompressed file; a torn
    .zst is reported as one (dump exit 0 with a warning, the loader a
    FormatError), damaged compressed data as damage (exit 1), never a
    crash; a previous run's uncompressed leftover is compressed at start
    and its temporary file removed;
  - SIGHUP with rotation on reopens the file being written by its name
    (logrotate's mv + HUP), no frame lost or written twice;
  - configuration errors (rotate to stdout, keep/compress without
    rotate) are one line and exit 2."""
import calendar
import csv
import glob
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
sys.path.insert(0, os.path.join(SRC, 'python'))
import vmsampler  # noqa: E402



def host_only():
    """A configuration of the host sources only (libvirt and perf off,
    where the build has them), with the loopback interface only: the
    sizes these tests rotate at (8K) hold a few frames whatever the host
    has (a fresh CI run beside 60 guests had 60 taps more, a CSV header
    above 8K, and failed test_size_csv and test_keep_size)."""
    ver = subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout
    return ('sources:\n  netdev: {include: [lo]}\n' +
            ''.join('  %s: {enabled: false}\n' % s for s in ('libvirt', 'perf') if '%s: yes' % s in ver))
NAME = re.compile(r'^run-(\d{8}T\d{6}Z)(_\d{3})?\.(vms|csv)(\.zst)?$')


def zstd_built():
    out = subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout
    return 'zstd: yes' in out


def run(*args, **kw):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120, **kw)


def seqs_of_dump(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows and rows[0][:2] == ['seq', 'time'], rows[:1]
    i = rows[0].index('lost_frames')
    return [int(r[0]) for r in rows[1:]], [int(r[i]) for r in rows[1:]]


class Rotate(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix='vms-rotate-')
        self.conf = os.path.join(self.d, 'host.yaml')
        with open(self.conf, 'w') as f:
            f.write(host_only())
        self.out = os.path.join(self.d, 'out')
        os.mkdir(self.out)
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.d, ignore_errors=True)

    def sample(self, *args):
        r = run('-c', self.conf, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def files(self, ext=None):
        names = sorted(n for n in os.listdir(self.out) if NAME.match(n) and (ext is None or NAME.match(n).group(3) == ext))
        return [os.path.join(self.out, n) for n in names]

    def dump(self, path, *args):
        r = run('dump', path, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, '', path)
        return r.stdout

    def check_series(self, files, n):
        """Each file decodes alone; together: seqs 1..n once, none lost."""
        allseq, alllost = [], []
        for f in files:
            s, lost = seqs_of_dump(self.dump(f))
            self.assertTrue(s, f)
            self.assertEqual(s, list(range(s[0], s[0] + len(s))), f)
            allseq += s
            alllost += lost
        self.assertEqual(allseq, list(range(1, n + 1)))
        self.assertEqual(set(alllost), {0})

    def test_time_binary(self):
        self.sample('-i', '50ms', '-n', '70', '--rotate', '1s', '-o', os.path.join(self.out, 'run.vms'))
        files = self.files()
        self.assertEqual(len(files), len(os.listdir(self.out)))  # nothing else, not run.vms itself
        self.assertGreaterEqual(len(files), 3)
        self.check_series(files, 70)
        prev_last = None
        for k, f in enumerate(files):
            frames = list(vmsampler.read_frames(f))
            stamp = NAME.match(os.path.basename(f)).group(1)
            sec = calendar.timegm(time.strptime(stamp, '%Y%m%dT%H%M%SZ'))
            first = frames[0].t_real_ns // 10**9
            if k == 0:
                self.assertLessEqual(sec, first)  # the start of the run
            else:
                self.assertEqual(sec, first, f)  # its first frame's second
                # a new file at the first frame past a whole second
                self.assertGreater(first, prev_last)
            # every frame of a file in the same second (1s rotation)
            self.assertEqual({fr.t_real_ns // 10**9 for fr in frames[1:]} - {first}, set(), f)
            prev_last = frames[-1].t_real_ns // 10**9

    def test_size_csv(self):
        self.sample('-i', '20ms', '-n', '60', '--rotate', '8K', '-o', os.path.join(self.out, 'run.csv'))
        files = self.files()
        self.assertGreaterEqual(len(files), 3)
        header = None
        allseq = []
        for k, f in enumerate(files):
            with open(f, newline='') as fh:
                data = fh.read()
            rows = list(csv.reader(io.StringIO(data)))
            header = header or rows[0]
            self.assertEqual(rows[0], header, f)  # each file starts with the header
            self.assertEqual(rows.count(header), 1)
            allseq += [int(r[0]) for r in rows[1:]]
            if k < len(files) - 1:
                size = os.path.getsize(f)
                last_row = len(data) - data.rstrip('\r\n').rfind('\n') - 1
                self.assertGreaterEqual(size, 8192, f)
                self.assertLess(size - last_row, 8192, f)  # ended at the first boundary past 8K
        self.assertEqual(allseq, list(range(1, 61)))
        lost = []
        for f in files:
            with open(f, newline='') as fh:
                lost += [r['lost_frames'] for r in csv.DictReader(fh)]
        self.assertEqual(set(lost), {'0'})
        # Python reads each file alone
        self.assertEqual(sum(len(vmsampler.load(f, pandas=False)) for f in files), 60)

    def foreign(self):
        """Files in the directory that are not this output's rotated files."""
        names = ['run.vms', 'run-notastamp.vms', 'other-20200101T000000Z.vms', 'run-20200101T000000Z.csv',
                 'run-20200101T000000Z.vms.bak', 'run-20200101T000000Z_1.vms', 'run-20200101T0000000Z.vms']
        for n in names:
            with open(os.path.join(self.out, n), 'wb') as f:
                f.write(b'x' * 20000)
            os.utime(os.path.join(self.out, n), (time.time() - 400 * 86400,) * 2)
        return names

    def test_keep_size(self):
        others = self.foreign()
        old = ['run-20200101T000000Z.vms', 'run-20200101T000001Z_001.vms.zst']
        for n in old:
            with open(os.path.join(self.out, n), 'wb') as f:
                f.write(b'\0' * 10000)
        self.sample('-i', '20ms', '-n', '120', '--rotate', '8K', '--keep', '32K',
                    '-o', os.path.join(self.out, 'run.vms'))
        for n in others:
            self.assertEqual(os.path.getsize(os.path.join(self.out, n)), 20000, n)
        for n in old:
            self.assertFalse(os.path.exists(os.path.join(self.out, n)), n)
        files = self.files('vms')
        self.assertGreaterEqual(len(files), 2)
        self.assertLessEqual(sum(os.path.getsize(f) for f in files), 32768)
        self.assertGreater(sum(os.path.getsize(f) for f in files), 32768 - 9000)
        # the newest are kept: a run of seqs that ends with the last frame
        seqs = []
        for f in files:
            seqs += seqs_of_dump(self.dump(f))[0]
        self.assertEqual(seqs, list(range(seqs[0], 121)))
        self.assertGreater(seqs[0], 1)

    def test_keep_age(self):
        others = self.foreign()
        now = time.time()
        ages = {'run-20200101T000000Z.vms': 10 * 86400, 'run-20200102T000000Z.vms.zst': 2 * 86400,
                'run-20200103T000000Z_002.vms': 3600}
        for n, age in ages.items():
            p = os.path.join(self.out, n)
            with open(p, 'wb') as f:
                f.write(b'\0' * 100)
            os.utime(p, (now - age, now - age))
        self.sample('-i', '50ms', '-n', '5', '--rotate', '1h', '--keep', '1d',
                    '-o', os.path.join(self.out, 'run.vms'))
        left = set(os.listdir(self.out))
        self.assertNotIn('run-20200101T000000Z.vms', left)
        self.assertNotIn('run-20200102T000000Z.vms.zst', left)
        self.assertIn('run-20200103T000000Z_002.vms', left)
        for n in others:
            self.assertIn(n, left)
        new = [n for n in left if NAME.match(n) and not n.startswith('run-2020')]
        self.assertEqual(len(new), 1)  # this run's file, named after its start

    def test_sighup(self):
        """logrotate: mv the file being written, SIGHUP, the same name again."""
        p = subprocess.Popen([BIN, '-c', self.conf, '-i', '50ms', '--rotate', '1h',
                              '-o', os.path.join(self.out, 'run.vms')],
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        deadline = time.time() + 30
        while time.time() < deadline and not (self.files() and os.path.getsize(self.files()[0]) > 4000):
            time.sleep(0.05)
        cur = self.files()[0]
        moved = os.path.join(self.d, 'moved.vms')
        os.rename(cur, moved)
        p.send_signal(signal.SIGHUP)
        deadline = time.time() + 30
        while time.time() < deadline and not (os.path.exists(cur) and os.path.getsize(cur) > 4000):
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(self.files(), [cur])  # the same name, not a new rotation
        a, la = seqs_of_dump(self.dump(moved))
        b, lb = seqs_of_dump(self.dump(cur))
        self.assertEqual(a + b, list(range(1, len(a) + len(b) + 1)))
        self.assertEqual(set(la + lb), {0})
        ev = run('dump', '--events', cur).stdout
        self.assertIn('output_reopened', ev)

    def test_config_errors(self):
        for args, msg in [(['--rotate', '1h', '-o', '-'], 'rotate needs an output file'),
                          (['--keep', '1d', '-o', os.path.join(self.out, 'x.vms')], 'keep needs rotate'),
                          (['--compress', 'zstd', '-o', os.path.join(self.out, 'x.vms')], 'compress needs rotate'),
                          (['--rotate', '1ms', '-o', os.path.join(self.out, 'x.vms')], 'neither a duration'),
                          (['--rotate', '1h', '-o', os.path.join(self.d, 'nodir', 'x.vms')], 'output directory')]:
            r = run('-c', self.conf, '-n', '1', *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))  # a missing directory too
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(msg, r.stderr)
        self.assertEqual(os.listdir(self.out), [])

    def test_compress(self):
        if not zstd_built():
            r = run('-c', self.conf, '-n', '1', '--rotate', '1h', '--compress', 'zstd',
                    '-o', os.path.join(self.out, 'run.vms'))
            self.assertEqual(r.returncode, 2)
            self.assertIn('compiled without zstd', r.stderr)
            self.sample('-i', '20ms', '-n', '3', '-o', os.path.join(self.d, 'a.vms'))
            subprocess.run(['zstd', '-q', os.path.join(self.d, 'a.vms')], check=True)
            r = run('dump', os.path.join(self.d, 'a.vms.zst'))
            self.assertEqual(r.returncode, 2)
            self.assertIn('a zstd-compressed file, and this libvmsampler was built without zstd', r.stderr)
            return
        # a leftover of a previous run, and its unfinished compression
        self.sample('-i', '20ms', '-n', '30', '-o', os.path.join(self.d, 'left.vms'))
        leftover = os.path.join(self.out, 'run-20200101T000000Z.vms')
        shutil.copy(os.path.join(self.d, 'left.vms'), leftover)
        with open(leftover + '.zst.tmp', 'wb') as f:
            f.write(b'partial')
        self.sample('-i', '50ms', '-n', '70', '--rotate', '1s', '--compress', 'zstd',
                    '-o', os.path.join(self.out, 'run.vms'))
        left = sorted(os.listdir(self.out))
        self.assertTrue(all(n.endswith('.vms.zst') for n in left), left)
        self.assertIn('run-20200101T000000Z.vms.zst', left)
        files = [f for f in self.files() if os.path.basename(f) != 'run-20200101T000000Z.vms.zst']  # (not '2020' in the name: every file rotated at 20:20 UTC has T2020)
        self.assertGreaterEqual(len(files), 3)
        self.check_series(files, 70)
        plain = os.path.join(self.d, 'plain')
        os.mkdir(plain)
        for f in self.files():
            v = os.path.join(plain, os.path.basename(f)[:-4])
            subprocess.run(['zstd', '-q', '-d', f, '-o', v], check=True)
            # every value, every way of reading it
            self.assertEqual(self.dump(f), self.dump(v))
            self.assertEqual(self.dump(f, '--rates'), self.dump(v, '--rates'))
            self.assertEqual(self.dump(f, '--events'), self.dump(v, '--events'))
            for args in (['report', '--summary'], ['tail', '--no-follow', '-n', '5']):
                a, b = run(args[0], f, *args[1:]), run(args[0], v, *args[1:])
                self.assertEqual((a.returncode, a.stdout.replace(f, v)), (b.returncode, b.stdout), args)
                self.assertTrue(a.stdout)
            fa = [(x.seq, x.t_real_ns, x.late_ns, x.values) for x in vmsampler.read_frames(f)]
            fb = [(x.seq, x.t_real_ns, x.late_ns, x.values) for x in vmsampler.read_frames(v)]
            self.assertEqual(fa, fb)
            self.assertEqual([s.names for s in vmsampler.schemas(f)], [s.names for s in vmsampler.schemas(v)])
        with open(os.path.join(self.d, 'left.vms'), 'rb') as a, open(os.path.join(plain, 'run-20200101T000000Z.vms'), 'rb') as b:
            self.assertEqual(a.read(), b.read())
        self.torn(self.files()[-2])
        # the loader without the zstandard module: a clear error
        code = ('import sys; sys.modules["zstandard"] = None; sys.path.insert(0, %r); import vmsampler\n'
                'try:\n    vmsampler.load(%r)\nexcept ImportError as e:\n    print(e)\n') % (
                    os.path.join(SRC, 'python'), self.files()[0])
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
        self.assertIn('is zstd-compressed: reading it needs the Python module zstandard '
                      '(Debian: apt install python3-zstandard)', out.stdout, out.stderr)

    def torn(self, zst):
        with open(zst, 'rb') as fh:
            data = fh.read()
        cut = os.path.join(self.d, 'cut.vms.zst')
        for n in (5, len(data) // 2, len(data) - 1):
            with open(cut, 'wb') as f:
                f.write(data[:n])
            r = run('dump', cut)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn('torn .zst: the compressed stream ends inside a zstd frame', r.stderr)
            with self.assertRaisesRegex(vmsampler.FormatError, 'torn .zst'):
                list(vmsampler.read_frames(cut))
        # a changed byte in the compressed data: damage (the frame's checksum)
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0x40
        with open(cut, 'wb') as f:
            f.write(bad)
        r = run('dump', cut)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('zstd:', r.stderr)
        with self.assertRaisesRegex(vmsampler.FormatError, 'zstd'):
            list(vmsampler.read_frames(cut))


if __name__ == '__main__':
    unittest.main(verbosity=2)
