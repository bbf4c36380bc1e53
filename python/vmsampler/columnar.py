# SPDX-License-Identifier: MIT
"""The columns of a binary stream (vmsampler-format(5)) into numpy arrays,
reading the file in blocks: what vmsampler.load() uses when numpy and
pandas are there.

The file is read a block (BLOCK bytes, more for a larger record) at a
time; the DATA records of a block are checked and decoded together with
numpy: their payload CRC-32C (position tables, see _Crc), their varints,
keyframes and deltas, for every column (a damaged value anywhere is found
as the per-frame decoder finds it); only the columns asked for are kept,
as one array per block.  What stays is those arrays and the frames' meta
fields: the memory is that of the columns asked for (8 bytes a value and
one of validity) plus a constant (a block's work arrays, some 60 bytes per
byte of the block), whatever the length of the run and its number of
columns.

Damage (a CRC mismatch, a malformed record) makes this decoder hand over
to the per-frame decoder (vmsampler._decode) over a map of the file, which
raises the FormatError it raises, so that both say the same thing, with the
same record and offset; a torn tail or a zero-filled tail ends the stream
quietly, as there.
"""

import mmap
import struct

import numpy as np

from . import (FMT_MAGIC, META, RECF_KEYFRAME, REC_DATA, REC_SCHEMA, VALUE_NONE, FormatError, _CRC, _decode,
               _schema, crc32c)

BLOCK = 1 << 19
_DATA_HDR = np.dtype([('gen', '<u4'), ('flags', '<u4'), ('seq', '<u8'), ('t_mono_ns', '<u8'),
                      ('t_real_ns', '<i8'), ('missed_ticks', '<u4'), ('lost_frames', '<u4'),
                      ('self_cpu_ns', '<u8'), ('late_ns', '<u8'), ('ncols', '<u4')])
assert _DATA_HDR.itemsize == 60
_U64 = np.uint64


class _Damage(Exception):
    """Something the per-frame decoder will raise a FormatError for."""


class _Crc:
    """CRC-32C of many records at once.  The reflected CRC is linear: the
    register after a message is the XOR over its bytes of a table entry
    that depends on the byte and its distance from the end (P[d][b], the
    byte's table entry shifted through d zero bytes), and an initial value
    of 0xFFFFFFFF is the same as the first 4 bytes inverted.  Distances are
    taken in blocks of B: the XOR of a block is carried to the end by Z^B
    (four byte tables), record by record, B bytes per step."""
    B = 512

    def __init__(self):
        t = np.array(_CRC, dtype=np.uint32)
        self.P = np.empty((self.B, 256), dtype=np.uint32)
        r = t.copy()
        for k in range(self.B):
            self.P[k] = r
            r = t[r & 0xFF] ^ (r >> 8)
        v = np.arange(256, dtype=np.uint32)[None, :] << (np.uint32(8) * np.arange(4, dtype=np.uint32))[:, None]
        for _ in range(self.B):
            v = t[v & 0xFF] ^ (v >> 8)
        self.ZB = list(v)

    def many(self, a, starts, lens):
        """CRC-32C of a[s:s+n] for each start s and length n >= 4 (int64
        arrays): a uint32 array."""
        R = len(starts)
        idx, cs, total = _ramp(starts, lens)
        if total == 0:
            return np.zeros(R, dtype=np.uint32)
        b = a[idx]
        del idx
        for k in range(4):
            b[cs + k] ^= 0xFF
        # each byte's distance from the end of its record: -1 a byte, the
        # record's length - 1 at its first
        dist = np.full(total, -1, dtype=np.int32)
        dist[cs[1:]] = lens[1:] - 1
        dist[0] = lens[0] - 1
        np.cumsum(dist, out=dist)
        q = dist // self.B
        pos = dist - q * self.B
        del dist
        v = self.P[pos, b]
        del b
        first = pos == self.B - 1
        first[cs] = True
        del pos
        g = np.flatnonzero(first)
        del first
        x = np.bitwise_xor.reduceat(v, g)
        del v
        gq = q[g]
        del q
        grec = np.repeat(np.arange(R), np.diff(np.append(np.searchsorted(g, cs), len(g))))
        Q = int(gq.max())
        X = np.zeros((R, Q + 1), dtype=np.uint32)
        X[grec, gq] = x
        acc = np.zeros(R, dtype=np.uint32)
        z0, z1, z2, z3 = self.ZB
        for k in range(Q, -1, -1):
            if k < Q:
                acc = z0[acc & 0xFF] ^ z1[(acc >> 8) & 0xFF] ^ z2[(acc >> 16) & 0xFF] ^ z3[acc >> 24]
            acc ^= X[:, k]
        return acc ^ np.uint32(0xFFFFFFFF)


