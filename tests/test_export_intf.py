#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler export's interference series have a bounded cardinality
(issue 26): on a 60-VM host where every VM has waited behind every other
one (report_gen --interference 59 --intf-full: 60 x 59
vm.NAME.intf.by.OTHER columns and as many vm.NAME.intfest.by.OTHER, and
every other column of the two interference sources), a real /metrics
scrape of `vmsampler export` (127.0.0.1, a free port) has, per domain, at
most N vmsampler_domain_interference_by_vm series (--interference-top N,
default 3) and one vmsampler_domain_interference_by_other_vms series, the
same for the estimate's (..._estimate_by_vm, ..._estimate_by_other_vms),
against the raw counters of the file's last frame (dump --format json,
read by the columns' names):
  - the series shown are the domain's largest culprits (no culprit left
    in the bucket exceeds one shown by more than 1/8, the ranking's
    hysteresis), with their exact values;
  - the bucket holds at least the culprits left out and at most all of
    them (it carries what left it when the ranking changed);
  - --interference-top 0: only the buckets, each exactly the sum of the
    domain's culprits; --interference-top 59: every pair, no bucket;
  - every other interference column is a series with its exact value:
    intf.host.CGROUP (by_cgroup{cgroup}), host_other (by_other_cgroups),
    irq_est (irq_estimate), intfest.wait and intfest.{vms,own,host,irq,
    unknown} (estimate_wait, estimate{behind}), intf.wait and the parts;
    no column is left out, and at 60 VMs there are at most 1,620
    interference series in all (doc/export.md);
  - --list-columns says which series each column feeds;
  - a bad N is one line and exit 2."""
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from test_py_lib import BIN, main, synthetic

VMS = 60
SERIES = re.compile(r'^(vmsampler_domain_interference_(?:\w+_)?seconds_total)\{([^}]*)\} (\S+)$')
PARTS = ('vms', 'own', 'host', 'kernel', 'unknown')
EST_PARTS = ('vms', 'own', 'host', 'irq', 'unknown')
BEHIND = 'vmsampler_domain_interference_seconds_total'


def F(what):
    return 'vmsampler_domain_interference_%s_seconds_total' % what


def labels(s):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', s))


class Bounded(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.vmsf = synthetic(os.path.join(cls.tmp.name, 'host60.vms'), 40, VMS, '-i', '10000',
                             '--interference', str(VMS - 1), '--intf-full', '--no-events')
        if not cls.vmsf:
            return
        last = subprocess.run([BIN, 'dump', cls.vmsf, '--format', 'json'], capture_output=True, text=True,
                              check=True).stdout.splitlines()[-1]
        o = json.loads(last)
        # the columns by their names (report_gen's VM names have no dot)
        cls.by, cls.estby, cls.cg, cls.intf, cls.est = {}, {}, {}, {}, {}
        for k, v in o.items():
            m = re.match(r'^vm\.([^.]+)\.(intf|intfest)\.(?:(by|host)\.)?(.+)$', k)
            if not m or v is None:
                continue
            dom, src, sub, f = m.groups()
            d = {('intf', 'by'): cls.by, ('intfest', 'by'): cls.estby, ('intf', 'host'): cls.cg,
                 ('intf', None): cls.intf, ('intfest', None): cls.est}[(src, sub)]
            d.setdefault(dom, {})[f] = v

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if not self.vmsf:
            self.skipTest('report_gen is not built')

    def scrape(self, *opts):
        err = open(os.path.join(self.tmp.name, 'export.err'), 'w+')
        p = subprocess.Popen([BIN, 'export', '--file', self.vmsf, '--listen', '127.0.0.1:0'] + list(opts),
                             stdout=subprocess.DEVNULL, stderr=err)
        try:
            port, deadline = None, time.time() + 20
            while port is None and time.time() < deadline:
                err.seek(0)
                m = re.search(r'serving http://127\.0\.0\.1:(\d+)/metrics', err.read())
                port = int(m.group(1)) if m else None
                self.assertIsNone(p.poll(), 'export exited')
                time.sleep(0.05)
            self.assertIsNotNone(port, 'export did not listen')
            # the last frame: vmsampler_frame_sequence is the file's last seq
            out = {}
            while time.time() < deadline:
                try:
                    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=10) as r:
                        text = r.read().decode()
                except urllib.error.HTTPError as e:
                    if e.code != 503:  # 503: no frame read yet
                        raise
                    time.sleep(0.1)
                    continue
                if re.search(r'^vmsampler_frame_sequence(?:_total)? 40$', text, re.M):
                    break
                time.sleep(0.1)
            for ln in text.splitlines():
                m = SERIES.match(ln)
                if m:
                    out.setdefault(m.group(1), []).append((labels(m.group(2)), float(m.group(3))))
            return out
        finally:
            p.terminate()
            p.wait()
            err.close()

    def check_top(self, got, raw_by, shown_fam, bucket_fam, n):
        """the top n of each domain's culprits shown, the rest in its bucket"""
        shown = got[shown_fam]
        bucket = got[bucket_fam]
        self.assertEqual(len(raw_by), VMS)
        self.assertEqual(len(shown), n * VMS, 'at most N series a domain (60 x 59 pairs in the file)')
        self.assertEqual(len(bucket), VMS)
        per = {}
        for lab, v in shown:
            per.setdefault(lab['domain'], {})[lab['other']] = v
        for lab, v in bucket:
            dom = lab['domain']
            raw = raw_by[dom]
            top = per[dom]
            self.assertEqual(len(top), n)
            for o, x in top.items():
                self.assertAlmostEqual(x, raw[o] / 1e9, delta=1e-9)
            rest = [raw[o] for o in raw if o not in top]
            self.assertEqual(len(rest), VMS - 1 - n)
            # the largest: none left out passes one shown by more than 1/8
            self.assertLessEqual(max(rest), min(raw[o] for o in top) * 1.125 + 1)
            self.assertGreaterEqual(v, sum(rest) / 1e9 - 1e-9)
            self.assertLessEqual(v, sum(raw.values()) / 1e9 + 1e-9)

    def test_default_top3(self):
        got = self.scrape()
        self.check_top(got, self.by, F('by_vm'), F('by_other_vms'), 3)
        self.check_top(got, self.estby, F('estimate_by_vm'), F('estimate_by_other_vms'), 3)

    def one(self, got, fam, raw, label=None, key=None):
        """fam has one series per domain (per domain and label value) with
        raw[domain][key or the label's value] / 1e9, and no other"""
        want = {(d, k): x for d, row in raw.items() for k, x in row.items() if key is None or k == key}
        seen = {}
        for lab, v in got.get(fam, []):
            k = (lab['domain'], lab[label] if label else key)
            self.assertNotIn(k, seen, '%s twice: %s' % (fam, k))
            seen[k] = v
        self.assertEqual(set(seen), set(want), fam)
        for k, v in seen.items():
            self.assertAlmostEqual(v, want[k] / 1e9, delta=1e-9, msg='%s %s' % (fam, k))
        return len(seen)

    def test_every_column(self):
        """each interference column of the file: its series and value"""
        got = self.scrape()
        parts = {d: {f: x for f, x in r.items() if f in PARTS} for d, r in self.intf.items()}
        est_parts = {d: {f: x for f, x in r.items() if f in EST_PARTS} for d, r in self.est.items()}
        n = self.one(got, F('wait'), self.intf, key='wait')
        n += self.one(got, BEHIND, parts, label='behind')
        n += self.one(got, F('by_cgroup'), self.cg, label='cgroup')
        n += self.one(got, F('by_other_cgroups'), self.intf, key='host_other')
        n += self.one(got, F('irq_estimate'), self.intf, key='irq_est')
        n += self.one(got, F('estimate_wait'), self.est, key='wait')
        n += self.one(got, F('estimate'), est_parts, label='behind')
        # the named cgroups and host_other add up to host (the file's own sum rule)
        for d, r in self.cg.items():
            self.assertEqual(sum(r.values()) + self.intf[d]['host_other'], self.intf[d]['host'])
        self.assertEqual(len(self.cg), VMS)
        self.assertEqual(n, VMS * (1 + 5 + 1 + 1 + 1 + 5) + sum(len(r) for r in self.cg.values()))
        # with the top 3 and the buckets (test_default_top3): every
        # interference series of the scrape, at most 1,620 at 60 VMs
        total = sum(len(v) for v in got.values())
        self.assertEqual(total, n + 2 * VMS * (3 + 1))
        self.assertLessEqual(total, 1620)
        self.assertEqual(set(got), {F(x) for x in ('wait', 'by_cgroup', 'by_other_cgroups', 'irq_estimate',
                                                   'estimate_wait', 'estimate', 'by_vm', 'by_other_vms',
                                                   'estimate_by_vm', 'estimate_by_other_vms')} | {BEHIND})

    def test_top0_and_all(self):
        got = self.scrape('--interference-top', '0')
        for by, shown_fam, bucket_fam in ((self.by, F('by_vm'), F('by_other_vms')),
                                          (self.estby, F('estimate_by_vm'), F('estimate_by_other_vms'))):
            self.assertNotIn(shown_fam, got)
            bucket = got[bucket_fam]
            self.assertEqual(len(bucket), VMS)
            for lab, v in bucket:
                self.assertAlmostEqual(v, sum(by[lab['domain']].values()) / 1e9, delta=1e-9)
        got = self.scrape('--interference-top', str(VMS - 1))
        for by, shown_fam, bucket_fam in ((self.by, F('by_vm'), F('by_other_vms')),
                                          (self.estby, F('estimate_by_vm'), F('estimate_by_other_vms'))):
            self.assertNotIn(bucket_fam, got)
            shown = got[shown_fam]
            self.assertEqual(len(shown), (VMS - 1) * VMS)
            for lab, v in shown:
                self.assertAlmostEqual(v, by[lab['domain']][lab['other']] / 1e9, delta=1e-9)

    def test_list_columns(self):
        r = subprocess.run([BIN, 'export', '--file', self.vmsf, '--list-columns'], capture_output=True, text=True,
                           check=True)
        fams = {}
        for ln in r.stdout.splitlines():
            for sub in ('.intf.by.', '.intfest.by.'):
                if sub in ln:
                    fams.setdefault(sub, {}).setdefault(ln.split('\t')[1].split('{')[0], 0)
                    fams[sub][ln.split('\t')[1].split('{')[0]] += 1
        self.assertEqual(sum(fams['.intf.by.'].values()), (VMS - 1) * VMS)
        self.assertEqual(set(fams['.intf.by.']), {F('by_vm'), F('by_other_vms')})
        self.assertEqual(sum(fams['.intfest.by.'].values()), (VMS - 1) * VMS)
        self.assertEqual(set(fams['.intfest.by.']), {F('estimate_by_vm'), F('estimate_by_other_vms')})
        # no interference column unmapped or filtered
        bad = [ln for ln in r.stdout.splitlines() if re.match(r'^vm\.[^.]+\.intf', ln) and '\t-\t' in ln]
        self.assertEqual(bad, [])

    def test_bad_top(self):
        for bad in ('-1', 'x', '1001'):
            p = subprocess.run([BIN, 'export', '--file', self.vmsf, '--interference-top', bad], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)
            self.assertIn('--interference-top', p.stderr)


if __name__ == '__main__':
    main('VMS_REQUIRE_PY')
