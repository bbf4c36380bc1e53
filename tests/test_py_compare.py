#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler.rates, vmsampler.compare and plot.overlay (issue 27) against
the C tools on the same files:
  - rates.intervals(): every rate it computes equals `vmsampler dump
    --rates` (to dump's printed digit), empty where dump's cell is empty,
    on the recorded vmlab run, on a run of the live /proc recorded here,
    and on report_gen's synthetic run, which has 32-bit disk counters
    that wrap and VMs stopped and started again (new schema generations;
    dump's rate_flags show both: the test checks that it met them); a
    counter reset, which no recorded run has, on hand values;
  - compare(): the same table as `vmsampler report --window ... --format
    csv` on the vmlab run (means, delta, CI to the printed digit, the
    real mark) with the same seed, another seed another CI; between two
    runs recorded here, every C row of a quantity rates.py computes is
    in the DataFrame with the same numbers;
  - plot.overlay(): the two lines' y are the two runs' rates, x the
    seconds from each alignment point (a mark), the CDFs end at 1."""
import csv
import io
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

L.require(['numpy', 'pandas', 'matplotlib'])
import matplotlib  # noqa: E402
matplotlib.use('Agg')
import numpy as np  # noqa: E402

from vmsampler import compare as C  # noqa: E402
from vmsampler import plot, rates  # noqa: E402

RUN = os.path.join(L.FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')
WA = '5..mark:3 busy guests start'
WB = 'mark:3 busy guests start..mark:busy guests destroyed'
TMP = None


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix='vms-pycompare.')


def tearDownModule():
    L.run(['rm', '-rf', TMP])


def marks(path):
    return {e['subject']: int(e['t_mono_ns']) for e in L.dump_events(path) if e['event'] == 'mark'}


def c_csv(*args):
    r = L.run([L.BIN, 'report'] + list(args) + ['--format', 'csv'], env=L.host_env())
    return list(csv.DictReader(io.StringIO(r.stdout)))


META_COLS = ('seq', 'time', 't_mono_ns', 'interval_s', 'rate_flags')


def printed_tol(cell):
    """half a unit of the cell's last printed digit (dump prints %.2f, a
    memory gauge in kB %.0f), and a little for the float summation"""
    dot = cell.find('.')
    return 0.51 * 10 ** -(len(cell) - dot - 1 if dot >= 0 else 0)


class Rates(unittest.TestCase):
    def check(self, path, want_flags=0):
        """every column of dump --rates, every interval: equal to the
        printed digit, empty where dump's cell is empty; and rates.py
        computes nothing dump does not print"""
        header, rows = L.dump_csv(path, '--rates')
        ivs = list(rates.intervals(path))
        self.assertEqual(len(ivs), len(rows))
        col = {h: i for i, h in enumerate(header)}
        names = set(header) - set(META_COLS)
        flags = 0
        n = 0
        for iv, row in zip(ivs, rows):
            self.assertEqual(int(row[col['t_mono_ns']]), iv.t_mono_ns)
            flags |= int(row[col['rate_flags']])
            self.assertEqual(set(iv.values) - names, set(), (path, row[0], 'not in dump --rates'))
        for iv, row in zip(ivs, rows):
            for k in names:
                cell = row[col[k]]
                v = iv.values.get(k)
                if cell == '':
                    self.assertIsNone(v, (path, row[0], k))
                    continue
                self.assertIsNotNone(v, (path, row[0], k, cell))
                self.assertLessEqual(abs(float(cell) - v), printed_tol(cell) + 1e-12 * abs(v), (row[0], k, cell, v))
                n += 1
        self.assertEqual(flags & want_flags, want_flags, 'the run has no interval with flags %d' % want_flags)
        return n, names

    def test_recorded_vmlab(self):
        n, names = self.check(RUN)
        self.assertIn('vm.vms-001.dlyms/s', names)
        self.assertIn('cpu.1.%usr', names)
        print('vmlab: %d values of %d columns equal' % (n, len(names)))

    def test_live(self):
        out = L.record(os.path.join(TMP, 'live.vms'), '-i', '0.1s', '-n', '30')
        n, names = self.check(out)
        self.assertIn('stat.cswch/s', names)

    def test_wraps_and_generations(self):
        out = L.synthetic(os.path.join(TMP, 'syn.vms'), 2000, 6)
        if out is None:
            self.skipTest('report_gen is not built')
        n, names = self.check(out, want_flags=1 | 4)  # a wrap and new generations were met
        self.assertTrue(any(k.startswith('vm.') for k in names))
        print('synthetic: %d values of %d columns equal, wraps and new generations included' % (n, len(names)))


    def test_perf_and_memory(self):
        """a synthetic run with per-VM hardware perf counters (report_gen
        --perf) and the live run's memory, paging and psi outputs"""
        out = L.synthetic(os.path.join(TMP, 'perf.vms'), 200, 4, '--perf')
        if out is None:
            self.skipTest('report_gen is not built')
        n, names = self.check(out)
        self.assertIn('vm.web-01.perf.instructions/s', names)
        self.assertIn('vm.web-01.perf.cycles/s', names)
        live = os.path.join(TMP, 'live.vms')
        if not os.path.exists(live):
            L.record(live, '-i', '0.1s', '-n', '30')
        n, names = self.check(live)
        for k in ('mem.kbmemused', 'mem.%memused', 'mem.kbavail', 'mem.%commit', 'vmstat.pgfault/s',
                  'vmstat.pgscank/s', 'vmstat.%vmeff'):
            self.assertIn(k, names)

    def test_cgroup_cap(self):
        """a VM (tests/fake_agent's "pid" scenario: a busy process here) in a
        CPU cgroup with a quota of 20 % of a CPU: vm.standin.%cap, %thrtl and
        the cgroup's counters as dump --rates has them"""
        cg = CappedCgroup()
        try:
            out = cg.run(os.path.join(TMP, 'cap.vms'), 12)
        finally:
            cg.close()
        n, names = self.check(out)
        self.assertIn('vm.standin.%cap', names)
        self.assertIn('vm.standin.%thrtl', names)
        ivs = list(rates.intervals(out))
        caps = [iv.values['vm.standin.%cap'] for iv in ivs[2:] if 'vm.standin.%cap' in iv.values]
        # the busy loop uses its whole cap (the kernel enforces it per 100 ms period)
        self.assertGreater(len(caps), 5)
        self.assertTrue(80 < sum(caps) / len(caps) < 120, caps)

    def test_counter_rules(self):
        """rates.c's cdelta on hand values: a reset is no value (never a
        negative or a zero), a 32-bit counter wraps, a 64-bit column that
        holds a 32-bit value wraps at 2^32, a missing end is no value."""
        from vmsampler import Column
        c64 = Column('x', '', 1, 0, 64, 0)
        c32 = Column('y', '', 1, 0, 32, 0)
        cols = [c64, c32, c64, c64]
        pv = [10 ** 12, 2 ** 32 - 10, 2 ** 32 - 10, 5]
        cv = [10 ** 12 - 1, 5, 5, None]
        self.assertIsNone(rates._delta(cols, 0, pv, cv))           # reset
        self.assertEqual(rates._delta(cols, 1, pv, cv), 15)        # wrap at 32 bits
        self.assertEqual(rates._delta(cols, 2, pv, cv), 15)        # a 32-bit value in 64 bits
        self.assertIsNone(rates._delta(cols, 3, pv, cv))           # missing
        self.assertEqual(rates._delta(cols, 0, [1, 0, 0, 0], [4, 0, 0, 0]), 3)
        dt = [1.0, 1.0, 1.0, 1.0]
        self.assertIsNone(rates._value('per_s', ([0], 1.0), cols, pv, cv, dt))
        self.assertIsNone(rates._value('per_s', ([1, 2], 1.0), cols, pv, cv, [1.0, 1.0, 2.0, 1.0]))  # taken at different times
        self.assertEqual(rates._value('per_s', ([1, 2], 0.5), cols, pv, cv, [2.0, 2.0, 2.0, 1.0]), 7.5)


class CappedCgroup:
    """A busy process in a CPU cgroup capped at 20 % of a CPU (root; cgroup
    v1 cpu and cpuacct, or v2), the VM "standin" of tests/fake_agent."""
    QUOTA, PERIOD = 20000, 100000

    def __init__(self):
        if os.geteuid() != 0:
            raise unittest.SkipTest('a CPU cgroup with a quota needs root')
        name = 'vms-test-cap-%d' % os.getpid()
        self.dirs = []
        if os.path.exists('/sys/fs/cgroup/cgroup.controllers'):
            d = os.path.join('/sys/fs/cgroup', name)
            os.mkdir(d)
            self.dirs.append(d)
            with open(os.path.join(d, 'cpu.max'), 'w') as f:
                f.write('%d %d' % (self.QUOTA, self.PERIOD))
        else:
            for ctl in ('cpu', 'cpuacct'):
                d = os.path.join('/sys/fs/cgroup', ctl, name)
                if os.path.realpath(os.path.dirname(d)) in [os.path.realpath(os.path.dirname(x)) for x in self.dirs]:
                    continue  # cpu,cpuacct mounted together
                os.mkdir(d)
                self.dirs.append(d)
            with open(os.path.join(self.dirs[0], 'cpu.cfs_quota_us'), 'w') as f:
                f.write(str(self.QUOTA))
        self.proc = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
        for d in self.dirs:
            with open(os.path.join(d, 'cgroup.procs'), 'w') as f:
                f.write(str(self.proc.pid))

    def run(self, out, n):
        agent = os.path.join(L.BUILD, 'tests', 'fake_agent')
        if not os.access(agent, os.X_OK):
            raise unittest.SkipTest('tests/fake_agent is not built')
        conf = out + '.yaml'
        with open(conf, 'w') as f:
            f.write('sources:\n  libvirt:\n    agent: "%s"\n    uri: "fake:pid"\n' % agent)
        return L.record(out, '-c', conf, '-i', '200ms', '-n', str(n),
                        env=dict(L.host_env(), FAKE_AGENT_PID=str(self.proc.pid)))

    def close(self):
        self.proc.kill()
        self.proc.wait()
        for d in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.02)


