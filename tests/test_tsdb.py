#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`vmsampler tail --format influx|json` and remote write
(src/tools/remote_write.c, driven by tests/rw_send) into the real
time-series databases from Debian, each started here on 127.0.0.1 on a
free port with a temporary directory and stopped in finally:

  - InfluxDB 1.6 (influxd, package influxdb): tail's line protocol of a
    recorded run (tests/fixtures/runs/, see its PROVENANCE.md) and of a
    live ring, written through /write and queried back through /query,
    equals `vmsampler dump` of the same frames, value by value and
    timestamp by timestamp, with no field where dump has an empty cell;
  - JSON lines: the same values, parsed by Python and by jq;
  - `vmsampler dump --format influx|json`: the same, through InfluxDB and
    byte for byte;
  - frames a reader of the ring lost are counted on the next frame;
  - Prometheus 2.42 (--web.enable-remote-write-receiver) and
    VictoriaMetrics 1.79: remote write of the recorded run, queried back
    through their HTTP APIs, equals dump exactly; a receiver that is down
    at first and comes up later gets everything;
  - receivers that answer 400, 500 then 200, 429, or never: what is
    retried, what is dropped and counted, and that it ends.

The reference is `vmsampler dump` of the file.  dump's CSV keeps the
columns of the first schema generation (a later generation's new columns
cannot be added to a fixed header), so the columns that only later
generations have are checked against `vmsampler tail --no-follow` CSV,
which prints a new header for each generation.

Without the servers (or rw_send, a build without remote write) the test
skips (exit 77), unless VMS_REQUIRE_TSDB=1 (scripts/test.sh): then it
fails."""
import csv
import http.server
import io
import json
import math
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import test_py_lib

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
BUILD = os.environ.get('VMS_BUILD', os.path.dirname(BIN))
RW_SEND = os.environ.get('VMS_RW_SEND', os.path.join(BUILD, 'tests', 'rw_send'))
FIXTURE = os.path.join(SRC, 'tests', 'fixtures', 'runs', 'vmlab-3-plus-3-busy.vms')
META = ['seq', 'time', 't_mono_ns', 'gen', 'flags', 'missed_ticks', 'lost_frames', 'late_ns', 'self_cpu_ns']
HOST = 'h1'


def skip_or_fail(why):
    test_py_lib.skip_or_fail(why, 'VMS_REQUIRE_TSDB')


def check_prereqs():
    miss = [b for b in ('influxd', 'prometheus', VICTORIA, 'jq') if not shutil.which(b)]
    if miss:
        skip_or_fail('no %s (Debian packages influxdb, prometheus, victoria-metrics, jq: scripts/lib.sh '
                     'TEST_PKGS)' % ', '.join(miss))
    if not os.access(RW_SEND, os.X_OK):
        skip_or_fail('%s not built (meson -Dremote_write: libprotobuf-c-dev, protobuf-c-compiler, '
                     'libsnappy-dev, libcurl4-openssl-dev)' % RW_SEND)
    if not os.path.isfile(FIXTURE):
        skip_or_fail('%s missing' % FIXTURE)


def run(*args, **kw):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120, **kw)
    assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r.stdout


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fetch(url, data=None, method=None, headers=None, timeout=30):
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_for(pred, timeout=30.0, what='a condition'):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError('timed out waiting for %s' % what)


def us_of(time_str):
    """dump's time column (ISO 8601 with µs and the offset) as µs since the epoch."""
    import datetime
    t = datetime.datetime.fromisoformat(time_str)
    return (t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)


# ---- the reference: dump (and tail's CSV for later generations' columns) ----

def csv_frames(text):
    """{seq: {column: cell}} of CSV with one or more header lines (tail
    prints one per generation), meta columns included."""
    frames = {}
    head = None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == 'seq':
            head = row
            continue
        frames[int(row[0])] = dict(zip(head, row))
    return frames


def reference(path):
    """{seq: {column: cell}}: dump's cells, and tail's for the columns
    dump's header does not have."""
    ref = csv_frames(run('dump', path))
    tail = csv_frames(run('tail', '--no-follow', path))
    assert set(ref) == set(tail) and ref, 'dump and tail disagree on the frames'
    for seq, cells in tail.items():
        for col, cell in cells.items():
            if col not in ref[seq]:
                ref[seq][col] = cell
    return ref


