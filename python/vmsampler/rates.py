# SPDX-License-Identifier: MIT
"""Per-interval rates from the raw counters, in Python (no C tools).

    from vmsampler import rates
    for iv in rates.intervals('run.vms'):
        print(iv.t_mono_ns, iv.dt, iv.values.get('cpu.all.%usr'))

Every column of `vmsampler dump --rates`, computed as src/lib/rates.c
computes it (the formulas and their sources are at the top of that file
and in vmsampler(1)), from the frames the package's own decoder reads:

  cpu.N.%usr ... %idle     sysstat's CPU percentages (user less guest, ...)
  disk.D.tps r/s rkB/s rrqm/s %rrqm r_await rareq-sz (w, d) f/s f_await
         aqu-sz %util in_flight await areq-sz
  net.I.rxpck/s ... txfifo/s (sar -n DEV,EDEV), the same for a VM's taps
  stat.cswch/s proc/s intr/s, psi.R.%some %full, vmstat.K/s
  vm.V.%cpu %usr %sys, vm.V.vcpuK.%run %steal slices/s, vm.V.io.rkB/s ...
  a VM's totals: vm.V.%steal dlyms/s rxkB/s txkB/s, %cap and %thrtl (its
         cgroup's CPU cap and throttling), vm.V.cg.psi.R.%some %full
  host memory and paging (sar -r -S -B): mem.kbmemfree ... %swpcad,
         vmstat.pgscank/s pgscand/s pgsteal/s %vmeff
  perf counters (host and per VM): perf.S.E/s, vm.V.perf.E/s
  any other counter C: C/s; any other gauge: its value

A column is what its catalogue identity says (catalog.py: group, entity,
sub-entity, field), never what its name looks like.  The rules are the C
tools': each column's last value before the frame and the time since it
was taken (a value missing in a frame is not a zero: the next interval
of that column spans from its last value); a counter that went down
wrapped if the column has wrap_bits below 64 (or holds a 32-bit value),
else it was reset and the interval has no value for it; an output whose
inputs were taken at different times has none; a column continues
across a new schema only with the same name, kind, scale and key.
"""

from . import read_frames
from .catalog import BY_NAME, GROUPS, colname

COUNTER, GAUGE = 1, 2
UNIT_US = 4
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1

CPU_FIELDS = BY_NAME['cpu'][6]
DISK_FIELDS = BY_NAME['disk'][6]
NET_FIELDS = BY_NAME['net'][6]
# (output, field it needs): rates.c cpu_pct_names and needs[]
CPU_PCT = (('%usr', 'user'), ('%nice', 'nice'), ('%sys', 'system'), ('%iowait', 'iowait'), ('%irq', 'irq'),
           ('%soft', 'softirq'), ('%steal', 'steal'), ('%guest', 'guest'), ('%gnice', 'guest_nice'),
           ('%idle', 'idle'))
# sar -n DEV then EDEV: output, field, multiplier (rates.c net_out)
NET_OUT = (('rxpck/s', 'rx_packets', 1), ('txpck/s', 'tx_packets', 1), ('rxkB/s', 'rx_bytes', 1 / 1024),
           ('txkB/s', 'tx_bytes', 1 / 1024), ('rxcmp/s', 'rx_compressed', 1), ('txcmp/s', 'tx_compressed', 1),
           ('rxmcst/s', 'rx_multicast', 1), ('rxerr/s', 'rx_errs', 1), ('txerr/s', 'tx_errs', 1),
           ('coll/s', 'tx_colls', 1), ('rxdrop/s', 'rx_drop', 1), ('txdrop/s', 'tx_drop', 1),
           ('txcarr/s', 'tx_carrier', 1), ('rxfram/s', 'rx_frame', 1), ('rxfifo/s', 'rx_fifo', 1),
           ('txfifo/s', 'tx_fifo', 1))
