#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_export - Prometheus scrapes `vmsampler export --listen` for a minute
on a host with real guests (issue 12): the per-VM families, under the
libvirt exporter's names and labels, queried back through Prometheus' HTTP
API, equal `vmsampler dump` of the same frames.

The sampler runs at 1 s with a live ring and a .vms file beside the
stable guests vms-001..003 (tests/vmlab); `vmsampler export --ring`
serves the ring on 127.0.0.1; Debian's Prometheus (a free port, a
temporary storage directory) scrapes it every second for 60 s.  Then, for
every scraped frame (vmsampler_frame_sequence at the sample's timestamp,
the frame's wall time) and every guest:
  - libvirt_domain_info_cpu_time_seconds_total{domain,uuid} =
    vm.N.cpu_time / 1e9, with uuid = virsh domuuid;
  - libvirt_domain_vcpu_delay_seconds_total{vcpu="0"} = vm.N.vcpu0.delay / 1e9
    (the run delay: the steal the guest sees);
  - libvirt_domain_block_stats_read_bytes_total{target_device="vda"} (a
    held value: the newest frame that has it) and
    libvirt_domain_interface_stats_receive_bytes_total{target_device=TAP}
    = the block and tap columns;
  - libvirt_domain_memory_stats_rss_bytes = vm.N.mem.rss (QEMU's resident
    set; read every sources.libvirt.detail_interval, 5 s: a held value,
    and the file has it in at least every 5th frame);
  - libvirt_domains = the number of guests in the frame;
and at least 50 scraped frames were compared.  Everything started is
stopped whatever happens; the guests are the session's.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from itlib import (BIN, STABLE, Checks, log, need, uuid_of)  # noqa: E402
import test_export as tx  # noqa: E402  (tests/test_export.py: its Prometheus helpers)


def held(rows, seq, col):
    """The column in frame seq, or (a block value the agent reads at a
    slower cadence, mem.rss read every detail_interval: empty in the frames
    between) the newest frame before it that has it: what /metrics serves,
    the metric's "(held)"; None: no frame before has it (nor a sample)."""
    while seq in rows:
        if rows[seq][col] != '':
            return int(rows[seq][col])
        seq -= 1
    return None


def main():
    c = Checks('it_export')
    need()
    prom = shutil.which('prometheus')
    c.ok(prom, 'no prometheus (Debian package prometheus, in scripts/lib.sh TEST_PKGS)')
    tmp = tempfile.mkdtemp(prefix='it-export-')
    try:
        uuids = {g: uuid_of(g) for g in STABLE}
        ring, run = os.path.join(tmp, 'ring'), os.path.join(tmp, 'run.vms')
        env = dict(os.environ)
        env.pop('LIBVIRT_DEFAULT_URI', None)
        tx.start([BIN, '-i', '1s', '--ring', ring, '-o', run, '-q'], env=env)
        tx.wait_for(lambda: os.path.exists(ring), what='the ring')
        exp, port = tx.start_export(tmp, '--ring', ring)
        base = 'http://127.0.0.1:%d' % port
        # the agent has found the guests: their families are served
        tx.wait_for(lambda: all(('domain="%s"' % g).encode() in tx.get(base + '/metrics')[2] for g in STABLE),
                    60, 'the guests in /metrics')
        pbase = tx.start_prometheus(prom, tmp, port)
        t0 = time.time()
        time.sleep(60)  # a minute of scrapes
        c.ok(exp.poll() is None, 'export exited')
        st, _, body = tx.get(pbase + '/api/v1/targets')
        t = json.loads(body)['data']['activeTargets']
        c.ok(len(t) == 1 and t[0]['health'] == 'up', 'target: %s' % t)

        rng = '[%ds]' % (int(time.time() - t0) + 5)
        seqs = dict(tx.one(tx.prom_series(pbase, 'vmsampler_frame_sequence' + rng)))
        ndom = dict(tx.one(tx.prom_series(pbase, 'libvirt_domains' + rng)))
        rows = tx.dump_rows(run)
        per = {}
        for g in STABLE:
            u = uuids[g]
            sel = '{domain="%s",uuid="%s"' % (g, u)
            per[g] = {
                'cpu': dict(tx.one(tx.prom_series(pbase, 'libvirt_domain_info_cpu_time_seconds_total' + sel + '}' + rng))),
                'delay': dict(tx.one(tx.prom_series(pbase, 'libvirt_domain_vcpu_delay_seconds_total' + sel +
                                                    ',vcpu="0"}' + rng))),
                'rd': dict(tx.one(tx.prom_series(pbase, 'libvirt_domain_block_stats_read_bytes_total' + sel +
                                                 ',target_device="vda"}' + rng))),
                'rss': dict(tx.one(tx.prom_series(pbase, 'libvirt_domain_memory_stats_rss_bytes' + sel + '}' + rng))),
                'rx': tx.prom_series(pbase, 'libvirt_domain_interface_stats_receive_bytes_total' + sel + '}' + rng),
            }
            c.ok(len(per[g]['rx']) == 1, '%s: one interface, got %s' % (g, list(per[g]['rx'])))
        compared = 0
        for ts, seq in seqs.items():
            row = rows.get(int(seq))
            c.ok(row is not None, 'frame %s scraped but not in the file' % seq)
            ng = sum(1 for k in row if k.startswith('vm.') and k.endswith('.cpu_time') and row[k] != '')
            c.ok(float(ndom[ts]) == ng, 'seq %s: libvirt_domains %s, %d in the frame' % (seq, ndom[ts], ng))
            for g in STABLE:
                p = 'vm.%s.' % g
                m = per[g]
                exp_ = {
                    'cpu': int(row[p + 'cpu_time']) / 1e9,
                    'delay': int(row[p + 'vcpu0.delay']) / 1e9,
                    'rd': held(rows, int(seq), p + 'block.vda.rd_bytes'),
                    'rss': held(rows, int(seq), p + 'mem.rss'),
                }
                for k, v in exp_.items():
                    if v is None:
                        c.ok(ts not in m[k], 'seq %s %s %s: prometheus %s, none in dump yet' % (
                            seq, g, k, m[k].get(ts)))
                        continue
                    c.ok(ts in m[k] and float(m[k][ts]) == v, 'seq %s %s %s: prometheus %s, dump %s' % (
                        seq, g, k, m[k].get(ts), v))
                (labels, samples), = m['rx'].items()
                tap = dict(labels)['target_device']
                c.ok(float(dict(samples)[ts]) == int(row[p + 'net.%s.rx_bytes' % tap]),
                     'seq %s %s rx_bytes of %s' % (seq, g, tap))
            compared += 1
        c.ok(compared >= 50, 'only %d scraped frames' % compared)
        # mem.rss on its cadence (5 s at 1 s: one of the guest's frames in
        # 5, the VMs spread; a VM moving in the table may wait up to twice
        # that once)
        for g in STABLE:
            has = [r for r in rows.values() if r.get('vm.%s.cpu_time' % g, '') != '']
            n = sum(1 for r in has if r.get('vm.%s.mem.rss' % g, '') != '')
            c.ok(n >= len(has) // 5 - 1, '%s: mem.rss in only %d of its %d frames' % (g, n, len(has)))
        log('%d scraped frames x %d guests equal dump (seq %d..%d)' % (
            compared, len(STABLE), min(map(int, seqs.values())), max(map(int, seqs.values()))))
    finally:
        tx.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    main()
