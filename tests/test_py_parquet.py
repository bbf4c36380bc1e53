#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python3 -m vmsampler parquet: every value of the Parquet file, read back
with pyarrow, pandas and DuckDB, against `vmsampler dump` of the same
recorded run, in both layouts:
  - a run on a proc root whose net/dev holds counters above 2^53 and 2^63
    (2^53 + 1 has no double: a float anywhere would show) and VMs from
    libvirt's test driver, whose slow values (balloon, block) are missing
    in most frames: every cell equal to dump's (the raw integer; load.*
    with its scale), null exactly where dump's cell is empty;
  - pandas.read_parquet gives nullable UInt64 (not float64), DuckDB
    UBIGINT, both with the exact big counters and NULL/NA for missing;
  - a run whose set of interfaces changes mid-run (two generations): the
    new columns only in the frames of the second (long), null before
    (wide), against dump's per-generation files;
  - a ring file (its current frames) equals dump of the ring;
  - reading in tiny blocks (header lines and rows cut anywhere) writes the
    same table.
Needs pyarrow, pandas and duckdb: runs under the test venv's python
(build/pyvenv, made by scripts/test.sh) when this python lacks them."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

L.require(['pyarrow', 'pandas', 'duckdb', 'numpy'], venv=True)
import pyarrow.parquet as pq  # noqa: E402

from vmsampler import parquet  # noqa: E402

TMP = None
RUN = RING = NEWGEN = None
BIG = {'net.big0.rx_bytes': 2 ** 63 + 1234567, 'net.big0.rx_packets': 2 ** 53 + 1,
       'net.big0.tx_bytes': 2 ** 64 - 2}
META = ['seq', 'time', 't_mono_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames', 'late_ns', 'self_cpu_ns']


def setUpModule():
    global TMP, RUN, RING, NEWGEN
    TMP = tempfile.mkdtemp(prefix='vms-pyparquet.')
    nd = (L.NETDEV_HEAD + L.netdev_line('lo', [100, 2, 0, 0, 0, 0, 0, 0, 100, 2, 0, 0, 0, 0, 0, 0])
          + L.netdev_line('big0', [BIG['net.big0.rx_bytes'], BIG['net.big0.rx_packets'], 0, 0, 0, 0, 0, 0,
                                   BIG['net.big0.tx_bytes'], 5, 0, 0, 0, 0, 0, 0]))
    root = L.proc_root(TMP, netdev=nd)
    env = L.testdrv_env(TMP, 2) if L.have_libvirt() else L.host_env()
    cfg = os.path.join(TMP, 'c.yaml')
    with open(cfg, 'w') as f:
        f.write('sources:\n  libvirt:\n    refresh: 1s\n' if L.have_libvirt() else '{}\n')
    RUN = os.path.join(TMP, 'run.vms')
    RING = os.path.join(TMP, 'ring')
    L.run([L.BIN, '-q', '-c', cfg, '--proc-root', root, '-i', '50ms', '-n', '60', '--ring', RING, '-o', RUN],
          env=env)
    # an interface appears mid-run: a second generation
    root2 = L.proc_root(TMP)
    NEWGEN = os.path.join(TMP, 'newgen.vms')
    p = subprocess.Popen([L.BIN, '-q', '--proc-root', root2, '-i', '10ms', '-n', '120', '-o', NEWGEN],
                         env=L.host_env())
    time.sleep(0.5)
    with open(os.path.join(root2, 'net', 'dev'), 'a') as f:
        f.write(L.netdev_line('newif0', [2 ** 60, 10, 0, 0, 0, 0, 0, 0, 2000, 20, 0, 0, 0, 0, 0, 0]))
    assert p.wait(timeout=60) == 0


def tearDownModule():
    subprocess.run(['rm', '-rf', TMP])


def dump_frames(path):
    """dump's frames as (header, rows), every generation: dump -o rolls
    over to OUT.gN.csv at a change of generation."""
    out = os.path.join(TMP, 'd-%s.csv' % os.path.basename(path))
    d = os.path.dirname(out)
    for f in os.listdir(d):
        if f.startswith(os.path.basename(out)[:-4]):
            os.unlink(os.path.join(d, f))
    L.run([L.BIN, 'dump', path, '-o', out])
    parts = [out] + sorted((os.path.join(d, f) for f in os.listdir(d)
                            if f.startswith(os.path.basename(out)[:-4] + '.g')), key=lambda p: int(p.split('.g')[-1][:-4]))
    frames = []
    import csv
    for p in parts:
        with open(p, newline='') as f:
            rows = list(csv.reader(f))
        for r in rows[1:]:
            frames.append(dict(zip(rows[0], r)))
    return frames


