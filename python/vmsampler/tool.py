# SPDX-License-Identifier: MIT
"""Running the C tools: `vmsampler dump` is the one implementation of the
rates (libvmsampler's, as sar/iostat/mpstat define them) and of the
stream decoder; this module runs it and reads its CSV as it comes.

    rates = RateStream('run.vms', select=lambda name: name.startswith('cpu.all.'))
    for chunk in rates:            # a few thousand rows at a time
        chunk.t_us, chunk.values   # times (µs since the epoch), floats (NaN: empty)

Memory stays bounded by the chunk size whatever the length of the run:
nothing here holds more than one chunk.
"""

import csv
import datetime
import io
import operator
import os
import shutil
import subprocess
import sys
import tempfile

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
US = datetime.timedelta(microseconds=1)
NAN = float('nan')


class ToolError(Exception):
    """vmsampler (the C program) is missing or failed."""


def find_bin(explicit=None):
    """The vmsampler program: the argument, $VMS_BIN, or vmsampler on PATH."""
    for cand in (explicit, os.environ.get('VMS_BIN')):
        if cand:
            if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
                raise ToolError('%s: not an executable vmsampler' % cand)
            return cand
    found = shutil.which('vmsampler')
    if not found:
        raise ToolError('vmsampler (the C program) is not on PATH: install it (scripts/install.sh), '
                        'or say where it is with --vmsampler PATH or VMS_BIN')
    return found


def parse_time_us(s):
    """dump's time column (ISO 8601 with its UTC offset, to the µs) as µs
    since the epoch, exactly."""
    return (datetime.datetime.fromisoformat(s) - EPOCH) // US


class Chunk:
    """Rows of dump's CSV: seq, t_us (time, µs since the epoch), interval_s
    and rate_flags (for --rates), values (one list per row, floats, NaN
    for an empty cell) of the selected columns."""
    __slots__ = ('seq', 't_us', 'interval_s', 'rate_flags', 'values')


def _run(argv):
    # stderr to a file: a pipe that nobody reads while dump writes its
    # CSV could fill and stop it
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, bufsize=1 << 20)
    except OSError as e:
        err.close()
        raise ToolError('%s: %s' % (argv[0], e.strerror)) from None
    proc.errfile = err
    return proc


def _finish(proc, what, warn, got_rows=True):
    if proc.stdout:
        proc.stdout.close()
    rc = proc.wait()
    proc.errfile.seek(0)
    err = proc.errfile.read().decode('utf-8', 'replace')
    proc.errfile.close()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if rc != 0:
        msg = lines[-1] if lines else '%s exited with status %d' % (what, rc)
        if rc == 1 and warn and got_rows:
            # damage: dump printed every frame before it, as we read them
            warn(msg)
            return
        raise ToolError(msg)
    for ln in lines:
        if warn:
            warn(ln)


def default_warn(msg):
    print('vmsampler: %s' % msg.replace('vmsampler: ', ''), file=sys.stderr)


def once(warn):
    """warn, saying each message once (dump --rates and dump --events of
    the same damaged file say the same)."""
    seen = set()

    def w(msg):
        key = msg.split('; the frames before')[0].split(' (the ')[0]
        if key not in seen:
            seen.add(key)
            warn(msg)
    return w


