#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A file system that fills, for real: a small tmpfs mounted by the test
(root; exit 77 otherwise, a failure when VMS_REQUIRE_E2E=1, as in CI).

  - a ring that does not fit: one line and exit status 1 at start (the
    sparse file was a SIGBUS at the first write to a page with no room);
  - SIGHUP while the output's disk is full (logrotate's mv + SIGHUP): the
    old file ends at a whole frame, the new one gets its header and SCHEMA
    as soon as there is room, writing resumes without a second SIGHUP,
    and every frame is in one of the files or counted as lost on the first
    frame after its gap (3,684 frames were lost silently before)."""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hardening import check_accounting, csv_seq_lost  # noqa: E402


def dump(path):
    r = subprocess.run([BIN, 'dump', path], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


class FullFs(unittest.TestCase):
    def setUp(self):
        self.mnt = tempfile.mkdtemp(prefix='vms-fullfs.')
        self.procs = []
        self.mounted = False

    def mount(self, size):
        subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%s,mode=0700' % size, 'vms-fullfs', self.mnt], check=True)
        self.mounted = True

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if self.mounted:
            subprocess.run(['umount', '-l', self.mnt])
        os.rmdir(self.mnt)

    def p(self, name):
        return os.path.join(self.mnt, name)

    def test_ring_that_does_not_fit(self):
        self.mount('64k')
        r = subprocess.run([BIN, '-q', '-i', '10ms', '-n', '300', '-o', '/dev/null', '--ring', self.p('r')],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn('No space left on device', lines[0])
        self.assertEqual(os.listdir(self.mnt), [])  # no half-made ring left

    def test_ring_space_is_reserved(self):
        self.mount('64m')
        w = subprocess.Popen([BIN, '-q', '-i', '10ms', '-n', '50', '-o', '/dev/null', '--ring', self.p('r')])
        self.procs.append(w)
        self.assertEqual(w.wait(timeout=60), 0)
        st = os.stat(self.p('r'))
        self.assertGreaterEqual(st.st_blocks * 512, st.st_size)

    def test_sighup_while_the_disk_is_full(self):
        self.mount('4m')
        out = self.p('run.vms')
        w = subprocess.Popen([BIN, '-q', '-i', '10ms', '-o', out], stderr=subprocess.PIPE, text=True)
        self.procs.append(w)
        time.sleep(0.5)
        # fill what is left
        subprocess.run(['dd', 'if=/dev/zero', 'of=' + self.p('filler'), 'bs=4k'],
                       stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # the sampler hits ENOSPC, its ring fills and overflows
        os.rename(out, self.p('run.1.vms'))
        w.send_signal(signal.SIGHUP)
        time.sleep(1.0)  # the new file cannot be written either
        os.unlink(self.p('filler'))
        time.sleep(1.0)  # room again: writing resumes, without a second SIGHUP
        w.send_signal(signal.SIGTERM)
        self.assertEqual(w.wait(timeout=30), 0)
        err = w.stderr.read()
        self.assertIn('No space left on device', err)
        self.assertNotIn('Invalid argument', err)
        rows = []
        for name in ('run.1.vms', 'run.vms'):
            rc, text, derr = dump(self.p(name))
            self.assertEqual(rc, 0, derr)
            self.assertEqual(derr, '', name)  # whole frames only, no torn tail
            rows += csv_seq_lost(text)
        lost = check_accounting(self, rows)
        self.assertGreater(lost, 0, 'the disk never filled for long: nothing was tested')
        last = rows[-1][0]
        self.assertEqual(lost + len(rows), last)
        # the new file was written after room came back: it has frames
        self.assertGreater(len(csv_seq_lost(dump(out)[1])), 20)


if __name__ == '__main__':
    if os.geteuid() != 0:
        if os.environ.get('VMS_REQUIRE_E2E') == '1':
            print('test_fullfs: needs root (to mount a tmpfs), and VMS_REQUIRE_E2E=1 requires it', file=sys.stderr)
            sys.exit(1)
        print('SKIP: needs root to mount a tmpfs')
        sys.exit(77)
    unittest.main(verbosity=2)