# per VM: (group, fields in order, outputs, multipliers) (rates.c plan_vm)
VM_EACH = {
    'vm': (('cpu_time', 'cpu_user', 'cpu_system'), ('%cpu', '%usr', '%sys'), (1e-7, 1e-7, 1e-7)),
    'vcpu': (('time', 'delay', 'slices'), ('%run', '%steal', 'slices/s'), (1e-7, 1e-7, 1)),
    'vmio': (('read_bytes', 'write_bytes', 'cg_read_bytes', 'cg_write_bytes'),
             ('rkB/s', 'wkB/s', 'cg_rkB/s', 'cg_wkB/s'), (1 / 1024,) * 4),
}
# the groups of a VM's totals: vm .. vmperf in the catalogue (is_vm_group)
_GNAMES = [g[0] for g in GROUPS]
VM_GROUPS = frozenset(_GNAMES[_GNAMES.index('vm'):_GNAMES.index('vmperf') + 1])
RENAMES = {'ctxt': 'cswch/s', 'processes': 'proc/s', 'intr': 'intr/s'}
PSI_OUT = {('psi', 'some.total'): '%some', ('psi', 'full.total'): '%full'}
for _r in ('cpu', 'memory', 'io'):
    for _k in ('some', 'full'):
        PSI_OUT[('vmcg', 'psi.%s.%s.total' % (_r, _k))] = 'psi.%s.%%%s' % (_r, _k)
# sar -r, -S: output, numerator keys, denominator keys ('-' subtracts), multiplier
MEM_KB = (('kbmemfree', 'MemFree'), ('kbavail', 'MemAvailable'), ('kbbuffers', 'Buffers'),
          ('kbcached', 'Cached'), ('kbcommit', 'Committed_AS'), ('kbactive', 'Active'), ('kbinact', 'Inactive'),
          ('kbdirty', 'Dirty'), ('kbswpfree', 'SwapFree'), ('kbswpcad', 'SwapCached'))
MEM_EXPR = tuple((o, (k,), (), 1 / 1024) for o, k in MEM_KB) + (
    ('kbmemused', ('MemTotal', '-MemAvailable'), (), 1 / 1024),
    ('%memused', ('MemTotal', '-MemAvailable'), ('MemTotal',), 100),
    ('%commit', ('Committed_AS',), ('MemTotal', 'SwapTotal'), 100),
    ('kbswpused', ('SwapTotal', '-SwapFree'), (), 1 / 1024),
    ('%swpused', ('SwapTotal', '-SwapFree'), ('SwapTotal',), 100),
    ('%swpcad', ('SwapCached',), ('SwapTotal', '-SwapFree'), 100))


class Interval:
    """One interval: the frame that ends it, its length and its rates."""
    __slots__ = ('seq', 't_mono_ns', 't_real_ns', 'prev_mono_ns', 'dt', 'values', 'keys')

    def __init__(self, f, prev_mono_ns, values, keys):
        self.seq, self.t_mono_ns, self.t_real_ns = f.seq, f.t_mono_ns, f.t_real_ns
        self.prev_mono_ns = prev_mono_ns
        self.dt = (f.t_mono_ns - prev_mono_ns) / 1e9 if f.t_mono_ns > prev_mono_ns else 0.0
        self.values, self.keys = values, keys


def _fidx(c):
    """The index of a column's field in its catalogue group, -1 for an
    open field or a column the catalogue does not know."""
    g = BY_NAME.get(c.id.group)
    if g is None:
        return -1
    try:
        return g[6].index(c.id.field)
    except ValueError:
        return -1


def _classify(c):
    """rates.c classify(): (kind of rate group, field index) or (None, -1)."""
    g, f = c.id.group, _fidx(c)
    if f < 0:
        return None, -1
    if g == 'cpu':
        return 'cpu', f
    if g == 'disk':
        return 'disk', f
    if g in ('net', 'vmnet'):
        return 'net', f
    if g == 'vm':
        f -= BY_NAME['vm'][6].index('cpu_time')
        return ('vm', f) if 0 <= f < 3 else (None, -1)
    if g in ('vcpu', 'vmio'):
        return g, f
    return None, -1


def unscale(v, scale):
    """rates.c vms_unscale()."""
    for _ in range(scale):
        v /= 10
    for _ in range(-scale):
        v *= 10
    return v


