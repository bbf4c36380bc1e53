#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mixin in dist/mixin (issue 25, item 7): recording rules, alerts and
Grafana dashboards over vmsampler export's current names.

  - `promtool check rules` of rules.yaml and alerts.yaml (Debian's
    prometheus package ships promtool); every alert has a runbook;
  - `promtool test rules` of dist/mixin/tests/: alerts_recorded_test.yaml,
    whose input series come from recorded vmlab runs (regenerated here
    by gen-recorded.py from `vmsampler dump` and `export --list-columns` of
    the fixtures and compared with the committed file: the vCPU run delay
    alert on the 3 + 3 busy run, the throttling alert on the capped one),
    and alerts_synthetic_test.yaml for what those recordings do not reach;
  - every dashboard panel's query, run against a real Prometheus (started
    here on 127.0.0.1, a free port, a temporary TSDB) holding the recorded
    vmlab runs (tests/fixtures/runs: the 3 + 3 busy guests; a busy guest
    capped at a quarter of a CPU, whose v1 cpu group throttles and whose
    cgroup2 group has pressure; the source of a real live migration) and
    three runs recorded here (libvirt's test driver with this host's /proc;
    tests/fake_agent's pid scenario: a VM's cgroup; its migrate scenario: a
    migration job), each pushed by `vmsampler export --remote-write`,
    returns series at the end of one of them (at each frame of a migration
    run), with the dashboard variables ($instance, $domain) at "all" and
    $__rate_interval 1m.  The panels whose data no run here can have
    (NO_DATA_HERE, with the reason) must return nothing, so that the list
    stays exact.
Grafana itself is not in Debian: the dashboards are checked as JSON and
through their queries, not rendered.  Without promtool or prometheus: SKIP
(77), a failure with VMS_REQUIRE_TSDB=1."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

BIN = L.BIN
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIXIN = os.path.join(SRC, 'dist', 'mixin')
FIXTURE = os.path.join(L.FIXTURES, 'runs', 'vmlab-3-plus-3-busy.vms')
# recorded by tests/fixtures/runs/record-cap-migrate.sh (runs/PROVENANCE.md),
# in the order they were recorded (Prometheus takes no sample older than its head)
CAP = os.path.join(L.FIXTURES, 'runs', 'vmlab-cap-psi.vms.zst')
MIGRATION = os.path.join(L.FIXTURES, 'runs', 'vmlab-migrate-dirty.vms.zst')
AGENT = os.path.join(L.BUILD, 'tests', 'fake_agent')
TMP = tempfile.mkdtemp(prefix='vms-mixin-')
# panels no run recorded here can fill, and why: (dashboard, panel title)
NO_DATA_HERE = {
    ('host', 'IRQ pressure (share of time stalled)'):
        'no /proc/pressure/irq on this kernel (6.18 without CONFIG_IRQ_TIME_ACCOUNTING, which PSI_IRQ needs), '
        'none in the recordings, none in the shared /proc fixtures; the query is checked on synthetic series '
        'in dist/mixin/tests/alerts_synthetic_test.yaml',
}


def need(prog):
    if not shutil.which(prog):
        if os.environ.get('VMS_REQUIRE_TSDB') == '1':
            raise AssertionError('%s is not installed (Debian package prometheus)' % prog)
        print('SKIP: no %s (Debian package prometheus)' % prog)
        sys.exit(77)