def fmt(v, scale):
    if v is None:
        return ''
    if not scale:
        return str(v)
    return '%d.%0*d' % (v // 10 ** scale, scale, v % 10 ** scale)


class Parquet(unittest.TestCase):
    def convert(self, path, wide, **kw):
        out = os.path.join(TMP, '%s-%s.parquet' % (os.path.basename(path), 'wide' if wide else 'long'))
        w = parquet.convert(path, out, wide=wide, **kw)
        return out, w

    def check_long(self, path):
        out, w = self.convert(path, False)
        t = pq.read_table(out)
        self.assertEqual(str(t.schema.field('value').type), 'uint64')
        d = t.to_pydict()
        got = {}
        for i in range(t.num_rows):
            got[(d['seq'][i], d['entity'][i] + '.' + d['metric'][i])] = (d['value'][i], d['scale'][i])
        frames = dump_frames(path)
        n = nulls = 0
        for fr in frames:
            seq = int(fr['seq'])
            for c, v in fr.items():
                if c in META:
                    continue
                if (seq, c) not in got:
                    self.assertEqual(v, '', '%s in frame %d: in dump, not in the Parquet file' % (c, seq))
                    continue
                val, scale = got.pop((seq, c))
                self.assertEqual(fmt(val, scale), v, '%s frame %d' % (c, seq))
                n += 1
                nulls += val is None
        self.assertEqual(got, {}, 'rows that dump does not have')
        self.assertEqual(w.frames, len(frames))
        return n, nulls, out

    def check_wide(self, path):
        out, w = self.convert(path, True)
        t = pq.read_table(out)
        d = t.to_pydict()
        frames = dump_frames(path)
        self.assertEqual(t.num_rows, len(frames))
        n = 0
        for i, fr in enumerate(frames):
            self.assertEqual(d['seq'][i], int(fr['seq']))
            self.assertEqual(d['t_mono_ns'][i], int(fr['t_mono_ns']))
            self.assertEqual(d['time'][i].isoformat(timespec='microseconds').replace('+00:00', ''),
                             fr['time'].replace('+00:00', ''))
            for c in t.column_names:
                if c in META:
                    continue
                f = t.schema.field(c)
                scale = int(f.metadata[b'scale'])
                v = d[c][i]
                want = fr.get(c, '')
                if v is None:
                    self.assertEqual(want, '', '%s frame %s' % (c, fr['seq']))
                elif scale:
                    self.assertEqual('%.*f' % (scale, v), want, c)
                else:
                    self.assertEqual(str(v), want, c)
                    self.assertEqual(str(f.type), 'uint64')
                n += 1
        return n, out

    def test_long_every_value(self):
        n, nulls, out = self.check_long(RUN)
        self.assertGreater(n, 60 * 100)
        if L.have_libvirt():
            self.assertGreater(nulls, 0, 'the slow values of the VMs are missing in most frames')

    def test_wide_every_value(self):
        n, out = self.check_wide(RUN)
        self.assertGreater(n, 60 * 100)

    def test_big_counters_and_nulls_in_pandas_and_duckdb(self):
        import duckdb
        import pandas as pd
        long_, _ = self.convert(RUN, False)
        wide, _ = self.convert(RUN, True)
        frames = dump_frames(RUN)
        df = pd.read_parquet(long_)
        self.assertEqual(str(df['value'].dtype), 'UInt64')
        for c, v in BIG.items():
            ent, met = c.rsplit('.', 1)
            sel = df[(df['entity'] == ent) & (df['metric'] == met)]['value']
            self.assertEqual(len(sel), len(frames))
            self.assertTrue(all(int(x) == v for x in sel), c)
        empties = sum(1 for fr in frames for c, v in fr.items() if c not in META and v == '')
        self.assertEqual(int(df['value'].isna().sum()), empties)
        w = pd.read_parquet(wide)
        for c, v in BIG.items():
            self.assertEqual(str(w[c].dtype), 'UInt64')
            self.assertEqual([int(x) for x in w[c]], [v] * len(frames))
        self.assertEqual(str(w['load.1m'].dtype), 'float64')
        self.assertEqual(['%.2f' % x for x in w['load.1m']], [fr['load.1m'] for fr in frames])
        for c in w.columns:
            if c not in META and str(w[c].dtype) == 'UInt64':
                self.assertEqual([('' if x is pd.NA else str(int(x))) for x in w[c]],
                                 [fr.get(c, '') for fr in frames], c)
        con = duckdb.connect()
        rows = con.execute("SELECT seq, value FROM read_parquet(?) WHERE entity = 'net.big0' AND metric = 'rx_bytes' "
                           "ORDER BY seq", [long_]).fetchall()
        self.assertEqual(rows, [(int(fr['seq']), BIG['net.big0.rx_bytes']) for fr in frames])
        self.assertEqual(con.execute("SELECT typeof(value) FROM read_parquet(?) LIMIT 1", [long_]).fetchone()[0],
                         'UBIGINT')
        nulls = con.execute('SELECT count(*) - count(value) FROM read_parquet(?)', [long_]).fetchone()[0]
        self.assertEqual(nulls, empties)
        got = con.execute('SELECT "net.big0.rx_packets", "load.1m" FROM read_parquet(?) ORDER BY seq',
                          [wide]).fetchall()
        self.assertEqual(got, [(2 ** 53 + 1, float(fr['load.1m'])) for fr in frames])

    def test_two_generations(self):
        frames = dump_frames(NEWGEN)
        gens = sorted({fr['gen'] for fr in frames})
        self.assertGreaterEqual(len(gens), 2)
        self.assertIn('net.newif0.rx_bytes', frames[-1])
        self.assertNotIn('net.newif0.rx_bytes', frames[0])
        self.check_long(NEWGEN)
        self.check_wide(NEWGEN)
        t = pq.read_table(self.convert(NEWGEN, True)[0]).to_pydict()
        self.assertIsNone(t['net.newif0.rx_bytes'][0])
        self.assertEqual(t['net.newif0.rx_bytes'][-1], 2 ** 60)

    def test_ring(self):
        self.check_long(RING)
        self.check_wide(RING)

    def test_host_in_metadata(self):
        """The recorded host's identity (HOST record) in the Parquet
        file's metadata, b'vmsampler' -> 'host': what dump --info --json
        prints."""
        import json
        import pyarrow.parquet as pqm
        src = L.record(os.path.join(TMP, 'host.vms'), '-i', '50ms', '-n', '3')
        out = os.path.join(TMP, 'host.parquet')
        parquet.convert(src, out)
        meta = json.loads(pqm.read_schema(out).metadata[b'vmsampler'])
        ref = json.loads(subprocess.run([L.BIN, 'dump', '--info', '--json', src], capture_output=True,
                                        text=True, check=True).stdout)
        self.assertEqual(meta['host'], ref)
        self.assertTrue(ref['hostname'])

    def test_synthetic(self):
        """report_gen: 32-bit disk counters near 2^32 that wrap, VMs that
        stop and restart (new generations), balloon values every 60th frame."""
        path = L.synthetic(os.path.join(TMP, 'gen.vms'), 400, 6)
        if path is None:
            self.skipTest('report_gen is not built')
        n, nulls, _ = self.check_long(path)
        self.assertGreater(nulls, 0)
        self.check_wide(path)

    def test_tiny_blocks(self):
        for wide in (False, True):
            a = pq.read_table(self.convert(NEWGEN, wide)[0])
            out = os.path.join(TMP, 'tiny.parquet')
            parquet.Writer(NEWGEN, out, wide=wide, block_bytes=700).run()
            b = pq.read_table(out)
            self.assertTrue(a.equals(b), 'wide' if wide else 'long')

    def test_command(self):
        e = dict(os.environ)
        e['PYTHONPATH'] = os.path.join(L.SRC, 'python')
        out = os.path.join(TMP, 'cli.parquet')
        r = subprocess.run([sys.executable, '-m', 'vmsampler', 'parquet', RUN, out], capture_output=True, text=True,
                           env=e, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(pq.read_table(out).num_rows, pq.read_table(self.convert(RUN, False)[0]).num_rows)
        r = subprocess.run([sys.executable, '-m', 'vmsampler', 'parquet', os.path.join(TMP, 'none.vms'), out],
                           capture_output=True, text=True, env=e, timeout=120)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)


if __name__ == '__main__':
    L.main()
