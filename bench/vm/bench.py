#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/vm/bench.py - what per-VM statistics cost the host, at N guests.

    sudo bench/vm/bench.py [--guests 60,30,10] [--window 90] [--rounds 2]

Guests beyond N (vms-0NN) are taken down before measuring N, so going
from many to few saves boots.

For each N it brings the vmlab guests up to N (tests/vmlab/up.sh; guests
beyond the 3 stable ones with LOAD=idle), lets the boots settle, and
measures back to back, each over the same window of W seconds:

  base    no per-VM sampling (vmsampler with sources.libvirt disabled runs
          meanwhile, for the host-only tick lateness)
  vms60   vmsampler -i 1s with the defaults (slow refresh 60 s), after a
          70 s warm-up (the first minute refreshes every VM twice)
  vms10   the same with sources.libvirt.refresh: 10s (15 s warm-up)
  naive   bench/vm/naive.c: one virConnectGetAllDomainStats per second
  base    again, to see the drift of the guests' own CPU

(with --rounds R, the vms60 window is repeated R times, each followed by a
base window) and reports, per window: the CPU time of libvirtd, of the QEMU processes'
emulator threads (main loop, monitor, workers: where libvirt's monitor
commands are answered) and of their vCPU threads (the guests' own work,
which neither sampler changes), of vmsampler, its agent and the naive
program; and from vmsampler's own frames the CPU per tick (self_cpu_ns)
and the tick lateness (late_ns).  Induced CPU = the window's libvirtd +
QEMU emulator CPU minus the mean of the two base windows, plus the
sampler's own.  Raw numbers go to bench/results/vm-N.json, the table to
stdout.

Because the guests' own emulator CPU drifts between windows by more than
what the slow path costs at 60 s, it also measures that cost directly:
the last guest is suspended (its QEMU then does nothing of its own) and
asked 100 times, 50 ms apart, what the agent asks in its slow path
(naive -d: balloon and block, NOWAIT); its cgroup's CPU and libvirtd's
give the CPU per refresh of one domain, and refreshes per second x that
cost is the slow path's expected induced CPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(SRC, 'tests', 'integration'))
from itlib import Stream, children, log, run, vmlab  # noqa: E402

HZ = os.sysconf('SC_CLK_TCK')
PIDFILE = '/run/vmsampler-vmlab-libvirtd.pid'


def stat_ns(pid):
    """utime + stime of a whole process (exited threads included), 10 ms
    resolution."""
    try:
        f = open('/proc/%s/stat' % pid).read()
    except OSError:
        return None
    rest = f[f.rindex(')') + 2:].split()
    return (int(rest[11]) + int(rest[12])) * 10**9 // HZ


def run_ns(pid, only=None):
    """Run time of a process's live threads from schedstat (ns); only:
    a predicate on the thread's name."""
    total = 0
    try:
        tids = os.listdir('/proc/%s/task' % pid)
    except OSError:
        return None
    for t in tids:
        try:
            if only and not only(open('/proc/%s/task/%s/comm' % (pid, t)).read()):
                continue
            total += int(open('/proc/%s/task/%s/schedstat' % (pid, t)).read().split()[0])
        except OSError:
            pass
    return total


def cpu_of(pid):
    return run_ns(pid)


def snapshot():
    """CPU ns of libvirtd (its threads live on: schedstat, exact), of the
    QEMU processes' emulator threads (the whole process from
    /proc/PID/stat, whose worker threads come and go, minus the vCPU
    threads) and of their vCPU threads (schedstat)."""
    lv = run_ns(open(PIDFILE).read().strip()) or 0
    emu = vcpu = 0
    for f in os.listdir('/run/libvirt/qemu'):
        if not (f.startswith('vms-') and f.endswith('.pid')):
            continue
        pid = open('/run/libvirt/qemu/' + f).read().strip()
        whole = stat_ns(pid)
        v = run_ns(pid, lambda comm: comm.startswith('CPU '))
        if whole is None or v is None:
            continue
        vcpu += v
        emu += whole - v
    return {'libvirtd': lv, 'emu': emu, 'vcpu': vcpu, 't': time.monotonic_ns()}


def delta(a, b):
    return {k: b[k] - a[k] for k in ('libvirtd', 'emu', 'vcpu', 't')}


def sampler(build, cfg, out):
    env = dict(os.environ)
    env.pop('LIBVIRT_DEFAULT_URI', None)
    args = [os.path.join(build, 'vmsampler'), '-i', '1s', '-o', out]
    if cfg:
        path = out + '.yaml'
        open(path, 'w').write(cfg)
        args[1:1] = ['-c', path]
    return subprocess.Popen(args, stderr=open(out + '.err', 'w'), env=env)


