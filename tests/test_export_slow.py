#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Slow clients against `vmsampler export`'s HTTP server (issue 23, item 1).

A sampler writes a live ring (this host's /proc, 100 ms); `vmsampler
export --ring` serves it on 127.0.0.1, a free port.  The attackers connect
from other loopback addresses (127.0.0.2 ...: all of 127.0.0.0/8 is this
host's), the well-behaved scraper from 127.0.0.1.  Before the fix the
server had 64 connections in all and an idle timeout of 30 s that every
byte restarts: 64 clients sending one header line now and then (or saying
nothing, 30 s at a time) kept every scrape out.  Checked:
  - a flood of 96 connections from 4 addresses, half of them sending one
    header line a second, half silent, each reopened as soon as the
    server closes it: every one of 10 scrapes from 127.0.0.1 is served
    (200, with vmsampler_frame_sequence), each within 5 s;
  - the limit per address: of 12 connections from one address exactly 8
    stay open and the other 4 are closed by the server; closing one of
    the 8 makes room for exactly one more; a scrape from another address
    is served meanwhile;
  - the deadline of a request head (--header-timeout 3): a client that
    sends a header line every 0.2 s and a silent one are closed no
    earlier than 3 s after their connect (measured from before it, so
    after the server's own start of the clock) and no later than 8 s;
    a head sent in 5 pieces over 0.5 s is answered (and its connection
    then closed, idle, by the same deadline at the latest).
The flood and the per-address cases use the default options, so that
they run against the binary before the fix too (where they fail)."""
import errno
import http.client
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from test_py_lib import wait_for
from test_export import stop_all

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))

HEAD_START = b'GET /metrics HTTP/1.1\r\nHost: x\r\n'
PER_IP = 8  # the server's limit per client address (export --help)


def wait(pred, what, timeout=20.0):
    if not wait_for(pred, timeout):
        raise AssertionError('timed out waiting for ' + what)


def alias_usable(addr):
    """Whether this host lets a socket bind to the loopback address addr."""
    s = socket.socket()
    try:
        s.bind((addr, 0))
        return True
    except OSError:
        return False
    finally:
        s.close()


def closed_by_peer(s):
    """True when the server closed s (EOF or reset), False while it is open."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(4096) == b''
    except OSError as e:
        if e.errno in (errno.ECONNRESET, errno.EPIPE):
            return True
        raise


def scrape(port, src='127.0.0.1', timeout=5.0):
    """One GET /metrics from src: (status, body), or (None, why)."""
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout, source_address=(src, 0))
    try:
        c.request('GET', '/metrics')
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)
    finally:
        c.close()


class Flood:
    """Connections from the addresses srcs, n per address, every other one
    sending one header line each `drip` seconds (never ending its head), the
    others silent; each reopened `reopen` s after the server closed it."""

    def __init__(self, port, srcs, n, drip=1.0, reopen=0.5):
        self.port, self.drip, self.reopen = port, drip, reopen
        self.slots = [{'src': a, 'drip': i % 2 == 0, 'sock': None, 'next': 0.0, 'due': 0.0}
                      for a in srcs for i in range(n)]
        self.connects = self.closed = 0
        self.quit = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def open(self, sl, now):
        try:
            s = socket.create_connection(('127.0.0.1', self.port), timeout=2, source_address=(sl['src'], 0))
        except OSError:
            sl['next'] = now + self.reopen
            return
        s.setblocking(False)
        self.connects += 1
        if sl['drip']:
            s.send(HEAD_START)
        sl['sock'], sl['due'] = s, now + self.drip

    def run(self):
        while not self.quit.is_set():
            now = time.monotonic()
            for sl in self.slots:
                s = sl['sock']
                if s is None:
                    if now >= sl['next']:
                        self.open(sl, now)
                    continue
                gone = closed_by_peer(s)
                if not gone and sl['drip'] and now >= sl['due']:
                    try:
                        s.send(b'X-Drip: %d\r\n' % int(now * 1000))
                    except OSError:
                        gone = True
                    sl['due'] = now + self.drip
                if gone:
                    s.close()
                    self.closed += 1
                    sl['sock'], sl['next'] = None, now + self.reopen
            self.quit.wait(0.1)

    def open_now(self):
        return sum(1 for sl in self.slots if sl['sock'] is not None)

    def start(self):
        self.t.start()

    def stop(self):
        self.quit.set()
        self.t.join()
        for sl in self.slots:
            if sl['sock'] is not None:
                sl['sock'].close()


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for a in ('127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'):
            if not alias_usable(a):
                print('SKIP: cannot bind to %s on this host' % a, file=sys.stderr)
                sys.exit(77)
        cls.tmp = tempfile.mkdtemp(prefix='vms-slow.')
        cls.procs = []
        cls.ring = os.path.join(cls.tmp, 'ring')
        cls.sampler = subprocess.Popen([BIN, '-q', '-i', '100ms', '--ring', cls.ring, '-o',
                                        os.path.join(cls.tmp, 'run.vms')], stdout=subprocess.DEVNULL)
        cls.procs.append(cls.sampler)
        wait(lambda: os.path.exists(cls.ring), 'the ring')

    @classmethod
    def tearDownClass(cls):
        stop_all(cls.procs)
        subprocess.run(['rm', '-rf', cls.tmp])

    def export(self, *args):
        """export --ring --listen 127.0.0.1:0 ARGS, serving frames: its port"""
        err = open(os.path.join(self.tmp, 'export.%d.err' % len(self.procs)), 'w+')
        p = subprocess.Popen([BIN, 'export', '--ring', self.ring, '--listen', '127.0.0.1:0'] + list(args),
                             stdout=subprocess.DEVNULL, stderr=err)
        self.procs.append(p)
        self.addCleanup(self.stop, p)

        def listening():
            err.seek(0)
            text = err.read()
            if p.poll() is not None:
                raise AssertionError('export exited %d: %s' % (p.returncode, text))
            return re.search(r'serving http://127\.0\.0\.1:(\d+)/metrics', text)
        self.addCleanup(err.close)
        wait(listening, 'export to listen')
        port = int(listening().group(1))
        wait(lambda: scrape(port)[0] == 200, 'a first frame')
        return port

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        self.assertEqual(p.returncode, 0)

    def assert_served(self, port, src='127.0.0.1'):
        t0 = time.monotonic()
        status, body = scrape(port, src)
        took = time.monotonic() - t0
        self.assertEqual(status, 200, 'scrape from %s: %s after %.1f s' % (src, body, took))
        self.assertIn(b'vmsampler_frame_sequence', body)
        return took


class Flooded(Base):
    def test_scrapes_are_served_during_a_flood_of_slow_clients(self):
        port = self.export()
        srcs = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']
        fl = Flood(port, srcs, 24)
        fl.start()
        try:
            # every slot connected once (the server may have closed some since)
            wait(lambda: fl.connects >= len(fl.slots), 'the flood to connect')
            time.sleep(1.5)  # the server has accepted (or refused) them all
            served, took = 0, []
            for i in range(10):
                t0 = time.monotonic()
                status, body = scrape(port)
                took.append(time.monotonic() - t0)
                if status == 200 and b'vmsampler_frame_sequence' in body:
                    served += 1
                time.sleep(0.3)
            held = fl.open_now()
        finally:
            fl.stop()
        print('flood: %d slots from %d addresses, %d connects, %d closed by the server, '
              '%d held at the end; %d of 10 scrapes served, the slowest in %.3f s'
              % (len(fl.slots), len(srcs), fl.connects, fl.closed, held, served, max(took)), file=sys.stderr)
        self.assertEqual(served, 10)
        # the flood did hold connections: at most the per-address limit each
        self.assertGreater(held, 0)
        self.assertLessEqual(held, PER_IP * len(srcs))


class PerAddress(Base):
    def test_a_client_address_holds_at_most_8_connections(self):
        port = self.export()
        socks = [socket.create_connection(('127.0.0.1', port), timeout=2, source_address=('127.0.0.2', 0))
                 for _ in range(PER_IP + 4)]
        try:
            # the server closes the extra ones at once; the others stay
            wait(lambda: sum(map(closed_by_peer, socks)) >= 4, timeout=10,
                 what='the server to close the connections beyond the limit')
            time.sleep(1.0)
            open_ = [s for s in socks if not closed_by_peer(s)]
            self.assertEqual(len(open_), PER_IP)
            self.assert_served(port, '127.0.0.3')
            self.assert_served(port, '127.0.0.1')
            # one closed makes room for exactly one more (once the server
            # has seen it closed: tried again while neither got in)
            open_[0].close()
            end = time.monotonic() + 20
            while True:
                more = [socket.create_connection(('127.0.0.1', port), timeout=2,
                                                 source_address=('127.0.0.2', 0)) for _ in range(2)]
                socks += more
                wait(lambda: sum(map(closed_by_peer, more)) >= 1, timeout=10,
                     what='the server to close one of two new connections')
                time.sleep(1.0)
                kept = sum(1 for s in more if not closed_by_peer(s))
                if kept or time.monotonic() > end:
                    break
            self.assertEqual(kept, 1)
        finally:
            for s in socks:
                s.close()


class HeadDeadline(Base):
    TIMEOUT = 3.0
    LATE = 5.0  # generous: the server looks every TIMEOUT/8

    def closed_after(self, port, drip):
        """seconds from before the connect until the server closed a client
        that sends one header line each 0.2 s (drip) or nothing"""
        t0 = time.monotonic()
        s = socket.create_connection(('127.0.0.1', port), timeout=2, source_address=('127.0.0.2', 0))
        try:
            if drip:
                s.sendall(HEAD_START)
            while time.monotonic() - t0 < self.TIMEOUT + self.LATE + 5:
                r, _, _ = select.select([s], [], [], 0.2)
                if r and closed_by_peer(s):
                    return time.monotonic() - t0
                if drip:
                    try:
                        s.sendall(b'X-Drip: 1\r\n')
                    except OSError:
                        return time.monotonic() - t0
            return None
        finally:
            s.close()

    def assert_deadline(self, took, what):
        self.assertIsNotNone(took, what + ': never closed')
        self.assertGreaterEqual(took, self.TIMEOUT, what)
        self.assertLessEqual(took, self.TIMEOUT + self.LATE, what)

    def test_request_heads_have_a_deadline(self):
        port = self.export('--header-timeout', str(self.TIMEOUT))
        results = {}
        ts = [threading.Thread(target=lambda k=k, d=d: results.__setitem__(k, self.closed_after(port, d)))
              for k, d in (('drip', True), ('silent', False))]
        for t in ts:
            t.start()
        # meanwhile, a head in 5 pieces over 0.5 s is answered
        s = socket.create_connection(('127.0.0.1', port), timeout=5, source_address=('127.0.0.3', 0))
        for piece in (b'GET /metrics HTTP/1.1\r\n', b'Host: x\r\n', b'Accept: */*\r\n',
                      b'Connection: keep-alive\r\n', b'\r\n'):
            s.sendall(piece)
            time.sleep(0.1)
        f = s.makefile('rb')
        self.assertEqual(f.readline().split()[1], b'200')
        length, conn = None, b''
        while True:
            line = f.readline()
            if line in (b'\r\n', b''):
                break
            k, _, v = line.partition(b':')
            if k.strip().lower() == b'content-length':
                length = int(v)
            if k.strip().lower() == b'connection':
                conn = v.strip().lower()
        self.assertIn(b'vmsampler_frame_sequence', f.read(length))
        t_done = time.monotonic()
        # then the connection ends: at once when the answer said
        # "Connection: close" (libmicrohttpd's choice here), else when
        # its next head is late
        r, _, _ = select.select([s], [], [], self.TIMEOUT + self.LATE + 5)
        idle = time.monotonic() - t_done
        self.assertTrue(r and f.read(1) == b'', 'the connection was not closed')
        self.assertLessEqual(idle, self.TIMEOUT + self.LATE if conn != b'close' else self.LATE)
        f.close()
        s.close()
        for t in ts:
            t.join()
        print('closed after: drip %.2f s, silent %.2f s, after a response %.2f s (deadline %.1f s)'
              % (results['drip'], results['silent'], idle, self.TIMEOUT), file=sys.stderr)
        self.assert_deadline(results['drip'], 'a client dripping its head')
        self.assert_deadline(results['silent'], 'a silent client')
        self.assert_served(port)

    def test_bad_values(self):
        for v in ('0', '-1', 'x', '3601', '1s'):
            p = subprocess.run([BIN, 'export', '--ring', self.ring, '--header-timeout', v],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, v)
            lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn('--header-timeout', lines[0])


if __name__ == '__main__':
    unittest.main()