class Compare(unittest.TestCase):
    def same_rows(self, df, crows, seed_rows_only=False):
        cm = {(r['quantity'], r['entity']): r for r in crows}
        checked = 0
        for r in df.itertuples():
            x = cm[(r.quantity, r.entity)]
            for k in ('a_mean', 'b_mean', 'delta', 'ci_low', 'ci_high'):
                v = getattr(r, k)
                if x[k] == '':
                    self.assertTrue(v != v, (r.quantity, r.entity, k, v))
                else:
                    self.assertAlmostEqual(float(x[k]), v, delta=0.00005001 + 1e-9 * abs(v),
                                           msg=(r.quantity, r.entity, k))
            self.assertEqual(x['real'], '1' if r.real else '0', (r.quantity, r.entity))
            checked += 1
        return cm, checked

    def test_windows_same_as_c(self):
        m = marks(RUN)
        df = C.compare(RUN, RUN, window_a=(5, 'mark:3 busy guests start'),
                       window_b=('mark:3 busy guests start', 'mark:busy guests destroyed'), marks_a=m, marks_b=m)
        crows = c_csv(RUN, '--window', WA, '--window', WB)
        cm, checked = self.same_rows(df, crows)
        self.assertEqual(checked, len(crows))  # every row: this run has no quantity rates.py lacks
        self.assertEqual(list(df.quantity), [r['quantity'] for r in crows])
        light = df[(df.quantity == 'vm.dlyms/s') & df.entity.isin(['vms-001', 'vms-002', 'vms-003'])]
        self.assertEqual(list(light.real), [True] * 3)
        # the seed
        df7 = C.compare(RUN, RUN, window_a=(5, 'mark:3 busy guests start'),
                        window_b=('mark:3 busy guests start', 'mark:busy guests destroyed'), marks_a=m, marks_b=m,
                        seed=7)
        self.same_rows(df7, c_csv(RUN, '--window', WA, '--window', WB, '--seed', '7'))
        both = df.ci_low == df.ci_low
        self.assertFalse((df7.ci_low[both] == df.ci_low[both]).all())

    def test_two_runs_recorded_here(self):
        a = L.record(os.path.join(TMP, 'a.vms'), '-i', '0.1s', '-n', '25')
        b = L.record(os.path.join(TMP, 'b.vms'), '-i', '0.1s', '-n', '25')
        df = C.compare(a, b)
        crows = c_csv('--compare', a, b)
        cm, checked = self.same_rows(df, crows)
        # every row of the C command, memory, paging and swapping included
        self.assertEqual(checked, len(crows))
        self.assertTrue({'memory.kbmemused', 'paging.fault/s', 'swapping.pswpin/s'} <= set(df.quantity))
        print('two runs: %d rows equal to the C command' % checked)

    def test_ipc(self):
        """vm.ipc on report_gen --perf's run (per-VM instructions and
        cycles): the same rows as the C command, and each window's mean
        equal to the mean of the per-interval instructions / cycles computed
        here from the raw counters of `vmsampler dump`"""
        out = L.synthetic(os.path.join(TMP, 'perf-cmp.vms'), 200, 4, '--perf', '--no-events')
        if out is None:
            self.skipTest('report_gen is not built')
        df = C.compare(out, out, window_a=(0, 80), window_b=(100, 180))
        crows = c_csv(out, '--window', '0..80', '--window', '100..180')
        cm, checked = self.same_rows(df, crows)
        self.assertEqual(checked, len(crows))
        ipc = df[df.quantity == 'vm.ipc']
        self.assertEqual(sorted(ipc.entity), ['build-04', 'cache-03', 'db-02', 'web-01'])
        header, raw = L.dump_csv(out)
        col = {h: i for i, h in enumerate(header)}
        t = [int(r[col['t_mono_ns']]) for r in raw]
        t0 = t[0]
        for r in ipc.itertuples():
            ins, cyc = col['vm.%s.perf.instructions' % r.entity], col['vm.%s.perf.cycles' % r.entity]
            for lo, hi, want in ((0, 80, r.a_mean), (100, 180, r.b_mean)):
                x = [(int(raw[k][ins]) - int(raw[k - 1][ins])) / (int(raw[k][cyc]) - int(raw[k - 1][cyc]))
                     for k in range(1, len(raw))
                     if t[k - 1] >= t0 + lo * 1e9 - 1e6 and t[k] <= t0 + hi * 1e9 + 1e6]
                self.assertGreater(len(x), 70)
                self.assertAlmostEqual(sum(x) / len(x), want, delta=1e-9 * want)
                self.assertTrue(0.4 < want < 2.2)
        print('vm.ipc: %d VMs, C and Python equal, means equal to the raw counters\' ratios' % len(ipc))


