# SPDX-License-Identifier: MIT
"""Whom each VM's vCPUs waited behind: the interference source's columns
(doc/interference.md) as `vmsampler report --interference` reads them.

    import vmsampler
    df = vmsampler.interference('run.vms')                 # victim x culprit
    df = vmsampler.interference('run.vms', window=('mark:a', 'mark:b'), marks={'a': t1, 'b': t2})
    fig = vmsampler.interference_heatmap(df)               # victim x culprit, share
    tl = vmsampler.interference_timeline('run.vms', 'web-01')  # one victim over time
    fig = vmsampler.interference_stack(tl)                 # stacked by culprit

interference() returns the rows of `report --interference --format csv`
(victim, culprit, seconds, share; each victim's culprits largest first),
with the same numbers: the columns are found by their identities (groups
vmintf and vmintfby, the vCPUs' delay), each counter adds its step from
its last present value (the rules of vmsampler.rates: a reset adds
nothing) over the intervals between two frames that begin at or after the
window's start and end at or before its end.  The culprits: vm:NAME (the
VM of a vmintfby column), own, host, kernel, unknown, and vms:other (the
part of vms no vmintfby column names), shown when not 0; share = seconds /
the victim's account (its wait, which the parts add up to).  .attrs
holds each victim's wait and run delay (its vCPUs' schedstat), in s.

source: a path (.vms, .vms.zst) or Frames (vmsampler.read_frames, a
ring's).  A DataFrame from load() has no column identities: pass the path.
window: (FROM, TO), each None, seconds from the first frame, or
'mark:TEXT' with marks {TEXT: t_mono_ns} (e.g. from dump --events), as
vmsampler.compare.compare() takes them."""

import os

from . import read_frames
from .compare import _edge
from .rates import _delta

ROLES = ('wait', 'vms', 'own', 'host', 'kernel', 'unknown')


def _plan(schema):
    """Per column index: ('class', victim, role), ('cell', victim,
    culprit VM) or ('delay', victim); the VMs' keys."""
    plan, keys = {}, {}
    for i, c in enumerate(schema.cols):
        g, kind = c.id.group, c.kind
        if kind != 1:  # counters only
            continue
        if g == 'vmintf' and c.id.field in ROLES:
            plan[i] = ('class', c.id.entity, c.id.field)
        elif g == 'vmintfby':
            plan[i] = ('cell', c.id.entity, c.id.field)
        elif g == 'vcpu' and c.id.field == 'delay':
            plan[i] = ('delay', c.id.entity)
        else:
            continue
        if c.key:
            keys.setdefault(c.id.entity, c.key)
    return plan, keys


def _frames(source):
    if isinstance(source, (str, bytes, os.PathLike)):
        return read_frames(source)
    if hasattr(source, 'columns') and hasattr(source, 'index'):
        raise TypeError('a DataFrame has no column identities: pass the path of the run')
    return source


def _intervals(source, window=None, marks=None):
    """Yield (prev_mono, t_mono, t_real, {(kind, victim, what): ns}) for
    each interval in the window (kind 'class', 'cell', 'delay')."""
    schema = plan = None
    last_v, last_t, cols = [], [], []
    lo = hi = None
    prev = None
    for f in _frames(source):
        if prev is None and window:
            lo = _edge(window[0], f.t_mono_ns, marks, True)
            hi = _edge(window[1], f.t_mono_ns, marks, False)
        if f.schema is not schema:
            old, schema = schema, f.schema
            plan, _ = _plan(schema)
            nv, nt = [], []
            for c in schema.cols:
                j = old.index.get(c.name) if old is not None else None
                if j is not None and (old.cols[j].kind, old.cols[j].scale, old.cols[j].key) != (c.kind, c.scale, c.key):
                    j = None
                nv.append(last_v[j] if j is not None else None)
                nt.append(last_t[j] if j is not None else 0)
            last_v, last_t, cols = nv, nt, schema.cols
        cv = f.values
        if prev is not None and (lo is None or prev >= lo[0] - lo[1]) and (hi is None or f.t_mono_ns <= hi[0] + hi[1]):
            out, delay = {}, {}
            for i, what in plan.items():
                d = _delta(cols, i, last_v, cv) if last_t[i] else None
                if what[0] == 'delay':
                    # the VM's total: every vCPU's step over one interval
                    s = delay.setdefault(what[1], [0, set(), True])
                    if d is None:
                        s[2] = False
                    else:
                        s[0] += d
                        s[1].add(last_t[i])
                    continue
                if d is not None:
                    out[what] = d
            for vm, (s, ts, ok) in delay.items():
                if ok and len(ts) == 1:
                    out[('delay', vm)] = s
            yield prev, f.t_mono_ns, f.t_real_ns, out
        prev = f.t_mono_ns
        for i, v in enumerate(cv):
            if v is not None:
                last_v[i] = v
                last_t[i] = f.t_mono_ns


def _parts(cls, cells):
    """A victim's parts {culprit: ns} from its classes and cells."""
    parts = {'vm:' + c: ns for c, ns in cells.items()}
    for r in ('own', 'host', 'kernel', 'unknown'):
        parts[r] = cls.get(r, 0)
    other = cls.get('vms', 0) - sum(cells.values())
    if other:
        parts['vms:other'] = other
    return parts


