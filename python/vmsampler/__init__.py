# SPDX-License-Identifier: MIT
"""vmsampler - load what vmsampler writes into Python.

    import vmsampler
    df = vmsampler.load('run.vms')      # binary stream -> pandas DataFrame
    df = vmsampler.load('out.csv')      # CSV (wide layout) -> the same
    df = vmsampler.load('run-20261125T063000Z.vms.zst')  # compressed (rotate, compress: zstd)
    df = vmsampler.load('day.vms', columns=['cpu.all.*', 'vm.*.cpu_time'])  # only these
    for frame in vmsampler.Ring('/dev/shm/vmsampler').follow():
        print(frame.seq, frame['cpu.all.user'])

Standard library only; pandas (and numpy) are used when present: load()
returns a DataFrame indexed by time (the frames' wall-clock time, UTC, to
the microsecond as in the CSV),
otherwise a list of dicts.  Counters keep their exact 64-bit values
(pandas' nullable UInt64); a missing value is NA (None without pandas);
a column with a scale (load.1m: scale 2) is a float.  A stream is then
read in blocks into numpy arrays (vmsampler.columnar): the memory is that
of the columns asked for, not of the file.

The binary decoder follows vmsampler-format(5) (CRC-32C checked, deltas,
keyframes, concatenated streams); a zstd-compressed file (.vms.zst,
.csv.zst: what `compress: zstd` makes of rotated files) is decompressed
first, through the zstandard module (Debian: python3-zstandard; without
it, reading one raises ImportError saying so); the ring reader follows
vmsampler-ring(5) with the same seqlock validation as libvmsampler: a
slot is copied, then its sequence numbers say whether the copy is whole.

The figures, sweeps and Parquet export (python3 -m vmsampler plot|sweep|
parquet, see vmsampler.cli) live in submodules that need numpy and
matplotlib (pyarrow for Parquet); importing this package needs neither.
"""

import mmap
import os
import re
import struct
import time

from . import catalog

__all__ = ['load', 'read_frames', 'schemas', 'Ring', 'Frame', 'FormatError', 'WriterGone']
__version__ = '0.1.0'

FMT_MAGIC = b'VMSAMPL'
ZSTD_MAGIC = b'\x28\xb5\x2f\xfd'
RING_MAGIC = b'VMSRING'
VALUE_NONE = (1 << 64) - 1
REC_SCHEMA, REC_DATA, REC_EVENT, REC_HOST = 1, 2, 3, 4
RECF_KEYFRAME = 1
META = ('seq', 't_mono_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames', 'late_ns', 'self_cpu_ns')


class FormatError(Exception):
    """Damaged or foreign input; .offset and .record say where (record 0
    is a file header).  Everything before it was read."""

    def __init__(self, msg, offset=None, record=None):
        where = ''
        if offset is not None:
            where = ('file header' if not record else 'record %d' % record) + ' at offset %d: ' % offset
        super().__init__(where + msg)
        self.offset = offset
        self.record = record


class WriterGone(Exception):
    """The writer of a live ring exited or died; its frames were read."""


# ---- CRC-32C (Castagnoli), table-driven ----------------------------------------

def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    t = _CRC
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ---- schema and frames -------------------------------------------------------------

class Column:
    """A column of a schema; .id is its identity (catalog.ColId): from the
    file (format 1.2), else derived from the name."""
    __slots__ = ('name', 'key', 'kind', 'unit', 'wrap_bits', 'scale', 'id')

    def __init__(self, name, key, kind, unit, wrap_bits, scale, id=None):
        self.name, self.key, self.kind, self.unit = name, key, kind, unit
        self.wrap_bits, self.scale = wrap_bits, scale
        self.id = id if id is not None else catalog.derive(name)

    def __repr__(self):
        return 'Column(%r)' % self.name


class Schema:
    def __init__(self, gen, t_real_ns, cols):
        self.gen, self.t_real_ns, self.cols = gen, t_real_ns, cols
        self.names = [c.name for c in cols]
        self.index = {n: i for i, n in enumerate(self.names)}


