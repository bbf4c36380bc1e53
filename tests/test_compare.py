#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler report --compare / --window against dump --rates and dump
--events of the same files (issue 27).

On the recorded vmlab run (tests/fixtures/runs/vmlab-3-plus-3-busy.vms:
3 light guests, then 3 busy ones between marks), the window before the
first mark against the window between the marks:
  - each side's mean, p50, p95 and max are those of dump --rates' rows of
    the intervals in the window (the intervals found from dump's times
    and dump --events' marks, independently of report);
  - the light guests' run delay (dlyms/s) and steal rise, as real
    changes; the busy guests are listed as in B only;
  - the CSV has exactly the issue's columns; JSON and text say the same;
  - the same seed gives the same intervals, another seed other ones;
  - a run against itself: every delta 0, nothing real;
  - a run recorded here against the fixture: the header shows both
    hosts' identity (dump --info) and warns that the hosts and the
    sources differ;
  - usage errors (a mark not in the run, a bad window) are one line and
    exit 2."""
import csv
import io
import json
import os
import re
import subprocess
import tempfile
import unittest

from test_py_lib import BIN, FIXTURES, main

RUN = os.path.join(FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')
W_BEFORE = '5..mark:3 busy guests start'
W_BUSY = 'mark:3 busy guests start..mark:busy guests destroyed'


def vms(*args, check=True):
    p = subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, TZ='UTC'))
    if check:
        assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p


def table(text):
    return list(csv.DictReader(io.StringIO(text)))


def nearest_rank(sorted_vals, q):
    import math
    k = max(1, math.ceil(q * len(sorted_vals) - 1e-9))
    return sorted_vals[min(k, len(sorted_vals)) - 1]


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rates = table(vms('dump', '--rates', RUN).stdout)
        cls.raw = table(vms('dump', RUN).stdout)
        cls.marks = {r['subject']: int(r['t_mono_ns'])
                     for r in table(vms('dump', '--events', RUN).stdout) if r['event'] == 'mark'}
        cls.t0 = int(cls.raw[0]['t_mono_ns'])
        cls.csv = vms('report', RUN, '--window', W_BEFORE, '--window', W_BUSY, '--format', 'csv')
        cls.json = json.loads(vms('report', RUN, '--window', W_BEFORE, '--window', W_BUSY,
                                  '--format', 'json').stdout)

    def window_values(self, col, lo, hi):
        """dump --rates' values of col over the intervals [prev, this]
        with prev >= lo and this <= hi (monotonic ns)."""
        out, prev = [], int(self.raw[0]['t_mono_ns'])
        for r in self.rates:
            t = int(r['t_mono_ns'])
            if prev >= lo and t <= hi and r[col] != '':
                out.append(float(r[col]))
            prev = t
        return out

    def test_means_are_dump_rates(self):
        before = (self.t0 + 5 * 10**9 - 10**6, self.marks['3 busy guests start'])
        busy = (self.marks['3 busy guests start'], self.marks['busy guests destroyed'])
        rows = {(r['quantity'], r['entity']): r for r in self.json['rows']}
        checked = 0
        for q, col in (('cpu.%usr', 'cpu.all.%usr'), ('cpu.%idle', 'cpu.1.%idle'),
                       ('task.cswch/s', 'stat.cswch/s'), ('vm.dlyms/s', 'vm.vms-001.dlyms/s'),
                       ('vm.%cpu', 'vm.vms-002.%cpu'), ('disk.%util', 'disk.vda.%util'),
                       ('queue.ldavg-1', 'load.1m')):
            ent = col.split('.')[1] if q.startswith(('cpu', 'vm', 'disk')) else 'host'
            r = rows[(q, ent)]
            for side, (lo, hi) in (('a', before), ('b', busy)):
                v = self.window_values(col, lo, hi)
                s = sorted(v)
                self.assertEqual(r[side]['n'], len(v), (q, ent, side))
                # dump prints two decimals; report keeps the full value
                self.assertAlmostEqual(r[side]['mean'], sum(v) / len(v), delta=0.006, msg=(q, side))
                self.assertAlmostEqual(r[side]['p50'], nearest_rank(s, 0.5), delta=0.006)
                self.assertAlmostEqual(r[side]['p95'], nearest_rank(s, 0.95), delta=0.006)
                self.assertAlmostEqual(r[side]['max'], s[-1], delta=0.006)
                checked += 1
        self.assertEqual(checked, 14)
        self.assertEqual(self.json['a']['intervals'], len(self.window_values('cpu.all.%usr', *before)))

    def test_light_guests_run_delay_rises(self):
        rows = table(self.csv.stdout)
        for vm in ('vms-001', 'vms-002', 'vms-003'):
            for q in ('vm.dlyms/s', 'vm.%steal'):
                r = next(r for r in rows if r['quantity'] == q and r['entity'] == vm)
                print('%s %s: %s -> %s, CI [%s, %s], real %s' % (q, vm, r['a_mean'], r['b_mean'],
                                                                  r['ci_low'], r['ci_high'], r['real']))
                self.assertEqual(r['real'], '1', r)
                self.assertGreater(float(r['ci_low']), 0, r)
                self.assertGreater(float(r['delta']), 0)
        # the busy guests exist in B only: listed, with no A and no test
        for vm in ('vms-901', 'vms-902', 'vms-903'):
            r = next(r for r in rows if r['quantity'] == 'vm.%cpu' and r['entity'] == vm)
            self.assertEqual((r['a_mean'], r['delta'], r['real']), ('', '', '0'))
            self.assertGreater(float(r['b_mean']), 20)
        j = next(r for r in self.json['rows'] if r['entity'] == 'vms-901' and r['quantity'] == 'vm.%cpu')
        self.assertEqual(j['in'], 'b')
        # matched by UUID: the JSON carries the key of the VM's columns
        j = next(r for r in self.json['rows'] if r['entity'] == 'vms-001' and r['quantity'] == 'vm.%cpu')
        self.assertRegex(j['uuid'], r'^[0-9a-f-]{36}$')

    def test_csv_json_text_agree(self):
        self.assertEqual(self.csv.stdout.splitlines()[0],
                         'quantity,entity,a_mean,b_mean,delta,ci_low,ci_high,real')
        rows = table(self.csv.stdout)
        self.assertEqual(len(rows), len(self.json['rows']))
        for c, j in zip(rows, self.json['rows']):
            self.assertEqual((c['quantity'], c['entity']), (j['quantity'], j['entity']))
            self.assertEqual(c['real'], '1' if j['real'] else '0')
            if j['ci_low'] is not None:
                self.assertAlmostEqual(float(c['ci_low']), j['ci_low'], delta=1e-4 + 1e-5 * abs(j['ci_low']))
        # the ranking: the real rows, largest relative change first
        rk = self.json['ranking']
        self.assertEqual(sorted(rk), [i for i, r in enumerate(self.json['rows']) if r['real']])
        text = vms('report', RUN, '--window', W_BEFORE, '--window', W_BUSY).stdout
        self.assertIn('Largest real changes (%d)' % len(rk), text)
        self.assertIn('window ' + W_BEFORE, text)
        self.assertIn('warning: no host identity recorded in A and B', text)

    def test_seed(self):
        again = vms('report', RUN, '--window', W_BEFORE, '--window', W_BUSY, '--format', 'csv')
        self.assertEqual(again.stdout, self.csv.stdout)
        other = vms('report', RUN, '--window', W_BEFORE, '--window', W_BUSY, '--format', 'csv',
                    '--seed', '2')
        self.assertNotEqual(other.stdout, self.csv.stdout)
        a, b = table(self.csv.stdout), table(other.stdout)
        self.assertEqual([r['delta'] for r in a], [r['delta'] for r in b])

    def test_self_compare(self):
        rows = table(vms('report', '--compare', RUN, RUN, '--format', 'csv').stdout)
        self.assertGreater(len(rows), 100)
        for r in rows:
            self.assertEqual(r['real'], '0', r)
            self.assertIn(r['delta'], ('0.0000', '-0.0000'), r)

    def test_usage(self):
        for args, msg in ((['--window', 'mark:nope..', '--window', '..'], 'no mark "nope"'),
                          (['--window', 'junk..', '--window', '..'], 'bad --window'),
                          (['--window', '..'], 'two --window'),
                          (['--compare'], 'two files')):
            p = vms('report', RUN, *args, check=False)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(msg, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class Recorded(unittest.TestCase):
    def test_provenance(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'run.vms')
            subprocess.run([BIN, '-q', '-i', '0.2s', '-n', '8', '-o', out], check=True, timeout=60)
            info = json.loads(vms('dump', '--info', '--json', out).stdout)
            text = vms('report', '--compare', RUN, out).stdout
            self.assertIn('host %s  kernel %s  %s CPUs  vmsampler %s' % (
                info['hostname'], info['kernel'], info['cpus_online'], info['vmsampler_version']), text)
            self.assertIn('warning: no host identity recorded in A', text)
            # B's is the mean of its measured intervals: 0.200 s, or a few
            # ms more when a tick is read late on a loaded machine (0.203)
            m = re.search(r'warning: the intervals differ: 1\.000 s in A, (\d+\.\d{3}) s in B', text)
            self.assertIsNotNone(m, text)
            self.assertAlmostEqual(float(m.group(1)), 0.2, delta=0.02)
            j = json.loads(vms('report', '--compare', out, RUN, '--json').stdout)
            self.assertEqual(j['a']['host']['hostname'], info['hostname'])
            self.assertEqual(j['b']['host'], {})
            self.assertEqual(j['a']['intervals'], 7)


if __name__ == '__main__':
    main()
