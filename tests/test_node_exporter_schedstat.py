#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler export's node_schedstat_* families against node_exporter's
schedstat collector on the same fixture (issue 26).

This host has no /proc/schedstat (its kernel is built without
CONFIG_SCHEDSTATS), so test_node_exporter.py, which compares the two on the
live /proc, cannot see these families.  Here both read one proc root,
tests/fixtures/roots/procfs-schedstat-v15 (prometheus/procfs' real file,
provenance in tests/fixtures/PROVENANCE.md): the sampler with --proc-root
and a ring served by `vmsampler export`, Debian's prometheus-node-exporter
with --path.procfs and only --collector.schedstat, on 127.0.0.1 (free
ports).  Checked:
  - the same node_schedstat_* families with the same TYPE on both sides
    (and, with HELP, the same help text);
  - the same series (cpu="0", cpu="1") and the same values (1e-12
    relative: float formatting), which are also the ones
    ../shared/fixtures/proc/EXPECTED.md gives for this file.
Without prometheus-node-exporter: SKIP (77), a failure with
VMS_REQUIRE_PROMETHEUS=1 (scripts/test.sh).  Everything started is stopped
in finally."""
import os
import shutil
import tempfile

from test_export import BIN, free_port, skip_or_fail, start, start_export, stop_all, wait_for
from test_node_exporter import get, parse

FIXTURES = os.environ.get('VMS_FIXTURES', os.path.join(os.path.dirname(__file__), 'fixtures'))
ROOT = os.path.join(FIXTURES, 'roots', 'procfs-schedstat-v15')
# EXPECTED.md: "running_seconds cpu0 2045936.778163039, cpu1 1904686.152592476;
# waiting_seconds cpu0 343796.328169361, cpu1 364107.263788241; timeslices
# cpu0 4767485306, cpu1 5145567945"
EXPECTED = {
    ('node_schedstat_running_seconds_total', '0'): 2045936.778163039,
    ('node_schedstat_running_seconds_total', '1'): 1904686.152592476,
    ('node_schedstat_waiting_seconds_total', '0'): 343796.328169361,
    ('node_schedstat_waiting_seconds_total', '1'): 364107.263788241,
    ('node_schedstat_timeslices_total', '0'): 4767485306,
    ('node_schedstat_timeslices_total', '1'): 5145567945,
}


def helps(text):
    return dict(line[7:].split(' ', 1) for line in text.splitlines() if line.startswith('# HELP '))


def sched(text):
    types, values = parse(text)
    t = {n: v for n, v in types.items() if n.startswith('node_schedstat_')}
    v = {(n, dict(lab).get('cpu')): x for (n, lab), x in values.items() if n.startswith('node_schedstat_')}
    h = {n: x for n, x in helps(text).items() if n.startswith('node_schedstat_')}
    return t, v, h


def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def main():
    ne = shutil.which('prometheus-node-exporter') or shutil.which('node_exporter')
    if not ne:
        skip_or_fail('prometheus-node-exporter is not installed (Debian package prometheus-node-exporter, '
                     'scripts/lib.sh TEST_PKGS)')
    tmp = tempfile.mkdtemp(prefix='vms-nodeexp-sched-')
    try:
        ring = os.path.join(tmp, 'ring')
        cfg = os.path.join(tmp, 'vmsampler.yaml')
        with open(cfg, 'w') as f:
            f.write('sources:\n  schedstat: {enabled: true}\n')
        start([BIN, '-c', cfg, '--proc-root', ROOT, '-i', '200ms', '--ring', ring, '-o', os.path.join(tmp, 'run.vms'),
               '-q'])
        wait_for(lambda: os.path.exists(ring), what='the ring')
        _, port = start_export(tmp, '--ring', ring)
        ours = wait_for(lambda: (lambda t: t if t and 'node_schedstat_' in t else None)(
            get('http://127.0.0.1:%d/metrics' % port)), what='export to serve node_schedstat_*')

        nport = free_port()
        nlog = open(os.path.join(tmp, 'node_exporter.log'), 'w+')
        start([ne, '--web.listen-address=127.0.0.1:%d' % nport, '--path.procfs=' + ROOT,
               '--collector.disable-defaults', '--collector.schedstat'], stderr=nlog)
        theirs = wait_for(lambda: get('http://127.0.0.1:%d/metrics' % nport), what='node_exporter to answer')

        ot, ov, oh = sched(ours)
        tt, tv, th = sched(theirs)
        assert tt, 'node_exporter served no node_schedstat_* family: %s' % theirs[:2000]
        assert ot == tt, 'families/TYPEs: export %r, node_exporter %r' % (ot, tt)
        for n in ot:
            if n in oh and n in th:
                assert oh[n] == th[n], '%s: HELP %r here, %r in node_exporter' % (n, oh[n], th[n])
        assert set(ov) == set(tv) == set(EXPECTED), 'series: export %s, node_exporter %s' % (
            sorted(ov), sorted(tv))
        for k, want in EXPECTED.items():
            assert close(ov[k], tv[k]), '%s{cpu=%s}: export %r, node_exporter %r' % (k[0], k[1], ov[k], tv[k])
            assert close(ov[k], want), '%s{cpu=%s}: export %r, EXPECTED.md %r' % (k[0], k[1], ov[k], want)
        print('ok: %d node_schedstat_* series equal to node_exporter %s and EXPECTED.md' % (len(ov), ne))
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