class Frame:
    """One sample: meta fields and raw values (None when missing)."""
    __slots__ = ('seq', 't_mono_ns', 't_real_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames',
                 'self_cpu_ns', 'late_ns', 'values', 'schema')

    def __getitem__(self, name):
        """The value of a column by name, scaled (None when missing)."""
        i = self.schema.index[name]
        v = self.values[i]
        s = self.schema.cols[i].scale
        return v if v is None or not s else v / 10 ** s

    def as_dict(self):
        d = {m: getattr(self, m) for m in META}
        d['t_real_ns'] = self.t_real_ns
        for c, v in zip(self.schema.cols, self.values):
            d[c.name] = v if v is None or not c.scale else v / 10 ** c.scale
        return d


def _varint(b, p, end):
    v = shift = 0
    while True:
        if p >= end or shift > 63:
            raise ValueError('varint')
        x = b[p]
        p += 1
        if shift == 63 and x > 1:
            raise ValueError('varint')
        v |= (x & 0x7F) << shift
        if not x & 0x80:
            return v, p
        shift += 7


_CTRL = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029]')


def _text(raw):
    """A name or text as the sampler writes it: valid UTF-8 without control
    characters, else escaped by the rule of vmsampler-format(5), NAMES
    (the files of older samplers): a byte that is not UTF-8 or belongs to a
    control character becomes \\xHH, a backslash two backslashes."""
    try:
        s = raw.decode('utf-8')
        if not _CTRL.search(s):
            return s
    except UnicodeDecodeError:
        pass
    out = []
    for ch in raw.decode('utf-8', 'surrogateescape'):
        if ch == '\\':
            out.append('\\\\')
        elif '\udc80' <= ch <= '\udcff':
            out.append('\\x%02x' % (ord(ch) - 0xdc00))
        elif _CTRL.match(ch):
            out.extend('\\x%02x' % c for c in ch.encode())
        else:
            out.append(ch)
    return ''.join(out)


def _string(b, p, end):
    n, p = _varint(b, p, end)
    if n > end - p:
        raise ValueError('string')
    return _text(bytes(b[p:p + n])), p + n


def _schema(pl):
    gen, ncols, t_real = struct.unpack_from('<IIq', pl, 0)
    if ncols > (len(pl) - 16) // 6:
        raise ValueError('SCHEMA declares %d columns in %d bytes' % (ncols, len(pl)))
    p, end, cols = 16, len(pl), []
    for _ in range(ncols):
        if end - p < 4:
            raise ValueError('SCHEMA column truncated')
        kind, unit, wrap, scale = struct.unpack_from('<BBBb', pl, p)
        p += 4
        name, p = _string(pl, p, end)
        key, p = _string(pl, p, end)
        if not name or scale < 0 or scale > 19:
            raise ValueError('SCHEMA column %r' % name)
        cols.append((name, key, kind, unit, wrap, scale))
    ids = _identities(pl, p, end, cols) if p < end else [None] * len(cols)
    return Schema(gen, t_real, [Column(*c, id=i) for c, i in zip(cols, ids)])


def _identities(pl, p, end, cols):
    """The columns' identities after them (format 1.2, see
    vmsampler-format(5)): the group and where entity, sub and field are in
    the name."""
    ids = []
    for name, *_ in cols:
        group, p = _string(pl, p, end)
        off = []
        for _ in range(5):
            v, p = _varint(pl, p, end)
            off.append(v)
        eo, el, so, sl, fo = off
        b = name.encode('utf-8')  # the offsets are in bytes
        n = len(b)
        if eo > n or el > n - eo or so > n or sl > n - so or fo > n:
            raise ValueError('SCHEMA identity of %r out of its name' % name)
        if not group:
            ids.append(catalog.ColId())
            continue
        c = catalog.ColId(group, *(x.decode('utf-8', 'replace') for x in (b[eo:eo + el], b[so:so + sl], b[fo:])))
        if group in catalog.BY_NAME and catalog.colname(group, c.entity, c.sub, c.field) != name:
            raise ValueError('SCHEMA column %r: its identity does not make its name' % name)
        ids.append(c)
    return ids


