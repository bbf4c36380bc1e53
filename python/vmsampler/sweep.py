# SPDX-License-Identifier: MIT
"""python3 -m vmsampler sweep runs/*.vms -o sweep.png --by vms: metrics
against the number of VMs (or another label), one point per run.

Each run is read once through `vmsampler dump --rates` (its rates, every
interval, not binned) and gets:

  a label   --by vms: the number of VMs with a value (vm.NAME.%cpu) in an
            interval, the most frequent such number over the run's
            intervals (ties: the larger); --by mark: its first mark
            (`vmsampler mark`): the first number in the text, else the
            text; --label L1,L2,...: given, one per run, in order
  per metric  n (intervals with a value), the mean, p5 and p95 (linear
            interpolation between order statistics: numpy's default,
            Excel's PERCENTILE.INC)

Metrics are rate columns or fnmatch patterns over them; cpu.X.%busy is
derived: 100 - %idle - %iowait of cpu.X (the CPU neither idle nor waiting
for I/O).  The defaults: cpu.all.%busy, load.1m, stat.cswch/s,
disk.*.%util.
"""

import csv
import fnmatch
import re
import sys

import numpy as np

from . import catalog, tool

DEFAULT_METRICS = ['cpu.all.%busy', 'load.1m', 'stat.cswch/s', 'disk.*.%util']
_NUM = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?')


def _metric_list(metrics):
    out = []
    for m in metrics or DEFAULT_METRICS:
        out.extend(x.strip() for x in m.split(',') if x.strip())
    return out


def _vm_cpu(name):
    """A VM's %cpu (its count is --by vms' label), by the column's identity."""
    i = catalog.rate_id(name)
    return i.group == 'vm' and i.field == '%cpu'


def _cpu(name, field):
    """The CPU's column `field` of a CPU's rate column `name`, else None."""
    i = catalog.rate_id(name)
    return catalog.colname('cpu', i.entity, '', field) if i.group == 'cpu' else None


def _expand(globs, header):
    """The metrics (names) that the globs select, among the rate columns
    and the derived cpu.X.%busy, in the globs' order, then the header's."""
    avail = list(header)
    for h in header:
        if catalog.rate_id(h).field == '%idle' and _cpu(h, '%iowait') in header:
            avail.append(_cpu(h, '%busy'))
    out = []
    for g in globs:
        for a in avail:
            if fnmatch.fnmatchcase(a, g) and a not in out:
                out.append(a)
    return out


class RunStats:
    """One run: .label, .vms (the VM count label), .first_mark, and per
    metric .stats[name] = (n, mean, p5, p95)."""

    def __init__(self, path, metrics=None, vmsampler=None, warn=tool.default_warn):
        self.path = path
        warn = tool.once(warn)
        globs = _metric_list(metrics)

        def select(name):
            if _vm_cpu(name):
                return True
            busy = None
            if catalog.rate_id(name).field in ('%idle', '%iowait'):  # a derived %busy needs both
                busy = _cpu(name, '%busy')
            return any(fnmatch.fnmatchcase(name, g) or (busy and fnmatch.fnmatchcase(busy, g)) for g in globs)

        rs = tool.RateStream(path, select=select, vmsampler=vmsampler, warn=warn)
        chunks = []
        for ch in rs:
            v = np.asarray(ch.values, dtype=np.float64).reshape(len(ch.values), len(rs.columns))
            chunks.append(v)
        cols = rs.columns or []
        ix = {c: i for i, c in enumerate(cols)}
        data = np.vstack(chunks) if chunks else np.zeros((0, len(cols)))
        vmcols = [ix[c] for c in cols if _vm_cpu(c)]
        vm_counts = (~np.isnan(data[:, vmcols])).sum(axis=1) if vmcols else np.zeros(len(data), dtype=int)
        self.nrows = len(data)
        self.vms = _mode(vm_counts) if len(vm_counts) else 0
        self.vm_counts = vm_counts
        self.metrics = _expand(globs, cols)
        self.stats = {}
        for m in self.metrics:
            if m in ix:
                x = data[:, ix[m]]
            else:  # cpu.X.%busy
                x = 100.0 - data[:, ix[_cpu(m, '%idle')]] - data[:, ix[_cpu(m, '%iowait')]]
            x = x[~np.isnan(x)]
            if len(x):
                p5, p95 = np.percentile(x, [5, 95])
                self.stats[m] = (len(x), float(np.mean(x)), float(p5), float(p95))
            else:
                self.stats[m] = (0, None, None, None)
        self.first_mark = None
        for e in tool.events(path, vmsampler=vmsampler, warn=warn):
            if e.type == 6:
                self.first_mark = e.subject
                break
        self.label = self.vms


def _mode(counts):
    vals, n = np.unique(np.asarray(counts), return_counts=True)
    best = n.max()
    return int(vals[n == best].max())


def mark_label(text):
    """A mark's text as a label: its first number, else the text."""
    if text is None:
        return None
    m = _NUM.search(text)
    if not m:
        return text
    v = float(m.group(0))
    return int(v) if v.is_integer() else v