class _Plan:
    def __init__(self, schema):
        self.cols = schema.cols
        self.out = []  # (name, op, args)
        self.keys = {}

    def add(self, c, out, op, args):
        """An output of the entity of column c (rates.c add_of)."""
        i = c.id
        name = colname(i.group, i.entity, i.sub, out) if i.group else out
        self.out.append((name, op, args))

    def add_vm(self, group, entity, out, op, args):
        self.out.append((colname(group, entity, '', out), op, args))

    def find(self, group, ent, field, kind):
        """rates.c find_id()"""
        for i, c in enumerate(self.cols):
            if c.id.group == group and c.kind == kind and not c.id.sub and c.id.field == field \
                    and c.id.entity == ent:
                return i
        return -1


def _plan_cpu(P, c, f, is_all):
    if any(f.get(k, -1) < 0 for k in ('user', 'nice', 'system', 'idle')):
        for k in CPU_FIELDS:
            if f.get(k, -1) >= 0:
                _per_s(P, f[k])
        return
    grp = [f.get(k, -1) for k in CPU_FIELDS]
    for pct, need in CPU_PCT:
        if f.get(need, -1) >= 0:
            P.add(c, pct, 'cpu', (grp, pct, is_all))


def _plan_disk(P, c, f):
    g = lambda k: f.get(k, -1)  # noqa: E731
    if g('rd_ios') >= 0 and g('wr_ios') >= 0:
        P.add(c, 'tps', 'per_s', ([x for x in (g('rd_ios'), g('wr_ios'), g('dc_ios')) if x >= 0], 1.0))
    for d, n in (('rd', ('r/s', 'rkB/s', 'rrqm/s', '%rrqm', 'r_await', 'rareq-sz')),
                 ('wr', ('w/s', 'wkB/s', 'wrqm/s', '%wrqm', 'w_await', 'wareq-sz')),
                 ('dc', ('d/s', 'dkB/s', 'drqm/s', '%drqm', 'd_await', 'dareq-sz'))):
        ios, mg, sec, tk = g(d + '_ios'), g(d + '_merges'), g(d + '_sectors'), g(d + '_ticks')
        if ios < 0:
            continue
        P.add(c, n[0], 'per_s', ([ios], 1.0))
        if sec >= 0:
            P.add(c, n[1], 'per_s', ([sec], 0.5))
        if mg >= 0:
            P.add(c, n[2], 'per_s', ([mg], 1.0))
            P.add(c, n[3], 'pct_of', (mg, ios))
        if tk >= 0:
            P.add(c, n[4], 'per_op', (tk, ios, 1.0))
        if sec >= 0:
            P.add(c, n[5], 'per_op', (sec, ios, 0.5))
    if g('fl_ios') >= 0:
        P.add(c, 'f/s', 'per_s', ([g('fl_ios')], 1.0))
        if g('fl_ticks') >= 0:
            P.add(c, 'f_await', 'per_op', (g('fl_ticks'), g('fl_ios'), 1.0))
    if g('time_in_queue') >= 0:
        P.add(c, 'aqu-sz', 'per_s', ([g('time_in_queue')], 1 / 1000))
    if g('io_ticks') >= 0:
        P.add(c, '%util', 'per_s', ([g('io_ticks')], 1 / 10))
    if g('in_flight') >= 0:
        P.add(c, 'in_flight', 'gauge', (g('in_flight'), P.cols[g('in_flight')].scale))
    if g('rd_ios') >= 0 and g('wr_ios') >= 0:
        dirs = [d for d in ('rd', 'wr', 'dc') if g(d + '_ios') >= 0]
        ios = [g(d + '_ios') for d in dirs]
        tk = [g(d + '_ticks') for d in dirs if g(d + '_ticks') >= 0]
        sec = [g(d + '_sectors') for d in dirs if g(d + '_sectors') >= 0]
        if len(tk) == len(ios):
            P.add(c, 'await', 'sum', (tk, ios, 1.0))
        if len(sec) == len(ios):
            P.add(c, 'areq-sz', 'sum', (sec, ios, 0.5))


