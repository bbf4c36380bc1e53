#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py RESULTS_DIR - the Markdown tables of bench/run.sh from runs.txt.

Every figure is computed from the raw lines of RESULTS_DIR/runs.txt (one per
run, key=value); see bench/README.md for the methods.
"""
import os
import statistics
import sys

NAMES = {
    'csv': 'vmsampler CSV',
    'bin': 'vmsampler binary (.vms)',
    'floor': 'floor (fair)',
    'floor-a': 'floor (original, -a)',
    'sadc': 'sadc -S ' + 'A_CPU,A_PCSW,A_DISK,A_NET_DEV',
}
ORDER = ['csv', 'bin', 'floor', 'floor-a', 'sadc']
BINARY = {'csv': 'vmsampler', 'bin': 'vmsampler', 'floor': 'floor', 'floor-a': 'floor',
          'sadc': 'sadc'}


def num(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            d = {}
            for tok in line.split():
                if '=' in tok:
                    k, v = tok.split('=', 1)
                    d[k] = num(v)
            if d:
                rows.append(d)
    return rows


def env(path):
    d = {}
    with open(path) as f:
        for line in f:
            if '=' in line:
                k, v = line.rstrip('\n').split('=', 1)
                d[k] = v
    return d


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f1(x, nd=1):
    return '–' if x is None else ('%.*f' % (nd, x))


def main():
    res = sys.argv[1]
    rows = load(os.path.join(res, 'runs.txt'))
    e = env(os.path.join(res, 'env.txt'))
    kn = {k: num(v) for k, v in (t.split('=', 1) for t in e.get('knobs', '').split() if '=' in t)}
    N1, N2 = kn.get('N1', 100), kn.get('N2', 1100)
    S1, S2 = kn.get('S1', 5), kn.get('S2', 65)
    CG1, CG2 = kn.get('CG1', 100), kn.get('CG2', 600)
    SCG1, SCG2 = kn.get('SCG1', 3), kn.get('SCG2', 13)

    def runs(**kw):
        return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]

    def one(**kw):
        x = runs(**kw)
        return x[0] if x else None

    sizes = {r['sampler']: r['bytes'] for r in runs(kind='size')}
    gaps = [r['gap_us'] for r in runs(kind='calib')]
    gap = med(gaps)
    cfgs = [(r['cfg'], r['ifaces']) for r in runs(kind='config')]

    out = []
    p = out.append
    p('Run %s (UTC) to %s, commit %s, kernel %s, %s.' % (
        e.get('date_utc'), e.get('date_end_utc'), e.get('commit'), e.get('kernel'), e.get('cpu')))
    p('Command: `%s` (knobs: %s).' % (e.get('command', '').strip(), e.get('knobs')))
    p('Load average at start: %s; at end: %s.' % (
        ' '.join(e.get('loadavg_start', '').split()[:3]), ' '.join(e.get('loadavg_end', '').split()[:3])))
    p('')

    stats = {}
    targets = []
    for cfg, ifaces in cfgs:
        busy = [r['busy_pct'] for r in runs(kind='run', cfg=cfg)]
        q = one(kind='quiet', cfg=cfg)
        st = {}
        for s in ORDER:
            d = {}
            # CPU at 10 ms, per repetition
            per = []
            for r2 in runs(kind='run', cfg=cfg, phase='cpu10', sampler=s, n=N2):
                r1 = one(kind='run', cfg=cfg, phase='cpu10', sampler=s, n=N1, rep=r2['rep'])
                if r1:
                    per.append((r2['rep'], (r2['cpu_us'] - r1['cpu_us']) / (N2 - N1),
                                (r2['out_bytes'] - r1['out_bytes']) / (N2 - N1)))
            d['cpu10_reps'] = {rep: c for rep, c, _ in per}
            d['cpu10'] = med([c for _, c, _ in per])
            d['bps'] = med([b for _, _, b in per])
            # CPU at 1 s
            a = one(kind='run', cfg=cfg, phase='cpu1s', sampler=s, n=S1)
            b = one(kind='run', cfg=cfg, phase='cpu1s', sampler=s, n=S2)
            d['cpu1s'] = (b['cpu_us'] - a['cpu_us']) / (S2 - S1) if a and b else None
            if s == 'sadc' and a and b:
                d['bps'] = (b['out_bytes'] - a['out_bytes']) / (S2 - S1)
            # instructions
            c1, c2 = (SCG1, SCG2) if s == 'sadc' else (CG1, CG2)
            g1 = one(kind='cg', cfg=cfg, sampler=s, n=c1)
            g2 = one(kind='cg', cfg=cfg, sampler=s, n=c2)
            d['ir'] = (g2['ir'] - g1['ir']) / (c2 - c1) if g1 and g2 else None
            # user/sys split
            sp = one(kind='split', cfg=cfg, sampler=s)
            total = d['cpu1s'] if s == 'sadc' else d['cpu10']
            d['total'] = total
            if sp and gap is not None and total is not None:
                d['user'] = max(0.0, sp['user_us'] - sp['syscalls'] * gap)
                d['sys'] = total - d['user']
                d['syscalls'] = sp['syscalls']
            else:
                d['user'] = d['sys'] = d['syscalls'] = None
            # memory
            long_runs = runs(kind='run', cfg=cfg, phase='cpu10', sampler=s, n=N2) + \
                runs(kind='run', cfg=cfg, phase='cpu1s', sampler=s, n=S2) + \
                runs(kind='run', cfg=cfg, phase='trace', sampler=s)
            mr = [r['maxrss_kb'] for r in long_runs]
            d['maxrss'] = med(mr)
            d['maxrss_rng'] = (min(mr), max(mr)) if mr else None
            rr = sorted((r['rss_kb'], r['anon_kb'], r['file_kb']) for r in
                        runs(kind='run', cfg=cfg, sampler=s) if 'rss_kb' in r)
            d['rss'] = rr[(len(rr) - 1) // 2] if rr else None  # the median run
            d['rss_rng'] = (rr[0][0], rr[-1][0]) if rr else None
            d['size'] = sizes.get(BINARY[s])
            st[s] = d
        stats[cfg] = st

        p('### %s: %d interfaces' % ('this machine\'s own namespace' if cfg == 'host' else
                                     'network namespace with lo + %d veth ends' % (ifaces - 1), ifaces))
        p('')
        p('Machine before the runs: %s %% busy (waited %s s); during the runs: %s–%s %% busy '
          '(median %s %%) of %s CPUs, our sampler included.' % (
              q['busy_pct'] if q else '?', q['waited_s'] if q else '?',
              f1(min(busy)) if busy else '?', f1(max(busy)) if busy else '?',
              f1(med(busy)), e.get('cpu', '').split(' x ')[-1]))
        p('')
        p('| sampler | CPU µs/sample @10 ms | user µs | sys µs | CPU µs/sample @1 s '
          '| user instr/sample | peak RSS KiB (ru_maxrss) | exact peak Rss KiB (anon + file; range) '
          '| stripped binary KiB | bytes/sample |')
        p('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for s in ORDER:
            d = st[s]
            rss = d['rss']
            p('| %s | %s | %s | %s | %s | %s | %s (%s–%s) | %s (%s + %s; %s–%s) | %s | %s |' % (
                NAMES[s],
                '(1 s minimum)' if s == 'sadc' else f1(d['cpu10']),
                f1(d['user']), f1(d['sys']),
                f1(d['cpu1s']),
                f1(d['ir'], 0) if d['ir'] is not None else '–',
                f1(d['maxrss'], 0), *(d['maxrss_rng'] or ('?', '?')),
                *(rss if rss else ('?', '?', '?')), *(d['rss_rng'] or ('?', '?')),
                f1(d['size'] / 1024 if d['size'] else None),
                f1(d['bps'], 0)))
        p('')

        def ratio_reps(a, b):
            ra, rb = st[a]['cpu10_reps'], st[b]['cpu10_reps']
            xs = [ra[k] / rb[k] for k in ra if k in rb and rb[k]]
            return med(xs), xs

        def r(x, y):
            return x / y if x is not None and y else None

        p('Ratios (same run):')
        p('')
        p('| ratio | @10 ms (median of per-repetition ratios) | @1 s |')
        p('|---|---:|---:|')
        for a in ('csv', 'bin'):
            for b in ('floor', 'floor-a'):
                m, xs = ratio_reps(a, b)
                p('| %s / %s | %s (%s) | %s |' % (NAMES[a], NAMES[b], f1(m, 2),
                                              ', '.join('%.2f' % x for x in xs),
                                              f1(r(st[a]['cpu1s'], st[b]['cpu1s']), 2)))
        for a in ('csv', 'bin'):
            p('| sadc (1 s) / %s | %s (sadc @1 s over %s @10 ms) | %s |' % (
                NAMES[a], f1(r(st['sadc']['cpu1s'], st[a]['cpu10']), 2), NAMES[a],
                f1(r(st['sadc']['cpu1s'], st[a]['cpu1s']), 2)))
        p('')

        sp = {s: one(kind='split', cfg=cfg, sampler=s) for s in ORDER}
        if any(sp.values()):
            p('Traced system calls per sample that did not block — call × count: mean µs in the '
              'kernel (tracepoints included) / mean bytes returned:')
            p('')
            for s in ORDER:
                if sp[s] and sp[s].get('kernel', '-') != '-':
                    items = []
                    for it in str(sp[s]['kernel']).split(','):
                        nm, cnt, us_, ret = it.rsplit(':', 3)
                        items.append('%s×%s: %s/%s' % (nm, cnt.rstrip('0').rstrip('.'), us_, ret))
                    p('- %s (%s calls/sample): %s' % (NAMES[s], f1(sp[s]['syscalls']), '; '.join(items)))
            p('')

        for a in ('csv', 'bin'):
            m, _ = ratio_reps(a, 'floor')
            targets.append(('CPU ≤ 1.3× floor @10 ms', cfg, ifaces, NAMES[a], m, m is not None and m <= 1.3,
                            '%.2f×' % m if m else '–'))
            m1 = r(st[a]['cpu1s'], st['floor']['cpu1s'])
            targets.append(('CPU ≤ 1.3× floor @1 s', cfg, ifaces, NAMES[a], m1,
                            m1 is not None and m1 <= 1.3, '%.2f×' % m1 if m1 else '–'))
            x = r(st['sadc']['cpu1s'], st[a]['cpu10'])
            targets.append(('sadc ≥ 3× vmsampler (sadc @1 s / vms @10 ms)', cfg, ifaces, NAMES[a], x,
                            x is not None and x >= 3, '%.2f×' % x if x else '–'))
            x = r(st['sadc']['cpu1s'], st[a]['cpu1s'])
            targets.append(('sadc ≥ 3× vmsampler (both @1 s)', cfg, ifaces, NAMES[a], x,
                            x is not None and x >= 3, '%.2f×' % x if x else '–'))
            if ifaces == 5:
                x = st[a]['ir']
                targets.append(('≤ 40 k user instructions/sample at 5 interfaces', cfg, ifaces, NAMES[a], x,
                                x is not None and x <= 40000, '%.0f' % x if x else '–'))
            x = st[a]['maxrss']
            targets.append(('peak RSS ≤ 2 MiB (ru_maxrss, median)', cfg, ifaces, NAMES[a], x,
                            x is not None and x <= 2048, '%.0f KiB (%d–%d)' % (x, *st[a]['maxrss_rng']) if x else '–'))
            x = st[a]['rss'][0] if st[a]['rss'] else None
            targets.append(('peak RSS ≤ 2 MiB (exact, smaps_rollup, median)', cfg, ifaces, NAMES[a], x,
                            x is not None and x <= 2048, '%d KiB (%d–%d; anon %d)' % (
                                x, *st[a]['rss_rng'], st[a]['rss'][1]) if x else '–'))

    size = sizes.get('vmsampler')
    targets.append(('stripped host-only binary ≤ 200 KiB', '-', '-', 'vmsampler', size,
                    size is not None and size <= 200 * 1024, '%.1f KiB' % (size / 1024) if size else '–'))

    p('### Targets of issue 2')
    p('')
    p('| target | interfaces | sampler | measured | met? |')
    p('|---|---:|---|---:|---|')
    for name, cfg, ifaces, s, _, ok, txt in targets:
        p('| %s | %s | %s | %s | %s |' % (name, ifaces, s, txt, 'yes' if ok else '**NO**'))
    p('')
    p('Calibration of the traced user time: %s µs per system call (median of %s), subtracted.'
      % (f1(gap, 3), ', '.join('%.3f' % g for g in gaps)))
    print('\n'.join(out))


if __name__ == '__main__':
    main()
