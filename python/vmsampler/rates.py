# SPDX-License-Identifier: MIT
"""Per-interval rates from the raw counters, in Python (no C tools).

    from vmsampler import rates
    for iv in rates.intervals('run.vms'):
        print(iv.t_mono_ns, iv.dt, iv.values.get('cpu.all.%usr'))

The rates that `vmsampler report --compare` compares, computed as
src/lib/rates.c (and so `vmsampler dump --rates`) computes them, from the
frames the package's own decoder reads:

  cpu.N.%usr ... %idle     sysstat's CPU percentages (user less guest, ...)
  disk.D.tps r/s w/s rkB/s wkB/s aqu-sz await %util
  net.I.rxpck/s txpck/s rxkB/s txkB/s
  stat.cswch/s stat.proc/s stat.intr/s, psi.R.%some / %full
  vm.V.%cpu, vm.V.%steal, vm.V.dlyms/s (its vCPUs' run delay),
  vm.V.rxkB/s txkB/s (its taps), vm.V.io.rkB/s io.wkB/s
  gauges: load.*, stat.procs_running, stat.procs_blocked (their value)

The rules are the C tools': each column's last value before the frame
and the time since it was taken (a value missing in a frame is not a
zero: the next interval of that column spans from its last value); a
counter that went down wrapped if the column has wrap_bits below 64 (or
holds a 32-bit value), else it was reset and the interval has no value
for it; an output whose inputs were taken at different times has none;
a column continues across a new schema only with the same name, kind,
scale and key.  (Not here: the host memory gauges, which are formulas
over several meminfo lines, the caps and throttling, perf.)
"""

from . import read_frames

COUNTER = 1
CPU_FIELDS = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice')
# output -> the field it needs (rates.c: needs[])
CPU_PCT = (('%usr', 'user'), ('%nice', 'nice'), ('%sys', 'system'), ('%iowait', 'iowait'), ('%irq', 'irq'),
           ('%soft', 'softirq'), ('%steal', 'steal'), ('%guest', 'guest'), ('%gnice', 'guest_nice'),
           ('%idle', 'idle'))
NET_OUT = (('rxpck/s', 'rx_packets', 1.0), ('txpck/s', 'tx_packets', 1.0), ('rxkB/s', 'rx_bytes', 1 / 1024),
           ('txkB/s', 'tx_bytes', 1 / 1024))
RENAMES = {'stat.ctxt': 'stat.cswch/s', 'stat.processes': 'stat.proc/s', 'stat.intr': 'stat.intr/s'}
GAUGES = ('load.1m', 'load.5m', 'load.15m', 'load.runnable', 'load.tasks', 'stat.procs_running',
          'stat.procs_blocked')
INT64_MAX = (1 << 63) - 1


class Interval:
    """One interval: the frame that ends it, its length and its rates."""
    __slots__ = ('seq', 't_mono_ns', 't_real_ns', 'prev_mono_ns', 'dt', 'values', 'keys')

    def __init__(self, f, prev_mono_ns, values, keys):
        self.seq, self.t_mono_ns, self.t_real_ns = f.seq, f.t_mono_ns, f.t_real_ns
        self.prev_mono_ns = prev_mono_ns
        self.dt = (f.t_mono_ns - prev_mono_ns) / 1e9 if f.t_mono_ns > prev_mono_ns else 0.0
        self.values, self.keys = values, keys


def _split(name, prefix):
    """'disk.sda.rd_ios' -> ('sda', 'rd_ios'): the field after the last dot."""
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix):]
    dot = rest.rfind('.')
    if dot <= 0:
        return None
    return rest[:dot], rest[dot + 1:]