def _per_s(P, i):
    """"<field>/s" of column i: its step per second (rates.c add_per_s)."""
    c = P.cols[i]
    P.add(c, (c.id.field if c.id.group else c.name) + '/s', 'per_s', ([i], unscale(1.0, c.scale)))


def _plan_single(P, i):
    c = P.cols[i]
    if c.kind != COUNTER:
        P.add(c, c.id.field if c.id.group else c.name, 'gauge', (i, c.scale))
        return
    psi = PSI_OUT.get((c.id.group, c.id.field)) if c.unit == UNIT_US else None
    if psi:
        P.add(c, psi, 'per_s', ([i], 1e-4))
    elif c.id.group == 'stat' and c.id.field in RENAMES:
        P.add(c, RENAMES[c.id.field], 'per_s', ([i], 1.0))
    else:
        _per_s(P, i)


def _plan_vm_totals(P):
    seen = set()
    for c0 in P.cols:
        vm = c0.id.entity
        if c0.id.group not in VM_GROUPS or vm in seen:
            continue
        seen.add(vm)
        dl, rx, tx = [], [], []
        for j, c in enumerate(P.cols):
            if c.id.group not in VM_GROUPS or c.id.entity != vm or c.kind != COUNTER:
                continue
            if c.id.group == 'vcpu' and c.id.field == 'delay':
                dl.append(j)
            elif c.id.group == 'vmnet' and c.id.field == 'rx_bytes':
                rx.append(j)
            elif c.id.group == 'vmnet' and c.id.field == 'tx_bytes':
                tx.append(j)
        if dl:
            P.add_vm('vm', vm, '%steal', 'sum', (dl, [], 1e-7 / len(dl)))
            P.add_vm('vm', vm, 'dlyms/s', 'sum', (dl, [], 1e-6))
        if rx:
            P.add_vm('vm', vm, 'rxkB/s', 'sum', (rx, [], 1 / 1024))
        if tx:
            P.add_vm('vm', vm, 'txkB/s', 'sum', (tx, [], 1 / 1024))
        # its CPU against its cgroup's cap, its throttled share (plan_vm_cap)
        t = P.find('vm', vm, 'cpu_time', COUNTER)
        q = P.find('vmcg', vm, 'cpu_quota_us', GAUGE)
        pe = P.find('vmcg', vm, 'cpu_period_us', GAUGE)
        nt = P.find('vmcg', vm, 'nr_throttled', COUNTER)
        np_ = P.find('vmcg', vm, 'nr_periods', COUNTER)
        if t >= 0 and q >= 0 and pe >= 0:
            P.add_vm('vm', vm, '%cap', 'cap', (t, q, pe))
        if nt >= 0 and np_ >= 0:
            P.add_vm('vm', vm, '%thrtl', 'per_op', (nt, np_, 100.0))


def _vmstat_cols(P, key, limit=16):
    """The vmstat counters `key`, else those named key_<zone> but not
    key_throttle (a kernel before 4.8): rates.c vmstat_cols()."""
    x = P.find('vmstat', '', key, COUNTER)
    if x >= 0:
        return [x]
    out = []
    for i, c in enumerate(P.cols):
        f = c.id.field
        if len(out) < limit and c.id.group == 'vmstat' and c.kind == COUNTER and f.startswith(key + '_') \
                and f[len(key):] != '_throttle':
            out.append(i)
    return out


def _plan_mem(P):
    k = _vmstat_cols(P, 'pgscan_kswapd')
    d = _vmstat_cols(P, 'pgscan_direct')
    an, fi = P.find('vmstat', '', 'pgsteal_anon', COUNTER), P.find('vmstat', '', 'pgsteal_file', COUNTER)
    if an >= 0 and fi >= 0:
        st = [an, fi]
    elif an < 0 and fi < 0:
        st = _vmstat_cols(P, 'pgsteal_kswapd') + _vmstat_cols(P, 'pgsteal_direct')
    else:
        st = []
    for out, xs in (('pgscank/s', k), ('pgscand/s', d), ('pgsteal/s', st)):
        if xs:
            P.add_vm('vmstat', '', out, 'sum', (xs, [], 1.0))
    if k and d and st:
        P.add_vm('vmstat', '', '%vmeff', 'sum', (st, k + d, 100.0))
    for out, num, den, mul in MEM_EXPR:
        xs = []
        for key in num + den:
            x = P.find('mem', '', key.lstrip('-'), GAUGE)
            if x < 0:
                break
            xs.append((x, -1 if key[0] == '-' else 1))
        else:
            P.add_vm('mem', '', out, 'gexpr', (xs[:len(num)], xs[len(num):], mul))


