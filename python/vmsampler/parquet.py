# SPDX-License-Identifier: MIT
"""python3 -m vmsampler parquet RUN.vms OUT.parquet [--wide]: raw values to
Parquet (pyarrow), for DuckDB, pandas and warehouses.

The frames are read as `vmsampler tail RUN --no-follow` prints them (the
same CSV as `vmsampler dump`, byte for byte, with a new header line where
a new schema generation changes the columns, so that every generation's
columns arrive through one pipe), in blocks, and written as they come:
memory stays bounded whatever the length of the run.  A ring file works
too (its current frames).

Long layout (the default), one row per frame and column:

  time     timestamp[us, UTC]   the frame's wall-clock time (dump's time)
  seq      uint64               the frame's number
  entity   string (dictionary)  cpu.all, disk.sda, net.eth0, vm.NAME, stat, load ...
  metric   string (dictionary)  user, rd_ios, rx_bytes, cpu_time, vcpu0.delay, ctxt, 1m ...
  value    uint64               the raw value, exactly as recorded; null when missing
  scale    int8                 the value is value / 10^scale (2 for load.*, else 0)
  unit     string (dictionary)  count, ticks, ns, bytes, KiB, sectors, load ...
  kind     string (dictionary)  counter or gauge
  key      string (dictionary)  the entity key (a VM's UUID), null if none

entity + '.' + metric is the column's name (entity alone for a column the
catalogue does not know); both come from the column's identity in the file
(derived from the name for a file of format 1.0 or 1.1).  --wide: one row per frame:
time, seq, t_mono_ns, gen, flags, missed_ticks, lost_frames, late_ns,
self_cpu_ns, then one column per column of the run (every generation's,
null where a generation lacks it): uint64 (counters, and gauges without a
scale) or float64 (gauges with a scale: load.1m is 0.4 for a recorded 40).

Counters stay exact 64-bit integers, a missing value is null, never 0.
Both layouts carry pandas metadata so that pandas.read_parquet() gives
nullable UInt64 columns (not float64) for them.
"""

import csv
import json
import os
import queue
import subprocess
import tempfile
import threading

import numpy as np

from . import FormatError, __version__, catalog, schemas, tool
from . import host as _host_of

UNITS = ['none', 'count', 'ticks', 'ns', 'us', 'ms', 'bytes', 'KiB', 'sectors', 'pages', 'tasks', 'load',
         'state', 'ns_realtime']
KINDS = {1: 'counter', 2: 'gauge'}
META_TYPES = [('seq', 'uint64'), ('time', 'time'), ('t_mono_ns', 'uint64'), ('gen', 'uint32'),
              ('flags', 'uint32'), ('missed_ticks', 'uint32'), ('lost_frames', 'uint32'),
              ('late_ns', 'uint64'), ('self_cpu_ns', 'uint64')]
META = [m for m, _ in META_TYPES]
_ENT2 = ('cpu', 'disk', 'net', 'perf')
ROW_GROUP_CELLS = 8 << 20


def entity_metric(name, cid):
    """(entity, metric) of a column from its identity (catalog.ColId):
    a VM's columns -> (vm.NAME, the rest); cpu, disk, net, perf ->
    (GROUP.ENTITY, field); the host's other groups -> (GROUP, the rest);
    a column the catalogue does not know -> (its name, '')."""
    g = catalog.BY_NAME.get(cid.group)
    if g is None:
        return name, ''
    head = g[1]
    ent = head + cid.entity if head == 'vm.' or cid.group in _ENT2 else head[:-1]
    return ent, name[len(ent) + 1:]


class ColInfo:
    __slots__ = ('name', 'entity', 'metric', 'kind', 'unit', 'scale', 'key')


def column_info(path):
    """name -> ColInfo for every column of every schema in the run, in
    order of first appearance."""
    info = {}
    for s in schemas(path):
        for c in s.cols:
            if c.name in info:
                continue
            ci = ColInfo()
            ci.name = c.name
            ci.entity, ci.metric = entity_metric(c.name, c.id)
            ci.kind = KINDS.get(c.kind, 'kind%d' % c.kind)
            ci.unit = UNITS[c.unit] if c.unit < len(UNITS) else 'unit%d' % c.unit
            ci.scale = c.scale
            ci.key = c.key or None
            info[c.name] = ci
    return info


def _unknown(name):
    ci = ColInfo()
    ci.name = name
    ci.entity, ci.metric = entity_metric(name, catalog.derive(name))  # not in the schemas
    ci.kind, ci.unit, ci.scale, ci.key = None, None, 0, None
    return ci


