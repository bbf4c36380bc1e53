#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The host's identity in every run (issue 25 item 1, issue 27 item 4): the
real sampler records it as the HOST record before each SCHEMA (files,
rotated parts, the live ring's head), and `vmsampler dump --info [--json]
FILE|--ring R` prints it.  Each value is checked against what this test
reads itself from the kernel, /etc and /sys (the independent reference),
the libvirt part against `virsh` on the same test-driver connection, and
an older file (the committed vmlab run, format 1.0) still reads, with one
line saying it has none."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

BIN = L.BIN
TMP = tempfile.mkdtemp(prefix='vms-hostid-')
OLD = os.path.join(L.FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')


def first_line(path):
    try:
        with open(path) as f:
            return f.readline().rstrip('\n')
    except OSError:
        return ''


def info(*args, check=True):
    r = subprocess.run([BIN, 'dump', '--info', '--json'] + list(args), capture_output=True, text=True,
                       timeout=60)
    if check and r.returncode != 0:
        raise AssertionError('dump --info %s: exit %d: %s' % (args, r.returncode, r.stderr))
    return json.loads(r.stdout) if r.stdout.strip() else None, r


def version_lines():
    return subprocess.run([BIN, '--version'], capture_output=True, text=True, check=True).stdout.splitlines()


class HostId(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.run_path = L.record(os.path.join(TMP, 'run.vms'), '-i', '50ms', '-n', '5')

    def test_values_equal_the_kernel(self):
        h, _ = info(self.run_path)
        self.assertEqual(h['hostname'], first_line('/proc/sys/kernel/hostname'))
        self.assertEqual(h['kernel'], first_line('/proc/sys/kernel/osrelease'))
        self.assertEqual(h['kernel'], os.uname().release)
        self.assertEqual(h['boot_id'], first_line('/proc/sys/kernel/random/boot_id'))
        if os.path.exists('/etc/machine-id'):
            self.assertEqual(h['machine_id'], first_line('/etc/machine-id'))
        self.assertEqual(h['cpus_online'], first_line('/sys/devices/system/cpu/online'))
        if os.path.exists('/sys/devices/system/node/online'):
            self.assertEqual(h['numa_nodes'], first_line('/sys/devices/system/node/online'))
        self.assertEqual(int(h['user_hz']), os.sysconf('SC_CLK_TCK'))
        self.assertEqual(int(h['page_size']), os.sysconf('SC_PAGE_SIZE'))
        with open('/proc/cpuinfo') as f:
            models = [ln.split(':', 1)[1].strip() for ln in f if ln.startswith('model name')]
        if models:
            self.assertEqual(h['cpu_model'], models[0])
        self.assertTrue(h['timezone'])
        v = version_lines()
        self.assertEqual('vmsampler ' + h['vmsampler_version'], v[0])
        feats = set(h['build_features'].split())
        for ln in v[1:]:
            k, _, yes = ln.partition(': ')
            k = {'remote write': 'remote_write', 'libcap-ng': 'capng', 'libsystemd': 'systemd'}.get(k, k)
            if yes in ('yes', 'no'):
                self.assertEqual(k in feats, yes == 'yes', ln)

    def test_text_and_json_agree(self):
        h, _ = info(self.run_path)
        r = subprocess.run([BIN, 'dump', '--info', self.run_path], capture_output=True, text=True, check=True)
        text = dict(ln.split(': ', 1) for ln in r.stdout.splitlines())
        self.assertEqual(text, h)

    def test_proc_root_names_the_host(self):
        """--proc-root: the host whose /proc is read (a container's
        /host/proc) is the one named, not the machine running the sampler."""
        root = os.path.join(TMP, 'proc')
        os.makedirs(os.path.join(root, 'sys', 'kernel', 'random'))
        for f in ('stat', 'loadavg', 'diskstats', 'meminfo', 'vmstat'):
            shutil.copy(os.path.join('/proc', f), os.path.join(root, f))
        os.makedirs(os.path.join(root, 'net'))
        shutil.copy('/proc/net/dev', os.path.join(root, 'net', 'dev'))
        for name, val in (('hostname', 'fleet-host-042'), ('osrelease', '5.10.0-test'),
                          ('random/boot_id', '11111111-2222-3333-4444-555555555555')):
            with open(os.path.join(root, 'sys', 'kernel', name), 'w') as f:
                f.write(val + '\n')
        out = L.record(os.path.join(TMP, 'pr.vms'), '--proc-root', root, '-i', '50ms', '-n', '3')
        h, _ = info(out)
        self.assertEqual(h['hostname'], 'fleet-host-042')
        self.assertEqual(h['kernel'], '5.10.0-test')
        self.assertEqual(h['boot_id'], '11111111-2222-3333-4444-555555555555')

    def test_live_ring(self):
        ring = os.path.join(TMP, 'live.ring')
        p = subprocess.Popen([BIN, '-q', '-i', '50ms', '-o', os.devnull, '--force', '--ring', ring],
                             env=L.host_env())
        try:
            self.assertTrue(L.wait_for(lambda: os.path.exists(ring)))
            time.sleep(0.3)
            h, _ = info('--ring', ring)
            self.assertEqual(h['hostname'], first_line('/proc/sys/kernel/hostname'))
            self.assertEqual(h['boot_id'], first_line('/proc/sys/kernel/random/boot_id'))
        finally:
            p.terminate()
            p.wait(timeout=30)

    def test_every_rotated_file(self):
        d = os.path.join(TMP, 'rot')
        os.makedirs(d)
        L.record(os.path.join(d, 'r.vms'), '-i', '100ms', '-n', '25', '--rotate', '1s')
        files = sorted(glob.glob(os.path.join(d, 'r-*.vms')))
        self.assertGreaterEqual(len(files), 2)
        for f in files:
            h, _ = info(f)
            self.assertEqual(h['boot_id'], first_line('/proc/sys/kernel/random/boot_id'), f)

    def test_old_file_reads_without(self):
        """A file of format 1.0 (no HOST record): {} and one line, exit 0;
        its frames still read."""
        h, r = info(OLD)
        self.assertEqual(h, {})
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn('no host identity recorded', r.stderr)
        d = subprocess.run([BIN, 'dump', OLD], capture_output=True, check=True)
        self.assertEqual(len(d.stdout.splitlines()), 121)

    def test_usage(self):
        for args in (['--json', self.run_path], ['--info', '--rates', self.run_path],
                     ['--info', '--ring', 'x', self.run_path]):
            r = subprocess.run([BIN, 'dump'] + args, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class Python(unittest.TestCase):
    """The package's vmsampler.host() and load().attrs['host'] give what
    dump --info --json gives, for a file, a ring and an older file."""

    def test_host_equals_dump_info(self):
        import vmsampler
        path = L.record(os.path.join(TMP, 'py.vms'), '-i', '50ms', '-n', '3')
        ref, _ = info(path)
        self.assertEqual(vmsampler.host(path), ref)
        self.assertEqual(vmsampler.host(OLD), {})
        try:
            import pandas  # noqa: F401
        except ImportError:
            return  # load() without pandas returns rows, no attrs
        self.assertEqual(vmsampler.load(path).attrs['host'], ref)
        self.assertEqual(vmsampler.load(path, columns=['cpu.all.user']).attrs['host'], ref)

    def test_ring(self):
        import vmsampler
        ring = os.path.join(TMP, 'py.ring')
        p = subprocess.Popen([BIN, '-q', '-i', '50ms', '-o', os.devnull, '--force', '--ring', ring],
                             env=L.host_env())
        try:
            self.assertTrue(L.wait_for(lambda: os.path.exists(ring)))
            time.sleep(0.3)
            ref, _ = info('--ring', ring)
            self.assertEqual(vmsampler.host(ring), ref)
        finally:
            p.terminate()
            p.wait(timeout=30)


class Libvirt(unittest.TestCase):
    def test_without_libvirt(self):
        """A build without libvirt says so in build_features and has no
        libvirt key (run in the build-nolibvirt stage; with libvirt, the
        test below)."""
        if L.have_libvirt():
            return
        h, _ = info(L.record(os.path.join(TMP, 'novirt.vms'), '-i', '50ms', '-n', '3'))
        self.assertNotIn('libvirt', h['build_features'].split())
        self.assertFalse([k for k in h if k.startswith('libvirt') or k.startswith('hypervisor')])

    def test_libvirt_part(self):
        """With libvirt's test driver: the URI, the driver, its version and
        libvirt's, as `virsh` reports them on the same connection; in the
        HOST record of the generation that has the VMs' columns."""
        if not L.have_libvirt():
            return  # test_without_libvirt
        if not shutil.which('virsh'):
            self.skipTest('virsh (libvirt-clients) is needed')
        env = L.testdrv_env(TMP, 2)
        out = L.record(os.path.join(TMP, 'vm.vms'), '-i', '200ms', '-n', '10', env=env)
        uri = env['LIBVIRT_DEFAULT_URI']
        v = subprocess.run(['virsh', '-c', uri, 'version'], capture_output=True, text=True, check=True).stdout
        ver = {}
        for ln in v.splitlines():
            k, _, val = ln.partition(':')
            ver[k.strip()] = val.strip()
        # the last HOST record of the file: read through the Python-free
        # route, dump --info of the part after the VMs appeared
        h = last_host(out)
        self.assertEqual(h['libvirt_uri'], uri)
        self.assertEqual(h['hypervisor'], 'TEST')
        lib = [x for k, x in ver.items() if k.startswith('Using library')][0].split()[-1]
        self.assertEqual(h['libvirt_version'], lib)
        hv = [x for k, x in ver.items() if k.startswith('Running hypervisor')][0].split()[-1]
        self.assertEqual(h['hypervisor_version'], hv)


def last_host(path):
    """The pairs of the last HOST record of a .vms file, walked here from
    the format's framing (vmsampler-format(5)) with no code of vmsampler."""
    import struct
    data = open(path, 'rb').read()
    p, last = 32, None
    while p + 12 <= len(data):
        ln, typ = struct.unpack_from('<IH', data, p)
        if typ == 4:
            pl = data[p + 12:p + 12 + ln]
            q, pairs = 0, []

            def varint(q):
                v, s = 0, 0
                while True:
                    b = pl[q]
                    q += 1
                    v |= (b & 0x7f) << s
                    s += 7
                    if not b & 0x80:
                        return v, q
            n, q = varint(q)
            for _ in range(2 * n):
                m, q = varint(q)
                pairs.append(pl[q:q + m].decode())
                q += m
            last = dict(zip(pairs[0::2], pairs[1::2]))
        p += 16 + ln
    return last


if __name__ == '__main__':
    try:
        L.main('VMS_REQUIRE_ROOT')
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
