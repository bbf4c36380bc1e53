#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmsampler export (issue 12) against a real Prometheus and promtool.

A sampler runs on this host's /proc at 100 ms with a live ring and a .vms
file; `vmsampler export --ring` serves it on 127.0.0.1 (a free port).
Checked:
  - /metrics in the Prometheus text format passes `promtool check
    metrics` (but for its camelCase complaint about node_exporter's own
    node_memory_* names); OpenMetrics when the Accept header asks (as Prometheus does),
    ending in # EOF; gzip when asked; 404 elsewhere;
  - Debian's Prometheus (prometheus package, on 127.0.0.1, a free port, a
    temporary storage directory) scrapes it every second; its HTTP API
    gives back, for each scraped frame (vmsampler_frame_sequence at the
    same timestamp: the frame's wall time), exactly the values `vmsampler
    dump` of the file has for that frame: node_cpu_seconds_total{cpu="0",
    mode="user"} = cpu.0.user / USER_HZ, node_load1 = load.1m,
    node_network_receive_bytes_total{device="lo"} = net.lo.rx_bytes,
    node_context_switches_total = stat.ctxt; the target is up;
  - basic authentication (401 without, 200 with the file's user), HTTPS
    with a self-signed certificate (openssl), usage errors (exit 2, one
    line).
Everything started is stopped in `finally`.  Without prometheus/promtool
the test is a SKIP (77), a failure with VMS_REQUIRE_PROMETHEUS=1
(scripts/test.sh)."""
import csv
import gzip
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
REQUIRE = os.environ.get('VMS_REQUIRE_PROMETHEUS') == '1'
PROM_ACCEPT = ('application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;'
               'q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1')
USER_HZ = os.sysconf('SC_CLK_TCK')

procs = []


def skip_or_fail(why):
    if REQUIRE:
        print('FAIL: VMS_REQUIRE_PROMETHEUS=1 but ' + why, file=sys.stderr)
        sys.exit(1)
    print('SKIP: ' + why, file=sys.stderr)
    sys.exit(77)


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(args, **kw):
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, **kw)
    procs.append(p)
    return p


def stop_all(which=None):
    """SIGTERM to each process still running (of which, default: every
    one this module started), then wait 10 s for each, SIGKILL the late"""
    which = procs if which is None else which
    for p in which:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in which:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_for(pred, timeout=20.0, what='condition'):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError('timed out waiting for ' + what)


def get(url, headers=None, ctx=None):
    """(status, headers, body bytes)"""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def start_export(tmp, *args, name='export'):
    """vmsampler export ARGS --listen 127.0.0.1:0: (process, port) from its line on stderr"""
    err = open(os.path.join(tmp, name + '.err'), 'w+')
    p = start([BIN, 'export', '--listen', '127.0.0.1:0'] + list(args), stderr=err)

    def port():
        err.seek(0)
        m = re.search(r'serving https?://127\.0\.0\.1:(\d+)/metrics', err.read())
        if p.poll() is not None:
            err.seek(0)
            raise AssertionError('export exited %d: %s' % (p.returncode, err.read()))
        return int(m.group(1)) if m else None
    return p, wait_for(port, what='export to listen')


def start_prometheus(prom, tmp, port):
    """Prometheus (binary prom) scraping 127.0.0.1:port every second, its
    storage in tmp, on a free port, ready: its base URL (stopped by
    stop_all)."""
    pport = free_port()
    cfg = os.path.join(tmp, 'prometheus.yml')
    with open(cfg, 'w') as f:
        f.write('global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n'
                'scrape_configs:\n  - job_name: vmsampler\n    static_configs:\n'
                '      - targets: ["127.0.0.1:%d"]\n' % port)
    plog = open(os.path.join(tmp, 'prometheus.log'), 'w')
    pbase = 'http://127.0.0.1:%d' % pport
    pp = start([prom, '--config.file=' + cfg, '--storage.tsdb.path=' + os.path.join(tmp, 'tsdb'),
                '--web.listen-address=127.0.0.1:%d' % pport], stderr=plog)

    def ready():
        if pp.poll() is not None:
            raise AssertionError('prometheus exited %d: see %s' % (pp.returncode, plog.name))
        try:
            return get(pbase + '/-/ready')[0] == 200
        except OSError:
            return False
    wait_for(ready, 60, 'prometheus to be ready')
    return pbase


def dump_rows(path):
    out = subprocess.run([BIN, 'dump', path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(out.stdout.splitlines()))
    head = rows[0]
    return {int(r[0]): dict(zip(head, r)) for r in rows[1:]}


def prom_series(base, query):
    """the raw samples of a range-vector query: {labels-tuple: [(ts_ms, value str)]}"""
    url = base + '/api/v1/query?' + urllib.parse.urlencode({'query': query})
    st, _, body = get(url)
    assert st == 200, body
    d = json.loads(body)
    assert d['status'] == 'success', d
    out = {}
    for r in d['data']['result']:
        key = tuple(sorted(r['metric'].items()))
        out[key] = [(round(float(t) * 1000), v) for t, v in r['values']]
    return out


def one(series):
    assert len(series) == 1, series
    return next(iter(series.values()))


def check_usage(tmp):
    for args, msg in ((['export'], 'missing --ring or --file'),
                      (['export', '--ring', 'a', '--file', 'b'], 'not both'),
                      (['export', '--file', 'x.vms', '--listen', 'nonsense'], 'ADDR:PORT'),
                      (['export', '--file', 'x.vms', '--tls-cert', 'c'], 'go together')):
        r = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=10)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert msg in r.stderr and r.stderr.count('\n') == 1, (args, r.stderr)
    auth = os.path.join(tmp, 'auth-open')
    with open(auth, 'w') as f:
        f.write('u:p\n')
    os.chmod(auth, 0o644)
    r = subprocess.run([BIN, 'export', '--file', 'x.vms', '--basic-auth', auth], capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == 2 and 'readable by others' in r.stderr, r.stderr


def main():
    prom = shutil.which('prometheus')
    promtool = shutil.which('promtool')
    if not prom or not promtool:
        skip_or_fail('prometheus and promtool are not installed (Debian package prometheus)')
    tmp = tempfile.mkdtemp(prefix='vms-export-')
    try:
        check_usage(tmp)
        ring, run = os.path.join(tmp, 'ring'), os.path.join(tmp, 'run.vms')
        start([BIN, '-i', '100ms', '--ring', ring, '-o', run, '-q'])
        wait_for(lambda: os.path.exists(ring), what='the ring')
        exp, port = start_export(tmp, '--ring', ring)
        base = 'http://127.0.0.1:%d' % port
        wait_for(lambda: get(base + '/metrics')[0] == 200, what='a first frame')

        # the text format, checked by promtool
        st, hd, text = get(base + '/metrics')
        assert hd['Content-Type'].startswith('text/plain; version=0.0.4'), hd['Content-Type']
        lint = subprocess.run([promtool, 'check', 'metrics'], input=text, capture_output=True, timeout=60)
        # clean but for the one complaint promtool makes about node_exporter's
        # own /proc/meminfo names (node_memory_MemTotal_bytes...: camelCase),
        # kept for its dashboards; test_node_exporter.py checks that promtool
        # says exactly that of node_exporter's own answer
        problems = [ln for ln in (lint.stdout + lint.stderr).decode().splitlines() if ln.strip() and not
                    re.fullmatch(r"node_memory_\w+ metric names should be written in 'snake_case' not 'camelCase'",
                                 ln)]
        assert not problems and lint.returncode in (0, 3), (lint.returncode, problems)
        assert b'# TYPE node_cpu_seconds_total counter\n' in text
        # OpenMetrics as Prometheus asks for it, gzip
        st, hd, om = get(base + '/metrics', {'Accept': PROM_ACCEPT, 'Accept-Encoding': 'gzip'})
        assert st == 200 and hd['Content-Type'].startswith('application/openmetrics-text; version=1.0.0')
        assert hd['Content-Encoding'] == 'gzip'
        om = gzip.decompress(om)
        assert om.endswith(b'# EOF\n') and b'# TYPE node_cpu_seconds counter\n' in om
        st, _, _ = get(base + '/nothing')
        assert st == 404

        # a real Prometheus scrapes it
        pbase = start_prometheus(prom, tmp, port)

        def scraped():
            s = prom_series(pbase, 'vmsampler_frame_sequence[1m]')
            return s and len(one(s)) >= 6
        wait_for(scraped, 60, 'six scrapes')
        st, _, body = get(pbase + '/api/v1/targets')
        t = json.loads(body)['data']['activeTargets']
        assert len(t) == 1 and t[0]['health'] == 'up' and t[0]['lastError'] == '', t

        seqs = dict(one(prom_series(pbase, 'vmsampler_frame_sequence[1m]')))
        cpu = dict(one(prom_series(pbase, 'node_cpu_seconds_total{cpu="0",mode="user"}[1m]')))
        load = dict(one(prom_series(pbase, 'node_load1[1m]')))
        lo = dict(one(prom_series(pbase, 'node_network_receive_bytes_total{device="lo"}[1m]')))
        ctxt = dict(one(prom_series(pbase, 'node_context_switches_total[1m]')))
        late = dict(one(prom_series(pbase, 'vmsampler_tick_late_seconds[1m]')))
        rows = dump_rows(run)
        compared = 0
        for ts, seq in seqs.items():
            row = rows[int(seq)]
            # the sample's timestamp is the frame's wall time (ms)
            assert cpu[ts] is not None
            assert float(cpu[ts]) == int(row['cpu.0.user']) / USER_HZ, (seq, cpu[ts], row['cpu.0.user'])
            assert float(load[ts]) == float(row['load.1m']), (seq, load[ts], row['load.1m'])
            assert float(lo[ts]) == int(row['net.lo.rx_bytes']), (seq, lo[ts], row['net.lo.rx_bytes'])
            assert float(ctxt[ts]) == int(row['stat.ctxt']), (seq, ctxt[ts], row['stat.ctxt'])
            assert float(late[ts]) == int(row['late_ns']) / 1e9, (seq, late[ts], row['late_ns'])
            compared += 1
        assert compared >= 6, compared
        print('prometheus: %d scraped frames equal dump (seq %d..%d)' %
              (compared, min(map(int, seqs.values())), max(map(int, seqs.values()))))
        assert exp.poll() is None

        # basic authentication
        auth = os.path.join(tmp, 'auth')
        with open(auth, 'w') as f:
            f.write('scraper:s3cret\n')
        os.chmod(auth, 0o600)
        _, aport = start_export(tmp, '--ring', ring, '--basic-auth', auth, name='auth')
        abase = 'http://127.0.0.1:%d/metrics' % aport
        wait_for(lambda: get(abase, {'Authorization': 'Basic c2NyYXBlcjpzM2NyZXQ='})[0] == 200,
                 what='an authorized answer')
        st, hd, _ = get(abase)
        assert st == 401 and 'Basic' in hd.get('WWW-Authenticate', ''), st
        st, _, _ = get(abase, {'Authorization': 'Basic c2NyYXBlcjp3cm9uZw=='})  # scraper:wrong
        assert st == 401

        # HTTPS with a self-signed certificate
        openssl = shutil.which('openssl')
        if openssl:
            crt, key = os.path.join(tmp, 'tls.crt'), os.path.join(tmp, 'tls.key')
            subprocess.run([openssl, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
                            '-out', crt, '-days', '1', '-subj', '/CN=127.0.0.1',
                            '-addext', 'subjectAltName=IP:127.0.0.1'],
                           check=True, capture_output=True, timeout=60)
            _, tport = start_export(tmp, '--ring', ring, '--tls-cert', crt, '--tls-key', key, name='tls')
            ctx = ssl.create_default_context(cafile=crt)
            st, _, body = wait_for(lambda: (lambda r: r if r[0] == 200 else None)(
                get('https://127.0.0.1:%d/metrics' % tport, ctx=ctx)), what='an HTTPS answer')
            assert b'node_cpu_seconds_total{cpu="0",mode="user"}' in body
        else:
            print('note: no openssl, HTTPS not checked', file=sys.stderr)
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print('ok')


if __name__ == '__main__':
    main()