def frames_stats(path, t0, t1, names):
    st = Stream(path)
    fr = [f for f in st.frames if t0 <= f['t_mono'] <= t1]
    late = sorted(f['late'] for f in fr)
    cpu = [f['self_cpu'] for f in fr]
    res = {'frames': len(fr), 'missed': sum(f['missed'] for f in fr),
           'late_p50_us': late[len(late) // 2] / 1e3 if late else None,
           'late_p99_us': late[int(0.99 * (len(late) - 1))] / 1e3 if late else None,
           'late_max_us': late[-1] / 1e3 if late else None,
           'self_cpu_per_tick_us': statistics.mean(cpu) / 1e3 if cpu else None}
    if names:
        fast_missing = 0
        gaps = []
        for n in names:
            for col in ('cpu_time', 'vcpu0.delay', 'net.vmst%d.rx_bytes' % int(n[4:])):
                fast_missing += sum(1 for f in fr if 'vm.%s.%s' % (n, col) not in f['v'])
            ts = [f['t_mono'] for f in st.frames if 'vm.%s.slow_t' % n in f['v']]
            inwin = [t for t in ts if t0 - 70 * 10**9 <= t <= t1]
            g = [b - a for a, b in zip(inwin, inwin[1:])]
            gaps.append(max(g) if g else None)
        res['fast_values_missing'] = fast_missing
        res['vms'] = len(names)
        res['slow_gap_max_s'] = max(x for x in gaps if x) / 1e9 if all(gaps) else None
        res['slow_refreshes'] = sum(1 for f in fr for n in names if 'vm.%s.slow_t' % n in f['v'])
    return res


def window(kind, build, w, names, tmp, warmup=70):
    out = os.path.join(tmp, 'bench-%s.vms' % kind)
    res = {'kind': kind}
    if kind == 'base':
        p = sampler(build, 'sources:\n  libvirt: {enabled: false}\n', out)
        time.sleep(3)
    elif kind in ('vms60', 'vms10'):
        cfg = 'sources:\n  libvirt: {refresh: 10s}\n' if kind == 'vms10' else None
        p = sampler(build, cfg, out)
        time.sleep(warmup if kind == 'vms60' else min(15, warmup))
    else:
        p = None
    a = snapshot()
    own0 = {}
    if p:
        own0['sampler'] = cpu_of(p.pid)
        for c in children(p.pid):
            own0['agent'] = cpu_of(c)
            res['agent_pid'] = c
    if kind == 'naive':
        r = run(os.path.join(tmp, 'naive'), '-t', str(w), timeout=w + 120)
        res['naive'] = json.loads(r.stdout)
        res['own_ns'] = res['naive']['cpu_ns']
    else:
        time.sleep(w)
    b = snapshot()
    res.update(delta(a, b))
    if p:
        own = cpu_of(p.pid) - own0['sampler']
        ag = 0
        if 'agent_pid' in res:
            ag = cpu_of(res['agent_pid']) - own0['agent']
        res['sampler_ns'] = own
        res['agent_ns'] = ag
        res['own_ns'] = own + ag if kind != 'base' else 0
        p.terminate()
        p.wait()
        res.update(frames_stats(out, a['t'], b['t'], names if kind != 'base' else None))
        res['stderr'] = open(out + '.err').read()[-300:]
        for f in (out, out + '.err', out + '.yaml'):
            if os.path.exists(f):
                os.unlink(f)
    res['loadavg'] = open('/proc/loadavg').read().split()[0]
    log('%s: %s' % (kind, json.dumps({k: v for k, v in res.items() if k != 'stderr'})))
    return res


def refresh_cost(name, tmp, calls=100):
    """CPU of QEMU (the domain's cgroup) and libvirtd per slow refresh."""
    pid = open('/run/libvirt/qemu/%s.pid' % name).read().strip()
    cg = [l.split(':', 2)[2] for l in open('/proc/%s/cgroup' % pid).read().splitlines()
          if l.startswith('0::')][0].rsplit('/emulator', 1)[0]
    f = '/sys/fs/cgroup/unified' + cg + '/cpu.stat'

    def q():
        return int(dict(x.split() for x in open(f))['usage_usec']) * 1000
    lvp = open(PIDFILE).read().strip()
    run('virsh', '-q', '-c', 'qemu:///system', 'suspend', name)
    time.sleep(1)
    a = q()
    time.sleep(calls * 0.052)
    idle = q() - a
    a, b = q(), run_ns(lvp)
    r = run(os.path.join(tmp, 'naive'), '-d', name, '-n', str(calls))
    dq, dl = q() - a - idle, run_ns(lvp) - b
    run('virsh', '-q', '-c', 'qemu:///system', 'resume', name)
    res = {'domain': name, 'calls': calls, 'qemu_ns': dq / calls, 'libvirtd_ns': dl / calls,
           'call': json.loads(r.stdout)}
    log('refresh cost: %s' % json.dumps(res))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--guests', default='60,30,10')
    ap.add_argument('--window', type=int, default=90)
    ap.add_argument('--settle', type=int, default=60)
    ap.add_argument('--warmup', type=int, default=70, help='before the vms60 window')
    ap.add_argument('--rounds', type=int, default=1, help='vms60 windows (each followed by a base one)')
    ap.add_argument('--build', default=os.path.join(SRC, 'build'))
    a = ap.parse_args()
    tmp = '/tmp/vms-bench'
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(os.path.join(SRC, 'bench', 'results'), exist_ok=True)
    flags = run('pkg-config', '--cflags', '--libs', 'libvirt').stdout.split()
    run('gcc', '-O2', '-o', os.path.join(tmp, 'naive'), os.path.join(HERE, 'naive.c'), *flags)
    vmlab('setup.sh')
    for n in [int(x) for x in a.guests.split(',')]:
        log('== %d guests' % n)
        extra = [x for x in run('virsh', '-q', '-c', 'qemu:///system', 'list', '--name').stdout.split()
                 if x.startswith('vms-0') and int(x[4:]) > n]
        if extra:
            vmlab('down.sh', *extra)
        vmlab('up.sh', '3', env={'LOAD': 'light'})
        if n > 3:
            vmlab('up.sh', str(n - 3), '4', env={'LOAD': 'idle', 'PARALLEL': '4'})
        names = ['vms-%03d' % i for i in range(1, n + 1)]
        time.sleep(a.settle)
        cost = refresh_cost(names[-1], tmp)
        kinds = ['base'] + ['vms60', 'base'] * a.rounds + ['vms10', 'naive', 'base']
        rows = [window(k, a.build, a.window, names, tmp, a.warmup) for k in kinds]
        json.dump({'guests': n, 'window_s': a.window, 'refresh_cost': cost, 'windows': rows},
                  open(os.path.join(SRC, 'bench', 'results', 'vm-%d.json' % n), 'w'), indent=1)
        report(n, rows, a.window, cost)


def report(n, rows, w, cost):
    base = [r for r in rows if r['kind'] == 'base']
    b_lv = statistics.mean(r['libvirtd'] for r in base)
    b_emu = statistics.mean(r['emu'] for r in base)
    b_vcpu = statistics.mean(r['vcpu'] for r in base)
    noise = (max(r['emu'] for r in base) - min(r['emu'] for r in base)) / 1e6 / (w or 1)
    per = (cost['qemu_ns'] + cost['libvirtd_ns']) / 1e6
    print('\n%d guests, %d s windows; CPU in ms per second of wall time (1 %% of a core = 10 ms/s)' % (n, w))
    print('one slow refresh (balloon + block of one domain): QEMU %.2f ms + libvirtd %.2f ms of CPU, %.1f ms wall; '
          'the base windows\' QEMU emulator CPU spans %.1f ms/s' %
          (cost['qemu_ns'] / 1e6, cost['libvirtd_ns'] / 1e6, cost['call']['wall_p50_ns'] / 1e6, noise))
    print('| run | own (sampler+agent) | libvirtd +Δ | QEMU emulator +Δ | induced, measured | slow refreshes/s | '
          'induced, own + refreshes x cost | % of a core | per tick own CPU | late p99 / max |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        secs = r['t'] / 1e9
        own = r.get('own_ns', 0) / 1e6 / secs
        dlv = (r['libvirtd'] - b_lv) / 1e6 / secs
        demu = (r['emu'] - b_emu) / 1e6 / secs
        if r['kind'] == 'base':
            print('| base (host only) | – | – | %+.2f | – | – | – | – | %.0f us | %.0f / %.0f us |' %
                  (demu, r['sampler_ns'] / 1e3 / max(r['frames'], 1), r['late_p99_us'], r['late_max_us']))
            continue
        tot = own + dlv + demu
        if r['kind'] == 'naive':
            nv = r['naive']
            model = tot  # all groups, far above the noise: measured
            lat = '%.0f / %.0f ms (call)' % (nv['late_p99_ns'] / 1e6, nv['late_max_ns'] / 1e6)
            tick = '%.1f ms' % (r['own_ns'] / 1e6 / max(nv['calls'], 1))
            rate = nv['calls'] * n / secs
        else:
            rate = r['slow_refreshes'] / secs
            model = own + rate * per
            lat = '%.0f / %.0f us' % (r['late_p99_us'], r['late_max_us'])
            tick = '%.0f us + agent %.0f us' % (r['sampler_ns'] / 1e3 / max(r['frames'], 1),
                                                r.get('agent_ns', 0) / 1e3 / max(r['frames'], 1))
        print('| %s | %.2f | %+.2f | %+.2f | %.2f | %.2f | %.2f | %.2f %% | %s | %s |' %
              (r['kind'], own, dlv, demu, tot, rate, model, model / 10, tick, lat))
    sys.stdout.flush()


if __name__ == '__main__':
    main()
