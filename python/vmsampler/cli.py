# SPDX-License-Identifier: MIT
"""vmsampler-py / python3 -m vmsampler: figures, sweeps and Parquet from
vmsampler's binary streams.

    python3 -m vmsampler plot run.vms -o run.png          # .png, .svg or .pdf
    python3 -m vmsampler sweep runs/*.vms -o sweep.png --by vms
    python3 -m vmsampler parquet run.vms run.parquet      # --wide for one column per counter

Rates come from `vmsampler dump --rates` (the C program: on PATH, or
--vmsampler PATH, or $VMS_BIN).
"""

import argparse
import sys

from . import __version__, tool


def _parser():
    ap = argparse.ArgumentParser(prog='vmsampler-py', description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--version', action='version', version='vmsampler-py ' + __version__)
    sub = ap.add_subparsers(dest='cmd', metavar='COMMAND')
    sub.required = True

    def common(p):
        p.add_argument('--vmsampler', metavar='PATH', help='the vmsampler program (default: $VMS_BIN, '
                       'else vmsampler on PATH)')

    from .panels import PANELS
    p = sub.add_parser('plot', help='one figure of a whole run',
                       description='One figure of a run: host CPU, load, context switches and interrupts, '
                       'disks, network, per-VM CPU and steal heatmaps, events and marks.')
    p.add_argument('run', metavar='RUN', help='a .vms stream (or a ring file)')
    p.add_argument('-o', '--output', required=True, metavar='OUT',
                   help='the figure: .png, .svg or .pdf, by the extension')
    p.add_argument('--panels', metavar='LIST', help='comma-separated, in this order (default: all): '
                   + ','.join(PANELS))
    p.add_argument('--max-points', type=int, default=2000, metavar='N',
                   help='at most N points per series: longer runs are averaged into N..N/2 bins (default 2000)')
    p.add_argument('--title', help='the figure title (default: the file name)')
    common(p)

    p = sub.add_parser('sweep', help='metrics against the number of VMs (or a label), several runs',
                       description='Mean and p5-p95 of metrics per run, against each run\'s label: '
                       'the number of running VMs (--by vms), the text of its first mark (--by mark), '
                       'or --label.')
    p.add_argument('runs', metavar='RUN', nargs='+', help='.vms streams')
    p.add_argument('-o', '--output', metavar='OUT', help='the figure (.png, .svg, .pdf)')
    p.add_argument('--csv', metavar='FILE', help='the table as CSV (- for standard output)')
    p.add_argument('--by', choices=['vms', 'mark', 'label'], default=None,
                   help='the label of a run: vms (VMs with values, the most frequent count over its '
                   'intervals; the default), mark (its first mark: a number in it, else the text), label (--label)')
    p.add_argument('--label', metavar='L1,L2,...', help='one label per run, in order (implies --by label)')
    p.add_argument('--metric', action='append', metavar='GLOB',
                   help='a rate column or fnmatch pattern (repeatable or comma-separated); cpu.all.%%busy '
                   'is 100 - %%idle - %%iowait. Default: cpu.all.%%busy,load.1m,stat.cswch/s,disk.*.%%util')
    common(p)

    p = sub.add_parser('parquet', help='a .vms stream (or ring) to Parquet, for DuckDB, pandas, warehouses',
                       description='Raw values to Parquet: counters as exact uint64, a missing value as '
                       'null. Long layout (one row per frame and column: time, seq, entity, metric, value, '
                       'scale, unit, kind, key) unless --wide (one column per column of the run).')
    p.add_argument('run', metavar='RUN')
    p.add_argument('out', metavar='OUT.parquet')
    p.add_argument('--wide', action='store_true', help='one row per frame, one column per counter')
    p.add_argument('--compression', default='zstd', help='zstd (default), snappy, gzip, none')
    common(p)
    return ap


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.cmd == 'plot':
            from . import plot
            return plot.main(args)
        if args.cmd == 'sweep':
            from . import sweep
            return sweep.main(args)
        from . import parquet
        return parquet.main(args)
    except (tool.ToolError, ValueError, OSError) as e:
        print('vmsampler-py %s: %s' % (args.cmd, e), file=sys.stderr)
        return 1
    except ImportError as e:
        print('vmsampler-py %s: %s (pip install \'vmsampler[parquet]\' for Parquet; numpy and matplotlib '
              'for figures)' % (args.cmd, e), file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
