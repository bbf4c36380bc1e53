#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/vm/split.py - per-VM cost of a tick, split into the perf source and
the rest, at N real guests (issues 14 and 15).

Run inside a vmlab session (it brings the guests up to N itself):

    sudo tests/vmlab/session.sh -- bench/vm/split.py --guests 60 [--frames 40] [--rounds 2]

Four configurations of `vmsampler -i 1s` (the build's binary, CSV to
/dev/null), each for --frames frames, alternated --rounds times:
  host       sources.libvirt and sources.perf off
  host+perf  sources.libvirt off (perf counts the host only)
  vm         sources.perf off (per-VM statistics without perf)
  vm+perf    the defaults
The sampler's own CPU per tick is the frames' self_cpu_ns (median of the
frames after the first 5; read back from a .vms with `vmsampler dump`);
the agent's is its threads' schedstat run time over the run, per frame.
Per VM: (vm - host) / N and (vm+perf - host+perf) / N, sampler + agent.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CONFIGS = {
    'host': 'sources:\n  libvirt: {enabled: false}\n  perf: {enabled: false}\n',
    'host+perf': 'sources:\n  libvirt: {enabled: false}\n',
    'vm': 'sources:\n  perf: {enabled: false}\n',
    'vm+perf': '',
}


def agent_ns(pid):
    """The run time (ns) of the agent child of pid, all its threads."""
    tot = 0
    for c in os.listdir('/proc'):
        if not c.isdigit():
            continue
        try:
            st = open('/proc/%s/stat' % c).read()
            if int(st[st.rindex(')') + 2:].split()[1]) != pid or 'vmsampler-vir' not in st:
                continue
            for t in os.listdir('/proc/%s/task' % c):
                tot += int(open('/proc/%s/task/%s/schedstat' % (c, t)).read().split()[0])
        except (OSError, ValueError):
            continue
    return tot


def run(binary, name, frames, tmp):
    cfg = os.path.join(tmp, name + '.yaml')
    open(cfg, 'w').write(CONFIGS[name] or 'interval: 1s\n')
    out = os.path.join(tmp, name + '.vms')
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ)
    env.pop('LIBVIRT_DEFAULT_URI', None)
    p = subprocess.Popen([binary, '-c', cfg, '-i', '1s', '-n', str(frames), '-o', out, '-q'], env=env)
    time.sleep(5)  # the agent is up; its start-up is not a tick's cost
    a0, t0 = agent_ns(p.pid), time.time()
    a1 = a0
    while p.poll() is None:
        a1 = max(a1, agent_ns(p.pid))
        time.sleep(0.5)
    t1 = time.time()
    d = subprocess.run([binary, 'dump', out], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(d)))
    self_ns = [int(r['self_cpu_ns']) for r in rows[5:]]
    ncols = len(rows[0]) if rows else 0
    return statistics.median(self_ns), (a1 - a0) / max(1.0, t1 - t0), ncols


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--guests', type=int, default=60)
    ap.add_argument('--frames', type=int, default=40)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--build', default=os.path.join(SRC, 'build'))
    a = ap.parse_args()
    binary = os.path.join(a.build, 'vmsampler')
    env = dict(os.environ, LOAD='idle')
    subprocess.run(['bash', os.path.join(SRC, 'tests/vmlab/up.sh'), str(a.guests - 3), '4'], env=env, check=True)
    time.sleep(30)
    tmp = tempfile.mkdtemp(prefix='vms-split.')
    res = {k: [] for k in CONFIGS}
    for rnd in range(a.rounds):
        for name in CONFIGS:
            s, ag, nc = run(binary, name, a.frames, tmp)
            res[name].append((s, ag, nc))
            print('round %d %-9s columns %5d  sampler %7.1f us/tick  agent %6.1f us/s  load %s' % (
                rnd + 1, name, nc, s / 1e3, ag / 1e3, open('/proc/loadavg').read().split()[0]), flush=True)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), v[0][2])
           for k, v in res.items()}
    n = a.guests
    for vm, host in (('vm', 'host'), ('vm+perf', 'host+perf')):
        own = (med[vm][0] + med[vm][1]) - (med[host][0] + med[host][1])
        print('%-8s per VM: %.1f us per tick (sampler %.1f + agent %.1f), %d columns more than %s' % (
            vm, own / n / 1e3, (med[vm][0] - med[host][0]) / n / 1e3, (med[vm][1] - med[host][1]) / n / 1e3,
            med[vm][2] - med[host][2], host))


if __name__ == '__main__':
    sys.exit(main())