def _ramp(starts, lens):
    """The positions of the regions [s, s+n) one after the other (an
    int64 array: a cumulative sum of 1 a byte and a jump at each region's
    first), the regions' offsets in it, and its length."""
    R = len(starts)
    cs = np.zeros(R, dtype=np.int64)
    np.cumsum(lens[:-1], out=cs[1:])
    total = int(cs[-1] + lens[-1]) if R else 0
    idx = np.ones(total, dtype=np.int64)
    if total:
        idx[cs[1:]] = starts[1:] - (starts[:-1] + lens[:-1] - 1)
        idx[0] = starts[0]
        np.cumsum(idx, out=idx)
    return idx, cs, total


_crc = None


def _crc_many(a, starts, lens):
    global _crc
    if _crc is None:
        _crc = _Crc()
    return _crc.many(a, starts, lens)


def _varints(a, starts, lens, ncols):
    """The first ncols varints of each region a[s:s+n], as a (R, ncols)
    uint64 array; _Damage where the per-frame decoder fails."""
    R = len(starts)
    if (lens <= 0).any():
        raise _Damage()                            # no room for ncols >= 1 varints
    idx, cs, total = _ramp(starts, lens)
    b = a[idx]
    del idx
    term = b < 0x80
    cum = np.cumsum(term, dtype=np.int64)
    last = cs + lens - 1
    count = cum[last] - (cum[cs] - term[cs])   # terminators in each region
    del cum
    if (count < ncols).any():
        raise _Damage()                            # a region ends before its ncols-th varint
    if (count != ncols).any() or not term[last].all():
        # bytes after the ncols-th varint (ignored, as by the per-frame
        # decoder): keep each region's bytes up to it
        keep = np.ones(total, dtype=bool)
        ends = np.flatnonzero(term)
        rstart = np.searchsorted(ends, cs)         # each region's first terminator
        cut = ends[rstart + ncols - 1] + 1         # one past its ncols-th
        for c0, c1 in zip(cut, cs + lens):
            keep[c0:c1] = False
        b = b[keep]
        term = term[keep]
    ends = np.flatnonzero(term)
    st = np.empty_like(ends)
    st[0] = 0
    st[1:] = ends[:-1] + 1
    n = ends - st + 1
    if n.max(initial=0) > 10 or (b[ends[n == 10]] > 1).any():
        raise _Damage()                            # more than 64 bits
    v = (b[st] & 0x7F).astype(_U64)
    sel = np.flatnonzero(n > 1)
    k = 1
    while len(sel):                                # the 2nd byte of those that have one, ...
        v[sel] |= (b[st[sel] + k] & 0x7F).astype(_U64) << _U64(7 * k)
        k += 1
        sel = sel[n[sel] > k]
    return v.reshape(R, ncols)


