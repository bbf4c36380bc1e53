# SPDX-License-Identifier: MIT
"""compare(): `vmsampler report --compare` in Python, without the C tools.

    from vmsampler.compare import compare
    df = compare('baseline.vms', 'consolidated.vms')
    df = compare('run.vms', 'run.vms', window_a=(5, 'mark:3 busy guests start'),
                 window_b=('mark:3 busy guests start', None), marks={...})
    df[df.real].sort_values('rank', ascending=False)

One row per quantity and entity, with the columns of report --format csv
(quantity, entity, a_mean, b_mean, delta, ci_low, ci_high, real) and
a_n, a_p50, a_p95, a_max (and b_), rel, rank and uuid: the same numbers
as the C command on the same input (the same rates, src/lib/rates.c, here
rates.py; the same circular block bootstrap, src/tools/stats.c, with the
same splitmix64 draws: the same seed gives the same interval), every
quantity of the C command: host CPU, queue, tasks, disks, interfaces,
memory, paging, swapping and pressure, and per VM its CPU, run delay,
throttling and cap, I/O, network and perf IPC (vm.ipc: each interval's
instructions over its cycles, where the VM's perf counters have both).
A window is (FROM, TO): each None
(the start, the end), seconds from the first frame, or 'mark:TEXT' looked
up in marks (text -> the mark's t_mono_ns, e.g. from dump --events).
"""

import math

from . import catalog as _catalog
from . import rates as _rates

GOLDEN = 0x9e3779b97f4a7c15
MASK = (1 << 64) - 1
MIN_N = 5
TOL_NS = 1000000

# src/tools/compare.c's quantities, by the rate column's catalogue
# identity (catalog.rate_id: the one place a rate name becomes one):
# (group, entity or None: any, the entity is the quantity's) and the
# rate's out -> (quantity, role): role 0 the value, 1 and 2 a ratio's
# numerator and denominator.  A fixed entity is the host's.
_RULES = [(('cpu', None, f), 'cpu.' + f) for f in ('%usr', '%nice', '%sys', '%iowait', '%steal', '%irq',
                                                  '%soft', '%guest', '%idle')] + [
    (('load', '', 'runnable'), 'queue.runq-sz'), (('load', '', 'tasks'), 'queue.plist-sz'),
    (('load', '', '1m'), 'queue.ldavg-1'), (('stat', '', 'procs_blocked'), 'queue.blocked'),
    (('stat', '', 'proc/s'), 'task.proc/s'), (('stat', '', 'cswch/s'), 'task.cswch/s'),
    (('stat', '', 'intr/s'), 'task.intr/s')] + [
    (('disk', None, f), 'disk.' + f) for f in ('tps', 'rkB/s', 'wkB/s', 'aqu-sz', 'await', '%util')] + [
    (('net', None, f), 'net.' + f) for f in ('rxpck/s', 'txpck/s', 'rxkB/s', 'txkB/s')] + [
    (('mem', '', 'kbmemused'), 'memory.kbmemused'), (('mem', '', '%memused'), 'memory.%memused'),
    (('mem', '', 'kbavail'), 'memory.kbavail'), (('mem', '', '%commit'), 'memory.%commit'),
    (('vmstat', '', 'pgfault/s'), 'paging.fault/s'), (('vmstat', '', 'pgmajfault/s'), 'paging.majflt/s'),
    (('vmstat', '', 'pgscank/s'), 'paging.pgscank/s'), (('vmstat', '', 'pswpin/s'), 'swapping.pswpin/s'),
    (('vmstat', '', 'pswpout/s'), 'swapping.pswpout/s'),
    (('psi', 'cpu', '%some'), 'pressure.%scpu'), (('psi', 'io', '%some'), 'pressure.%sio'),
    (('psi', 'io', '%full'), 'pressure.%fio'), (('psi', 'memory', '%some'), 'pressure.%smem'),
    (('psi', 'memory', '%full'), 'pressure.%fmem')] + [
    (('vm', None, f), 'vm.' + f) for f in ('%cpu', '%steal', 'dlyms/s', '%thrtl', '%cap')] + [
    (('vmio', None, 'rkB/s'), 'vm.rkB/s'), (('vmio', None, 'wkB/s'), 'vm.wkB/s'),
    (('vm', None, 'rxkB/s'), 'vm.rxkB/s'), (('vm', None, 'txkB/s'), 'vm.txkB/s'),
    (('vmperf', None, 'instructions/s'), 'vm.ipc'), (('vmperf', None, 'cycles/s'), 'vm.ipc')]
