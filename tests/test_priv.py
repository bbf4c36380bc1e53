#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The privilege table of vmsampler(1), PRIVILEGES, measured (issue 13).

A temporary system user (made here with useradd, removed at the end) runs
the real sampler with and without each capability (setpriv(1), ambient
capabilities as systemd's AmbientCapabilities= gives them), and root runs
it with --user (libcap-ng).  The VM is a stand-in: a process of root
(another user, as QEMU is libvirt-qemu's) announced by tests/fake_agent
(scenario pid), with lo as its tap.  For each run: exactly the lines that
name the missing capabilities, the columns that need them missing, and the
rest right against the kernel files read here (/proc/PID/io, schedstat,
/proc/net/dev)."""
import csv
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BUILD = os.environ.get('VMS_BUILD', os.path.join(SRC, 'build'))
BIN = os.environ.get('VMS_BIN', os.path.join(BUILD, 'vmsampler'))
AGENT = os.path.join(BUILD, 'tests', 'fake_agent')

CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_PERFMON, CAP_BPF = 2, 19, 38, 39
LINE_INTF = 'warning: source interference unavailable: '  # EPERM, or EACCES (tracefs)
LINE_PERF = 'warning: no CAP_PERFMON: perf counters are off'
LINE_TP = 'warning: no CAP_DAC_READ_SEARCH: perf tracepoints (kvm:kvm_exit) are off'
LINE_IO_DAC = "warning: no CAP_DAC_READ_SEARCH: the VMs' I/O counters"
LINE_IO_PTRACE = "warning: no CAP_SYS_PTRACE: the VMs' I/O counters"
ALL_LINES = [LINE_PERF, LINE_TP, LINE_IO_DAC, LINE_IO_PTRACE]


def skip_or_fail(why):
    if os.environ.get('VMS_REQUIRE_ROOT') == '1':
        print('FAIL (VMS_REQUIRE_ROOT=1): ' + why, file=sys.stderr)
        sys.exit(1)
    print('SKIP: ' + why, file=sys.stderr)
    sys.exit(77)


def kernel_io(pid):
    with open(f'/proc/{pid}/io') as f:
        return {k: int(v) for k, v in (line.split(': ') for line in f.read().splitlines())}


def kernel_schedstat(pid):
    with open(f'/proc/{pid}/task/{pid}/schedstat') as f:
        return int(f.read().split()[0])


class Priv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.user = 'vmspriv' + secrets.token_hex(3)
        subprocess.run(['useradd', '--system', '--no-create-home', '--home-dir', '/nonexistent',
                        '--shell', '/usr/sbin/nologin', cls.user], check=True)
        cls.tmp = tempfile.mkdtemp(prefix='vms-priv.')
        os.chmod(cls.tmp, 0o755)
        shutil.chown(cls.tmp, cls.user, cls.user)
        # the stand-in QEMU: root's, asleep (its counters stand still)
        cls.standin = subprocess.Popen(['sleep', '600'])
        time.sleep(0.2)
        cls.conf = os.path.join(cls.tmp, 'vm.yaml')
        with open(cls.conf, 'w') as f:
            f.write(f'sources:\n  libvirt:\n    agent: "{AGENT}"\n    uri: "fake:pid"\n'
                    '  perf:\n    host: [context-switches]\n    vm: [context-switches, "kvm:kvm_exit"]\n'
                    '    vm_interval: 0\n')
        os.chmod(cls.conf, 0o644)
        # the interference program (issue 26), with the same stand-in VM
        cls.conf_intf = os.path.join(cls.tmp, 'intf.yaml')
        with open(cls.conf_intf, 'w') as f:
            f.write(f'sources:\n  libvirt:\n    agent: "{AGENT}"\n    uri: "fake:pid"\n'
                    '  perf: {enabled: false}\n  interference: {enabled: true}\n')
        os.chmod(cls.conf_intf, 0o644)

    @classmethod
    def tearDownClass(cls):
        cls.standin.kill()
        cls.standin.wait()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        subprocess.run(['userdel', cls.user], check=False)
        r = subprocess.run(['getent', 'passwd', cls.user], capture_output=True)
        assert r.returncode != 0, 'the temporary user is still there'

    def env(self):
        return dict(os.environ, FAKE_AGENT_PID=str(self.standin.pid), HOME='/nonexistent')

    def run_as(self, caps, name, n=4, conf=None):
        """The sampler as the user with ambient caps (a list of names)."""
        out = os.path.join(self.tmp, name + '.csv')
        c = ','.join(['-all'] + ['+' + x for x in caps])
        cmd = ['setpriv', f'--reuid={self.user}', f'--regid={self.user}', '--init-groups',
               f'--inh-caps={c}', f'--ambient-caps={c}', '--', BIN, '-c', conf or self.conf, '-i', '200ms',
               '-n', str(n), '-o', out]
        r = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        return r.stderr, rows

    def run_user(self, conf, out, n):
        """The sampler started by root with --user: its /proc status once
        it wrote its first frame, and its stderr (it must exit 0)."""
        p = subprocess.Popen([BIN, '--user', self.user, '-c', conf, '-i', '200ms', '-n', str(n),
                              '-o', out], env=self.env(), stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and (not os.path.exists(out) or os.path.getsize(out) == 0):
                time.sleep(0.05)
            with open(f'/proc/{p.pid}/status') as f:
                st = dict(line.split(':\t', 1) for line in f.read().splitlines())
            err = p.communicate(timeout=30)[1]
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 0, err)
        return st, err

    def said(self, err, expected):
        for line in ALL_LINES:
            n = sum(line in x for x in err.splitlines())
            self.assertEqual(n, 1 if line in expected else 0, f'{line!r} in:\n{err}')
        # nothing else is a warning about privileges
        self.assertEqual(sum('warning: no CAP_' in x for x in err.splitlines()), len(expected), err)

    def common(self, rows):
        """What needs no privilege: host /proc, schedstat, the tap (lo)."""
        last = rows[-1]
        self.assertNotEqual(last['cpu.all.user'], '')
        with open('/proc/stat') as f:
            user_now = int(f.readline().split()[1])
        self.assertLessEqual(int(last['cpu.all.user']), user_now)
        self.assertEqual(int(last['vm.standin.vcpu0.time']), kernel_schedstat(self.standin.pid))
        # the tap (lo): its line of /proc/net/dev, world-readable
        self.assertTrue(any(k.startswith('vm.standin.net') and last[k] != '' for k in last), last)

    def io(self, rows):
        return rows[-1]['vm.standin.io.read_bytes'], rows[-1]['vm.standin.io.write_bytes']

    def perf_cols(self, rows):
        return [k for k in rows[-1] if '.perf.' in k or k.startswith('perf.')]

    def test_no_capability(self):
        err, rows = self.run_as([], 'none')
        self.said(err, [LINE_PERF, LINE_TP, LINE_IO_DAC, LINE_IO_PTRACE])
        self.common(rows)
        self.assertEqual(self.io(rows), ('', ''))
        self.assertEqual(self.perf_cols(rows), [])

    def test_perfmon(self):
        err, rows = self.run_as(['perfmon'], 'perfmon')
        self.said(err, [LINE_TP, LINE_IO_DAC, LINE_IO_PTRACE])
        self.common(rows)
        self.assertEqual(self.io(rows), ('', ''))
        self.assertGreater(int(rows[-1]['perf.all.context-switches']), 0)
        self.assertEqual(rows[-1]['vm.standin.perf.context-switches'], '0')  # asleep
        self.assertNotIn('vm.standin.perf.kvm:kvm_exit', rows[-1])

    def test_io_needs_both(self):
        k = kernel_io(self.standin.pid)
        for caps, lines in ((['sys_ptrace'], [LINE_PERF, LINE_TP, LINE_IO_DAC]),
                            (['dac_read_search'], [LINE_PERF, LINE_IO_PTRACE])):
            err, rows = self.run_as(caps, '-'.join(caps))
            self.said(err, lines)
            self.assertEqual(self.io(rows), ('', ''), caps)
        err, rows = self.run_as(['sys_ptrace', 'dac_read_search'], 'io')
        self.said(err, [LINE_PERF])
        self.common(rows)
        self.assertEqual(self.io(rows), (str(k['read_bytes']), str(k['write_bytes'])))

    def test_all_measured(self):
        k = kernel_io(self.standin.pid)
        err, rows = self.run_as(['perfmon', 'sys_ptrace', 'dac_read_search'], 'all')
        self.said(err, [])
        self.common(rows)
        self.assertEqual(self.io(rows), (str(k['read_bytes']), str(k['write_bytes'])))
        self.assertEqual(rows[-1]['vm.standin.perf.kvm:kvm_exit'], '0')

    def test_user_from_root(self):
        """--user: the switch keeps exactly the measured capabilities."""
        out = os.path.join(self.tmp, 'user.csv')
        k = kernel_io(self.standin.pid)
        st, err = self.run_user(self.conf, out, 10)
        uid = subprocess.run(['id', '-u', self.user], capture_output=True, text=True).stdout.strip()
        self.assertEqual(st['Uid'].split(), [uid] * 4)
        want = (1 << CAP_DAC_READ_SEARCH) | (1 << CAP_SYS_PTRACE) | (1 << CAP_PERFMON)
        self.assertEqual(int(st['CapEff'], 16), want)
        self.assertEqual(int(st['CapPrm'], 16), want)
        self.assertEqual(int(st['CapBnd'], 16), 0)
        self.assertEqual(int(st['CapAmb'], 16), 0)
        self.assertEqual(shutil.os.stat(out).st_uid, int(uid))
        with open(out) as f:
            rows = list(csv.DictReader(f))
        self.said(err, [])
        self.common(rows)
        self.assertEqual(self.io(rows), (str(k['read_bytes']), str(k['write_bytes'])))

    def intf_cols(self, rows):
        return [k for k in rows[-1] if '.intf.' in k]

    def test_interference(self):
        """The interference program: CAP_BPF, CAP_PERFMON and
        CAP_DAC_READ_SEARCH to load and attach it; without any one of them,
        one line and the rest is sampled."""
        if 'bpf: yes' not in subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout:
            self.skipTest('a build without BPF')
        full = ['bpf', 'perfmon', 'dac_read_search']
        for missing in full:
            caps = [x for x in full if x != missing]
            err, rows = self.run_as(caps, 'intf-no-' + missing, conf=self.conf_intf)
            self.assertEqual(sum(LINE_INTF in x for x in err.splitlines()), 1, (caps, err))
            self.assertEqual(self.intf_cols(rows), [], caps)
            self.common(rows)
        err, rows = self.run_as(full, 'intf', conf=self.conf_intf)
        self.assertNotIn('interference', err)
        self.common(rows)
        # the stand-in sleeps: it never waits, every part is 0
        self.assertEqual(rows[-1]['vm.standin.intf.wait'], '0', err)

    def test_interference_user_from_root(self):
        """--user with the interference source: CAP_BPF stays for the run
        (every bpf(2) call needs it while unprivileged_bpf_disabled is set,
        the account's reads too), CAP_PERFMON and CAP_DAC_READ_SEARCH are
        dropped after the sources opened (CAP_DAC_READ_SEARCH stays for
        the VMs' I/O counters), and the account is still read."""
        if 'bpf: yes' not in subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout:
            self.skipTest('a build without BPF')
        out = os.path.join(self.tmp, 'intf-user.csv')
        st, err = self.run_user(self.conf_intf, out, 15)
        want = (1 << CAP_DAC_READ_SEARCH) | (1 << CAP_SYS_PTRACE) | (1 << CAP_BPF)
        self.assertEqual(int(st['CapEff'], 16), want, err)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        self.assertNotIn('interference', err)
        self.assertEqual(len(rows), 15)
        self.assertTrue(all(r['vm.standin.intf.wait'] == '0' for r in rows), err)

    def test_user_errors(self):
        r = subprocess.run([BIN, '--user', 'no-such-user-x', '-n', '1', '-o', '-'], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "vmsampler: user: no user 'no-such-user-x'\n")
        r = subprocess.run(['setpriv', f'--reuid={self.user}', f'--regid={self.user}', '--init-groups',
                            '--', BIN, '--user', 'root', '-n', '1', '-o', '-'],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("user: switching to 'root' needs root", r.stderr)


if __name__ == '__main__':
    if os.geteuid() != 0:
        skip_or_fail('it creates a user and drops root: it must start as root')
    if not shutil.which('setpriv') or not shutil.which('useradd'):
        skip_or_fail('setpriv and useradd are needed')
    if 'libcap-ng: yes' not in subprocess.run([BIN, '--version'], capture_output=True, text=True).stdout:
        skip_or_fail('a build without libcap-ng')
    unittest.main()
