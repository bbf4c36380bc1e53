#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile users and careless operators, against the real binary (issue 9).

Each case is a reproduction that crashed, lost data or clobbered a file
before the fix, and checks the outcome against the files themselves:
  - `tail --new` on a file being written (SIGSEGV before);
  - `-o` onto a live ring, and `-o X --ring X`: refused, the running
    sampler untouched (SIGBUS before);
  - `dump IN -o IN` (also under another name, also with --force): refused,
    the input byte for byte unchanged (truncated to 0 before);
  - `-o` through a symbolic link, onto a foreign file: refused, the target
    unchanged; --force overwrites; our own outputs are still replaced;
  - `-o FIFO` with nobody at the other end: SIGTERM ends the wait with
    status 0 (143 before); (`-c FIFO` is refused at once: test_files.py);
  - a bad option of dump and tail: one line (three before);
  - `dump DIR` / `tail DIR`: the directory is named as such."""
import os
import signal
import subprocess
import tempfile
import time
import unittest

from test_py_lib import wait_for

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))


def run(*args, **kw):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=60, **kw)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def dump_seqs(path):
    out = run('dump', path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    return [int(line.split(',', 1)[0]) for line in lines[1:]]


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='vms-hard.')
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        subprocess.run(['rm', '-rf', self.tmp])

    def p(self, name):
        return os.path.join(self.tmp, name)

    def start(self, *args):
        p = subprocess.Popen([BIN, '-q'] + list(args), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def one_line(self, err):
        lines = [ln for ln in err.splitlines() if ln.strip()]
        self.assertEqual(len(lines), 1, err)
        return lines[0]


class TailNew(Base):
    def test_tail_new_on_a_file_being_written(self):
        out = self.p('x.vms')
        w = self.start('-i', '10ms', '-o', out)
        self.assertTrue(wait_for(lambda: os.path.exists(out) and os.path.getsize(out) > 2000))
        t = run('tail', out, '--new', '-n', '5')
        self.assertEqual(t.returncode, 0, t.stderr)
        rows = t.stdout.splitlines()
        self.assertEqual(len(rows), 6, t.stdout)  # a header and 5 rows
        w.send_signal(signal.SIGTERM)
        self.assertEqual(w.wait(timeout=10), 0)
        # the header is dump's, and the rows are frames of the file, new
        # ones: after the frames the file held when tail started
        d = run('dump', out)
        self.assertEqual(rows[0], d.stdout.splitlines()[0])
        seqs = [int(r.split(',', 1)[0]) for r in rows[1:]]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + 5)))
        self.assertGreater(seqs[0], 1)
        self.assertIn(rows[1], d.stdout.splitlines())


class Clobber(Base):
    def test_output_onto_a_live_ring(self):
        ring = self.p('r')
        w = self.start('-i', '50ms', '-o', '/dev/null', '--ring', ring)
        self.assertTrue(wait_for(lambda: os.path.exists(ring) and run('tail', ring, '--no-follow', '-n', '1').stdout))
        size = os.path.getsize(ring)
        for extra in ([], ['--force']):
            r = run('-n', '1', '-q', '-o', ring, *extra)
            self.assertEqual(r.returncode, 2, r.stderr)  # a refusal: a configuration error
            self.assertIn('is a vmsampler ring; not overwriting it', self.one_line(r.stderr))
        self.assertEqual(os.path.getsize(ring), size)
        # the sampler lives and its ring goes on
        first = run('tail', ring, '--no-follow').stdout.splitlines()[-1].split(',')[0]
        time.sleep(0.3)
        last = run('tail', ring, '--no-follow').stdout.splitlines()[-1].split(',')[0]
        self.assertGreater(int(last), int(first))
        self.assertIsNone(w.poll())
        w.send_signal(signal.SIGTERM)
        self.assertEqual(w.wait(timeout=10), 0)

    def test_output_and_ring_the_same_path(self):
        s = self.p('s.vms')
        r = run('-n', '2', '-o', s, '--ring', s)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('the output and the ring are both', self.one_line(r.stderr))
        self.assertFalse(os.path.exists(s))

    def test_dump_onto_its_input(self):
        run_vms = self.p('run.vms')
        self.assertEqual(run('-q', '-i', '10ms', '-n', '20', '-o', run_vms).returncode, 0)
        before = read(run_vms)
        os.link(run_vms, self.p('alias.csv'))
        for out, extra in ((run_vms, []), (self.p('alias.csv'), []), (self.p('alias.csv'), ['--force']),
                           (run_vms, ['--rates']), (run_vms, ['--events', '--force'])):
            r = run('dump', run_vms, '-o', out, *extra)
            self.assertEqual(r.returncode, 2, (out, extra, r.stderr))
            self.assertIn('is the input being read; not overwriting it', self.one_line(r.stderr))
            self.assertEqual(read(run_vms), before)
        # and a good output still works
        r = run('dump', run_vms, '-o', self.p('run.csv'))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(read(self.p('run.csv')).splitlines()), 21)

    def test_symlink_not_followed(self):
        target = self.p('target')
        with open(target, 'w') as f:
            f.write('precious\n')
        os.symlink(target, self.p('link.csv'))
        r = run('-n', '1', '-q', '-o', self.p('link.csv'))
        self.assertEqual(r.returncode, 2)
        self.assertIn('symbolic link', self.one_line(r.stderr))
        self.assertEqual(read(target), b'precious\n')
        r = run('dump', '/dev/null', '-o', self.p('link.csv'))  # dump's input error comes first
        self.assertEqual(read(target), b'precious\n')
        # --force follows it and overwrites
        r = run('-n', '1', '-q', '-o', self.p('link.csv'), '--force')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(read(target).startswith(b'seq,time,'))
        self.assertTrue(os.path.islink(self.p('link.csv')))

    def test_foreign_files_not_clobbered(self):
        for name, fmt in (('x.vms', 'bin'), ('x.csv', 'csv'), ('y.vms', 'csv')):
            path = self.p(name)
            with open(path, 'w') as f:
                f.write('not ours\n')
            r = run('-n', '1', '-q', '-f', fmt, '-o', path)
            self.assertEqual(r.returncode, 2, (name, r.stderr))
            self.assertIn('not overwriting it (--force overwrites)', self.one_line(r.stderr))
            self.assertEqual(read(path), b'not ours\n')
        # a CSV where a .vms is asked for (and the other way round) is not ours either
        self.assertEqual(run('-n', '1', '-q', '-f', 'csv', '-o', self.p('a.out')).returncode, 0)
        before = read(self.p('a.out'))
        r = run('-n', '1', '-q', '-f', 'bin', '-o', self.p('a.out'))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(read(self.p('a.out')), before)
        # dump -o onto a foreign file
        self.assertEqual(run('-q', '-n', '3', '-i', '10ms', '-o', self.p('in.vms')).returncode, 0)
        for extra in ([], ['--rates'], ['--events']):
            r = run('dump', self.p('in.vms'), '-o', self.p('x.csv'), *extra)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(read(self.p('x.csv')), b'not ours\n')
        r = run('dump', self.p('in.vms'), '-o', self.p('x.csv'), '--force')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(read(self.p('x.csv')).startswith(b'seq,time,'))

    def test_own_outputs_are_replaced(self):
        for name in ('o.vms', 'o.csv'):
            path = self.p(name)
            self.assertEqual(run('-q', '-n', '5', '-i', '10ms', '-o', path).returncode, 0)
            self.assertEqual(run('-q', '-n', '2', '-i', '10ms', '-o', path).returncode, 0)
            if name.endswith('.vms'):
                self.assertEqual(dump_seqs(path), [1, 2])
            else:
                self.assertEqual(len(read(path).splitlines()), 3)
        # an empty file is anybody's
        open(self.p('empty.vms'), 'w').close()
        self.assertEqual(run('-q', '-n', '2', '-i', '10ms', '-o', self.p('empty.vms')).returncode, 0)
        self.assertEqual(dump_seqs(self.p('empty.vms')), [1, 2])


class Fifo(Base):
    def test_sigterm_while_waiting_for_the_other_end(self):
        fifo = self.p('ff')
        os.mkfifo(fifo)
        w = subprocess.Popen([BIN, '-q', '-o', fifo], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(w)
        time.sleep(0.3)
        self.assertIsNone(w.poll())  # it waits: a FIFO has no other end yet
        w.send_signal(signal.SIGTERM)
        self.assertEqual(w.wait(timeout=10), 0)
        self.assertEqual(w.stderr.read(), '')
        # -c must be a regular file (issue 23): a FIFO is refused at once
        # (test_files.py)

    def test_sigterm_at_any_moment_of_the_start(self):
        # the signal may come before the wait for the other end begins (a
        # loaded machine: a fresh CI run hung there): it must still end the
        # run, with 0 once the handler is in place (-15 before it is)
        fifo = self.p('ff2')
        os.mkfifo(fifo)
        for i in range(16):
            w = subprocess.Popen([BIN, '-q', '-o', fifo], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            self.procs.append(w)
            time.sleep(0.005 * i)
            w.send_signal(signal.SIGTERM)
            self.assertIn(w.wait(timeout=10), (0, -signal.SIGTERM), i)
            w.stderr.close()

    def test_fifo_with_a_reader(self):
        fifo = self.p('ff')
        os.mkfifo(fifo)
        w = subprocess.Popen([BIN, '-q', '-i', '10ms', '-n', '3', '-o', fifo])
        self.procs.append(w)
        with open(fifo) as f:
            rows = f.read().splitlines()
        self.assertEqual(w.wait(timeout=10), 0)
        self.assertEqual(len(rows), 4)
        self.assertTrue(rows[0].startswith('seq,time,'))


class OpenFiles(Base):
    def test_soft_limit_raised_to_the_hard_one(self):
        """60 VMs keep more files open than the usual soft limit (1024):
        the sampler raises its own soft RLIMIT_NOFILE to the hard one,
        read back from /proc/PID/limits while it runs."""
        import resource
        soft, hard = 64, 4096

        def limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        p = subprocess.Popen([BIN, '-q', '-i', '100ms', '-n', '100', '-o', self.p('x.csv')],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=limit)
        self.procs.append(p)
        self.assertTrue(wait_for(lambda: os.path.exists(self.p('x.csv')) and
                                 os.path.getsize(self.p('x.csv')) > 0))
        with open('/proc/%d/limits' % p.pid) as f:
            line = [ln for ln in f if ln.startswith('Max open files')][0].split()
        self.assertEqual((int(line[3]), int(line[4])), (hard, hard), line)
        p.kill()


class Usage(Base):
    def test_bad_options_are_one_line(self):
        for args in (['dump', '--bogus', 'x.vms'], ['tail', '--bogus', 'x.vms'], ['dump', '-Z', 'x'],
                     ['tail', '-n'], ['dump', 'x.vms', '-o'], ['--bogus']):
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            line = self.one_line(r.stderr)
            self.assertIn("Try 'vmsampler", line)
            self.assertIn('bogus' if '--bogus' in args else '-', line)

    def test_header_cut_short_is_a_torn_tail(self):
        full = self.p('h.vms')
        self.assertEqual(run('-q', '-n', '1', '-o', full).returncode, 0)
        data = read(full)
        for n in range(1, 32):
            cut = self.p('c%d.vms' % n)
            with open(cut, 'wb') as f:
                f.write(data[:n])
            r = run('dump', cut)
            self.assertEqual(r.returncode, 0, (n, r.stderr))
            self.assertIn('torn tail at offset 0 (%d bytes)' % n, self.one_line(r.stderr))
        with open(self.p('foreign.vms'), 'wb') as f:
            f.write(b'VMX')
        r = run('dump', self.p('foreign.vms'))
        self.assertEqual(r.returncode, 2)
        self.assertIn('not a vmsampler stream', r.stderr)

    def test_directory_named(self):
        for tool in ('dump', 'tail'):
            r = run(tool, self.tmp)
            self.assertEqual(r.returncode, 2)
            self.assertIn('%s: Is a directory' % self.tmp, self.one_line(r.stderr))


if __name__ == '__main__':
    unittest.main(verbosity=2)