def cell_value(cell):
    """A non-empty CSV cell as the exact number it is."""
    return float(cell) if '.' in cell else int(cell)


def place(col):
    """vmsampler(1), TAIL: where a column goes in line protocol
    (measurement, tags but host and uuid, field; a field "time" is "time_")."""
    m, tags, f = place_(col)
    return m, tags, 'time_' if f == 'time' else f


def place_(col):
    g, rest = col.split('.', 1)
    if g in ('cpu', 'perf'):
        ent, f = rest.split('.', 1)
        cpu = 'cpu-total' if ent == 'all' else ent if ent.startswith('cpu') else 'cpu' + ent
        return g, (('cpu', cpu),), f.replace('.', '_')
    if g in ('disk', 'net'):
        ent, f = rest.rsplit('.', 1)
        return g, (('device', ent),), f
    if g == 'vm':
        name, r = rest.split('.', 1)
        m = re.fullmatch(r'(lv\.)?vcpu(\d+)\.(.+)', r)
        if m:
            return 'vm_vcpu', (('domain', name), ('vcpu', m.group(2))), \
                ('lv_' if m.group(1) else '') + m.group(3).replace('.', '_')
        for sub, meas in (('net.', 'vm_net'), ('block.', 'vm_block')):
            if r.startswith(sub):
                ent, f = r[len(sub):].rsplit('.', 1)
                return meas, (('device', ent), ('domain', name)), f
        return 'vm', (('domain', name),), r.replace('.', '_')
    return g, (), rest.replace('.', '_')


def expected_points(ref):
    """{(measurement, tags, field, seq): value} of the reference, and the
    frames' meta {seq: {name: value}}."""
    pts, meta = {}, {}
    for seq, cells in ref.items():
        meta[seq] = {k: cells[k] for k in META}
        for col, cell in cells.items():
            if col in META or cell == '':
                continue
            m, tags, f = place(col)
            pts[(m, tags, f, seq)] = cell_value(cell)
    return pts, meta


# ---- servers ------------------------------------------------------------------

