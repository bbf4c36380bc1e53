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
    'sadc': 'sadc -S A_CPU,A_PCSW,A_DISK,A_NET_DEV',
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


def div(x, y):
    return x / y if x is not None and y else None


def lst(xs, nd=2):
    return ', '.join('%.*f' % (nd, x) for x in xs)


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

    def per_sample(phase, s, n1, n2, **kw):
        """{rep: (cpu us per sample, bytes per sample)} from long - short runs"""
        out = {}
        for r2 in runs(kind='run', phase=phase, sampler=s, n=n2, **kw):
            r1 = one(kind='run', phase=phase, sampler=s, n=n1, rep=r2['rep'], **kw)
            if r1:
                out[r2['rep']] = ((r2['cpu_us'] - r1['cpu_us']) / (n2 - n1),
                                  (r2['out_bytes'] - r1['out_bytes']) / (n2 - n1))
        return out

    sizes = {r['sampler']: r['bytes'] for r in runs(kind='size')}
    gaps = [r['gap_us'] for r in runs(kind='calib')]
    gap = med(gaps)
    cfgs = [(r['cfg'], r['ifaces']) for r in runs(kind='config')]

    out = []
    p = out.append
    p('Run %s to %s (UTC), commit %s, kernel %s, %s.' % (
        e.get('date_utc'), e.get('date_end_utc'), e.get('commit'), e.get('kernel'), e.get('cpu')))
    p('Command: `%s` (knobs: %s).' % (e.get('command', '').strip(), e.get('knobs')))
    p('Load average at start: %s; at end: %s.' % (
        ' '.join(e.get('loadavg_start', '').split()[:3]), ' '.join(e.get('loadavg_end', '').split()[:3])))
    p('')

    targets = []
    for cfg, ifaces in cfgs:
        busy = [r['busy_pct'] for r in runs(kind='run', cfg=cfg)]
        q = one(kind='quiet', cfg=cfg)
        st = {}
        for s in ORDER:
            d = {}
            # CPU at 10 ms, alone
            al = per_sample('cpu10', s, N1, N2, cfg=cfg)
            d['alone_reps'] = {k: v[0] for k, v in al.items()}
            d['alone'] = med(d['alone_reps'].values())
            d['bps'] = med([v[1] for v in al.values()])
            # CPU at 10 ms, side by side with the floor
            if s == 'floor':
                xs = [v[0] for x in ('csv', 'bin', 'floor-a')
                      for v in per_sample('pair10', 'floor', N1, N2, cfg=cfg, pair=x).values()]
                d['side'] = med(xs)
            elif s != 'sadc':
                mine = per_sample('pair10', s, N1, N2, cfg=cfg, pair=s)
                fl = per_sample('pair10', 'floor', N1, N2, cfg=cfg, pair=s)
                d['side'] = med([v[0] for v in mine.values()])
                d['side_ratios'] = [mine[k][0] / fl[k][0] for k in sorted(mine) if k in fl and fl[k][0]]
                d['side_ratio'] = med(d['side_ratios'])
            else:
                d['side'] = None
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
            # user/sys split of the "alone" figure (sadc: of the 1 s one)
            sp = one(kind='split', cfg=cfg, sampler=s)
            total = d['cpu1s'] if s == 'sadc' else d['alone']
            if sp and gap is not None and total is not None:
                d['user'] = max(0.0, sp['user_us'] - sp['syscalls'] * gap)
                d['sys'] = total - d['user']
            else:
                d['user'] = d['sys'] = None
            d['split'] = sp
            # memory
            long_runs = [r for r in runs(kind='run', cfg=cfg, sampler=s)
                         if r['n'] in (N2, S2) or r['phase'] == 'trace']
            mr = [r['maxrss_kb'] for r in long_runs]
            d['maxrss'] = med(mr)
            d['maxrss_rng'] = (min(mr), max(mr)) if mr else ('?', '?')
            rr = sorted((r['rss_kb'], r['anon_kb'], r['file_kb']) for r in
                        runs(kind='run', cfg=cfg, sampler=s) if 'rss_kb' in r)
            d['rss'] = rr[(len(rr) - 1) // 2] if rr else None  # the median run
            d['rss_rng'] = (rr[0][0], rr[-1][0]) if rr else ('?', '?')
            d['size'] = sizes.get(BINARY[s])
            st[s] = d

        p('### %s: %d interfaces' % ("this machine's own network namespace" if cfg == 'host' else
                                     'network namespace with lo + %d veth ends' % (ifaces - 1), ifaces))
        p('')
        cov = one(kind='coverage', cfg=cfg)
        covered = cov['ifaces'] if cov else None
        partial = covered is not None and covered < ifaces
        if partial:
            p('**vmsampler\'s output has %d of the %d interfaces**: it reads only the first '
              'page-sized chunk of /proc/net/dev (see "Findings" in bench/README.md), so its '
              'figures here are for %d interfaces, while the floor and sadc read all %d. '
              'Its ratios to them are not comparable.' % (covered, ifaces, covered, ifaces))
            p('')
        p('Machine before the runs: %s %% busy (waited %s s); during the runs: %s–%s %% busy '
          '(median %s %%) of all %s CPUs, the samplers included.' % (
              q['busy_pct'] if q else '?', q['waited_s'] if q else '?',
              f1(min(busy)) if busy else '?', f1(max(busy)) if busy else '?',
              f1(med(busy)), e.get('cpu', '').split(' x ')[-1]))
        p('')
        p('| sampler | CPU µs/sample @10 ms, alone | user µs | sys µs '
          '| CPU µs/sample @10 ms, beside the floor | CPU µs/sample @1 s, all side by side '
          '| user instr/sample | peak RSS KiB (ru_maxrss) | exact peak Rss KiB: anon + file (range) '
          '| stripped binary KiB | bytes/sample |')
        p('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for s in ORDER:
            d = st[s]
            rss = d['rss'] or ('?', '?', '?')
            p('| %s | %s | %s | %s | %s | %s | %s | %s (%s–%s) | %s: %s + %s (%s–%s) | %s | %s |' % (
                NAMES[s],
                '(1 s minimum)' if s == 'sadc' else f1(d['alone']),
                f1(d['user']), f1(d['sys']),
                '–' if s == 'sadc' else f1(d['side']),
                f1(d['cpu1s']),
                f1(d['ir'], 0),
                f1(d['maxrss'], 0), *d['maxrss_rng'],
                *rss, *d['rss_rng'],
                f1(d['size'] / 1024 if d['size'] else None),
                f1(d['bps'], 0)))
        p('')
        p('sadc\'s user/sys split is of its 1 s figure; the others\' of their "alone" figure.')
        p('')

        p('Ratios, all from this run:')
        p('')
        p('| ratio | @10 ms beside the floor (per repetition) | @10 ms alone (per repetition) | @1 s |')
        p('|---|---:|---:|---:|')

        def alone_ratio(a, b):
            ra, rb = st[a]['alone_reps'], st[b]['alone_reps']
            xs = [ra[k] / rb[k] for k in sorted(ra) if k in rb and rb[k]]
            return med(xs), xs

        for a in ('csv', 'bin', 'floor-a'):
            m, xs = alone_ratio(a, 'floor')
            p('| %s / %s | **%s** (%s) | %s (%s) | %s |' % (
                NAMES[a], NAMES['floor'], f1(st[a]['side_ratio'], 2), lst(st[a]['side_ratios']),
                f1(m, 2), lst(xs), f1(div(st[a]['cpu1s'], st['floor']['cpu1s']), 2)))
        for a in ('csv', 'bin'):
            m, xs = alone_ratio(a, 'floor-a')
            p('| %s / %s | – | %s (%s) | %s |' % (
                NAMES[a], NAMES['floor-a'], f1(m, 2), lst(xs),
                f1(div(st[a]['cpu1s'], st['floor-a']['cpu1s']), 2)))
        for a in ('csv', 'bin'):
            p('| sadc / %s | – | %s (sadc @1 s / %s @10 ms alone) | **%s** |' % (
                NAMES[a], f1(div(st['sadc']['cpu1s'], st[a]['alone']), 2), NAMES[a],
                f1(div(st['sadc']['cpu1s'], st[a]['cpu1s']), 2)))
        p('')

        if any(st[s]['split'] for s in ORDER):
            p('Traced system calls per sample that did not block — call ×count: mean µs in the '
              'kernel (tracepoints included) / mean bytes returned:')
            p('')
            for s in ORDER:
                sp = st[s]['split']
                if sp and sp.get('kernel', '-') != '-':
                    items = []
                    for it in str(sp['kernel']).split(','):
                        nm, cnt, us_, ret = it.rsplit(':', 3)
                        items.append('%s ×%s: %s/%s' % (nm, cnt.rstrip('0').rstrip('.'), us_, ret))
                    p('- %s (%s calls/sample): %s' % (NAMES[s], f1(sp['syscalls']), '; '.join(items)))
            p('')

        def T(name, s, value, ok, txt):
            if partial and s in ('csv', 'bin') and 'instructions' not in name:
                txt += ' — vmsampler read %d of %d interfaces' % (covered, ifaces)
                if 'RSS' in name and ok is False:
                    txt += ' (a lower bound: reading all of them needs more memory)'
                else:
                    ok = None  # not comparable
            targets.append((name, ifaces, NAMES[s], ok, txt))

        for a in ('csv', 'bin'):
            d = st[a]
            x = d['side_ratio']
            T('CPU ≤ 1.3× floor @10 ms (beside it)', a, x, x is not None and x <= 1.3,
              '%.2f× (%s)' % (x, lst(d['side_ratios'])) if x else '–')
            x, xs = alone_ratio(a, 'floor')
            T('CPU ≤ 1.3× floor @10 ms (alone)', a, x, x is not None and x <= 1.3,
              '%.2f× (%s)' % (x, lst(xs)) if x else '–')
            x = div(d['cpu1s'], st['floor']['cpu1s'])
            T('CPU ≤ 1.3× floor @1 s', a, x, x is not None and x <= 1.3, '%.2f×' % x if x else '–')
            x = div(st['sadc']['cpu1s'], d['cpu1s'])
            T('sadc ≥ 3× vmsampler, both @1 s', a, x, x is not None and x >= 3, '%.2f×' % x if x else '–')
            x = div(st['sadc']['cpu1s'], d['alone'])
            T('sadc ≥ 3× vmsampler, sadc @1 s / vmsampler @10 ms', a, x, x is not None and x >= 3,
              '%.2f×' % x if x else '–')
            if ifaces == 5:
                x = d['ir']
                T('≤ 40 k user instructions/sample at 5 interfaces', a, x, x is not None and x <= 40000,
                  '%.0f' % x if x else '–')
            x = d['maxrss']
            T('peak RSS ≤ 2 MiB (ru_maxrss, median)', a, x, x is not None and x <= 2048,
              '%.0f KiB (%s–%s)' % (x, *d['maxrss_rng']) if x else '–')
            x = d['rss'][0] if d['rss'] else None
            T('peak RSS ≤ 2 MiB (exact Rss, median)', a, x, x is not None and x <= 2048,
              '%d KiB (%s–%s; anon %d)' % (x, *d['rss_rng'], d['rss'][1]) if x else '–')

    size = sizes.get('vmsampler')
    targets.append(('stripped host-only binary ≤ 200 KiB', '–', 'vmsampler',
                    size is not None and size <= 200 * 1024, '%.1f KiB' % (size / 1024) if size else '–'))

    p('### Targets of issue 2')
    p('')
    p('| target | interfaces | sampler | measured | met? |')
    p('|---|---:|---|---:|---|')
    for name, ifaces, s, ok, txt in targets:
        p('| %s | %s | %s | %s | %s |' % (name, ifaces, s, txt,
                                          'n/c' if ok is None else 'yes' if ok else '**NO**'))
    p('')
    p('n/c: not comparable (vmsampler did not read every interface).')
    p('')
    p('Calibration of the traced user time: %s µs per system call (median of %s), subtracted.'
      % (f1(gap, 3), lst(gaps, 3)))
    print('\n'.join(out))


if __name__ == '__main__':
    main()
