#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every column becomes a metric family (issue 25, item 3), and what
export's options keep (item 5).

Inputs: the recorded vmlab run tests/fixtures/runs/vmlab-3-plus-3-busy.vms
(PROVENANCE.md), a run recorded here on this host with libvirt's test
driver (test_py_lib.testdrv_env: 2 domains; this host's /proc: meminfo,
vmstat, PSI, disks, interfaces), and two runs whose agent is
tests/fake_agent: scenario pid (a VM on a real process here: its cgroup's
columns, as far as this host's cgroups give them) and migrate (a VM with a
migration job: the migration.* columns).

  - coverage: `export --list-columns` of every schema generation of each
    run maps every column, by its catalogue identity, to a family or to an
    exclusion of vmsampler(1) (vms_mexcl[], with its reason); none is
    "unmapped"; every column `dump --format json` has a value of is listed;
  - the listing is what /metrics serves: `export --file` of the run,
    scraped at its last frame, has a series of every column whose value is
    in that frame (dump's), and nothing that the listing does not name
    (bar the frame's own vmsampler_* families);
  - --names legacy: the families of legacy_names[] under their 1.x names,
    none of the current ones; the rest identical;
  - --include / --exclude (globs, repeatable) and --no-per-cpu on /metrics:
    exactly the series kept, vmsampler_export_filtered_series counts the
    rest; and on remote write into a real Prometheus (Debian's, on
    127.0.0.1, a free port, a temporary TSDB): only the kept names arrive.
Without the libvirt test driver the second run is left out (the fixture
stays); without prometheus the remote-write part is a SKIP (77), a failure
with VMS_REQUIRE_TSDB=1."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402
from test_export import get, start_export, stop_all, wait_for  # noqa: E402

BIN = L.BIN
FIXTURE = os.path.join(L.FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')
TMP = tempfile.mkdtemp(prefix='vms-families-')
# families of the frame and of export itself, not of a column
META = re.compile(r'^vmsampler_(frame_|schema_generation|tick_late|missed_ticks|lost_frames|self_cpu|interval|export_|host_info)')
# the renames of --names legacy (metrics.c legacy_names[], vmsampler(1))
LEGACY = {'node_pressure_irq_stalled_seconds_total': 'vmsampler_pressure_irq_stalled_seconds_total',
          'libvirt_domains': 'libvirt_domains_number',
          'libvirt_domain_info_state': 'libvirt_domain_state_code',
          'libvirt_domain_memory_stats_disk_caches_bytes': 'libvirt_domain_memory_stats_disk_cache_bytes',
          'libvirt_domain_block_stats_read_time_seconds_total': 'libvirt_domain_block_stats_read_seconds_total',
          'libvirt_domain_block_stats_write_time_seconds_total': 'libvirt_domain_block_stats_write_seconds_total',
          'libvirt_domain_block_stats_flush_time_seconds_total': 'libvirt_domain_block_stats_flush_seconds_total',
          'libvirt_domain_memory_stats_last_update_timestamp_seconds':
              'vmsampler_domain_memory_stats_last_update_timestamp_seconds',
          'libvirt_domain_memory_stats_hugetlb_pgalloc_total': 'vmsampler_domain_memory_stats_hugetlb_pgalloc_total',
          'libvirt_domain_memory_stats_hugetlb_pgfail_total': 'vmsampler_domain_memory_stats_hugetlb_pgfail_total'}


AGENT = os.path.join(L.BUILD, 'tests', 'fake_agent')


def fake_run(scenario, n, env=None):
    """a run whose libvirt agent is tests/fake_agent's scenario: "pid", a
    VM on a real process here (its cgroup's columns), "migrate", a VM with a
    migration job (the migration.* columns)"""
    conf = os.path.join(TMP, scenario + '.yaml')
    with open(conf, 'w') as f:
        f.write('sources:\n  libvirt:\n    agent: "%s"\n    uri: "fake:%s"\n' % (AGENT, scenario))
    return L.record(os.path.join(TMP, scenario + '.vms'), '-c', conf, '-i', '200ms', '-n', str(n), env=env)


def runs():
    out = [FIXTURE]
    if L.have_libvirt():
        env = L.testdrv_env(TMP, 2)
        out.append(L.record(os.path.join(TMP, 'testdrv.vms'), '-i', '200ms', '-n', '12', env=env))
    if os.access(AGENT, os.X_OK):
        standin = subprocess.Popen(['sleep', '600'])
        try:
            out.append(fake_run('pid', 10, env=dict(L.host_env(), FAKE_AGENT_PID=str(standin.pid))))
        finally:
            standin.kill()
            standin.wait()
        out.append(fake_run('migrate', 16))
    return out


def listing(path, *opts):
    """[(generation, column, series or None, status)] of --list-columns"""
    r = L.run([BIN, 'export', '--file', path, '--list-columns'] + list(opts))
    out, gen = [], None
    for ln in r.stdout.splitlines():
        if ln.startswith('# generation '):
            gen = int(ln.split()[-1])
            continue
        col, series, *rest = ln.split('\t')
        out.append((gen, col, None if series == '-' else series, rest[0] if rest else 'mapped'))
    return out


def frames(path):
    return [json.loads(ln) for ln in L.run([BIN, 'dump', path, '--format', 'json']).stdout.splitlines()]


FRAME_KEYS = {'seq', 't_wall_ns', 't_mono_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames', 'late_ns',
              'self_cpu_ns', 'reader_lost'}


def scrape(path, *opts, seq):
    """/metrics of `export --file path OPTS` once it serves frame seq: {series: value}"""
    p, port = start_export(TMP, "--file", path, *opts, name="export-%d" % time.monotonic_ns())
    try:
        url = 'http://127.0.0.1:%d/metrics' % port

        def at_end():
            st, _, body = get(url)
            m = re.search(r'^vmsampler_frame_sequence(?:\{\})? (\S+)', body.decode(), re.M)
            return body.decode() if m and float(m.group(1)) == seq else None
        text = wait_for(at_end, what='export at frame %d' % seq)
    finally:
        p.terminate()
        p.wait()
    out = {}
    for ln in text.splitlines():
        if not ln or ln.startswith('#'):
            continue
        if '{' in ln:
            i = ln.rindex('}')
            series, rest = ln[:i + 1], ln[i + 1:].split()
        else:
            series, *rest = ln.split()
            series += '{}'
        out[series] = float(rest[0])
    return out


def name_of(series):
    return series.split('{', 1)[0]


class Coverage(unittest.TestCase):
    def test_every_column(self):
        for path in RUNS:
            with self.subTest(run=os.path.basename(path)):
                lst = listing(path)
                self.assertTrue(lst)
                bad = [(c, s) for _, c, _, s in lst if s == 'unmapped']
                self.assertEqual(bad, [], 'columns without a family nor an exclusion')
                for _, c, s, st in lst:
                    if st.startswith('excluded'):
                        self.assertRegex(st, r'^excluded: \w.{20,}', c)
                    else:
                        self.assertEqual(st, 'mapped', c)
                        self.assertRegex(s, r'^[a-zA-Z_:][a-zA-Z0-9_:]*\{.*\}$', c)
                # every column dump has a value of is listed (dump leaves
                # out a column without any value in a frame)
                fr = frames(path)
                dumped = set()
                for f in fr:
                    dumped |= set(f) - FRAME_KEYS
                self.assertFalse(dumped - {c for _, c, _, _ in lst})
                gens = {f['gen'] for f in fr}
                self.assertEqual({g for g, _, _, _ in lst}, gens)
                print('%s: %d columns, %d mapped, %d excluded, %d generations' %
                      (os.path.basename(path), len({c for _, c, _, _ in lst}),
                       len({c for _, c, s, _ in lst if s}), len({c for _, c, _, st in lst
                                                                   if st.startswith('excluded')}), len(gens)))

    def test_listing_is_what_metrics_serves(self):
        for path in RUNS:
            with self.subTest(run=os.path.basename(path)):
                fr = frames(path)
                last = fr[-1]
                lst = [x for x in listing(path) if x[0] == last['gen']]
                got = scrape(path, seq=last['seq'])
                named = {s for _, _, s, _ in lst if s}
                for series in got:
                    if not META.match(name_of(series)):
                        self.assertIn(series, named, 'served but not listed')
                bycol = {}
                for _, c, s, _ in lst:
                    if s:
                        bycol.setdefault(c, []).append(s)
                n = 0
                for c, ss in bycol.items():
                    if last.get(c) is not None:
                        self.assertTrue(any(s in got for s in ss), '%s = %r: none of %s served' % (c, last[c], ss))
                        n += 1
                self.assertGreater(n, 100)


class Names(unittest.TestCase):
    def test_legacy(self):
        path = RUNS[-1]
        last = frames(path)[-1]
        cur = scrape(path, seq=last['seq'])
        old = scrape(path, '--names', 'legacy', seq=last['seq'])
        # every legacy name has its current one's series; the current
        # names are gone; everything else the same
        renamed = 0
        for series, v in cur.items():
            n = name_of(series)
            if n in LEGACY:
                labels = series[len(n):]
                if n == 'libvirt_domain_info_state':
                    labels = re.sub(r',state_desc="[^"]*"', '', labels)
                self.assertEqual(old.get(LEGACY[n] + labels), v, series)
                renamed += 1
            elif not META.match(n):
                self.assertEqual(old.get(series), v, series)
        self.assertGreater(renamed, 0)
        self.assertFalse([s for s in old if name_of(s) in LEGACY])


def fams(got):
    return {name_of(s) for s in got}


class Filters(unittest.TestCase):
    def test_metrics(self):
        path = FIXTURE
        last = frames(path)[-1]
        every = scrape(path, seq=last['seq'])
        # --no-per-cpu: the per-CPU series go, the all-CPU ones stay
        nocpu = scrape(path, '--no-per-cpu', seq=last['seq'])
        gone = {s for s in every if s not in nocpu}
        self.assertTrue(gone)
        for s in gone:
            self.assertRegex(s, r'cpu="\d+"', s)
        self.assertFalse([s for s in nocpu if re.search(r'[{,]cpu="', s)])
        self.assertIn('vmsampler_cpu_all_seconds_total{mode="user"}', nocpu)
        self.assertEqual(nocpu['vmsampler_export_filtered_series{}'],
                         len([s for s in every if re.search(r'[{,]cpu="', s)]))
        self.assertEqual(every['vmsampler_export_filtered_series{}'], 0)
        # --include globs (repeatable), --exclude after them; a counter by
        # its name with or without _total
        got = scrape(path, '--include', 'libvirt_domain_vcpu_*', '--include', 'node_load?',
                     '--include', 'vmsampler_frame_sequence',
                     '--exclude', 'libvirt_domain_vcpu_time_seconds_total', seq=last['seq'])
        self.assertEqual(fams(got), {'libvirt_domain_vcpu_delay_seconds_total', 'node_load1', 'node_load5',
                                     'vmsampler_frame_sequence'})
        for s, v in got.items():
            self.assertEqual(every[s], v, s)
        self.assertEqual({s for s in every if name_of(s) in fams(got)}, set(got))
        got = scrape(path, '--exclude', 'node_*', '--exclude', 'libvirt_domain_vcpu_delay_seconds',
                     seq=last['seq'])
        self.assertFalse([s for s in got if s.startswith('node_')])
        self.assertFalse([s for s in got if s.startswith('libvirt_domain_vcpu_delay')])
        self.assertIn('libvirt_domain_vcpu_time_seconds_total', fams(got))

    def test_usage(self):
        for args in (['--names', 'new'], ['--include', 'a{b}'], ['--exclude', '']):
            r = subprocess.run([BIN, 'export', '--file', FIXTURE] + args, capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_remote_write(self):
        if not shutil.which('prometheus'):
            if os.environ.get('VMS_REQUIRE_TSDB') == '1':
                self.fail('prometheus is not installed (Debian package prometheus)')
            self.skipTest('no prometheus')
        import test_tsdb
        prom = test_tsdb.Prometheus()
        try:
            L.run([BIN, 'export', '--file', FIXTURE, '--no-follow', '--remote-write',
                   prom.url('/api/v1/write'), '--no-per-cpu', '--include', 'node_*', '--include', 'libvirt_domains',
                   '--exclude', 'node_memory_*'])
            last = frames(FIXTURE)[-1]
            t = last['t_wall_ns'] / 1e9
            res = prom.scalar('count by (__name__) (last_over_time({__name__=~".+"}[1h]))', t)
            names = {r['metric']['__name__'] for r in res}
            self.assertIn('libvirt_domains', names)
            self.assertIn('node_load1', names)
            self.assertFalse([n for n in names if not (n.startswith('node_') or n == 'libvirt_domains')], names)
            self.assertFalse([n for n in names if n.startswith('node_memory_')])
            self.assertNotIn('node_cpu_seconds_total', names)
            # nothing of the per-CPU kind arrived
            self.assertEqual(prom.scalar('count(last_over_time({cpu=~".+"}[1h]))', t), [])
        finally:
            prom.remove()


if __name__ == '__main__':
    RUNS = runs()
    try:
        unittest.main(verbosity=2)
    finally:
        stop_all()
        shutil.rmtree(TMP, ignore_errors=True)
