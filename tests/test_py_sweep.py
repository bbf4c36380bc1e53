#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python3 -m vmsampler sweep: three runs recorded with 1, 2 and 3 VMs of
libvirt's test driver, each with a mark "vms=N":
  - --by vms labels them 1, 2, 3 (the most frequent count of VMs with a
    vm.NAME.%cpu value), --by mark the same from the marks, --label as
    given;
  - the CSV's n, mean, p5 and p95 of every metric (defaults, and
    cpu.*.%busy) equal those computed here, independently, from
    `vmsampler dump --rates` of each run (percentiles written out);
  - the figure: one axes per metric (title), the mean line's points are
    (label, mean) in label order, the p5 and p95 lines' points the
    percentiles."""
import csv
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

L.require(['numpy', 'matplotlib'])
import matplotlib  # noqa: E402
matplotlib.use('Agg')

from vmsampler import sweep  # noqa: E402

TMP = None
RUNS = []


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix='vms-pysweep.')
    if not L.have_libvirt():
        return
    for n in (2, 1, 3):   # not in label order: the figure sorts
        env = L.testdrv_env(TMP, n, name='node%d' % n)
        out = os.path.join(TMP, 'vms%d.vms' % n)
        L.record_with_marks(out, [(0.2, 'vms=%d' % n)], env=env, interval='50ms', count=40)
        RUNS.append(out)


def tearDownModule():
    subprocess.run(['rm', '-rf', TMP])


def expected(path, metric):
    """n, mean, p5, p95 of a metric from dump --rates, computed here."""
    ref = L.dump_rates(path)
    if metric.endswith('.%busy'):
        base = metric[:-6]
        vals = [100.0 - a - b for a, b in zip(ref[base + '.%idle'], ref[base + '.%iowait'])]
    else:
        vals = ref[metric]
    vals = sorted(v for v in vals if v == v)
    n = len(vals)
    return n, math.fsum(vals) / n, L.percentile(vals, 5), L.percentile(vals, 95)


def vm_label(path):
    ref = L.dump_rates(path)
    cols = [c for c in ref if c.startswith('vm.') and c.endswith('.%cpu') and c.count('.') == 2]
    counts = [sum(1 for c in cols if ref[c][i] == ref[c][i]) for i in range(len(ref['seq']))]
    best = max(counts.count(x) for x in set(counts))
    return max(x for x in set(counts) if counts.count(x) == best)


class SyntheticSweep(unittest.TestCase):
    """report_gen's synthetic hosts with 4, 8 and 12 VMs (VMs stop and
    start again, one is defined mid-run): labels and numbers as dump says."""

    def test_by_vms(self):
        runs = []
        for m in (8, 4, 12):
            p = L.synthetic(os.path.join(TMP, 'gen%d.vms' % m), 600, m, '-s', str(m))
            if p is None:
                self.skipTest('report_gen is not built')
            runs.append(p)
        res, by = sweep.sweep(runs, by='vms', metrics=['cpu.all.%busy', 'vm.*.%cpu', 'disk.*.%util'])
        labels = [r.label for r in res]
        self.assertEqual(labels, [vm_label(p) for p in runs])
        self.assertEqual(labels, [8, 4, 12])
        for r in res:
            for m in r.metrics:
                n, mean, p5, p95 = expected(r.path, m)
                got = r.stats[m]
                self.assertEqual(got[0], n, m)
                for g, e in zip(got[1:], (mean, p5, p95)):
                    self.assertAlmostEqual(g, e, delta=1e-9 * max(1.0, abs(e)), msg=m)
        fig = sweep.build(res, by=by)
        ax = [a for a in fig.axes if a.get_gid() == 'vms-metric:cpu.all.%busy'][0]
        mean = [ln for ln in ax.get_lines() if ln.get_gid() == 'mean'][0]
        self.assertEqual(list(mean.get_xdata()), [4, 8, 12])


@unittest.skipUnless(L.have_libvirt(), 'built without libvirt: no VMs from the test driver')
class Sweep(unittest.TestCase):
    def cli(self, *args):
        e = dict(os.environ)
        e['PYTHONPATH'] = os.path.join(L.SRC, 'python')
        r = subprocess.run([sys.executable, '-m', 'vmsampler', 'sweep'] + list(args), capture_output=True,
                           text=True, env=e, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def read_csv(self, path):
        with open(path, newline='') as f:
            return list(csv.DictReader(f))

    def check_rows(self, rows, labels):
        self.assertTrue(rows)
        for row in rows:
            run = row['run']
            n, mean, p5, p95 = expected(run, row['metric'])
            self.assertEqual(int(row['n']), n, row)
            self.assertAlmostEqual(float(row['mean']), mean, delta=1e-9 * max(1.0, abs(mean)), msg=row)
            self.assertAlmostEqual(float(row['p5']), p5, delta=1e-9 * max(1.0, abs(p5)), msg=row)
            self.assertAlmostEqual(float(row['p95']), p95, delta=1e-9 * max(1.0, abs(p95)), msg=row)
            self.assertEqual(row['label'], str(labels[run]), row)

    def test_by_vms_defaults(self):
        out = os.path.join(TMP, 'sweep.csv')
        self.cli(*RUNS, '-o', os.path.join(TMP, 'sweep.png'), '--by', 'vms', '--csv', out)
        rows = self.read_csv(out)
        labels = {r: vm_label(r) for r in RUNS}
        self.assertEqual(sorted(labels.values()), [1, 2, 3])
        self.assertEqual([labels[r] for r in RUNS], [2, 1, 3])
        metrics = {r['metric'] for r in rows}
        self.assertIn('cpu.all.%busy', metrics)
        self.assertIn('load.1m', metrics)
        self.assertIn('stat.cswch/s', metrics)
        self.assertTrue(any(m.startswith('disk.') and m.endswith('.%util') for m in metrics), metrics)
        self.check_rows(rows, labels)
        with open(os.path.join(TMP, 'sweep.png'), 'rb') as f:
            self.assertEqual(f.read(4), b'\x89PNG')

    def test_by_mark_and_label(self):
        out = os.path.join(TMP, 'mark.csv')
        self.cli(*RUNS, '--by', 'mark', '--csv', out, '--metric', 'cpu.*.%busy', '--metric', 'stat.intr/s')
        rows = self.read_csv(out)
        self.check_rows(rows, {r: int(os.path.basename(r)[3]) for r in RUNS})
        self.assertIn('cpu.0.%busy', {r['metric'] for r in rows})
        out = os.path.join(TMP, 'label.csv')
        self.cli(*RUNS, '--label', 'b,a,c', '--csv', out, '--metric', 'load.1m')
        rows = self.read_csv(out)
        self.check_rows(rows, dict(zip(RUNS, 'bac')))

    def test_figure_content(self):
        runs, by = sweep.sweep(RUNS, by='vms', metrics=['cpu.all.%busy,stat.cswch/s'])
        fig = sweep.build(runs, by=by)
        axes = {ax.get_title(loc='left'): ax for ax in fig.axes if (ax.get_gid() or '').startswith('vms-metric:')}
        self.assertEqual(set(axes), {'cpu.all.%busy', 'stat.cswch/s'})
        for m, ax in axes.items():
            lines = {ln.get_gid(): ln for ln in ax.get_lines()}
            ex = sorted((vm_label(r),) + expected(r, m) for r in RUNS)
            self.assertEqual(list(lines['mean'].get_xdata()), [e[0] for e in ex])
            for gid, k in (('mean', 2), ('p5', 3), ('p95', 4)):
                got = list(lines[gid].get_ydata())
                for g, e in zip(got, ex):
                    self.assertAlmostEqual(g, e[k], delta=1e-9 * max(1.0, abs(e[k])), msg='%s %s' % (m, gid))
            self.assertEqual(ax.get_xlabel(), 'VMs running')

    def test_errors(self):
        e = dict(os.environ)
        e['PYTHONPATH'] = os.path.join(L.SRC, 'python')
        r = subprocess.run([sys.executable, '-m', 'vmsampler', 'sweep'] + RUNS + ['--label', '1,2', '--csv', '-'],
                           capture_output=True, text=True, env=e)
        self.assertEqual(r.returncode, 1)
        self.assertIn('3 runs', r.stderr)
        r = subprocess.run([sys.executable, '-m', 'vmsampler', 'sweep'] + RUNS, capture_output=True, text=True,
                           env=e)
        self.assertEqual(r.returncode, 1)
        self.assertIn('nothing to write', r.stderr)


if __name__ == '__main__':
    L.main()
