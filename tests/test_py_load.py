#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler.load() on large streams (issue 23, item 9): the columns asked
for, in bounded memory, equal to `vmsampler dump` of the same file.
  - a synthetic run of 20,000 frames x 369 columns (bench/report/report_gen,
    the sampler's own binary sink: VMs stopping and restarting, hence 8
    schema generations and columns missing in some of them; 32-bit disk
    counters that wrap): load(path, columns=[...]) in a subprocess, whose
    peak resident set (getrusage ru_maxrss) after the call exceeds the one
    before it by less than 4 x the size of the columns loaded (9 bytes a
    value) + 96 MiB (the per-frame decoder needed some 40 x the file for
    this: ~400 MiB); not a timing test;
  - every value and time of those columns equals the C tools' cell (dump's
    CSV, through `tail --no-follow`: empty where dump's is), the frame
    fields too, and the columns are those `tail --columns` picks with the
    same patterns;
  - a run recorded by the sampler on a proc root with counters above 2^53
    and 2^63: every cell of every column of load() equals dump's, exactly;
  - two streams one after the other, as .vms, .vms.zst and followed by
    zeros: every cell of load() is the per-frame decoder's;
  - damage in the middle of the large file: the FormatError names the
    record and offset dump names; a torn tail: every whole frame, as dump;
  - load(columns=) of a name that no frame has: KeyError."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

L.require(['numpy', 'pandas'], venv=True)
import pandas  # noqa: E402

import vmsampler  # noqa: E402

TMP = BIG = None
COLS = ['cpu.all.user', 'load.1m', 'vm.*.cpu_time', 'disk.sda.io_ticks']
FRAME = ['seq', 't_mono_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames', 'late_ns', 'self_cpu_ns']

# the child: RSS before and after load(), and the columns as dump would print them
CHILD = r'''
import json, resource, sys
import numpy, pandas
sys.path.insert(0, sys.argv[1])
import vmsampler
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
df = vmsampler.load(sys.argv[2], columns=json.loads(sys.argv[3]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cols = [c for c in df.columns]
out = {'before_kib': before, 'after_kib': after, 'rows': len(df), 'columns': cols,
       'time_us': [int(t) // 1000 for t in df.index.asi8]}
for c in cols:
    s = df[c]
    if str(s.dtype) == 'float64':
        out[c] = ['' if v != v else repr(float(v)) for v in s.tolist()]
    else:
        out[c] = ['' if v is pandas.NA else str(int(v)) for v in s.tolist()]
json.dump(out, sys.stdout)
'''


def setUpModule():
    global TMP, BIG
    TMP = tempfile.mkdtemp(prefix='vms-pyload.')
    BIG = L.synthetic(os.path.join(TMP, 'big.vms'), 20000, 5, '-c', '8')
    if BIG is None:
        L.skip_or_fail('report_gen is not built (ninja -C build report_gen)', 'VMS_REQUIRE_PY')


def tearDownModule():
    subprocess.run(['rm', '-rf', TMP])


def dump_stream(path, columns=None):
    """The C tools' CSV of path, row by row as dicts: `vmsampler tail PATH
    --no-follow` prints dump's CSV (the same decoder, libvmsampler, the
    same cells) with a header line again at each schema generation that
    changes the columns, where dump to a pipe keeps its first header and
    leaves a later generation's new columns out; --columns the same
    patterns as load(columns=)."""
    argv = [L.BIN, 'tail', path, '--no-follow'] + (['--columns=' + ','.join(columns)] if columns else [])
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        header = None
        with p.stdout:
            for line in p.stdout:
                f = line.rstrip('\n').split(',')  # report_gen's names and the values have no commas
                if f[0] == 'seq':
                    header = f
                    continue
                yield dict(zip(header, f))
        p.wait()
        err.seek(0)
        if p.returncode != 0:
            raise AssertionError('%s: exit %d: %s' % (' '.join(argv), p.returncode, err.read().decode()))