def _decode(data):
    """Frames of a binary stream in memory (bytes): yields Frame; raises
    FormatError at damage; a torn tail ends quietly (see .torn)."""
    p, n, rec = 0, len(data), 0
    schemas, prev, prev_schema = {}, None, None
    in_stream = False
    while p < n:
        if not in_stream or data[p:p + 8] == FMT_MAGIC + b'\x01':
            if n - p < 32:
                if data[p:p + 7] != FMT_MAGIC[:n - p][:7]:
                    raise FormatError('not a vmsampler stream', p, 0)
                return  # torn header
            h = data[p:p + 32]
            if h[:7] != FMT_MAGIC:
                raise FormatError('not a vmsampler stream (no VMSAMPL magic)', p, 0)
            major = struct.unpack_from('<H', h, 8)[0]
            if h[7] != 1 or major != 1:
                raise FormatError('vmsampler stream of major version %d; this reader knows version 1'
                                  % (h[7] if h[7] != 1 else major), p, 0)
            if struct.unpack_from('<I', h, 28)[0] != crc32c(h[:28]):
                raise FormatError('file header CRC mismatch', p, 0)
            hs = struct.unpack_from('<I', h, 12)[0]
            if hs < 32 or hs > 65536:
                raise FormatError('file header size %d' % hs, p, 0)
            p += hs
            in_stream = True
            schemas, prev_schema = {}, None
            continue
        off = p
        rec += 1
        if n - p < 12:
            return  # torn
        hdr = data[p:p + 12]
        if struct.unpack_from('<I', hdr, 8)[0] != crc32c(hdr[:8]):
            if not any(data[p:]):
                return  # zero-filled tail
            raise FormatError('record header CRC mismatch', off, rec)
        ln, typ, rflags = struct.unpack_from('<IHH', hdr, 0)
        if ln > 64 << 20:
            raise FormatError('payload length %d exceeds the maximum' % ln, off, rec)
        if n - p < 16 + ln:
            return  # torn
        pl = data[p + 12:p + 12 + ln]
        if struct.unpack_from('<I', data, p + 12 + ln)[0] != crc32c(pl):
            raise FormatError('payload CRC mismatch', off, rec)
        p += 16 + ln
        try:
            if typ == REC_SCHEMA:
                s = _schema(pl)
                old = schemas.get(s.gen)
                if not (old and old.names == s.names):
                    schemas[s.gen] = s
                prev_schema = None
            elif typ == REC_DATA:
                if len(pl) < 60:
                    raise ValueError('DATA payload too short')
                (gen, flags, seq, t_mono, t_real, missed, lost, self_cpu, late,
                 ncols) = struct.unpack_from('<IIQQqIIQQI', pl, 0)
                s = schemas.get(gen)
                if s is None:
                    raise ValueError('DATA of generation %d before its SCHEMA' % gen)
                if ncols != len(s.cols):
                    raise ValueError('DATA has %d values, its schema %d columns' % (ncols, len(s.cols)))
                key = rflags & RECF_KEYFRAME
                if not key and prev_schema is not s:
                    raise ValueError('delta DATA without a keyframe of generation %d' % gen)
                prev_schema = None
                q, end = 60, len(pl)
                vals, base = [], prev
                for i in range(ncols):
                    x, q = _varint(pl, q, end)
                    if x == 0:
                        vals.append(None)
                        continue
                    if key:
                        v = x - 1
                    else:
                        z = x - 1
                        d = (z >> 1) ^ -(z & 1)
                        v = ((base[i] or 0) + d) & VALUE_NONE
                    if v == VALUE_NONE:
                        raise ValueError('DATA value %d decodes to the reserved 2^64-1' % i)
                    vals.append(v)
                prev, prev_schema = vals, s
                f = Frame()
                f.seq, f.t_mono_ns, f.t_real_ns, f.gen, f.flags = seq, t_mono, t_real, gen, flags
                f.missed_ticks, f.lost_frames, f.self_cpu_ns, f.late_ns = missed, lost, self_cpu, late
                f.values, f.schema = vals, s
                yield f
        except (ValueError, struct.error) as e:
            raise FormatError(str(e), off, rec) from None


