#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler export's interference series have a bounded cardinality
(issue 26): on a 60-VM host where every VM has waited behind every other
one (report_gen --interference 59: 60 x 59 vm.NAME.intf.by.OTHER
columns), a real /metrics scrape of `vmsampler export` (127.0.0.1, a free
port) has, per domain, at most N vmsampler_domain_interference_by_vm
series (--interference-top N, default 3) and one
vmsampler_domain_interference_by_other_vms series, against the raw
counters of the file's last frame (dump --format json):
  - the series shown are the domain's largest culprits (no culprit left
    in the bucket exceeds one shown by more than 1/8, the ranking's
    hysteresis), with their exact values;
  - the bucket holds at least the culprits left out and at most all of
    them (it carries what left it when the ranking changed);
  - --interference-top 0: only the buckets, each exactly the sum of the
    domain's culprits; --interference-top 59: every pair, no bucket;
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
SERIES = re.compile(r'^(vmsampler_domain_interference_by_(?:vm|other_vms)_seconds_total)\{([^}]*)\} (\S+)$')


def labels(s):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', s))


class Bounded(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.vmsf = synthetic(os.path.join(cls.tmp.name, 'host60.vms'), 40, VMS, '-i', '10000',
                             '--interference', str(VMS - 1), '--no-events')
        if not cls.vmsf:
            return
        last = subprocess.run([BIN, 'dump', cls.vmsf, '--format', 'json'], capture_output=True, text=True,
                              check=True).stdout.splitlines()[-1]
        o = json.loads(last)
        cls.by = {}
        for k, v in o.items():
            m = re.match(r'^vm\.(.+?)\.intf\.by\.(.+)$', k)
            if m and v is not None:
                cls.by.setdefault(m.group(1), {})[m.group(2)] = v

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

    def test_default_top3(self):
        got = self.scrape()
        shown = got['vmsampler_domain_interference_by_vm_seconds_total']
        bucket = got['vmsampler_domain_interference_by_other_vms_seconds_total']
        self.assertEqual(len(self.by), VMS)
        self.assertEqual(len(shown), 3 * (VMS), 'at most N series a domain (60 x 59 pairs in the file)')
        self.assertEqual(len(bucket), VMS)
        per = {}
        for lab, v in shown:
            per.setdefault(lab['domain'], {})[lab['other']] = v
        for lab, v in bucket:
            dom = lab['domain']
            raw = self.by[dom]
            top = per[dom]
            self.assertEqual(len(top), 3)
            for o, x in top.items():
                self.assertAlmostEqual(x, raw[o] / 1e9, delta=1e-9)
            rest = [raw[o] for o in raw if o not in top]
            self.assertEqual(len(rest), VMS - 1 - 3)
            # the largest: none left out passes one shown by more than 1/8
            self.assertLessEqual(max(rest), min(raw[o] for o in top) * 1.125 + 1)
            self.assertGreaterEqual(v, sum(rest) / 1e9 - 1e-9)
            self.assertLessEqual(v, sum(raw.values()) / 1e9 + 1e-9)

    def test_top0_and_all(self):
        got = self.scrape('--interference-top', '0')
        self.assertNotIn('vmsampler_domain_interference_by_vm_seconds_total', got)
        bucket = got['vmsampler_domain_interference_by_other_vms_seconds_total']
        self.assertEqual(len(bucket), VMS)
        for lab, v in bucket:
            self.assertAlmostEqual(v, sum(self.by[lab['domain']].values()) / 1e9, delta=1e-9)
        got = self.scrape('--interference-top', str(VMS - 1))
        self.assertNotIn('vmsampler_domain_interference_by_other_vms_seconds_total', got)
        shown = got['vmsampler_domain_interference_by_vm_seconds_total']
        self.assertEqual(len(shown), (VMS - 1) * VMS)
        for lab, v in shown:
            self.assertAlmostEqual(v, self.by[lab['domain']][lab['other']] / 1e9, delta=1e-9)

    def test_list_columns(self):
        r = subprocess.run([BIN, 'export', '--file', self.vmsf, '--list-columns'], capture_output=True, text=True,
                           check=True)
        fams = {}
        for ln in r.stdout.splitlines():
            if '.intf.by.' in ln:
                fams.setdefault(ln.split('\t')[1].split('{')[0], 0)
                fams[ln.split('\t')[1].split('{')[0]] += 1
        self.assertEqual(sum(fams.values()), (VMS - 1) * VMS)
        self.assertEqual(set(fams), {'vmsampler_domain_interference_by_vm_seconds_total',
                                     'vmsampler_domain_interference_by_other_vms_seconds_total'})

    def test_bad_top(self):
        for bad in ('-1', 'x', '1001'):
            p = subprocess.run([BIN, 'export', '--file', self.vmsf, '--interference-top', bad], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)
            self.assertIn('--interference-top', p.stderr)


if __name__ == '__main__':
    main('VMS_REQUIRE_PY')
