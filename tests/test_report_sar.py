#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sar's habits on vmsampler report (issue 27), on the recorded vmlab run:
  - -f FILE, -s and -e give byte for byte the output of FILE, --from and
    --to (text and JSON, rows and --summary);
  - each section flag (-u -q -w -I -d -n DEV -r -W -B) gives exactly that
    section of the full report: the JSON section object equal to the full
    report's, the text a verbatim slice of it; --section NAME the same
    as the flag; several flags, several sections in the report's order;
  - -P ALL adds a row per CPU whose values are dump --rates' cpu.N.*
    columns, -P N only CPU N's rows;
  - usage errors (-n EDEV, -P x, --section nope) are one line and exit 2."""
import csv
import io
import json
import os
import subprocess
import tempfile
import unittest

from test_py_lib import BIN, FIXTURES, main

RUN = os.path.join(FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')


def rep(*args, check=True):
    p = subprocess.run([BIN, 'report'] + list(args), capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, TZ='UTC'))
    if check:
        assert p.returncode == 0, (args, p.stderr)
    return p


# flag -> the section it selects (report's JSON name)
FLAGS = {('-u',): 'cpu', ('-q',): 'queue', ('-w',): 'task', ('-I',): 'task', ('-d',): 'disk',
         ('-n', 'DEV'): 'net', ('-r',): 'memory', ('-W',): 'swapping', ('-B',): 'paging'}


class Aliases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.full_text = rep(RUN).stdout
        cls.full_json = json.loads(rep(RUN, '--json').stdout)
        cls.maxDiff = 2000

    def test_file_from_to(self):
        for extra in ([], ['--json'], ['--summary'], ['-i', '5']):
            a = rep('-f', RUN, '-s', '03:51:20', '-e', '03:52:00', *extra).stdout
            b = rep(RUN, '--from', '03:51:20', '--to', '03:52:00', *extra).stdout
            self.assertEqual(a, b, extra)
            self.assertGreater(len(a), 500)
        # the range does cut: fewer rows than the whole run
        self.assertLess(len(rep('-f', RUN, '-s', '03:51:20', '-e', '03:52:00').stdout), len(self.full_text))

    def test_section_flags(self):
        # the recorded run has no memory sections (it predates them): a
        # run recorded here has them all
        with tempfile.TemporaryDirectory() as tmp:
            here = os.path.join(tmp, 'here.vms')
            subprocess.run([BIN, '-q', '-i', '0.25s', '-n', '12', '-o', here], check=True, timeout=60)
            seen = set()
            for run in (RUN, here):
                seen |= self.sections(run)
        self.assertEqual(seen, set(FLAGS))

    def sections(self, run):
        full_text = rep(run).stdout
        full_json = json.loads(rep(run, '--json').stdout)
        names = [s['name'] for s in full_json['sections']]
        title = full_text.split('\n', 1)[0]
        seen = set()
        for flag, name in FLAGS.items():
            if name not in names:
                continue
            seen.add(flag)
            j = json.loads(rep(run, *flag, '--json').stdout)
            self.assertEqual(j['sections'], [s for s in full_json['sections'] if s['name'] == name], flag)
            self.assertEqual({k: v for k, v in j.items() if k != 'sections'},
                             {k: v for k, v in full_json.items() if k != 'sections'})
            t = rep(run, *flag).stdout
            head, body = t.split('\n', 1)
            self.assertEqual(head, title)
            self.assertIn(body, full_text, flag)
            self.assertGreater(len(body), 300, flag)
            self.assertEqual(rep(run, '--section', name).stdout, t, flag)
            # and the summary of that section alone
            s = rep(run, *flag, '--summary').stdout
            self.assertEqual(s, rep(run, '--section', name, '--summary').stdout)
            self.assertEqual(s.count('Summary:'), 1, flag)
        j = json.loads(rep(run, '-d', '-u', '--json').stdout)
        self.assertEqual([s['name'] for s in j['sections']], ['cpu', 'disk'])
        return seen

    def test_per_cpu(self):
        rates = list(csv.DictReader(io.StringIO(
            subprocess.run([BIN, 'dump', '--rates', RUN], capture_output=True, text=True, check=True).stdout)))
        j = json.loads(rep(RUN, '-u', '-P', 'ALL', '--json').stdout)
        sec = j['sections'][0]
        cols = sec['columns']
        per = {}
        for r in sec['rows']:
            per.setdefault(r['entity'], []).append(r)
        self.assertEqual(sorted(per), ['0', '1', 'all'])
        for cpu in ('0', '1', 'all'):
            self.assertEqual(len(per[cpu]), len(rates))
            for row, d in zip(per[cpu], rates):
                for c, v in zip(cols, row['values']):
                    self.assertEqual('%.2f' % v, d['cpu.%s.%s' % (cpu, c)], (cpu, c, row['time']))
        # the "all" rows are today's rows
        self.assertEqual(per['all'], self.full_json['sections'][0]['rows'])
        one = json.loads(rep(RUN, '-u', '-P', '1', '--json').stdout)['sections'][0]['rows']
        self.assertEqual(one, per['1'])
        text = rep(RUN, '-u', '-P', 'ALL').stdout
        self.assertIn('Average:            1', text)

    def test_usage(self):
        for args, msg in ((['-n', 'EDEV'], '-n shows DEV only'), (['-P', 'x'], '-P wants'),
                          (['--section', 'nope'], '--section wants'), (['--section', 'cpu,'], '--section wants'),
                          (['-f', RUN, RUN], 'more than one FILE')):
            p = rep(*([RUN] + args if args[0] != '-f' else args), check=False)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(msg, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)


if __name__ == '__main__':
    main()
