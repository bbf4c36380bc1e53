# SPDX-License-Identifier: MIT
"""python3 -m vmsampler plot RUN.vms -o run.png: one figure of a whole run.

Panels (--panels picks and orders them; a panel whose columns are not in
the run is left out):

  cpu        host CPU as sar -u ALL splits it (cpu.all.%usr ... %idle), stacked
  load       run queue (stat.procs_running), blocked (stat.procs_blocked), load.1m/5m/15m
  cswch      stat.cswch/s and stat.intr/s
  disk-util  disk.*.%util
  disk-aqu   disk.*.aqu-sz
  net        net.*.rxkB/s (solid) and txkB/s (dashed)
  vm-cpu     vm.*.%cpu as a heatmap, VMs x time, the busiest at the top
  vm-steal   vm.*.vcpu*.%steal (mean over each VM's vCPUs), the same way

Events (VM lifecycle, marks from `vmsampler mark`, sources failing, and
any type this reader does not know) are vertical lines across every panel,
labelled on the top one.

The numbers are those of `vmsampler dump --rates` (libvmsampler's rates:
resets, wraps, missed ticks and missing values handled there), read as
dump prints them and binned while reading: at most --max-points points
per series (default 2000), each the mean of the same number of
consecutive intervals, so that memory does not grow with the run.
"""

import os

import numpy as np

from . import catalog, tool
from .binning import Binned

CPU_FIELDS = ['%usr', '%nice', '%sys', '%iowait', '%irq', '%soft', '%steal', '%guest', '%gnice', '%idle']
CPU_COLORS = ['#1f77b4', '#aec7e8', '#d62728', '#ff7f0e', '#9467bd', '#c5b0d5', '#8c564b', '#2ca02c',
              '#98df8a', '#f0f0f0']

from .panels import PANELS, TITLES  # noqa: E402  (the CLI lists them without numpy)
# the load panel's columns, in its order: (group, field) of the catalogue
LOAD_IDS = [('stat', 'procs_running'), ('stat', 'procs_blocked'), ('load', '1m'), ('load', '5m'), ('load', '15m')]
LOAD_COLS = [catalog.colname(g, '', '', f) for g, f in LOAD_IDS]
LOAD_LABELS = {LOAD_COLS[0]: LOAD_COLS[0] + ' (run queue)', LOAD_COLS[1]: LOAD_COLS[1]}
CSWCH_IDS = [('stat', 'cswch/s'), ('stat', 'intr/s')]
MAX_LINES = 8   # per-device panels: the busiest devices, by mean


def _cpu_col(field):
    """cpu.all's rate column of a percentage"""
    return catalog.colname('cpu', 'all', '', field)


def panel_of(name):
    """The panel a rate column belongs to, or None: by its identity in the
    catalogue (catalog.rate_id), not by the text of its name."""
    i = catalog.rate_id(name)
    gf = (i.group, i.field)
    if i.group == 'cpu' and i.entity == 'all' and i.field in CPU_FIELDS:
        return 'cpu'
    if gf in LOAD_IDS:
        return 'load'
    if gf in CSWCH_IDS:
        return 'cswch'
    return {('disk', '%util'): 'disk-util', ('disk', 'aqu-sz'): 'disk-aqu', ('net', 'rxkB/s'): 'net',
            ('net', 'txkB/s'): 'net', ('vm', '%cpu'): 'vm-cpu', ('vcpu', '%steal'): 'vm-steal'}.get(gf)


def parse_panels(spec):
    if not spec:
        return list(PANELS)
    out = []
    for p in spec.split(','):
        p = p.strip()
        if p == 'all':
            out.extend(x for x in PANELS if x not in out)
            continue
        if p not in TITLES:
            raise ValueError('unknown panel %r (panels: %s)' % (p, ', '.join(PANELS)))
        if p not in out:
            out.append(p)
    return out