def raw(cell):
    """dump's cell as the raw integer ('0.40' of load.1m is 40), None if empty."""
    return None if cell == '' else int(cell.replace('.', ''))


class Big(unittest.TestCase):
    def test_columns_bounded_and_equal_to_dump(self):
        size = os.path.getsize(BIG)
        r = L.run([sys.executable, '-c', CHILD, os.path.join(L.SRC, 'python'), BIG, json.dumps(COLS)])
        got = json.loads(r.stdout)
        kept = [c for c in got['columns'] if c not in FRAME]
        self.assertIn('cpu.all.user', kept)
        self.assertIn('load.1m', kept)
        self.assertGreaterEqual(len([c for c in kept if c.endswith('.cpu_time')]), 5)
        n = got['rows']
        self.assertEqual(n, 20000)
        # memory: the columns loaded (and the frame fields), not the file
        col_bytes = n * (len(kept) + len(FRAME)) * 9
        grew = (got['after_kib'] - got['before_kib']) * 1024
        bound = 4 * col_bytes + (96 << 20)
        print('load of %d columns of %d frames (%.1f MB file): peak RSS +%.1f MiB (bound %.1f MiB)'
              % (len(kept), n, size / 1e6, grew / 2**20, bound / 2**20), file=sys.stderr)
        self.assertLess(grew, bound)
        # values: every row of dump, every column loaded
        i = -1
        names = set()
        for i, row in enumerate(dump_stream(BIG, COLS)):
            names.update(row)
            self.assertEqual(L.time_us(row['time']), got['time_us'][i])
            for c in FRAME + kept:
                v = got[c][i]
                want = row.get(c, '')
                if c == 'load.1m':
                    self.assertEqual(raw(want), None if v == '' else round(float(v) * 100), (i, c))
                else:
                    self.assertEqual(want, v, (i, c))
        self.assertEqual(i + 1, n)
        self.assertEqual(names - {'time'}, set(FRAME + kept))
        # some VM's cpu_time is missing in some frames (a VM stopped): NA, not 0
        self.assertTrue(any('' in got[c] for c in kept if c.endswith('.cpu_time')))

    def test_damaged_middle_and_torn_tail(self):
        with open(BIG, 'rb') as fh:
            data = bytearray(fh.read())
        bad = os.path.join(TMP, 'bad.vms')
        data[len(data) // 2] ^= 0x10
        with open(bad, 'wb') as fh:
            fh.write(data)
        r = subprocess.run([L.BIN, 'dump', bad], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 1)
        import re
        m = re.search(r'record (\d+) at offset (\d+)', r.stderr)
        self.assertIsNotNone(m, r.stderr)
        with self.assertRaises(vmsampler.FormatError) as cm:
            vmsampler.load(bad, columns=['cpu.all.user'])
        self.assertEqual((cm.exception.record, cm.exception.offset), (int(m.group(1)), int(m.group(2))))
        # torn: cut inside the last records
        data[len(data) // 2] ^= 0x10
        torn = os.path.join(TMP, 'torn.vms')
        with open(torn, 'wb') as fh:
            fh.write(data[:len(data) - 777])
        rows = sum(1 for _ in dump_stream(torn, ['cpu.all.user']))
        df = vmsampler.load(torn, columns=['cpu.all.user'])
        self.assertEqual(len(df), rows)
        self.assertLess(rows, 20000)

    def test_unknown_column(self):
        with self.assertRaises(KeyError):
            vmsampler.load(BIG, columns=['cpu.all.user', 'no.such.column'])
        # a pattern that matches nothing is not an error: the frame fields only
        self.assertEqual(list(vmsampler.load(BIG, columns=['nothing.*']).columns), FRAME)


class Shapes(unittest.TestCase):
    def test_concatenated_compressed_zero_tail(self):
        """Two streams one after the other (a header mid-file: the
        generations start again), the same as a .vms.zst, and a stream
        followed by zeros: the DataFrame's cells are the per-frame
        decoder's (load(pandas=False)), every frame and column."""
        a = L.synthetic(os.path.join(TMP, 'a.vms'), 300, 2, '-c', '2', '-s', '7')
        b = L.synthetic(os.path.join(TMP, 'b.vms'), 700, 3, '-c', '4')
        with open(a, 'rb') as fa, open(b, 'rb') as fb:
            data = fa.read() + fb.read()
        cat = os.path.join(TMP, 'cat.vms')
        zt = os.path.join(TMP, 'zt.vms')
        with open(cat, 'wb') as fh:
            fh.write(data)
        with open(zt, 'wb') as fh:
            fh.write(data + bytes(70000))
        paths = [cat, zt]
        try:
            import zstandard
            with open(cat + '.zst', 'wb') as fh:
                fh.write(zstandard.ZstdCompressor().compress(data))
            paths.append(cat + '.zst')
        except ImportError:
            print('no zstandard module: the .zst case not run', file=sys.stderr)
        for p in paths:
            df = vmsampler.load(p)
            rows = vmsampler.load(p, pandas=False)
            self.assertEqual(len(df), 1000, p)
            self.assertEqual(len(df), len(rows))
            names = [k for k in rows[-1] if k != 't_real_ns']
            self.assertEqual(list(df.columns), list(dict.fromkeys(k for r in rows for k in r if k != 't_real_ns')))
            for c in df.columns:
                col = df[c].tolist()
                for i, r in enumerate(rows):
                    v = r.get(c)
                    got = col[i]
                    if v is None:
                        self.assertTrue(got is pandas.NA or got != got, (p, i, c, got))
                    else:
                        self.assertEqual(got, v, (p, i, c))
            self.assertTrue(names)
            self.assertEqual([t // 1000 for t in df.index.asi8], [r['t_real_ns'] // 1000 for r in rows])


class Exact(unittest.TestCase):
    def test_every_cell_of_a_recorded_run(self):
        """Counters above 2^53 and 2^63 through the sampler: exact."""
        big = {'rx_bytes': 2 ** 63 + 1234567, 'rx_packets': 2 ** 53 + 1, 'tx_bytes': 2 ** 64 - 2}
        nd = (L.NETDEV_HEAD + L.netdev_line('lo', [100, 2, 0, 0, 0, 0, 0, 0, 100, 2, 0, 0, 0, 0, 0, 0])
              + L.netdev_line('big0', [big['rx_bytes'], big['rx_packets'], 0, 0, 0, 0, 0, 0,
                                       big['tx_bytes'], 5, 0, 0, 0, 0, 0, 0]))
        root = L.proc_root(TMP, netdev=nd)
        run = os.path.join(TMP, 'exact.vms')
        L.run([L.BIN, '-q', '--proc-root', root, '-i', '10ms', '-n', '50', '-o', run], env=L.host_env())
        df = vmsampler.load(run)
        rows = list(dump_stream(run))
        self.assertEqual(len(df), len(rows))
        self.assertEqual(int(df['net.big0.rx_bytes'].iloc[0]), big['rx_bytes'])
        self.assertEqual(int(df['net.big0.tx_bytes'].iloc[-1]), big['tx_bytes'])
        cells = 0
        for i, row in enumerate(rows):
            for c, want in row.items():
                if c == 'time':
                    self.assertEqual(L.time_us(want), df.index.asi8[i] // 1000)
                    continue
                v = df[c].iloc[i]
                if str(df[c].dtype) == 'float64':  # load.*: dump prints the scale's decimals
                    self.assertEqual(want, '' if v != v else '%.2f' % v, (i, c))
                else:
                    self.assertEqual(want, '' if v is pandas.NA else str(int(v)), (i, c))
                cells += 1
        self.assertGreater(cells, 50 * 20)


if __name__ == '__main__':
    L.main()