def _grown(buf, have):
    """A buffer twice as large with the first `have` bytes of buf (buf
    itself may still be exported to a piece: it is never resized)."""
    nb = bytearray(2 * len(buf))
    nb[:have] = buf[:have]
    return nb, memoryview(nb)


def _csv_blocks(stream, block_bytes):
    """(header, memoryview) pieces of a CSV stream with header lines inside
    it (each starts with 'seq,time,'): every piece is whole lines under
    one header.  One buffer is reused: a piece is valid until the next
    one is asked for."""
    header = None
    buf = bytearray(block_bytes)
    view = memoryview(buf)
    have = 0   # bytes in buf (a partial line carried over first)
    while True:
        got = stream.readinto(view[have:])  # a BufferedReader: fills it, or reads to the end
        end_of_data = not got
        have += got or 0
        if have == 0:
            return
        if end_of_data:
            if buf[have - 1:have] != b'\n':
                if have == len(buf):
                    buf, view = _grown(buf, have)
                buf[have:have + 1] = b'\n'
                have += 1
            cut = have
        else:
            cut = buf.rfind(b'\n', 0, have) + 1
            if cut == 0:  # one line longer than the buffer: a larger one
                buf, view = _grown(buf, have)
                continue
        pos = 0
        while pos < cut:
            if buf.startswith(b'seq,time,', pos):
                end = buf.index(b'\n', pos) + 1
                header = next(csv.reader([bytes(buf[pos:end]).decode('utf-8')]))
                pos = end
                continue
            nxt = buf.find(b'\nseq,time,', pos, cut)
            end = cut if nxt < 0 else nxt + 1
            if header is None:
                raise tool.ToolError('vmsampler tail printed rows before a header')
            yield header, view[pos:end]
            pos = end
        if end_of_data:
            return
        rest = have - cut
        buf[:rest] = buf[cut:have]
        have = rest