class Rules(unittest.TestCase):
    def test_check(self):
        r = subprocess.run(['promtool', 'check', 'rules', os.path.join(MIXIN, 'rules.yaml'),
                            os.path.join(MIXIN, 'alerts.yaml')], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        import yaml
        with open(os.path.join(MIXIN, 'alerts.yaml')) as f:
            alerts = [r for g in yaml.safe_load(f)['groups'] for r in g['rules']]
        want = {'VmsamplerVcpuRunDelayHigh', 'VmsamplerCgroupThrottled', 'VmsamplerVmMemoryPressure',
                'VmsamplerHostMemoryPressure', 'VmsamplerMissedTicks', 'VmsamplerLostFrames',
                'VmsamplerExportLostFrames', 'VmsamplerRemoteWriteFailing', 'VmsamplerSlowValuesStale'}
        self.assertEqual({a['alert'] for a in alerts}, want)
        for a in alerts:
            self.assertTrue(a['annotations'].get('runbook'), a['alert'])

    def test_recorded_series_up_to_date(self):
        r = L.run([sys.executable, os.path.join(MIXIN, 'tests', 'gen-recorded.py'), BIN, FIXTURE, CAP])
        with open(os.path.join(MIXIN, 'tests', 'alerts_recorded_test.yaml')) as f:
            self.assertEqual(r.stdout, f.read(), 'dist/mixin/tests/alerts_recorded_test.yaml is stale: regenerate')

    def test_unit(self):
        for t in ('alerts_recorded_test.yaml', 'alerts_synthetic_test.yaml'):
            r = subprocess.run(['promtool', 'test', 'rules', t], cwd=os.path.join(MIXIN, 'tests'),
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # every alert is tested to fire somewhere
        text = ''
        for t in ('alerts_recorded_test.yaml', 'alerts_synthetic_test.yaml'):
            with open(os.path.join(MIXIN, 'tests', t)) as f:
                text += f.read()
        fired = set(re.findall(r'alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels', text))
        self.assertEqual(len(fired), 9, fired)


def panels():
    for name in ('host', 'vm', 'fleet'):
        with open(os.path.join(MIXIN, 'dashboards', name + '.json')) as f:
            d = json.load(f)
        names = {v['name'] for v in d['templating']['list']}
        assert 'instance' in names, name
        for p in d['panels']:
            yield name, p


def concrete(expr):
    return expr.replace('$instance', '.*').replace('$domain', '.*').replace('$__rate_interval', '1m')


class Dashboards(unittest.TestCase):
    def test_no_data_panels_tested_synthetically(self):
        """A panel no run here fills has its queries, as the test below runs
        them, evaluated on synthetic series by promtool (test_unit)."""
        import yaml
        with open(os.path.join(MIXIN, 'tests', 'alerts_synthetic_test.yaml')) as f:
            exprs = {e['expr'] for t in yaml.safe_load(f)['tests'] for e in t.get('promql_expr_test', [])}
        found = set()
        for dash, p in panels():
            if (dash, p['title']) in NO_DATA_HERE:
                found.add((dash, p['title']))
                for t in p['targets']:
                    self.assertIn(concrete(t['expr']), exprs, '%s / %s' % (dash, p['title']))
        self.assertEqual(found, set(NO_DATA_HERE))

    def test_queries_return_series(self):
        import test_tsdb
        runs = [FIXTURE, CAP, MIGRATION]
        env = L.testdrv_env(TMP, 2) if L.have_libvirt() else L.host_env()
        runs.append(L.record(os.path.join(TMP, 'host.vms'), '-i', '500ms', '-n', '40', env=env))
        if os.access(AGENT, os.X_OK):
            standin = subprocess.Popen(['sleep', '600'])
            try:
                for sc, n, e in (('pid', 40, dict(L.host_env(), FAKE_AGENT_PID=str(standin.pid))),
                                 ('migrate', 16, None)):
                    conf = os.path.join(TMP, sc + '.yaml')
                    with open(conf, 'w') as f:
                        f.write('sources:\n  libvirt:\n    agent: "%s"\n    uri: "fake:%s"\n' % (AGENT, sc))
                    runs.append(L.record(os.path.join(TMP, sc + '.vms'), '-c', conf, '-i', '500ms' if sc == 'pid'
                                         else '200ms', '-n', str(n), env=e))
            finally:
                standin.kill()
                standin.wait()
        prom = test_tsdb.Prometheus()
        try:
            ends = []
            for path in runs:  # oldest first: Prometheus takes no sample older than its head
                L.run([BIN, 'export', '--file', path, '--no-follow', '--remote-write', prom.url('/api/v1/write')])
                fr = [json.loads(x) for x in L.run([BIN, 'dump', path, '--format', 'json']).stdout.splitlines()]
                # at the run's last frame; the migration run at each frame
                # (its job's series end, staleness-marked, with the job)
                ends += [f['t_wall_ns'] / 1e9 for f in (fr if path == MIGRATION or 'migrate' in path else fr[-1:])]
            seen, empty = 0, []
            for dash, p in panels():
                self.assertTrue(p['targets'], p['title'])
                got = False
                for t in p['targets']:
                    q = concrete(t['expr'])
                    n = 0
                    for end in ends:
                        st, body = test_tsdb.fetch(prom.url('/api/v1/query?' + urllib.parse.urlencode(
                            {'query': q, 'time': '%.3f' % end})))
                        self.assertEqual(st, 200, (q, body[:300]))
                        n = max(n, len(json.loads(body)['data']['result']))
                    if (dash, p['title']) not in NO_DATA_HERE:
                        self.assertGreater(n, 0, '%s / %s: %s returns nothing' % (dash, p['title'], q))
                    got = got or n > 0
                if (dash, p['title']) in NO_DATA_HERE:
                    self.assertFalse(got, '%s / %s has data now: take it off NO_DATA_HERE' % (dash, p['title']))
                    empty.append(p['title'])
                else:
                    seen += 1
            print('%d panels return series, %d have no data on this host (NO_DATA_HERE)' % (seen, len(empty)))
        finally:
            prom.remove()


if __name__ == '__main__':
    need('promtool')
    need('prometheus')
    try:
        unittest.main(verbosity=2)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
