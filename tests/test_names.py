#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Names from the outside world, through the real sampler (issue 23, 3 and 4).

  - interfaces (dummies, or bridges without the dummy driver) named b'\\xff\\xfe', b'\\xff', b'\\xfe', b'\\\\xff' (a literal
    backslash: the escape of another name), b'e\\x1b[2J' and b'c\\x01'
    (control characters), in a network namespace the test
    creates and removes (root): the sampler runs in it, and every consumer
    gets valid, distinct names escaped by the rule of vmsampler-format(5),
    NAMES (computed here from the rule's text, not by the C code):
    /metrics passes `promtool check metrics` with one device label per
    interface, `dump --format json` and `tail --format json` write lines
    json.loads reads, the Python loader has one column per interface,
    `report` writes valid UTF-8 without bytes below 0x20 but '\\n';
  - `mark` refuses text that is not UTF-8 (exit 2, one line), the
    control socket too (a raw client);
  - a libvirt domain of the test driver (test:///FILE, no daemon) named
    with 494 bytes: the sampler runs (exit 0, it stopped with "cannot build
    the schema: File name too long" before), its columns are
    vm.<prefix>~<FNV-1a 64, computed here>.*, keyed by the UUID, and one
    line says so; the host's columns are there; one named with 1500 bytes
    (the agent sent a message the sampler refused, and restarted, every
    VM lost): there too, beside a short-named one.
Without root (or ip, promtool, libvirt): SKIP 77, a failure with
VMS_REQUIRE_ROOT=1."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
sys.path.insert(0, os.path.join(SRC, 'python'))
import vmsampler  # noqa: E402
import test_export  # noqa: E402  (start_export, get, stop_all)
from test_py_lib import have_libvirt, main  # noqa: E402

NS = 'vms-names-%d' % os.getpid()
IFACES = [b'\xff\xfe', b'\xff', b'\xfe', b'\\xff', b'e\x1b[2J', b'c\x01']
CTRL = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029]')


def skip(why):
    raise unittest.SkipTest(why)  # a real SKIP, or a failure with VMS_REQUIRE_ROOT=1 (main)


def escaped(raw):
    """The rule of vmsampler-format(5), NAMES, from its text."""
    out = ''
    i = 0
    while i < len(raw):
        for n in (4, 3, 2, 1):
            try:
                ch = raw[i:i + n].decode('utf-8')
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and ch != '\\' and not CTRL.match(ch):
                out += ch
                i += n
                break
        else:
            out += '\\\\' if raw[i:i + 1] == b'\\' else '\\x%02x' % raw[i]
            i += 1
    return out


def run(*args, ns=False, **kw):
    cmd = (['ip', 'netns', 'exec', NS] if ns else []) + [BIN] + list(args)
    return subprocess.run(cmd, capture_output=True, timeout=120, **kw)


class Interfaces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            skip('needs root (a network namespace)')
        if not shutil.which('ip'):
            skip('needs ip (iproute2)')
        if subprocess.run(['ip', 'netns', 'add', NS], capture_output=True).returncode != 0:
            skip('cannot create a network namespace')
        cls.tmp = tempfile.mkdtemp(prefix='vms-names.')
        try:
            cls.setup_ns()
        except BaseException:
            cls.tearDownClass()  # (unittest does not when setUpClass fails)
            raise

    @classmethod
    def setup_ns(cls):
        for n in IFACES:
            # a dummy, or a bridge where the kernel has no dummy driver
            for kind in (b'dummy', b'bridge'):
                r = subprocess.run([b'ip', b'-n', NS.encode(), b'link', b'add', b'name', n, b'type', kind],
                                   capture_output=True)
                if r.returncode == 0:
                    break
            assert r.returncode == 0, r.stderr
            subprocess.run([b'ip', b'-n', NS.encode(), b'link', b'set', n, b'up'], check=True)
        # the names as the kernel gives them back
        got = subprocess.run(
            ['ip', 'netns', 'exec', NS, 'cat', '/proc/net/dev'], capture_output=True, check=True).stdout
        for n in IFACES:
            assert b' ' + n + b':' in got or b'\n' + n + b':' in got, (n, got)
        cls.out = os.path.join(cls.tmp, 'o.vms')
        r = run('-i', '100ms', '-n', '5', '-o', cls.out, ns=True)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        subprocess.run(['ip', 'netns', 'del', NS], capture_output=True)
        if hasattr(cls, 'tmp'):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def want(self):
        return set('net.%s.rx_bytes' % escaped(n) for n in IFACES)

    def test_escaped_reference(self):
        # the reference itself: distinct and reversible
        self.assertEqual(len(set(map(escaped, IFACES))), len(IFACES))
        self.assertEqual(escaped(b'\xff\xfe'), '\\xff\\xfe')
        self.assertEqual(escaped(b'\\xff'), '\\\\xff')

    def json_lines(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.split(b'\n')[:-1]
        self.assertGreaterEqual(len(lines), 5)
        strings = set()
        for line in lines:
            strings |= _walk(json.loads(line.decode('utf-8')))  # strict: a bad byte raises
        for w in self.want():
            self.assertTrue(any(w in k for k in strings), w)

    def test_dump_json(self):
        self.json_lines('dump', self.out, '--format', 'json')

    def test_tail_json(self):
        self.json_lines('tail', self.out, '--no-follow', '--format', 'json')

    def test_python_loader(self):
        rows = vmsampler.load(self.out, pandas=False)
        cols = set().union(*(set(r) for r in rows))
        self.assertTrue(self.want() <= cols, sorted(self.want() - cols))
        rx = [c for c in cols if c.startswith('net.') and c.endswith('.rx_bytes')]
        self.assertEqual(len(rx), len(IFACES) + 1, rx)  # and lo
        for sch in vmsampler.schemas(self.out):
            names = [c.name for c in sch.cols]
            self.assertEqual(len(names), len(set(names)))

    def test_report(self):
        r = run('report', self.out)
        self.assertEqual(r.returncode, 0, r.stderr)
        r.stdout.decode('utf-8')  # valid UTF-8
        bad = [b for b in r.stdout if b < 0x20 and b != 0x0a]
        self.assertEqual(bad, [], r.stdout[:400])
        j = run('report', self.out, '--json')
        self.assertEqual(j.returncode, 0, j.stderr)
        json.loads(j.stdout.decode('utf-8'))

    def test_metrics(self):
        promtool = shutil.which('promtool')
        if not promtool:
            skip('needs promtool (Debian package prometheus)')
        p, port = test_export.start_export(self.tmp, '--file', self.out)
        try:
            status, _, body = test_export.get('http://127.0.0.1:%d/metrics' % port)
            self.assertEqual(status, 200)
        finally:
            test_export.stop_all()
        body.decode('utf-8')
        r = subprocess.run([promtool, 'check', 'metrics'], input=body, capture_output=True)
        # promtool's lint warnings exit 3; a parse error is "error while linting"
        self.assertNotIn(b'error', r.stdout + r.stderr, r.stdout + r.stderr)
        devs = set()
        for m in re.finditer(rb'^node_network_receive_bytes_total\{[^}]*device="((?:[^"\\]|\\.)*)"', body, re.M):
            devs.add(m.group(1).decode('utf-8').replace('\\\\', '\\'))  # the label's own escaping undone
        for n in IFACES:
            self.assertIn(escaped(n), devs)

    def test_mark_refuses(self):
        r = run('mark', '--control', os.path.join(self.tmp, 'none.ctl'), b'ok\xff')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.count(b'\n'), 1, r.stderr)
        self.assertIn(b'UTF-8', r.stderr)
        # the server, from a raw client
        ring = os.path.join(self.tmp, 'ring')
        s = subprocess.Popen([BIN, '-i', '100ms', '--ring', ring, '-o', os.path.join(self.tmp, 'm.vms')],
                             stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if os.path.exists(ring + '.ctl'):
                    break
                time.sleep(0.05)
            c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            c.settimeout(5)
            c.connect(ring + '.ctl')
            c.send(b'bad\xff')
            self.assertTrue(c.recv(256).decode().startswith('error: '))
            c.close()
        finally:
            s.terminate()
            s.wait()


def _walk(d):
    out = set()
    if isinstance(d, dict):
        for k, v in d.items():
            out.add(k)
            out |= _walk(v)
    elif isinstance(d, list):
        for v in d:
            out |= _walk(v)
    elif isinstance(d, str):
        out.add(d)
    return out


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


class LongVmName(unittest.TestCase):
    def test_long_name(self):
        if not have_libvirt():
            return  # no VM names in a build without libvirt (its build-nolibvirt stage); the libvirt build runs this
        tmp = tempfile.mkdtemp(prefix='vms-names.')
        try:
            name = 'v' * 480 + '-long-name-%03d' % 7  # 494 bytes
            uuid = '00000000-0000-4000-8000-000000000023'
            # longer than the agent's protocol carries (1024 bytes): it
            # sent a message the sampler refused, and every VM was lost
            huge = 'w' * 1500
            huge_uuid = '00000000-0000-4000-8000-000000000024'
            disk = 'vd' + 'z' * 62  # the longest disk target the agent passes (VMS_VP_DEV_MAX)
            node = os.path.join(tmp, 'node.xml')
            with open(node, 'w') as f:
                f.write('''<node><cpu><mhz>2400</mhz><nodes>1</nodes><sockets>1</sockets><cores>2</cores>
<threads>1</threads></cpu><memory>25165824</memory>
<domain type='test'><name>%s</name><uuid>%s</uuid><memory unit='MiB'>128</memory><vcpu>1</vcpu>
<os><type arch='x86_64'>hvm</type></os><devices>
<disk type='file' device='disk'><source file='/nonexistent/x.qcow2'/><target dev='%s' bus='virtio'/></disk>
<interface type='bridge'><mac address='52:54:00:00:00:23'/><source bridge='br0'/><target dev='tvnet23'/>
<model type='virtio'/></interface></devices></domain>
<domain type='test'><name>%s</name><uuid>%s</uuid><memory unit='MiB'>128</memory><vcpu>1</vcpu>
<os><type arch='x86_64'>hvm</type></os></domain>
<domain type='test'><name>short</name><uuid>00000000-0000-4000-8000-000000000025</uuid>
<memory unit='MiB'>128</memory><vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os></domain></node>
''' % (name, uuid, disk, huge, huge_uuid))
            cfg = os.path.join(tmp, 'c.yaml')
            with open(cfg, 'w') as f:
                f.write('sources:\n  libvirt:\n    uri: "test://%s"\n    refresh: 1s\n  netdev: {include: [lo]}\n' % node)
            out = os.path.join(tmp, 'o.vms')
            env = dict(os.environ)
            env.pop('LIBVIRT_DEFAULT_URI', None)
            r = subprocess.run([BIN, '-c', cfg, '-i', '200ms', '-n', '15', '-o', out], capture_output=True,
                               text=True, env=env, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            # the column name: its first 143 bytes, '~', the hash
            short = name[:160 - 17] + '~%016x' % fnv1a64(name.encode())
            said = [ln for ln in r.stderr.splitlines() if uuid in ln]
            self.assertEqual(len(said), 1, r.stderr)
            self.assertIn('vm.%s.' % short, said[0])
            self.assertNotIn('malformed', r.stderr)
            # the agent sends the first 1007 bytes, '~' and the hash of the
            # whole; the sampler shortens that for column names
            sent = huge[:1007] + '~%016x' % fnv1a64(huge.encode())
            hshort = sent[:143] + '~%016x' % fnv1a64(sent.encode())
            said = [ln for ln in r.stderr.splitlines() if huge_uuid in ln]
            self.assertEqual(len(said), 1, r.stderr)
            self.assertIn('vm.%s.' % hshort, said[0])
            rows = vmsampler.load(out, pandas=False)
            self.assertEqual(len(rows), 15)
            cols = set().union(*(set(x) for x in rows))
            self.assertIn('vm.%s.cpu_time' % short, cols)
            self.assertIn('vm.%s.net.tvnet23.rx_bytes' % short, cols)
            self.assertIn('cpu.all.user', cols)
            self.assertIn('vm.%s.cpu_time' % hshort, cols)
            self.assertIn('vm.short.cpu_time', cols)
            self.assertEqual(rows[-1]['virt.domains'], 3)
            self.assertTrue(any(x.get('vm.%s.block.%s.rd_reqs' % (short, disk)) is not None for x in rows))
            self.assertTrue(any(x.get('vm.%s.cpu_time' % short) is not None for x in rows[1:]))
            keys = set(c.key for sch in vmsampler.schemas(out) for c in sch.cols
                       if c.name == 'vm.%s.cpu_time' % short)
            self.assertEqual(keys, {uuid})
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main('VMS_REQUIRE_ROOT')