def sweep(paths, by=None, labels=None, metrics=None, vmsampler=None, warn=tool.default_warn):
    """RunStats of each run, labelled."""
    if labels is not None:
        if isinstance(labels, str):
            labels = [x.strip() for x in labels.split(',')]
        if len(labels) != len(paths):
            raise ValueError('--label gives %d labels for %d runs' % (len(labels), len(paths)))
        by = 'label'
    by = by or 'vms'
    if by == 'label' and labels is None:
        raise ValueError('--by label needs --label L1,L2,...')
    runs = []
    for i, p in enumerate(paths):
        r = RunStats(p, metrics=metrics, vmsampler=vmsampler, warn=warn)
        if by == 'label':
            r.label = _num_or_text(labels[i])
        elif by == 'mark':
            r.label = mark_label(r.first_mark)
            if r.label is None:
                raise ValueError('%s: no mark in this run (--by mark)' % p)
        runs.append(r)
    return runs, by


def _num_or_text(s):
    try:
        v = float(s)
    except ValueError:
        return s
    return int(v) if v.is_integer() else v


def table(runs):
    """Rows of the table: run, label, metric, n, mean, p5, p95."""
    rows = []
    for r in runs:
        for m in r.metrics:
            n, mean, p5, p95 = r.stats[m]
            rows.append([r.path, r.label, m, n, mean, p5, p95])
    return rows


def write_csv(runs, out):
    fh = sys.stdout if out == '-' else open(out, 'w', newline='')
    try:
        w = csv.writer(fh, lineterminator='\n')
        w.writerow(['run', 'label', 'metric', 'n', 'mean', 'p5', 'p95'])
        for row in table(runs):
            w.writerow(['' if v is None else repr(v) if isinstance(v, float) else v for v in row])
    finally:
        if fh is not sys.stdout:
            fh.close()


XLABEL = {'vms': 'VMs running', 'mark': 'mark', 'label': 'label'}


def build(runs, by='vms', title=None):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    metrics = []
    for r in runs:
        for m in r.metrics:
            if m not in metrics:
                metrics.append(m)
    if not metrics:
        raise ValueError('none of the metrics is in these runs')
    numeric = all(isinstance(r.label, (int, float)) for r in runs)
    cats = None
    if not numeric:
        cats = []
        for r in runs:
            if str(r.label) not in cats:
                cats.append(str(r.label))
    ncol = 2 if len(metrics) > 1 else 1
    nrow = (len(metrics) + ncol - 1) // ncol
    fig, axs = plt.subplots(nrow, ncol, figsize=(6.2 * ncol, 3.2 * nrow + 0.8), squeeze=False)
    for k, m in enumerate(metrics):
        ax = axs[k // ncol][k % ncol]
        pts = []
        for r in runs:
            st = r.stats.get(m)
            if st and st[0]:
                x = r.label if numeric else cats.index(str(r.label))
                pts.append((x, st[1], st[2], st[3], r))
        pts.sort(key=lambda p: p[0])
        ax.set_title(m, loc='left', fontsize=10)
        ax.set_gid('vms-metric:' + m)
        ax.grid(True, alpha=0.3, lw=0.5)
        ax.tick_params(labelsize=8)
        if pts:
            xs = np.array([p[0] for p in pts], dtype=float)
            mean = np.array([p[1] for p in pts])
            p5 = np.array([p[2] for p in pts])
            p95 = np.array([p[3] for p in pts])
            band = ax.fill_between(xs, p5, p95, alpha=0.2, color='C0', lw=0, label='p5\u2013p95')
            band.set_gid('band')
            ax.errorbar(xs, mean, yerr=[np.maximum(mean - p5, 0), np.maximum(p95 - mean, 0)], fmt='none', ecolor='C0', elinewidth=0.8,
                        capsize=3)
            ax.plot(xs, p5, ls='--', lw=0.6, color='C0', label='_p5', gid='p5')
            ax.plot(xs, p95, ls='--', lw=0.6, color='C0', label='_p95', gid='p95')
            ax.plot(xs, mean, 'o-', lw=1.2, ms=4, color='C0', label='mean', gid='mean')
            ax.legend(fontsize=7, loc='best', frameon=False)
        if not numeric:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels(cats, fontsize=8, rotation=30 if max(len(c) for c in cats) > 6 else 0)
        ax.set_xlabel(XLABEL.get(by, by), fontsize=8)
        if catalog.rate_id(m).field in ('%busy', '%util'):
            ax.set_ylim(bottom=0)
    for k in range(len(metrics), nrow * ncol):
        axs[k // ncol][k % ncol].set_visible(False)
    fig.suptitle(title or 'sweep of %d runs: mean and p5\u2013p95 per run' % len(runs), fontsize=11)
    fig.tight_layout()
    return fig


def main(args):
    if not args.output and not args.csv:
        raise ValueError('nothing to write: give -o FIGURE and/or --csv FILE')
    runs, by = sweep(args.runs, by=args.by, labels=args.label, metrics=args.metric,
                     vmsampler=args.vmsampler)
    if args.csv:
        write_csv(runs, args.csv)
    if args.output:
        from .plot import save
        save(build(runs, by=by), args.output)
    return 0