def interference(source, window=None, marks=None):
    """The victim x culprit table (see the module): a DataFrame with the
    columns victim, culprit, seconds, share."""
    import pandas as pd
    cls, cells, delay = {}, {}, {}
    for _, _, _, out in _intervals(source, window, marks):
        for k, ns in out.items():
            if k[0] == 'class':
                cls.setdefault(k[1], {})
                cls[k[1]][k[2]] = cls[k[1]].get(k[2], 0) + ns
            elif k[0] == 'cell':
                cells.setdefault(k[1], {})
                cells[k[1]][k[2]] = cells[k[1]].get(k[2], 0) + ns
            else:
                delay[k[1]] = delay.get(k[1], 0) + ns
    rows = []
    for v in sorted(cls):
        parts = _parts(cls[v], cells.get(v, {}))
        wait = cls[v].get('wait', 0)
        for c, ns in sorted(parts.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(dict(victim=v, culprit=c, seconds=ns / 1e9, share=ns / wait if wait > 0 else float('nan')))
    df = pd.DataFrame(rows, columns=['victim', 'culprit', 'seconds', 'share'])
    df.attrs['wait'] = {v: cls[v].get('wait', 0) / 1e9 for v in cls}
    df.attrs['run_delay'] = {v: delay[v] / 1e9 for v in cls if v in delay}
    return df


def interference_heatmap(df, value='share', ax=None):
    """A heatmap of interference()'s table: victims (rows) x culprits
    (columns), colour the share of the victim's run delay (value='share')
    or its seconds ('seconds').  Returns the Figure; the matrix shown is
    its .interference (a DataFrame, victims x culprits, 0 where a pair has
    no row)."""
    import numpy as np
    from matplotlib.figure import Figure
    m = df.pivot_table(index='victim', columns='culprit', values=value, aggfunc='sum', fill_value=0.0)
    # the culprits: VMs (in the victims' order where they are victims too), then the classes
    vms = sorted(c for c in m.columns if c.startswith('vm:'))
    rest = [c for c in ('vms:other', 'own', 'host', 'kernel', 'unknown') if c in m.columns]
    m = m.reindex(columns=vms + rest).sort_index()
    fig = ax.figure if ax is not None else Figure(figsize=(max(4, 0.6 * m.shape[1] + 3), max(3, 0.4 * m.shape[0] + 2)),
                                                  constrained_layout=True)
    ax = ax or fig.add_subplot(1, 1, 1)
    im = ax.imshow(np.asarray(m.values, dtype=float), aspect='auto', cmap='viridis', interpolation='nearest')
    ax.set_xticks(range(m.shape[1]))
    ax.set_xticklabels(m.columns, rotation=60, ha='right')
    ax.set_yticks(range(m.shape[0]))
    ax.set_yticklabels(m.index)
    ax.set_xlabel('culprit')
    ax.set_ylabel('victim')
    ax.set_title('run delay behind each culprit (%s)' % ('share of the victim\'s' if value == 'share' else 's'))
    fig.colorbar(im, ax=ax)
    fig.interference = m
    return fig


def interference_timeline(source, victim, window=None, marks=None):
    """One victim's run delay over time by culprit: a DataFrame indexed by
    the end of each interval (UTC), a column per culprit, in seconds of
    delay per second of the interval (the vCPUs' waits add up: 2 is two
    vCPUs waiting all the time); its 'dt' attribute per interval is
    .attrs['dt'] (s), and .attrs['seconds'] the total per culprit over the
    window (interference()'s seconds)."""
    import pandas as pd
    rows, idx, dts = [], [], []
    totals = {}
    for prev, t, t_real, out in _intervals(source, window, marks):
        cls = {k[2]: ns for k, ns in out.items() if k[0] == 'class' and k[1] == victim}
        if not cls:
            continue
        cells = {k[2]: ns for k, ns in out.items() if k[0] == 'cell' and k[1] == victim}
        parts = _parts(cls, cells)
        dt = (t - prev) / 1e9
        rows.append({c: ns / 1e9 / dt for c, ns in parts.items()})
        for c, ns in parts.items():
            totals[c] = totals.get(c, 0) + ns / 1e9
        idx.append(pd.Timestamp(t_real, unit='ns', tz='UTC'))
        dts.append(dt)
    order = sorted(totals, key=lambda c: (-totals[c], c))
    df = pd.DataFrame(rows, index=pd.DatetimeIndex(idx, name='time'), columns=order).fillna(0.0)
    df.attrs['dt'] = dts
    df.attrs['seconds'] = totals
    df.attrs['victim'] = victim
    return df


def interference_stack(tl, ax=None):
    """interference_timeline()'s DataFrame as a stacked area plot (the
    largest culprit at the bottom).  Returns the Figure; the areas are
    the axes' collections, one per culprit in the columns' order, each
    with its culprit as gid."""
    from matplotlib.figure import Figure
    fig = ax.figure if ax is not None else Figure(figsize=(10, 4), constrained_layout=True)
    ax = ax or fig.add_subplot(1, 1, 1)
    x = tl.index.tz_convert(None).to_pydatetime() if len(tl.index) else []
    polys = ax.stackplot(x, *[tl[c].values for c in tl.columns], labels=list(tl.columns))
    for p, c in zip(polys, tl.columns):
        p.set_gid(c)
    ax.set_ylabel('run delay (s per s)')
    ax.set_title('%s: run delay by culprit' % tl.attrs.get('victim', ''))
    if len(tl.columns):
        ax.legend(loc='upper left', fontsize='small')
    return fig