def _read_piece(pa, pacsv, header, piece, info):
    types = {}
    for name, t in META_TYPES:
        types[name] = pa.timestamp('us', tz='UTC') if t == 'time' else getattr(pa, t)()
    for h in header[len(META):]:
        ci = info.get(h)
        types[h] = pa.string() if ci is not None and ci.scale else pa.uint64()
    return pacsv.read_csv(
        pa.BufferReader(pa.py_buffer(piece)),
        read_options=pacsv.ReadOptions(column_names=header, block_size=max(1 << 20, len(piece) // 2 + 1)),
        parse_options=pacsv.ParseOptions(newlines_in_values=False),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=[''],
                                             strings_can_be_null=True, quoted_strings_can_be_null=True))


def _raw_of_scaled(pa, pc, arr, scale):
    """dump prints a scaled value with exactly `scale` decimals: without
    the dot it is the raw integer."""
    return pc.cast(pc.replace_substring(arr, '.', ''), pa.uint64())


def _pandas_meta(schema, ext):
    """pandas metadata: pandas.read_parquet() makes the columns named in
    ext nullable extension dtypes (UInt64 ...), keeping them exact."""
    cols = []
    for f in schema:
        t = ext.get(f.name)
        cols.append({'name': f.name, 'field_name': f.name,
                     'pandas_type': t.lower() if t else 'object',
                     'numpy_type': t or 'object', 'metadata': None})
    return json.dumps({'index_columns': [], 'column_indexes': [], 'columns': cols,
                       'creator': {'library': 'vmsampler', 'version': __version__},
                       'pandas_version': '1.5.3'}).encode()


class Writer:
    def __init__(self, path, out, wide=False, compression='zstd', vmsampler=None, warn=tool.default_warn,
                 block_bytes=4 << 20):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
        self.pa, self.pc, self.pacsv, self.pq = pa, pc, pacsv, pq
        self.path, self.out, self.wide = path, out, wide
        # the recorded host's identity (the HOST record) in the file's
        # metadata, b'vmsampler' -> 'host'; {} for an older run or a CSV
        try:
            self.host = _host_of(path)
        except (FormatError, OSError, ValueError):
            self.host = {}
        self.compression = None if compression in (None, 'none') else compression
        self.bin = tool.find_bin(vmsampler)
        self.warn = warn
        # CSV read and reshaped a block at a time: each block's work
        # arrays (the long layout: ~20 bytes a value, times the blocks in
        # flight: being read, waiting, being written) set the peak RSS;
        # 4 MiB: 400 MiB on 45k frames x 293 columns, 16 MiB: 480-520 MiB,
        # for the same CPU time (bench/python/load.sh)
        self.block_bytes = block_bytes
        self.info = column_info(path)
        self.rows = self.frames = 0

    # -- the layouts ------------------------------------------------------------------

    def _schema(self):
        pa = self.pa
        if self.wide:
            fields = []
            for name, t in META_TYPES:
                fields.append(pa.field(name, pa.timestamp('us', tz='UTC') if t == 'time' else getattr(pa, t)()))
            for ci in self.info.values():
                md = {'kind': ci.kind or '', 'unit': ci.unit or '', 'scale': str(ci.scale), 'key': ci.key or ''}
                fields.append(pa.field(ci.name, pa.float64() if ci.scale else pa.uint64(), metadata=md))
            ext = {f.name: ('UInt64' if f.type == pa.uint64() else 'UInt32' if f.type == pa.uint32() else None)
                   for f in fields}
        else:
            d = pa.dictionary(pa.int32(), pa.string())
            fields = [pa.field('time', pa.timestamp('us', tz='UTC')), pa.field('seq', pa.uint64()),
                      pa.field('entity', d), pa.field('metric', d), pa.field('value', pa.uint64()),
                      pa.field('scale', pa.int8()), pa.field('unit', d), pa.field('kind', d), pa.field('key', d)]
            ext = {'seq': 'UInt64', 'value': 'UInt64'}
        sch = pa.schema(fields)
        return sch.with_metadata({b'pandas': _pandas_meta(sch, ext),
                                  b'vmsampler': json.dumps({'source': os.path.basename(self.path),
                                                            'layout': 'wide' if self.wide else 'long',
                                                            'version': __version__,
                                                            'host': self.host}).encode()})

    def _dicts(self):
        pa = self.pa
        self._dict = {}
        for attr in ('entity', 'metric', 'unit', 'kind', 'key'):
            vals = []
            idx = {}
            for ci in self.info.values():
                v = getattr(ci, attr)
                if v is not None and v not in idx:
                    idx[v] = len(vals)
                    vals.append(v)
            self._dict[attr] = (idx, vals, pa.array(vals, type=pa.string()))

    def _code(self, attr, v):
        idx, vals, arr = self._dict[attr]
        if v is None:
            return -1
        if v not in idx:  # a column the scan did not see (a ring's older generation)
            idx[v] = len(vals)
            vals.append(v)
            self._dict[attr] = (idx, vals, self.pa.array(vals, type=self.pa.string()))
        return idx[v]

    def _wide_batch(self, t, header):
        pa, pc = self.pa, self.pc
        n = t.num_rows
        cols = [t.column(m) for m in META]
        have = set(header[len(META):])
        for ci in self.info.values():
            if ci.name not in have:
                cols.append(pa.nulls(n, pa.float64() if ci.scale else pa.uint64()))
                continue
            a = t.column(ci.name)
            if ci.scale:
                raw = _raw_of_scaled(pa, pc, a, ci.scale)
                a = pc.divide(pc.cast(raw, pa.float64()), float(10 ** ci.scale))
            cols.append(a)
        return pa.Table.from_arrays(cols, schema=self.schema)

    def _long_batch(self, t, header):
        pa, pc = self.pa, self.pc
        n = t.num_rows
        names = header[len(META):]
        m = len(names)
        V = np.zeros((n, m), dtype=np.uint64)
        M = np.zeros((n, m), dtype=bool)
        codes = {a: np.zeros(m, dtype=np.int32) for a in ('entity', 'metric', 'unit', 'kind', 'key')}
        scales = np.zeros(m, dtype=np.int8)
        for j, name in enumerate(names):
            ci = self.info.get(name) or _unknown(name)
            a = t.column(name)
            if ci.scale:
                a = _raw_of_scaled(pa, pc, a, ci.scale)
            a = a.combine_chunks() if hasattr(a, 'combine_chunks') else a
            if a.null_count:
                M[:, j] = a.is_valid().to_numpy(zero_copy_only=False)
                V[:, j] = a.fill_null(0).to_numpy()
            else:
                M[:, j] = True
                V[:, j] = a.to_numpy()
            for attr in codes:
                codes[attr][j] = self._code(attr, getattr(ci, attr))
            scales[j] = ci.scale
        rep = lambda col: np.repeat(col.to_numpy(), m)  # noqa: E731
        time_us = t.column('time').cast(pa.int64())
        arrays = [pa.array(rep(time_us.combine_chunks()), type=pa.int64()).cast(pa.timestamp('us', tz='UTC')),
                  pa.array(rep(t.column('seq').combine_chunks()), type=pa.uint64())]

        def dict_col(attr):
            c = np.tile(codes[attr], n)
            mask = c < 0
            ind = pa.array(np.where(mask, 0, c), type=pa.int32(), mask=mask if mask.any() else None)
            return pa.DictionaryArray.from_arrays(ind, self._dict[attr][2])

        arrays.append(dict_col('entity'))
        arrays.append(dict_col('metric'))
        valid = M.ravel()
        arrays.append(pa.array(V.ravel(), type=pa.uint64(), mask=None if valid.all() else ~valid))
        arrays.append(pa.array(np.tile(scales, n), type=pa.int8()))
        arrays.append(dict_col('unit'))
        arrays.append(dict_col('kind'))
        arrays.append(dict_col('key'))
        return pa.Table.from_arrays(arrays, schema=self.schema)

    # -- the run ------------------------------------------------------------------------

    def run(self):
        pa, pq = self.pa, self.pq
        if not self.wide:
            self._dicts()
        self.schema = self._schema()
        err = tempfile.TemporaryFile()
        try:
            # buffered: read(n) returns n bytes (or the rest at the end), not
            # the pipe's 64 KiB at a time, so that row groups are not tiny
            proc = subprocess.Popen([self.bin, 'tail', self.path, '--no-follow'], stdout=subprocess.PIPE,
                                    stderr=err, bufsize=1 << 20)
        except OSError as e:
            raise tool.ToolError('%s: %s' % (self.bin, e.strerror)) from None
        proc.errfile = err
        tmp = self.out + '.tmp%d' % os.getpid()
        # long: entity, metric, unit, kind, key are dictionaries; wide: no
        # dictionaries (counters are mostly distinct; a dictionary encoder
        # per column of thousands costs memory and time for nothing)
        # wide: statistics (min/max per row group, for filters) of the frame
        # columns only; those of thousands of counters are kept in memory
        # to the end, in the footer, for little use
        writer = pq.ParquetWriter(tmp, self.schema, compression=self.compression,
                                  use_dictionary=not self.wide,
                                  write_statistics=META if self.wide else True)
        # the Parquet encoding (which releases the GIL) in a thread of its
        # own, while this one parses and reshapes the next block: on 2 CPUs
        # this nearly halves the time; at most 2 batches wait for it
        q = queue.Queue(maxsize=1)
        failed = []

        def write():
            while True:
                b = q.get()
                if b is None:
                    return
                try:
                    if not failed:
                        writer.write_table(b, row_group_size=1 << 20)
                except Exception as e:  # noqa: BLE001 - handed to the main thread
                    failed.append(e)

        th = threading.Thread(target=write, name='parquet-writer', daemon=True)
        th.start()
        ok = False
        acc, nacc = [], 0
        try:
            for header, piece in _csv_blocks(proc.stdout, self.block_bytes):
                if failed:
                    break
                t = _read_piece(pa, self.pacsv, header, piece, self.info)
                b = self._wide_batch(t, header) if self.wide else self._long_batch(t, header)
                del t
                self.frames += b.num_rows if self.wide else b.num_rows // max(1, len(header) - len(META))
                self.rows += b.num_rows
                # row groups of some 8 million values at least: each row
                # group costs footer metadata per column (kept in memory to
                # the end), which thousands of columns make large
                acc.append(b)
                nacc += b.num_rows
                del b
                if nacc * len(self.schema) >= ROW_GROUP_CELLS:
                    q.put(pa.concat_tables(acc))
                    acc, nacc = [], 0
            if acc and not failed:
                q.put(pa.concat_tables(acc))
            acc = []
            ok = not failed
        finally:
            q.put(None)
            th.join()
            writer.close()
            if not ok:
                proc.kill()
                proc.wait()
                os.unlink(tmp)
        if failed:
            raise failed[0]
        tool._finish(proc, 'vmsampler tail', self.warn)
        os.replace(tmp, self.out)
        return self


def convert(path, out, wide=False, compression='zstd', vmsampler=None, warn=tool.default_warn):
    """Write RUN's frames to OUT as Parquet; returns the Writer (.frames,
    .rows)."""
    return Writer(path, out, wide=wide, compression=compression, vmsampler=vmsampler, warn=warn).run()


def main(args):
    convert(args.run, args.out, wide=args.wide, compression=args.compression, vmsampler=args.vmsampler)
    return 0