RULES = dict(_RULES)
ROLES = {('vmperf', None, 'instructions/s'): 1, ('vmperf', None, 'cycles/s'): 2}
QORDER = {}
for _i, (_k, _q) in enumerate(_RULES):
    QORDER.setdefault(_q, _i)


def quantity_of(name):
    """(quantity, entity) of a rate column, or None (compare.c quantity_of)."""
    r = _rule_of(name)
    return r and r[:2]


def _rule_of(name):
    """(quantity, entity, role) of a rate column, or None: role 0 the
    value, 1 and 2 a ratio's numerator and denominator."""
    i = _catalog.rate_id(name)
    if not i.group or i.sub:
        return None
    k = (i.group, i.entity, i.field)  # a host quantity (psi's entity is its resource)
    if k in RULES:
        return RULES[k], 'host', 0
    k = (i.group, None, i.field)
    if k in RULES and i.entity:
        return RULES[k], i.entity, ROLES.get(k, 0)
    return None


# ---- statistics: src/tools/stats.c, draw for draw --------------------------

def _sum(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def rank(sorted_vals, q):
    k = max(1, math.ceil(q * len(sorted_vals) - 1e-9))
    return sorted_vals[min(k, len(sorted_vals)) - 1]


def summary(x):
    x = [v for v in x if v == v]
    if not x:
        return dict(n=0, mean=math.nan, p50=math.nan, p95=math.nan, max=math.nan)
    s = sorted(x)
    return dict(n=len(x), mean=_sum(x) / len(x), p50=rank(s, 0.5), p95=rank(s, 0.95), max=s[-1])


def _acov(x, n, m, k):
    s = 0.0
    for t in range(k, n):
        s += (x[t] - m) * (x[t - k] - m)
    return s / n


def block_len(x):
    """Politis and White (2004) / Patton, Politis and White (2009), as stats.c."""
    n = len(x)
    if n < 8:
        return 1
    m = _sum(x) / n
    r0 = _acov(x, n, m, 0)
    if not r0 > 0:
        return 1
    kn = 5
    mmax = min(int(math.ceil(math.sqrt(n))) + kn, n - 1)
    bmax = math.ceil(min(3 * math.sqrt(n), n / 3))
    thr = 2 * math.sqrt(math.log10(n) / n)
    rho = [0.0] + [_acov(x, n, m, k) / r0 for k in range(1, mmax + 1)]
    last_sig = max([k for k in range(1, mmax + 1) if abs(rho[k]) >= thr], default=0)
    mhat = 0
    for j in range(1, mmax - kn + 2):
        if all(abs(rho[j + k]) < thr for k in range(kn)):
            mhat = j
            break
    if not mhat:
        mhat = last_sig
    M = min(2 * mhat, mmax)
    if M == 0:
        return 1
    G, g0 = 0.0, r0
    for k in range(1, M + 1):
        t = k / M
        lam = 1.0 if t <= 0.5 else 2.0 * (1.0 - t)
        rk = _acov(x, n, m, k)
        G += 2 * lam * k * rk
        g0 += 2 * lam * rk
    dcb = 4.0 / 3.0 * g0 * g0
    if not dcb > 0 or G == 0:
        return 1
    b = math.floor(math.cbrt(2 * G * G / dcb) * math.cbrt(n) + 0.5)
    if not b >= 1:
        return 1
    return int(min(b, bmax))


def _replicate_means(np, x, L, states):
    """The circular block bootstrap means of x for each stream state (one
    per replicate), as stats.c replicate()."""
    n = len(x)
    nb = -(-n // L)
    st = states.copy()
    starts = np.empty((len(st), nb), dtype=np.int64)
    with np.errstate(over='ignore'):
        for j in range(nb):
            st += np.uint64(GOLDEN)
            z = st.copy()
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
            z = z ^ (z >> np.uint64(31))
            u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
            starts[:, j] = (u * float(n)).astype(np.int64)
    idx = (starts[:, :, None] + np.arange(L)[None, None, :]) % n
    idx = idx.reshape(len(st), nb * L)[:, :n]
    vals = np.asarray(x, dtype=np.float64)[idx]
    return np.cumsum(vals, axis=1)[:, -1] / float(n)


def norm_q(p):
    """stats.c norm_q: the standard normal quantile of p in (0.5, 1)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def t_quantile(p, nu):
    """stats.c vms_stats_t_quantile: Student's t quantile."""
    if nu < 2:
        return math.tan(math.pi * (p - 0.5))
    if nu < 3:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = norm_q(p)
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    return z + g1 / nu + g2 / (nu * nu) + g3 / (nu * nu * nu) + g4 / (nu * nu * nu * nu)


def use_len(x):
    """stats.c use_len: the data's block, at least ceil(n^(1/3)) unless x
    is constant."""
    n = len(x)
    L = block_len(x)
    f = int(math.ceil(math.cbrt(n) - 1e-9))
    return L if all(v == x[0] for v in x) or L >= f else f


def _var_of(v):
    m = 0.0
    for x in v:
        m += x
    m /= len(v)
    s = 0.0
    for x in v:
        s += (x - m) * (x - m)
    return s / len(v)


def boot_diff(a, b, B=1000, seed=1, level=0.95, block_a=0, block_b=0):
    """stats.c vms_stats_boot_diff: (delta, lo, hi, La, Lb, real)."""
    import numpy as np
    na, nb = len(a), len(b)
    if not na or not nb:
        return math.nan, math.nan, math.nan, 0, 0, False
    delta = _sum(b) / nb - _sum(a) / na
    if na < MIN_N or nb < MIN_N:
        return delta, math.nan, math.nan, 0, 0, False
    La = min(block_a or use_len(a), na)
    Lb = min(block_b or use_len(b), nb)
    r = np.arange(B, dtype=np.uint64)
    with np.errstate(over='ignore'):
        sa = np.uint64(seed & MASK) ^ (np.uint64(GOLDEN) * (np.uint64(2) * r + np.uint64(1)))
        sb = np.uint64(seed & MASK) ^ (np.uint64(GOLDEN) * (np.uint64(2) * r + np.uint64(2)))
    ma, mb = _replicate_means(np, a, La, sa), _replicate_means(np, b, Lb, sb)
    d = np.sort(mb - ma)
    # the small-sample widening (stats.c)
    va, vb, c = _var_of(ma.tolist()), _var_of(mb.tolist()), 1.0
    if va + vb > 0:
        fa, fb = float(max(1, na // La - 1)), float(max(1, nb // Lb - 1))
        nu = (va + vb) * (va + vb) / (va * va / fa + vb * vb / fb)
        p = 1 - (1 - level) / 2
        c = t_quantile(p, nu) / norm_q(p)
    k = int(math.floor(B * (1 - level) / 2 + 1e-9))
    lo, hi = delta + c * (float(d[k]) - delta), delta + c * (float(d[B - 1 - k]) - delta)
    return delta, lo, hi, La, Lb, lo > 0 or hi < 0


# ---- the comparison ---------------------------------------------------------

def _edge(e, t0, marks, start):
    if e is None:
        return None
    if isinstance(e, str) and e.startswith('mark:'):
        if not marks or e[5:] not in marks:
            raise ValueError('no mark "%s"' % e[5:])
        return marks[e[5:]], 0
    return t0 + int(float(e) * 1e9), TOL_NS


def _series(path, window, marks):
    """(quantity, entity) -> [values], uuid per entity, intervals in window."""
    ivs = list(_rates.intervals(path))
    ser, uuids, nin = {}, {}, 0
    if not ivs:
        return ser, uuids, 0
    t0 = ivs[0].prev_mono_ns
    lo = _edge(window[0], t0, marks, True) if window else None
    hi = _edge(window[1], t0, marks, False) if window else None
    for iv in ivs:
        if iv.dt <= 0:
            continue
        if lo is not None and iv.prev_mono_ns < lo[0] - lo[1]:
            continue
        if hi is not None and iv.t_mono_ns > hi[0] + hi[1]:
            continue
        nin += 1
        parts = {}
        for name, v in iv.values.items():
            r = _rule_of(name)
            if r is None or v != v:
                continue
            qe, role = r[:2], r[2]
            if qe[0].startswith('vm.') and qe[1] in iv.keys:
                uuids[qe] = iv.keys[qe[1]]
            if role:
                parts.setdefault(qe, [None, None])[role - 1] = v
                continue
            ser.setdefault(qe, []).append(v)
        # a ratio where both parts are in this interval (compare.c read_side)
        for qe, (num, den) in parts.items():
            if num is not None and den is not None and den > 0:
                ser.setdefault(qe, []).append(num / den)
    return ser, uuids, nin


def compare(a, b, window_a=None, window_b=None, marks_a=None, marks_b=None, seed=1, B=1000, level=0.95):
    """The table of report --compare (A the baseline) as a DataFrame."""
    import pandas as pd
    sa, ua, _ = _series(a, window_a, marks_a)
    sb, ub, _ = _series(b, window_b, marks_b)
    # VMs by UUID, then by name (compare.c match_all)
    peer = {}
    taken = set()
    for pass_ in (0, 1):
        for qe in sa:
            if qe in peer or (pass_ == 0 and not ua.get(qe)):
                continue
            for qb in sb:
                if qb in taken or qb[0] != qe[0]:
                    continue
                if (ua.get(qe) and ua.get(qe) == ub.get(qb)) if pass_ == 0 else qb[1] == qe[1]:
                    peer[qe] = qb
                    taken.add(qb)
                    break
    rows = []
    order = 0
    keys = [(qe, peer.get(qe)) for qe in sa] + [(None, qb) for qb in sb if qb not in taken]
    for qa, qb in keys:
        q, ent = qa or qb
        xa, xb = (sa[qa] if qa else []), (sb[qb] if qb else [])
        s1, s2 = summary(xa), summary(xb)
        if qa and qb:
            delta, lo, hi, La, Lb, real = boot_diff(xa, xb, B=B, seed=seed, level=level)
        else:
            delta, lo, hi, La, Lb, real = math.nan, math.nan, math.nan, 0, 0, False
        ma, mb = abs(s1['mean']), abs(s2['mean'])
        rel = delta / ma if qa and qb and ma > 0 else math.nan
        mx = max(ma, mb) if qa and qb else math.nan
        rows.append(dict(quantity=q, entity=ent, a_mean=s1['mean'], b_mean=s2['mean'], delta=delta, ci_low=lo,
                         ci_high=hi, real=bool(real), a_n=s1['n'], a_p50=s1['p50'], a_p95=s1['p95'],
                         a_max=s1['max'], b_n=s2['n'], b_p50=s2['p50'], b_p95=s2['p95'], b_max=s2['max'],
                         rel=rel, rank=(abs(delta) / mx if mx > 0 else 0.0) if qa and qb else math.nan,
                         block_a=La, block_b=Lb, uuid=(ua.get(qa) if qa else ub.get(qb)) or '',
                         _order=(QORDER[q], order)))
        order += 1
    df = pd.DataFrame(rows)
    if len(df):
        df = df.sort_values('_order', kind='stable').drop(columns='_order').reset_index(drop=True)
    return df