class Server:
    """A database started on 127.0.0.1 with its own temporary directory,
    stopped (and its directory removed) by stop(), whatever happened."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix='vms-%s.' % name)
        self.port = free_port()
        self.proc = None
        self.log = open(os.path.join(self.dir, 'log'), 'wb')

    def spawn(self, argv):
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir,
                                     start_new_session=True)

    def url(self, path):
        return 'http://127.0.0.1:%d%s' % (self.port, path)

    def wait_ready(self, path, ok=(200, 204)):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError('%s exited %d: %s' % (self.name, self.proc.returncode, self.tail_log()))
            try:
                return fetch(self.url(path), timeout=2)[0] in ok
            except (OSError, urllib.error.URLError):
                return False
        wait_for(ready, 60, '%s to answer' % self.name)

    def tail_log(self):
        self.log.flush()
        with open(os.path.join(self.dir, 'log'), 'rb') as f:
            return f.read()[-2000:].decode('utf-8', 'replace')

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def remove(self):
        self.stop()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Influx(Server):
    def __init__(self):
        super().__init__('influxd')
        rpc = free_port()
        d = self.dir
        self.conf = os.path.join(d, 'influxdb.conf')
        with open(self.conf, 'w') as f:
            f.write('reporting-enabled = false\nbind-address = "127.0.0.1:%d"\n'
                    '[meta]\n  dir = "%s/meta"\n'
                    '[data]\n  dir = "%s/data"\n  wal-dir = "%s/wal"\n  query-log-enabled = false\n'
                    '[monitor]\n  store-enabled = false\n'
                    '[subscriber]\n  enabled = false\n'
                    '[continuous_queries]\n  enabled = false\n'
                    '[http]\n  bind-address = "127.0.0.1:%d"\n  log-enabled = false\n'
                    '  pprof-enabled = false\n  max-body-size = 0\n'
                    % (rpc, d, d, d, self.port))
        self.spawn(['influxd', 'run', '-config', self.conf])
        self.wait_ready('/ping')

    def q(self, db, query):
        st, body = fetch(self.url('/query?' + urllib.parse.urlencode({'db': db, 'q': query, 'epoch': 'ns'})),
                        data=b'', method='POST')
        assert st == 200, (st, body[:500])
        res = json.loads(body)['results'][0]
        assert 'error' not in res, res
        return res.get('series', [])

    def write(self, db, lines):
        st, body = fetch(self.url('/write?' + urllib.parse.urlencode({'db': db, 'precision': 'ns'})),
                        data=lines.encode())
        assert st == 204, (st, body[:500])

    def points(self, db):
        """{(measurement, tags, field, t_ns): value} and the tags host/uuid
        seen, of everything in db."""
        pts, hosts, uuids = {}, set(), {}
        for s in self.q(db, 'SELECT * FROM /.*/ GROUP BY *'):
            tags = dict(s.get('tags') or {})
            hosts.add(tags.pop('host', None))
            uuid = tags.pop('uuid', None)
            if tags.get('domain'):  # GROUP BY * gives other measurements' tags as ''
                uuids.setdefault(tags['domain'], set()).add(uuid)
            key = tuple(sorted((k, v) for k, v in tags.items() if v != ''))
            cols = s['columns']
            for row in s['values']:
                for c, v in zip(cols[1:], row[1:]):
                    if v is not None:
                        pts[(s['name'], key, c, row[0])] = v
        return pts, hosts, uuids


class Prometheus(Server):
    def __init__(self, port=None, start=True):
        super().__init__('prometheus')
        if port:
            self.port = port
        self.conf = os.path.join(self.dir, 'prometheus.yml')
        with open(self.conf, 'w') as f:
            f.write('global:\n  scrape_interval: 1m\n')
        if start:
            self.start()

    def start(self):
        self.spawn(['prometheus', '--config.file=' + self.conf, '--storage.tsdb.path=' + self.dir + '/data',
                    '--web.listen-address=127.0.0.1:%d' % self.port, '--web.enable-remote-write-receiver'])
        self.wait_ready('/-/ready')

    def series(self, t_end_s):
        """{(metric name, labels): [(t_ms, value)]} of every vmsampler_ series."""
        st, body = fetch(self.url('/api/v1/query?' + urllib.parse.urlencode(
            {'query': '{__name__=~"vmsampler_.+"}[1h]', 'time': '%.3f' % t_end_s})))
        assert st == 200, body[:500]
        out = {}
        for s in json.loads(body)['data']['result']:
            m = dict(s['metric'])
            name = m.pop('__name__')
            out[(name, tuple(sorted(m.items())))] = [(round(float(t) * 1000), float(v)) for t, v in s['values']]
        return out

    def scalar(self, query, t_s):
        st, body = fetch(self.url('/api/v1/query?' + urllib.parse.urlencode({'query': query, 'time': '%.3f' % t_s})))
        assert st == 200, body[:500]
        return json.loads(body)['data']['result']


# Debian's victoria-metrics (1.79) unless VMS_VICTORIA names another binary
# (VictoriaMetrics v1.151 built from its Go module: doc/export.md, "A fleet")
VICTORIA = os.environ.get('VMS_VICTORIA') or 'victoria-metrics'


class Victoria(Server):
    def __init__(self, *flags):
        super().__init__('victoria-metrics')
        self.flags = list(flags)
        self.start()

    def start(self):
        """(Re)start on the same port and data directory."""
        self.spawn([VICTORIA, '-storageDataPath=' + self.dir + '/data',
                    '-httpListenAddr=127.0.0.1:%d' % self.port, '-retentionPeriod=100y'] + self.flags)
        self.wait_ready('/health')

    def version(self):
        """Its vm_app_version{short_version} ('' when the build set none)."""
        st, body = fetch(self.url('/metrics'))
        m = re.search(r'vm_app_version\{[^}]*short_version="([^"]*)"', body.decode())
        return m.group(1) if st == 200 and m else ''

    def series(self, names='vmsampler_.+'):
        """{(name, labels): [(t_ms, value)]} of the series whose names
        match, raw (a staleness marker's value is None), sorted by time."""
        fetch(self.url('/internal/force_flush'))
        st, body = fetch(self.url('/api/v1/export?' + urllib.parse.urlencode(
            {'match[]': '{__name__=~"%s"}' % names, 'start': '0'})))
        assert st == 200, body[:500]
        out = {}
        for line in body.decode().splitlines():
            s = json.loads(line)
            m = dict(s['metric'])
            name = m.pop('__name__')
            out.setdefault((name, tuple(sorted(m.items()))), []).extend(zip(s['timestamps'], s['values']))
        return {k: sorted(v, key=lambda p: p[0]) for k, v in out.items()}


# ---- remote write's reference ----------------------------------------------------

def rw_name(col):
    return 'vmsampler_' + re.sub('[^a-zA-Z0-9_]', '_', col)


def rw_expected(ref):
    """{(metric name, ()): [(t_ms, value)]} as rw_send maps the reference
    (the key label is checked apart: dump has no keys)."""
    out = {}
    for seq in sorted(ref):
        cells = ref[seq]
        t_ms = us_of(cells['time']) // 1000
        for col, cell in cells.items():
            if col in META or cell == '':
                continue
            out.setdefault(rw_name(col), []).append((t_ms, float(cell)))
    return out


def without_key(got):
    """Series by name (rw_send's key label is the entity key: one series
    per name here, as names already hold the entity)."""
    out = {}
    for (name, labels), samples in got.items():
        lab = dict(labels)
        assert lab.pop('host') == HOST, labels
        lab.pop('key', None)
        assert not lab, labels
        assert name not in out, 'two series named %s' % name
        out[name] = samples
    return out


def rw_send(url, path, *extra, **kw):
    return subprocess.run([RW_SEND, url, path, '--host', HOST] + list(extra), capture_output=True, text=True,
                          timeout=kw.get('timeout', 300))


# ---- the tests -----------------------------------------------------------------------

class ServerCase(unittest.TestCase):
    """Servers and processes a test starts, stopped and removed in
    tearDown whatever happened (test_export_rw.py uses it too)."""

    def setUp(self):
        self.servers = []
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix='vms-tsdb.')

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for s in self.servers:
            s.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def server(self, cls, *a, **kw):
        s = cls.__new__(cls)
        self.servers.append(s)  # removed in tearDown even if it fails to start
        s.__init__(*a, **kw)
        return s


