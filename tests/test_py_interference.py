#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler.interference (issue 26 item 3) against `vmsampler report
--interference --format csv` on report_gen --interference's run (VMs that
stop and start again, a VM defined mid-run, marks intf-a and intf-b):
  - interference(): the same rows in the same order, seconds to the
    nanosecond, shares to the CSV's 1e-6, over the whole run, a mark
    window and a --from/--to window; .attrs' wait and run delay are the
    report JSON's;
  - the heatmap: its image is the victim x culprit matrix of the table
    (every pair's share; 0 where a pair has no row), its labels the
    victims and culprits;
  - one victim's timeline: each interval's value times its length summed
    over the window is the table's seconds of that culprit; an interval's
    values are the raw counters' steps (dump --format json) over its
    length; the stacked plot has one area per culprit (gid), its top the
    sum of the row;
  - a DataFrame from load() is refused (no identities), saying so."""
import csv
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

L.require(['numpy', 'pandas', 'matplotlib'])
import matplotlib  # noqa: E402
matplotlib.use('Agg')
import numpy as np  # noqa: E402

import vmsampler  # noqa: E402


def report(path, *args):
    r = L.run([L.BIN, 'report', '--interference', path] + list(args))
    return r.stdout


class Interference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.vmsf = L.synthetic(os.path.join(cls.tmp.name, 'intf.vms'), 400, 5, '-i', '10000', '--interference', '3')
        if cls.vmsf:
            cls.marks = {e['subject']: int(e['t_mono_ns']) for e in L.dump_events(cls.vmsf) if e['event'] == 'mark'}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if not self.vmsf:
            self.skipTest('report_gen is not built')

    def same_as_csv(self, df, text):
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(list(df.columns), ['victim', 'culprit', 'seconds', 'share'])
        self.assertEqual(len(df), len(rows))
        for (_, x), r in zip(df.iterrows(), rows):
            self.assertEqual((x.victim, x.culprit), (r['victim'], r['culprit']))
            self.assertAlmostEqual(x.seconds, float(r['seconds']), delta=1e-9)
            self.assertAlmostEqual(x.share, float(r['share']), delta=6e-7)

    def test_table(self):
        self.same_as_csv(vmsampler.interference(self.vmsf), report(self.vmsf, '--format', 'csv'))
        w = ('mark:intf-a', 'mark:intf-b')
        df = vmsampler.interference(self.vmsf, window=w, marks=self.marks)
        self.same_as_csv(df, report(self.vmsf, '--window', 'mark:intf-a..mark:intf-b', '--format', 'csv'))
        j = json.loads(report(self.vmsf, '--window', 'mark:intf-a..mark:intf-b', '--format', 'json'))
        for v in j['victims']:
            self.assertAlmostEqual(df.attrs['wait'][v['victim']], v['wait_seconds'], delta=1e-9)
            self.assertAlmostEqual(df.attrs['run_delay'][v['victim']], v['run_delay_seconds'], delta=1e-9)
        self.same_as_csv(vmsampler.interference(self.vmsf, window=(500, 2500)),
                         report(self.vmsf, '--from', '500', '--to', '2500', '--format', 'csv'))
        # Frames work as well as a path
        self.same_as_csv(vmsampler.interference(vmsampler.read_frames(self.vmsf)),
                         report(self.vmsf, '--format', 'csv'))

    def test_heatmap(self):
        df = vmsampler.interference(self.vmsf)
        fig = vmsampler.interference_heatmap(df)
        ax = fig.axes[0]
        img = np.asarray(ax.images[0].get_array())
        ys = [t.get_text() for t in ax.get_yticklabels()]
        xs = [t.get_text() for t in ax.get_xticklabels()]
        self.assertEqual(sorted(ys), sorted(df.victim.unique()))
        self.assertEqual(sorted(xs), sorted(df.culprit.unique()))
        self.assertEqual(img.shape, (len(ys), len(xs)))
        pairs = {(r.victim, r.culprit): r.share for r in df.itertuples()}
        for i, v in enumerate(ys):
            for k, c in enumerate(xs):
                self.assertAlmostEqual(img[i, k], pairs.get((v, c), 0.0), delta=1e-12, msg=(v, c))
        fig.savefig(os.path.join(self.tmp.name, 'heat.png'))
        sec = vmsampler.interference_heatmap(df, value='seconds').interference
        self.assertAlmostEqual(float(sec.values.sum()), float(df.seconds.sum()), delta=1e-6)

    def test_timeline(self):
        df = vmsampler.interference(self.vmsf)
        victim = sorted(df.victim.unique())[0]
        tl = vmsampler.interference_timeline(self.vmsf, victim)
        dts = np.asarray(tl.attrs['dt'])
        mine = df[df.victim == victim].set_index('culprit').seconds
        self.assertEqual(set(tl.columns), set(mine.index))
        for c in tl.columns:
            self.assertAlmostEqual(float((tl[c].values * dts).sum()), mine[c], delta=1e-6, msg=c)
        # one interval against the raw counters
        fr = [json.loads(x) for x in L.run([L.BIN, 'dump', self.vmsf, '--format', 'json']).stdout.splitlines()]
        k = len(fr) // 2
        p, q = fr[k - 1], fr[k]
        dt = (q['t_mono_ns'] - p['t_mono_ns']) / 1e9
        row = tl.loc[tl.index[k - 1]]
        for c in ('own', 'host', 'kernel'):
            col = 'vm.%s.intf.%s' % (victim, c)
            self.assertAlmostEqual(row[c], (q[col] - p[col]) / 1e9 / dt, delta=1e-12)
        fig = vmsampler.interference_stack(tl)
        ax = fig.axes[0]
        self.assertEqual([p.get_gid() for p in ax.collections], list(tl.columns))
        top = ax.collections[-1].get_paths()[0].vertices[:, 1].max()
        self.assertAlmostEqual(top, float(tl.sum(axis=1).max()), delta=1e-9)
        fig.savefig(os.path.join(self.tmp.name, 'stack.png'))

    def test_dataframe_refused(self):
        with self.assertRaisesRegex(TypeError, 'identities'):
            vmsampler.interference(vmsampler.load(self.vmsf, columns=['vm.*.intf.*']))


if __name__ == '__main__':
    L.main('VMS_REQUIRE_PY')