class Overlay(unittest.TestCase):
    def test_overlay(self):
        m = marks(RUN)
        fig = plot.overlay(RUN, RUN, 'vm.vms-001.dlyms/s', align_a=None, align_b=m['3 busy guests start'],
                           labels=('whole run', 'from the mark'))
        ax, axd = fig.axes[:2]
        lines = {ln.get_gid(): ln for ln in ax.get_lines() + axd.get_lines() if ln.get_gid()}
        ivs = list(rates.intervals(RUN))
        y = [iv.values.get('vm.vms-001.dlyms/s', np.nan) for iv in ivs]
        la, lb = lines['overlay-a'], lines['overlay-b']
        np.testing.assert_array_equal(la.get_ydata(), y)
        np.testing.assert_array_equal(lb.get_ydata(), y)
        t0 = ivs[0].prev_mono_ns
        np.testing.assert_allclose(la.get_xdata(), [(iv.t_mono_ns - t0) / 1e9 for iv in ivs])
        # aligned at the mark: the first interval after it at x in (0, 1.5]
        xb = np.asarray(lb.get_xdata())
        self.assertTrue(0 < xb[xb > 0].min() <= 1.5)
        self.assertAlmostEqual(float(np.asarray(lines['cdf-a'].get_ydata())[-1]), 1.0)
        with tempfile.TemporaryDirectory() as d:
            plot.save(fig, os.path.join(d, 'o.png'))
            self.assertGreater(os.path.getsize(os.path.join(d, 'o.png')), 10000)


if __name__ == '__main__':
    L.main()
