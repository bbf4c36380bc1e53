#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Configuration, secret and output files at start-up (issue 23, items 7, 8).

Against the real binaries, each case checks the exit status, the one line
on stderr and the files themselves (their bytes, their owner):
  - a FIFO as -c, --basic-auth, --tls-key or --rw-cursor: refused at once,
    exit 2 (each waited for ever before: a run that is still going after
    10 s is killed and fails the test);
  - a directory as -c or --basic-auth: said as a directory, exit 2
    ("Invalid argument" before);
  - a TLS key others may read: refused, exit 2 (the server started before);
  - a certificate that is not PEM: exit 2 (1 before: systemd restarted it);
  - a symbolic link as -o: said, exit 2 (1 before);
  - another user's file (made by a temporary user, useradd + setpriv, in a
    sticky world-writable directory as /tmp and /dev/shm are) as -o, with
    vmsampler's own "seq,time," header, with and without --force, and as
    --ring: never written into, exit 2 (root's sampler truncated and
    wrote the output, which stayed theirs; the ring kept it from starting
    with exit 1); nor is export's CURSOR.tmp (it became the cursor, theirs).  The user's own file under --user is still written, and
    so is a file root made for itself.
The other-user cases need root: without it they are skipped and the run
exits 77 (a failure with VMS_REQUIRE_ROOT=1)."""
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
RING_MAGIC = b'VMSRING'  # include/vmsampler/ring.h, VMS_RING_MAGIC


def run(*args, timeout=10, env=None):
    """(status, stderr); status None if it was still running after timeout
    seconds (then killed)."""
    p = subprocess.Popen([BIN] + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        return None, err
    return p.returncode, err


def read(path):
    with open(path, 'rb') as f:
        return f.read()


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='vms-files.')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def p(self, name):
        return os.path.join(self.tmp, name)

    def refused(self, args, words, env=None):
        status, err = run(*args, env=env)
        self.assertEqual(status, 2, (args, err))
        lines = [ln for ln in err.splitlines() if ln.strip()]
        self.assertEqual(len(lines), 1, (args, err))
        self.assertIn(words, lines[0], args)
        return lines[0]


class Startup(Base):
    def setUp(self):
        super().setUp()
        os.mkfifo(self.p('fifo'))
        os.mkdir(self.p('dir'))
        self.run_vms = self.p('run.vms')
        status, err = run('-q', '-i', '10ms', '-n', '3', '-o', self.run_vms)
        self.assertEqual(status, 0, err)

    def export(self, *args):
        return ['export', '--file', self.run_vms] + list(args)

    def test_config_fifo_and_directory(self):
        line = self.refused(['-c', self.p('fifo'), '-n', '1', '-o', self.p('x.csv')],
                            'is a FIFO, not a regular file')
        self.assertTrue(line.startswith(self.p('fifo') + ': '), line)
        self.refused(['-c', self.p('dir'), '--print-config'], '%s: Is a directory' % self.p('dir'))
        self.assertFalse(os.path.exists(self.p('x.csv')))

    def test_export_secrets_fifo_and_directory(self):
        self.refused(self.export('-l', '127.0.0.1:0', '--basic-auth', self.p('fifo')),
                     '--basic-auth %s: is a FIFO, not a regular file' % self.p('fifo'))
        self.refused(self.export('-l', '127.0.0.1:0', '--basic-auth', self.p('dir')),
                     '--basic-auth %s: Is a directory' % self.p('dir'))
        with open(self.p('crt'), 'w') as f:
            f.write('not read: the key comes first to fail\n')
        self.refused(self.export('-l', '127.0.0.1:0', '--tls-cert', self.p('crt'), '--tls-key', self.p('fifo')),
                     '--tls-key %s: is a FIFO, not a regular file' % self.p('fifo'))

    def test_rw_cursor_fifo(self):
        status, err = run(*self.export('-w', 'http://127.0.0.1:1/', '--rw-cursor', self.p('fifo')))
        if 'no remote write' in err:
            self.skipTest('this build has no remote write')
        self.assertEqual(status, 2, err)
        self.assertIn('--rw-cursor %s: is a FIFO, not a regular file' % self.p('fifo'), err)

    def test_tls_key_readable_by_others_and_bad_certificate(self):
        openssl = shutil.which('openssl')
        if not openssl:
            self.skipTest('no openssl')
        crt, key = self.p('tls.crt'), self.p('tls.key')
        subprocess.run([openssl, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt,
                        '-days', '1', '-subj', '/CN=127.0.0.1'], check=True, capture_output=True)
        os.chmod(key, 0o644)
        self.refused(self.export('-l', '127.0.0.1:0', '--tls-cert', crt, '--tls-key', key),
                     '--tls-key %s: readable by others (chmod o-rw)' % key)
        os.chmod(key, 0o600)
        with open(self.p('bad.crt'), 'w') as f:
            f.write('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n')
        # (libmicrohttpd 0.9.75 leaks GnuTLS's certificate when it refuses
        # it, at exit: not ours to find under ASan)
        env = dict(os.environ, ASAN_OPTIONS=os.environ.get('ASAN_OPTIONS', '') + ':detect_leaks=0')
        self.refused(self.export('-l', '127.0.0.1:0', '--tls-cert', self.p('bad.crt'), '--tls-key', key),
                     'not a valid PEM certificate and its key', env=env)

    def test_symlinked_output(self):
        with open(self.p('target'), 'w') as f:
            f.write('precious\n')
        os.symlink(self.p('target'), self.p('link.csv'))
        self.refused(['-q', '-n', '1', '-o', self.p('link.csv')], 'is a symbolic link; not following it')
        self.assertEqual(read(self.p('target')), b'precious\n')


def require_root():
    if os.geteuid() == 0:
        return None
    if os.environ.get('VMS_REQUIRE_ROOT') == '1':
        raise AssertionError('VMS_REQUIRE_ROOT=1 but not root: another user cannot be made')
    return 'needs root (useradd, setpriv)'


class ForeignOwner(Base):
    """Another user's files in a sticky world-writable directory."""

    @classmethod
    def setUpClass(cls):
        cls.user = None
        why = require_root()
        if why:
            raise unittest.SkipTest(why)
        cls.user = 'vmsfile' + secrets.token_hex(3)
        subprocess.run(['useradd', '--system', '--no-create-home', '--home-dir', '/nonexistent',
                        '--shell', '/usr/sbin/nologin', cls.user], check=True)
        import pwd
        cls.uid = pwd.getpwnam(cls.user).pw_uid

    @classmethod
    def tearDownClass(cls):
        if cls.user:
            subprocess.run(['userdel', cls.user], check=False)

    def setUp(self):
        super().setUp()
        os.chmod(self.tmp, 0o1777)  # as /tmp and /dev/shm

    def as_user(self, *cmd):
        return subprocess.run(['setpriv', '--reuid', self.user, '--regid', self.user, '--clear-groups', '--']
                              + list(cmd), capture_output=True, text=True, timeout=60)

    def theirs(self, name, text):
        path = self.p(name)
        r = self.as_user('sh', '-c', 'printf "%s" "$1" > "$2"', 'sh', text, path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.stat(path).st_uid, self.uid)
        return path

    def test_output_made_by_another_user(self):
        for name, extra in (('out.csv', []), ('forced.csv', ['--force'])):
            path = self.theirs(name, 'seq,time,\n')
            self.refused(['-q', '-i', '10ms', '-n', '2', '-o', path] + extra,
                         'is owned by another user (uid %d, not 0); not writing into it' % self.uid)
            self.assertEqual(read(path), b'seq,time,\n')
            self.assertEqual(os.stat(path).st_uid, self.uid)

    def test_ring_made_by_another_user(self):
        for name, text in (('ring', ''), ('ring2', 'x' * 100)):
            path = self.theirs(name, text)
            self.refused(['-q', '-i', '10ms', '-n', '2', '-o', '/dev/null', '--ring', path],
                         'is owned by another user (uid %d, not 0)' % self.uid)
            self.assertEqual(read(path), text.encode())
            self.assertFalse(read(path).startswith(RING_MAGIC))

    def test_rw_cursor_temporary_made_by_another_user(self):
        """The cursor is written to CURSOR.tmp and renamed into place: a
        CURSOR.tmp another user made was truncated, written and renamed,
        so the cursor was theirs to alter (seen through their hard link)."""
        import http.server
        import threading

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get('Content-Length', 0)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass
        srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            run_vms = self.p('run.vms')
            self.assertEqual(run('-q', '-i', '10ms', '-n', '5', '-o', run_vms)[0], 0)
            cur = self.p('cursor')
            self.theirs('cursor.tmp', 'theirs\n')
            # their second name for the same file: what root writes into it shows
            r = self.as_user('ln', self.p('cursor.tmp'), self.p('keep'))
            self.assertEqual(r.returncode, 0, r.stderr)
            status, err = run('export', '--file', run_vms, '--no-follow', '--rw-cursor', cur,
                              '-w', 'http://127.0.0.1:%d/write' % srv.server_address[1], timeout=30)
            if 'no remote write' in err:
                self.skipTest('this build has no remote write')
            self.assertEqual(status, 0, err)
        finally:
            srv.shutdown()
            srv.server_close()
        self.assertEqual(read(self.p('keep')), b'theirs\n')
        st = os.stat(cur)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o600))
        self.assertTrue(read(cur).startswith(b'vmsampler-export-cursor 1\n'), read(cur))

    def test_own_files_still_written(self):
        # root's own output, made before: replaced as ever
        mine = self.p('mine.csv')
        self.assertEqual(run('-q', '-i', '10ms', '-n', '2', '-o', mine)[0], 0)
        self.assertEqual(run('-q', '-i', '10ms', '-n', '3', '-o', mine)[0], 0)
        self.assertEqual(len(read(mine).splitlines()), 4)
        # the user's own file, written by the sampler as that user (--user)
        path = self.theirs('user.csv', 'seq,time,\n')
        status, err = run('-q', '--user', self.user, '-i', '10ms', '-n', '2', '-o', path)
        self.assertEqual(status, 0, err)
        rows = read(path).splitlines()
        self.assertEqual(len(rows), 3, rows)
        self.assertTrue(rows[0].startswith(b'seq,time,'))
        self.assertEqual(os.stat(path).st_uid, self.uid)
        # and, as that user, root's file is another user's: said so (it was
        # "Permission denied"), and so even when the mode lets them write
        self.refused(['-q', '--user', self.user, '-i', '10ms', '-n', '2', '-o', mine],
                     'is owned by another user (uid 0, not %d)' % self.uid)
        os.chmod(mine, 0o666)
        self.refused(['-q', '--user', self.user, '-i', '10ms', '-n', '2', '-o', mine],
                     'is owned by another user (uid 0, not %d)' % self.uid)
        self.assertEqual(len(read(mine).splitlines()), 4)


if __name__ == '__main__':
    res = unittest.main(verbosity=2, exit=False).result
    if not res.wasSuccessful():
        sys.exit(1)
    sys.exit(77 if res.skipped else 0)
