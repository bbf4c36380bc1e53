#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler export's node_exporter names against node_exporter itself
(issue 12).

A sampler runs on this host's /proc at 200 ms with a live ring, `vmsampler
export --ring` serves it, and Debian's prometheus-node-exporter runs beside
them on 127.0.0.1 (a free port) with only the collectors whose quantities
vmsampler has: cpu, stat, loadavg, diskstats, netdev (no device left out,
so that lo is there as in vmsampler), pressure, meminfo.  Checked, on several
scrapes of node_exporter, each bracketed by two frames of export (frame A
committed before the scrape was sent; frame B, the first whose tick began
after node_exporter's answer came back, so B read /proc after it):

  - every node_* family export serves is one node_exporter serves, with the
    same TYPE, and every node_* family node_exporter serves from these
    collectors, bar the ones vmsampler has no column for (NO_COLUMN), is
    one export serves: a name we spell differently fails here;
  - the same series (label sets) on both sides (the sampler with
    sources.netdev.vm_taps, so that libvirt guests' host-side taps are
    there as in node_exporter; a bracket where a device came or went is
    taken again, RETRIES times in a row at most);
  - counters: A <= node_exporter <= B for every series, in node_exporter's
    own units (its seconds are USER_HZ ticks / 100, disk milliseconds /
    1000, PSI microseconds / 1e6, sectors x 512);
  - load averages: node_exporter's equals A's or B's (they change every
    5 s); /proc/meminfo's fixed fields (MemTotal, SwapTotal, ...) equal on
    all three; its other fields between A's and B's give or take 1 % of
    MemTotal, and whole kB in bytes; the gauges that move with every process (node_procs_running,
    node_procs_blocked, node_disk_io_now) are only checked for their series
    and for being whole numbers;
  - `promtool check metrics` says nothing of export's answer that it does
    not say of node_exporter's (its camelCase node_memory_* names);
  - the bracket is tight: over the scrapes, at least one has B right after A
    (within one tick).

node_exporter's value is read from its text exposition (Go's shortest
float), ours from export's; a counter equal on both sides may differ in its
last bit (Go multiplies PSI microseconds by 1e-6, we divide), so the bounds
allow 1e-12 relative.  Without prometheus-node-exporter the test is a SKIP
(77), a failure with VMS_REQUIRE_PROMETHEUS=1 (scripts/test.sh).
Everything started is stopped in finally."""
import os
import re
import shutil
import subprocess
import tempfile
import time

import test_export
from test_export import BIN, free_port, skip_or_fail, start, start_export, stop_all, wait_for
INTERVAL_S = 0.2
SCRAPES = 8
COLLECTORS = ['cpu', 'stat', 'loadavg', 'diskstats', 'netdev', 'pressure', 'meminfo', 'vmstat']
# /proc/vmstat: node_exporter's node_vmstat_KEY (untyped) for the keys its
# default field filter (^(oom_kill|pgpg|pswp|pg.*fault).*) takes, the
# sampler told to read the same ones; all are event counters
VMSTAT_KEYS = ['pgpgin', 'pgpgout', 'pswpin', 'pswpout', 'pgfault', 'pgmajfault', 'oom_kill']
# Debian's node_exporter is 1.5: export serves its names with --names
# legacy (the default, current, set differs in node_pressure_irq_stalled_
# seconds_total, which 1.5 does not have)
NAMES = 'legacy'
# per-vector softirqs: node_exporter's stat collector with --collector.stat.
# softirq gives node_softirqs_total{vector} (/proc/stat's per-vector sums),
# export's from the irq source (/proc/softirqs summed over the CPUs); 1.5
# has no softirqs collector (node_softirqs_functions_total{cpu,type}, 1.9):
# left out of export here
EXPORT_OPTS = ['--names', NAMES, '--exclude', 'node_softirqs_functions_total']
# node_exporter families of these collectors with no vmsampler column:
# boot time (a constant of /proc/stat), udev's disk info, and
# receive_nohandler (node_exporter reads it over netlink; /proc/net/dev,
# what vmsampler reads, does not have it)
NO_COLUMN = {'node_boot_time_seconds', 'node_disk_info', 'node_network_receive_nohandler_total'}
# gauges that move with every process: no bracket can hold them
MOVING = {'node_procs_running', 'node_procs_blocked', 'node_disk_io_now'}
LOADS = {'node_load1', 'node_load5', 'node_load15'}
# /proc/meminfo fields that do not move while the machine runs
MEM_FIXED = {'node_memory_MemTotal_bytes', 'node_memory_SwapTotal_bytes', 'node_memory_Hugepagesize_bytes',
             'node_memory_HugePages_Total', 'node_memory_VmallocTotal_bytes', 'node_memory_CommitLimit_bytes'}



def get(url):
    """the body of url as text, None while nobody answers"""
    try:
        st, _, body = test_export.get(url)
    except OSError:
        return None
    return body.decode() if st == 200 else None


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)(?: \d+)?$')


def parse(text):
    """Prometheus text format: ({family: type}, {(name, labels): value})"""
    types, values = {}, {}
    for line in text.splitlines():
        if line.startswith('# TYPE '):
            _, _, name, typ = line.split(' ', 3)
            types[name] = typ
        elif line and not line.startswith('#'):
            m = SAMPLE.match(line)
            assert m, 'unparsable line: %r' % line
            labels = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or '')))
            values[(m.group(1), labels)] = float(m.group(3))
    return types, values


def frame(base):
    """(seq, frame wall time, types, values) of export's /metrics now"""
    text = get(base)
    if text is None:
        return None
    types, values = parse(text)
    seq = values.get(('vmsampler_frame_sequence', ()))
    if seq is None:
        return None
    return int(seq), values[('vmsampler_frame_timestamp_seconds', ())], types, values


def node_families(types):
    return {n: t for n, t in types.items() if n.startswith('node_') and not n.startswith(('node_scrape_',
                                                                                             'node_exporter_'))}


class Changed(Exception):
    """The series differ: a device came or went during the bracket, or a
    real difference (if it stays, RETRIES brackets in a row)."""


RETRIES = 3


def near_le(a, b):
    return a <= b + 1e-12 * max(abs(a), abs(b), 1.0)


def compare(a, node, b, stats):
    """one bracket: export's frame a, node_exporter's scrape, export's frame b"""
    _, _, atypes, av = a
    _, _, btypes, bv = b
    ntypes, nv = node
    ours = node_families(atypes)
    theirs = node_families(ntypes)
    for name, typ in ours.items():
        assert name in theirs, '%s: node_exporter has no such family (a name to fix in metrics.c)' % name
        assert theirs[name] == typ, '%s: TYPE %s here, %s in node_exporter' % (name, typ, theirs[name])
    missing = set(theirs) - set(ours) - NO_COLUMN
    assert not missing, 'node_exporter families export does not serve: %s' % sorted(missing)
    ours_s = {k for k in av if k[0] in theirs}
    theirs_s = {k for k in nv if k[0] in ours}
    if ours_s != {k for k in bv if k[0] in theirs}:
        raise Changed('frames A and B have different series')
    if ours_s != theirs_s:
        raise Changed('series only here: %s; only in node_exporter: %s' %
                      (sorted(ours_s - theirs_s)[:10], sorted(theirs_s - ours_s)[:10]))
    for key in sorted(theirs_s):
        name, n = key[0], nv[key]
        lo, hi = av[key], bv[key]
        if ours[name] == 'counter' or name.startswith('node_vmstat_'):
            assert near_le(lo, n) and near_le(n, hi), \
                '%s%s: node_exporter %r outside [%r, %r] of frames A and B' % (name, dict(key[1]), n, lo, hi)
            stats['counters'] += 1
            if lo != hi:
                stats['moved'] += 1
        elif name in LOADS:
            assert n in (lo, hi), '%s: node_exporter %r, frames A and B %r, %r' % (name, n, lo, hi)
            stats['loads'] += 1
        elif name in MEM_FIXED:
            assert n == lo == hi, '%s: node_exporter %r, frames A and B %r, %r' % (name, n, lo, hi)
            stats['memory'] += 1
        elif name.startswith('node_memory_'):
            # moves with every allocation on this shared machine: between
            # A and B give or take 1 % of the memory (a value in kB instead
            # of bytes, or another field, is far outside)
            slack = nv[('node_memory_MemTotal_bytes', ())] / 100
            assert min(lo, hi) - slack <= n <= max(lo, hi) + slack, \
                '%s: node_exporter %r, frames A and B %r, %r' % (name, n, lo, hi)
            assert not name.endswith('_bytes') or (n % 1024 == 0 and lo % 1024 == 0), (name, n, lo)
            stats['memory'] += 1
        else:
            assert name in MOVING, '%s: a gauge this test does not know how to compare' % name
            assert n == int(n) and lo == int(lo) and n >= 0, (name, n, lo)
            stats['moving'] += 1
    return sorted(ours)


def main():
    ne = shutil.which('prometheus-node-exporter') or shutil.which('node_exporter')
    if not ne:
        skip_or_fail('prometheus-node-exporter is not installed (Debian package prometheus-node-exporter, '
                     'scripts/lib.sh TEST_PKGS)')
    promtool = shutil.which('promtool')
    if not promtool:
        skip_or_fail('promtool is not installed (Debian package prometheus)')
    tmp = tempfile.mkdtemp(prefix='vms-nodeexp-')
    try:
        ring = os.path.join(tmp, 'ring')
        # the host-side taps of libvirt guests (vmlab's vmstN, when another
        # session has guests up) are node_exporter's devices too: in
        cfg = os.path.join(tmp, 'vmsampler.yaml')
        with open(cfg, 'w') as f:
            f.write('sources:\n  netdev:\n    vm_taps: true\n  vmstat:\n    include: [%s]\n' % ', '.join(VMSTAT_KEYS))
        start([BIN, '-c', cfg, '-i', '%dms' % (INTERVAL_S * 1000), '--ring', ring, '-o',
               os.path.join(tmp, 'run.vms'), '-q'])
        wait_for(lambda: os.path.exists(ring), what='the ring')
        exp, port = start_export(tmp, '--ring', ring, *EXPORT_OPTS)
        base = 'http://127.0.0.1:%d/metrics' % port

        nport = free_port()
        nlog = open(os.path.join(tmp, 'node_exporter.log'), 'w+')
        nep = start([ne, '--web.listen-address=127.0.0.1:%d' % nport, '--collector.disable-defaults',
                     '--collector.netdev.device-exclude=^$',
                     '--collector.vmstat.fields=^(%s)$' % '|'.join(VMSTAT_KEYS), '--collector.stat.softirq'] + ['--collector.' + c for c in COLLECTORS],
                    stderr=nlog)
        nbase = 'http://127.0.0.1:%d/metrics' % nport

        def node_up():
            if nep.poll() is not None:
                nlog.seek(0)
                raise AssertionError('node_exporter exited %d: %s' % (nep.returncode, nlog.read()[-2000:]))
            return get(nbase)
        wait_for(node_up, what='node_exporter to answer')
        wait_for(lambda: frame(base), what='a first frame on export')

        stats = {'counters': 0, 'moved': 0, 'loads': 0, 'memory': 0, 'moving': 0}
        widths = []
        fams = None
        changed = []
        while len(widths) < SCRAPES:
            # A: a frame just committed (export serves only whole frames)
            first = frame(base)[0]
            a = wait_for(lambda: (lambda f: f if f and f[0] > first else None)(frame(base)),
                         what='a new frame')
            text = get(nbase)
            t_answered = time.time()
            assert text is not None, 'node_exporter did not answer'
            node = parse(text)
            # B: the first frame whose tick (its wall time, taken before it
            # reads /proc) began after node_exporter answered
            b = wait_for(lambda: (lambda f: f if f and f[1] >= t_answered else None)(frame(base)),
                         what='a frame after the scrape')
            try:
                fams = compare(a, node, b, stats)
            except Changed as e:
                changed.append(str(e))
                assert len(changed) < RETRIES, 'the series differ in %d brackets in a row: %s' % (
                    RETRIES, changed[-1])
                continue
            changed = []
            widths.append(b[0] - a[0])
        # promtool's lint: whatever it says of export's answer it says of
        # node_exporter's own (its camelCase node_memory_* names)
        def lint(body):
            r = subprocess.run([promtool, 'check', 'metrics'], input=body.encode(), capture_output=True, timeout=60)
            assert r.returncode in (0, 3), (r.returncode, r.stdout, r.stderr)  # 3: lint problems only
            return {ln for ln in (r.stdout + r.stderr).decode().splitlines() if ln.strip()}
        ours_lint, node_lint = lint(get(base)), lint(get(nbase))
        assert ours_lint <= node_lint, 'promtool about export only: %s' % sorted(ours_lint - node_lint)
        assert stats['moved'] > 0, 'no counter moved between frames A and B: nothing was bracketed'
        assert min(widths) == 1, 'no scrape fell between two consecutive frames: %s' % widths
        assert exp.poll() is None and nep.poll() is None
        print('%d node_exporter scrapes bracketed by export frames (B - A: %s frames); %d families: %s' %
              (SCRAPES, widths, len(fams), ' '.join(fams)))
        print('promtool: %d complaints about export, all also about node_exporter' % len(ours_lint))
        print('%(counters)d counter values inside their bracket (%(moved)d of them moved between A and B), '
              '%(loads)d load averages equal, %(memory)d memory gauges, %(moving)d moving gauges' % stats)
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print('ok')


if __name__ == '__main__':
    main()
