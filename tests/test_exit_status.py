#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exit statuses of every command against the one rule of vmsampler(1),
EXIT STATUS: a usage or configuration error -- a bad option or value, an
output path that cannot be used or is refused, an input that is missing,
a directory, not a vmsampler stream or ring or of another major version,
a file of an option that is not what it must be -- is exactly one line
on standard error and status 2; a failure after a good start (damage in
the middle of a file, no sampler answering a mark) is 1.

A table: each row runs the real binary (the sampler, and dump, tail,
report, mark and export through it) on inputs made here -- a run written
by the sampler itself, a text file, a directory, a path under a missing
directory, a copy of the run with another major version in its file
header (vmsampler-format(5), FILE HEADER: byte 7), a copy damaged in the
middle -- and checks the status, that standard error is one line, and
that the line says what the row expects.  Files that must not be written
are checked byte for byte afterwards.  Rows of export are skipped in a
build without it (vmsampler --version says)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))


def version():
    return subprocess.run([BIN, '--version'], capture_output=True, text=True, timeout=30).stdout


class ExitStatus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='vms-exit.')
        t = cls.path
        r = subprocess.run([BIN, '-q', '-i', '10ms', '-n', '30', '-o', t('run.vms')], capture_output=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        with open(t('run.vms'), 'rb') as f:
            data = f.read()
        v = bytearray(data)
        v[7] = 9  # the major version (vmsampler-format(5), FILE HEADER)
        with open(t('v9.vms'), 'wb') as f:
            f.write(v)
        d = bytearray(data)
        d[len(d) * 2 // 3] ^= 0x55  # a middle record's payload
        with open(t('damaged.vms'), 'wb') as f:
            f.write(d)
        with open(t('text.txt'), 'w') as f:
            f.write('not a vmsampler file\n')
        with open(t('foreign.csv'), 'w') as f:
            f.write('not ours\n')
        with open(t('cursor'), 'w') as f:
            f.write('not a cursor\n')
        os.mkdir(t('dir'))
        v = version()
        cls.export = 'export: yes' in v
        cls.rw = 'remote write: yes' in v

    @classmethod
    def path(cls, *a):
        return os.path.join(cls.tmp, *a)

    @classmethod
    def read(cls, name):
        with open(cls.path(name), 'rb') as f:
            return f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, rows):
        kept = {n: self.read(n) for n in ('run.vms', 'foreign.csv', 'text.txt', 'cursor')}
        for status, say, args in rows:
            with self.subTest(args=' '.join(args)):
                r = subprocess.run([BIN] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, timeout=30, cwd=self.tmp)
                self.assertEqual(r.returncode, status, r.stderr)
                self.assertTrue(r.stderr.endswith('\n'), repr(r.stderr))
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(say, r.stderr)
        for n, b in kept.items():
            self.assertEqual(self.read(n), b, n)
        self.assertFalse(os.path.exists(self.path('nodir')))

    def test_sampler(self):
        run = ['-q', '-n', '1', '-i', '10ms']
        self.check([
            (2, "unknown option '--bogus'", ['--bogus']),
            (2, "--interval: '0' is out of range", ['-i', '0']),
            (2, 'nodir/x.csv: No such file or directory', run + ['-o', 'nodir/x.csv']),
            (2, 'dir: Is a directory', run + ['-o', 'dir']),
            (2, 'not a vmsampler CSV file', run + ['-o', 'foreign.csv']),
            (2, 'ring nodir/ring', run + ['-o', '/dev/null', '--ring', 'nodir/ring']),
            (2, 'control socket nodir/ctl', run + ['-o', '/dev/null', '--control', 'nodir/ctl']),
            (2, 'proc root nodir', run + ['-o', '/dev/null', '--proc-root', 'nodir']),
            (2, 'output directory nodir', run + ['--rotate', '1h', '-o', 'nodir/x.vms']),
            (2, 'nodir/c.yaml: No such file or directory', run + ['-c', 'nodir/c.yaml']),
            (2, 'dir', run + ['-c', 'dir']),
        ])

    def test_dump(self):
        self.check([
            (2, 'unknown or ambiguous option', ['dump', '--bogus', 'run.vms']),
            (2, 'missing FILE', ['dump']),
            (2, 'nodir/x.vms: No such file or directory', ['dump', 'nodir/x.vms']),
            (2, 'dir: Is a directory', ['dump', 'dir']),
            (2, 'not a vmsampler stream', ['dump', 'text.txt']),
            (2, 'major version 9', ['dump', 'v9.vms']),
            (2, 'not a vmsampler stream', ['dump', '--info', 'text.txt']),
            (2, 'not a vmsampler stream', ['dump', '--format', 'json', 'text.txt']),
            (2, 'nodir/x.csv: No such file or directory', ['dump', 'run.vms', '-o', 'nodir/x.csv']),
            (2, 'nodir/x.csv: No such file or directory', ['dump', 'run.vms', '--rates', '-o', 'nodir/x.csv']),
            (2, 'nodir/x.csv: No such file or directory', ['dump', 'run.vms', '--events', '-o', 'nodir/x.csv']),
            (2, 'not a vmsampler CSV file', ['dump', 'run.vms', '-o', 'foreign.csv']),
            (2, 'is the input being read', ['dump', 'run.vms', '-o', 'run.vms', '--force']),
            # after a good start: damage in the middle
            (1, 'the frames before it were output', ['dump', 'damaged.vms']),
        ])

    def test_tail(self):
        self.check([
            (2, 'unknown or ambiguous option', ['tail', '--bogus', 'run.vms']),
            (2, '--count needs', ['tail', '-n', 'x', 'run.vms']),
            (2, 'nodir/ring: No such file or directory', ['tail', 'nodir/ring']),
            (2, 'dir: Is a directory', ['tail', 'dir']),
            (2, 'not a vmsampler stream', ['tail', 'text.txt']),
            (2, 'major version 9', ['tail', '--no-follow', 'v9.vms']),
            (1, 'record', ['tail', '--no-follow', 'damaged.vms']),
        ])

    def test_report(self):
        self.check([
            (2, 'unknown or ambiguous option', ['report', '--bogus', 'run.vms']),
            (2, '--interval wants', ['report', '--interval', 'x', 'run.vms']),
            (2, 'nodir/x.vms: No such file or directory', ['report', 'nodir/x.vms']),
            (2, 'dir: Is a directory', ['report', 'dir']),
            (2, 'not a vmsampler stream', ['report', 'text.txt']),
            (2, 'major version 9', ['report', 'v9.vms']),
            (2, 'not a vmsampler ring', ['report', '--ring', 'run.vms']),
            (2, 'not a vmsampler stream', ['report', '--interference', 'text.txt']),
            (2, 'nodir/x.vms: No such file or directory', ['report', '--interference', 'nodir/x.vms']),
            (2, 'not a vmsampler stream', ['report', '--compare', 'text.txt', 'run.vms']),
            (2, 'nodir/x.vms: No such file or directory', ['report', '--compare', 'run.vms', 'nodir/x.vms']),
            (1, 'the report covers the frames before it', ['report', 'damaged.vms']),
        ])

    def test_mark(self):
        self.check([
            (2, 'unknown or ambiguous option', ['mark', '--bogus', 'x']),
            (2, 'missing TEXT', ['mark', '--ring', 'r']),
            (2, '--pid needs', ['mark', '--pid', 'x', 'text']),
            # the sampler is a process, not a file: none answering is 1
            (1, 'nodir/r.ctl', ['mark', '--ring', 'nodir/r', 'text']),
        ])

    def test_export(self):
        if not self.export:
            self.skipTest('a build without export')
        listen = ['--listen', '127.0.0.1:0']
        rows = [
            (2, 'unknown or ambiguous option', ['export', '--bogus']),
            (2, 'missing --ring or --file', ['export']),
            (2, 'nodir/x.vms: No such file or directory', ['export', '--file', 'nodir/x.vms'] + listen),
            (2, 'nodir/ring: No such file or directory', ['export', '--ring', 'nodir/ring'] + listen),
            (2, 'not a vmsampler stream', ['export', '--ring', 'text.txt'] + listen),
            (2, 'not a live ring', ['export', '--ring', 'run.vms'] + listen),
            (2, 'not a vmsampler stream', ['export', '--file', 'text.txt'] + listen),
            (2, 'major version 9', ['export', '--file', 'v9.vms'] + listen),
            (2, 'dir: Is a directory', ['export', '--file', 'dir', '--list-columns']),
            (2, 'not a vmsampler stream', ['export', '--file', 'text.txt', '--list-columns']),
            (2, '--basic-auth', ['export', '--file', 'run.vms', '--basic-auth', 'nodir/auth'] + listen),
            (2, '--listen', ['export', '--file', 'run.vms', '--listen', 'nowhere:x']),
        ]
        if self.rw:
            url = 'http://127.0.0.1:9/api/v1/write'  # (nothing is sent: each row stops before)
            rw = ['--remote-write', url, '--no-follow']
            rows += [
                (2, '--remote-write wants an http:// or https:// URL',
                 ['export', '--file', 'run.vms', '--remote-write', 'localhost']),
                (2, 'nodir/x.vms: No such file or directory', ['export', '--file', 'nodir/x.vms'] + rw),
                (2, 'not a vmsampler stream', ['export', '--file', 'text.txt'] + rw),
                (2, 'major version 9', ['export', '--file', 'v9.vms'] + rw),
                (2, '--rw-cursor nodir/c: directory nodir', ['export', '--file', 'run.vms', '--rw-cursor',
                                                              'nodir/c'] + rw),
                (2, 'not a cursor of vmsampler export', ['export', '--file', 'run.vms', '--rw-cursor',
                                                         'cursor'] + rw),
            ]
        self.check(rows)


if __name__ == '__main__':
    unittest.main(verbosity=2)