def _unzstd(data, path):
    """The decompressed bytes of a .zst (every frame) and None, or what
    was decompressed before the compressed data ended inside a frame and
    the FormatError that says so (a torn .zst)."""
    try:
        import zstandard
    except ImportError:
        raise ImportError('%s is zstd-compressed: reading it needs the Python module zstandard '
                          '(Debian: apt install python3-zstandard)' % path) from None
    dctx = zstandard.ZstdDecompressor(max_window_size=1 << 23)
    out, rest, used = [], data, 0
    while rest:
        o = dctx.decompressobj()
        try:
            out.append(o.decompress(rest))
        except zstandard.ZstdError as e:
            raise FormatError('%s: compressed data after offset %d of the .zst: zstd: %s' % (path, used, e)) from None
        if not o.eof:
            return b''.join(out), FormatError(
                '%s: torn .zst: the compressed stream ends inside a zstd frame after %d bytes' % (path, len(data)))
        used = len(data) - len(o.unused_data)
        rest = o.unused_data
    return b''.join(out), None


def _read(path):
    """A file's bytes, decompressed if it is a .zst: (data, torn error or None)."""
    with open(path, 'rb') as fh:
        data = fh.read()
    if data[:4] == ZSTD_MAGIC:
        return _unzstd(data, path)
    return data, None


def read_frames(path):
    """Frames of a binary stream file (or a snapshot of a ring file, or a
    .vms.zst: a torn one raises FormatError after its whole frames)."""
    data, torn = _read(path)
    if data[:7] == RING_MAGIC and torn is None:
        r = Ring(path, _data=data)
        yield from r.frames()
        return
    yield from _decode(data)
    if torn is not None:
        raise torn


def schemas(path):
    """The SCHEMA records of a stream file, in file order, without
    decoding its frames: record headers are read and CRC-checked, DATA
    payloads skipped, SCHEMA payloads CRC-checked.  Cheap on a file of any
    size (a few bytes read per record; the file is not mapped, so its
    pages do not count in this process's memory).  For a ring, its current
    schema."""
    return _meta(path)[0]


def host(path):
    """The identity of the host a run was recorded on: its first HOST
    record (vmsampler-format(5); the sampler writes one before every
    SCHEMA), as a dict of strings -- hostname, machine_id, boot_id, kernel,
    cpu_model, cpus_online, numa_nodes, user_hz, page_size, timezone,
    vmsampler_version, build_features and, once libvirt was connected,
    libvirt_uri, libvirt_version, hypervisor, hypervisor_version -- or {}
    for a file written before format 1.1.  For a ring, its writer's.  What
    `vmsampler dump --info --json` prints."""
    return _meta(path, stop_at_host=True)[1]


def _host(pl):
    """A HOST payload: varint n, n x (string key, string value)."""
    n, p = _varint(pl, 0, len(pl))
    if n > 256:
        raise ValueError('HOST declares %d pairs' % n)
    kv = []
    for _ in range(2 * n):
        s, p = _string(pl, p, len(pl))
        kv.append(s)
    return dict(zip(kv[0::2], kv[1::2]))


