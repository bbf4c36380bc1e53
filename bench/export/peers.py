#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/export/peers.py [--build DIR] [--rounds R] [--window S]: CPU per
scrape of `vmsampler export --listen` against node_exporter + the libvirt
exporter for the same quantities, on the libvirt guests that are running
(bench/export/peers.sh brings up 60 and runs this inside a vmlab session).

Running all along: `vmsampler -i 1s --ring R` (the defaults: host sources
and every running domain through its agent), `vmsampler export --ring R
--listen`, Debian's prometheus-node-exporter with only the collectors
whose quantities vmsampler has (cpu, stat, loadavg, diskstats, netdev,
pressure) and Debian's prometheus-libvirt-exporter (qemu:///system), all
on 127.0.0.1.  The run is cut into R rounds of four windows of S seconds:
"idle" (nobody scraped), then each exporter scraped once a second with
Prometheus' Accept header and gzip, alone in its window.  Per window the
CPU of each exporter (utime + stime of its process, /proc/PID/stat,
exited threads included), of libvirtd and of the QEMU processes'
emulator threads (what the libvirt exporter's block and interface
statistics make them do).  Per scrape: the exporter's CPU in its windows
divided by its scrapes (following the ring, idle work, everything in), and
libvirtd's and QEMU's CPU above their mean in the idle windows; series
per scrape counted in one answer.  Also the sampler's own CPU per tick
(its frames' self_cpu_ns plus its agent's CPU), which export only
reformats.  Prints a Markdown table; the exporters started here are
stopped here."""
import argparse
import csv
from datetime import datetime
import gzip
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'vm'))
from run import ACCEPT, proc_cpu  # noqa: E402  (bench/export/run.py)
from delay import Procs, free_port, wait_for  # noqa: E402  (bench/export/delay.py)
from bench import run_ns, snapshot  # noqa: E402  (bench/vm/bench.py: libvirtd, QEMU emulator, vCPU CPU)

COLLECTORS = ['cpu', 'stat', 'loadavg', 'diskstats', 'netdev', 'pressure']


def scrape(url):
    req = urllib.request.Request(url, headers={'Accept': ACCEPT, 'Accept-Encoding': 'gzip'})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
        if r.headers.get('Content-Encoding') == 'gzip':
            body = gzip.decompress(body)
    return body


def series(body):
    return sum(1 for ln in body.decode().splitlines() if ln and not ln.startswith('#'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(HERE, '..', '..', 'build'))
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--window', type=float, default=30.0)
    a = ap.parse_args()
    bin_ = os.path.join(a.build, 'vmsampler')
    ne = shutil.which('prometheus-node-exporter')
    le = shutil.which('prometheus-libvirt-exporter')
    if not ne or not le:
        print('needs prometheus-node-exporter and prometheus-libvirt-exporter (Debian)', file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix='vms-bench-peers-')
    env = dict(os.environ)
    env.pop('LIBVIRT_DEFAULT_URI', None)
    procs = Procs(tmp, env)
    start = procs.start

    try:
        ring = os.path.join(tmp, 'ring')
        sampler, _ = start([bin_, '-i', '1s', '--ring', ring, '-o', os.path.join(tmp, 'run.vms')], 'sampler')
        wait_for(lambda: os.path.exists(ring), 60, 'the ring')
        exp, eport = procs.export(bin_, ring, 'export')
        urls = {'export': 'http://127.0.0.1:%d/metrics' % eport}
        nport, lport = free_port(), free_port()
        nep, _ = start([ne, '--web.listen-address=127.0.0.1:%d' % nport, '--collector.disable-defaults',
                        '--collector.netdev.device-exclude=^$'] + ['--collector.' + c for c in COLLECTORS],
                       'node_exporter')
        lep, _ = start([le, '--web.listen-address=127.0.0.1:%d' % lport, '--libvirt.uri=qemu:///system'],
                       'libvirt_exporter')
        urls['node_exporter'] = 'http://127.0.0.1:%d/metrics' % nport
        urls['libvirt_exporter'] = 'http://127.0.0.1:%d/metrics' % lport
        pids = {'export': exp.pid, 'node_exporter': nep.pid, 'libvirt_exporter': lep.pid}

        # every running domain in the frames, and their slow values in
        def domains():
            body = scrape(urls['export']).decode()
            m = re.search(r'^libvirt_domains_number (\d+)', body, re.M)
            return int(m.group(1)) if m else 0
        want = len(subprocess.run(['virsh', '-q', '-c', 'qemu:///system', 'list', '--name'], env=env,
                                  capture_output=True, text=True, check=True).stdout.split())
        wait_for(lambda: domains() >= want, 120, '%d domains in the frames' % want)
        for u in urls.values():
            wait_for(lambda: scrape(u), 60, u)
        time.sleep(15)
        nseries = {k: series(scrape(u)) for k, u in urls.items()}

        agent = [int(x) for x in open('/proc/%d/task/%d/children' % (sampler.pid, sampler.pid)).read().split()]
        t_start = time.time()
        ag0 = sum(run_ns(p) or 0 for p in agent)
        acc = {k: {'cpu': 0.0, 'scrapes': 0, 'lv': 0, 'emu': 0, 'secs': 0.0} for k in ['idle'] + list(urls)}
        for _ in range(a.rounds):
            for cond in ['idle'] + list(urls):
                c0 = {k: proc_cpu(p) for k, p in pids.items()}
                s0 = snapshot()
                w0 = time.monotonic()
                end = w0 + a.window
                nxt = w0
                while time.monotonic() < end:
                    if cond != 'idle':
                        scrape(urls[cond])
                        acc[cond]['scrapes'] += 1
                    nxt += 1.0
                    time.sleep(max(0.0, nxt - time.monotonic()))
                s1 = snapshot()
                c1 = {k: proc_cpu(p) for k, p in pids.items()}
                r = acc[cond]
                r['secs'] += time.monotonic() - w0
                r['lv'] += s1['libvirtd'] - s0['libvirtd']
                r['emu'] += s1['emu'] - s0['emu']
                if cond != 'idle':
                    r['cpu'] += c1[cond] - c0[cond]
                else:
                    for k in pids:
                        r.setdefault('idle_' + k, 0.0)
                        r['idle_' + k] += c1[k] - c0[k]
        t_end = time.time()
        ag1 = sum(run_ns(p) or 0 for p in agent)
        for line in procs.exited():
            print(line, file=sys.stderr)
        if procs.exited():
            return 1
        sampler.send_signal(signal.SIGTERM)
        sampler.wait(timeout=30)
        out = subprocess.run([bin_, 'dump', os.path.join(tmp, 'run.vms')], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        rows = list(csv.reader(out))
        it, ic = rows[0].index('time'), rows[0].index('self_cpu_ns')
        cpu = [int(r[ic]) for r in rows[1:]
               if r[ic] and t_start <= datetime.fromisoformat(r[it]).timestamp() <= t_end]
        ticks = len(cpu)

        idle = acc['idle']
        lv_rate, emu_rate = idle['lv'] / idle['secs'], idle['emu'] / idle['secs']
        print('| exporter | series per scrape | its CPU per scrape | libvirtd +Δ per scrape | '
              'QEMU emulator +Δ per scrape | its idle CPU |')
        print('|---|---:|---:|---:|---:|---:|')
        per = {}
        for k in urls:
            r = acc[k]
            per[k] = r['cpu'] * 1e3 / r['scrapes']
            dlv = (r['lv'] - lv_rate * r['secs']) / 1e6 / r['scrapes']
            demu = (r['emu'] - emu_rate * r['secs']) / 1e6 / r['scrapes']
            print('| %s | %d | %.2f ms | %+.2f ms | %+.2f ms | %.2f ms/s |' % (
                k, nseries[k], per[k], dlv, demu, idle['idle_' + k] * 1e3 / idle['secs']))
        peers = per['node_exporter'] + per['libvirt_exporter']
        print('\nnode_exporter + libvirt exporter: %.2f ms per scrape (%d series) against export %.2f ms (%d series): '
              '%s' % (peers, nseries['node_exporter'] + nseries['libvirt_exporter'], per['export'],
                      nseries['export'], '%.1fx' % (peers / per['export']) if per['export'] else
                      'export below the clock tick'))
        print('the sampler meanwhile (it does the reading export only reformats): %.2f ms per tick of its own '
              '+ %.2f ms of its agent (%d ticks)' % (statistics.mean(cpu) / 1e6, (ag1 - ag0) / 1e6 / ticks, ticks))
        print('%d domains, %d rounds of 4 windows of %.0f s, scrapes once a second; %s; load average %s' % (
            want, a.rounds, a.window, os.uname().release, open('/proc/loadavg').read().split()[:3]))
    finally:
        procs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