class RateStream:
    """`vmsampler dump --rates PATH`, read as it comes.  select(name) picks
    the rate columns wanted (the others are never converted); .columns
    lists them in the header's order, .header is the whole header, .tz
    the time zone of dump's times (of the first row).

    A damaged stream gives the rows before the damage and a warning
    (as dump does); a missing program or another failure raises ToolError."""

    def __init__(self, path, select=None, vmsampler=None, chunk_rows=2048, warn=default_warn,
                 raw=False):
        self.path, self.select, self.chunk_rows, self.warn = path, select, chunk_rows, warn
        self.bin = find_bin(vmsampler)
        self.raw = raw
        self.header = self.columns = None
        self.tz = None

    def __iter__(self):
        argv = [self.bin, 'dump', self.path] + ([] if self.raw else ['--rates'])
        open(self.path, 'rb').close()   # a missing file: one line, here
        proc = _run(argv)
        done = False
        self.nrows = 0
        try:
            for ch in self._read(proc.stdout):
                self.nrows += len(ch.values)
                yield ch
            done = True
        finally:
            if not done:  # the consumer stopped early, or failed
                proc.kill()
                proc.stdout.close()
                proc.wait()
                proc.errfile.close()
        _finish(proc, 'vmsampler dump', self.warn, got_rows=self.nrows > 0)

    def _read(self, out):
        first = out.readline()
        if not first:
            self.header, self.columns = [], []
            return
        self.header = next(csv.reader([first.decode('utf-8')]))
        fixed = 4 if self.raw else 5
        names = self.header[fixed:]
        sel = [i + fixed for i, n in enumerate(names) if self.select is None or self.select(n)]
        self.columns = [self.header[i] for i in sel]
        if len(sel) == 0:
            get = lambda f: ()  # noqa: E731
        elif len(sel) == 1:
            i0 = sel[0]
            get = lambda f: (f[i0],)  # noqa: E731
        else:
            get = operator.itemgetter(*sel)
        n = self.chunk_rows
        rows, seqs, ts, ivs, fls = [], [], [], [], []
        fromiso = datetime.datetime.fromisoformat
        nan = NAN
        for line in out:
            f = line.rstrip(b'\r\n').split(b',')
            if f[0] == b'seq':
                raise ToolError('vmsampler dump printed a second header: a newer dump than this reader knows')
            seqs.append(int(f[0]))
            if self.tz is None:
                self.tz = fromiso(f[1].decode()).tzinfo
            ts.append((fromiso(f[1].decode()) - EPOCH) // US)
            if not self.raw:
                ivs.append(float(f[3]))
                fls.append(int(f[4]))
            rows.append([float(x) if x else nan for x in get(f)])
            if len(rows) >= n:
                yield self._chunk(seqs, ts, ivs, fls, rows)
                rows, seqs, ts, ivs, fls = [], [], [], [], []
        if rows:
            yield self._chunk(seqs, ts, ivs, fls, rows)

    @staticmethod
    def _chunk(seqs, ts, ivs, fls, rows):
        c = Chunk()
        c.seq, c.t_us, c.interval_s, c.rate_flags, c.values = seqs, ts, ivs, fls, rows
        return c


class Event:
    __slots__ = ('before_seq', 't_us', 'time', 't_mono_ns', 'type', 'name', 'subject', 'detail')

    def label(self):
        """A short label: a mark's text; a VM event's name and VM; else the
        event's name (or its number, for a type this reader does not
        know) and subject."""
        name = self.name or 'event %d' % self.type
        if self.type == 6 or self.name == 'mark':
            return self.subject or self.detail or name
        if 16 <= self.type <= 24 and self.detail:
            return '%s %s' % (name, self.detail.split(':')[0])
        return ('%s %s' % (name, self.subject)).strip()


def events(path, vmsampler=None, warn=default_warn):
    """The EVENT records, as `vmsampler dump --events PATH` prints them."""
    open(path, 'rb').close()
    proc = _run([find_bin(vmsampler), 'dump', '--events', path])
    out = proc.stdout.read().decode('utf-8', 'replace')
    _finish(proc, 'vmsampler dump --events', warn)
    rd = csv.reader(io.StringIO(out, newline=''))
    header = next(rd, None)
    evs = []
    if not header:
        return evs
    ix = {h: i for i, h in enumerate(header)}
    for r in rd:
        if not r or r == header:
            continue
        e = Event()
        e.before_seq = int(r[ix['before_seq']])
        e.time = r[ix['time']]
        e.t_us = parse_time_us(e.time)
        e.t_mono_ns = int(r[ix['t_mono_ns']])
        e.type = int(r[ix['type']])
        e.name = r[ix['event']]
        e.subject = r[ix['subject']]
        e.detail = r[ix['detail']]
        evs.append(e)
    return evs