class RunData:
    """What a figure needs of a run, read in one pass and binned."""

    def __init__(self, path, panels=None, max_points=2000, vmsampler=None, warn=tool.default_warn):
        self.path = path
        warn = tool.once(warn)
        self.panels = parse_panels(panels) if isinstance(panels, str) or panels is None else list(panels)
        want = set(self.panels)
        rs = tool.RateStream(path, select=lambda n: panel_of(n) in want, vmsampler=vmsampler, warn=warn)
        self.binned = None
        interval_sum = 0.0
        for ch in rs:
            if self.binned is None:
                self.binned = Binned(len(rs.columns), cap=max_points + (max_points & 1))
            t = np.asarray(ch.t_us, dtype=np.int64)
            iv = np.asarray(ch.interval_s)
            interval_sum += float(iv.sum())
            self.binned.add(t, t - np.round(iv * 1e6).astype(np.int64), ch.values)
        self.columns = rs.columns or []
        self.tz = rs.tz
        self.events = tool.events(path, vmsampler=vmsampler, warn=warn)
        if self.binned is None:
            self.nrows, self.k = 0, 1
            self.t_us = self.edges_us = np.zeros(0)
            self.means = np.zeros((0, len(self.columns)))
            self.mean_interval = 0.0
            self._tot = np.zeros(len(self.columns))
            self._cnt = np.zeros(len(self.columns), dtype=np.int64)
            return
        self.t_us, self.edges_us, self.means, self.rows = self.binned.result()
        self.nrows, self.k = self.binned.nrows, self.binned.k
        self.mean_interval = interval_sum / self.nrows
        cnt, tot = self.binned.totals()
        self._cnt = cnt
        with np.errstate(invalid='ignore', divide='ignore'):
            self._tot = np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)
        self.index = {c: i for i, c in enumerate(self.columns)}

    def series(self, name):
        return self.means[:, self.index[name]]

    def run_mean(self, name):
        """The mean of a column over every row of the run (not of the bins)."""
        return self._tot[self.index[name]]

    def has(self, name):
        return name in getattr(self, 'index', {})

    def has_values(self, name):
        """The column had a value in at least one interval."""
        return self.has(name) and bool(self._cnt[self.index[name]])


def _dates(us):
    import matplotlib.dates as mdates
    us = np.asarray(us)
    return mdates.date2num(np.round(us).astype(np.int64).astype('datetime64[us]'))


def _short(s, n=28):
    return s if len(s) <= n else s[:n - 1] + '\u2026'


def _fmt_duration(s):
    if s >= 3600:
        return '%.1f h' % (s / 3600)
    if s >= 60:
        return '%.1f min' % (s / 60)
    return '%.3g s' % s