def _plan(schema):
    """The outputs of one schema, in rates.c's order: [(name, op, args)];
    and each VM's key."""
    P = _Plan(schema)
    cols = schema.cols
    done = [False] * len(cols)
    for i, c in enumerate(cols):
        if c.key and c.id.group in VM_GROUPS:
            P.keys.setdefault(c.id.entity, c.key)
        if done[i]:
            continue
        k, _ = _classify(c)
        if k is None:
            _plan_single(P, i)
            continue
        # the entity's other fields, the first of each (rates.c)
        f = {}
        for j in range(i, len(cols)):
            cj = cols[j]
            kj, _ = _classify(cj)
            if done[j] or kj != k or (cj.id.group, cj.id.entity, cj.id.sub) != (c.id.group, c.id.entity, c.id.sub):
                continue
            if cj.id.field in f:
                continue
            f[cj.id.field] = j
            done[j] = True
        if k == 'cpu':
            _plan_cpu(P, c, f, c.id.entity == 'all')
        elif k == 'disk':
            _plan_disk(P, c, f)
        elif k == 'net':
            for out, field, mul in NET_OUT:
                if field in f:
                    P.add(c, out, 'per_s', ([f[field]], mul))
        else:
            fields, outs, muls = VM_EACH[k]
            for field, out, mul in zip(fields, outs, muls):
                if field in f:
                    P.add(c, out, 'per_s', ([f[field]], mul))
    _plan_vm_totals(P)
    _plan_mem(P)
    return P.out, P.keys


def _delta(cols, i, pv, cv):
    """rates.c's cdelta: the counter's step, or None (missing, reset)."""
    p, c = pv[i], cv[i]
    if p is None or c is None:
        return None
    if c >= p:
        return c - p
    w = cols[i].wrap_bits
    if 0 < w < 64:
        return (c - p) & ((1 << w) - 1)
    if p <= 0xffffffff:
        return (c - p) & 0xffffffff
    return None


def _cpu(grp, pct, is_all, cols, pv, cv, dt):
    """sysstat's percentages of one CPU line (rates.c cpu_group)."""
    d = None
    p, c = [0] * 10, [0] * 10
    for k, i in enumerate(grp):
        if i < 0:
            continue
        if d is None:
            d = dt[i]
        if dt[i] != d:
            return None
        a, b = pv[i], cv[i]
        if a is None or b is None or a > INT64_MAX or b > INT64_MAX:
            return None
        p[k], c[k] = a, b
    U, N, S, I, W, Q, SQ, ST, G, GN = range(10)

    def D(k):
        return c[k] - p[k] if c[k] > p[k] else 0
    du = (c[U] - c[G]) - (p[U] - p[G])
    dn = (c[N] - c[GN]) - (p[N] - p[GN])
    ishift = 0
    if c[U] >= p[U] and du < 0:
        ishift += -du
    if c[N] >= p[N] and dn < 0:
        ishift += -dn
    total = D(U) + D(N) + D(S) + D(W) + D(I) + D(ST) + D(Q) + D(SQ) + ishift
    dv = {'%usr': max(du, 0), '%nice': max(dn, 0), '%sys': D(S), '%iowait': D(W), '%irq': D(Q), '%soft': D(SQ),
          '%steal': D(ST), '%guest': D(G), '%gnice': D(GN), '%idle': D(I)}
    if total == 0:
        return 100.0 if pct == '%idle' and not is_all else 0.0
    return float(dv[pct]) / float(total) * 100


def _common_dt(dt, xs):
    d = dt[xs[0]]
    if any(dt[i] != d for i in xs):
        return 0.0
    return d if d > 0 else 0.0