class TSDB(ServerCase):
    @classmethod
    def setUpClass(cls):
        cls.ref = reference(FIXTURE)
        cls.pts, cls.meta = expected_points(cls.ref)

    # -- InfluxDB --

    def check_influx(self, influx, db, ref):
        pts, meta = expected_points(ref)
        got, hosts, uuids = influx.points(db)
        self.assertEqual(hosts, {HOST})
        for dom, u in uuids.items():
            self.assertEqual(len(u), 1, dom)
            self.assertRegex(next(iter(u)), r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', dom)
        # the frames' own line: seq -> timestamp, meta equal to dump's
        ts_of = {}
        for (m, tags, f, t), v in got.items():
            if m == 'vmsampler' and f == 'seq':
                ts_of[v] = t
        self.assertEqual(set(ts_of), set(meta))
        for seq, mt in meta.items():
            t = ts_of[seq]
            self.assertEqual(t // 1000, us_of(mt['time']), seq)
            for k in META[2:]:
                self.assertEqual(got[('vmsampler', (), k, t)], int(mt[k]), (seq, k))
            self.assertEqual(got[('vmsampler', (), 'reader_lost', t)], 0)
            self.assertEqual(got[('vmsampler', (), 'dropped_values', t)], 0)
        want = {(m, tags, f, ts_of[seq]): v for (m, tags, f, seq), v in pts.items()}
        have = {k: v for k, v in got.items() if k[0] != 'vmsampler'}
        missing = [k for k in want if k not in have]
        extra = [k for k in have if k not in want]
        self.assertFalse(missing[:5], 'in dump, not in InfluxDB (%d)' % len(missing))
        self.assertFalse(extra[:5], 'in InfluxDB, empty or absent in dump (%d)' % len(extra))
        # integers stay integers (InfluxDB's JSON writes a float 1.0 as 1:
        # the field's type says it)
        ftype = {(s['name'], f): t for s in influx.q(db, 'SHOW FIELD KEYS') for f, t in s['values']}
        for k, v in want.items():
            self.assertEqual(have[k], v, k)
            self.assertEqual(ftype[(k[0], k[2])], 'integer' if type(v) is int else 'float', k)
        return len(want)

    def test_influx_from_file(self):
        influx = self.server(Influx)
        for db, cmd in (('vmsdump', ('dump', FIXTURE)), ('vms', ('tail', '--no-follow', FIXTURE))):
            influx.q('', 'CREATE DATABASE ' + db)
            lines = run(*cmd, '--format', 'influx', '--host', HOST)
            self.assertTrue(all(' ' in ln for ln in lines.splitlines()))
            influx.write(db, lines)
            n = self.check_influx(influx, db, self.ref)  # dump --format influx as tail writes it
        # the whole run: every frame, the busy guests' columns (later generations) too
        self.assertEqual(len(self.meta), 120)
        self.assertGreater(n, 120 * 250)
        domains = {k[1] for k in self.pts if k[0] == 'vm'}
        self.assertEqual({dict(t)['domain'] for t in domains},
                         {'vms-001', 'vms-002', 'vms-003', 'vms-901', 'vms-902', 'vms-903'})
        print('influx: %d values of %d frames equal dump' % (n, len(self.meta)))

    def test_influx_escaping(self):
        """A tag value with a space, commas and equals signs, escaped as
        the line-protocol reference says, comes back from InfluxDB as it
        was; one with a backslash (read differently by 1.x and 2.x) is
        refused."""
        influx = self.server(Influx)
        influx.q('', 'CREATE DATABASE esc')
        host = 'web 1,rack=a=b'
        influx.write('esc', run('tail', '--no-follow', '--format', 'influx', '--host', host, '-n', '2', FIXTURE))
        for meas in ('vmsampler', 'cpu', 'vm_vcpu'):
            tv = influx.q('esc', 'SHOW TAG VALUES FROM "%s" WITH KEY = "host"' % meas)
            self.assertEqual(tv[0]['values'], [['host', host]], meas)
        r = subprocess.run([BIN, 'tail', '--no-follow', '--format', 'influx', '--host', 'a\\b', FIXTURE],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (2, ''))
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_influx_from_live_ring(self):
        influx = self.server(Influx)
        influx.q('', 'CREATE DATABASE live')
        ring, out = os.path.join(self.tmp, 'ring'), os.path.join(self.tmp, 'run.vms')
        samp = subprocess.Popen([BIN, '-i', '100ms', '-n', '40', '-o', out, '--ring', ring],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(samp)
        wait_for(lambda: os.path.exists(ring), 10, 'the ring')
        lp = open(os.path.join(self.tmp, 'lp'), 'w+')
        self.addCleanup(lp.close)
        tail = subprocess.Popen([BIN, 'tail', ring, '--format', 'influx', '--host', HOST], stdout=lp,
                                stderr=subprocess.PIPE)
        self.procs.append(tail)
        # and the file as it grows (like tail -f: until SIGINT)
        wait_for(lambda: os.path.exists(out), 10, 'the file')
        flp = open(os.path.join(self.tmp, 'flp'), 'w+')  # not a pipe nobody reads meanwhile
        self.addCleanup(flp.close)
        ftail = subprocess.Popen([BIN, 'tail', out, '--format', 'influx', '--host', HOST],
                                 stdout=flp, stderr=subprocess.PIPE, text=True)
        self.procs.append(ftail)
        self.assertEqual(samp.wait(60), 0, samp.stderr.read())
        self.assertEqual(tail.wait(30), 0, tail.stderr.read())  # the writer exited: tail too
        time.sleep(1)
        ftail.send_signal(signal.SIGINT)
        _, ferr = ftail.communicate(timeout=30)
        self.assertEqual(ftail.returncode, 0, ferr)
        lp.seek(0)
        lines = lp.read()
        flp.seek(0)
        self.assertEqual(flp.read(), lines)  # the growing file and the ring: the same lines
        influx.write('live', lines)
        ref = reference(out)
        n = self.check_influx(influx, 'live', ref)
        self.assertEqual(len(ref), 40)
        print('influx, live ring: %d values of %d frames equal dump of the file' % (n, len(ref)))

    # -- JSON lines --

    def test_json_lines(self):
        text = run('tail', '--no-follow', '--format', 'json', FIXTURE)
        self.assertEqual(run('dump', FIXTURE, '--format', 'jsonl'), text)  # dump's, checked with tail's
        objs = [json.loads(ln) for ln in text.splitlines()]
        self.assertEqual([o['seq'] for o in objs], sorted(self.ref))
        n = 0
        for o in objs:
            cells = self.ref[o['seq']]
            self.assertEqual(o['t_wall_ns'] // 1000, us_of(cells['time']))
            self.assertEqual(o.pop('reader_lost'), 0)
            o.pop('t_wall_ns')
            want = {k: cell_value(v) for k, v in cells.items() if k != 'time' and v != ''}
            self.assertEqual(o, want)  # absent where dump is empty, nothing else
            for k, v in want.items():
                self.assertIs(type(o[k]), type(v), k)
            n += len(want)
        # jq, a parser of its own, reads every line and the same numbers
        jq = subprocess.run(['jq', '-c', '[.seq, .["cpu.all.user"], .["load.1m"]]'], input=text,
                            capture_output=True, text=True, check=True)
        rows = [json.loads(ln) for ln in jq.stdout.splitlines()]
        self.assertEqual(rows, [[s, cell_value(self.ref[s]['cpu.all.user']), cell_value(self.ref[s]['load.1m'])]
                                for s in sorted(self.ref)])
        print('json: %d values of %d frames equal dump' % (n, len(objs)))

    def test_reader_lost_frames_are_counted(self):
        ring = os.path.join(self.tmp, 'ring')
        samp = subprocess.Popen([BIN, '-i', '10ms', '-n', '400', '-o', '/dev/null', '--ring', ring,
                                 '--ring-slots', '16'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(samp)
        wait_for(lambda: os.path.exists(ring), 10, 'the ring')
        tail = subprocess.Popen([BIN, 'tail', ring, '--format', 'json'], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(tail)
        time.sleep(0.5)
        tail.send_signal(signal.SIGSTOP)
        time.sleep(1.0)  # 100 frames pass a ring of 16
        tail.send_signal(signal.SIGCONT)
        out, err = tail.communicate(timeout=60)
        self.assertEqual(samp.wait(30), 0)
        objs = [json.loads(ln) for ln in out.splitlines()]
        lost = sum(o['reader_lost'] for o in objs)
        self.assertGreater(lost, 50)
        for a, b in zip(objs, objs[1:]):
            self.assertEqual(b['seq'] - a['seq'] - 1, b['reader_lost'], (a['seq'], b['seq']))
        self.assertEqual(objs[-1]['seq'] - objs[0]['seq'] + 1, len(objs) + lost - objs[0]['reader_lost'])
        self.assertIn('%d frames were overwritten' % lost, err)

    # -- remote write --

    def check_rw(self, got, ulp_above_2_53=False):
        """Exactly; with ulp_above_2_53, a value above 2^53 (no longer an
        integer a double holds exactly: the ns-epoch slow_t columns) may
        come back one unit in the last place off (VictoriaMetrics 1.79's
        decimal conversion does that to them)."""
        want = rw_expected(self.ref)
        have = without_key(got)
        self.assertEqual(set(have), set(want))
        for name, samples in want.items():
            if ulp_above_2_53 and have[name] != samples:
                self.assertEqual([t for t, v in have[name]], [t for t, v in samples], name)
                for (t, a), (_, b) in zip(have[name], samples):
                    if a != b:
                        self.assertGreater(abs(b), 2 ** 53, (name, t))
                        self.assertLessEqual(abs(a - b), math.ulp(b), (name, t))
                continue
            self.assertEqual(have[name], samples, name)
        return sum(len(s) for s in want.values())

    def rw_totals(self, out):
        m = re.search(r'^total frames=(\d+) requests=(\d+) samples=(\d+) dropped=(\d+)', out, re.M)
        return tuple(int(x) for x in m.groups())

    def send_fixture(self, url, batch):
        """rw_send of the whole fixture, batch frames per request: all
        accepted; the samples sent."""
        r = rw_send(url, FIXTURE, '--batch', str(batch))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        frames, reqs, samples, dropped = self.rw_totals(r.stdout)
        self.assertEqual((frames, reqs, dropped), (120, -(-120 // batch), 0))
        return samples

    def test_remote_write_prometheus(self):
        prom = self.server(Prometheus)
        samples = self.send_fixture(prom.url('/api/v1/write'), 10)
        t_end = us_of(self.ref[max(self.ref)]['time']) / 1e6 + 1
        n = self.check_rw(prom.series(t_end))
        self.assertEqual(n, samples)
        # count_over_time of a host counter over the run: one per frame
        c = prom.scalar('count_over_time(vmsampler_cpu_all_user[10m])', t_end)
        self.assertEqual(float(c[0]['value'][1]), 120)
        print('prometheus: %d samples of 120 frames equal dump' % n)

    def test_remote_write_victoria_metrics(self):
        vm = self.server(Victoria)
        samples = self.send_fixture(vm.url('/api/v1/write'), 30)
        got = {}
        wait_for(lambda: got.update(vm.series()) or sum(len(s) for s in got.values()) >= samples, 30,
                 'VictoriaMetrics to show the samples')
        n = self.check_rw(vm.series(), ulp_above_2_53=True)
        self.assertEqual(n, samples)
        print('victoria-metrics: %d samples of 120 frames equal dump' % n)

    def test_remote_write_receiver_down_at_first(self):
        port = free_port()
        url = 'http://127.0.0.1:%d/api/v1/write' % port
        proc = subprocess.Popen([RW_SEND, url, FIXTURE, '--host', HOST, '--batch', '20', '--retries', '1000',
                                 '--backoff-ms', '50', '--max-backoff-ms', '400'], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        time.sleep(3)  # it retries meanwhile
        self.assertIsNone(proc.poll())
        prom = self.server(Prometheus, port=port)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, out + err)
        first = out.splitlines()[0]
        self.assertRegex(first, r'status=2\d\d attempts=([5-9]|\d\d+) rc=0')  # retried until it came up
        frames, reqs, samples, dropped = self.rw_totals(out)
        self.assertEqual((frames, reqs, dropped), (120, 6, 0))
        t_end = us_of(self.ref[max(self.ref)]['time']) / 1e6 + 1
        self.assertEqual(self.check_rw(prom.series(t_end)), samples)  # nothing lost, nothing twice

    def test_remote_write_receiver_restarted_mid_run(self):
        """Prometheus stopped after a few requests and started again on
        its data directory 3 s later: every sample arrives once."""
        prom = self.server(Prometheus)
        proc = subprocess.Popen([RW_SEND, prom.url('/api/v1/write'), FIXTURE, '--host', HOST, '--batch', '5',
                                 '--pace-ms', '150', '--retries', '1000', '--backoff-ms', '50',
                                 '--max-backoff-ms', '400'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        self.procs.append(proc)
        time.sleep(1)
        prom.stop()
        time.sleep(3)
        self.assertIsNone(proc.poll())  # waiting for it
        prom.start()
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, out + err)
        frames, reqs, samples, dropped = self.rw_totals(out)
        self.assertEqual((frames, reqs, dropped), (120, 24, 0))
        retried = [ln for ln in out.splitlines() if ln.startswith('send') and 'attempts=1 ' not in ln]
        self.assertEqual(len(retried), 1, out)  # the request of the outage, and only it
        t_end = us_of(self.ref[max(self.ref)]['time']) / 1e6 + 1
        self.assertEqual(self.check_rw(prom.series(t_end)), samples)

    def test_remote_write_bad_receivers(self):
        """A scripted receiver: statuses in order, then the last forever
        ('hang': accept and never answer); over HTTPS with a certificate
        for another name."""
        class H(http.server.BaseHTTPRequestHandler):
            script, seen = [], []

            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                H.seen.append((self.headers['Content-Encoding'], self.headers['Content-Type'],
                               self.headers['X-Prometheus-Remote-Write-Version'], len(body)))
                st = H.script.pop(0) if len(H.script) > 1 else H.script[0]
                if st == 'hang':
                    time.sleep(3)
                    return
                body = b'said %d\nmore' % st
                self.send_response(st)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        url = 'http://127.0.0.1:%d/api/v1/write' % srv.server_address[1]
        small = os.path.join(self.tmp, 'small.vms')
        subprocess.run([BIN, '-i', '10ms', '-n', '3', '-o', small], check=True, capture_output=True)
        try:
            # 400 to everything: a setup error (-EREMOTEIO), nothing
            # dropped, the batch kept (issue 23); one attempt per request
            H.script[:], H.seen[:] = [400], []
            r = rw_send(url, small, '--batch', '1')
            self.assertEqual(r.returncode, 1)
            frames, reqs, samples, dropped = self.rw_totals(r.stdout)
            self.assertEqual((frames, reqs, samples, dropped), (3, 0, 0, 0))
            # a few requests (halves, down to two series alone), none retried
            self.assertRegex(r.stdout.splitlines()[0], r'status=400 attempts=([2-9]|[1-3][0-9]) rc=-121 ')
            self.assertIn(' retries=0 ', r.stdout)
            self.assertIn('HTTP 400: said 400', r.stdout)
            self.assertIn('nothing accepted', r.stdout)
            self.assertEqual(H.seen[0][:3], ('snappy', 'application/x-protobuf', '0.1.0'))
            # 500, 500, then 200: retried, nothing dropped
            H.script[:], H.seen[:] = [500, 503, 200], []
            r = rw_send(url, small, '--batch', '3', '--backoff-ms', '10')
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertIn('status=200 attempts=3 rc=0', r.stdout)
            self.assertEqual(len({s[3] for s in H.seen}), 1)  # the same body each time
            # 429: retried like a 5xx
            H.script[:], H.seen[:] = [429, 204], []
            r = rw_send(url, small, '--batch', '3', '--backoff-ms', '10')
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertIn('status=204 attempts=2 rc=0', r.stdout)
            # never answers: each attempt times out, retries are bounded
            H.script[:], H.seen[:] = ['hang'], []
            t0 = time.monotonic()
            r = subprocess.run([RW_SEND, url, small, '--batch', '3', '--timeout-ms', '300', '--retries', '2',
                                '--backoff-ms', '10', '--once', '1'], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn('attempts=3 rc=-11', r.stdout)  # -EAGAIN: the batch kept
            self.assertIn('Timeout was reached', r.stdout)
            self.assertLess(time.monotonic() - t0, 10)
            # HTTPS: a certificate for another name is not retried, the
            # batch kept; the same server with the right name takes it
            H.script[:], H.seen[:] = [204], []
            for san, rc, want in (('DNS:other.example', 1, r'attempts=1 rc=-71 .*(SSL|certificate)'),
                                  ('IP:127.0.0.1', 0, r'status=204 attempts=1 rc=0')):
                key, crt = os.path.join(self.tmp, 'key.pem'), os.path.join(self.tmp, 'crt.pem')
                subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
                                '-out', crt, '-days', '1', '-subj', '/CN=vms-test', '-addext',
                                'subjectAltName=' + san], check=True, capture_output=True)
                tls = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                ctx.load_cert_chain(crt, key)
                tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
                threading.Thread(target=tls.serve_forever, daemon=True).start()
                try:
                    r = subprocess.run([RW_SEND, 'https://127.0.0.1:%d/api/v1/write' % tls.server_address[1], small,
                                        '--batch', '3', '--retries', '3', '--ca-file', crt, '--once', '1'],
                                       capture_output=True, text=True, timeout=60)
                    self.assertEqual(r.returncode, rc, r.stdout + r.stderr)
                    self.assertRegex(r.stdout, want)
                finally:
                    tls.shutdown()
                    tls.server_close()
            self.assertEqual(len(H.seen), 1)  # only the verified one got through
        finally:
            srv.shutdown()
            srv.server_close()


if __name__ == '__main__':
    check_prereqs()
    unittest.main(verbosity=2)