def build(data, title=None):
    """The figure (a matplotlib Figure, not shown) of a RunData."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    x = _dates(data.t_us)
    edges = _dates(data.edges_us) if len(data.edges_us) else np.zeros(0)
    plan = []   # (panel, height in inches, what to draw)
    cols = [c for c in data.columns if data.has_values(c)]   # a column never with a value: as if absent
    ids = {c: catalog.rate_id(c) for c in cols}
    panel = {c: panel_of(c) for c in cols}
    for p in data.panels:
        if p == 'cpu':
            fields = [f for f in CPU_FIELDS if _cpu_col(f) in cols]
            if fields:
                plan.append((p, 2.6, fields))
        elif p in ('load', 'cswch'):
            want = LOAD_IDS if p == 'load' else CSWCH_IDS
            names = sorted((c for c in cols if panel[c] == p), key=lambda c: want.index((ids[c].group, ids[c].field)))
            if names:
                plan.append((p, 2.0, names))
        elif p in ('disk-util', 'disk-aqu'):
            names = [c for c in cols if panel[c] == p]
            if names:
                names.sort(key=lambda c: -np.nan_to_num(data.run_mean(c), nan=-1))
                plan.append((p, 2.0, (names[:MAX_LINES], len(names))))
        elif p == 'net':
            ifs = {}
            for c in cols:
                if panel[c] == 'net':
                    ifs.setdefault(ids[c].entity, []).append(c)
            if ifs:
                order = sorted(ifs, key=lambda i: -sum(np.nan_to_num(data.run_mean(c)) for c in ifs[i]))
                plan.append((p, 2.2, ([(i, sorted(ifs[i])) for i in order[:MAX_LINES]], len(ifs))))
        elif p in ('vm-cpu', 'vm-steal'):
            vms = {}
            for c in cols:
                if panel[c] == p:
                    vms.setdefault(ids[c].entity, []).append(c)
            if vms:
                rows = []
                for vm, cs in vms.items():
                    ser = np.vstack([data.series(c) for c in cs])
                    with np.errstate(invalid='ignore'), _quiet():
                        row = np.nanmean(ser, axis=0) if len(cs) > 1 else ser[0]
                        mean = np.nanmean([data.run_mean(c) for c in cs])
                    rows.append((vm, row, mean, cs))
                rows.sort(key=lambda r: (-(np.nan_to_num(r[2], nan=-1)), r[0]))
                plan.append((p, max(1.6, 0.8 + 0.14 * len(rows)), rows))
    if not data.nrows:
        raise ValueError('%s: no interval to plot (fewer than two frames)' % data.path)
    if not plan:
        raise ValueError('%s: none of the panels %s has columns in this run'
                         % (data.path, ','.join(data.panels)))

    heights = [h for _, h, _ in plan]
    fig = plt.figure(figsize=(14, sum(heights) + 1.2))
    # about 0.6 in between panels, whatever their heights (hspace is a
    # fraction of their mean height)
    gs = fig.add_gridspec(len(plan), 1, height_ratios=heights, hspace=0.6 / (sum(heights) / len(heights)),
                          left=0.06, right=0.80, top=1 - 0.95 / (sum(heights) + 1.2),
                          bottom=0.45 / (sum(heights) + 1.2))
    axes = []
    tz = data.tz
    for r, (p, _, what) in enumerate(plan):
        ax = fig.add_subplot(gs[r], sharex=axes[0] if axes else None)
        axes.append(ax)
        ax.set_title(TITLES[p], loc='left', fontsize=10)
        ax.set_gid('vms-panel:' + p)
        ax.grid(True, alpha=0.3, lw=0.5)
        ax.tick_params(labelsize=8)
        if p == 'cpu':
            ys = [np.nan_to_num(data.series(_cpu_col(f)), nan=0.0) for f in what]
            polys = ax.stackplot(x, ys, labels=[_cpu_col(f) for f in what],
                                 colors=[CPU_COLORS[CPU_FIELDS.index(f)] for f in what], lw=0)
            for poly, f in zip(polys, what):
                poly.set_gid(_cpu_col(f))
            ax.set_ylim(0, 100)
            ax.set_ylabel('%', fontsize=8)
        elif p in ('load', 'cswch'):
            for c in what:
                ax.plot(x, data.series(c), lw=0.8, label=LOAD_LABELS.get(c, c))
            ax.set_ylim(bottom=0)
        elif p in ('disk-util', 'disk-aqu'):
            names, total = what
            for c in names:
                ax.plot(x, data.series(c), lw=0.8, label=c)
            if total > len(names):
                ax.set_title(TITLES[p] + ' (the %d busiest of %d disks)' % (len(names), total),
                             loc='left', fontsize=10)
            ax.set_ylim(bottom=0)
            if p == 'disk-util':
                ax.set_ylim(0, max(100.0, float(np.nanmax(np.append(data.means[:, [data.index[c] for c in names]], 0)))))
        elif p == 'net':
            ifaces, total = what
            for k, (i, cs) in enumerate(ifaces):
                color = 'C%d' % (k % 10)
                for c in cs:
                    ax.plot(x, data.series(c), lw=0.8, color=color, ls='-' if ids[c].field == 'rxkB/s' else '--', label=c)
            if total > len(ifaces):
                ax.set_title(TITLES[p] + ' (the %d busiest of %d interfaces)' % (len(ifaces), total),
                             loc='left', fontsize=10)
            ax.set_ylim(bottom=0)
        else:
            rows = what
            z = np.ma.masked_invalid(np.vstack([r[1] for r in rows]))
            ax.grid(False)
            mesh = ax.pcolormesh(edges, np.arange(len(rows) + 1), z, cmap='viridis', shading='flat',
                                 vmin=0, vmax=max(1.0, float(z.max()) if z.count() else 1.0))
            mesh.set_gid('heatmap:' + p)
            mesh.set_rasterized(True)   # an image inside an SVG or PDF, not thousands of quads
            ax.set_yticks(np.arange(len(rows)) + 0.5)
            ax.set_yticklabels([_short(r[0]) for r in rows], fontsize=8 if len(rows) <= 24 else 5.5)
            ax.set_ylim(len(rows), 0)   # the first row (largest mean) at the top
            ax.grid(False)
            cax = ax.inset_axes([1.01, 0.0, 0.012, 1.0])
            cb = fig.colorbar(mesh, cax=cax)
            cb.ax.tick_params(labelsize=7)
            cb.set_label('%', fontsize=8)
        if p not in ('vm-cpu', 'vm-steal'):
            handles, labels = ax.get_legend_handles_labels()
            if handles:
                if p == 'cpu':
                    handles, labels = handles[::-1], labels[::-1]
                ax.legend(handles, labels, loc='upper left', bbox_to_anchor=(1.005, 1.0), fontsize=7,
                          frameon=False, ncol=1 if len(labels) <= 10 else 2)
    _events(data, axes, fig)
    loc = mdates.AutoDateLocator(tz=tz)
    axes[-1].xaxis.set_major_locator(loc)
    axes[-1].xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc, tz=tz))
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    span = list(edges[:1]) + list(x[-1:]) + list(_dates([e.t_us for e in data.events]))
    if span:
        lo, hi = min(span), max(span)
        axes[0].set_xlim(lo, hi if hi > lo else lo + 1e-6)
    dur = (data.t_us[-1] - data.edges_us[0]) / 1e6 if len(data.t_us) else 0
    head = title or os.path.basename(data.path)
    sub = '%d intervals over %s (mean interval %s)' % (data.nrows, _fmt_duration(dur),
                                                       _fmt_duration(data.mean_interval))
    if data.k > 1:
        sub += '; each point is the mean of %d intervals' % data.k
    if data.events:
        sub += '; %d events' % len(data.events)
    if tz is not None:
        sub += '; times in UTC%s' % _tzname(tz)
    fig.suptitle(head + '\n' + sub, fontsize=11, x=0.06, y=1 - 0.15 / (sum(heights) + 1.2), ha='left', va='top')
    return fig


def _tzname(tz):
    off = tz.utcoffset(None)
    if off is None or not off:
        return ''
    m = int(off.total_seconds() // 60)
    return '%+03d:%02d' % (m // 60, abs(m) % 60) if m >= 0 else '-%02d:%02d' % (-m // 60, -m % 60)


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter('ignore', RuntimeWarning)

    def __exit__(self, *a):
        return self._w.__exit__(*a)


EVENT_STYLE = {  # by type: colour
    6: '#d62728',                                  # mark
}
MAX_EVENT_LABELS = 60


def _event_color(e):
    if e.type in EVENT_STYLE:
        return EVENT_STYLE[e.type]
    if 16 <= e.type <= 24:
        return '#2ca02c'
    if e.type in (1, 32):
        return '#ff7f0e'
    return '#7f7f7f'


def _events(data, axes, fig):
    if not data.events:
        return
    xs = _dates([e.t_us for e in data.events])
    for e, xe in zip(data.events, xs):
        c = _event_color(e)
        for ax in axes:
            ln = ax.axvline(xe, color=c, lw=0.8, alpha=0.8, ls='-' if e.type == 6 else ':', zorder=5)
            ln.set_gid('event')
            ln.set_label('_event ' + e.label())
    # labels on the top panel: marks first, then the rest in time order
    order = sorted(range(len(data.events)), key=lambda i: (data.events[i].type != 6, i))
    top = axes[0]
    import matplotlib.transforms as mtrans
    tr = mtrans.blended_transform_factory(top.transData, top.transAxes)
    for i in order[:MAX_EVENT_LABELS]:
        e = data.events[i]
        t = top.text(xs[i], 0.98, ' ' + _short(e.label(), 40), transform=tr, rotation=90, va='top',
                     ha='left', fontsize=6.5, color=_event_color(e), clip_on=True,
                     bbox=dict(facecolor='white', alpha=0.7, lw=0, pad=0.6))
        t.set_gid('event-label')


def overlay(a, b, column='cpu.all.%usr', align_a=None, align_b=None, labels=('A', 'B'), title=None):
    """Two runs on one figure (report --compare's picture): column's
    per-interval rates (vmsampler.rates, no C tools) against the seconds
    from the alignment point of each run (align_*: None the first frame,
    or a t_mono_ns such as a mark's from dump --events), and beside them
    the two distributions (empirical CDFs, the means dashed).  Returns the
    Figure; its lines carry gid 'overlay-a'/'overlay-b' and 'cdf-a'/'cdf-b'."""
    import matplotlib.pyplot as plt
    from . import rates
    fig, (ax, axd) = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={'width_ratios': [3, 1]})
    for path, align, label, side, color in ((a, align_a, labels[0], 'a', '#1f77b4'),
                                            (b, align_b, labels[1], 'b', '#d62728')):
        ivs = list(rates.intervals(path))
        if not ivs:
            continue
        t0 = ivs[0].prev_mono_ns if align is None else align
        x = np.array([(iv.t_mono_ns - t0) / 1e9 for iv in ivs])
        y = np.array([iv.values.get(column, np.nan) for iv in ivs], dtype=float)
        ln, = ax.plot(x, y, color=color, lw=1, label='%s (mean %.2f)' % (label, np.nanmean(y)))
        ln.set_gid('overlay-' + side)
        v = np.sort(y[~np.isnan(y)])
        if len(v):
            c, = axd.step(v, np.arange(1, len(v) + 1) / len(v), where='post', color=color, label=label)
            c.set_gid('cdf-' + side)
            axd.axvline(v.mean(), color=color, ls='--', lw=0.8)
    ax.axvline(0, color='grey', lw=0.6)
    ax.set_xlabel('seconds from ' + ('the start' if align_a is None and align_b is None else 'the alignment point'))
    ax.set_ylabel(column)
    ax.legend(fontsize=8)
    axd.set_xlabel(column)
    axd.set_ylabel('share of intervals')
    axd.set_title('distribution', fontsize=9)
    fig.suptitle(title or '%s: %s against %s' % (column, labels[1], labels[0]), fontsize=10)
    fig.tight_layout()
    return fig


def save(fig, out):
    ext = os.path.splitext(out)[1].lower()
    if ext not in ('.png', '.svg', '.pdf'):
        raise ValueError('%s: the output must end in .png, .svg or .pdf' % out)
    fig.savefig(out, dpi=110 if ext == '.png' else None)


def main(args):
    data = RunData(args.run, panels=args.panels, max_points=args.max_points, vmsampler=args.vmsampler)
    fig = build(data, title=args.title)
    save(fig, args.output)
    return 0