def _value(op, args, cols, pv, cv, dt):
    """One output over one interval (rates.c term() and vms_rate_value()),
    None where it has no value."""
    if op == 'gauge':
        i, scale = args
        v = cv[i]
        return None if v is None else unscale(float(v), scale)
    if op == 'cpu':
        return _cpu(*args, cols, pv, cv, dt)
    if op == 'per_s':
        xs, mul = args
        d = _common_dt(dt, xs)
        if not d > 0:
            return None
        n = 0.0
        for i in xs:
            s = _delta(cols, i, pv, cv)
            if s is None:
                return None
            n += float(s)
        return n * mul / d
    if op in ('pct_of', 'per_op'):
        a, b = args[:2]
        if not _common_dt(dt, [a, b]) > 0:
            return None
        da, db = _delta(cols, a, pv, cv), _delta(cols, b, pv, cv)
        if da is None or db is None:
            return None
        if op == 'pct_of':
            den = float(da) + float(db)
            return float(da) / den * 100 if den != 0 else 0.0
        return float(da) * args[2] / float(db) if db != 0 else 0.0
    if op == 'sum':  # VMS_ROP_SUM: one interval for every input
        num, den, mul = args
        d = dt[num[0]]
        if not d > 0:
            return None
        sn = sd = 0.0
        for k, i in enumerate(num + den):
            s = _delta(cols, i, pv, cv) if dt[i] == d else None
            if s is None:
                return None
            if k < len(num):
                sn += float(s)
            else:
                sd += float(s)
        if not den:
            sd = d
        return sn * mul / sd if sd != 0 else 0.0
    if op == 'cap':  # VMS_ROP_CAP: the quota and period at the frame
        t, q, per = args
        qv, pv_ = cv[q], cv[per]
        d = dt[t]
        if qv is None or pv_ is None or qv == 0 or qv >= UINT64_MAX - 1 or not d > 0:
            return None
        s = _delta(cols, t, pv, cv)
        if s is None:
            return None
        return float(s) * float(pv_) / float(qv) * 100 / (d * 1e9)
    if op == 'gexpr':  # VMS_ROP_GEXPR: the gauges at the frame
        num, den, mul = args
        v = [0.0, 0.0]
        for k, (i, sign) in enumerate(num + den):
            if cv[i] is None:
                return None
            v[k >= len(num)] += sign * unscale(float(cv[i]), cols[i].scale)
        if v[0] < 0:
            v[0] = 0.0
        if not den:
            v[1] = 1.0
        return v[0] * mul / v[1] if v[1] > 0 else 0.0
    raise ValueError(op)


def intervals(path):
    """The intervals of a run (every frame after the first), each with
    the rates above as a dict name -> float (a name is absent where the
    rate has no value) and .keys, each VM's UUID."""
    last_v, last_t, last_col = [], [], []
    schema = plan = keys = None
    first = True
    for f in read_frames(path):
        if f.schema is not schema:
            old = schema
            schema = f.schema
            plan, keys = _plan(schema)
            # a column continues with the same name, kind, scale and key
            nv, nt = [], []
            for c in schema.cols:
                j = old.index.get(c.name) if old is not None else None
                if j is not None:
                    o = old.cols[j]
                    if (o.kind, o.scale, o.key) != (c.kind, c.scale, c.key):
                        j = None
                nv.append(last_v[j] if j is not None else None)
                nt.append(last_t[j] if j is not None else 0)
            last_v, last_t = nv, nt
            last_col = schema.cols
        cv = f.values
        if not first:
            t = f.t_mono_ns
            dt = [(t - lt) / 1e9 if lt and t > lt else 0.0 for lt in last_t]
            vals = {}
            for name, op, args in plan:
                v = _value(op, args, last_col, last_v, cv, dt)
                if v is not None:
                    vals[name] = v
            yield Interval(f, prev_t, vals, keys)
        first = False
        prev_t = f.t_mono_ns
        for i, v in enumerate(cv):
            if v is not None:
                last_v[i] = v
                last_t[i] = f.t_mono_ns