def _meta(path, stop_at_host=False):
    """(schemas, host) of a stream file or ring, read as schemas() says."""
    out, hostd = [], {}
    with open(path, 'rb', buffering=0) as fh:
        magic = fh.read(7)
        if magic == RING_MAGIC:
            r = Ring(path)
            gen = struct.unpack_from('<I', r._m, 200)[0]
            s = r._schema(gen)
            return ([s] if s else []), getattr(r, 'host', {})
        if magic[:4] == ZSTD_MAGIC:
            data, torn = _read(path)  # decompressed whole: read from memory
            n = len(data)
            def pread(fd, k, p):
                return data[p:p + k]
        else:
            n = os.fstat(fh.fileno()).st_size
            pread = os.pread
        fd = fh.fileno()
        p, rec, in_stream = 0, 0, False
        while p < n:
            head = pread(fd, 32, p)
            if not in_stream or head[:8] == FMT_MAGIC + b'\x01':
                if len(head) < 32:
                    break
                if head[:7] != FMT_MAGIC:
                    raise FormatError('not a vmsampler stream (no VMSAMPL magic)', p, 0)
                if struct.unpack_from('<I', head, 28)[0] != crc32c(head[:28]):
                    raise FormatError('file header CRC mismatch', p, 0)
                p += max(32, struct.unpack_from('<I', head, 12)[0])
                in_stream = True
                continue
            rec += 1
            if len(head) < 12:
                break
            if struct.unpack_from('<I', head, 8)[0] != crc32c(head[:8]):
                if not any(pread(fd, 4096, p)):
                    break  # zero-filled tail
                raise FormatError('record header CRC mismatch', p, rec)
            ln, typ, _ = struct.unpack_from('<IHH', head, 0)
            if n - p < 16 + ln:
                break  # torn
            if typ in (REC_SCHEMA, REC_HOST):
                rec_b = pread(fd, 16 + ln, p)
                pl = rec_b[12:12 + ln]
                if struct.unpack_from('<I', rec_b, 12 + ln)[0] != crc32c(pl):
                    raise FormatError('payload CRC mismatch', p, rec)
                try:
                    if typ == REC_SCHEMA:
                        out.append(_schema(pl))
                    elif not hostd:
                        hostd = _host(pl)
                        if stop_at_host:
                            break
                except (ValueError, struct.error) as e:
                    raise FormatError(str(e), p, rec) from None
            elif typ == REC_DATA and stop_at_host:
                break  # the HOST record comes before the first frame
            p += 16 + ln
    return out, hostd


# ---- CSV ---------------------------------------------------------------------------

def _csv_rows(path):
    import csv
    import io
    with open(path, 'rb') as fh:
        compressed = fh.read(4) == ZSTD_MAGIC
    if compressed:
        data, torn = _read(path)
        fh = io.StringIO(data.decode('utf-8'), newline='')
    else:
        fh, torn = open(path, newline=''), None
    with fh:
        rd = csv.reader(fh)
        header = next(rd)
        for row in rd:
            if row == header:  # a new header after a schema change (dump/tail)
                continue
            yield dict(zip(header, row))
    if torn is not None:
        raise torn


def _num(s):
    if s == '':
        return None
    try:
        return int(s)
    except ValueError:
        return float(s)


# ---- load ----------------------------------------------------------------------------

def _selector(columns):
    """A predicate on column names for load(columns=...): None (every
    column), a name, or a list of names and fnmatch patterns (cpu.*,
    vm.*.cpu_time); and the set of exact names asked for."""
    if columns is None:
        return (lambda name: True), set()
    if isinstance(columns, str):
        columns = [columns]
    exact = {c for c in columns if not any(ch in c for ch in '*?[')}
    globs = [c for c in columns if c not in exact]
    import fnmatch

    def want(name):
        return name in exact or any(fnmatch.fnmatchcase(name, g) for g in globs)
    return want, exact


def _records_vms(path, want=None):
    for f in read_frames(path):
        d = f.as_dict()
        if want is not None:
            d = {k: v for k, v in d.items() if k in _FRAME_FIELDS or want(k)}
        yield d


def _records_csv(path, want=None):
    for row in _csv_rows(path):
        d = {}
        for k, v in row.items():
            if want is not None and k not in _FRAME_FIELDS and k != 'time' and not want(k):
                continue
            d[k] = v if k == 'time' else _num(v)
        yield d


_FRAME_FIELDS = frozenset(META + ('t_real_ns',))


def _missing(exact, seen, path):
    gone = sorted(exact - set(seen))
    if gone:
        raise KeyError('%s: no column %s in any frame' % (path, ', '.join(gone)))


