#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`vmsampler export --remote-write` (issue 12) into the real receivers
from Debian, Prometheus 2.42 (--web.enable-remote-write-receiver) and
VictoriaMetrics 1.79, each started here on 127.0.0.1 on a free port with a
temporary directory and stopped whatever happens (test_tsdb's servers).

The input is the recorded run tests/fixtures/runs/vmlab-3-plus-3-busy.vms
(PROVENANCE.md: 120 frames at 1 s; vms-901..903 started at frame 22 and
destroyed at frame 70).  The reference is `vmsampler dump` (and tail's CSV
for the columns of later generations, as test_tsdb), mapped to the names
of vmsampler(1), EXPORT, by a table written here from the man page (not
by metrics.c): node_cpu_seconds_total{cpu="0",mode="user"} = cpu.0.user /
USER_HZ, node_disk_read_bytes_total = rd_sectors * 512, ..., libvirt's
slow values held until their next refresh.  Checked:
  - every sample of those families, value and timestamp, in Prometheus
    (range query) and in VictoriaMetrics (/api/v1/export: raw samples),
    and nothing else in those series; count_over_time of a host counter
    is the number of frames; at the last frame every series a scrape of
    `export --listen` of the same file gives is there with the scrape's
    value, and the pushed series of the last frame are exactly those;
  - staleness: VictoriaMetrics holds the stale NaN (null in its export)
    one frame after a destroyed VM's last sample; Prometheus answers an
    instant query there with nothing while the 5-minute lookback would
    still show the last value one second earlier;
  - SIGKILL of export while requests wait in a slow proxy, twice, and a
    restart with the same --rw-cursor: VictoriaMetrics (which keeps a
    sample sent twice) has every sample exactly once;
  - the receiver down at first, up later: everything arrives, and the
    exporter's own counters on /metrics say what happened;
  - a live run (vmsampler at 200 ms) exported as it is written, Prometheus
    stopped for 60 s mid-run and started again: count_over_time of a host
    counter equals the file's frames, each with dump's value at its time;
  - a request the receiver took whose acknowledgement never came back
    (export killed meanwhile): sent again whole, Prometheus refuses it
    whole (out of order: not split), nothing is lost;
  - credentials: the bearer token and basic authentication reach the
    receiver from files; a file readable by others is refused;
  - a ring whose frames outrun a stalled receiver: the lost frames are
    counted on /metrics (vmsampler_export_lost_frames_total) and said;
  - receivers that refuse everything (issue 23): 302, 400, 401, 404 and
    413 to every request stop export with one line, exit 1 and the cursor
    unmoved; the receiver fixed, every frame arrives exactly once; a 413
    above a size limit splits requests until they fit; a receiver that
    refuses only requests holding one poisoned series: only its samples
    are dropped, counted on /metrics and said.
Without the servers: SKIP (77), a failure with VMS_REQUIRE_TSDB=1."""
import http.server
import json
import math
import os
import re
import select
import shutil
import socket
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_tsdb  # noqa: E402
from test_tsdb import (BIN, FIXTURE, META, Prometheus, ServerCase, Victoria, fetch, free_port,  # noqa: E402
                       reference, us_of, wait_for)

USER_HZ = os.sysconf('SC_CLK_TCK')


def check_prereqs():
    miss = [b for b in ('prometheus', 'victoria-metrics') if not shutil.which(b)]
    if miss:
        test_tsdb.skip_or_fail('no %s (Debian packages prometheus, victoria-metrics)' % ', '.join(miss))
    # a usage error in a build with remote write, "no remote write" without
    r = subprocess.run([BIN, 'export', '--file', FIXTURE, '--ring', 'r', '--remote-write', 'http://127.0.0.1:9/'],
                       capture_output=True, text=True, timeout=30)
    if 'no remote write' in r.stderr or 'no HTTP server' in r.stderr:
        test_tsdb.skip_or_fail('this build has no remote write: ' + r.stderr.strip())


# ---- the reference: dump's cells under vmsampler(1)'s names ------------------------

CPU_MODES = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal')
DISK = {'rd_ios': ('node_disk_reads_completed_total', 1), 'rd_merges': ('node_disk_reads_merged_total', 1),
        'rd_sectors': ('node_disk_read_bytes_total', 512), 'rd_ticks': ('node_disk_read_time_seconds_total', 1e-3),
        'wr_ios': ('node_disk_writes_completed_total', 1), 'wr_merges': ('node_disk_writes_merged_total', 1),
        'wr_sectors': ('node_disk_written_bytes_total', 512),
        'wr_ticks': ('node_disk_write_time_seconds_total', 1e-3), 'in_flight': ('node_disk_io_now', 1),
        'io_ticks': ('node_disk_io_time_seconds_total', 1e-3),
        'time_in_queue': ('node_disk_io_time_weighted_seconds_total', 1e-3)}
NET = {'rx_bytes': 'node_network_receive_bytes_total', 'rx_packets': 'node_network_receive_packets_total',
       'rx_errs': 'node_network_receive_errs_total', 'rx_drop': 'node_network_receive_drop_total',
       'tx_bytes': 'node_network_transmit_bytes_total', 'tx_packets': 'node_network_transmit_packets_total',
       'tx_errs': 'node_network_transmit_errs_total', 'tx_drop': 'node_network_transmit_drop_total'}
HOST = {'stat.ctxt': 'node_context_switches_total', 'stat.intr': 'node_intr_total',
        'stat.processes': 'node_forks_total', 'stat.procs_running': 'node_procs_running',
        'stat.procs_blocked': 'node_procs_blocked', 'load.1m': 'node_load1', 'load.5m': 'node_load5',
        'load.15m': 'node_load15'}
VM = {'cpu_time': ('libvirt_domain_info_cpu_time_seconds_total', 1e-9),
      'cpu_user': ('vmsampler_domain_cpu_user_seconds_total', 1e-9),
      'cpu_system': ('vmsampler_domain_cpu_system_seconds_total', 1e-9)}
VM_NET = {'rx_bytes': 'libvirt_domain_interface_stats_receive_bytes_total',
          'tx_bytes': 'libvirt_domain_interface_stats_transmit_bytes_total',
          'rx_packets': 'libvirt_domain_interface_stats_receive_packets_total',
          'tx_packets': 'libvirt_domain_interface_stats_transmit_packets_total'}
# held (slow) values: the last known one stands until the next refresh
VM_BLOCK = {'rd_bytes': ('libvirt_domain_block_stats_read_bytes_total', 1),
            'wr_bytes': ('libvirt_domain_block_stats_write_bytes_total', 1),
            'rd_reqs': ('libvirt_domain_block_stats_read_requests_total', 1),
            'wr_times': ('libvirt_domain_block_stats_write_time_seconds_total', 1e-9)}
VM_SLOW = {'balloon.current': ('libvirt_domain_info_memory_usage_bytes', 1024),
           'balloon.maximum': ('libvirt_domain_info_maximum_memory_bytes', 1024),
           # read every sources.libvirt.detail_interval: held the same way
           'mem.rss': ('libvirt_domain_memory_stats_rss_bytes', 1)}


def scaled(cell, mul):
    """The cell in the family's unit, computed as vmsampler(1) says:
    (raw / 10^scale) * factor, or / divisor for ticks, ms and ns."""
    v = float(cell) if '.' in cell else int(cell)
    if mul == 'hz':
        return v / USER_HZ
    if mul == 1e-3:
        return v / 1e3
    if mul == 1e-9:
        return v / 1e9
    return float(v * mul)


def series_of(col, uuids):
    """(name, labels, factor, held) of a dump column, or None when the
    table above does not take it."""
    if col in HOST:
        return HOST[col], (), 1, False
    m = re.fullmatch(r'cpu\.(\d+)\.(\w+)', col)
    if m and m.group(2) in CPU_MODES:
        return 'node_cpu_seconds_total', (('cpu', m.group(1)), ('mode', m.group(2))), 'hz', False
    m = re.fullmatch(r'disk\.(.+)\.(\w+)', col)
    if m and m.group(2) in DISK:
        name, f = DISK[m.group(2)]
        return name, (('device', m.group(1)),), f, False
    m = re.fullmatch(r'net\.(.+)\.(\w+)', col)
    if m and m.group(2) in NET:
        return NET[m.group(2)], (('device', m.group(1)),), 1, False
    m = re.fullmatch(r'vm\.([^.]+)\.(.+)', col)
    if not m:
        return None
    dom, rest = m.group(1), m.group(2)
    lab = (('domain', dom), ('uuid', uuids[dom]))
    if rest in VM:
        return VM[rest][0], lab, VM[rest][1], False
    if rest in VM_SLOW:
        return VM_SLOW[rest][0], lab, VM_SLOW[rest][1], True
    m = re.fullmatch(r'vcpu(\d+)\.(time|delay)', rest)
    if m:
        return 'libvirt_domain_vcpu_%s_seconds_total' % m.group(2), lab + (('vcpu', m.group(1)),), 1e-9, False
    m = re.fullmatch(r'net\.(.+)\.(\w+)', rest)
    if m and m.group(2) in VM_NET:
        return VM_NET[m.group(2)], lab + (('target_device', m.group(1)),), 1, False
    m = re.fullmatch(r'block\.(.+)\.(\w+)', rest)
    if m and m.group(2) in VM_BLOCK:
        name, f = VM_BLOCK[m.group(2)]
        return name, lab + (('target_device', m.group(1)),), f, True
    return None


def expected(ref, uuids):
    """{(name, sorted labels): [(t_ms, value)]} of the table's families:
    a value at every frame whose cell is not empty, a held value also at
    the frames after it until the column leaves the schema."""
    out, held = {}, {}
    for seq in sorted(ref):
        cells = ref[seq]
        t_ms = us_of(cells['time']) // 1000
        for col, cell in cells.items():
            if col in META:
                continue
            s = series_of(col, uuids)
            if not s:
                continue
            name, lab, mul, hold = s
            key = (name, tuple(sorted(lab)))
            if cell != '':
                v = scaled(cell, mul)
                if hold:
                    held[key] = v
            elif hold and key in held:
                v = held[key]
            else:
                continue
            out.setdefault(key, []).append((t_ms, v))
    return out


def uuids_of(path):
    """{domain: uuid} from tail --format influx's tags (dump's CSV has no keys)."""
    r = subprocess.run([BIN, 'tail', '--no-follow', '--format', 'influx', path], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return dict(re.findall(r',domain=([^,\s]+),uuid=([0-9a-f-]+)', r.stdout))


# ---- what the receivers hold --------------------------------------------------------

def prom_all(prom, t_end_s):
    """{(name, labels): [(t_ms, value)]} of every series (stale markers are
    not in a range query's answer)."""
    st, body = fetch(prom.url('/api/v1/query?' + urllib.parse.urlencode(
        {'query': '{__name__=~".+"}[1h]', 'time': '%.3f' % t_end_s})))
    assert st == 200, body[:500]
    out = {}
    for s in json.loads(body)['data']['result']:
        m = dict(s['metric'])
        name = m.pop('__name__')
        out[(name, tuple(sorted(m.items())))] = [(round(float(t) * 1000), float(v)) for t, v in s['values']]
    return without_instance(out)


def vm_all(vm):
    """{(name, labels): [(t_ms, value or None for the stale NaN)]}, raw."""
    return without_instance(vm.series('.+'))


def without_instance(got):
    """The series less their instance label, which every pushed series has
    (issue 25): the recorded hostname, or for the fixture (recorded before
    the HOST record) this machine's; test_fleet.py checks the labels."""
    out = {}
    for (name, labels), pts in got.items():
        d = dict(labels)
        assert d.pop('instance', None) == socket.gethostname(), (name, labels)
        out[(name, tuple(sorted(d.items())))] = pts
    return out


def scrape(path):
    """{(name, labels): value} of /metrics of `export --file path --listen`."""
    p = subprocess.Popen([BIN, 'export', '--file', path, '--listen', '127.0.0.1:0', '--timestamps'],
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r'http://(127\.0\.0\.1:\d+)/metrics', line)
        assert m, line
        body = None

        def ok():
            nonlocal body
            st, body = fetch('http://%s/metrics' % m.group(1))
            return st == 200
        wait_for(ok, 30, '/metrics')
    finally:
        p.terminate()
        p.wait(30)
        p.stderr.close()
    out = {}
    for ln in body.decode().splitlines():
        if ln.startswith('#') or not ln:
            continue
        mm = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+) (\d+)', ln)
        assert mm, ln
        labels = tuple(sorted((k, v.replace('\\"', '"').replace('\\\\', '\\'))
                              for k, v in re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', mm.group(2) or '')
                              if v != ''))
        out[(mm.group(1), labels)] = (float(mm.group(3)), int(mm.group(4)))
    return out