class Columns:
    """Columns of a stream, read with read(fh): .names (the columns kept,
    in order of first appearance in a frame), .meta (name -> array, one
    per frame, META and t_real_ns), and column(name) -> (uint64 raw
    values, bool validity, scale per row or None if no value is scaled)."""

    def __init__(self, want, path):
        self.want, self.path = want, path
        self.names, self._parts = [], {}
        self._meta = []
        self.rows = 0
        self._schemas, self._prev_schema, self._carry = {}, None, None
        self._keep = {}   # id(schema) -> (schema, indices, columns) of the kept columns

    # -- blocks of DATA records ------------------------------------------------------

    def _flush(self, a, recs):
        if not recs:
            return
        st = np.array([r[0] for r in recs], dtype=np.int64)   # payload offsets in a
        ln = np.array([r[1] for r in recs], dtype=np.int64)
        fl = np.array([r[2] for r in recs], dtype=np.uint16)
        recs.clear()
        if (ln < 60).any():
            raise _Damage()
        crc = a[(st + ln)[:, None] + np.arange(4)].copy().view('<u4').ravel()
        if (_crc_many(a, st, ln) != crc).any():
            raise _Damage()
        hdr = a[st[:, None] + np.arange(60)].copy().view(_DATA_HDR).ravel()
        gens = hdr['gen']
        cut = np.flatnonzero(gens[1:] != gens[:-1]) + 1
        for lo, hi in zip(np.r_[0, cut], np.r_[cut, len(st)]):
            self._run(a, st[lo:hi], ln[lo:hi], fl[lo:hi], hdr[lo:hi])

    def _run(self, a, st, ln, fl, hdr):
        """Consecutive DATA records of one generation."""
        s = self._schemas.get(int(hdr['gen'][0]))
        if s is None:
            raise _Damage()
        C = len(s.cols)
        if (hdr['ncols'] != C).any():
            raise _Damage()
        key = (fl & RECF_KEYFRAME) != 0
        if not key[0] and self._prev_schema is not s:
            raise _Damage()
        R = len(st)
        if C:
            X = _varints(a, st + 60, ln - 60, C)
            miss = X == 0
            X -= _U64(1)                                      # x - 1 (wraps where missing: not used)
            d = (X >> _U64(1)) ^ (_U64(0) - (X & _U64(1)))    # zigzag
            kb = key[:, None]
            base = np.where(miss, _U64(0), np.where(kb, X, _U64(0)))
            inc = np.where(miss | kb, _U64(0), d)
            del d
            np.cumsum(inc, axis=0, out=inc)                   # wraps mod 2^64, as the format's sums do
            reset = np.where(miss | kb, np.arange(R)[:, None], -1)
            np.maximum.accumulate(reset, axis=0, out=reset)
            carry = self._carry if self._carry is not None and len(self._carry) == C else np.zeros(C, _U64)
            # before the first reset of a column: the previous frame's value
            base = np.vstack([carry[None, :], base])
            A = np.vstack([np.zeros((1, C), _U64), inc])
            ri = reset + 1
            cols = np.arange(C)[None, :]
            w = base[ri, cols] + inc - A[ri, cols]
            del base, A, ri, reset, inc
            w[miss] = 0
            if (w == _U64(VALUE_NONE)).any():
                raise _Damage()
            self._carry = w[-1].copy()
            keep = self._keep.get(id(s))
            if keep is None or keep[0] is not s:   # (the schema is held: its id is not reused)
                idx = [i for i, c in enumerate(s.cols) if self.want(c.name)]
                keep = self._keep[id(s)] = (s, idx, [s.cols[i] for i in idx])
            _, idx, cols_kept = keep
            for j, c in zip(idx, cols_kept):
                parts = self._parts.get(c.name)
                if parts is None:
                    parts = self._parts[c.name] = []
                    self.names.append(c.name)
                parts.append((self.rows, w[:, j].copy(), ~miss[:, j], c.scale))
        else:
            self._carry = np.zeros(0, _U64)
        self._prev_schema = s
        self._meta.append(hdr.copy())
        self.rows += R

    # -- the stream ------------------------------------------------------------------------

    def read(self, fh):
        """Read the stream from fh (a binary file object) to its end."""
        buf, p, pos, eof = b'', 0, 0, False
        recs = []
        in_stream = False

        def need(k):
            # k bytes at p: False at the end of the file
            nonlocal buf, p, pos, eof
            if len(buf) - p >= k:
                return True
            if eof:
                return False
            self._flush(a, recs)
            rest = buf[p:]
            while len(rest) < k and not eof:
                got = fh.read(max(BLOCK, k - len(rest)))
                if not got:
                    eof = True
                rest += got
            pos += p
            buf, p = rest, 0
            return len(buf) >= k

        a = None
        while True:
            if len(buf) - p < 32 and not eof:
                need(32)
                a = np.frombuffer(buf, dtype=np.uint8)
            if p >= len(buf):
                break
            if not in_stream or buf[p:p + 8] == FMT_MAGIC + b'\x01':
                self._flush(a, recs)
                if len(buf) - p < 32:
                    if buf[p:p + 7] != FMT_MAGIC[:len(buf) - p][:7]:
                        raise _Damage()
                    break   # torn header
                h = buf[p:p + 32]
                if (h[:7] != FMT_MAGIC or h[7] != 1 or struct.unpack_from('<H', h, 8)[0] != 1 or
                        struct.unpack_from('<I', h, 28)[0] != crc32c(h[:28])):
                    raise _Damage()
                hs = struct.unpack_from('<I', h, 12)[0]
                if hs < 32 or hs > 65536:
                    raise _Damage()
                if not need(hs):
                    break
                a = np.frombuffer(buf, dtype=np.uint8)
                p += hs
                in_stream = True
                self._schemas, self._prev_schema = {}, None
                continue
            if len(buf) - p < 12:
                break   # torn
            ln, typ, rflags, hcrc = struct.unpack_from('<IHHI', buf, p)
            if hcrc != crc32c(buf[p:p + 8]):
                self._flush(a, recs)
                if self._zero_tail(fh, buf[p:]):
                    break
                raise _Damage()
            if ln > 64 << 20:
                raise _Damage()
            if len(buf) - p < 16 + ln:
                if not need(16 + ln):
                    break   # torn
                a = np.frombuffer(buf, dtype=np.uint8)
            if typ == REC_DATA:
                recs.append((p + 12, ln, rflags))
            else:
                self._flush(a, recs)
                pl = buf[p + 12:p + 12 + ln]
                if struct.unpack_from('<I', buf, p + 12 + ln)[0] != crc32c(pl):
                    raise _Damage()
                if typ == REC_SCHEMA:
                    try:
                        s = _schema(pl)
                    except (ValueError, struct.error):
                        raise _Damage() from None
                    old = self._schemas.get(s.gen)
                    if not (old and old.names == s.names):
                        self._schemas[s.gen] = s
                    self._prev_schema = None
            p += 16 + ln
        self._flush(a, recs)

    @staticmethod
    def _zero_tail(fh, rest):
        if any(rest):
            return False
        while True:
            got = fh.read(BLOCK)
            if not got:
                return True
            if any(got):
                return False

    # -- the result ------------------------------------------------------------------------

    def meta(self):
        """name -> array over the frames: META and t_real_ns."""
        h = np.concatenate(self._meta) if self._meta else np.zeros(0, _DATA_HDR)
        self._meta = [h]
        return {m: h[m] for m in META + ('t_real_ns',)}

    def column(self, name):
        """(raw uint64 values, validity, scales) of a kept column over every
        frame, frees its parts; scales is None when no value is scaled, else
        an int8 array (per row)."""
        parts = self._parts.pop(name)
        v = np.zeros(self.rows, _U64)
        ok = np.zeros(self.rows, bool)
        scales = None
        for r0, pv, pok, sc in parts:
            v[r0:r0 + len(pv)] = pv
            ok[r0:r0 + len(pv)] = pok
            if sc and pok.any():
                if scales is None:
                    scales = np.zeros(self.rows, np.int8)
                scales[r0:r0 + len(pv)] = sc
        return v, ok, scales


def read(path, fh, want):
    """Columns of the stream in fh (the file path: for the error); raises
    FormatError as vmsampler._decode raises it on damage."""
    c = Columns(want, path)
    try:
        c.read(fh)
    except _Damage:
        _reference_error(fh)
    return c


def _reference_error(fh):
    """The FormatError of the per-frame decoder for this stream (it found
    the damage this one found)."""
    try:
        src = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
    except (AttributeError, OSError, ValueError):
        fh.seek(0)
        src = fh.read()
    for _ in _decode(src):
        pass
    raise FormatError('damaged stream (the per-frame decoder found nothing: please report this file)')
