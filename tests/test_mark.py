#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler mark and the control socket, against the real binary.

A sampler with a shared ring listens on RING.ctl (mode 0660).  Checked
against the files the sampler writes (dump --events, the vms.marks
columns) and the live ring (tail --events):
  - a mark sent during a run is in the stream exactly once, before the
    frame the answer named, in the file and in the live ring;
  - the server's bounds, from a raw client (the command refuses bad text
    itself): over-long text and control characters are answered with an
    error and counted, an empty message is the end of the connection; more than 64 marks in an interval
    are answered "too many" and counted; a ninth silent connection is
    answered "busy"; a silent connection is closed after a second;
  - only the sampler's user and group may connect (a user outside them is
    refused by the file mode);
  - a socket left by a killed sampler is replaced, anything else at the
    path is refused in one line and left alone;
  - --pid finds the socket; usage errors are one line and exit 2."""
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

from test_py_lib import main, wait_for

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))


def run(*args, **kw):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=60, **kw)


def raw(path, payload, timeout=5.0):
    """One message to the control socket, the answer back."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        try:
            s.send(payload)
        except BrokenPipeError:
            pass  # answered and closed before we spoke ("busy"): the answer is there
        return s.recv(256).decode()
    finally:
        s.close()


def listening(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def events(path):
    out = run('dump', '--events', path)
    assert out.returncode == 0, out.stderr
    rows = []
    for line in out.stdout.splitlines()[1:]:
        import csv
        rows.append(next(csv.reader([line])))
    return rows


def last_row(path):
    out = run('dump', path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = lines[0].split(',')
    return dict(zip(head, lines[-1].split(',')))


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='vms-mark.')
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.ring = os.path.join(self.tmp, 'ring')
        self.ctl = self.ring + '.ctl'
        self.out = os.path.join(self.tmp, 'run.vms')

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sampler(self, *args, interval='100ms', count='60'):
        p = subprocess.Popen([BIN, '-q', '-i', interval, '-n', count, '-o', self.out, '--ring', self.ring]
                             + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.assertTrue(wait_for(lambda: listening(self.ctl)), 'no control socket')
        return p

    def finish(self, p):
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)


class TestMark(Base):
    def test_mark_once_before_its_frame(self):
        p = self.sampler()
        tail = subprocess.Popen([BIN, 'tail', '--events', self.ring], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(tail)
        time.sleep(0.5)
        self.assertEqual(stat.S_IMODE(os.lstat(self.ctl).st_mode), 0o660)
        m1 = run('mark', '--ring', self.ring, 'iperf start')
        self.assertEqual(m1.returncode, 0, m1.stderr)
        seq1 = int(m1.stdout.split()[-1])
        m2 = run('mark', '--pid', str(p.pid), 'migration, phase 2 é')
        self.assertEqual(m2.returncode, 0, m2.stderr)
        seq2 = int(m2.stdout.split()[-1])
        self.assertGreaterEqual(seq2, seq1)
        time.sleep(0.5)
        self.finish(p)
        tail_out, _ = tail.communicate(timeout=30)
        self.assertFalse(os.path.exists(self.ctl), 'socket left behind')
        marks = [e for e in events(self.out) if e[4] == 'mark']
        self.assertEqual([(int(e[0]), e[5]) for e in marks],
                         [(seq1, 'iperf start'), (seq2, 'migration, phase 2 é')])
        self.assertTrue(marks[0][6].startswith('pid='), marks[0])
        self.assertEqual(marks[0][3], '6')
        # the frame it goes before exists and comes after it in time
        dump = run('dump', self.out).stdout.splitlines()
        head = dump[0].split(',')
        seqs = [int(r.split(',')[0]) for r in dump[1:]]
        self.assertIn(seq1, seqs)
        # counted in the stream
        row = last_row(self.out)
        self.assertEqual(row['vms.marks'], '2')
        self.assertEqual(row['vms.marks_refused'], '0')
        self.assertIn('vms.marks', head)
        # report: once in --json's events, at the time dump --events
        # gives; in the text once per section (as sar repeats its
        # RESTART lines), between the rows around that time
        import json
        rep = run('report', '--json', self.out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        js = json.loads(rep.stdout)
        jm = [e for e in js['events'] if e['event'] == 'mark']
        self.assertEqual([e['subject'] for e in jm], ['iperf start', 'migration, phase 2 é'])
        self.assertEqual([e['time'] for e in jm], [e[1] for e in marks])
        txt = run('report', self.out)
        self.assertEqual(txt.returncode, 0, txt.stderr)
        lines = txt.stdout.splitlines()
        # a section: a header line after a blank line (the first line is
        # the title)
        nsec = sum(1 for i in range(2, len(lines)) if lines[i - 1] == '' and lines[i])
        self.assertGreater(nsec, 3, txt.stdout)
        for text in ('iperf start', 'migration, phase 2 é'):
            at = [i for i, line in enumerate(lines) if ('EVENT mark %s (' % text) in line]
            self.assertEqual(len(at), nsec, txt.stdout)
            for i in at:  # inside a section: a row or an event above and below
                self.assertNotEqual(lines[i - 1], '', txt.stdout)
                self.assertNotEqual(lines[i + 1], '', txt.stdout)
        # the live ring's readers saw the same marks, once each
        live = [line for line in tail_out.splitlines() if ',mark,' in line]
        self.assertEqual(len(live), 2, tail_out)
        self.assertTrue(live[0].startswith('%d,' % seq1), live)

    def test_bounds_answered_and_counted(self):
        p = self.sampler(interval='1s', count='0')
        self.assertEqual(raw(self.ctl, b'x' * 80), 'error: text longer than 79 bytes')
        self.assertEqual(raw(self.ctl, b'x' * 5000), 'error: text longer than 79 bytes')
        self.assertEqual(raw(self.ctl, b'bad\nline'), 'error: control characters in the text')
        # (an empty SEQPACKET message reads as the end of the connection:
        # closed without an answer or a mark)
        self.assertEqual(raw(self.ctl, b''), '')
        # a flood: at most 64 per interval are taken, the rest answered
        answers = [raw(self.ctl, b'flood %d' % i) for i in range(200)]
        ok = [a for a in answers if a.startswith('ok ')]
        refused = [a for a in answers if a == 'error: too many marks in this interval (64 at most)']
        self.assertEqual(len(ok) + len(refused), 200, set(answers))
        # the budget refills each interval: at least 64, at most 64 per tick seen
        self.assertGreaterEqual(len(ok), 64)
        self.assertLess(len(ok), 200)
        # silent connections: eight are held, the ninth is answered busy
        silent = []
        for _ in range(8):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(self.ctl)
            silent.append(s)
        time.sleep(0.2)
        self.assertEqual(raw(self.ctl, b'ninth'), 'error: busy')
        # held connections are closed after a second of silence
        silent[0].settimeout(5)
        self.assertEqual(silent[0].recv(64), b'')
        for s in silent:
            s.close()
        self.assertTrue(raw(self.ctl, b'after the silence').startswith('ok '))
        time.sleep(1.5)
        self.finish(p)
        marks = [e for e in events(self.out) if e[4] == 'mark']
        self.assertEqual(len(marks), len(ok) + 1)
        row = last_row(self.out)
        self.assertEqual(int(row['vms.marks']), len(ok) + 1)
        # 3 bad texts, the refused flood, the busy one
        self.assertEqual(int(row['vms.marks_refused']), 3 + len(refused) + 1)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which('setpriv'), 'needs root to become another user')
    def test_other_users_refused(self):
        p = self.sampler()
        out = subprocess.run(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', BIN, 'mark',
                              '--ring', self.ring, 'not mine'], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn('Permission denied', out.stderr)
        self.finish(p)
        self.assertEqual([e for e in events(self.out) if e[4] == 'mark'], [])

    def test_stale_socket_replaced_foreign_file_refused(self):
        p = self.sampler()
        p.kill()
        p.wait()
        self.assertTrue(os.path.exists(self.ctl), 'a killed sampler leaves its socket')
        p = self.sampler()
        self.assertTrue(raw(self.ctl, b'second run').startswith('ok '))
        # a second sampler on the same ring and socket: refused, the first untouched
        other = run('-q', '-i', '100ms', '-n', '3', '-o', os.path.join(self.tmp, 'b.csv'),
                    '--ring', os.path.join(self.tmp, 'ring2'), '--control', self.ctl)
        self.assertNotEqual(other.returncode, 0)
        self.assertEqual(len(other.stderr.strip().splitlines()), 1, other.stderr)
        self.assertIn('another vmsampler listens on it', other.stderr)
        self.assertTrue(raw(self.ctl, b'still here').startswith('ok '))
        self.finish(p)
        # anything else at the path is left alone
        foreign = os.path.join(self.tmp, 'notes.ctl')
        with open(foreign, 'w') as f:
            f.write('keep me\n')
        bad = run('-q', '-i', '100ms', '-n', '3', '-o', os.path.join(self.tmp, 'c.csv'), '--control', foreign)
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        self.assertIn('not a socket', bad.stderr)
        with open(foreign) as f:
            self.assertEqual(f.read(), 'keep me\n')

    def test_usage_errors(self):
        for args, what in ((['mark', 'x'], 'which sampler?'),
                           (['mark', '--ring', 'a', '--pid', '1', 'x'], 'give one of'),
                           (['mark', '--ring', 'a'], 'missing TEXT'),
                           (['mark', '--ring', 'a', 'x' * 80], 'longer than 79'),
                           (['mark', '--pid', 'abc', 'x'], '--pid needs')):
            out = run(*args)
            self.assertEqual(out.returncode, 2, (args, out.stderr))
            self.assertEqual(len(out.stderr.strip().splitlines()), 1, out.stderr)
            self.assertIn(what, out.stderr)
        # no sampler there: one line, status 1
        out = run('mark', '--ring', os.path.join(self.tmp, 'none'), 'x')
        self.assertEqual(out.returncode, 1)
        self.assertEqual(len(out.stderr.strip().splitlines()), 1, out.stderr)
        out = run('mark', '--pid', str(os.getpid()), 'x')
        self.assertEqual(out.returncode, 1)
        self.assertIn('no control socket', out.stderr)

    def test_no_socket_without_ring_or_with_none(self):
        p = subprocess.Popen([BIN, '-q', '-i', '100ms', '-n', '5', '-o', self.out, '--ring', self.ring,
                              '--control', 'none'], stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        p.wait(timeout=30)
        self.assertFalse(os.path.exists(self.ctl))
        self.assertNotIn('vms.marks', run('dump', self.out).stdout.splitlines()[0])


if __name__ == '__main__':
    main('VMS_REQUIRE_ROOT')
