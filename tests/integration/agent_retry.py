#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""agent_retry - the real agent (vmsampler-virt) without a libvirt daemon:
how often it tries to connect, and how soon it tries once the daemon's
socket appears (issue 15: a host without libvirtd should not pay for an
agent that polls for it).

The URI names a socket in a directory that does not exist yet
(qemu:///system?socket=DIR/run/sock), so nothing on this machine answers
it.  Each failed attempt is a CONN message (up 0) on the agent's socket to
the sampler, read here.  Checked:
  - without any sign of a daemon the blind retries back off beyond the
    5 s steps they used to stop at: at most 9 attempts in 34 s (0.25 s
    doubling to 60 s: 8; doubling to 5 s, as before: 11);
  - the directory, then a listening socket in it appear: the agent
    connects to it (accept() returns) within 1.5 s of the socket being
    bound (as before: the next 5 s step, here ~4 s later).
No libvirtd and no guest is needed: this runs wherever the build has
libvirt.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import BUILD, Checks, log

CONN = 2  # VMS_VP_CONN (src/common/virt_proto.h)


class Agent:
    def __init__(self, uri):
        self.mine, theirs = socket.socketpair()
        self.p = subprocess.Popen([os.path.join(BUILD, 'vmsampler-virt'), '--fd=%d' % theirs.fileno(),
                                   '--uri=' + uri], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        theirs.close()
        self.buf = b''
        self.conn_down = []  # monotonic time of each failed attempt

    def pump(self, until):
        """Read the agent's messages until the monotonic time `until`."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            self.mine.settimeout(left)
            try:
                b = self.mine.recv(65536)
            except socket.timeout:
                return
            if not b:
                raise SystemExit('FAIL: agent_retry: the agent closed its socket: %s' % self.p.stderr.read())
            self.buf += b
            while len(self.buf) >= 8:
                n = struct.unpack_from('<I', self.buf)[0]
                if len(self.buf) < n:
                    break
                if self.buf[5] == CONN and self.buf[8] == 0:
                    self.conn_down.append(time.monotonic())
                self.buf = self.buf[n:]

    def stop(self):
        self.mine.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def main():
    c = Checks('agent_retry')
    with tempfile.TemporaryDirectory(prefix='vms-agent-retry-') as tmp:
        d = os.path.join(tmp, 'run')
        sock = os.path.join(d, 'sock')
        a = Agent('qemu:///system?socket=' + sock)
        try:
            t0 = time.monotonic()
            a.pump(t0 + 34)
            n = len(a.conn_down)
            log('%d attempts in 34 s: %s' % (n, ' '.join('%.2f' % (t - t0) for t in a.conn_down)))
            c.ok(1 <= n <= 9, '%d connection attempts in 34 s without a daemon' % n)
            # the daemon starts: its run directory, then its socket
            os.mkdir(d)
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind(sock)
            srv.listen(4)
            t_bound = time.monotonic()
            srv.settimeout(0.05)
            got = None
            while got is None and time.monotonic() < t_bound + 10:
                a.pump(time.monotonic() + 0.05)  # keep the agent's writes flowing
                try:
                    got = srv.accept()[0]
                except socket.timeout:
                    pass
            t_acc = time.monotonic()
            log('connected %.2f s after the socket was bound' % (t_acc - t_bound))
            c.ok(got is not None, 'the agent never connected to the new socket')
            c.ok(t_acc - t_bound <= 1.5, 'the agent connected %.2f s after the socket appeared' % (t_acc - t_bound))
            if got:
                got.close()
            srv.close()
        finally:
            a.stop()
    c.done()


if __name__ == '__main__':
    main()