class Proxy:
    """A receiver's stand-in in front of the real one: holds each request
    `before` seconds, forwards it, holds the answer `after` seconds; keeps
    the headers it saw and counts what it forwarded."""

    def __init__(self, upstream, before=0.0, after=0.0):
        proxy = self
        self.upstream, self.before, self.after = upstream, before, after
        self.headers, self.forwarded, self.statuses = [], 0, []
        # refuse(body): a status to answer instead of forwarding, or None
        self.refuse, self.refused = None, []

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                proxy.headers.append(dict(self.headers))
                st = proxy.refuse(body) if proxy.refuse else None
                if st:
                    proxy.refused.append(st)
                    msg = b'refused: %d\n' % st
                    self.send_response(st)
                    if 300 <= st < 400:
                        self.send_header('Location', proxy.upstream)
                    if st == 401:
                        self.send_header('WWW-Authenticate', 'Bearer realm="rw"')
                    self.send_header('Content-Length', str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    return
                time.sleep(proxy.before)
                r, _, _ = select.select([self.connection], [], [], 0)
                if r and self.connection.recv(1, socket.MSG_PEEK) == b'':
                    return  # the sender is gone: the request never reaches the receiver
                hdr = {k: v for k, v in self.headers.items() if k.lower() not in ('host', 'content-length')}
                st, resp = fetch(proxy.upstream, data=body, method='POST', headers=hdr)
                proxy.forwarded += 1
                proxy.statuses.append(st)
                time.sleep(proxy.after)
                try:
                    self.send_response(st)
                    self.send_header('Content-Length', str(len(resp)))
                    self.end_headers()
                    self.wfile.write(resp)
                except OSError:
                    pass  # the sender was killed meanwhile

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = 'http://127.0.0.1:%d/api/v1/write' % self.srv.server_address[1]

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def varint(b, i):
    """a protobuf (and snappy) varint at b[i]: (value, the index after)"""
    v, sh = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << sh
        sh += 7
        if c < 0x80:
            return v, i


def unsnappy(b):
    """snappy's block format, decompressed (format_description.txt of
    google/snappy): a varint length, then literals and copies."""
    n, i = varint(b, 0)
    out = bytearray()
    while i < len(b):
        t = b[i]
        i += 1
        if t & 3 == 0:
            ln = t >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(b[i:i + k], 'little')
                i += k
            out += b[i:i + ln + 1]
            i += ln + 1
            continue
        if t & 3 == 1:
            ln, off = ((t >> 2) & 7) + 4, ((t >> 5) << 8) | b[i]
            i += 1
        else:
            k = 2 if t & 3 == 2 else 4
            ln, off = (t >> 2) + 1, int.from_bytes(b[i:i + k], 'little')
            i += k
        for _ in range(ln):
            out.append(out[-off])
    assert len(out) == n, (len(out), n)
    return bytes(out)


def pb_fields(b):
    """(field, value) of a protobuf message: ints for varints, bytes else."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        wt = key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            ln, i = varint(b, i)
            v, i = b[i:i + ln], i + ln
        else:
            assert wt == 5, wt
            v, i = b[i:i + 4], i + 4
        yield key >> 3, v


def request_names(body):
    """The metric names of a remote-write request (prompb.proto: a
    WriteRequest's timeseries = 1, a TimeSeries' labels = 1, a Label's
    name = 1 and value = 2)."""
    names = set()
    for f, ts in pb_fields(unsnappy(body)):
        if f != 1:
            continue
        for g, lab in pb_fields(ts):
            d = dict(pb_fields(lab)) if g == 1 else {}
            if d.get(1) == b'__name__':
                names.add(d.get(2, b'').decode())
    return names


def cursor_acked(path):
    try:
        with open(path) as f:
            m = re.search(r'^acked (\d+)', f.read(), re.M)
        return int(m.group(1)) if m else 0
    except FileNotFoundError:
        return 0


class ExportRW(ServerCase):
    @classmethod
    def setUpClass(cls):
        cls.ref = reference(FIXTURE)
        cls.uuids = uuids_of(FIXTURE)
        cls.want = expected(cls.ref, cls.uuids)
        cls.t_end = us_of(cls.ref[max(cls.ref)]['time']) / 1e6 + 1
        cls.nframes = len(cls.ref)

    def proxy(self, *a, **kw):
        p = Proxy(*a, **kw)
        self.addCleanup(p.close)
        return p

    def export(self, url, *extra, wait=True, timeout=120, source=FIXTURE):
        args = [BIN, 'export', '--file', source, '--remote-write', url] + list(extra)
        if wait:
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def wait_delivered(self, mport, timeout):
        """export's own counters on /metrics at mport once every frame is
        delivered"""
        metrics = {}

        def delivered():
            nonlocal metrics
            st, body = fetch('http://127.0.0.1:%d/metrics' % mport)
            metrics = dict(re.findall(r'(?m)^(vmsampler_export_\w+) (\d+)', body.decode()))
            return metrics.get('vmsampler_export_rw_frames_total') == str(self.nframes)
        wait_for(delivered, timeout, 'every frame delivered')
        return metrics

    def check_values(self, got, want=None):
        """Every series of the table as the reference has it, exactly."""
        want = self.want if want is None else want
        self.assertGreater(len(want), 100)
        for key, samples in want.items():
            self.assertIn(key, got)
            self.assertEqual(got[key], samples, key)
        # a host counter: one sample per frame
        self.assertEqual(len(got[('node_context_switches_total', ())]), self.nframes)
        # the destroyed VMs have frames 22..70 or so, the others all
        for dom in ('vms-001', 'vms-901'):
            k = ('libvirt_domain_info_cpu_time_seconds_total', (('domain', dom), ('uuid', self.uuids[dom])))
            n = len(got[k])
            self.assertEqual(n, self.nframes) if dom == 'vms-001' else self.assertTrue(40 < n < 60, n)

    def check_scrape(self, got, rel=0.0):
        """At the last frame, the series and values of a scrape (rel: a
        relative tolerance, for VictoriaMetrics, which keeps 12 significant
        decimal digits: 119.0025312449 comes back 119.002531245)."""
        sc = scrape(FIXTURE)
        last_ms = us_of(self.ref[max(self.ref)]['time']) // 1000
        at_last = {k: [v for t, v in s if t == last_ms] for k, s in got.items()}
        at_last = {k: v[0] for k, v in at_last.items() if v and v[0] is not None}
        skip = ('vmsampler_export_', 'vmsampler_interval_seconds')  # the reader's own, not the frame's
        sc = {k: v for k, v in sc.items() if not k[0].startswith(skip)}
        at_last = {k: v for k, v in at_last.items() if not k[0].startswith(skip)}
        self.assertEqual(set(sc), set(at_last))
        for k, (v, t) in sc.items():
            self.assertEqual(t, last_ms, k)
            if rel:
                self.assertTrue(math.isclose(at_last[k], v, rel_tol=rel), (k, at_last[k], v))
            else:
                self.assertEqual(at_last[k], v, k)
        self.assertGreater(len(sc), 300)

    def stale_time(self):
        """The time of the first frame after vms-901's last (ms)."""
        k = ('libvirt_domain_info_cpu_time_seconds_total', (('domain', 'vms-901'), ('uuid', self.uuids['vms-901'])))
        last = self.want[k][-1][0]
        return last, min(us_of(c['time']) // 1000 for c in self.ref.values() if us_of(c['time']) // 1000 > last)

    # -- the values --

    def test_prometheus(self):
        prom = self.server(Prometheus)
        r = self.export(prom.url('/api/v1/write'), '--no-follow', '--rw-batch', '7')
        got = prom_all(prom, self.t_end)
        self.check_values(got)
        self.check_scrape(got)
        cnt = prom.scalar('count_over_time(node_cpu_seconds_total{cpu="0",mode="user"}[1h])', self.t_end)
        self.assertEqual(float(cnt[0]['value'][1]), self.nframes)
        # staleness: gone at the stale marker, there a second before it
        last, stale = self.stale_time()
        q = 'libvirt_domain_info_cpu_time_seconds_total{domain="vms-901"}'
        self.assertEqual(len(prom.scalar(q, last / 1000 + 0.5)), 1)
        self.assertEqual(prom.scalar(q, stale / 1000 + 0.5), [])
        self.assertIn('remote write of', r.stderr)

    def test_victoria_metrics(self):
        vm = self.server(Victoria)
        self.export(vm.url('/api/v1/write'), '--no-follow', '--rw-batch', '64k')
        got = vm_all(vm)
        live = {k: [(t, v) for t, v in s if v is not None] for k, s in got.items()}
        self.check_values(live)
        self.check_scrape(got, rel=1e-11)
        # the stale NaN right after vms-901's last sample, in every series of the VM
        last, stale = self.stale_time()
        k = ('libvirt_domain_info_cpu_time_seconds_total', (('domain', 'vms-901'), ('uuid', self.uuids['vms-901'])))
        self.assertEqual(got[k][-1], (stale, None))
        ended = [k for k, s in got.items() if dict(k[1]).get('domain') == 'vms-901']
        self.assertGreater(len(ended), 20)
        for k in ended:
            self.assertIsNone(got[k][-1][1], k)
            self.assertEqual(sum(v is None for t, v in got[k]), 1, k)
        # and no series of a VM that stayed has one
        for k, s in got.items():
            if dict(k[1]).get('domain') == 'vms-001':
                self.assertNotIn(None, [v for t, v in s], k)

    # -- nothing lost, nothing twice --

    def test_sigkill_and_restart_exactly_once(self):
        """VictoriaMetrics keeps a sample sent twice (a count_over_time
        shows it): export killed twice while requests wait in a slow
        proxy, restarted with the same cursor, has every sample once."""
        vm = self.server(Victoria)
        cur = os.path.join(self.tmp, 'cursor')
        px = self.proxy(vm.url('/api/v1/write'), before=0.3)
        for kills in (4, 11):
            p = self.export(px.url, '--rw-cursor', cur, '--rw-batch', '5', '--no-follow', wait=False)
            wait_for(lambda: px.forwarded >= kills, 60, '%d requests' % kills)
            time.sleep(0.1)  # the next one waits in the proxy
            p.send_signal(signal.SIGKILL)
            p.wait()
            acked = cursor_acked(cur)
            self.assertTrue(0 < acked < self.nframes, acked)
        px.before = 0
        self.export(px.url, '--rw-cursor', cur, '--rw-batch', '5', '--no-follow')
        self.assertEqual(cursor_acked(cur), self.nframes)
        got = vm_all(vm)
        for k, s in got.items():
            ts = [t for t, v in s]
            self.assertEqual(len(ts), len(set(ts)), k)  # once each
        self.check_values({k: [(t, v) for t, v in s if v is not None] for k, s in got.items()})
        cnt = json.loads(fetch(vm.url('/api/v1/query?' + urllib.parse.urlencode(
            {'query': 'count_over_time(node_context_switches_total[1h])', 'time': self.t_end})))[1])
        self.assertEqual(float(cnt['data']['result'][0]['value'][1]), self.nframes)
        # a cursor says which receiver: another URL is refused
        r = subprocess.run([BIN, 'export', '--file', FIXTURE, '--remote-write', vm.url('/api/v1/write'),
                            '--rw-cursor', cur, '--no-follow'], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('counts for', r.stderr)

    def test_acknowledgement_lost(self):
        """Prometheus took a request, export was killed before the answer:
        the same frames go again whole, Prometheus refuses them whole (out
        of order: 400, counted), nothing is lost, and then it goes on."""
        prom = self.server(Prometheus)
        cur = os.path.join(self.tmp, 'cursor')
        px = self.proxy(prom.url('/api/v1/write'), after=2.0)
        p = self.export(px.url, '--rw-cursor', cur, '--rw-batch', '10', '--no-follow', wait=False)
        wait_for(lambda: px.forwarded >= 3, 60, '3 requests')  # the third's answer held
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.assertEqual(cursor_acked(cur), 20)
        with open(cur) as f:
            self.assertRegex(f.read(), r'(?m)^inflight 30$')
        px.after = 0
        r = self.export(px.url, '--rw-cursor', cur, '--rw-batch', '10', '--no-follow')
        self.assertEqual(px.statuses[3], 400)  # frames 21-30 again: refused whole
        self.assertEqual(len(px.statuses), 1 + self.nframes // 10)  # that one not split: out of order
        self.assertRegex(r.stderr, r'frames 21-30: \d+ samples refused by the receiver and dropped.*out of order')
        self.assertEqual(cursor_acked(cur), self.nframes)
        self.check_values(prom_all(prom, self.t_end))

    def test_receiver_down_at_first(self):
        port, mport = free_port(), free_port()
        url = 'http://127.0.0.1:%d/api/v1/write' % port
        ring_less = self.export(url, '--rw-cursor', os.path.join(self.tmp, 'c'), '--listen',
                                '127.0.0.1:%d' % mport, wait=False)
        wait_for(lambda: 'kept and sent again' in ring_less.stderr.readline(), 30, 'the outage line')
        prom = self.server(Prometheus, port=port)
        metrics = self.wait_delivered(mport, 90)
        self.check_values(prom_all(prom, self.t_end))
        self.assertGreater(int(metrics['vmsampler_export_rw_retries_total']), 0)
        self.assertGreater(int(metrics['vmsampler_export_rw_failures_total']), 0)
        self.assertEqual(metrics['vmsampler_export_rw_dropped_samples_total'], '0')
        self.assertGreater(int(metrics['vmsampler_export_rw_sent_bytes_total']), 10000)
        self.assertGreater(int(metrics['vmsampler_export_rw_samples_total']),
                           sum(len(s) for s in self.want.values()))
        self.assertEqual(metrics['vmsampler_export_lost_frames_total'], '0')
        ring_less.terminate()
        self.assertEqual(ring_less.wait(30), 0)
        ring_less.stderr.close()

    # -- receivers that refuse (issue 23) --
    #
    # The receivers here are the proxy in front of a real VictoriaMetrics
    # answering a fixed status itself: the point is what export does with
    # the status, which a real receiver gives only when misconfigured.

    def run_export(self, url, *extra):
        return subprocess.run([BIN, 'export', '--file', FIXTURE, '--remote-write', url, '--no-follow'] +
                              list(extra), capture_output=True, text=True, timeout=300)

    def check_once(self, vm, want=None):
        """every sample of the reference in VictoriaMetrics, exactly once"""
        got = vm_all(vm)
        for k, s in got.items():
            ts = [t for t, v in s]
            self.assertEqual(len(ts), len(set(ts)), k)
        self.check_values({k: [(t, v) for t, v in s if v is not None] for k, s in got.items()}, want)
        return got

    def test_refusing_receiver_stops_and_loses_nothing(self):
        """302 (a redirect: not followed), 400, 401 (an expired token),
        404 (a wrong URL) and 413 (a size limit below one sample) to every
        request: export stops with one line and exit 1 (systemd restarts
        it: the receiver may be fixed meanwhile), nothing is counted as
        sent or dropped and the cursor stays; the receiver fixed, the same
        command sends every frame, each exactly once."""
        for st, say in ((302, 'a redirect to http://'), (400, 'nothing accepted'), (401, 'HTTP 401'),
                        (404, 'HTTP 404'), (413, 'for a single sample')):
            with self.subTest(status=st):
                vm = self.server(Victoria)
                px = self.proxy(vm.url('/api/v1/write'))
                px.refuse = lambda body, st=st: st
                cur = os.path.join(self.tmp, 'cursor-%d' % st)
                r = self.run_export(px.url, '--rw-cursor', cur, '--rw-batch', '20')
                self.assertEqual(r.returncode, 1, r.stderr)
                # (the fixture predates the HOST record: one line says whose
                # hostname instance is; test_fleet.py checks it)
                lines = [ln for ln in r.stderr.splitlines()
                         if 'remote write of' not in ln and 'records no hostname' not in ln]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(say, lines[0])
                self.assertIn('stopped with frames from 1 unsent', lines[0])
                self.assertEqual(px.forwarded, 0)
                self.assertEqual(cursor_acked(cur), 0)
                with open(cur) as f:
                    self.assertRegex(f.read(), r'(?m)^inflight 0$')
                # the split: bounded, not one request per sample
                self.assertLess(len(px.refused), 200 if st == 400 else 30, px.refused[:5])
                px.refuse = None
                r = self.run_export(px.url, '--rw-cursor', cur, '--rw-batch', '20')
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(cursor_acked(cur), self.nframes)
                self.assertEqual(px.forwarded, -(-self.nframes // 20))
                self.check_once(vm)

    def test_size_limit_splits(self):
        """A receiver whose limit is 4 KB of snappy: requests above it get
        413 and are split until they fit; everything arrives once, nothing
        dropped."""
        vm = self.server(Victoria)
        px = self.proxy(vm.url('/api/v1/write'))
        px.refuse = lambda body: 413 if len(body) > 4096 else None
        r = self.run_export(px.url, '--rw-batch', '30')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(len(px.refused), 4)
        self.assertGreater(px.forwarded, 8)
        self.assertTrue(all(s == 204 for s in px.statuses), px.statuses[:10])
        self.assertNotIn('dropped', r.stderr)
        self.check_once(vm)

    def test_poisoned_series_only_it_dropped(self):
        """A receiver that refuses (400) any request holding node_load1,
        and takes everything else: node_load1's samples, and only they, are
        dropped, counted in vmsampler_export_rw_dropped_samples_total and
        said; every other sample arrives once."""
        vm = self.server(Victoria)
        px = self.proxy(vm.url('/api/v1/write'))
        px.refuse = lambda body: 400 if 'node_load1' in request_names(body) else None
        mport = free_port()
        p = self.export(px.url, '--rw-cursor', os.path.join(self.tmp, 'c'), '--listen', '127.0.0.1:%d' % mport,
                        '--rw-batch', '25', wait=False)
        metrics = self.wait_delivered(mport, 120)
        poisoned = len(self.want[('node_load1', ())])
        self.assertEqual(poisoned, self.nframes)
        self.assertEqual(metrics['vmsampler_export_rw_dropped_samples_total'], str(poisoned))
        p.terminate()
        self.assertEqual(p.wait(30), 0)
        err = p.stderr.read()
        p.stderr.close()
        self.assertIn('%d samples in all refused by the receiver and dropped' % poisoned, err)
        self.assertIn('the first: node_load1{instance="%s"}' % socket.gethostname(), err)
        got = self.check_once(vm, {k: s for k, s in self.want.items() if k[0] != 'node_load1'})
        self.assertNotIn(('node_load1', ()), got)

    # -- credentials --

    def test_credentials(self):
        prom = self.server(Prometheus)
        px = self.proxy(prom.url('/api/v1/write'))
        tok = os.path.join(self.tmp, 'token')
        with open(tok, 'w') as f:
            f.write('s3cret-token\n')
        os.chmod(tok, 0o600)
        self.export(px.url, '--rw-bearer-file', tok, '--no-follow', '--rw-batch', '200')
        self.assertEqual(px.headers[0].get('Authorization'), 'Bearer s3cret-token')
        self.assertEqual(px.headers[0].get('Content-Encoding'), 'snappy')
        auth = os.path.join(self.tmp, 'auth')
        with open(auth, 'w') as f:
            f.write('alice:pa:ss\n')
        os.chmod(auth, 0o600)
        self.export(px.url, '--rw-basic-auth', auth, '--no-follow', '--rw-batch', '200')
        self.assertEqual(px.headers[-1].get('Authorization'), 'Basic YWxpY2U6cGE6c3M=')  # alice:pa:ss
        # the file a second time: Prometheus has it all ("out of order"),
        # the one request is not split (issue 23)
        self.assertEqual(len(px.headers), 2)
        for path, opt in ((tok, '--rw-bearer-file'), (auth, '--rw-basic-auth')):
            os.chmod(path, 0o644)
            r = subprocess.run([BIN, 'export', '--file', FIXTURE, '--remote-write', px.url, opt, path],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn('readable by others', r.stderr)
            self.assertEqual(r.stderr.count('\n'), 1)
        for args, msg in ((['--ring', 'r', '--rw-cursor', 'c'], 'a ring cannot replay'),
                          (['--file', FIXTURE, '--rw-batch', '0'], '--rw-batch'),
                          (['--file', FIXTURE, '--rw-batch', '5G'], '--rw-batch'),
                          (['--file', FIXTURE, '--ring', 'r'], '--listen is missing')):
            r = subprocess.run([BIN, 'export', '--remote-write', px.url] + args, capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr)
            self.assertEqual(r.stderr.count('\n'), 1, r.stderr)

    # -- a ring cannot replay --

    def test_live_receiver_outage_60s(self):
        """A live run (vmsampler at 200 ms writing a .vms file) followed by
        export --file --remote-write into Prometheus; Prometheus stopped
        for 60 s mid-run and started again on its data: every frame of the
        file arrives once (count_over_time of a host counter = the frames
        of the file) with dump's values at the frames' times."""
        prom = self.server(Prometheus)
        run_vms, cur, cfg = (os.path.join(self.tmp, n) for n in ('run.vms', 'cursor', 'host.yaml'))
        with open(cfg, 'w') as f:
            f.write('sources:\n  netdev: {include: [lo]}\n'
                    '  libvirt: {enabled: false}\n  perf: {enabled: false}\n')
        env = dict(os.environ)
        env.pop('LIBVIRT_DEFAULT_URI', None)
        samp = subprocess.Popen([BIN, '-c', cfg, '-i', '200ms', '-o', run_vms, '-q'], env=env,
                                stderr=subprocess.DEVNULL)
        self.procs.append(samp)
        wait_for(lambda: os.path.exists(run_vms), 30, 'the run file')
        p = self.export(prom.url('/api/v1/write'), '--rw-cursor', cur, '--rw-batch', '20', wait=False,
                        source=run_vms)
        wait_for(lambda: cursor_acked(cur) >= 10, 60, 'ten frames acknowledged')
        prom.stop()
        # the port held meanwhile (bound, not listening: a connection is
        # refused as by a closed port), so that no other test running
        # beside this one (meson runs it in parallel: 'export_rw-outage')
        # takes it for a server of its own, or as a connection's source
        # port, before Prometheus starts on it again
        hold = socket.socket()
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the TIME_WAITs of the stop
        hold.bind(('127.0.0.1', prom.port))
        try:
            time.sleep(60)
            self.assertIsNone(p.poll())  # waiting for the receiver, not gone
        finally:
            hold.close()
        prom.start()
        time.sleep(3)
        samp.send_signal(signal.SIGTERM)
        self.assertEqual(samp.wait(timeout=30), 0)
        ref = reference(run_vms)
        n = len(ref)
        self.assertGreater(n, 300)  # ~64 s at 200 ms, most of it during the outage
        wait_for(lambda: cursor_acked(cur) >= max(ref), 120, 'every frame acknowledged')
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        t_end = us_of(ref[max(ref)]['time']) / 1e6 + 1
        cnt = prom.scalar('count_over_time(node_context_switches_total[10m])', t_end)
        self.assertEqual(float(cnt[0]['value'][1]), n)
        got = dict(prom_all(prom, t_end)[('node_context_switches_total', ())])
        for seq, row in ref.items():
            t_ms = us_of(row['time']) // 1000
            self.assertEqual(got.get(t_ms), float(row['stat.ctxt']), seq)

    def test_ring_lost_frames_counted(self):
        prom = self.server(Prometheus)
        px = self.proxy(prom.url('/api/v1/write'), before=1.5)
        ring = os.path.join(self.tmp, 'ring')
        samp = subprocess.Popen([BIN, '-i', '10ms', '-n', '500', '-o', '/dev/null', '--ring', ring,
                                 '--ring-slots', '16'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(samp)
        wait_for(lambda: os.path.exists(ring), 10, 'the ring')
        mport = free_port()
        p = subprocess.Popen([BIN, 'export', '--ring', ring, '--remote-write', px.url, '--listen',
                              '127.0.0.1:%d' % mport], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        lost = {}

        def counted():
            st, body = fetch('http://127.0.0.1:%d/metrics' % mport)
            m = re.search(r'(?m)^vmsampler_export_lost_frames_total (\d+)', body.decode())
            lost['n'] = int(m.group(1)) if m else 0
            return st == 200 and lost['n'] > 50
        wait_for(counted, 30, 'lost frames counted')
        self.assertEqual(samp.wait(60), 0)
        self.assertEqual(p.wait(60), 0)  # the writer exited: so does export
        err = p.stderr.read()
        p.stderr.close()
        self.assertRegex(err, r'\d+ frames of .* were overwritten before they could be read and are lost')
        said = sum(int(n) for n in re.findall(r'(\d+) frames of .* were overwritten', err))
        self.assertGreaterEqual(said, lost['n'])
        # what was read went through: the frames' sequence numbers in Prometheus
        seqs = prom.scalar('count_over_time(vmsampler_frame_sequence[1h])', time.time() + 1)
        self.assertGreater(float(seqs[0]['value'][1]), 0)


OUTAGE = 'test_live_receiver_outage_60s'


if __name__ == '__main__':
    check_prereqs()
    # --outage: only the live run with its 60-s outage; --no-outage: all but
    # it.  meson runs the two as 'export_rw-outage' (in parallel with other
    # tests: it waits, and holds its port, for a minute) and 'export_rw'
    # (alone); no option: the whole file.
    part = sys.argv.pop(1) if sys.argv[1:2] in (['--outage'], ['--no-outage']) else None
    if part:
        names = [n for n in unittest.TestLoader().getTestCaseNames(ExportRW) if (n == OUTAGE) == (part == '--outage')]
        sys.argv[1:1] = ['ExportRW.' + n for n in names]
    unittest.main(verbosity=2)
