#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sd_notify against a real notify socket (issue 13): this machine's PID 1
is not systemd, so the test is the service manager's end of the protocol,
an AF_UNIX datagram socket it binds and names in $NOTIFY_SOCKET, as systemd
does for Type=notify.

  - READY=1 comes once, after the first frame is in the output file;
  - WATCHDOG=1 every half of $WATCHDOG_USEC from the loop, between ticks:
    at a 1 s interval and a 400 ms watchdog, 2.5 pings a second, more
    than the frames;
  - STOPPING=1 at SIGTERM;
  - $WATCHDOG_PID naming another process: no WATCHDOG=1.
VMS_BIN may be a build without libsystemd (scripts/test.sh runs it on the
minimal build too): the same datagrams, written by notify.c itself."""
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))


class Notify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='vms-notify.')
        self.sock_path = os.path.join(self.tmp, 'notify')
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        self.sock.settimeout(0.05)
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
        self.sock.close()
        subprocess.run(['rm', '-rf', self.tmp])

    def start(self, out, **env):
        e = dict(os.environ, NOTIFY_SOCKET=self.sock_path)
        e.pop('WATCHDOG_USEC', None)
        e.pop('WATCHDOG_PID', None)
        e.update(env)
        self.proc = subprocess.Popen([BIN, '-i', '1s', '-o', out], env=e, stderr=subprocess.PIPE, text=True)

    def collect(self, seconds, on_msg=None):
        msgs = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            msgs.append((time.monotonic(), data))
            if on_msg:
                on_msg(data)
        return msgs

    def rows(self, path):
        try:
            with open(path) as f:
                return len(f.read().splitlines()) - 1
        except FileNotFoundError:
            return -1

    def test_ready_watchdog_stopping(self):
        out = os.path.join(self.tmp, 'out.csv')
        self.start(out, WATCHDOG_USEC='400000')
        rows_at_ready = []

        def on_msg(m):
            if m.startswith('READY=1'):
                rows_at_ready.append(self.rows(out))
        t0 = time.monotonic()
        msgs = self.collect(3.5, on_msg)
        self.proc.send_signal(signal.SIGTERM)
        msgs += self.collect(0.5)
        self.assertEqual(self.proc.wait(timeout=10), 0, self.proc.stderr.read())
        ready = [m for _, m in msgs if m.startswith('READY=1')]
        self.assertEqual(len(ready), 1, msgs)
        self.assertIn('STATUS=sampling every 1000 ms', ready[0])
        # the first frame was in the file when READY came
        self.assertGreaterEqual(rows_at_ready[0], 1)
        pings = [t for t, m in msgs if m == 'WATCHDOG=1' and t < t0 + 3.5]
        frames = self.rows(out)
        # every 200 ms for 3.5 s: 17; allow a loaded machine some slack
        self.assertGreaterEqual(len(pings), 12, msgs)
        self.assertLessEqual(len(pings), 18, msgs)
        self.assertGreater(len(pings), 2 * frames - 2, (len(pings), frames))
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        self.assertLess(max(gaps), 0.4, gaps)  # within the watchdog period
        self.assertEqual([m for _, m in msgs][-1], 'STOPPING=1')

    def test_watchdog_of_another_pid(self):
        out = os.path.join(self.tmp, 'out.csv')
        self.start(out, WATCHDOG_USEC='200000', WATCHDOG_PID='1')
        msgs = self.collect(1.5)
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=10), 0)
        self.assertEqual(sum(m.startswith('READY=1') for _, m in msgs), 1, msgs)
        self.assertEqual([m for _, m in msgs if m == 'WATCHDOG=1'], [])

    def test_no_socket(self):
        # without $NOTIFY_SOCKET nothing is sent and the run is as before
        out = os.path.join(self.tmp, 'out.csv')
        e = {k: v for k, v in os.environ.items() if k != 'NOTIFY_SOCKET'}
        r = subprocess.run([BIN, '-i', '100ms', '-n', '3', '-o', out], env=e, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.rows(out), 3)
        self.assertEqual(self.collect(0.2), [])


if __name__ == '__main__':
    unittest.main()