def _plan(schema):
    """The outputs of one schema: [(name, op, args)], op one of 'cpu',
    'per_s' (cols, mul), 'sum' (cols, mul), 'gauge' (col, scale); and each
    VM's key."""
    idx = schema.index
    cols = schema.cols
    out, keys = [], {}
    cpus, disks, nets = {}, {}, {}
    vms = {}
    for i, c in enumerate(cols):
        n = c.name
        if n.startswith('vm.'):
            dot = n.find('.', 3)
            if dot <= 3:
                continue
            vm, rest = n[3:dot], n[dot + 1:]
            if c.key:
                keys.setdefault(vm, c.key)
            v = vms.setdefault(vm, {'delay': [], 'rx': [], 'tx': []})
            if c.kind != COUNTER:
                continue
            if rest == 'cpu_time':
                v['cpu'] = i
            elif rest.startswith('vcpu') and rest.endswith('.delay') and rest[4:-6].isdigit():
                v['delay'].append(i)
            elif rest.startswith('net.') and rest.endswith('.rx_bytes') and len(rest) > 13:
                v['rx'].append(i)
            elif rest.startswith('net.') and rest.endswith('.tx_bytes') and len(rest) > 13:
                v['tx'].append(i)
            elif rest == 'io.read_bytes':
                v['rkB'] = i
            elif rest == 'io.write_bytes':
                v['wkB'] = i
            continue
        for prefix, d in (('cpu.', cpus), ('disk.', disks), ('net.', nets)):
            s = _split(n, prefix)
            if s:
                d.setdefault(s[0], {})[s[1]] = i
                break
        else:
            if n in RENAMES and c.kind == COUNTER:
                out.append((RENAMES[n], 'per_s', ([i], 1.0)))
            elif n in GAUGES and c.kind != COUNTER:
                out.append((n, 'gauge', (i, c.scale)))
            elif n.startswith('psi.') and n.endswith('.total') and c.kind == COUNTER:
                parts = n.split('.')
                if len(parts) == 4:
                    out.append(('psi.%s.%%%s' % (parts[1], parts[2]), 'per_s', ([i], 1e-4)))
    for cpu, f in cpus.items():
        if not all(k in f for k in ('user', 'nice', 'system', 'idle')):
            continue
        grp = [f.get(k, -1) for k in CPU_FIELDS]
        for pct, need in CPU_PCT:
            if need in f:
                out.append(('cpu.%s.%s' % (cpu, pct), 'cpu', (grp, pct, cpu == 'all')))
    for d, f in disks.items():
        p = 'disk.%s.' % d
        if 'rd_ios' in f and 'wr_ios' in f:
            out.append((p + 'tps', 'per_s', ([f[k] for k in ('rd_ios', 'wr_ios', 'dc_ios') if k in f], 1.0)))
        for ios, sec, o1, o2 in (('rd_ios', 'rd_sectors', 'r/s', 'rkB/s'), ('wr_ios', 'wr_sectors', 'w/s', 'wkB/s')):
            if ios in f:
                out.append((p + o1, 'per_s', ([f[ios]], 1.0)))
                if sec in f:
                    out.append((p + o2, 'per_s', ([f[sec]], 0.5)))
        if 'time_in_queue' in f:
            out.append((p + 'aqu-sz', 'per_s', ([f['time_in_queue']], 1 / 1000)))
        if 'io_ticks' in f:
            out.append((p + '%util', 'per_s', ([f['io_ticks']], 1 / 10)))
        if 'rd_ios' in f and 'wr_ios' in f:
            dirs = [(a, b) for a, b in (('rd_ios', 'rd_ticks'), ('wr_ios', 'wr_ticks'), ('dc_ios', 'dc_ticks'))
                    if a in f]
            if all(b in f for _, b in dirs):
                out.append((p + 'await', 'ratio', ([f[b] for _, b in dirs], [f[a] for a, _ in dirs], 1.0)))
    for dev, f in nets.items():
        for o, fld, mul in NET_OUT:
            if fld in f:
                out.append(('net.%s.%s' % (dev, o), 'per_s', ([f[fld]], mul)))
    for vm, v in vms.items():
        p = 'vm.%s.' % vm
        if 'cpu' in v:
            out.append((p + '%cpu', 'per_s', ([v['cpu']], 1e-7)))
        if v['delay']:
            out.append((p + '%steal', 'sum', (v['delay'], 1e-7 / len(v['delay']))))
            out.append((p + 'dlyms/s', 'sum', (v['delay'], 1e-6)))
        if v['rx']:
            out.append((p + 'rxkB/s', 'sum', (v['rx'], 1 / 1024)))
        if v['tx']:
            out.append((p + 'txkB/s', 'sum', (v['tx'], 1 / 1024)))
        if 'rkB' in v:
            out.append((p + 'io.rkB/s', 'per_s', ([v['rkB']], 1 / 1024)))
        if 'wkB' in v:
            out.append((p + 'io.wkB/s', 'per_s', ([v['wkB']], 1 / 1024)))
    return out, keys


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


def _value(op, args, cols, pv, cv, dt):
    if op == 'gauge':
        i, scale = args
        v = cv[i]
        return None if v is None else (v / 10 ** scale if scale else float(v))
    if op == 'cpu':
        return _cpu(*args, cols, pv, cv, dt)
    if op == 'per_s':
        xs, mul = args
        d = dt[xs[0]]
        if not d > 0 or any(dt[i] != d for i in xs):
            return None
        n = 0.0
        for i in xs:
            s = _delta(cols, i, pv, cv)
            if s is None:
                return None
            n += float(s)
        return n * mul / d
    if op == 'sum':
        xs, mul = args
        d = dt[xs[0]]
        if not d > 0:
            return None
        n = 0.0
        for i in xs:
            s = _delta(cols, i, pv, cv) if dt[i] == d else None
            if s is None:
                return None
            n += float(s)
        return n * mul / d
    if op == 'ratio':  # rates.c VMS_ROP_SUM with a denominator
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
        return sn * mul / sd if sd != 0 else 0.0
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