def _load_columns(path, fh, want, exact, pd):
    """load() of a stream through vmsampler.columnar: numpy arrays filled
    block by block, the frames never held as Python objects."""
    import numpy as np
    from . import columnar
    c = columnar.read(path, fh, want)
    _missing(exact, c.names, path)
    if not c.rows:
        return pd.DataFrame()
    meta = c.meta()
    none = np.zeros(c.rows, dtype=bool)
    data = {m: pd.arrays.IntegerArray(meta[m].astype(np.uint64), none) for m in META}
    for name in c.names:
        v, ok, scales = c.column(name)
        if scales is None:
            data[name] = pd.arrays.IntegerArray(v, ~ok)
        else:  # a scaled value: float64, NaN where missing (as v / 10 ** scale)
            f = v.astype(np.float64) / np.power(10.0, scales)
            f[~ok] = np.nan
            data[name] = f
        del v, ok, scales
    # microseconds, as the CSV's time column has them (t_mono_ns is exact)
    idx = pd.to_datetime(meta['t_real_ns'] // 1000 * 1000, unit='ns', utc=True)
    df = pd.DataFrame(data, index=idx, copy=False)
    df.index.name = 'time'
    return df


def load(path, pandas=True, columns=None):
    """Load a .vms stream, a ring file's current frames, or a vmsampler
    CSV.  Returns a pandas DataFrame indexed by time when pandas is there
    (and pandas=True), else a list of dicts.  Raises FormatError for a
    damaged stream (naming the record and offset).

    columns: only these columns (names, or fnmatch patterns such as
    'cpu.all.*' or 'vm.*.cpu_time'; a name that no frame has raises
    KeyError), in the file's order; the frame fields (seq, t_mono_ns, gen,
    flags, missed_ticks, lost_frames, late_ns, self_cpu_ns) always.

    A stream (.vms, .vms.zst) with pandas and numpy is read in blocks into
    numpy arrays (vmsampler.columnar): memory is that of the columns
    asked for (9 bytes a value) and a constant, whatever the size of the
    file (a .zst is decompressed in memory first); otherwise, and for a
    CSV, a ring and pandas=False, every frame is a dict first."""
    want, exact = _selector(columns)
    with open(path, 'rb') as fh:
        magic = fh.read(7)
        data = torn = None
        if magic[:4] == ZSTD_MAGIC:
            data, torn = _read(path)
            magic = data[:7]
        is_bin = magic in (FMT_MAGIC, RING_MAGIC)
        pd = None
        if pandas and magic == FMT_MAGIC:
            try:
                import numpy  # noqa: F401
                import pandas as pd
            except ImportError:
                pd = None
        if pd is not None:
            if data is not None:
                import io
                fh = io.BytesIO(data)
            fh.seek(0)
            df = _load_columns(path, fh, want, exact, pd)
            if torn is not None:
                raise torn
            df.attrs['host'] = host(path)
            return df
    sel = want if columns is not None else None
    rows = list(_records_vms(path, sel) if is_bin else _records_csv(path, sel))
    if columns is not None:
        _missing(exact, {k for r in rows for k in r}, path)
    if not pandas:
        return rows
    try:
        import pandas as pd
    except ImportError:
        return rows
    if not rows:
        return pd.DataFrame()
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    data = {}
    for c in cols:
        vals = [r.get(c) for r in rows]
        if c == 'time':
            continue
        if all(v is None or isinstance(v, int) for v in vals):
            data[c] = pd.array(vals, dtype='UInt64' if all(v is None or v >= 0 for v in vals) else 'Int64')
        else:
            data[c] = pd.array([float('nan') if v is None else float(v) for v in vals], dtype='float64')
    if is_bin:
        # microseconds, as the CSV's time column has them (t_mono_ns is exact)
        idx = pd.to_datetime([r['t_real_ns'] // 1000 * 1000 for r in rows], unit='ns', utc=True)
    else:
        idx = pd.to_datetime([r['time'] for r in rows], utc=True)
    df = pd.DataFrame(data, index=idx)
    df.index.name = 'time'
    if 't_real_ns' in df.columns:
        df = df.drop(columns=['t_real_ns'])
    if is_bin:
        df.attrs['host'] = host(path)
    return df


# ---- live rings ------------------------------------------------------------------------

_HDR = struct.Struct('<8sIIIIIIQQQQQQQ')  # up to run_id (offset 88)
_F_SUPERSEDED, _F_CLOSED = 0x2, 0x4


class Ring:
    """A live ring (vmsampler --ring PATH), read through mmap without
    system calls per frame.  follow() yields every frame from the oldest
    still in the ring; .missed counts frames overwritten before they
    were read, .torn torn copies discarded."""

    def __init__(self, path, _data=None):
        self.path = path
        self.missed = self.torn = 0
        self.gone = None
        self._schemas = {}
        self.host = {}  # the writer's identity (HOST), once a schema is read
        self._snapshot = _data is not None
        self._open(_data)
        w = self._u64(128)
        self.next_seq = w - self.slot_count + 1 if w >= self.slot_count else 1

    def _open(self, data=None):
        if data is None:
            with open(self.path, 'rb') as fh:
                self._m = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
        else:
            self._m = data
        m = self._m
        if len(m) < 4096 or m[:7] != RING_MAGIC:
            raise FormatError('not a vmsampler ring (no VMSRING magic)', 0, 0)
        (magic, ver, self.header_size, self.slot_size, self.slot_count, self.slot_cols, _flags,
         self.writer_pid, _created, self.schema_off, self.schema_cap, self.interval_ns,
         self.writer_pidns, self.run_id) = _HDR.unpack_from(m, 0)
        if magic[7] != 1 or ver != 1:
            raise FormatError('vmsampler ring of version %d; this reader knows version 1' % ver, 0, 0)
        n = self.slot_count
        if (n < 2 or n & (n - 1) or self.slot_size % 64 or
                self.header_size + n * self.slot_size > len(m) or
                self.slot_size < 16 + 64 + 8 * self.slot_cols + 8):
            raise FormatError('inconsistent ring header', 0, 0)

    def _u64(self, off):
        return struct.unpack_from('<Q', self._m, off)[0]

    def _flags(self):
        return struct.unpack_from('<I', self._m, 28)[0]

    def _schema(self, gen):
        for _ in range(100):
            s1 = self._u64(192)
            if s1 == 0 or s1 & 1:
                continue
            g, ln = struct.unpack_from('<II', self._m, 200)
            if ln > self.schema_cap:
                raise FormatError('ring schema area length %d' % ln, 200, 0)
            area = bytes(self._m[self.schema_off:self.schema_off + ln])
            if self._u64(192) != s1:
                continue
            if g != gen:
                return None
            sch = None
            for typ, pl in _records_of(area):
                if typ == REC_SCHEMA:
                    sch = _schema(pl)
                elif typ == REC_HOST:
                    self.host = _host(pl)
            self._schemas[gen] = sch
            return sch
        return None

    def _writer_state(self):
        if self._flags() & _F_CLOSED:
            return 'exited'
        hb = self._u64(136)
        iv = self.interval_ns or 10 ** 9
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        age = now - hb if hb and now > hb else 0
        if (not hb or age > 2 * iv + 5 * 10 ** 8) and self.writer_pidns:
            try:
                mine = os.stat('/proc/self/ns/pid').st_ino
            except OSError:
                mine = 0
            if mine == self.writer_pidns:
                try:
                    os.kill(self.writer_pid, 0)
                except ProcessLookupError:
                    return 'died'
                except PermissionError:
                    pass
        if hb and age > max(10 * iv, 5 * 10 ** 9):
            return 'not responding'
        return None

    def poll(self):
        """The next frame, or None if there is none yet.  Raises
        WriterGone when the writer is gone and everything was read."""
        while True:
            w = self._u64(128)
            n = self.slot_count
            if w >= 1 << 62:
                raise FormatError('ring write_seq %d is out of range: a damaged ring' % w, 128, 0)
            if self.next_seq > w:
                if self._snapshot:
                    raise WriterGone('snapshot read to its end')
                if self._flags() & _F_SUPERSEDED:
                    run = self.run_id
                    self._open()
                    if self.run_id != run:
                        self._schemas = {}
                        w = self._u64(128)
                        self.next_seq = w - n + 1 if w >= n else 1
                    continue
                st = self._writer_state()
                if st is None:
                    return None
                if self._u64(128) != w:
                    continue
                self.gone = st
                raise WriterGone('the writer (pid %d) %s after frame %d' % (self.writer_pid, st, w))
            if w - self.next_seq >= n:
                self.missed += w - n + 1 - self.next_seq
                self.next_seq = w - n + 1
            seq = self.next_seq
            base = self.header_size + ((seq - 1) & (n - 1)) * self.slot_size
            tail = self._u64(base + self.slot_size - 8)
            if tail != seq:
                if tail < seq and self._snapshot:
                    self.missed += 1
                    self.next_seq += 1
                continue
            m = self._m
            ncols = struct.unpack_from('<I', m, base + 16 + 56)[0]
            if ncols > self.slot_cols:
                self.torn += 1
                continue
            raw = bytes(m[base + 16:base + 16 + 64 + 8 * ncols])
            if self._u64(base) != seq:
                self.torn += 1
                if self._snapshot:
                    self.missed += 1
                    self.next_seq += 1
                continue
            (fseq, t_mono, t_real, gen, flags, missed, lost, self_cpu, late,
             nc, _r) = struct.unpack_from('<QQqIIIIQQII', raw, 0)
            if fseq != seq:
                self.torn += 1
                continue
            s = self._schemas.get(gen) or self._schema(gen)
            self.next_seq = seq + 1
            if s is None or len(s.cols) != nc:
                self.missed += 1
                continue
            vals = list(struct.unpack_from('<%dQ' % nc, raw, 64))
            f = Frame()
            f.seq, f.t_mono_ns, f.t_real_ns, f.gen, f.flags = seq, t_mono, t_real, gen, flags
            f.missed_ticks, f.lost_frames, f.self_cpu_ns, f.late_ns = missed, lost, self_cpu, late
            f.values = [None if v == VALUE_NONE else v for v in vals]
            f.schema = s
            return f

    def frames(self):
        """The frames there now (does not wait)."""
        return self.follow(wait=False)

    def follow(self, sleep=None, wait=True):
        """Every frame as it comes, until the writer is gone (then
        .gone says how).  sleep: seconds between polls when there is no
        new frame (default: a quarter of the writer's interval, at most
        0.25 s)."""
        if sleep is None:
            sleep = min(max((self.interval_ns or 10 ** 9) / 4e9, 0.001), 0.25)
        while True:
            try:
                f = self.poll()
            except WriterGone:
                return
            if f is None:
                if not wait:
                    return
                time.sleep(sleep)
                continue
            yield f


def _records_of(stream):
    """(type, payload) of each record of a stream that holds only a header
    and a few records (a ring's schema area: HOST and SCHEMA)."""
    p, n = 0, len(stream)
    if stream[:7] != FMT_MAGIC or n < 32:
        raise FormatError('ring schema area is not a stream', 0, 0)
    p = struct.unpack_from('<I', stream, 12)[0]
    while p + 16 <= n:
        ln, typ, _ = struct.unpack_from('<IHH', stream, p)
        if struct.unpack_from('<I', stream, p + 8)[0] != crc32c(stream[p:p + 8]) or p + 16 + ln > n:
            raise FormatError('ring schema area: bad record', p, 1)
        pl = stream[p + 12:p + 12 + ln]
        if struct.unpack_from('<I', stream, p + 12 + ln)[0] != crc32c(pl):
            raise FormatError('ring schema area: payload CRC mismatch', p, 1)
        yield typ, pl
        p += 16 + ln


from .interference import interference, interference_heatmap, interference_stack, interference_timeline  # noqa: E402,F401
